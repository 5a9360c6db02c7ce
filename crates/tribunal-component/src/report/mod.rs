//! The per-record result: issues, metric results, status and the serialisable record.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Json;

use crate::extract::{Repair, Tier};
use crate::json_write::{self, field, Object};

/// How much an issue counts. Only `error` issues count towards the status. The
/// plugin SDK's type, so plugins and the engine share one definition.
pub use tribunal_plugin::Severity;

mod record;
pub use record::{Field, Fields, FieldsError};

/// One finding about a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// The component (or engine stage) that raised it.
    pub rule: String,
    /// What kind of finding it is, stable across versions and wordings: a
    /// built-in's code (`contract.missing-field`, listed in docs/builtins.md), or
    /// a script's or plugin's own, namespaced by its component (`length_ok`,
    /// `length_ok.too-long`).
    #[serde(default)]
    pub code: Cow<'static, str>,
    /// How much it counts: only errors decide the status.
    pub severity: Severity,
    /// What is wrong, for a person (and for the re-ask `feedback`).
    pub message: String,
    /// JSON pointer into the extracted JSON (`""` is the whole document), if the issue has a place.
    /// An issue about a transcript points into the record (`/messages/3/tool_calls/0`).
    #[serde(default)]
    pub path: Option<String>,
    /// The turn of a transcript record the issue is about (an index into the
    /// record's `turns`); its `path` is then into that turn (into its message,
    /// or into the JSON of its text for a step run per turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
}

impl Issue {
    pub fn error(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            rule: rule.into(),
            code: Cow::Borrowed(""),
            severity: Severity::Error,
            message: message.into(),
            path: None,
            turn: None,
        }
    }

    /// Gives the issue its code (`crate::codes`).
    #[must_use]
    pub fn code(mut self, code: impl Into<Cow<'static, str>>) -> Self {
        self.code = code.into();
        self
    }

    pub fn warning(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(rule, message)
        }
    }

    #[must_use]
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Places the issue at turn `turn` of the record's transcript.
    #[must_use]
    pub fn in_turn(mut self, turn: usize) -> Self {
        self.turn = Some(turn);
        self
    }
}

/// Who wrote a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System or developer instructions.
    System,
    /// The user.
    User,
    /// The agent.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// `system`, `user`, `assistant` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }

    pub fn parse(role: &str) -> Option<Self> {
        match role {
            "system" | "developer" => Some(Self::System),
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            "tool" | "function" => Some(Self::Tool),
            _ => None,
        }
    }
}

/// One turn of a transcript record's result (the record's `turns`): what was
/// found at it, and its verdict by the pack's scoring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    /// Who wrote it: `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// JSON pointer of its message (or item) in the record.
    pub path: String,
    /// `PASS`, `NEEDS_IMPROVEMENT` or `FAIL`, by the pack's issue limits and
    /// `min_score` over this turn's issues and score alone.
    pub status: Status,
    /// The weighted mean of the scores of the metrics run on this turn
    /// (`scope: assistant_turns` or `last`); `null` when none ran on it.
    pub score: Option<f64>,
    /// The record's issues that are about this turn (each also in the
    /// record's `issues`, with its `turn`).
    pub issues: Vec<Issue>,
}

/// What kind of failure made a record `ERROR` (its `error_kind`): stable, for
/// agents and scripts that act on it without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// A step ran past the pack's `limits.timeout_ms`, a script past its
    /// deadline, or a process-isolated plugin past its `timeout_ms`.
    Timeout,
    /// A script used more memory than `limits.max_memory`.
    Memory,
    /// A script failed: a runtime error, a limit other than time or memory,
    /// or a value it returned that is not what its kind returns.
    Script,
    /// A plugin's process crashed, aborted or exited (`isolation: process`),
    /// or could not be started.
    PluginCrash,
    /// A plugin returned an error, or a reply that is not what its kind returns.
    PluginReply,
    /// The input record is unusable: not JSON, not an object, no output, too large.
    Input,
    /// The embedding model could not be loaded or run.
    Model,
    /// Anything else: a bug in Tribunal or a component that panicked.
    Internal,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Timeout,
        ErrorKind::Memory,
        ErrorKind::Script,
        ErrorKind::PluginCrash,
        ErrorKind::PluginReply,
        ErrorKind::Input,
        ErrorKind::Model,
        ErrorKind::Internal,
    ];

    /// What failed, in a sentence (docs/builtins.md).
    pub fn describe(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "a step ran past the pack's `limits.timeout_ms`, or a process-isolated plugin past its `timeout_ms`",
            ErrorKind::Memory => "a script used more memory than `limits.max_memory`",
            ErrorKind::Script => "a script failed: a runtime error, a limit other than time or memory, or a return value its kind does not take",
            ErrorKind::PluginCrash => "a process-isolated plugin's helper crashed, aborted, exited or could not be started",
            ErrorKind::PluginReply => "a plugin returned an error, or a reply its kind does not take",
            ErrorKind::Input => "the input record is unusable: not JSON, not an object, no output, too large, or no `expected` where a rule needs one",
            ErrorKind::Model => "the embedding model could not be loaded or run",
            ErrorKind::Internal => "anything else: a component that panicked, or a bug in Tribunal",
        }
    }

    /// The kind as written in the result record.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Memory => "memory",
            ErrorKind::Script => "script",
            ErrorKind::PluginCrash => "plugin-crash",
            ErrorKind::PluginReply => "plugin-reply",
            ErrorKind::Input => "input",
            ErrorKind::Model => "model",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractionInfo {
    /// The tier that produced `json`, or `None` when no tier succeeded.
    #[serde(default)]
    pub tier: Option<Tier>,
    /// What the `repair` tier changed in the text, then the kinds of what the
    /// contract's `repair: schema` changed in the document (on any tier; each
    /// change with its path is in `schema_repairs`). Each kind once, in
    /// [`Repair`] order.
    #[serde(default)]
    pub repairs: Vec<Repair>,
    /// No tier found JSON and the contract's fallback wrapped the raw text.
    #[serde(default)]
    pub raw_fallback: bool,
    /// What the contract's `repair: schema` changed in the document, each change
    /// at its path, in document order (their kinds are in `repairs` too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_repairs: Vec<SchemaRepair>,
}

/// One change `repair: schema` made to a document: its kind, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaRepair {
    /// The kind of change (`coerced_number`).
    pub repair: Repair,
    /// The JSON Pointer of the value changed, added or dropped (`/age`).
    pub path: String,
}

impl ExtractionInfo {
    /// No tier found JSON, and nothing stood in for it.
    pub fn none() -> Self {
        Self {
            tier: None,
            repairs: Vec::new(),
            raw_fallback: false,
            schema_repairs: Vec::new(),
        }
    }

    /// Writes the record's `extraction` object.
    fn write(&self, out: &mut Vec<u8>) {
        let mut entry = Object::open(out);
        match self.tier {
            Some(tier) => json_write::write_str(field!(entry, "tier"), tier.as_str()),
            None => json_write::write_null(field!(entry, "tier")),
        }
        json_write::write_array(
            field!(entry, "repairs"),
            self.repairs.iter().map(|r| r.as_str()),
            json_write::write_str,
        );
        json_write::write_bool(field!(entry, "raw_fallback"), self.raw_fallback);
        if !self.schema_repairs.is_empty() {
            json_write::write_array(
                field!(entry, "schema_repairs"),
                &self.schema_repairs,
                |out, change| {
                    let mut one = Object::open(out);
                    json_write::write_str(field!(one, "repair"), change.repair.as_str());
                    json_write::write_str(field!(one, "path"), &change.path);
                    one.close();
                },
            );
        }
        entry.close();
    }

    /// The tier's name, `none` when no tier succeeded.
    pub fn tier_name(&self) -> &'static str {
        self.tier.map_or("none", Tier::as_str)
    }
}

/// A metric's result inside a report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MetricResult {
    /// The metric's score in [0, 1]; 0 (written `null`) when the metric was
    /// skipped. [`MetricResult::value`] is `None` then.
    #[serde(deserialize_with = "score_or_null")]
    pub score: f64,
    /// Its weight in the record's score.
    #[serde(default)]
    pub weight: f64,
    /// What the metric reports beyond its score (`null`: nothing).
    #[serde(default)]
    pub details: Details,
    /// Why the metric did not apply to this record ("not applicable"): its
    /// weight left the record's score. Written as `"skipped": REASON`, with a
    /// `null` score.
    #[serde(default)]
    pub skipped: Option<String>,
}

impl MetricResult {
    /// The score, `None` when the metric was skipped.
    pub fn value(&self) -> Option<f64> {
        self.skipped.is_none().then_some(self.score)
    }
}

/// `{"score", "weight", "details"?, "skipped"?}`, the score `null` when skipped.
impl Serialize for MetricResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("score", &self.value())?;
        map.serialize_entry("weight", &self.weight)?;
        if !self.details.is_null() {
            map.serialize_entry("details", &self.details)?;
        }
        if let Some(reason) = &self.skipped {
            map.serialize_entry("skipped", reason)?;
        }
        map.end()
    }
}

/// A score as written: a number, or `null` for a skipped metric (read as 0).
fn score_or_null<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(0.0))
}

/// What a metric reports beyond its score: any JSON value, `null` for nothing.
///
/// A plugin or script hands over a [`Json`] value; the built-in metrics write
/// theirs as JSON text while they evaluate, because building a map per record
/// (each key allocated and hashed, then dropped after the record is written)
/// cost more than their own work. Either way it reads as a value
/// ([`Details::to_json`], or [`Details::to_value`] for `serde_json`'s),
/// compares by value, and is written into the result record unchanged.
#[derive(Clone, Default)]
pub struct Details(DetailsRepr);

#[derive(Clone)]
enum DetailsRepr {
    Value(Json),
    /// Compact JSON, as [`json_write`] writes a value (never `null`): kept as
    /// the bytes written, which are copied into the record as they are (not
    /// checked for UTF-8 once more for each record).
    Written(Vec<u8>),
}

impl Default for DetailsRepr {
    fn default() -> Self {
        Self::Value(Json::Null)
    }
}

impl Details {
    /// JSON text written by [`json_write`] (so compact, and as `serde_json` would
    /// print the value it holds).
    pub fn written(json: Vec<u8>) -> Self {
        debug_assert!(
            read_written(&json).is_some_and(|v| !v.is_null()),
            "details are one JSON value, not null"
        );
        Self(DetailsRepr::Written(json))
    }

    /// `true` when the metric reported nothing beyond its score.
    pub fn is_null(&self) -> bool {
        match &self.0 {
            DetailsRepr::Value(value) => value.is_null(),
            DetailsRepr::Written(_) => false,
        }
    }

    /// The details as a JSON value (read from their text when a built-in wrote them).
    pub fn to_json(&self) -> Json {
        match &self.0 {
            DetailsRepr::Value(value) => value.clone(),
            DetailsRepr::Written(text) => read_written(text).expect("written details are JSON"),
        }
    }

    /// The details as a `serde_json` value.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            DetailsRepr::Value(value) => value.to_serde(),
            DetailsRepr::Written(text) => {
                serde_json::from_slice(text).expect("written details are JSON")
            }
        }
    }

    /// Writes the details into a result record's buffer.
    pub fn write(&self, out: &mut Vec<u8>) {
        match &self.0 {
            DetailsRepr::Value(value) => json_write::write_json(out, value),
            DetailsRepr::Written(text) => out.extend_from_slice(text),
        }
    }
}

/// Details a built-in wrote, read back as a value.
fn read_written(text: &[u8]) -> Option<Json> {
    std::str::from_utf8(text)
        .ok()
        .and_then(crate::json_read::parse)
}

impl From<Json> for Details {
    fn from(value: Json) -> Self {
        Self(DetailsRepr::Value(value))
    }
}

impl From<Value> for Details {
    fn from(value: Value) -> Self {
        Self(DetailsRepr::Value(Json::from(value)))
    }
}

impl PartialEq for Details {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (DetailsRepr::Written(a), DetailsRepr::Written(b)) => a == b,
            (DetailsRepr::Value(a), DetailsRepr::Value(b)) => a == b,
            _ => self.to_json() == other.to_json(),
        }
    }
}

impl fmt::Debug for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            DetailsRepr::Value(value) => write!(f, "{value}"),
            DetailsRepr::Written(text) => f.write_str(&String::from_utf8_lossy(text)),
        }
    }
}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            DetailsRepr::Value(value) => value.serialize(serializer),
            DetailsRepr::Written(_) => self.to_json().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Json::deserialize(deserializer).map(Details::from)
    }
}

/// The result of evaluating one record: the public result record. Its
/// verdict (`status`, `passed`, `error`, `error_kind`) is read through methods
/// and set only as a whole, so its parts cannot disagree: `passed` is `status
/// == PASS`, and `error` with its kind is there exactly when the status is
/// `ERROR`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The input record's id (`null` if it had none).
    pub id: Json,
    /// 1-based line of the record in its input file (absent for a single `check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    status: Status,
    passed: bool,
    /// Weight-averaged metric score; `null` when the pipeline has no metric or evaluation failed.
    pub score: Option<f64>,
    /// Each metric's result, by step name.
    pub metrics: BTreeMap<String, MetricResult>,
    /// Every finding, in pipeline order.
    pub issues: Vec<Issue>,
    /// A transcript record's turns, in order, each with its verdict and the
    /// issues about it; `None` for a record without `messages`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<TurnResult>>,
    /// How the JSON was found (`None` when evaluation failed before extraction).
    pub extraction: Option<ExtractionInfo>,
    /// The extracted (and postprocessed) JSON, `null` when none was found.
    pub json: Json,
    /// The re-ask message for the model: the error issues, one line each;
    /// `None` when there is nothing to fix.
    pub feedback: Option<String>,
    error: Option<String>,
    error_kind: Option<ErrorKind>,
    /// `name@version` of the pack.
    pub pack: String,
    /// Content revision of the pack (hash of its files and run overrides).
    pub revision: String,
}

impl Report {
    /// A record that could not be evaluated at all (bad input line, script failure...).
    pub fn errored(
        id: impl Into<Json>,
        kind: ErrorKind,
        reason: impl Into<String>,
        pack: &str,
        revision: &str,
    ) -> Self {
        Self {
            id: id.into(),
            line: None,
            status: Status::Error,
            passed: false,
            score: None,
            metrics: BTreeMap::new(),
            issues: Vec::new(),
            turns: None,
            extraction: None,
            json: Json::Null,
            feedback: None,
            error: Some(reason.into()),
            error_kind: Some(kind),
            pack: pack.to_owned(),
            revision: revision.to_owned(),
        }
    }

    /// A record the pipeline evaluates, `FAIL` until its verdict is set: no
    /// metrics, issues, score or feedback yet.
    pub fn evaluated(
        id: Json,
        extraction: Option<ExtractionInfo>,
        json: Json,
        pack: &str,
        revision: &str,
    ) -> Self {
        Self {
            id,
            line: None,
            status: Status::Fail,
            passed: false,
            score: None,
            metrics: BTreeMap::new(),
            issues: Vec::new(),
            turns: None,
            extraction,
            json,
            feedback: None,
            error: None,
            error_kind: None,
            pack: pack.to_owned(),
            revision: revision.to_owned(),
        }
    }

    /// The report, leaving an empty one in its place (no allocation): for
    /// the callers that keep a report lent to them.
    #[must_use = "the report taken"]
    pub fn take(&mut self) -> Report {
        std::mem::replace(
            self,
            Report::evaluated(Json::Null, None, Json::Null, "", ""),
        )
    }

    /// The verdict.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Whether the status is `PASS`.
    pub fn passed(&self) -> bool {
        self.passed
    }

    /// Why the record could not be evaluated: `Some` exactly when the status
    /// is `ERROR`.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Puts `note` (a warning about how the record was read: lone
    /// surrogates read as U+FFFD) first in the issues, where every front end's
    /// result has it.
    pub fn note_first(&mut self, note: Option<Issue>) {
        if let Some(note) = note {
            self.issues.insert(0, note);
        }
    }

    /// What kind of failure [`error`](Self::error) was.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.error_kind
    }

    /// Sets the verdict of a record evaluated to the end (not `ERROR`: see
    /// [`set_failed`](Self::set_failed)).
    pub fn set_verdict(&mut self, status: Status) {
        assert_ne!(
            status,
            Status::Error,
            "an ERROR verdict comes with its error"
        );
        self.status = status;
        self.passed = status == Status::Pass;
        self.error = None;
        self.error_kind = None;
    }

    /// Makes the record `ERROR`, for `reason`.
    pub fn set_failed(&mut self, kind: ErrorKind, reason: String) {
        self.status = Status::Error;
        self.passed = false;
        self.error = Some(reason);
        self.error_kind = Some(kind);
    }

    /// The number of error issues.
    pub fn error_count(&self) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .count()
    }

    /// The result record as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a report always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_details_read_compare_and_serialise_as_their_value() {
        let value = json!({"matches": 2, "rqs": 0.85, "fields": {"a\"b": {"matched": true}}});
        let mut text = Vec::new();
        json_write::write_value(&mut text, &value);
        let written = Details::written(text.clone());
        let given = Details::from(value.clone());
        assert_eq!(written, given);
        assert_eq!(written.to_value(), value);
        assert!(!written.is_null());
        assert_eq!(serde_json::to_vec(&written).unwrap(), text);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        written.write(&mut a);
        given.write(&mut b);
        assert_eq!(a, b);
        assert_ne!(written, Details::from(json!({"matches": 3})));
        assert!(Details::from(Value::Null).is_null());
        assert!(Details::default().is_null());
        let read: MetricResult =
            serde_json::from_str(r#"{"score": 1.0, "details": {"matches": 2}}"#).unwrap();
        assert_eq!(read.details.to_value(), json!({"matches": 2}));
    }
}
