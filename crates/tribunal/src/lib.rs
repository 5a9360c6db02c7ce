//! Tribunal: a rules engine that validates and scores what language models emit.
//!
//! Load a rule pack once, then evaluate any number of outputs with it, from any
//! number of threads:
//!
//! ```
//! # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
//! use tribunal::{Input, Pack, Status};
//!
//! let pack = Pack::load("rules/ksi-emission").expect("the shipped pack loads");
//! let report = pack.evaluate(&Input::new(r#"{"event": "agent:status", "data": {"ok": true}}"#));
//! assert_eq!(report.status(), Status::Pass);
//! assert_eq!(report.score, Some(1.0));
//!
//! // Batches run in parallel (0 = all cores) and come back in input order.
//! let inputs = ["I would emit an event.", r#"{"event": "x:y", "data": {}}"#].map(Input::new);
//! let mut scores = Vec::new();
//! pack.evaluate_batch(inputs, 0, |report| scores.push(report.score));
//! assert_eq!(scores, [Some(0.0), Some(0.7)]);
//! ```
//!
//! See `examples/evaluate.rs` for a retry loop using the re-ask `feedback`.
#![warn(missing_docs)]

// Every module is internal: the public API is the re-exports below and `jsonl`
// (`fuzzing` is hidden, for the fuzz targets). `docs/architecture.md` maps the modules.
mod builtins;
mod bundle;
mod decision;
mod engine;
mod error;
mod manifest;
mod overrides;
mod pack;
mod pack_tests;
mod parallel;
mod pipeline;
mod runtime;
mod source;
mod summary;

// The JSON layer is a crate of its own (crates/tribunal-json): its modules
// are named here as the engine's own (`crate::json::Json`).
use tribunal_json::{decimal, json, json_read, json_write};
// The foundation is a crate of its own too (crates/tribunal-base).
use tribunal_base::{codes, deadline, files, suggest, text};
// And the extraction ladder (crates/tribunal-extract).
use tribunal_component::{
    alloc, build, component, contract, report, strategy, strict_config, transcript, yaml,
};
use tribunal_extract as extract;
#[cfg(feature = "fuzzing")]
use tribunal_host::wire;
use tribunal_host::{plugin, script};
// And the sentence embeddings (crates/tribunal-semantic).
use tribunal_semantic as semantic;

// The fuzz targets' bodies, for `fuzz/` and the tests that replay their
// corpora: not in a build that does not ask for them.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod jsonl;
mod stream;

pub use alloc::Counting as CountingAllocator;
pub use builtins::{builtin_docs, builtin_names};
pub use bundle::{
    Bundle, BundleError, BundledFile, BundledPack, Manifest as BundleManifest, PublicKey, SecretKey,
};
pub use component::{Judging, ToolDefinition};
pub use contract::{tools_from_file, ToolRules, ToolsFileError};
pub use deadline::Interrupt;
pub use decision::{CallDecision, Decisions, Verdict};
pub use engine::{
    Ask, Batch, Decision, Engine, EngineBuilder, EngineError, FedError, Judged, PackEvent,
    PackEventKind, RecordFeed, ReloadFailure, Request, RequestError, RequestErrorKind, Served,
    ServedPack,
};
pub use error::Error;
pub use extract::{MultipleValues, Repair, Tier};
pub use json::{Json, NotANumber, Number, Object, Str};
pub use manifest::{schema as manifest_schema, SCHEMA_NAMES as MANIFEST_SCHEMAS};
pub use pack::{LoadOptions, Override, OverrideError, Pack};
pub use pack_tests::{CaseOutcome as PackTestCase, Outcome as PackTestOutcome};
pub use parallel::{on_deep_stack, STACK_SIZE};
pub use pipeline::{Input, MissingOutput};
/// The plugin helper process's entry point (`tribunal __plugin-host LIBRARY`):
/// serves the plugin library's calls on stdin and stdout, returns the exit code.
#[doc(hidden)]
pub use plugin::serve_helper as serve_plugin_helper;
pub use plugin::PluginPins;
pub use report::{
    Details, ErrorKind, ExtractionInfo, Field, Fields, FieldsError, Issue, MetricResult, Report,
    SchemaRepair, Severity, Status, TurnResult,
};
pub use runtime::{Runtime, RuntimeBuilder};
pub use semantic::{
    default_cache_root as default_embedding_cache_dir, CacheReport as EmbeddingCacheReport,
};
pub use stream::{Stream, StreamEvent, Violation};
pub use transcript::{Role, ToolCall, Transcript, Turn};
pub use yaml::{LoadError, LoadErrors};

// The unit tests run with the counting allocator the binary installs, so the
// script memory limit is tested here too.
#[cfg(test)]
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;
