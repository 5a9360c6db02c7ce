//! `tribunal report`: one self-contained HTML page about a run (no network: CSS,
//! SVG charts and a small script inline). Everything is aggregated here while the
//! result file streams by; the page embeds a bounded sample of records (those
//! that did not pass first) and says so, so a run of millions of records makes a
//! page of the same size as one of thousands.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::BufRead;

use serde_json::Value;

use crate::diff::{read_results, PackSeen, ResultLine, Run, MAX_NAME_CHARS};
use tribunal::Status;
use tribunal_base::files::{BoundedLine, BoundedLines, MAX_RESULT_LINE_BYTES};
use tribunal_base::text::clip_chars;

mod render;

use render::{baseline_section, count_table, esc, histogram, write_row, SCRIPT, STYLE};

/// Bars of a histogram over [0, 1].
const BINS: usize = 20;
/// Distinct (rule, path) pairs counted; the rest are counted as "other".
const MAX_ISSUE_KEYS: usize = 10_000;
/// Characters of a record's JSON and feedback kept in the sample.
const MAX_TEXT_CHARS: usize = 4_000;
/// Issues per (rule, path) listed.
const TOP_ISSUES: usize = 25;
/// Characters of an issue's path, and of its message, shown.
const MAX_PATH_CHARS: usize = 500;
const MAX_MESSAGE_CHARS: usize = 1_000;
/// Issues of one record the table lists.
const MAX_ROW_ISSUES: usize = 50;
/// Distinct metric, tier and repair names counted, each; the rest are counted
/// as `(other)`.
const MAX_NAMES: usize = 256;
/// What counts the names past [`MAX_NAMES`].
const OTHER: &str = "(other)";

/// Turns of one transcript record the table lists: all of a short
/// transcript, else those with issues or a verdict other than PASS.
const MAX_ROW_TURNS: usize = 60;

/// A turn of a transcript record, as the table shows it.
#[derive(Debug)]
struct TurnRow {
    /// Its index in the record's turns.
    index: usize,
    role: String,
    path: String,
    status: String,
    score: Option<f64>,
    /// (severity, rule, code, message).
    issues: Vec<(String, String, String, String)>,
    /// What was said (and called), when the data set was given (`--input`).
    text: String,
}

/// A record of the sample, as the table shows it.
#[derive(Debug)]
struct Row {
    id: String,
    line: u64,
    status: Status,
    score: Option<f64>,
    issues: Vec<(String, String, String, String, String)>,
    feedback: String,
    json: String,
    error: String,
    /// The model's raw output, when the data set was given (`--input`).
    output: String,
    /// Whether `line` is the record's input line (from the record), not its
    /// place in the result file: only then can its raw output be found.
    input_line: bool,
    /// A transcript record's turns (see [`MAX_ROW_TURNS`]), and how many it has.
    turns: Vec<TurnRow>,
    turn_count: usize,
}

/// The figures of one result file.
#[derive(Debug, Default)]
pub struct Page {
    records: u64,
    statuses: BTreeMap<Status, u64>,
    score_bins: [u64; BINS],
    metric_bins: BTreeMap<String, ([u64; BINS], f64, u64)>,
    tiers: BTreeMap<String, u64>,
    repairs: BTreeMap<String, u64>,
    /// Issues per rule, then per path.
    issues: HashMap<String, HashMap<String, u64>>,
    /// Distinct (rule, path) pairs counted so far.
    issue_pairs: usize,
    other_issues: u64,
    packs: PackSeen,
    skipped: Vec<(u64, String)>,
    skipped_count: u64,
    not_passed: Vec<Row>,
    passed: Vec<Row>,
    sample_size: usize,
}

fn bin(score: f64) -> usize {
    ((score.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1)
}

/// `name` as counted among `counts`: clipped, and [`OTHER`] once
/// [`MAX_NAMES`] distinct names are counted and it is not one of them.
fn bounded_name<'a, V>(counts: &BTreeMap<String, V>, name: &'a str) -> Cow<'a, str> {
    let name = clip_chars(name, MAX_NAME_CHARS);
    if counts.len() >= MAX_NAMES && !counts.contains_key(name.as_ref()) {
        Cow::Borrowed(OTHER)
    } else {
        name
    }
}

/// Adds one to the count of `name` (of its bounded name: [`bounded_name`]),
/// copying the name only the first time it is seen.
fn count_name(counts: &mut BTreeMap<String, u64>, name: &str) {
    let name = bounded_name(counts, name);
    match counts.get_mut(name.as_ref()) {
        Some(n) => *n += 1,
        None => {
            counts.insert(name.into_owned(), 1);
        }
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Page {
    /// Reads a result file, keeping at most `sample_size` records for the table;
    /// `run`, when given, takes in the same lines (for a baseline comparison, so
    /// the file is read once).
    pub fn read(
        input: impl BufRead,
        sample_size: usize,
        mut run: Option<&mut Run>,
    ) -> std::io::Result<Self> {
        let mut page = Page {
            sample_size,
            ..Page::default()
        };
        read_results(input, |line| {
            match &line {
                ResultLine::Record(number, record, status) => page.add(*number, record, *status),
                ResultLine::Skipped(number, why) => page.skip(*number, why.clone()),
            }
            if let Some(run) = run.as_deref_mut() {
                run.add(line);
            }
        })?;
        Ok(page)
    }

    fn skip(&mut self, line: u64, why: String) {
        self.skipped_count += 1;
        if self.skipped.len() < 5 {
            self.skipped.push((line, why));
        }
    }

    fn add(&mut self, number: u64, record: &Value, status: Status) {
        self.records += 1;
        *self.statuses.entry(status).or_default() += 1;
        let score = record["score"].as_f64();
        if let Some(score) = score {
            self.score_bins[bin(score)] += 1;
        }
        if let Some(metrics) = record["metrics"].as_object() {
            for (name, metric) in metrics {
                if let Some(s) = metric["score"].as_f64() {
                    let name = bounded_name(&self.metric_bins, name);
                    let entry = self
                        .metric_bins
                        .entry(name.into_owned())
                        .or_insert(([0; BINS], 0.0, 0));
                    entry.0[bin(s)] += 1;
                    entry.1 += s;
                    entry.2 += 1;
                }
            }
        }
        let tier = record["extraction"]["tier"].as_str().unwrap_or("none");
        count_name(&mut self.tiers, tier);
        if let Some(repairs) = record["extraction"]["repairs"].as_array() {
            for repair in repairs.iter().filter_map(Value::as_str) {
                count_name(&mut self.repairs, repair);
            }
        }
        // Counted from the record as it is: nothing is copied for a pair seen before.
        let listed = record["issues"].as_array().map_or(&[][..], Vec::as_slice);
        for issue in listed {
            let rule = issue["rule"].as_str().unwrap_or_default();
            let path = issue["path"].as_str().unwrap_or_default();
            // Long names are clipped before they are counted (copied only then).
            let (rule, path) = (
                clip_chars(rule, MAX_NAME_CHARS),
                clip_chars(path, MAX_PATH_CHARS),
            );
            let (rule, path) = (rule.as_ref(), path.as_ref());
            if let Some(n) = self
                .issues
                .get_mut(rule)
                .and_then(|paths| paths.get_mut(path))
            {
                *n += 1;
            } else if self.issue_pairs < MAX_ISSUE_KEYS {
                self.issue_pairs += 1;
                self.issues
                    .entry(rule.to_owned())
                    .or_default()
                    .insert(path.to_owned(), 1);
            } else {
                self.other_issues += 1;
            }
        }
        self.packs.see(record);
        let keep = if status == Status::Pass {
            self.passed.len() < self.sample_size
        } else {
            self.not_passed.len() < self.sample_size
        };
        if keep {
            let clip = |s: String| clip_chars(&s, MAX_TEXT_CHARS).into_owned();
            let json = match &record["json"] {
                Value::Null => String::new(),
                value => serde_json::to_string_pretty(value).unwrap_or_default(),
            };
            let row = Row {
                id: match &record["id"] {
                    Value::Null => format!("line {}", record["line"].as_u64().unwrap_or(number)),
                    id => clip_chars(&text_of(id), MAX_NAME_CHARS).into_owned(),
                },
                line: record["line"].as_u64().unwrap_or(number),
                status,
                score,
                issues: listed.iter().take(MAX_ROW_ISSUES).map(issue_row).collect(),
                feedback: clip(text_of(&record["feedback"])),
                json: clip(json),
                error: clip(text_of(&record["error"])),
                output: String::new(),
                input_line: record["line"].is_u64(),
                turns: turn_rows(&record["turns"]),
                turn_count: record["turns"].as_array().map_or(0, Vec::len),
            };
            if status == Status::Pass {
                self.passed.push(row);
            } else {
                self.not_passed.push(row);
            }
        }
    }

    /// Records read.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Lines that were not result records.
    pub fn skipped(&self) -> u64 {
        self.skipped_count
    }

    /// Fills in the sampled records' raw outputs from the data set they were
    /// evaluated from (matched by input line; `output_field` names the field).
    /// Returns how many were found.
    pub fn add_outputs(
        &mut self,
        data: impl BufRead,
        output_field: &str,
    ) -> std::io::Result<usize> {
        let mut wanted: HashMap<u64, usize> = HashMap::new();
        let rows: Vec<&mut Row> = self
            .not_passed
            .iter_mut()
            .chain(self.passed.iter_mut())
            .collect();
        for (i, row) in rows.iter().enumerate().filter(|(_, row)| row.input_line) {
            wanted.insert(row.line, i);
        }
        let mut rows = rows;
        let mut found = 0;
        // Lines are read as bytes: a line that is not UTF-8 is skipped, not fatal.
        // A line above the limit is read past without being kept.
        let lines = BoundedLines::new(data, MAX_RESULT_LINE_BYTES);
        for (i, line) in lines.enumerate() {
            let BoundedLine::Bytes(line) = line? else {
                continue;
            };
            let Some(&at) = wanted.get(&(i as u64 + 1)) else {
                continue;
            };
            let Ok(record) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let output = text_of(&record[output_field]);
            rows[at].output = clip_chars(&output, MAX_TEXT_CHARS).into_owned();
            if !rows[at].turns.is_empty() {
                let messages = tribunal::Json::from(record["messages"].clone());
                let transcript = tribunal::Transcript::from_messages(&messages);
                for turn in &mut rows[at].turns {
                    if let Some(read) = transcript.turns.get(turn.index) {
                        turn.text = clip_chars(&turn_text(read), MAX_MESSAGE_CHARS).into_owned();
                    }
                }
            }
            found += 1;
            if found == wanted.len() {
                break;
            }
        }
        Ok(found)
    }

    /// The page. `source` names the results file; `baseline` is the earlier
    /// run's and this run's records for the comparison section.
    pub fn html(&self, source: &str, baseline: Option<(&str, &Run, &Run)>) -> String {
        let mut rows: Vec<&Row> = self.not_passed.iter().collect();
        let room = self.sample_size.saturating_sub(rows.len());
        rows.extend(self.passed.iter().take(room));
        rows.truncate(self.sample_size);
        rows.sort_by_key(|r| r.line);
        let mut out = String::with_capacity(64 * 1024 + rows.len() * 1024);
        let title = self.packs.pack.as_ref().map_or_else(
            || "Tribunal report".to_owned(),
            |(p, _)| format!("Tribunal report: {p}"),
        );
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{}</title><style>{STYLE}</style></head><body>\n",
            esc(&title)
        );
        self.write_header(&mut out, &title, source);
        self.write_summary(&mut out);
        if let Some((name, old, new)) = baseline {
            out.push_str(&baseline_section(name, old, new));
        }
        self.write_records(&mut out, &rows);
        let _ = writeln!(
            out,
            "</tbody></table></section><script>{SCRIPT}</script></body></html>"
        );
        out
    }

    /// The title, the pack and where the records came from, and warnings.
    fn write_header(&self, out: &mut String, title: &str, source: &str) {
        let _ = write!(out, "<header><h1>{}</h1><p>", esc(title));
        if let Some((pack, revision)) = &self.packs.pack {
            let _ = write!(
                out,
                "pack <b>{}</b> · revision <code>{}</code> · ",
                esc(pack),
                esc(revision)
            );
        }
        let _ = write!(
            out,
            "{} records from <code>{}</code> · Tribunal {}</p>",
            self.records,
            esc(source),
            env!("CARGO_PKG_VERSION")
        );
        if self.packs.mixed {
            out.push_str(
                "<p class=\"warn\">The records come from more than one pack or revision.</p>",
            );
        }
        if self.skipped_count > 0 {
            let first: Vec<String> = self
                .skipped
                .iter()
                .map(|(l, why)| format!("line {l}: {why}"))
                .collect();
            let _ = write!(
                out,
                "<p class=\"warn\">{} line(s) were not result records and were skipped ({}).</p>",
                self.skipped_count,
                esc(&first.join("; "))
            );
        }
    }

    /// The status cards, the histograms, the tier, repair and issue counts.
    fn write_summary(&self, out: &mut String) {
        out.push_str("</header>\n<section class=\"cards\">");
        for status in Status::ALL {
            let n = self.statuses.get(&status).copied().unwrap_or(0);
            let share = if self.records > 0 {
                100.0 * n as f64 / self.records as f64
            } else {
                0.0
            };
            let _ = write!(
                out,
                "<div class=\"card s-{}\"><div class=\"n\">{n}</div><div>{}</div><div class=\"pct\">{share:.1}%</div></div>",
                status.as_str(),
                status.as_str()
            );
        }
        out.push_str("</section>\n<section class=\"charts\">");
        out.push_str(&histogram("score (records)", &self.score_bins, None));
        for (name, (bins, sum, count)) in &self.metric_bins {
            let mean = (*count > 0).then(|| sum / *count as f64);
            out.push_str(&histogram(name, bins, mean));
        }
        out.push_str("</section>\n<section class=\"tables\">");
        out.push_str(&count_table("extraction tier", &self.tiers));
        out.push_str(&count_table("repair", &self.repairs));
        let mut issues: Vec<((&String, &String), &u64)> = self
            .issues
            .iter()
            .flat_map(|(rule, paths)| paths.iter().map(move |(path, n)| ((rule, path), n)))
            .collect();
        issues.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(&b.0)));
        out.push_str("<table class=\"counts\" id=\"issues\"><caption>most frequent issues</caption><tr><th>rule</th><th>path</th><th>count</th></tr>");
        for ((rule, path), n) in issues.iter().take(TOP_ISSUES) {
            let _ = write!(
                out,
                "<tr><td>{}</td><td><code>{}</code></td><td>{n}</td></tr>",
                esc(rule),
                esc(path)
            );
        }
        if self.other_issues > 0 {
            let _ = write!(
                out,
                "<tr><td colspan=\"2\">other</td><td>{}</td></tr>",
                self.other_issues
            );
        }
        out.push_str("</table></section>\n");
    }

    /// The records' table, up to its last row (the caller closes it).
    fn write_records(&self, out: &mut String, rows: &[&Row]) {
        let _ = write!(
            out,
            "<section><h2>Records</h2><p class=\"note\">{}</p>\
             <div class=\"filters\"><input id=\"q\" type=\"search\" placeholder=\"filter by id, issue, feedback…\">\
             <select id=\"status\"><option value=\"\">every status</option>",
            if (rows.len() as u64) < self.records {
                format!(
                    "This page holds a sample of {} of the {} records: those that did not pass first (up to {}), then those that passed. The figures above count every record.",
                    rows.len(),
                    self.records,
                    self.sample_size
                )
            } else {
                format!("All {} records.", rows.len())
            }
        );
        for status in Status::ALL {
            let _ = write!(out, "<option>{}</option>", status.as_str());
        }
        out.push_str("</select> <span id=\"shown\"></span> shown</div>\n<table id=\"records\"><thead><tr><th>id</th><th>line</th><th>status</th><th>score</th><th>issues</th></tr></thead><tbody>\n");
        for row in rows {
            write_row(out, row);
        }
    }
}

/// An issue as the table lists it: (severity, rule, code, path, message), clipped.
fn issue_row(issue: &Value) -> (String, String, String, String, String) {
    let clip = |key: &str, chars: usize| clip_chars(&text_of(&issue[key]), chars).into_owned();
    (
        clip("severity", MAX_NAME_CHARS),
        clip("rule", MAX_NAME_CHARS),
        clip("code", MAX_NAME_CHARS),
        clip("path", MAX_PATH_CHARS),
        clip("message", MAX_MESSAGE_CHARS),
    )
}

/// The turns of a record's `turns` the table lists (see [`MAX_ROW_TURNS`]).
fn turn_rows(turns: &Value) -> Vec<TurnRow> {
    let Some(turns) = turns.as_array() else {
        return Vec::new();
    };
    let all = turns.len() <= MAX_ROW_TURNS;
    turns
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            all || t["status"] != "PASS" || t["issues"].as_array().is_some_and(|i| !i.is_empty())
        })
        .take(MAX_ROW_TURNS)
        .map(|(index, t)| TurnRow {
            index,
            role: clip_chars(&text_of(&t["role"]), MAX_NAME_CHARS).into_owned(),
            path: clip_chars(&text_of(&t["path"]), MAX_PATH_CHARS).into_owned(),
            status: clip_chars(&text_of(&t["status"]), MAX_NAME_CHARS).into_owned(),
            score: t["score"].as_f64(),
            issues: t["issues"]
                .as_array()
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .take(MAX_ROW_ISSUES)
                .map(|i| {
                    let (severity, rule, code, _, message) = issue_row(i);
                    (severity, rule, code, message)
                })
                .collect(),
            text: String::new(),
        })
        .collect()
}

/// A turn's text, then each call it makes (`→ tool {arguments}`).
fn turn_text(turn: &tribunal::Turn) -> String {
    let mut text = turn.text.clone();
    for call in &turn.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(text, "→ {} {}", call.name, call.arguments);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'\u{0}"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\u{fffd}"
        );
    }

    #[test]
    fn the_sample_is_bounded_and_prefers_records_that_did_not_pass() {
        let mut lines = String::new();
        for i in 0..50 {
            let status = if i % 10 == 0 { "FAIL" } else { "PASS" };
            let _ = writeln!(
                lines,
                "{{\"id\": {i}, \"line\": {}, \"status\": \"{status}\", \"score\": 0.5}}",
                i + 1
            );
        }
        lines.push_str("{\"id\": \"cut\", \"sta\n");
        let page = Page::read(lines.as_bytes(), 8, None).unwrap();
        assert_eq!((page.records(), page.skipped()), (50, 1));
        let html = page.html("r.jsonl", None);
        assert_eq!(html.matches("<tr class=\"rec\"").count(), 8);
        assert_eq!(
            html.matches("data-status=\"FAIL\"").count(),
            5,
            "every FAIL kept"
        );
        assert!(html.contains("a sample of 8 of the 50 records"));
        assert!(html.contains("1 line(s) were not result records"));
        assert!(!html.contains("http"), "no network");
    }
}
