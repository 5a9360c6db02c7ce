//! The pack's `limits:`: what one script call may use, their defaults, and the
//! rule that a pack may only tighten them.

use serde::Deserialize;
use serde_json::Value;

/// The pack's `limits:` section: what one script call may use. Every limit is
/// per call (one record, one component), so a runaway script costs one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScriptLimits {
    /// Rhai operations (roughly: expressions evaluated) per call (0: unlimited).
    pub max_operations: u64,
    /// Nested script function calls (recursion depth).
    pub max_call_depth: usize,
    /// Nesting of expressions at the top level (checked when compiling).
    pub max_expr_depth: usize,
    /// Nesting of expressions inside functions (checked when compiling).
    pub max_function_expr_depth: usize,
    /// Bytes of any one string a script builds.
    pub max_string_size: usize,
    /// Elements of any one array a script builds.
    pub max_array_size: usize,
    /// Entries of any one object map a script builds.
    pub max_map_size: usize,
    /// Wall-clock time per call, in milliseconds (0: no deadline).
    pub timeout_ms: u64,
    /// Net bytes one call may allocate, all its values together (0: unlimited).
    /// Enforced where `tribunal::alloc::Counting` is the global allocator (the
    /// `tribunal` binary installs it).
    pub max_memory: usize,
    /// How long an `isolation: process` plugin's helper may take to start and
    /// instantiate its component, or to answer one call, in milliseconds (0: no
    /// limit). A component's own `timeout_ms` may only be lower.
    pub plugin_timeout_ms: u64,
}

impl Default for ScriptLimits {
    fn default() -> Self {
        Self {
            // A scoring script over one record does a few thousand operations; a
            // million (tens of milliseconds) is generous and still stops `loop {}` fast.
            max_operations: 1_000_000,
            // Recursion deeper than this is a bug in a scoring script; kept low
            // enough that the native stack of a 2 MiB worker thread suffices even
            // in debug builds.
            max_call_depth: 32,
            max_expr_depth: 64,
            max_function_expr_depth: 32,
            // LLM outputs are kilobytes; 16 MiB leaves room for any real output
            // while a script doubling a string stops long before memory runs out.
            max_string_size: 16 << 20,
            max_array_size: 100_000,
            max_map_size: 100_000,
            timeout_ms: 1_000,
            // The size limits bound one value; this bounds them all together. Four
            // times the largest string leaves room for copies of a big output.
            max_memory: 64 << 20,
            // A plugin call that takes half a minute is stuck; a model that takes
            // longer to load is the user's to allow.
            plugin_timeout_ms: 30_000,
        }
    }
}

impl ScriptLimits {
    /// The largest `max_call_depth` accepted. Each nested script call takes tens
    /// of KiB of native stack (more in debug builds) and `compare()` may nest
    /// calls 8 deep; deeper would overflow even a worker's 256 MiB stack, which
    /// aborts the process instead of failing the record.
    pub const MAX_CALL_DEPTH: usize = 256;

    /// Why a value is not accepted for `key`, if it is not.
    pub fn check(&self) -> Result<(), LimitError> {
        if self.max_call_depth > Self::MAX_CALL_DEPTH {
            return Err(LimitError::new(
                "max_call_depth",
                format!(
                    "limits.max_call_depth must be at most {}, got {}",
                    Self::MAX_CALL_DEPTH,
                    self.max_call_depth
                ),
            ));
        }
        Ok(())
    }

    /// The keys of `limits:`.
    pub const KEYS: [&'static str; 10] = [
        "max_operations",
        "max_call_depth",
        "max_expr_depth",
        "max_function_expr_depth",
        "max_string_size",
        "max_array_size",
        "max_map_size",
        "timeout_ms",
        "max_memory",
        "plugin_timeout_ms",
    ];

    /// Each limit by name, as a number.
    pub fn values(&self) -> [(&'static str, u64); 10] {
        let n = |v: usize| v as u64;
        [
            ("max_operations", self.max_operations),
            ("max_call_depth", n(self.max_call_depth)),
            ("max_expr_depth", n(self.max_expr_depth)),
            ("max_function_expr_depth", n(self.max_function_expr_depth)),
            ("max_string_size", n(self.max_string_size)),
            ("max_array_size", n(self.max_array_size)),
            ("max_map_size", n(self.max_map_size)),
            ("timeout_ms", self.timeout_ms),
            ("max_memory", n(self.max_memory)),
            ("plugin_timeout_ms", self.plugin_timeout_ms),
        ]
    }

    /// The first limit of a pack's `self` that lifts the host's ceiling, the
    /// default (0 means unlimited, except for `max_call_depth`): a pack may
    /// tighten limits, never loosen them. Keys in `host_set` are the run's own
    /// (`--set limits.*`) and not checked.
    pub fn within_defaults(&self, host_set: &[&str]) -> Result<(), LimitError> {
        let ceilings = Self::default();
        for ((key, value), (_, ceiling)) in self.values().into_iter().zip(ceilings.values()) {
            if host_set.contains(&key) {
                continue;
            }
            let unlimited = |v: u64| v == 0 && key != "max_call_depth";
            let lifts = if unlimited(ceiling) {
                false
            } else {
                unlimited(value) || value > ceiling
            };
            if lifts {
                let shown = if unlimited(value) {
                    "0 (unlimited)".to_owned()
                } else {
                    value.to_string()
                };
                return Err(LimitError::new(
                    key,
                    format!(
                        "limits.{key}: {shown} is above the ceiling of {ceiling}; a pack may only \
                         tighten its limits (the user lifts one for a run with --set limits.{key}={value})"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Sets one limit by name (for `--set limits.timeout_ms=5000`).
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), LimitError> {
        let Some(n) = value.as_u64() else {
            return Err(LimitError::new(
                key,
                format!("limits.{key} must be a whole number ≥ 0, got {value}"),
            ));
        };
        let size = usize::try_from(n)
            .map_err(|_| LimitError::new(key, format!("limits.{key}: {n} is too large")))?;
        match key {
            "max_operations" => self.max_operations = n,
            "max_call_depth" => self.max_call_depth = size,
            "max_expr_depth" => self.max_expr_depth = size,
            "max_function_expr_depth" => self.max_function_expr_depth = size,
            "max_string_size" => self.max_string_size = size,
            "max_array_size" => self.max_array_size = size,
            "max_map_size" => self.max_map_size = size,
            "timeout_ms" => self.timeout_ms = n,
            "max_memory" => self.max_memory = size,
            "plugin_timeout_ms" => self.plugin_timeout_ms = n,
            _ => return Err(LimitError::new(key, format!("unknown limit `{key}`"))),
        }
        self.check()
    }
}

/// A limit that is not accepted: which one, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LimitError {
    /// The limit's key under `limits:`.
    pub key: String,
    pub message: String,
}

impl LimitError {
    fn new(key: &str, message: String) -> Self {
        Self {
            key: key.to_owned(),
            message,
        }
    }
}
