//! `tribunal.node`, the compiled half of the npm package `tribunal`: the
//! library's public API (`Pack`, streaming sessions) for Node.js, over Node-API
//! (napi-rs). No engine logic lives here, and no JavaScript object is read or
//! made here: a loaded pack is an engine serving it, a record comes in as one
//! line of JSON and is handed to the engine (`Engine::decide`, `run`,
//! `stream`), which reads it as the CLI reads an input line, and a result goes
//! out as the CLI's result record, which `index.js` parses into a plain object (V8's
//! `JSON.parse` makes objects faster than Node-API calls could, one property
//! at a time). `index.js` is the package's API; this module is its engine room.

// The externals are handed to JavaScript, which never prints them with `{:?}`.
#![allow(missing_debug_implementations)]
// Node-API hands JavaScript strings over as owned `String`s (`&str` cannot be an
// argument of an exported function).
#![allow(clippy::needless_pass_by_value)]

use std::collections::HashMap;
use std::io::Cursor;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use napi::bindgen_prelude::{AsyncTask, Either, External};
use napi::{Env, Error, Result, Task};
use napi_derive::napi;
use serde_json::{json, Value};
use tribunal::jsonl;
use tribunal::on_deep_stack;
use tribunal::{
    Batch, Engine, ErrorKind, Fields, LoadError, LoadErrors, LoadOptions, Override, Request,
    Served, ServedPack,
};

// The library's script memory limit counts allocations through this allocator,
// as in the CLI.
#[global_allocator]
static ALLOC: tribunal::CountingAllocator = tribunal::CountingAllocator;

/// A record in an API call has no length limit of its own (a JSONL line's is
/// 4 MiB in `eval`): V8's strings stop at about 512 MiB first.
const NO_RECORD_LIMIT: usize = usize::MAX;

/// The runtime packs loaded with the same `cacheDir` share (its worker threads
/// and its embedding cache); `None`: embeddings kept in memory only.
fn runtime(cache_dir: Option<PathBuf>) -> tribunal::Runtime {
    static RUNTIMES: OnceLock<Mutex<HashMap<Option<PathBuf>, tribunal::Runtime>>> = OnceLock::new();
    let runtimes = RUNTIMES.get_or_init(Mutex::default);
    let mut runtimes = runtimes.lock().unwrap_or_else(PoisonError::into_inner);
    runtimes
        .entry(cache_dir.clone())
        .or_insert_with(|| {
            tribunal::Runtime::builder()
                .embedding_cache(cache_dir)
                .build()
        })
        .clone()
}

/// A compiled rule pack (`Pack` in index.js), held by JavaScript as an
/// external value: an engine serving it alone, on the runtime of the packs
/// loaded with the same cache folder, and the pack as served. Every record
/// is judged through the engine (`Engine::decide`, `run`, `stream`).
/// (Functions over externals, not a `#[napi]` class: a class method call
/// costs Node-API's unwrap and napi-rs's borrow tracking, about 3,400
/// instructions, more than evaluating a short output.)
#[derive(Clone)]
pub struct NativePack {
    engine: Engine,
    served: Arc<Served>,
}

impl NativePack {
    fn new(pack: tribunal::Pack) -> Self {
        let (engine, served) = Engine::with_pack(pack);
        Self { engine, served }
    }

    fn pack(&self) -> &tribunal::Pack {
        self.served.pack()
    }

    /// `request` (of this pack) as an API call makes it: no length limit of
    /// its own, no decision id.
    fn call(request: Request) -> Request {
        request.anonymous().max_record_bytes(NO_RECORD_LIMIT)
    }
}

/// Why `load` failed, as JSON: `{"message", "errors": [{file, line, column,
/// message, help}]}` (index.js throws it as a `PackError`).
fn load_failure(errors: &LoadErrors) -> String {
    errors.to_json().to_string()
}

/// `options` (JSON from index.js: `overrides`, `pluginDirs`, `allowPaths`,
/// `allowPlugins`, `trust`, `cacheDir`, already checked for their types there) as load
/// options and the cache folder; or the load error an override makes.
fn load_options(
    path: &str,
    options: &Value,
) -> std::result::Result<(LoadOptions, Option<PathBuf>), LoadErrors> {
    let paths = |key: &str| -> Vec<PathBuf> {
        options[key]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut trust = Vec::new();
    for file in paths("trust") {
        let key = tribunal::PublicKey::read(&file).map_err(|err| {
            LoadErrors(vec![LoadError {
                file: file.clone(),
                position: None,
                message: format!("trust: {err}"),
                help: None,
            }])
        })?;
        trust.push(key);
    }
    let mut load = LoadOptions {
        plugin_dirs: paths("pluginDirs"),
        allow_paths: paths("allowPaths"),
        allow_plugins: options["allowPlugins"].as_bool().unwrap_or(false),
        trust,
        ..LoadOptions::default()
    };
    if let Some(overrides) = options["overrides"].as_object() {
        for (target, value) in overrides {
            let parsed = Override::new(target, value.clone()).map_err(|err| {
                LoadErrors(vec![LoadError {
                    file: PathBuf::from(path),
                    position: None,
                    message: format!("overrides[{target:?}]: {}", err.reason),
                    help: None,
                }])
            })?;
            load.overrides.push(parsed);
        }
    }
    let cache_dir = options["cacheDir"].as_str().map(PathBuf::from);
    Ok((load, cache_dir))
}

/// Loads the pack at `path`; `options` is JSON. Returns the pack, or the
/// load errors as JSON (see `load_failure`).
#[napi(ts_return_type = "ExternalObject<'NativePack'> | string")]
pub fn load(path: String, options: String) -> Either<External<NativePack>, String> {
    let options: Value = serde_json::from_str(&options).unwrap_or(Value::Null);
    let loaded = load_options(&path, &options)
        .and_then(|(load, cache_dir)| on_deep_stack(|| runtime(cache_dir).load_with(&path, &load)))
        .map(NativePack::new);
    match loaded {
        Ok(pack) => Either::A(External::new(pack)),
        Err(errors) => Either::B(load_failure(&errors)),
    }
}

/// The pack's identity as JSON: `name`, `version`, `label`, `revision`,
/// `bundleRevision`, `description`, `metrics` (in pipeline order) and `warnings`.
#[napi]
pub fn info(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
) -> String {
    let pack = pack.pack();
    json!({
        "name": pack.name(),
        "version": pack.version(),
        "label": pack.label(),
        "revision": pack.revision(),
        "bundleRevision": pack.bundle_revision(),
        "description": pack.description(),
        "metrics": pack.metric_names().collect::<Vec<_>>(),
        "warnings": pack.warnings().iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
    .to_string()
}

/// The OUTPUT FORMAT block of the contract.
#[napi]
pub fn prompt(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
) -> Option<String> {
    pack.pack().prompt()
}

/// The contract's JSON Schema as JSON text (`strict`: OpenAI's subset),
/// `null` without a contract; an error says what `strict` cannot express.
#[napi]
pub fn json_schema(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    strict: bool,
) -> Result<Option<String>> {
    let schema = if strict {
        pack.pack()
            .json_schema_strict()
            .transpose()
            .map_err(|err| Error::from_reason(err.to_string()))?
    } else {
        pack.pack().json_schema()
    };
    Ok(schema.map(|schema| schema.to_string()))
}

/// Evaluates one record (a line of JSON with `id`, `output`, `expected`,
/// `meta`, `messages`) and returns its result record (without `line`).
#[napi(catch_unwind)]
pub fn evaluate(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    record: String,
) -> String {
    on_deep_stack(|| evaluate_one(pack, record))
}

/// Decides the tool calls the last assistant message of the record's
/// `messages` proposes (a line of JSON with `messages`, and `id`, `meta`,
/// `expected` if need be): the decisions as JSON, as `tribunal check
/// --proposed --json` prints them; an error when the line is not a record.
#[napi(catch_unwind)]
pub fn decide(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    record: String,
) -> Result<String> {
    let request = NativePack::call(Request::decide(pack.pack().name(), record.into_bytes()));
    let decision = on_deep_stack(|| pack.engine.decide(request))
        .map_err(|err| Error::from_reason(err.message().to_owned()))?;
    let mut bytes = decision.into_bytes();
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    Ok(String::from_utf8(bytes).expect("decisions are UTF-8"))
}

/// `evaluate` on a thread of libuv's pool.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn evaluate_async(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    record: String,
) -> AsyncTask<EvaluateOne> {
    AsyncTask::new(EvaluateOne {
        pack: NativePack::clone(pack),
        record,
    })
}

/// Evaluates `lines` (JSONL: one record a line) as `tribunal eval` does, on
/// `jobs` threads (0: every core), off the JS thread, and resolves to a JSON
/// array of the result records in input order, with only `fields`
/// (comma-separated, as `--fields`; empty: all).
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn evaluate_many(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    lines: String,
    jobs: u32,
    fields: String,
) -> Result<AsyncTask<EvaluateMany>> {
    let fields = if fields.is_empty() {
        Fields::ALL
    } else {
        Fields::parse(&fields).map_err(|err| Error::from_reason(err.to_string()))?
    };
    Ok(AsyncTask::new(EvaluateMany {
        pack: NativePack::clone(pack),
        lines,
        jobs: jobs as usize,
        fields,
    }))
}

/// The `ERROR` result of a record index.js could not write as JSON (a cycle,
/// a BigInt): `id` is its id as JSON text when it could be written.
#[napi]
pub fn errored(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    id: Option<String>,
    reason: String,
) -> String {
    let id = id
        .and_then(|id| serde_json::from_str::<Value>(&id).ok())
        .unwrap_or(Value::Null);
    pack.pack()
        .errored(tribunal::Json::from(id), ErrorKind::Input, reason)
        .to_json_line()
}

/// A streaming session for one output; `record` is the record's other members
/// as a line of JSON (its `output` is the text pushed).
#[napi(ts_return_type = "ExternalObject<'NativeStream'>")]
pub fn stream(
    #[napi(ts_arg_type = "ExternalObject<'NativePack'>")] pack: &External<NativePack>,
    record: String,
    release: bool,
) -> Result<External<NativeStream>> {
    let (input, note) = jsonl::read_call_record(record.as_bytes())
        .map_err(|err| Error::from_reason(err.message))?;
    let mut session = pack.engine.stream(&pack.served, input).with_note(note);
    if release {
        session = session.with_release();
    }
    Ok(External::new(NativeStream {
        engine: pack.engine.clone(),
        session: Some(session),
    }))
}

/// One record line's result record (without `line`); a line that is not a
/// record gets its `ERROR` result.
fn evaluate_one(pack: &NativePack, record: String) -> String {
    let request = Request::check(pack.pack().name(), record.into_bytes());
    let request = NativePack::call(request).answer_unreadable();
    let decision = pack
        .engine
        .decide(request)
        .expect("an engine answers a check of its own pack, readable or not");
    String::from_utf8(decision.into_bytes()).expect("result records are UTF-8")
}

/// [`evaluate_async`]'s work.
pub struct EvaluateOne {
    pack: NativePack,
    record: String,
}

impl Task for EvaluateOne {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        let record = std::mem::take(&mut self.record);
        Ok(on_deep_stack(|| evaluate_one(&self.pack, record)))
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}

/// [`evaluate_many`]'s work.
pub struct EvaluateMany {
    pack: NativePack,
    lines: String,
    jobs: usize,
    fields: Fields,
}

impl Task for EvaluateMany {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<String> {
        let mut options = jsonl::Options::default();
        options.jobs = self.jobs;
        options.max_record_bytes = NO_RECORD_LIMIT;
        options.result_fields = self.fields;
        let lines = std::mem::take(&mut self.lines);
        // The JSONL written as one JSON array, in place: a result record is one
        // line (JSON text escapes the line ends inside it), so each line end
        // but the last becomes the comma between two records.
        let mut out = Vec::with_capacity(lines.len() * 3 + 2);
        out.push(b'[');
        let pack = &self.pack;
        on_deep_stack(|| {
            pack.engine.run(
                &pack.served,
                Cursor::new(lines),
                &mut jsonl::Plain(&mut out),
                Batch::new(&options, &mut |_| ()),
            )
        })
        .map_err(|err| Error::from_reason(format!("evaluateMany: {err}")))?;
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        for byte in &mut out[1..] {
            if *byte == b'\n' {
                *byte = b',';
            }
        }
        out.push(b']');
        Ok(String::from_utf8(out).expect("result records are UTF-8"))
    }

    fn resolve(&mut self, _env: Env, output: String) -> Result<String> {
        Ok(output)
    }
}

/// A streaming session (`Stream` in index.js), held as an external value.
pub struct NativeStream {
    engine: Engine,
    session: Option<tribunal::Stream<ServedPack>>,
}

fn finished() -> Error {
    Error::from_reason("this stream has finished: start another with pack.stream()")
}

/// Appends `chunk`; returns the events it made certain, as a JSON array.
#[napi(catch_unwind)]
pub fn stream_push(
    #[napi(ts_arg_type = "ExternalObject<'NativeStream'>")] stream: &mut External<NativeStream>,
    chunk: String,
) -> Result<String> {
    let session = stream.session.as_mut().ok_or_else(finished)?;
    let events: Vec<tribunal::Json> = on_deep_stack(|| session.push(&chunk))
        .iter()
        .map(tribunal::StreamEvent::to_json)
        .collect();
    Ok(tribunal::Json::Array(events).to_string())
}

/// Ends the output; returns its result record (`evaluate` of the whole text).
#[napi(catch_unwind)]
pub fn stream_finish(
    #[napi(ts_arg_type = "ExternalObject<'NativeStream'>")] stream: &mut External<NativeStream>,
) -> Result<String> {
    let session = stream.session.take().ok_or_else(finished)?;
    let decision = on_deep_stack(|| stream.engine.finish(session, None, None));
    Ok(String::from_utf8(decision.into_bytes()).expect("result records are UTF-8"))
}

/// The text pushed so far.
#[napi]
pub fn stream_text(
    #[napi(ts_arg_type = "ExternalObject<'NativeStream'>")] stream: &External<NativeStream>,
) -> Result<String> {
    stream
        .session
        .as_ref()
        .map(|s| s.text().to_owned())
        .ok_or_else(finished)
}
