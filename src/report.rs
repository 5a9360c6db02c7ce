//! The per-record result: issues, metric results, status and the serialisable record.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::extract::{Repair, Tier};

/// How much an issue counts. Only `error` issues count towards the status. The
/// plugin SDK's type, so plugins and the engine share one definition.
pub use tribunal_plugin::Severity;

/// One finding about a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// The component (or engine stage) that raised it.
    pub rule: String,
    /// How much it counts: only errors decide the status.
    pub severity: Severity,
    /// What is wrong, for a person (and for the re-ask `feedback`).
    pub message: String,
    /// JSON pointer into the extracted JSON (`""` is the whole document), if the issue has a place.
    #[serde(default)]
    pub path: Option<String>,
}

impl Issue {
    pub(crate) fn error(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            rule: rule.into(),
            severity: Severity::Error,
            message: message.into(),
            path: None,
        }
    }

    pub(crate) fn warning(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(rule, message)
        }
    }

    #[must_use]
    pub(crate) fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

/// Outcome of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// No error issue and the score at or above the pack's pass threshold.
    Pass,
    /// No error issue, the score between the fail and pass thresholds.
    NeedsImprovement,
    /// An error issue, or the score below the fail threshold.
    Fail,
    /// The record could not be evaluated (bad input line, a failing component).
    Error,
}

impl Status {
    /// Every status, best first.
    pub const ALL: [Status; 4] = [
        Status::Pass,
        Status::NeedsImprovement,
        Status::Fail,
        Status::Error,
    ];

    /// The name result records use: `PASS`, `NEEDS_IMPROVEMENT`, `FAIL`, `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::NeedsImprovement => "NEEDS_IMPROVEMENT",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What the extraction ladder did for a record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtractionInfo {
    /// The tier that produced `json`, or `None` when no tier succeeded.
    pub tier: Option<Tier>,
    /// What the `repair` tier changed in the text (empty for other tiers).
    pub repairs: Vec<Repair>,
    /// No tier found JSON and the contract's fallback wrapped the raw text.
    pub raw_fallback: bool,
}

impl ExtractionInfo {
    /// The tier's name, `none` when no tier succeeded.
    pub fn tier_name(&self) -> &'static str {
        self.tier.map_or("none", Tier::as_str)
    }
}

/// A metric's result inside a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    /// The metric's score in [0, 1].
    pub score: f64,
    /// Its weight in the record's score.
    pub weight: f64,
    /// What the metric reports beyond its score (`null`: nothing).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

/// The result of evaluating one record: the public result record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The input record's id (`null` if it had none).
    pub id: Value,
    /// 1-based line of the record in its input file (absent for a single `check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The verdict.
    pub status: Status,
    /// Whether the status is `PASS`.
    pub passed: bool,
    /// Weight-averaged metric score; `null` when the pipeline has no metric or evaluation failed.
    pub score: Option<f64>,
    /// Each metric's result, by step name.
    pub metrics: BTreeMap<String, MetricResult>,
    /// Every finding, in pipeline order.
    pub issues: Vec<Issue>,
    /// How the JSON was found (`None` when evaluation failed before extraction).
    pub extraction: Option<ExtractionInfo>,
    /// The extracted (and postprocessed) JSON, `null` when none was found.
    pub json: Value,
    /// The re-ask message for the model: the error issues, one line each;
    /// `None` when there is nothing to fix.
    pub feedback: Option<String>,
    /// Why the record could not be evaluated (status `ERROR`).
    pub error: Option<String>,
    /// `name@version` of the pack.
    pub pack: String,
    /// Content revision of the pack (hash of its files and run overrides).
    pub revision: String,
}

impl Report {
    /// A record that could not be evaluated at all (bad input line, script failure...).
    pub fn errored(id: Value, reason: impl Into<String>, pack: &str, revision: &str) -> Self {
        Self {
            id,
            line: None,
            status: Status::Error,
            passed: false,
            score: None,
            metrics: BTreeMap::new(),
            issues: Vec::new(),
            extraction: None,
            json: Value::Null,
            feedback: None,
            error: Some(reason.into()),
            pack: pack.to_owned(),
            revision: revision.to_owned(),
        }
    }

    /// The number of error issues.
    pub fn error_count(&self) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .count()
    }

    /// The result record as one line of JSON.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a report always serialises")
    }

    /// Appends the result record to `out` as one line of JSON, newline included.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(&mut *out, self).expect("a report always serialises");
        out.push(b'\n');
    }

    /// The result record as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a report always serialises")
    }
}
