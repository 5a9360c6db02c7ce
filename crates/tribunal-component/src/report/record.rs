//! The result record: its fields ([`Field`], [`Fields`]) and a report
//! written as one, straight into a byte buffer in the record's order.

use super::{ErrorKind, Issue, Report, Status};
use crate::extract::Written;
use crate::json_write::{self, field, Object};

impl Report {
    /// The report a result record holds, as `eval` wrote it: what a resumed
    /// run counts for a kept record. Members it does not have (`--fields` left
    /// them out) are empty; a member that is not what the record's would be
    /// is empty too (a `status` that is not one: `ERROR`).
    ///
    /// ```
    /// # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
    /// use tribunal::{Input, Pack, Report};
    ///
    /// let pack = Pack::load("rules/ksi-emission")?;
    /// let report = pack.evaluate(&Input::new(r#"{"event": "x:y", "data": {}}"#));
    /// let record = serde_json::from_str(&report.to_json_line()).unwrap();
    /// assert_eq!(Report::from_record(record).to_json_line(), report.to_json_line());
    /// # Ok::<(), tribunal::Error>(())
    /// ```
    pub fn from_record(mut record: serde_json::Map<String, serde_json::Value>) -> Self {
        use serde_json::{from_value, Value};
        let mut take = |name: &str| record.remove(name).unwrap_or(Value::Null);
        let text = |value: Value| match value {
            Value::String(s) => Some(s),
            _ => None,
        };
        let status: Status = from_value(take("status")).unwrap_or(Status::Error);
        let mut report = Report::evaluated(
            take("id").into(),
            from_value(take("extraction")).unwrap_or_default(),
            take("json").into(),
            &text(take("pack")).unwrap_or_default(),
            &text(take("revision")).unwrap_or_default(),
        );
        report.line = take("line").as_u64();
        report.score = take("score").as_f64();
        report.metrics = from_value(take("metrics")).unwrap_or_default();
        report.issues = from_value(take("issues")).unwrap_or_default();
        report.turns = from_value(take("turns")).unwrap_or_default();
        report.feedback = text(take("feedback"));
        if status == Status::Error {
            let kind = from_value(take("error_kind")).unwrap_or(ErrorKind::Internal);
            report.set_failed(kind, text(take("error")).unwrap_or_default());
        } else {
            report.set_verdict(status);
        }
        report
    }

    /// The result record as one line of JSON (no newline).
    pub fn to_json_line(&self) -> String {
        let mut out = Vec::with_capacity(512);
        self.write_fields(&mut out, Fields::ALL);
        String::from_utf8(out).expect("the writer writes UTF-8")
    }

    /// Appends the result record to `out` as one line of JSON, newline included:
    /// the bytes [`to_json_line`](Self::to_json_line) gives, written directly.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        self.write_fields(out, Fields::ALL);
        out.push(b'\n');
    }

    /// Appends the record's `fields` as one JSON object (no newline), in the
    /// record's order.
    pub fn write_fields(&self, out: &mut Vec<u8>, fields: Fields) {
        self.write_fields_with(out, fields, None);
    }

    /// [`write_fields`](Self::write_fields), with `written` as the `json`
    /// field's text when the pipeline made only that (for a pack none of whose
    /// steps reads the extracted JSON).
    pub fn write_fields_with(&self, out: &mut Vec<u8>, fields: Fields, written: Option<&Written>) {
        self.write_record(out, fields, written, &[]);
    }

    /// [`write_fields_with`](Self::write_fields_with), ending with the string
    /// members `tail` (a service's answer: `bundle`, `decision_id`).
    pub fn write_record(
        &self,
        out: &mut Vec<u8>,
        fields: Fields,
        written: Option<&Written>,
        tail: &[(&'static str, &str)],
    ) {
        out.reserve(1024);
        let mut record = Object::open(out);
        if fields.has(Field::Id) {
            json_write::write_json(field!(record, "id"), &self.id);
        }
        if let (true, Some(line)) = (fields.has(Field::Line), self.line) {
            json_write::write_u64(field!(record, "line"), line);
        }
        if fields.has(Field::Status) {
            json_write::write_str(field!(record, "status"), self.status.as_str());
        }
        if fields.has(Field::Passed) {
            json_write::write_bool(field!(record, "passed"), self.passed);
        }
        if fields.has(Field::Score) {
            write_option_f64(field!(record, "score"), self.score);
        }
        if fields.has(Field::Metrics) {
            let mut metrics = Object::open(field!(record, "metrics"));
            for (name, metric) in &self.metrics {
                let mut entry = Object::open(metrics.key(name));
                write_option_f64(field!(entry, "score"), metric.value());
                json_write::write_f64(field!(entry, "weight"), metric.weight);
                if !metric.details.is_null() {
                    metric.details.write(field!(entry, "details"));
                }
                if let Some(reason) = &metric.skipped {
                    json_write::write_str(field!(entry, "skipped"), reason);
                }
                entry.close();
            }
            metrics.close();
        }
        if fields.has(Field::Issues) {
            write_issues(field!(record, "issues"), &self.issues);
        }
        if let (true, Some(turns)) = (fields.has(Field::Turns), &self.turns) {
            let out = field!(record, "turns");
            out.push(b'[');
            for (i, turn) in turns.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let mut entry = Object::open(out);
                json_write::write_str(field!(entry, "role"), turn.role.as_str());
                json_write::write_str(field!(entry, "path"), &turn.path);
                json_write::write_str(field!(entry, "status"), turn.status.as_str());
                write_option_f64(field!(entry, "score"), turn.score);
                write_issues(field!(entry, "issues"), &turn.issues);
                entry.close();
            }
            out.push(b']');
        }
        if fields.has(Field::Extraction) {
            match &self.extraction {
                None => json_write::write_null(field!(record, "extraction")),
                Some(extraction) => extraction.write(field!(record, "extraction")),
            }
        }
        if fields.has(Field::Json) {
            match written {
                Some(Written(text)) => field!(record, "json").extend_from_slice(text),
                None => json_write::write_json(field!(record, "json"), &self.json),
            }
        }
        if fields.has(Field::Feedback) {
            write_option_str(field!(record, "feedback"), self.feedback.as_deref());
        }
        if fields.has(Field::Error) {
            write_option_str(field!(record, "error"), self.error.as_deref());
        }
        if fields.has(Field::ErrorKind) {
            write_option_str(
                field!(record, "error_kind"),
                self.error_kind.map(ErrorKind::as_str),
            );
        }
        if fields.has(Field::Pack) {
            json_write::write_str(field!(record, "pack"), &self.pack);
        }
        if fields.has(Field::Revision) {
            json_write::write_str(field!(record, "revision"), &self.revision);
        }
        for (name, value) in tail {
            json_write::write_str(record.key(name), value);
        }
        record.close();
    }
}

/// A list of issues, as the record writes them.
fn write_issues(out: &mut Vec<u8>, issues: &[Issue]) {
    out.push(b'[');
    for (i, issue) in issues.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let mut entry = Object::open(out);
        json_write::write_str(field!(entry, "rule"), &issue.rule);
        json_write::write_str(field!(entry, "code"), &issue.code);
        json_write::write_str(field!(entry, "severity"), issue.severity.as_str());
        json_write::write_str(field!(entry, "message"), &issue.message);
        match &issue.path {
            Some(path) => json_write::write_str(field!(entry, "path"), path),
            None => json_write::write_null(field!(entry, "path")),
        }
        if let Some(turn) = issue.turn {
            json_write::write_u64(field!(entry, "turn"), turn as u64);
        }
        entry.close();
    }
    out.push(b']');
}

fn write_option_f64(out: &mut Vec<u8>, value: Option<f64>) {
    match value {
        Some(value) => json_write::write_f64(out, value),
        None => json_write::write_null(out),
    }
}

fn write_option_str(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        Some(value) => json_write::write_str(out, value),
        None => json_write::write_null(out),
    }
}

/// One top-level field of the result record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `id`: the input record's id.
    Id,
    /// `line`: the record's line in its input file.
    Line,
    /// `status`: the verdict.
    Status,
    /// `passed`: whether the status is `PASS`.
    Passed,
    /// `score`: the weighted metric score.
    Score,
    /// `metrics`: each metric's score, weight and details.
    Metrics,
    /// `issues`: every finding.
    Issues,
    /// `turns`: a transcript record's turns, with their verdicts.
    Turns,
    /// `extraction`: how the JSON was found.
    Extraction,
    /// `json`: the extracted JSON.
    Json,
    /// `feedback`: the re-ask text.
    Feedback,
    /// `error`: why the record could not be evaluated.
    Error,
    /// `error_kind`: what kind of failure that was.
    ErrorKind,
    /// `pack`: `name@version` of the pack.
    Pack,
    /// `revision`: the pack's content revision.
    Revision,
}

impl Field {
    /// Every field, in the record's order.
    pub const ALL: [Field; 15] = [
        Field::Id,
        Field::Line,
        Field::Status,
        Field::Passed,
        Field::Score,
        Field::Metrics,
        Field::Issues,
        Field::Turns,
        Field::Extraction,
        Field::Json,
        Field::Feedback,
        Field::Error,
        Field::ErrorKind,
        Field::Pack,
        Field::Revision,
    ];

    /// The field's name in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Line => "line",
            Field::Status => "status",
            Field::Passed => "passed",
            Field::Score => "score",
            Field::Metrics => "metrics",
            Field::Issues => "issues",
            Field::Turns => "turns",
            Field::Extraction => "extraction",
            Field::Json => "json",
            Field::Feedback => "feedback",
            Field::Error => "error",
            Field::ErrorKind => "error_kind",
            Field::Pack => "pack",
            Field::Revision => "revision",
        }
    }
}

/// Which fields of the result record are written (`eval --fields`): a large run
/// that needs only verdicts can leave out the extracted `json`, the metric
/// `details` and the re-ask `feedback`. The fields keep the record's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields(u16);

impl Fields {
    /// Every field: the full result record.
    pub const ALL: Fields = Fields((1 << Field::ALL.len()) - 1);

    /// Whether `field` is written.
    pub fn has(self, field: Field) -> bool {
        self.0 & (1 << field as u16) != 0
    }

    /// Reads a comma-separated list of field names (`id,status,score`); an
    /// unknown name is an error that lists the known ones.
    pub fn parse(list: &str) -> Result<Self, FieldsError> {
        let mut bits = 0u16;
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let field = Field::ALL
                .iter()
                .find(|f| f.as_str() == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = Field::ALL.iter().map(|f| f.as_str()).collect();
                    let hint = crate::suggest::nearest(name, &names)
                        .map_or_else(String::new, |near| {
                            format!(" ({})", crate::suggest::did_you_mean(&near))
                        });
                    FieldsError(format!(
                        "unknown result field `{name}`{hint}; the fields are {}",
                        names.join(", ")
                    ))
                })?;
            bits |= 1 << *field as u16;
        }
        if bits == 0 {
            return Err(FieldsError(
                "no result field named (e.g. `id,status,score`)".to_owned(),
            ));
        }
        Ok(Fields(bits))
    }
}

/// A list of result fields that cannot be read: what is wrong, with the
/// nearest field name and every one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FieldsError(String);

impl FieldsError {
    /// It, in words.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl Default for Fields {
    fn default() -> Self {
        Self::ALL
    }
}
