//! Tribunal's hosts of the implementation sources that are not built in, on
//! the component layer (`tribunal-component`):
//!
//! - [`script`]: Rhai scripts as metrics, postprocessors and strategies:
//!   compiled once per pack load, called with their limits (operations,
//!   time, memory, depth), with the helper functions packs rely on;
//! - [`plugin`]: compiled plugins through their C ABI, loaded only with
//!   consent (pinned by the library's digest), in the engine's process or
//!   isolated in a helper process;
//! - [`wire`]: the one JSON shape both see and return (a context, a
//!   metric's output, a postprocessor's, a similarity), so a script and a
//!   plugin that return the same value get the same result and messages.
//!
//! It knows nothing of packs, pipelines or runtimes: the engine names these
//! modules as its own (`crate::script`, `crate::plugin`).

pub mod plugin;
pub mod script;
pub mod wire;

use tribunal_base::{codes, deadline, files, suggest, text};
use tribunal_component::{alloc, build, component, report, transcript, yaml};
use tribunal_json::json;
#[cfg(test)]
use {tribunal_component::strategy, tribunal_extract as extract, tribunal_semantic as semantic};

// The unit tests run with the counting allocator the binary installs, so the
// script memory limit is tested here too.
#[cfg(test)]
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;
