//! `tribunal_engine._native`, the compiled half of the Python package `tribunal-engine`: the
//! library's public API (`Pack`, `Input`, `Report`, `LoadErrors`) as Python
//! classes and exceptions, and the conversion between Python objects and JSON
//! values. No engine logic lives here: a record is read by the rules of
//! `tribunal::Input::from_members`, as the CLI reads an input line, and a result
//! is the library's `Report`, whose `to_dict()` is the CLI's result record.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde_json::Value;
use tribunal::jsonl::{Evaluated, LineError, ReadRecord};
use tribunal::on_deep_stack;
use tribunal::{
    Engine, ErrorKind, FedError, Input, Issue, LoadError, LoadErrors, LoadOptions, Override,
    RecordFeed, Report, Request, Served, ServedPack, Severity, Status,
};
use tribunal::{Json, Number, Object};

// The library's script memory limit counts allocations through this allocator,
// as in the CLI.
#[global_allocator]
static ALLOC: tribunal::CountingAllocator = tribunal::CountingAllocator;

create_exception!(
    tribunal,
    TribunalError,
    PyException,
    "The base of every error Tribunal raises."
);
create_exception!(
    tribunal,
    PackError,
    TribunalError,
    "A pack did not load. The message lists every error as the CLI prints it \
     (file:line:column: message); `errors` holds them as dicts with `file`, \
     `line`, `column`, `message` and `help`."
);

/// Arrays and objects nested in a record's member, read from Python objects:
/// what the CLI reads in an input line (`serde_json` stops at the 128th level of
/// arrays and objects, the record's own object included).
const MAX_DEPTH: usize = 126;
/// Nesting converted object by object; deeper values go through `json`, whose
/// own recursion check raises `RecursionError` rather than overflowing the stack.
const MAX_DIRECT_DEPTH: usize = 256;

/// The runtime every pack of this process is loaded on: they share its worker
/// threads. (Python's own process-wide state, as the interpreter keeps one
/// module per process; the engine keeps none.)
fn runtime() -> &'static tribunal::Runtime {
    static RUNTIME: OnceLock<tribunal::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(tribunal::Runtime::new)
}

/// A compiled rule pack: load once, evaluate any number of outputs, from any
/// number of threads.
#[pyclass(module = "tribunal_engine", name = "Pack", frozen)]
struct PyPack {
    /// An engine serving the pack alone (every record is judged through
    /// it), and the pack as served.
    engine: Engine,
    served: Arc<Served>,
    /// The path as given, and as an absolute path (for pickling).
    path: PathBuf,
    absolute: Option<PathBuf>,
    overrides: Vec<(String, Value)>,
    plugin_dirs: Vec<PathBuf>,
    allow_plugins: bool,
    /// The verifying keys' files a bundle must be signed by.
    trust: Vec<PathBuf>,
}

#[pymethods]
impl PyPack {
    /// Loads and compiles the pack at `path` (a folder with `pack.yaml`, or the
    /// file itself). `overrides` is a dict like `{"json_emission.threshold": 0.8}`
    /// (the CLI's `--set`); `plugin_dirs` are folders to find plugin libraries in;
    /// `allow_plugins=True` is the consent to opening the pack's plugin
    /// libraries (native code; the CLI's `--allow-plugins`): without it a pack
    /// with a plugin component does not load. `path` may be a bundle
    /// (`tribunal bundle build`: `FILE`, or `FILE#NAME` for one of its packs);
    /// `trust` lists the verifying keys' files (`NAME.pub`) one of which must
    /// have signed it (the CLI's `--trust`).
    #[staticmethod]
    #[pyo3(signature = (path, overrides = None, plugin_dirs = None, *, allow_plugins = false, trust = None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        overrides: Option<&Bound<'_, PyAny>>,
        plugin_dirs: Option<Vec<PathBuf>>,
        allow_plugins: bool,
        trust: Option<Vec<PathBuf>>,
    ) -> PyResult<Self> {
        let overrides = read_overrides(overrides)?;
        let plugin_dirs = plugin_dirs.unwrap_or_default();
        let trust = trust.unwrap_or_default();
        let keys = trust
            .iter()
            .map(|file| tribunal::PublicKey::read(file))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(format!("trust: {err}")))?;
        let mut options = LoadOptions {
            plugin_dirs: plugin_dirs.clone(),
            allow_plugins,
            trust: keys,
            ..LoadOptions::default()
        };
        for (target, value) in &overrides {
            let parsed = Override::new(target, value.clone()).map_err(|err| {
                let error = LoadError {
                    file: path.clone(),
                    position: None,
                    message: format!("overrides[{target:?}]: {}", err.reason),
                    help: None,
                };
                pack_error(py, &LoadErrors(vec![error]))
            })?;
            options.overrides.push(parsed);
        }
        let pack = py
            .detach(|| runtime().load_with(&path, &options))
            .map_err(|errors| pack_error(py, &errors))?;
        let absolute = std::path::absolute(&path).ok();
        let (engine, served) = Engine::with_pack(pack);
        Ok(Self {
            engine,
            served,
            path,
            absolute,
            overrides,
            plugin_dirs,
            allow_plugins,
            trust,
        })
    }

    /// The revision of the bundle the pack was loaded from (`None`: a folder).
    #[getter]
    fn bundle_revision(&self) -> Option<&str> {
        self.pack().bundle_revision()
    }

    /// The pack's name.
    #[getter]
    fn name(&self) -> &str {
        self.pack().name()
    }

    /// The pack's version.
    #[getter]
    fn version(&self) -> &str {
        self.pack().version()
    }

    /// `name@version`, as in each result's `pack`.
    #[getter]
    fn label(&self) -> &str {
        self.pack().label()
    }

    /// The content revision (a hash of the pack's files and the overrides).
    #[getter]
    fn revision(&self) -> &str {
        self.pack().revision()
    }

    /// The pack's description, if it has one.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.pack().description()
    }

    /// The path the pack was loaded from, as given.
    #[getter]
    fn path(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// The metrics, in pipeline order.
    #[getter]
    fn metrics(&self) -> Vec<&str> {
        self.pack().metric_names().collect()
    }

    /// Warnings found while loading (as `tribunal lint` prints them).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.pack()
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The OUTPUT FORMAT block for the pack's contract (`tribunal prompt`), or
    /// `None` when the pack has no contract.
    fn prompt(&self) -> Option<String> {
        self.pack().prompt()
    }

    /// A streaming session for one output: `push(chunk)` returns the events
    /// the chunk made certain, `finish()` the `Result` (exactly `evaluate` of
    /// the whole text). `expected`, `meta` and `id` are the record's, as for
    /// `evaluate`; `release=True` also reports how far the text is safe to
    /// pass on.
    #[pyo3(signature = (expected = None, meta = None, id = None, *, release = false))]
    fn stream(
        &self,
        py: Python<'_>,
        expected: Option<&Bound<'_, PyAny>>,
        meta: Option<&Bound<'_, PyAny>>,
        id: Option<&Bound<'_, PyAny>>,
        release: bool,
    ) -> PyResult<PyStream> {
        let empty = PyString::new(py, "").into_any();
        let (record, note) = read_members([id, Some(&empty), expected, meta, None])
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.message))?;
        let mut session = self.engine.stream(&self.served, record).with_note(note);
        if release {
            session = session.with_release();
        }
        Ok(PyStream {
            engine: self.engine.clone(),
            session: Some(session),
            result: None,
        })
    }

    /// The contract as a JSON Schema (`tribunal prompt --schema`), or `None`
    /// when the pack has no contract. `strict=True`: the subset OpenAI's
    /// Structured Outputs take with `strict: true` (`--schema --strict`); a
    /// `ValueError` says what it cannot express.
    #[pyo3(signature = (*, strict = false))]
    fn json_schema(&self, py: Python<'_>, strict: bool) -> PyResult<Py<PyAny>> {
        let schema = if strict {
            self.pack()
                .json_schema_strict()
                .transpose()
                .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))?
        } else {
            self.pack().json_schema()
        };
        match schema {
            Some(schema) => to_python(py, &schema),
            None => Ok(py.None()),
        }
    }

    /// Evaluates one output. Never raises for what it is given: a record that
    /// cannot be evaluated (no output, a value that is not JSON) is an `ERROR`
    /// result with the reason.
    #[pyo3(signature = (output = None, expected = None, meta = None, id = None, *, messages = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        output: Option<&Bound<'_, PyAny>>,
        expected: Option<&Bound<'_, PyAny>>,
        meta: Option<&Bound<'_, PyAny>>,
        id: Option<&Bound<'_, PyAny>>,
        messages: Option<&Bound<'_, PyAny>>,
    ) -> PyRecord {
        let record = read_members([id, output, expected, meta, messages]);
        let report = match record {
            Ok((input, note)) => {
                let request = Request::check_record(self.pack().name(), input)
                    .note(note)
                    .anonymous()
                    .unwritten();
                let decision = py.detach(|| on_deep_stack(|| self.engine.decide(request)));
                decision
                    .ok()
                    .and_then(|decision| decision.into_judged().into_report())
                    .expect("an engine judges a record of its own pack")
            }
            Err(err) => self.pack().errored(err.id, ErrorKind::Input, err.message),
        };
        PyRecord::lazy(report)
    }

    /// Decides, before they run, the tool calls the last assistant message of
    /// `messages` (a list of messages in the OpenAI Chat, Anthropic Messages or
    /// OpenAI Responses format) proposes: a dict `{"decisions": [{"call", "id",
    /// "name", "path", "decision": "allow" | "deny", "issues"}], "history",
    /// "other_issues", "error", "error_kind", "pack", "revision", "id"}`
    /// (`history`: the earlier turns' issues, which deny no call), as `tribunal check
    /// --proposed --json` prints it. Fails closed: a proposal that cannot be
    /// judged denies every call; messages that propose no call give no
    /// decision and an `error`.
    #[pyo3(signature = (messages, *, meta = None, expected = None, id = None))]
    fn decide(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        meta: Option<&Bound<'_, PyAny>>,
        expected: Option<&Bound<'_, PyAny>>,
        id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let (input, _) = read_members([id, None, expected, meta, Some(messages)])
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.message))?;
        let request = Request::decide_record(self.pack().name(), input)
            .anonymous()
            .unwritten();
        let decision = py
            .detach(|| on_deep_stack(|| self.engine.decide(request)))
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.message().to_owned()))?;
        let decisions = decision
            .into_judged()
            .into_calls()
            .expect("a proposal is answered with decisions");
        to_python(py, &decisions.to_value())
    }

    /// Evaluates every record of `records` (an iterable of dicts with the
    /// fields of an `eval` input line: `id`, `output`, `expected`, `meta`) on
    /// `jobs` threads (`None` or 0: every core) with the GIL released, and
    /// returns the results in input order. A record that cannot be evaluated
    /// is an `ERROR` result, never an exception. A record that is a string is
    /// read as a line of JSONL, exactly as `tribunal eval` reads it. Each
    /// result's `line` is the record's position counted from `first_line`
    /// (1: the line number of records read one per line from the start of a
    /// JSONL file); `first_line=None` leaves it out.
    #[pyo3(signature = (records, jobs = None, *, first_line = Some(1)))]
    fn evaluate_many(
        &self,
        py: Python<'_>,
        records: &Bound<'_, PyAny>,
        jobs: Option<usize>,
        first_line: Option<u64>,
    ) -> PyResult<Py<PyList>> {
        let mut feed = Feed {
            py,
            records: records.try_iter()?,
            position: 0,
            first_line,
            results: PyList::empty(py),
        };
        let count = records.len().ok();
        self.engine
            .judge_records(&self.served, jobs.unwrap_or(0), count, &mut feed)
            .map_err(|err| match err {
                FedError::Feed(err) => err,
                other => TribunalError::new_err(other.to_string()),
            })?;
        Ok(feed.results.unbind())
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyTuple>)> {
        let restore = py
            .import("tribunal_engine._native")?
            .getattr("_restore_pack")?;
        let overrides = PyDict::new(py);
        for (target, value) in &self.overrides {
            overrides.set_item(target, to_python(py, value)?)?;
        }
        let absolute_dirs: Vec<Option<PathBuf>> = self
            .plugin_dirs
            .iter()
            .map(|dir| std::path::absolute(dir).ok())
            .collect();
        let args = (
            &self.path,
            self.absolute.as_deref(),
            overrides,
            (&self.plugin_dirs, absolute_dirs),
            self.pack().revision(),
            self.allow_plugins,
            &self.trust,
        )
            .into_pyobject(py)?;
        Ok((restore.unbind(), args.unbind()))
    }

    fn __repr__(&self) -> String {
        format!(
            "<tribunal_engine.Pack {} revision {} from {:?}>",
            self.pack().label(),
            self.pack().revision(),
            self.path.display().to_string()
        )
    }
}

impl PyPack {
    fn pack(&self) -> &tribunal::Pack {
        self.served.pack()
    }
}

/// The records of one `evaluate_many` call, read from Python (holding the
/// GIL) as the engine asks for them, and their results appended to the
/// list it returns.
struct Feed<'py> {
    py: Python<'py>,
    records: Bound<'py, pyo3::types::PyIterator>,
    /// Records read so far.
    position: u64,
    /// Where records and results are numbered from: their `line`, and the
    /// place error messages give.
    first_line: Option<u64>,
    results: Bound<'py, PyList>,
}

impl Feed<'_> {
    /// The number of the record at `position` (1-based).
    fn number(&self, position: u64) -> u64 {
        match self.first_line {
            Some(first) => first.saturating_add(position - 1),
            None => position,
        }
    }
}

impl RecordFeed for Feed<'_> {
    type Error = PyErr;

    fn read(&mut self, limit: usize) -> PyResult<(Option<u64>, Vec<ReadRecord>)> {
        let lines = self.first_line.map(|_| self.number(self.position + 1));
        let mut chunk = Vec::with_capacity(limit.min(256));
        while chunk.len() < limit {
            let Some(record) = self.records.next().transpose()? else {
                break;
            };
            self.position += 1;
            chunk.push(read_record(&record, self.number(self.position)));
        }
        Ok((lines, chunk))
    }

    fn write(&mut self, results: Vec<Evaluated>) -> PyResult<()> {
        for result in results {
            self.results.append(PyRecord::written(result))?;
        }
        Ok(())
    }

    /// Ctrl-C stops the call between chunks.
    fn between(&mut self) -> PyResult<()> {
        self.py.check_signals()
    }

    /// Without the GIL.
    fn outside<T: Send>(&mut self, work: impl FnOnce() -> T + Send) -> T {
        self.py.detach(work)
    }
}

/// Reloads a pickled `Pack`: from its path as given when it exists (relative to
/// this process's working folder), else from the absolute path it was loaded
/// from; the same for each plugin folder. Warns when the pack found is not the
/// revision that was pickled.
#[pyfunction]
#[pyo3(signature = (path, absolute, overrides, plugin_dirs, revision, allow_plugins = false, trust = None))]
// (Its parameters are the pickled tuple's members, older pickles' first.)
#[allow(clippy::too_many_arguments)]
fn _restore_pack(
    py: Python<'_>,
    path: PathBuf,
    absolute: Option<PathBuf>,
    overrides: &Bound<'_, PyAny>,
    plugin_dirs: (Vec<PathBuf>, Vec<Option<PathBuf>>),
    revision: &str,
    allow_plugins: bool,
    trust: Option<Vec<PathBuf>>,
) -> PyResult<PyPack> {
    let here = |given: PathBuf, absolute: Option<PathBuf>| match absolute {
        Some(absolute) if !given.exists() && absolute.exists() => absolute,
        _ => given,
    };
    let path = here(path, absolute);
    let (given_dirs, absolute_dirs) = plugin_dirs;
    let plugin_dirs = given_dirs
        .into_iter()
        .zip(absolute_dirs)
        .map(|(given, absolute)| here(given, absolute))
        .collect();
    let pack = PyPack::load(
        py,
        path,
        Some(overrides),
        Some(plugin_dirs),
        allow_plugins,
        trust,
    )?;
    if pack.pack().revision() != revision {
        let message = format!(
            "the pack at {} is revision {}, not the revision {revision} that was pickled: its files changed",
            pack.path.display(),
            pack.pack().revision()
        );
        let warning = py.get_type::<pyo3::exceptions::PyUserWarning>();
        PyErr::warn(py, &warning, &std::ffi::CString::new(message)?, 1)?;
    }
    Ok(pack)
}

/// The result of evaluating one record: the CLI's result record as attributes.
/// The fields a caller reads most are kept as they are; the other parts are
/// read from the record's JSON line, once, when first asked for. Results of
/// `evaluate_many` keep only that line (a sixth of the memory of the report
/// it was written from).
#[pyclass(module = "tribunal_engine", name = "Result", frozen)]
struct PyRecord {
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
enum Record {
    Line(String),
    Report(Box<Report>, OnceLock<String>),
}

impl PyRecord {
    /// A result of `evaluate_many`, its record written.
    fn written(evaluated: Evaluated) -> Self {
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
    fn lazy(report: Report) -> Self {
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
    fn decided(decision: tribunal::Decision) -> Self {
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

/// `PackError` with the message the CLI prints, and each error as a dict.
fn pack_error(py: Python<'_>, errors: &LoadErrors) -> PyErr {
    let err = PackError::new_err(errors.to_string());
    // (Each error as the engine writes it for every front end.)
    let details = || -> PyResult<Bound<'_, PyList>> {
        let list = PyList::empty(py);
        for error in &errors.0 {
            list.append(to_python(py, &error.to_json())?)?;
        }
        Ok(list)
    };
    match details() {
        Ok(list) => match err.value(py).setattr("errors", list) {
            Ok(()) => err,
            Err(other) => other,
        },
        Err(other) => other,
    }
}

/// `overrides` as (`component.key`, value) pairs, in the dict's order.
fn read_overrides(overrides: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, Value)>> {
    let Some(overrides) = overrides.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let mapping = overrides.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!(
            "overrides must be a dict like {{\"json_emission.threshold\": 0.8}}, not {}",
            type_name(overrides)
        ))
    })?;
    let mut pairs = Vec::new();
    for item in mapping.items()?.iter() {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let key: String = key.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "overrides: keys must be strings like \"json_emission.threshold\", not {}",
                type_name(&key)
            ))
        })?;
        let value = Convert::default().value(&value, 0).map_err(|err| {
            PyTypeError::new_err(format!("overrides[{key:?}]: {}", err.describe("")))
        })?;
        pairs.push((key, value.to_serde()));
    }
    Ok(pairs)
}

/// The members of a record, in the order `read_members` takes them.
const MEMBERS: [&str; 5] = ["id", "output", "expected", "meta", "messages"];

/// [`MEMBERS`] as Python strings made once (looking a member up by a `&str`
/// would make and hash a new string for each record).
fn member_names(py: Python<'_>) -> [&Bound<'_, PyString>; 5] {
    [
        pyo3::intern!(py, "id"),
        pyo3::intern!(py, "output"),
        pyo3::intern!(py, "expected"),
        pyo3::intern!(py, "meta"),
        pyo3::intern!(py, "messages"),
    ]
}

/// One record of `evaluate_many`: a dict (or any mapping) with the members of
/// an `eval` input line, or a line of JSONL; `number` is its place, for messages.
fn read_record(record: &Bound<'_, PyAny>, number: u64) -> ReadRecord {
    if let Ok(line) = record.cast::<PyString>() {
        // A line of JSONL, read exactly as `tribunal eval` reads it.
        let text = line.to_string_lossy();
        return tribunal::jsonl::read_line(&text, number);
    }
    let members: [Option<Bound<'_, PyAny>>; 5] = if let Ok(dict) = record.cast::<PyDict>() {
        // No KeyError raised (and caught) for the members a record leaves out.
        member_names(record.py()).map(|name| dict.get_item(name).ok().flatten())
    } else if let Ok(mapping) = record.cast::<PyMapping>() {
        member_names(record.py()).map(|name| mapping.get_item(name).ok())
    } else {
        return Err(LineError {
            id: Json::Null,
            message: format!(
                "record {number}: a record must be a dict (with `output`, and optionally `id`, `expected` and `meta`) or a line of JSON, not {}",
                type_name(record)
            ),
        });
    };
    read_members(members.each_ref().map(Option::as_ref)).map_err(|mut err| {
        err.message = format!("record {number}: {}", err.message);
        err
    })
}

/// `id`, `output`, `expected` and `meta` (each `None` when absent) as an
/// `Input`, with a note when text had to be read leniently; or why the record
/// cannot be evaluated, with its id.
fn read_members(members: [Option<&Bound<'_, PyAny>>; 5]) -> ReadRecord {
    let mut convert = Convert::default();
    let mut values: [Json; 5] = Default::default();
    let mut failure = None;
    for ((slot, member), name) in values.iter_mut().zip(members).zip(MEMBERS) {
        let Some(member) = member else { continue };
        match convert.value(member, 0) {
            Ok(value) => *slot = value,
            Err(err) => {
                failure.get_or_insert(err.describe(name));
            }
        }
    }
    let [id, output, expected, meta, messages] = values;
    if let Some(message) = failure {
        return Err(LineError { id, message });
    }
    let input =
        Input::from_record(id, output, expected, meta, messages).map_err(|missing| LineError {
            id: missing.id,
            message: "record has no `output` (or it is None), nor `messages`".to_owned(),
        })?;
    let note = convert.lossy.then(|| Issue {
        rule: "input".into(),
        code: "input.lone-surrogate".into(),
        severity: Severity::Warning,
        message: "text with lone surrogates (not valid Unicode) in the record was read with U+FFFD in their place".into(),
        path: None,
        turn: None,
    });
    Ok((input, note))
}

/// A value that is not JSON, and where it is (keys and indices, outermost first).
struct NotJson {
    path: Vec<String>,
    reason: String,
}

impl NotJson {
    fn new(reason: String) -> Self {
        Self {
            path: Vec::new(),
            reason,
        }
    }

    fn within(mut self, step: String) -> Self {
        self.path.push(step);
        self
    }

    /// "`meta/created`: a datetime is not a JSON value", for the member `name`.
    fn describe(&self, name: &str) -> String {
        let mut place = name.to_owned();
        for (i, step) in self.path.iter().rev().enumerate() {
            if i == 8 {
                place.push_str("/…");
                break;
            }
            place.push('/');
            place.push_str(step);
        }
        if place.is_empty() {
            self.reason.clone()
        } else {
            format!("`{place}`: {}", self.reason)
        }
    }
}

/// Python objects to JSON values, by the rules of Python's `json.dumps`: dicts
/// (keys: strings, or ints, floats, bools and `None` written as text), lists and
/// tuples, strings, ints of any size, finite floats, bools and `None`; numpy
/// scalars and arrays through their `tolist()`.
#[derive(Default)]
struct Convert {
    /// Some text held lone surrogates, read as U+FFFD.
    lossy: bool,
}

impl Convert {
    fn value(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> Result<Json, NotJson> {
        if obj.is_none() {
            return Ok(Json::Null);
        }
        if let Ok(text) = obj.cast::<PyString>() {
            return Ok(Json::from(self.text(text)));
        }
        if let Ok(flag) = obj.cast::<PyBool>() {
            return Ok(Json::Bool(flag.is_true()));
        }
        if let Ok(int) = obj.cast::<PyInt>() {
            return int_value(int);
        }
        if let Ok(float) = obj.cast::<PyFloat>() {
            let float = float.value();
            return Number::from_f64(float)
                .map(Json::Number)
                .ok_or_else(|| NotJson::new(format!("{float} is not a number JSON can hold")));
        }
        if let Ok(dict) = obj.cast::<PyDict>() {
            within_depth(depth)?;
            let mut map = Object::with_capacity(dict.len());
            // A snapshot of the items: converting a value may run Python code
            // (a numpy `tolist()`), which could change the dict.
            let items = dict.items();
            for item in items.iter() {
                let (key, item): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
                    .extract()
                    .map_err(|err| NotJson::new(format!("cannot read the dict: {err}")))?;
                let key = self.key(&key)?;
                let item = self
                    .value(&item, depth + 1)
                    .map_err(|err| err.within(key.clone()))?;
                map.insert(key, item);
            }
            return Ok(Json::Object(map));
        }
        if let Ok(list) = obj.cast::<PyList>() {
            within_depth(depth)?;
            return self.items(list.iter(), depth);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            within_depth(depth)?;
            return self.items(tuple.iter(), depth);
        }
        // numpy scalars and arrays (as in Ray and pandas batches).
        if obj.hasattr("dtype").unwrap_or(false) {
            if let Ok(plain) = obj.call_method0("tolist") {
                return self.value(&plain, depth);
            }
        }
        if let Ok(mapping) = obj.cast::<PyMapping>() {
            let dict = PyDict::new(obj.py());
            let items = mapping
                .items()
                .map_err(|err| NotJson::new(format!("cannot read the mapping: {err}")))?;
            for item in items.iter() {
                let pair: (Bound<'_, PyAny>, Bound<'_, PyAny>) = item
                    .extract()
                    .map_err(|err| NotJson::new(format!("cannot read the mapping: {err}")))?;
                dict.set_item(pair.0, pair.1)
                    .map_err(|err| NotJson::new(format!("cannot read the mapping: {err}")))?;
            }
            return self.value(dict.as_any(), depth);
        }
        Err(NotJson::new(format!(
            "{} is not a JSON type (use dicts, lists, strings, numbers, bools and None)",
            type_name(obj)
        )))
    }

    fn items<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
    ) -> Result<Json, NotJson> {
        items
            .enumerate()
            .map(|(i, item)| {
                self.value(&item, depth + 1)
                    .map_err(|err| err.within(i.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Json::Array)
    }

    /// A dict key as `json.dumps` writes it.
    fn key(&mut self, key: &Bound<'_, PyAny>) -> Result<String, NotJson> {
        if let Ok(text) = key.cast::<PyString>() {
            return Ok(self.text(text));
        }
        if key.is_none() {
            return Ok("null".into());
        }
        if let Ok(flag) = key.cast::<PyBool>() {
            return Ok(if flag.is_true() { "true" } else { "false" }.into());
        }
        if key.cast::<PyInt>().is_ok() || key.cast::<PyFloat>().is_ok() {
            if let Ok(Json::Number(number)) = self.value(key, 0) {
                return Ok(number.to_string());
            }
        }
        Err(NotJson::new(format!(
            "a dict key must be a string, not {}",
            type_name(key)
        )))
    }

    fn text(&mut self, text: &Bound<'_, PyString>) -> String {
        // `to_cow`: borrowed where the Python has it (3.10+), copied on the
        // stable ABI's 3.9 (the wheel scripts/dist builds).
        if let Ok(text) = text.to_cow() {
            text.into_owned()
        } else {
            self.lossy = true;
            text.to_string_lossy().into_owned()
        }
    }
}

/// An error when a list or dict inside `depth` others is deeper than a record's
/// member may be.
fn within_depth(depth: usize) -> Result<(), NotJson> {
    if depth >= MAX_DEPTH {
        return Err(NotJson::new(format!(
            "nested more than {MAX_DEPTH} levels deep (or it contains itself), deeper than an input line may be"
        )));
    }
    Ok(())
}

/// A Python int as a JSON number, whatever its size.
fn int_value(int: &Bound<'_, PyInt>) -> Result<Json, NotJson> {
    if let Ok(small) = int.extract::<i64>() {
        return Ok(Json::from(small));
    }
    if let Ok(large) = int.extract::<u64>() {
        return Ok(Json::from(large));
    }
    let digits = int
        .str()
        .map_err(|err| NotJson::new(err.to_string()))?
        .to_string();
    digits
        .parse::<Number>()
        .map(Json::Number)
        .map_err(|err| NotJson::new(format!("int {digits}: {err}")))
}

/// A JSON value as Python objects (dicts keep the value's member order).
fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    value_to_python(py, &Json::from(value), 0)
}

fn value_to_python(py: Python<'_>, value: &Json, depth: usize) -> PyResult<Py<PyAny>> {
    if depth > MAX_DIRECT_DEPTH {
        return json_loads(py, &value.to_string());
    }
    Ok(match value {
        Json::Null => py.None(),
        Json::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any().unbind(),
        Json::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.into_pyobject(py)?.into_any().unbind()
            } else if let Some(int) = number.as_u64() {
                int.into_pyobject(py)?.into_any().unbind()
            } else if number.is_f64() {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            } else {
                // An int beyond 64 bits (the number keeps its digits).
                py.get_type::<PyInt>()
                    .call1((number.to_string(),))?
                    .unbind()
            }
        }
        Json::String(text) => PyString::new(py, text).into_any().unbind(),
        Json::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_python(py, item, depth + 1)?)?;
            }
            list.into_any().unbind()
        }
        Json::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key.as_str(), value_to_python(py, item, depth + 1)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

fn json_loads(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("json")?
        .getattr("loads")?
        .call1((text,))?
        .unbind())
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "this value".to_owned(), |name| format!("`{name}`"))
}

/// A streaming session (`Pack.stream()`): push the chunks of an output as
/// they arrive, then finish. Also a context manager: leaving the `with` block
/// finishes it, and `result` holds the `Result`.
#[pyclass(module = "tribunal_engine", name = "Stream")]
struct PyStream {
    engine: Engine,
    session: Option<tribunal::Stream<ServedPack>>,
    result: Option<Py<PyRecord>>,
}

#[pymethods]
impl PyStream {
    /// Appends `chunk` to the output and returns the events it made certain,
    /// each a dict: `{"event": "violation", "rule", "code", "severity",
    /// "message", "path", "start", "offset"}`, `{"event": "release",
    /// "up_to"}` or, once, `{"event": "stopped", "at", "reason"}` when the
    /// document nests too deep to judge early (offsets in bytes of the UTF-8
    /// text).
    fn push(&mut self, py: Python<'_>, chunk: &str) -> PyResult<Py<PyList>> {
        let session = self.session.as_mut().ok_or_else(finished)?;
        let events = py.detach(|| session.push(chunk));
        // (Each as the engine writes it for every front end.)
        let list = PyList::empty(py);
        for event in events {
            list.append(to_python(py, &event.to_json())?)?;
        }
        Ok(list.unbind())
    }

    /// Ends the output and returns its `Result`: exactly what `Pack.evaluate`
    /// gives for the whole text.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Py<PyRecord>> {
        let session = self.session.take().ok_or_else(finished)?;
        let decision = py.detach(|| on_deep_stack(|| self.engine.finish(session, None, None)));
        let result = Py::new(py, PyRecord::decided(decision))?;
        self.result = Some(result.clone_ref(py));
        Ok(result)
    }

    /// The text pushed so far.
    #[getter]
    fn text(&self) -> PyResult<String> {
        self.session
            .as_ref()
            .map(|s| s.text().to_owned())
            .ok_or_else(finished)
    }

    /// The `Result`, once finished (`None` before).
    #[getter]
    fn result(&self, py: Python<'_>) -> Option<Py<PyRecord>> {
        self.result.as_ref().map(|r| r.clone_ref(py))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        if self.session.is_some() {
            self.finish(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match &self.session {
            Some(session) => format!(
                "<tribunal_engine.Stream, {} bytes so far>",
                session.text().len()
            ),
            None => "<tribunal_engine.Stream, finished>".to_owned(),
        }
    }
}

fn finished() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(
        "the stream is finished: start another with Pack.stream()",
    )
}

/// The module `tribunal_engine._native`; `tribunal_engine/__init__.py` re-exports it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyPack>()?;
    m.add_class::<PyRecord>()?;
    m.add_class::<PyStream>()?;
    m.add("TribunalError", py.get_type::<TribunalError>())?;
    m.add("PackError", py.get_type::<PackError>())?;
    m.add_function(wrap_pyfunction!(_restore_pack, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
