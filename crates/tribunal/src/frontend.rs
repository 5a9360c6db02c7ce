//! What the `tribunal` command line uses of the engine beyond its public API:
//! the pack test runner, manifests' schemas, the built-ins' docs, the plugin
//! helper. (File handling, text helpers and suggestions are the foundation
//! crate's, `tribunal-base`.) Hidden and without stability promises: a
//! program embedding Tribunal uses the crate's documented API.

/// The summary's counting.
pub mod summary {
    pub use crate::summary::count_one;
}

/// Finding packs.
pub mod pack {
    pub use crate::pack::{no_pack_message, packs_in};
}

/// A pack's own test cases (`tribunal test`).
pub mod pack_tests {
    pub use crate::pack_tests::{run, CaseOutcome, Outcome};
}

/// Manifests and their JSON Schemas (`tribunal schema`, `explain`).
pub mod manifest {
    pub use crate::manifest::{schema, Implementation, SCHEMA_NAMES};
}

/// The built-in components (`tribunal explain`).
pub mod builtins {
    pub use crate::builtins::{find, names, Builtin};
    /// The built-in strategies' documentation (`explain fuzzy`).
    pub use crate::strategy::DOCS as STRATEGY_DOCS;
}

/// Argument rules from the tools files of model APIs (`tribunal new tools`).
pub mod tools {
    pub use crate::contract::{tools_from_file, ToolRules, ToolsFileError};
}

/// The plugin helper process (`tribunal __plugin-host`).
pub mod plugin {
    pub use crate::plugin::serve_helper;
}
