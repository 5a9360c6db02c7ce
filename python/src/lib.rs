//! `tribunal_engine._native`, the compiled half of the Python package `tribunal-engine`: the
//! library's public API (`Pack`, `Input`, `Report`, `LoadErrors`) as Python
//! classes and exceptions, and the conversion between Python objects and JSON
//! values. No engine logic lives here: a record is read by the rules of
//! `tribunal::Input::from_members`, as the CLI reads an input line, and a result
//! is the library's `Report`, whose `to_dict()` is the CLI's result record.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde_json::Value;
use tribunal::jsonl::{Evaluated, ReadRecord};
use tribunal::on_deep_stack;
use tribunal::{
    Engine, ErrorKind, FedError, LoadError, LoadErrors, LoadOptions, Override, RecordFeed, Request,
    Served,
};

mod convert;
mod result;
mod stream;

use convert::{read_members, read_overrides, read_record, to_python, value_to_python};
use result::PyRecord;
use stream::PyStream;

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
        Ok(PyStream::new(self.engine.clone(), session))
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

/// `PackError` with the message the CLI prints, and each error as a dict.
fn pack_error(py: Python<'_>, errors: &LoadErrors) -> PyErr {
    let err = PackError::new_err(errors.to_string());
    // (Each error as the engine writes it for every front end.)
    let details = || -> PyResult<Bound<'_, PyList>> {
        let list = PyList::empty(py);
        for error in &errors.0 {
            list.append(value_to_python(py, &error.to_json(), 0)?)?;
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
