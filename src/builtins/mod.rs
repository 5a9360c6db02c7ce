//! Built-in rules: one module per rule, one table mapping public names to builders.
//!
//! Each module exposes `pub const BUILTIN: Builtin` with its name, kind, a one-line
//! summary, its documentation (printed by `tribunal explain NAME`) and a `build`
//! function that compiles a config into a ready component once, at pack load.

use std::fmt::Write as _;

use serde_json::Value;

use crate::build::BuildCtx;
use crate::component::{BuildError, Compiled, Kind};

pub mod contract;
pub mod json_compare;
pub mod json_emission;
pub mod json_schema;
pub mod no_placeholders;
pub mod required_fields;

/// A built-in rule's entry in the registry.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    pub name: &'static str,
    pub kind: Kind,
    pub summary: &'static str,
    /// Markdown documentation: what it does, its config keys, an example.
    pub docs: &'static str,
    pub build: fn(&Value, &BuildCtx<'_>) -> Result<Compiled, BuildError>,
}

/// Every built-in, by public name.
pub const BUILTINS: &[Builtin] = &[
    contract::BUILTIN,
    json_compare::BUILTIN,
    json_emission::BUILTIN,
    json_schema::BUILTIN,
    no_placeholders::BUILTIN,
    required_fields::BUILTIN,
];

/// Looks a built-in up by its public name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Public names of all built-ins (for suggestions).
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// `docs/builtins.md`: every built-in's documentation (the same text `tribunal
/// explain NAME` prints), after a table of them all. A test keeps the file equal
/// to this.
pub fn reference() -> String {
    let mut out = String::from(
        "# Built-in rules\n\n\
         <!-- Generated from each rule's documentation beside its code (`src/builtins/`); \
         do not edit. Regenerate with `UPDATE_DOCS=1 cargo test --test docs`. -->\n\n\
         Each is also printed by `tribunal explain NAME`.\n\n\
         | rule | kind | what it does |\n|---|---|---|\n",
    );
    for builtin in BUILTINS {
        let _ = writeln!(
            out,
            "| [`{name}`](#{name}) | {kind} | {summary} |",
            name = builtin.name,
            kind = builtin.kind.as_str(),
            summary = builtin.summary
        );
    }
    for builtin in BUILTINS {
        let _ = write!(out, "\n<a id=\"{}\"></a>\n\n", builtin.name);
        // One level down: each rule's own `# name` becomes a section of this page
        // (headings only: a `#` line inside a code block is code).
        let mut in_code = false;
        for line in builtin.docs.trim().lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            if !in_code && line.starts_with('#') {
                out.push('#');
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A context builder for unit tests of rules.
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::{Arc, OnceLock};

    use serde_json::Value;

    use crate::build::BuildCtx;
    use crate::component::Context;
    use crate::report::{ExtractionInfo, Issue};
    use crate::strategy::StrategyRegistry;

    pub fn strategies() -> &'static Arc<StrategyRegistry> {
        static REGISTRY: OnceLock<Arc<StrategyRegistry>> = OnceLock::new();
        REGISTRY.get_or_init(|| Arc::new(StrategyRegistry::with_builtins()))
    }

    pub fn build_ctx(name: &str) -> BuildCtx<'_> {
        BuildCtx {
            name,
            base_dir: Path::new("."),
            strategies: strategies(),
            contract: None,
            files: files(),
        }
    }

    /// The crate's folder as the "pack" unit tests read files from.
    pub fn files() -> &'static crate::files::PackFiles {
        static FILES: OnceLock<crate::files::PackFiles> = OnceLock::new();
        FILES.get_or_init(|| crate::files::PackFiles::new(Path::new("."), &[]).expect("cwd"))
    }

    /// Owns everything a `Context` borrows.
    pub struct Fixture {
        pub output: String,
        pub json: Value,
        pub expected: Value,
        pub meta: Value,
        pub extraction: ExtractionInfo,
        pub issues: Vec<Issue>,
        pub scores: BTreeMap<String, f64>,
    }

    impl Fixture {
        pub fn new(output: &str, json: Value, expected: Value) -> Self {
            Self {
                output: output.to_owned(),
                json,
                expected,
                meta: Value::Null,
                extraction: ExtractionInfo {
                    tier: None,
                    repairs: Vec::new(),
                    raw_fallback: false,
                },
                issues: Vec::new(),
                scores: BTreeMap::new(),
            }
        }

        pub fn ctx(&self) -> Context<'_> {
            Context {
                output: &self.output,
                json: &self.json,
                extraction: &self.extraction,
                expected: &self.expected,
                meta: &self.meta,
                issues: &self.issues,
                scores: &self.scores,
                strategies: strategies(),
            }
        }
    }
}
