//! Python objects and JSON values: a record's members read from Python
//! objects as the CLI reads an input line (`Input::from_members`), and values
//! handed back to Python.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde_json::Value;
use tribunal::jsonl::{LineError, ReadRecord};
use tribunal::{Input, Issue, Severity};
use tribunal::{Json, Number, Object};

/// Arrays and objects nested in a record's member, read from Python objects:
/// what the CLI reads in an input line (`serde_json` stops at the 128th level of
/// arrays and objects, the record's own object included).
pub(crate) const MAX_DEPTH: usize = 126;
/// Nesting converted object by object; deeper values go through `json`, whose
/// own recursion check raises `RecursionError` rather than overflowing the stack.
pub(crate) const MAX_DIRECT_DEPTH: usize = 256;

/// `overrides` as (`component.key`, value) pairs, in the dict's order.
pub(crate) fn read_overrides(
    overrides: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<(String, Value)>> {
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
pub(crate) const MEMBERS: [&str; 5] = ["id", "output", "expected", "meta", "messages"];

/// [`MEMBERS`] as Python strings made once (looking a member up by a `&str`
/// would make and hash a new string for each record).
pub(crate) fn member_names(py: Python<'_>) -> [&Bound<'_, PyString>; 5] {
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
pub(crate) fn read_record(record: &Bound<'_, PyAny>, number: u64) -> ReadRecord {
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
pub(crate) fn read_members(members: [Option<&Bound<'_, PyAny>>; 5]) -> ReadRecord {
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
pub(crate) struct NotJson {
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
pub(crate) struct Convert {
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
pub(crate) fn within_depth(depth: usize) -> Result<(), NotJson> {
    if depth >= MAX_DEPTH {
        return Err(NotJson::new(format!(
            "nested more than {MAX_DEPTH} levels deep (or it contains itself), deeper than an input line may be"
        )));
    }
    Ok(())
}

/// A Python int as a JSON number, whatever its size.
pub(crate) fn int_value(int: &Bound<'_, PyInt>) -> Result<Json, NotJson> {
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
pub(crate) fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    value_to_python(py, &Json::from(value), 0)
}

pub(crate) fn value_to_python(py: Python<'_>, value: &Json, depth: usize) -> PyResult<Py<PyAny>> {
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

pub(crate) fn json_loads(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("json")?
        .getattr("loads")?
        .call1((text,))?
        .unbind())
}

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "this value".to_owned(), |name| format!("`{name}`"))
}
