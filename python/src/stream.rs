//! `tribunal_engine.Stream`: a streaming session over one output.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::convert::value_to_python;
use crate::result::PyRecord;
use tribunal::{on_deep_stack, Engine, ServedPack};

/// A streaming session (`Pack.stream()`): push the chunks of an output as
/// they arrive, then finish. Also a context manager: leaving the `with` block
/// finishes it, and `result` holds the `Result`.
#[pyclass(module = "tribunal_engine", name = "Stream")]
pub(crate) struct PyStream {
    engine: Engine,
    session: Option<tribunal::Stream<ServedPack>>,
    result: Option<Py<PyRecord>>,
}

impl PyStream {
    /// `session`, finished by `engine`.
    pub(crate) fn new(engine: Engine, session: tribunal::Stream<ServedPack>) -> Self {
        Self {
            engine,
            session: Some(session),
            result: None,
        }
    }
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
            list.append(value_to_python(py, &event.to_json(), 0)?)?;
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

pub(crate) fn finished() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(
        "the stream is finished: start another with Pack.stream()",
    )
}
