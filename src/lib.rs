//! Tribunal: a rules engine that validates and scores what language models emit.
//!
//! Load a rule pack once, then evaluate any number of outputs with it, from any
//! number of threads:
//!
//! ```
//! use tribunal::{Input, Pack, Status};
//!
//! let pack = Pack::load("rules/ksi-emission").expect("the shipped pack loads");
//! let report = pack.evaluate(&Input::new(r#"{"event": "agent:status", "data": {"ok": true}}"#));
//! assert_eq!(report.status, Status::Pass);
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
pub mod alloc;
pub mod build;
pub mod builtins;
pub mod component;
pub mod contract;
pub mod deadline;
pub mod error;
pub mod extract;
pub mod files;
pub mod loader;
pub mod manifest;
pub mod pack;
pub mod parallel;
pub mod pipeline;
pub mod plugin;
pub mod report;
pub mod result_file;
pub mod script;
pub mod semantic;
pub(crate) mod source;
pub mod strategy;
pub mod strict_config;
pub mod suggest;
pub mod text;
pub mod wire;
pub mod yaml_scan;

pub use component::{Context, EvalError, Kind};
pub use error::Error;
pub use loader::{LoadError, LoadErrors};
pub use pack::{LoadOptions, Override, Pack};
pub use pipeline::Input;
pub use report::{Issue, Report, Severity, Status};
pub mod cli;
pub mod eval;
pub mod summary;
pub mod testing;

// The unit tests run with the counting allocator the binary installs, so the
// script memory limit is tested here too.
#[cfg(test)]
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;
