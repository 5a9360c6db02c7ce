//! Tribunal's foundation, under the engine's concepts: the built-in issue
//! codes, the evaluation deadline, text helpers, "did you mean" suggestions
//! and safe file handling. The engine (the `tribunal` crate) names these
//! modules as its own (`crate::text`); the command line uses them directly.
//! Not a stable API of its own: it moves with the engine.

pub mod codes;
pub mod deadline;
pub mod files;
pub mod suggest;
pub mod text;

// The JSON layer's modules under the names the moved code uses
// (`crate::json`).
use tribunal_json::{decimal, json, json_write};
