//! Tribunal's component layer: what every implementation source (a built-in,
//! a Rhai script, a plugin) is built from and judged with, and what it
//! reports.
//!
//! - [`build`]: what building a component from its config sees (the pack's
//!   strategies, its contract, the files it may read);
//! - [`component`]: the evaluation [`Context`](component::Context), the
//!   traits of metrics, checks and postprocessors, their errors;
//! - [`report`]: the report a record's evaluation fills (scores, issues,
//!   details) and its result record;
//! - [`contract`]: the output contract (kinds, fields, tools) and its
//!   checks; [`transcript`]: conversations in their three formats;
//! - [`strategy`]: how two values compare; [`yaml`]: the bounded YAML
//!   reader packs are read with; [`strict_config`]: configs that name no
//!   unknown key; [`alloc`]: the counting allocator.
//!
//! It knows nothing of packs, pipelines or runtimes: the hosts
//! (`tribunal-host`) and the engine (`tribunal`) stand on it, and the engine
//! names these modules as its own.

pub mod alloc;
pub mod build;
pub mod component;
pub mod contract;
pub mod report;
pub mod strategy;
pub mod strict_config;
pub mod transcript;
pub mod yaml;

use tribunal_base::{codes, deadline, files, suggest, text};
use tribunal_extract as extract;
use tribunal_json::{decimal, json, json_read, json_write};
use tribunal_semantic as semantic;

// The unit tests run with the counting allocator the binary installs, as the
// engine's do.
#[cfg(test)]
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;
