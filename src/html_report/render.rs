//! The page's parts as HTML: a record's row and its turns, the baseline
//! section, count tables, histograms, and the inline style and script.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Row, BINS};
use crate::diff::{compare, Run};

/// A transcript record's turns, each with its verdict, its issues beside it,
/// and what was said when the data set was given.
pub(super) fn write_turns(out: &mut String, row: &Row) {
    if row.turns.is_empty() {
        return;
    }
    let shown = if row.turns.len() < row.turn_count {
        format!(
            " ({} of {}: those with issues)",
            row.turns.len(),
            row.turn_count
        )
    } else {
        String::new()
    };
    let _ = write!(out, "<h4>turns{}</h4><ol class=\"turns\">", esc(&shown));
    for turn in &row.turns {
        let score = turn.score.map_or_else(String::new, |s| format!(" {s:.4}"));
        let _ = write!(
            out,
            "<li value=\"{}\"><b>{}</b> <code>{}</code> <span class=\"s-{}\">{}</span>{}",
            turn.index,
            esc(&turn.role),
            esc(&turn.path),
            esc(&turn.status),
            esc(&turn.status),
            esc(&score)
        );
        if !turn.text.is_empty() {
            let _ = write!(out, "<pre>{}</pre>", esc(&turn.text));
        }
        if !turn.issues.is_empty() {
            out.push_str("<ul>");
            for (severity, rule, code, message) in &turn.issues {
                let _ = write!(
                    out,
                    "<li><b>{}</b> {} <small>[{}]</small>: {}</li>",
                    esc(severity),
                    esc(rule),
                    esc(code),
                    esc(message)
                );
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
}

pub(super) fn write_row(out: &mut String, row: &Row) {
    let text = format!(
        "{} {} {} {}",
        row.id,
        row.error,
        row.issues
            .iter()
            .map(|i| i.3.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        row.feedback
    )
    .to_lowercase();
    let _ = write!(
            out,
            "<tr class=\"rec\" data-status=\"{}\" data-text=\"{}\"><td>{}</td><td>{}</td><td class=\"s-{}\">{}</td><td>{}</td><td>",
            row.status.as_str(),
            esc(&text),
            esc(&row.id),
            row.line,
            row.status.as_str(),
            row.status.as_str(),
            row.score.map_or_else(|| "–".to_owned(), |s| format!("{s:.4}")),
        );
    // An ERROR record has no issues to show: its error is what it says.
    let summary = if row.error.is_empty() {
        row.issues
            .first()
            .map_or_else(String::new, |i| format!("{}: {}", i.1, i.3))
    } else {
        format!(
            "error: {}",
            tribunal_base::text::clip_chars(&row.error, 160)
        )
    };
    let more = if row.issues.len() > 1 {
        format!(" (+{} more)", row.issues.len() - 1)
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "<details><summary>{}{}</summary>",
        esc(&summary),
        esc(&more)
    );
    if !row.error.is_empty() {
        let _ = write!(out, "<h4>error</h4><pre>{}</pre>", esc(&row.error));
    }
    if !row.issues.is_empty() {
        out.push_str("<h4>issues</h4><ul>");
        for (severity, rule, code, path, message) in &row.issues {
            let _ = write!(
                out,
                "<li><b>{}</b> {} <small>[{}]</small> <code>{}</code>: {}</li>",
                esc(severity),
                esc(rule),
                esc(code),
                esc(path),
                esc(message)
            );
        }
        out.push_str("</ul>");
    }
    write_turns(out, row);
    if !row.feedback.is_empty() {
        let _ = write!(out, "<h4>feedback</h4><pre>{}</pre>", esc(&row.feedback));
    }
    if !row.output.is_empty() {
        let _ = write!(out, "<h4>raw output</h4><pre>{}</pre>", esc(&row.output));
    }
    if !row.json.is_empty() {
        let _ = write!(out, "<h4>extracted JSON</h4><pre>{}</pre>", esc(&row.json));
    }
    out.push_str("</details></td></tr>\n");
}

pub(super) fn baseline_section(name: &str, old: &Run, new: &Run) -> String {
    let diff = compare(old, new, name, "this run");
    let mut out = format!(
        "<section id=\"baseline\"><h2>Against the baseline <code>{}</code></h2>",
        esc(name)
    );
    for warning in &diff.warnings {
        let _ = write!(out, "<p class=\"warn\">{}</p>", esc(warning));
    }
    out.push_str("<table class=\"counts\"><tr><th>status</th><th>baseline</th><th>this run</th><th>change</th></tr>");
    for (status, a, b) in &diff.statuses {
        let change = if b >= a {
            format!("+{}", b - a)
        } else {
            format!("-{}", a - b)
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{a}</td><td>{b}</td><td>{change}</td></tr>",
            status.as_str()
        );
    }
    let show = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:.4}"));
    let _ = write!(
        out,
        "<tr><td>mean score</td><td>{}</td><td>{}</td><td></td></tr></table>",
        show(diff.score.0),
        show(diff.score.1)
    );
    let _ = write!(
        out,
        "<p>{} regressions, {} improvements, {} score changes; {} records only in the baseline, {} only in this run.</p>",
        diff.regressions.len(),
        diff.improvements.len(),
        diff.score_changes.len(),
        diff.only_old.len(),
        diff.only_new.len()
    );
    if !diff.regressions.is_empty() {
        out.push_str("<table class=\"counts\" id=\"regressions\"><caption>regressions</caption><tr><th>id</th><th>status</th><th>score</th></tr>");
        for c in diff.regressions.iter().take(50) {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{} → {}</td><td>{} → {}</td></tr>",
                esc(&c.id),
                c.old_status,
                c.new_status,
                show(c.old_score),
                show(c.new_score)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>\n");
    out
}

pub(super) fn count_table(what: &str, counts: &BTreeMap<String, u64>) -> String {
    let mut out = format!(
        "<table class=\"counts\"><caption>{}s</caption><tr><th>{}</th><th>records</th></tr>",
        esc(what),
        esc(what)
    );
    if counts.is_empty() {
        out.push_str("<tr><td colspan=\"2\">none</td></tr>");
    }
    for (name, n) in counts {
        let _ = write!(out, "<tr><td>{}</td><td>{n}</td></tr>", esc(name));
    }
    out.push_str("</table>");
    out
}

/// An SVG bar chart of `bins` over [0, 1].
pub(super) fn histogram(title: &str, bins: &[u64; BINS], mean: Option<f64>) -> String {
    let (width, height, pad) = (320.0, 120.0, 20.0);
    let max = bins.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bar = (width - 2.0 * pad) / BINS as f64;
    let total: u64 = bins.iter().sum();
    let mut out = format!(
        "<figure class=\"chart\"><figcaption>{}{}</figcaption><svg viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"histogram of {}\">",
        esc(title),
        mean.map_or_else(String::new, |m| format!(" · mean {m:.4}")),
        esc(title)
    );
    for (i, n) in bins.iter().enumerate() {
        let h = (height - 2.0 * pad) * (*n as f64) / max;
        let x = pad + i as f64 * bar;
        let y = height - pad - h;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{:.2}–{:.2}: {n}</title></rect>",
            bar - 1.0,
            i as f64 / BINS as f64,
            (i + 1) as f64 / BINS as f64
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{pad}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\"/><text x=\"{pad}\" y=\"{ty}\">0</text><text x=\"{x2}\" y=\"{ty}\" text-anchor=\"end\">1</text><text x=\"{mid}\" y=\"{ty}\" text-anchor=\"middle\">{total} scores</text></svg></figure>",
        y = height - pad,
        x2 = width - pad,
        ty = height - 5.0,
        mid = width / 2.0
    );
    out
}

/// Escapes text for HTML (element content and attribute values).
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

pub(super) const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:16px;color:#222}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:24px 0 8px}h4{margin:8px 0 2px}\
.warn{color:#8a4b00;background:#fff4e0;padding:4px 8px}.note{color:#555}\
.cards{display:flex;gap:12px;margin:16px 0}.card{flex:1;padding:12px;border-radius:6px;background:#f3f3f3;text-align:center}\
.card .n{font-size:26px;font-weight:600}.pct{color:#555}\
.s-PASS{color:#1b7f3b}.s-FAIL{color:#b3261e}.s-ERROR{color:#6b2fa3}.s-NEEDS_IMPROVEMENT{color:#9a6700}\
.card.s-PASS{background:#e6f4ea}.card.s-FAIL{background:#fce8e6}.card.s-ERROR{background:#f1e8fb}.card.s-NEEDS_IMPROVEMENT{background:#fff4d6}\
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px}\
.chart svg{width:320px;height:120px}.chart rect{fill:#4a78c2}.chart line{stroke:#888}.chart text{font-size:10px;fill:#555}\
.tables{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}table{border-collapse:collapse}\
caption{text-align:left;font-weight:600;padding:4px 0}td,th{border-bottom:1px solid #e4e4e4;padding:3px 8px;text-align:left;vertical-align:top}\
#records{width:100%}#records td:nth-child(5){max-width:700px}pre{white-space:pre-wrap;background:#f7f7f7;padding:6px;margin:2px 0;max-height:320px;overflow:auto}\
.filters{margin:8px 0}.filters input{width:320px;padding:4px}summary{cursor:pointer}";

pub(super) const SCRIPT: &str = "(function(){\
var q=document.getElementById('q'),s=document.getElementById('status'),shown=document.getElementById('shown');\
var rows=Array.prototype.slice.call(document.querySelectorAll('tr.rec'));\
function apply(){var text=q.value.toLowerCase(),status=s.value,n=0;\
rows.forEach(function(r){var ok=(!status||r.getAttribute('data-status')===status)&&(!text||r.getAttribute('data-text').indexOf(text)>=0);\
if(ok){r.removeAttribute('hidden');n++;}else{r.setAttribute('hidden','');}});shown.textContent=String(n);}\
var h=new URLSearchParams(location.hash.slice(1));if(h.get('status')){s.value=h.get('status');}if(h.get('q')){q.value=h.get('q');}\
q.addEventListener('input',apply);s.addEventListener('change',apply);apply();})();";
