//! Tribunal: a rules engine that validates and scores what language models emit.
pub mod builtins;
pub mod component;
pub mod contract;
pub mod extract;
pub mod loader;
pub mod manifest;
pub mod pack;
pub mod parallel;
pub mod pipeline;
pub mod report;
pub mod strategy;
pub mod suggest;
pub mod text;

pub use component::{Context, EvalError, Kind};
pub use loader::{LoadError, LoadErrors};
pub use pack::{LoadOptions, Override, Pack};
pub use pipeline::Input;
pub use report::{Issue, Report, Severity, Status};
pub mod cli;
pub mod eval;
pub mod summary;
pub mod testing;
