//! Two runs' result files compared record by record (`tribunal diff`): records
//! matched by `id` (by position when a record has none), status changes with
//! regressions first, score deltas overall and per metric, records only in one
//! run. Bad input never stops it: a line that is not a result record is counted
//! and reported, and a difference of pack or revision is a warning.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::BufRead;

use serde_json::{json, Value};

use tribunal::Status;
use tribunal_base::files::{BoundedLine, BoundedLines, MAX_RESULT_LINE_BYTES};

/// What the diff keeps of one result record.
#[derive(Debug, Clone)]
struct Entry {
    /// What records are matched by: the id's JSON text (so `"5"` and `5`
    /// differ), or the input line for a record without one, and the
    /// occurrence of a repeated id; control characters keep the kinds apart.
    key: String,
    /// The id as shown.
    id: String,
    status: Status,
    score: Option<f64>,
    metrics: Vec<(String, f64)>,
}

/// One result file, read.
#[derive(Debug, Default)]
pub struct Run {
    entries: Vec<Entry>,
    /// `pack` and `revision` of the records (the first seen, and whether others differ).
    packs: PackSeen,
    /// Lines that were not result records: (line, why).
    skipped: Vec<(u64, String)>,
    /// Records without an id (matched by position).
    without_id: u64,
    /// Ids seen more than once.
    duplicates: u64,
    /// How often each match key was seen so far.
    seen: HashMap<String, u64>,
}

impl Run {
    /// Reads a result file (JSONL of result records).
    pub fn read(input: impl BufRead) -> std::io::Result<Self> {
        let mut run = Run::default();
        read_results(input, |line| run.add(line))?;
        Ok(run)
    }

    /// Takes in one line of a result file (see [`read_results`]), so that a
    /// reader of the same file for something else can build the run as it goes.
    pub(crate) fn add(&mut self, line: ResultLine<'_>) {
        let (record, status) = match line {
            ResultLine::Skipped(number, why) => {
                self.skipped.push((number, why));
                return;
            }
            ResultLine::Record(_, record, status) => (record, status),
        };
        self.packs.see(record);
        let (key, id) = match &record["id"] {
            // By position: the input line the record came from (two runs
            // over one data set share them), else its place in this file.
            Value::Null => {
                self.without_id += 1;
                let line = record["line"]
                    .as_u64()
                    .unwrap_or(self.entries.len() as u64 + 1);
                (format!("\u{1}{line}"), format!("line {line}"))
            }
            Value::String(s) => (
                record["id"].to_string(),
                tribunal_base::text::clip_chars(s, MAX_NAME_CHARS).into_owned(),
            ),
            other => {
                let text = other.to_string();
                let shown = tribunal_base::text::clip_chars(&text, MAX_NAME_CHARS).into_owned();
                (text, shown)
            }
        };
        let key = bounded_key(key);
        let occurrence = self.seen.entry(key.clone()).or_default();
        *occurrence += 1;
        let (key, id) = if *occurrence > 1 {
            self.duplicates += 1;
            (
                format!("{key}\u{2}{occurrence}"),
                format!("{id} (#{occurrence})"),
            )
        } else {
            (key, id)
        };
        let metrics = record["metrics"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(name, v)| {
                        v["score"].as_f64().map(|s| (bounded_key(name.clone()), s))
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.entries.push(Entry {
            key,
            id,
            status,
            score: record["score"].as_f64(),
            metrics,
        });
    }

    /// Records read.
    pub fn records(&self) -> usize {
        self.entries.len()
    }
}

/// A key (an id's JSON text, a metric's name) as the comparison keeps it: as it
/// is up to 256 bytes; a longer one as its first characters and a digest of
/// the whole, so that memory stays bounded whatever a file holds while
/// different keys stay different.
fn bounded_key(key: String) -> String {
    use sha2::{Digest, Sha256};
    if key.len() <= 256 {
        return key;
    }
    let digest = Sha256::digest(key.as_bytes());
    let hex = digest[..12]
        .iter()
        .fold(String::with_capacity(24), |mut hex, b| {
            let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
            hex
        });
    format!("{} #{hex}", tribunal_base::text::clip_chars(&key, 64))
}

/// One line of a result file: a result record (its line number, the record and
/// its status), or what is not one and why.
pub(crate) enum ResultLine<'a> {
    Record(u64, &'a Value, Status),
    Skipped(u64, String),
}

/// Reads a result file line by line, handing `each` every result record and
/// every line that is not one (not UTF-8, not JSON — a truncated file —, not an
/// object, no `status`, longer than [`MAX_RESULT_LINE_BYTES`], which is read past
/// without being kept); blank lines are passed over. Fails only when reading fails.
pub(crate) fn read_results(
    input: impl BufRead,
    mut each: impl FnMut(ResultLine<'_>),
) -> std::io::Result<()> {
    let lines = BoundedLines::new(input, MAX_RESULT_LINE_BYTES);
    for (i, line) in lines.enumerate() {
        let number = i as u64 + 1;
        let line = match line? {
            BoundedLine::Bytes(bytes) => {
                let Ok(line) = String::from_utf8(bytes) else {
                    each(ResultLine::Skipped(number, "not UTF-8".to_owned()));
                    continue;
                };
                line
            }
            BoundedLine::TooLong(length) => {
                each(ResultLine::Skipped(
                    number,
                    format!(
                        "{length} bytes, above the limit of {MAX_RESULT_LINE_BYTES} bytes for \
                         one line"
                    ),
                ));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = match serde_json::from_str(&line) {
            Ok(record @ Value::Object(_)) => record,
            Ok(_) => {
                each(ResultLine::Skipped(number, "not a JSON object".to_owned()));
                continue;
            }
            Err(err) => {
                each(ResultLine::Skipped(
                    number,
                    format!("not JSON ({err}); a truncated file?"),
                ));
                continue;
            }
        };
        match record["status"]
            .as_str()
            .and_then(|s| Status::ALL.into_iter().find(|st| st.as_str() == s))
        {
            Some(status) => each(ResultLine::Record(number, &record, status)),
            None => each(ResultLine::Skipped(
                number,
                "no `status`: not a result record".to_owned(),
            )),
        }
    }
    Ok(())
}

/// Characters of a name read from a result file (an id, a pack, a metric,
/// tier, repair or rule) that a page or a comparison shows.
pub(crate) const MAX_NAME_CHARS: usize = 200;

/// The pack and revision the records of a file name: the first seen, and
/// whether another was seen too.
#[derive(Debug, Default)]
pub(crate) struct PackSeen {
    pub pack: Option<(String, String)>,
    pub mixed: bool,
}

impl PackSeen {
    pub fn see(&mut self, record: &Value) {
        if let (Some(pack), Some(revision)) = (record["pack"].as_str(), record["revision"].as_str())
        {
            match &self.pack {
                // Clipped: a page or a summary shows them, whatever a file holds.
                None => {
                    self.pack = Some((
                        tribunal_base::text::clip_chars(pack, MAX_NAME_CHARS).into_owned(),
                        tribunal_base::text::clip_chars(revision, MAX_NAME_CHARS).into_owned(),
                    ));
                }
                Some((p, r))
                    if *p != tribunal_base::text::clip_chars(pack, MAX_NAME_CHARS)
                        || *r != tribunal_base::text::clip_chars(revision, MAX_NAME_CHARS) =>
                {
                    self.mixed = true;
                }
                Some(_) => {}
            }
        }
    }
}

/// A record whose status or score changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub id: String,
    pub old_status: Status,
    pub new_status: Status,
    pub old_score: Option<f64>,
    pub new_score: Option<f64>,
    /// Metrics whose score changed: (name, old, new).
    pub metrics: Vec<(String, Option<f64>, Option<f64>)>,
}

/// The comparison of two runs.
#[derive(Debug)]
pub struct Diff {
    /// Records whose status got worse (PASS → FAIL …), worst first.
    pub regressions: Vec<Change>,
    /// Records whose status got better.
    pub improvements: Vec<Change>,
    /// Records of the same status whose score changed.
    pub score_changes: Vec<Change>,
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
    /// Per status: (old count, new count).
    pub statuses: Vec<(Status, u64, u64)>,
    /// Mean record score, old and new.
    pub score: (Option<f64>, Option<f64>),
    /// Per metric: (name, old mean, new mean).
    pub metrics: Vec<(String, Option<f64>, Option<f64>)>,
    /// What the reader should know: unmatched formats, packs, skipped lines.
    pub warnings: Vec<String>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Compares `old` and `new` (named `old_name` and `new_name` in warnings).
pub fn compare(old: &Run, new: &Run, old_name: &str, new_name: &str) -> Diff {
    let warnings = warnings(old, new, old_name, new_name);
    let new_by_key: HashMap<&str, &Entry> =
        new.entries.iter().map(|e| (e.key.as_str(), e)).collect();
    let old_keys: HashSet<&str> = old.entries.iter().map(|e| e.key.as_str()).collect();
    let (mut regressions, mut improvements, mut score_changes) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut only_old = Vec::new();
    for entry in &old.entries {
        let Some(after) = new_by_key.get(entry.key.as_str()) else {
            only_old.push(entry.id.clone());
            continue;
        };
        let change = change(entry, after);
        // Statuses order best first (PASS < … < ERROR): greater is worse.
        match after.status.cmp(&entry.status) {
            std::cmp::Ordering::Greater => regressions.push(change),
            std::cmp::Ordering::Less => improvements.push(change),
            std::cmp::Ordering::Equal
                if entry.score != after.score || !change.metrics.is_empty() =>
            {
                score_changes.push(change);
            }
            std::cmp::Ordering::Equal => {}
        }
    }
    let only_new = new
        .entries
        .iter()
        .filter(|e| !old_keys.contains(e.key.as_str()))
        .map(|e| e.id.clone())
        .collect();
    regressions.sort_by_key(|c| std::cmp::Reverse(c.new_status));
    let count = |run: &Run, s: Status| run.entries.iter().filter(|e| e.status == s).count() as u64;
    let statuses = Status::ALL
        .into_iter()
        .map(|s| (s, count(old, s), count(new, s)))
        .collect();
    Diff {
        regressions,
        improvements,
        score_changes,
        only_old,
        only_new,
        statuses,
        score: (
            mean(old.entries.iter().filter_map(|e| e.score)),
            mean(new.entries.iter().filter_map(|e| e.score)),
        ),
        metrics: metric_means(old, new),
        warnings,
    }
}

/// What the reader should know about the two runs before the differences.
fn warnings(old: &Run, new: &Run, old_name: &str, new_name: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    for (run, name) in [(old, old_name), (new, new_name)] {
        if !run.skipped.is_empty() {
            let (line, why) = &run.skipped[0];
            warnings.push(format!(
                "{name}: {} line(s) are not result records and were skipped (first: line {line}: {why})",
                run.skipped.len()
            ));
        }
        if run.without_id > 0 {
            warnings.push(format!(
                "{name}: {} record(s) have no `id`: matched by position (their input line)",
                run.without_id
            ));
        }
        if run.duplicates > 0 {
            warnings.push(format!(
                "{name}: {} record(s) repeat an earlier `id`: matched by id and occurrence",
                run.duplicates
            ));
        }
        if run.packs.mixed {
            warnings.push(format!(
                "{name}: the records come from more than one pack or revision"
            ));
        }
    }
    match (&old.packs.pack, &new.packs.pack) {
        (Some((op, or)), Some((np, nr))) if op != np => warnings.push(format!(
            "the runs are of different packs: {op} (revision {or}) and {np} (revision {nr})"
        )),
        (Some((_, or)), Some((np, nr))) if or != nr => warnings.push(format!(
            "the pack changed between the runs: {np} revision {or} → {nr}"
        )),
        _ => {}
    }
    warnings
}

/// One record in both runs: its statuses, scores, and the metrics that changed.
fn change(entry: &Entry, after: &Entry) -> Change {
    let mut names: Vec<&String> = entry.metrics.iter().map(|(n, _)| n).collect();
    for (n, _) in &after.metrics {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let score_of = |e: &Entry, n: &str| e.metrics.iter().find(|(m, _)| m == n).map(|(_, s)| *s);
    let metrics: Vec<(String, Option<f64>, Option<f64>)> = names
        .into_iter()
        .map(|n| (n.clone(), score_of(entry, n), score_of(after, n)))
        .filter(|(_, a, b)| a != b)
        .collect();
    Change {
        id: entry.id.clone(),
        old_status: entry.status,
        new_status: after.status,
        old_score: entry.score,
        new_score: after.score,
        metrics,
    }
}

/// Each metric's mean score in the old and the new run.
fn metric_means(old: &Run, new: &Run) -> Vec<(String, Option<f64>, Option<f64>)> {
    let mut metric_names: BTreeSet<String> = BTreeSet::new();
    for e in old.entries.iter().chain(&new.entries) {
        for (n, _) in &e.metrics {
            metric_names.insert(n.clone());
        }
    }
    let metric_mean = |run: &Run, name: &str| {
        mean(
            run.entries
                .iter()
                .filter_map(|e| e.metrics.iter().find(|(n, _)| n == name).map(|(_, s)| *s)),
        )
    };
    metric_names
        .into_iter()
        .map(|n| {
            let (a, b) = (metric_mean(old, &n), metric_mean(new, &n));
            (n, a, b)
        })
        .collect()
}

fn delta(old: Option<f64>, new: Option<f64>) -> String {
    let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.4}"));
    match (old, new) {
        (Some(a), Some(b)) => format!("{} → {} ({:+.4})", show(old), show(new), b - a),
        _ => format!("{} → {}", show(old), show(new)),
    }
}

/// Records listed per section in the text (the JSON lists all).
const LISTED: usize = 20;

impl Diff {
    /// The text for a terminal.
    pub fn text(&self, old: &Run, new: &Run) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for warning in &self.warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
        let label = |run: &Run| {
            run.packs
                .pack
                .as_ref()
                .map_or_else(|| "?".to_owned(), |(p, r)| format!("{p} (revision {r})"))
        };
        let _ = writeln!(out, "old         {} records, {}", old.records(), label(old));
        let _ = writeln!(out, "new         {} records, {}", new.records(), label(new));
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(s, a, b)| format!("{s} {a} → {b}"))
            .collect();
        let _ = writeln!(out, "status      {}", statuses.join("  "));
        let _ = writeln!(
            out,
            "score       mean {}",
            delta(self.score.0, self.score.1)
        );
        for (name, a, b) in &self.metrics {
            let _ = writeln!(out, "metric      {name} mean {}", delta(*a, *b));
        }
        let sections = [
            ("regressions", &self.regressions),
            ("improvements", &self.improvements),
            ("score changes", &self.score_changes),
        ];
        for (title, changes) in sections {
            let _ = writeln!(out, "{title}: {}", changes.len());
            for change in changes.iter().take(LISTED) {
                let _ = write!(
                    out,
                    "  {}  {} → {}  score {}",
                    change.id,
                    change.old_status,
                    change.new_status,
                    delta(change.old_score, change.new_score)
                );
                for (name, a, b) in &change.metrics {
                    let _ = write!(out, "  {name} {}", delta(*a, *b));
                }
                out.push('\n');
            }
            if changes.len() > LISTED {
                let _ = writeln!(
                    out,
                    "  … {} more (--json lists all)",
                    changes.len() - LISTED
                );
            }
        }
        for (title, ids) in [
            ("only in old", &self.only_old),
            ("only in new", &self.only_new),
        ] {
            let shown: Vec<&str> = ids.iter().take(LISTED).map(String::as_str).collect();
            let more = if ids.len() > LISTED {
                format!(" … {} more", ids.len() - LISTED)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{title}: {}{}{more}",
                ids.len(),
                if shown.is_empty() {
                    String::new()
                } else {
                    format!("  {}", shown.join(", "))
                }
            );
        }
        out
    }

    /// The diff as JSON, for tools.
    pub fn to_value(&self, old: &Run, new: &Run) -> Value {
        let changes = |list: &[Change]| -> Vec<Value> {
            list.iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "old_status": c.old_status.as_str(),
                        "new_status": c.new_status.as_str(),
                        "old_score": c.old_score,
                        "new_score": c.new_score,
                        "metrics": c.metrics.iter().map(|(n, a, b)| json!({"metric": n, "old": a, "new": b})).collect::<Vec<_>>(),
                    })
                })
                .collect()
        };
        let run = |r: &Run| {
            json!({
                "records": r.records(),
                "pack": r.packs.pack.as_ref().map(|(p, _)| p),
                "revision": r.packs.pack.as_ref().map(|(_, rev)| rev),
            })
        };
        json!({
            "old": run(old),
            "new": run(new),
            "statuses": self.statuses.iter().map(|(s, a, b)| (s.as_str().to_owned(), json!({"old": a, "new": b}))).collect::<serde_json::Map<_, _>>(),
            "score": {"old": self.score.0, "new": self.score.1},
            "metrics": self.metrics.iter().map(|(n, a, b)| (n.clone(), json!({"old": a, "new": b}))).collect::<serde_json::Map<_, _>>(),
            "regressions": changes(&self.regressions),
            "improvements": changes(&self.improvements),
            "score_changes": changes(&self.score_changes),
            "only_old": self.only_old,
            "only_new": self.only_new,
            "warnings": self.warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Run {
        Run::read(lines.join("\n").as_bytes()).unwrap()
    }

    #[test]
    fn ids_match_by_kind_and_value_not_by_how_they_print() {
        let old = run(&[
            r#"{"id": "5", "status": "PASS"}"#,
            r#"{"id": "line 2", "status": "PASS"}"#,
            r#"{"id": "a (#2)", "status": "PASS"}"#,
            r#"{"id": "a", "status": "PASS"}"#,
        ]);
        let new = run(&[
            r#"{"id": 5, "status": "PASS"}"#,
            r#"{"id": null, "line": 2, "status": "PASS"}"#,
            r#"{"id": "a", "status": "PASS"}"#,
            r#"{"id": "a", "status": "FAIL"}"#,
        ]);
        let diff = compare(&old, &new, "old", "new");
        assert_eq!(diff.only_old, ["5", "line 2", "a (#2)"]);
        assert_eq!(diff.only_new, ["5", "line 2", "a (#2)"]);
        assert!(
            diff.regressions.is_empty(),
            "the second `a` is new, not the literal \"a (#2)\""
        );
    }
}
