//! Aggregate figures of a run: status counts, score distribution per metric,
//! extraction tiers. Flat memory: percentiles come from a fixed histogram.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::{json, Map, Value};

use crate::extract::{Repair, Tier};
use crate::report::{Report, Severity, Status};

/// Rules listed on the summary's `issues` line (the JSON has them all).
const TOP_ISSUES: usize = 5;

/// Histogram resolution: scores are bucketed to 1/10000.
const BUCKETS: usize = 10_000;

/// Distribution of scores in [0, 1].
#[derive(Debug, Clone)]
pub struct ScoreStats {
    count: u64,
    sum: f64,
    histogram: Vec<u64>,
}

impl Default for ScoreStats {
    fn default() -> Self {
        Self {
            count: 0,
            sum: 0.0,
            histogram: vec![0; BUCKETS + 1],
        }
    }
}

impl ScoreStats {
    /// Adds a score (clamped to [0, 1]).
    pub fn add(&mut self, score: f64) {
        let score = score.clamp(0.0, 1.0);
        self.count += 1;
        self.sum += score;
        self.histogram[(score * BUCKETS as f64).round() as usize] += 1;
    }

    /// Scores added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean score, if any was added.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// Nearest-rank percentile (`p` in (0, 100]), to 1/10000.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, n) in self.histogram.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bucket as f64 / BUCKETS as f64);
            }
        }
        Some(1.0)
    }

    fn to_value(&self) -> Value {
        json!({
            "count": self.count,
            "mean": self.mean(),
            "p50": self.percentile(50.0),
            "p90": self.percentile(90.0),
        })
    }
}

/// The few figures of a report the summary needs; `Copy`, so worker threads
/// can hand them over without allocating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Digest {
    pub status: Status,
    pub score: Option<f64>,
    /// Extraction tier name (`none` when nothing was extracted); `None` when the
    /// record never reached extraction.
    pub tier: Option<&'static str>,
    /// Bit `i` set when `Repair::ALL[i]` was applied.
    pub repairs: u64,
}

impl Digest {
    pub fn of(report: &Report) -> Self {
        let extraction = report.extraction.as_ref();
        let repairs = extraction.map_or(0, |e| {
            e.repairs
                .iter()
                .fold(0, |bits, &repair| bits | repair.bit())
        });
        Self {
            status: report.status(),
            score: report.score,
            tier: extraction.map(crate::report::ExtractionInfo::tier_name),
            repairs,
        }
    }
}

/// Everything `eval --summary` prints: the aggregate figures of a run, in flat
/// memory whatever its size.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Records evaluated (every input record, `ERROR`s included).
    pub records: u64,
    /// Records per status (see [`Summary::count`]).
    pub statuses: BTreeMap<Status, u64>,
    /// The records' scores (records without one are not counted).
    pub score: ScoreStats,
    /// Per metric, in pipeline order.
    pub metrics: Vec<(String, ScoreStats)>,
    /// Records per extraction tier (`none` when nothing was extracted).
    pub tiers: BTreeMap<String, u64>,
    /// Records per repair the extraction made.
    pub repairs: BTreeMap<String, u64>,
    /// Issues per rule (component or engine stage), by severity.
    pub issues: BTreeMap<String, IssueCounts>,
    /// Issues per code (`contract.missing-field`, a script's `NAME.CODE`), by severity.
    pub codes: BTreeMap<String, IssueCounts>,
    /// Of `records`, those whose results a previous run wrote (`eval --resume`):
    /// checked and counted, not evaluated again.
    pub resumed: u64,
    /// The run was stopped before the end of its input (`jsonl::Options::stop`).
    pub interrupted: bool,
}

/// How many issues a rule raised, by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IssueCounts {
    /// Error-severity issues (those decide the status).
    pub error: u64,
    /// Warnings.
    pub warning: u64,
    /// Notes.
    pub info: u64,
}

impl IssueCounts {
    /// Issues of every severity.
    pub fn total(&self) -> u64 {
        self.error + self.warning + self.info
    }

    pub(crate) fn add(&mut self, severity: Severity, n: u64) {
        match severity {
            Severity::Error => self.error += n,
            Severity::Warning => self.warning += n,
            Severity::Info => self.info += n,
        }
    }
}

impl std::ops::AddAssign for IssueCounts {
    fn add_assign(&mut self, other: Self) {
        self.error += other.error;
        self.warning += other.warning;
        self.info += other.info;
    }
}

/// Adds one to `key`'s count, copying the name only the first time it is seen
/// (not once per record).
pub fn count_one(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_owned(), 1);
        }
    }
}

/// Issue counts of a batch of records, per rule and per code (a handful of
/// each: short lists, each name copied once per batch).
#[derive(Debug, Default)]
pub(crate) struct BatchIssues {
    rules: Vec<(String, IssueCounts)>,
    codes: Vec<(String, IssueCounts)>,
}

impl BatchIssues {
    pub fn add(&mut self, report: &Report) {
        for issue in &report.issues {
            count_in(&mut self.rules, &issue.rule, issue.severity);
            count_in(&mut self.codes, &issue.code, issue.severity);
        }
    }
}

/// Adds an issue of `severity` to `name`'s counts in `list`.
fn count_in(list: &mut Vec<(String, IssueCounts)>, name: &str, severity: Severity) {
    let at = list.iter().position(|(n, _)| n == name).unwrap_or_else(|| {
        list.push((name.to_owned(), IssueCounts::default()));
        list.len() - 1
    });
    list[at].1.add(severity, 1);
}

impl Summary {
    /// An empty summary of a run of the pipeline with these metrics
    /// ([`Pack::metric_names`](crate::pack::Pack::metric_names)).
    pub fn new(metric_names: Vec<String>) -> Self {
        Self {
            records: 0,
            statuses: BTreeMap::new(),
            score: ScoreStats::default(),
            metrics: metric_names
                .into_iter()
                .map(|name| (name, ScoreStats::default()))
                .collect(),
            tiers: BTreeMap::new(),
            repairs: BTreeMap::new(),
            issues: BTreeMap::new(),
            codes: BTreeMap::new(),
            resumed: 0,
            interrupted: false,
        }
    }

    /// Adds one record's result.
    pub fn add(&mut self, report: &Report) {
        let scores: Vec<Option<f64>> = self
            .metrics
            .iter()
            .map(|(name, _)| {
                report
                    .metrics
                    .get(name)
                    .and_then(crate::report::MetricResult::value)
            })
            .collect();
        self.add_digest(&Digest::of(report), &scores);
        let mut issues = BatchIssues::default();
        issues.add(report);
        self.add_issues(issues);
    }

    /// Adds a batch's issue counts.
    pub(crate) fn add_issues(&mut self, batch: BatchIssues) {
        for (rule, counts) in batch.rules {
            *self.issues.entry(rule).or_default() += counts;
        }
        for (code, counts) in batch.codes {
            *self.codes.entry(code).or_default() += counts;
        }
    }

    /// The rules with the most issues, most first (ties by name), at most `n`.
    pub fn top_issues(&self, n: usize) -> Vec<(&str, IssueCounts)> {
        most_first(&self.issues, n)
    }

    /// The codes of the most issues, most first (ties by code), at most `n`.
    pub fn top_codes(&self, n: usize) -> Vec<(&str, IssueCounts)> {
        most_first(&self.codes, n)
    }

    /// Adds one record from its digest and its metric scores (in the order of
    /// the names given to [`Summary::new`]).
    pub(crate) fn add_digest(&mut self, digest: &Digest, metric_scores: &[Option<f64>]) {
        self.records += 1;
        *self.statuses.entry(digest.status).or_default() += 1;
        if let Some(score) = digest.score {
            self.score.add(score);
        }
        for ((_, stats), score) in self.metrics.iter_mut().zip(metric_scores) {
            if let Some(score) = score {
                stats.add(*score);
            }
        }
        if let Some(tier) = digest.tier {
            count_one(&mut self.tiers, tier);
        }
        let mut bits = digest.repairs;
        while bits != 0 {
            let bit = bits.trailing_zeros();
            count_one(&mut self.repairs, Repair::ALL[bit as usize].as_str());
            bits &= bits - 1;
        }
    }

    /// Records with this status.
    pub fn count(&self, status: Status) -> u64 {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    /// The share of `PASS` records (`None` when there are no records).
    pub fn pass_rate(&self) -> Option<f64> {
        (self.records > 0).then(|| self.count(Status::Pass) as f64 / self.records as f64)
    }

    /// The summary as JSON (for tools).
    pub fn to_value(&self) -> Value {
        let statuses: Map<String, Value> = Status::ALL
            .iter()
            .map(|s| (s.as_str().to_owned(), json!(self.count(*s))))
            .collect();
        let metrics: Map<String, Value> = self
            .metrics
            .iter()
            .map(|(name, stats)| (name.clone(), stats.to_value()))
            .collect();
        json!({
            "records": self.records,
            "statuses": statuses,
            "score": self.score.to_value(),
            "metrics": metrics,
            "extraction": self.tiers,
            "repairs": self.repairs,
            "issues": self
                .top_issues(usize::MAX)
                .into_iter()
                .map(|(rule, c)| json!({"rule": rule, "count": c.total(), "error": c.error, "warning": c.warning, "info": c.info}))
                .collect::<Vec<_>>(),
            "codes": self
                .top_codes(usize::MAX)
                .into_iter()
                .map(|(code, c)| json!({"code": code, "count": c.total(), "error": c.error, "warning": c.warning, "info": c.info}))
                .collect::<Vec<_>>(),
        })
    }
}

/// The names with the most issues, most first (ties by name), at most `n`.
fn most_first(counts: &BTreeMap<String, IssueCounts>, n: usize) -> Vec<(&str, IssueCounts)> {
    let mut names: Vec<(&str, IssueCounts)> =
        counts.iter().map(|(r, c)| (r.as_str(), *c)).collect();
    names.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then(a.0.cmp(b.0)));
    names.truncate(n);
    names
}

fn fmt_opt(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.4}"))
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let statuses: Vec<String> = Status::ALL
            .iter()
            .map(|s| format!("{} {}", s.as_str(), self.count(*s)))
            .collect();
        writeln!(f, "records     {}", self.records)?;
        writeln!(f, "status      {}", statuses.join("  "))?;
        let width = self
            .metrics
            .iter()
            .map(|(n, _)| n.chars().count())
            .chain([5])
            .max()
            .unwrap_or(5);
        let mut rows = vec![("score".to_owned(), &self.score)];
        rows.extend(self.metrics.iter().map(|(n, s)| (n.clone(), s)));
        if self.metrics.is_empty() {
            // A pack without metrics has no score: the statuses say it all.
            rows.clear();
        } else {
            writeln!(
                f,
                "{:width$}  {:>8}  {:>8}  {:>8}  {:>8}",
                "metric", "count", "mean", "p50", "p90"
            )?;
        }
        for (name, stats) in rows {
            writeln!(
                f,
                "{name:width$}  {:>8}  {:>8}  {:>8}  {:>8}",
                stats.count(),
                fmt_opt(stats.mean()),
                fmt_opt(stats.percentile(50.0)),
                fmt_opt(stats.percentile(90.0)),
            )?;
        }
        let mut tiers = String::new();
        let order = Tier::ALL.iter().map(|t| t.as_str()).chain(["none"]);
        for tier in order {
            if let Some(n) = self.tiers.get(tier) {
                let _ = write!(tiers, "{tier} {n}  ");
            }
        }
        write!(f, "extraction  {}", tiers.trim_end())?;
        if !self.repairs.is_empty() {
            let repairs: Vec<String> = self
                .repairs
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            write!(f, "\nrepairs     {}", repairs.join("  "))?;
        }
        let top = self.top_issues(TOP_ISSUES);
        if !top.is_empty() {
            let rules: Vec<String> = top
                .iter()
                .map(|(rule, c)| format!("{rule} {}", c.total()))
                .collect();
            let more = self.issues.len().saturating_sub(TOP_ISSUES);
            let more = if more > 0 {
                format!("  (+{more} more rules)")
            } else {
                String::new()
            };
            write!(f, "\nissues      {}{more}", rules.join("  "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_are_counted_per_rule_and_the_most_frequent_listed_first() {
        use crate::report::Issue;
        let mut summary = Summary::new(Vec::new());
        let mut report = Report::errored(
            crate::json::Json::Null,
            crate::report::ErrorKind::Internal,
            "x",
            "p@1",
            "r",
        );
        report.issues = vec![
            Issue::error("b", "one"),
            Issue::warning("a", "two"),
            Issue::error("a", "three"),
            Issue::warning("c", "four"),
        ];
        summary.add(&report);
        summary.add(&report);
        let top: Vec<(&str, u64)> = summary
            .top_issues(2)
            .into_iter()
            .map(|(rule, c)| (rule, c.total()))
            .collect();
        assert_eq!(top, [("a", 4), ("b", 2)]);
        assert_eq!(
            summary.issues["a"],
            IssueCounts {
                error: 2,
                warning: 2,
                info: 0
            }
        );
        let text = summary.to_string();
        assert!(text.ends_with("issues      a 4  b 2  c 2"), "{text}");
        assert_eq!(summary.to_value()["issues"][0]["error"], 2);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut stats = ScoreStats::default();
        for s in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] {
            stats.add(s);
        }
        assert_eq!(stats.percentile(50.0), Some(0.5));
        assert_eq!(stats.percentile(90.0), Some(0.9));
        assert!((stats.mean().unwrap() - 0.55).abs() < 1e-12);
        assert_eq!(ScoreStats::default().percentile(50.0), None);
    }
}
