//! What Tribunal's own front ends (the `tribunal` command line, the Python
//! binding) use of the engine beyond its public API: file handling, text
//! helpers, the pack test runner. Hidden and without stability promises: a
//! program embedding Tribunal uses the crate's documented API.

/// Reading and writing files safely (own files, bounded reads, streams).
pub mod files {
    pub use crate::files::{
        create_temporary, create_temporary_dir, move_into, not_regular, open_own_file, open_stream,
        read_regular_text, BoundedLine, BoundedLines, OwnFileError, MAX_RESULT_LINE_BYTES,
        MAX_VALUE_FILE_BYTES,
    };
}

/// Text for terminals and pages.
pub mod text {
    pub use crate::text::{clip_chars, one_line, prefix_chars, printable, Utf8Chunks};
}

/// "Did you mean" suggestions.
pub mod suggest {
    pub use crate::suggest::{did_you_mean, nearest};
}

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
    pub use crate::contract::{tools_from_file, ToolRules};
}

/// The plugin helper process (`tribunal __plugin-host`).
pub mod plugin {
    pub use crate::plugin::serve_helper;
}

/// Interrupting the evaluations in progress (`eval` on a signal).
pub mod deadline {
    pub use crate::deadline::interrupt;
}
