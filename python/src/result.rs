//! `tribunal_engine.Result`: one record's result, the CLI's result record as
//! attributes.

use pyo3::prelude::*;
use std::sync::OnceLock;
use tribunal::jsonl::Evaluated;
use tribunal::{ErrorKind, Report, Status};

use crate::convert::json_loads;

/// The result of evaluating one record: the CLI's result record as attributes.
/// The fields a caller reads most are kept as they are; the other parts are
/// read from the record's JSON line, once, when first asked for. Results of
/// `evaluate_many` keep only that line (a sixth of the memory of the report
/// it was written from).
#[pyclass(module = "tribunal_engine", name = "Result", frozen)]
pub(crate) struct PyRecord {
    status: Status,
    passed: bool,
    score: Option<f64>,
    line: Option<u64>,
    feedback: Option<String>,
    error: Option<String>,
    error_kind: Option<ErrorKind>,
    record: Record,
    /// `json.loads` of the record, made on first use.
    parsed: OnceLock<Py<PyAny>>,
}

/// The result record: written out (what `evaluate_many` keeps of each of many
/// results), or the report to write it from when first asked (`evaluate`).
pub(crate) enum Record {
    Line(String),
    Report(Box<Report>, OnceLock<String>),
}

impl PyRecord {
    /// A result of `evaluate_many`, its record written.
    pub(crate) fn written(evaluated: Evaluated) -> Self {
        Self {
            status: evaluated.status,
            passed: evaluated.passed,
            score: evaluated.score,
            line: evaluated.line,
            feedback: evaluated.feedback,
            error: evaluated.error,
            error_kind: evaluated.error_kind,
            record: Record::Line(evaluated.record),
            parsed: OnceLock::new(),
        }
    }

    /// A result that writes its record from the report when first asked.
    pub(crate) fn lazy(report: Report) -> Self {
        Self {
            status: report.status(),
            passed: report.passed(),
            score: report.score,
            line: report.line,
            feedback: report.feedback.clone(),
            error: report.error().map(str::to_owned),
            error_kind: report.error_kind(),
            record: Record::Report(Box::new(report), OnceLock::new()),
            parsed: OnceLock::new(),
        }
    }

    /// A result the engine decided and wrote.
    pub(crate) fn decided(decision: tribunal::Decision) -> Self {
        let (judged, bytes) = decision.into_parts();
        let text = String::from_utf8(bytes).expect("result records are UTF-8");
        let report = judged
            .into_report()
            .expect("a check is answered with a report");
        let record = Self::lazy(report);
        if let Record::Report(_, line) = &record.record {
            let _ = line.set(text);
        }
        record
    }

    /// The result record as `tribunal eval` writes it.
    fn text(&self) -> &str {
        match &self.record {
            Record::Line(line) => line,
            Record::Report(report, line) => line.get_or_init(|| report.to_json_line()),
        }
    }

    /// A member of the record, from its parsed form (shared between calls).
    fn part(&self, py: Python<'_>, key: &str) -> PyResult<Py<PyAny>> {
        Ok(self.parsed(py)?.bind(py).get_item(key)?.unbind())
    }

    /// The record's member `key`, `None` when it has none.
    fn part_if_any(&self, py: Python<'_>, key: &str) -> PyResult<Py<PyAny>> {
        Ok(self
            .parsed(py)?
            .bind(py)
            .call_method1("get", (key,))?
            .unbind())
    }

    fn parsed(&self, py: Python<'_>) -> PyResult<&Py<PyAny>> {
        if let Some(parsed) = self.parsed.get() {
            return Ok(parsed);
        }
        let parsed = json_loads(py, self.text())?;
        Ok(self.parsed.get_or_init(|| parsed))
    }
}

#[pymethods]
impl PyRecord {
    /// The record's id (`None` when it has none).
    #[getter]
    fn id(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "id")
    }

    /// The record's position in `evaluate_many`'s records, from `first_line`
    /// (`None` from `evaluate`).
    #[getter]
    fn line(&self) -> Option<u64> {
        self.line
    }

    /// `"PASS"`, `"NEEDS_IMPROVEMENT"`, `"FAIL"` or `"ERROR"`.
    #[getter]
    fn status(&self) -> &'static str {
        self.status.as_str()
    }

    /// Whether the status is `PASS`.
    #[getter]
    fn passed(&self) -> bool {
        self.passed
    }

    /// The weighted score in [0, 1] (`None` for `ERROR`, or a pack with no metrics).
    #[getter]
    fn score(&self) -> Option<f64> {
        self.score
    }

    /// Each metric's `score`, `weight` and `details`, by name (`score` `None`
    /// and `skipped` its reason for a metric that did not apply).
    #[getter]
    fn metrics(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "metrics")
    }

    /// The issues found, each a dict with `rule`, `severity`, `message` and `path`.
    #[getter]
    fn issues(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "issues")
    }

    /// A transcript record's turns, in order, each a dict with `role`, `path`,
    /// `status`, `score` and `issues`; `None` for a record without `messages`.
    #[getter]
    fn turns(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part_if_any(py, "turns")
    }

    /// The extracted JSON value (after the postprocessors), `None` when there is none.
    #[getter]
    fn json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "json")
    }

    /// How the JSON was found: `tier`, `repairs`, `raw_fallback`, and
    /// `schema_repairs` when a contract's `repair: schema` changed the document
    /// (`None` for `ERROR`).
    #[getter]
    fn extraction(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "extraction")
    }

    /// The re-ask feedback for the model, when there are error issues.
    #[getter]
    fn feedback(&self) -> Option<&str> {
        self.feedback.as_deref()
    }

    /// Why the record could not be evaluated (`ERROR` only).
    #[getter]
    fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// What kind of failure made the record `ERROR` (`timeout`, `memory`,
    /// `script`, `plugin-crash`, `plugin-reply`, `input`, `model`, `internal`).
    #[getter]
    fn error_kind(&self) -> Option<&'static str> {
        self.error_kind.map(ErrorKind::as_str)
    }

    /// `name@version` of the pack.
    #[getter]
    fn pack(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "pack")
    }

    /// The pack's content revision.
    #[getter]
    fn revision(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.part(py, "revision")
    }

    /// The result record as a new dict: equal to the CLI's result record
    /// (`json.loads` of a line of `tribunal eval`'s output) for the same input.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        json_loads(py, self.text())
    }

    /// The result record as one line of JSON, byte for byte the CLI's.
    fn to_json(&self) -> &str {
        self.text()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let score = self
            .score
            .map_or_else(|| "None".to_owned(), |s| format!("{s:?}"));
        let id = self.id(py)?.bind(py).repr()?.to_string();
        Ok(format!(
            "<tribunal_engine.Result {} score={score} id={id}>",
            self.status
        ))
    }
}
