//! The Rhai host: custom metrics, postprocessors and strategies written as scripts.
//!
//! One hardened `rhai::Engine` per pack (built from the pack's `limits:`), every
//! script compiled once to an `AST` at load and shared by all threads, a fresh
//! `Scope` per call. Scripts see the same context shape as plugins
//! (`Context::to_value`), as native Rhai values; what they return goes through
//! `crate::wire`, so scripts and plugins are validated alike.
//!
//! The sandbox: no module resolver (and `import` is not even a keyword), no
//! `eval`, strict variables, `print`/`debug` go to stderr (stdout carries
//! results), limits on operations, call depth, expression depth, string / array /
//! map sizes, and a wall-clock deadline per call checked from `on_progress`.
//! Nothing here reads files at evaluation time: script files are read at load.

mod convert;
mod helpers;
pub mod strings;

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rhai::{CallFnOptions, Dynamic, Engine, EvalAltResult, FuncArgs, Position, Scope, AST};
use serde::Deserialize;
use serde_json::Value;

use crate::build::BuildCtx;
use crate::component::{
    Compiled, Context, EvalError, Kind, Metric, MetricOutput, PostOutput, Postprocessor, Strategy,
};
use crate::yaml::LoadError;

/// The pack's `limits:` section: what one script call may use. Every limit is
/// per call (one record, one component), so a runaway script costs one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
    pub const KEYS: [&'static str; 9] = [
        "max_operations",
        "max_call_depth",
        "max_expr_depth",
        "max_function_expr_depth",
        "max_string_size",
        "max_array_size",
        "max_map_size",
        "timeout_ms",
        "max_memory",
    ];

    /// Each limit by name, as a number.
    pub fn values(&self) -> [(&'static str, u64); 9] {
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

/// One engine for a pack, built by the one hardening function below.
pub struct ScriptHost {
    engine: Engine,
    limits: ScriptLimits,
}

impl fmt::Debug for ScriptHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptHost")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The token `on_progress` terminates a call with when its deadline has passed.
const TIMEOUT_TOKEN: &str = "tribunal:timeout";
/// The token `on_progress` terminates a call with past `max_memory`.
const MEMORY_TOKEN: &str = "tribunal:memory";
/// The token `on_progress` terminates a call with past `max_operations`.
const OPERATIONS_TOKEN: &str = "tribunal:operations";
/// How many operations pass between two clock reads.
const CLOCK_EVERY_OPS: u64 = 256;
/// How deeply `compare()` may call a script strategy that calls `compare()`...
const MAX_NESTED_CALLS: usize = 8;

impl ScriptHost {
    /// The hardened engine: raw engine plus the standard package, no module
    /// resolver, `import` and `eval` disabled, strict variables, every limit,
    /// a wall-clock deadline and the helper library.
    pub fn new(limits: ScriptLimits) -> Self {
        // Quadratic text work below this layer stops at a script call's deadline.
        crate::deadline::install(past_deadline);
        let mut engine = Engine::new_raw();
        engine.register_global_module(rhai::packages::Package::as_shared_module(
            &rhai::packages::StandardPackage::new(),
        ));
        engine.disable_symbol("import");
        engine.disable_symbol("export");
        engine.disable_symbol("eval");
        engine.set_strict_variables(true);
        // Operations are counted by `on_progress` below, not by Rhai: a limit
        // once hit must stay hit (see `progress`).
        engine.set_max_operations(0);
        engine.set_max_call_levels(limits.max_call_depth);
        engine.set_max_expr_depths(limits.max_expr_depth, limits.max_function_expr_depth);
        engine.set_max_string_size(limits.max_string_size);
        engine.set_max_array_size(limits.max_array_size);
        engine.set_max_map_size(limits.max_map_size);
        let max_operations = limits.max_operations;
        engine.on_progress(move |ops| progress(ops, max_operations).map(Dynamic::from));
        // stdout carries result records: script output goes to stderr, named,
        // with control characters escaped and at most MAX_PRINTED_BYTES per call.
        engine.on_print(|text| print_capped(&format!("[script {}] ", current_script()), text));
        engine.on_debug(|text, _, pos| {
            print_capped(&format!("[script {} {pos}] ", current_script()), text);
        });
        helpers::register(&mut engine, &limits);
        Self { engine, limits }
    }
}

/// Where a script's text lives, to turn Rhai's positions into `file:line:col`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// Lines before the script's first line in `file` (0 for a `.rhai` file).
    pub line_offset: usize,
    /// Columns before the script's text on each line (the indentation of an
    /// `inline: |` block).
    pub column_offset: usize,
}

impl Origin {
    pub fn file(path: &Path) -> Self {
        Self {
            file: path.to_path_buf(),
            line_offset: 0,
            column_offset: 0,
        }
    }

    /// `(line, column)` in the file for a position in the script (1, 1 if none).
    pub fn locate(&self, pos: Position) -> (usize, usize) {
        let line = pos.line().unwrap_or(1);
        let column = pos.position().unwrap_or(1).max(1);
        (line + self.line_offset, column + self.column_offset)
    }

    fn describe(&self, pos: Position) -> String {
        let (line, column) = self.locate(pos);
        format!("{}:{line}:{column}", self.file.display())
    }
}

/// Where an `inline:` script sits in its manifest: a block scalar (`inline: |`)
/// starts on the next line, indented; a plain or quoted scalar starts after the key.
pub fn inline_origin(source: &crate::yaml::Source) -> Origin {
    let (line, _) = source.locate(&["implementation"], None);
    let lines: Vec<&str> = source.yaml.lines().collect();
    // The `inline:` key on or after the `implementation` line (0-based index in the YAML).
    let first = line.saturating_sub(source.line_offset + 1);
    let found = lines.iter().enumerate().skip(first).find_map(|(i, l)| {
        if l.trim_start().starts_with('#') {
            return None; // a comment (`# inline: ...` kept for reference)
        }
        l.find("inline:")
            .filter(|at| {
                l[..*at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric() && c != '_')
            })
            .map(|at| (i, at + "inline:".len()))
    });
    let Some((index, after_key)) = found else {
        return Origin {
            file: source.path.clone(),
            line_offset: line.saturating_sub(1),
            column_offset: 0,
        };
    };
    let key_line = lines[index];
    let value = key_line[after_key..].trim_start();
    let file_line = index + 1 + source.line_offset; // 1-based line of the key in the file
    if value.starts_with('|') || value.starts_with('>') {
        // An indentation indicator (`|2`) sets the block's indentation, relative
        // to the key's; otherwise the first non-empty line does.
        let indicator = value[1..]
            .chars()
            .take(2)
            .find_map(|c| c.to_digit(10).filter(|d| *d > 0));
        let key_indent = key_line.len() - key_line.trim_start().len();
        let indent = indicator.map_or_else(
            || {
                lines
                    .iter()
                    .skip(index + 1)
                    .find(|l| !l.trim().is_empty())
                    .map_or(0, |l| l.len() - l.trim_start().len())
            },
            |d| key_indent + d as usize,
        );
        Origin {
            file: source.path.clone(),
            line_offset: file_line,
            column_offset: indent,
        }
    } else {
        let quote = usize::from(value.starts_with(['"', '\'']));
        let start = key_line.len() - value.len() + quote;
        Origin {
            file: source.path.clone(),
            line_offset: file_line - 1,
            column_offset: key_line[..start].chars().count(),
        }
    }
}

/// A compiled script: its AST, shared by every use and every thread.
#[derive(Debug)]
pub struct CompiledScript {
    host: Arc<ScriptHost>,
    ast: AST,
    origin: Origin,
    kind: Kind,
    /// The script's leading comment block (its documentation).
    header: String,
    /// Where the entry point is defined (for errors Rhai gives no position for).
    entry_at: Position,
    /// The script calls the `compare()` helper, which needs the record's context
    /// outside the call; other scripts skip building it.
    uses_compare: bool,
}

impl CompiledScript {
    /// The `//` comment lines at the top of the script, as its documentation for
    /// `tribunal explain` (when the manifest has no Markdown body).
    pub fn header_comment(&self) -> Option<String> {
        let text = self.header.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }
}

/// The leading `//` comment block of a script, without the slashes.
fn leading_comment(text: &str) -> String {
    text.lines()
        .map(str::trim_start)
        .take_while(|l| l.starts_with("//"))
        .map(|l| {
            let l = l.trim_start_matches('/');
            l.strip_prefix(' ').unwrap_or(l)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The entry point a component kind must define, and its parameters.
fn entry_point(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Metric | Kind::Postprocessor => ("evaluate", "ctx"),
        Kind::Strategy => ("compare", "expected, actual, ctx"),
    }
}

/// Compiles `text` for a component of `kind` named `name`; a syntax error or a
/// missing entry point is a load error at the script's file, line and column.
pub fn compile(
    host: &Arc<ScriptHost>,
    name: &str,
    kind: Kind,
    text: &str,
    origin: Origin,
) -> Result<Arc<CompiledScript>, LoadError> {
    let mut ast = host.engine.compile(text).map_err(|err| {
        let at = origin.locate(err.1);
        LoadError::new(
            &origin.file,
            at,
            format!("script `{name}`: {}", strip_position(&err.0.to_string())),
        )
    })?;
    ast.set_source(name);
    let (entry, params) = entry_point(kind);
    let arity = params.split(", ").count();
    let defined: Vec<usize> = ast
        .iter_functions()
        .filter(|f| f.name == entry)
        .map(|f| f.params.len())
        .collect();
    if !defined.contains(&arity) {
        let found = if defined.is_empty() {
            format!("it defines no `{entry}` function")
        } else {
            format!(
                "its `{entry}` takes {} parameter(s)",
                defined
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        };
        return Err(LoadError::new(
            &origin.file,
            origin.locate(Position::NONE),
            format!(
                "script `{name}`: a {kind} script must define `fn {entry}({params})`, but {found}"
            ),
        ));
    }
    // A function pointer built from a string (`Fn(name)`) may name the helper
    // in a way no scan sees: such scripts get the context too.
    let uses_compare = calls_compare(text) || text.contains("Fn(");
    Ok(Arc::new(CompiledScript {
        host: Arc::clone(host),
        ast,
        origin,
        kind,
        header: leading_comment(text),
        entry_at: definition_position(text, entry),
        uses_compare,
    }))
}

/// The position of `fn NAME` in the text (line 1, column 1 if not found).
fn definition_position(text: &str, name: &str) -> Position {
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut from = 0;
        while let Some(at) = line[from..].find("fn ") {
            let start = from + at;
            let rest = line[start + 3..].trim_start();
            let word_before = line[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !word_before
                && rest.starts_with(name)
                && rest[name.len()..].trim_start().starts_with('(')
            {
                return Position::new(
                    u16::try_from(index + 1).unwrap_or(u16::MAX),
                    u16::try_from(line[..start].chars().count() + 1).unwrap_or(u16::MAX),
                );
            }
            from = start + 3;
        }
    }
    Position::new(1, 1)
}

/// Whether the text names the `compare` / `compare_with` helper anywhere but in
/// `fn compare(` (a cheap, conservative scan that also catches `Fn("compare")`;
/// a false positive, e.g. in a comment, only costs a context copy per call).
fn calls_compare(text: &str) -> bool {
    let mut from = 0;
    while let Some(at) = text[from..].find("compare") {
        let start = from + at;
        let end = start + "compare".len();
        from = end;
        let before = text[..start].trim_end();
        let word_before = text[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let rest = text[end..].strip_prefix("_with").unwrap_or(&text[end..]);
        let word_after = rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !word_before && !word_after && !before.ends_with("fn") {
            return true;
        }
    }
    false
}

/// A script used as a component: the compiled script plus this use's config.
pub struct ScriptComponent {
    script: Arc<CompiledScript>,
    /// "script \`name\`", the prefix of every message about this component.
    who: String,
    /// The component's name in the pack: the rule of the issues it raises.
    name: String,
    /// The merged config, converted once.
    config: Dynamic,
}

impl fmt::Debug for ScriptComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptComponent")
            .field("who", &self.who)
            .field("origin", &self.script.origin)
            .finish_non_exhaustive()
    }
}

/// Builds the component for one use of a compiled script.
pub fn build(
    script: &Arc<CompiledScript>,
    kind: Kind,
    config: &Value,
    ctx: &BuildCtx<'_>,
) -> Compiled {
    let config = if config.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        config.clone()
    };
    let component = Arc::new(ScriptComponent {
        script: Arc::clone(script),
        who: format!("script `{}`", ctx.name),
        name: ctx.name.to_owned(),
        config: convert::to_dynamic(&config),
    });
    match kind {
        Kind::Metric => Compiled::Metric(component),
        Kind::Postprocessor => Compiled::Postprocessor(component),
        Kind::Strategy => Compiled::Strategy(component),
    }
}

impl ScriptComponent {
    fn context(&self, ctx: &Context<'_>) -> Dynamic {
        convert::context(ctx, self.config.clone())
    }

    /// Runs `entry` with `args` under the limits; the result as JSON.
    fn call(
        &self,
        entry: &str,
        args: impl FuncArgs,
        ctx: &Context<'_>,
    ) -> Result<Value, EvalError> {
        let script = &self.script;
        let context = script.uses_compare.then_some(ctx);
        let _frame = CallFrame::enter(&self.who, &script.host.limits, context)
            .map_err(|reason| EvalError::new(format!("{}: {reason}", self.who)))?;
        let mut scope = Scope::new();
        // Top-level statements are not run per call: only the entry point is.
        let options = CallFnOptions::new().eval_ast(false).rewind_scope(false);
        let result = script.host.engine.call_fn_with_options::<Dynamic>(
            options,
            &mut scope,
            &script.ast,
            entry,
            args,
        );
        // A limit hit inside a callback whose errors Rhai ignores (the comparer
        // of `sort` or `dedup`) let the call go on and return: still an error.
        if let Some(token) = tripped() {
            let err = EvalAltResult::ErrorTerminated(Dynamic::from(token), Position::NONE);
            return Err(self.runtime_error(&err));
        }
        match result {
            // A non-finite number at the top level: JSON cannot hold it, and the
            // conversion words that for a score; a postprocessor returns no score.
            Ok(value) if script.kind == Kind::Postprocessor && value.is_float() => {
                match convert::to_value(&value) {
                    Ok(value) => Ok(value),
                    Err(_) => Err(EvalError::new(format!(
                        "{}: a postprocessor must return an array of issues or an object {{ issues, json }}, got {value}",
                        self.who
                    ))),
                }
            }
            Ok(value) => convert::to_value(&value)
                .map_err(|reason| EvalError::new(format!("{}: {reason}", self.who))),
            Err(err) => Err(self.runtime_error(&err)),
        }
    }

    /// `script `name` (file:line:col): reason`, from the innermost error.
    fn runtime_error(&self, err: &EvalAltResult) -> EvalError {
        let mut err = err;
        let mut pos = err.position();
        while let EvalAltResult::ErrorInFunctionCall(_, _, inner, at) = err {
            if !at.is_none() {
                pos = *at;
            }
            err = inner;
        }
        if !err.position().is_none() {
            pos = err.position();
        }
        let limits = &self.script.host.limits;
        let reason = match err {
            EvalAltResult::ErrorTooManyOperations(_) => format!(
                "exceeded the {} operation limit (limits.max_operations)",
                thousands(limits.max_operations)
            ),
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(OPERATIONS_TOKEN) =>
            {
                format!(
                    "exceeded the {} operation limit (limits.max_operations)",
                    thousands(limits.max_operations)
                )
            }
            EvalAltResult::ErrorStackOverflow(_) => format!(
                "exceeded the call depth limit of {} (limits.max_call_depth)",
                limits.max_call_depth
            ),
            EvalAltResult::ErrorDataTooLarge(what, _) => {
                let (limit, key) = if what.contains("string") {
                    (limits.max_string_size, "max_string_size")
                } else if what.contains("map") {
                    (limits.max_map_size, "max_map_size")
                } else {
                    (limits.max_array_size, "max_array_size")
                };
                format!(
                    "{what} exceeded the limit of {} (limits.{key})",
                    thousands(limit as u64)
                )
            }
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(TIMEOUT_TOKEN) =>
            {
                format!(
                    "exceeded the {} ms time limit (limits.timeout_ms)",
                    thousands(limits.timeout_ms)
                )
            }
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(MEMORY_TOKEN) =>
            {
                format!(
                    "used more than {} bytes of memory (limits.max_memory)",
                    thousands(limits.max_memory as u64)
                )
            }
            EvalAltResult::ErrorRuntime(value, _) => {
                let text = value.to_string();
                if helpers::is_helper_error(&text) {
                    text
                } else {
                    format!("script threw: {text}")
                }
            }
            other => strip_position(&other.to_string()),
        };
        // Rhai reports no position for the limits it enforces (operations, call
        // depth, sizes, the deadline): name the entry point the call was in.
        let at = if pos.is_none() {
            let (entry, _) = entry_point(self.script.kind);
            format!(
                "{}, somewhere in `fn {entry}`",
                self.script.origin.describe(self.script.entry_at)
            )
        } else {
            self.script.origin.describe(pos)
        };
        EvalError::new(format!("{} ({at}): {reason}", self.who))
    }
}

impl Metric for ScriptComponent {
    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        let value = self.call("evaluate", (self.context(ctx),), ctx)?;
        crate::wire::metric_output(&self.who, &self.name, value)
    }
}

impl Postprocessor for ScriptComponent {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let value = self.call("evaluate", (self.context(ctx),), ctx)?;
        crate::wire::post_output(&self.who, &self.name, value)
    }
}

impl Strategy for ScriptComponent {
    fn compare(
        &self,
        expected: &Value,
        actual: &Value,
        ctx: &Context<'_>,
    ) -> Result<f64, EvalError> {
        let args = (
            convert::to_dynamic(expected),
            convert::to_dynamic(actual),
            self.context(ctx),
        );
        let value = self.call("compare", args, ctx)?;
        crate::wire::similarity(&self.who, &value)
    }
}

/// Rhai's messages end with ` (line 3, position 7)`; ours give `file:line:col` instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" (line ") {
        Some(cut) if message.ends_with(')') => message[..cut].to_owned(),
        _ => message.to_owned(),
    }
}

/// `1000000` as `1,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The context of a call in progress, its lifetime erased, for the `compare()`
/// helper: a strategy takes a `Context`, and the helper runs inside a Rhai call
/// that cannot borrow one. Only [`with_current_context`] reads it, while the
/// frame holding it is on the stack (see there).
#[derive(Debug, Clone, Copy)]
struct ContextPtr(*const Context<'static>);

/// One script call in progress on this thread.
struct Frame {
    who: String,
    deadline: Option<Instant>,
    context: Option<ContextPtr>,
    /// The limit this call has hit (its token), if any: from then on every
    /// operation ends the call, and the call is an error even if the script
    /// went on (Rhai ignores errors in `sort` / `dedup` comparers).
    tripped: Option<&'static str>,
    /// This thread's net allocated bytes when the call started.
    memory_base: i64,
    /// Net bytes the call may allocate (0: not enforced).
    max_memory: i64,
    /// Bytes the call has printed with `print`/`debug` so far.
    printed: usize,
}

thread_local! {
    /// The calls in progress on this thread, innermost last (a script may call a
    /// script strategy through `compare()`).
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Pushes a frame for a call; pops it when dropped, whatever the outcome. It
/// borrows the call's context for as long as it lives, so the frame never holds
/// a context that is gone.
struct CallFrame<'c> {
    context: PhantomData<&'c Context<'c>>,
}

impl<'c> CallFrame<'c> {
    fn enter(
        who: &str,
        limits: &ScriptLimits,
        context: Option<&'c Context<'c>>,
    ) -> Result<Self, String> {
        let timeout_ms = limits.timeout_ms;
        FRAMES.with_borrow_mut(|frames| {
            if frames.len() >= MAX_NESTED_CALLS {
                return Err(format!(
                    "scripts calling strategies through compare() nest more than {MAX_NESTED_CALLS} deep"
                ));
            }
            // 0 means no deadline of its own.
            let own = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
            // A nested call never outlives its caller's deadline.
            let deadline =
                crate::deadline::earliest(own, frames.last().and_then(|outer| outer.deadline));
            frames.push(Frame {
                who: who.to_owned(),
                deadline,
                context: context.map(|ctx| ContextPtr(std::ptr::from_ref(ctx).cast())),
                tripped: None,
                memory_base: crate::alloc::thread_net_bytes(),
                max_memory: memory_limit(limits),
                printed: 0,
            });
            Ok(Self {
                context: PhantomData,
            })
        })
    }
}

impl Drop for CallFrame<'_> {
    fn drop(&mut self) {
        FRAMES.with_borrow_mut(|frames| {
            frames.pop();
        });
    }
}

impl Frame {
    /// Marks the call as past its memory, if it is and has hit no limit yet.
    fn trip_on_memory(&mut self) {
        if self.tripped.is_none()
            && self.max_memory > 0
            && crate::alloc::thread_net_bytes() - self.memory_base > self.max_memory
        {
            self.tripped = Some(MEMORY_TOKEN);
        }
    }

    /// Marks the call as past its deadline, if it is and has hit no limit yet.
    fn trip_on_deadline(&mut self) {
        if self.tripped.is_none() && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.tripped = Some(TIMEOUT_TOKEN);
        }
    }
}

/// `on_progress`: the token to end the call with, once a limit is hit and for
/// every operation after that.
fn progress(ops: u64, max_operations: u64) -> Option<&'static str> {
    FRAMES.with_borrow_mut(|frames| {
        let frame = frames.last_mut()?;
        if frame.tripped.is_none() && max_operations > 0 && ops > max_operations {
            frame.tripped = Some(OPERATIONS_TOKEN);
        }
        frame.trip_on_memory();
        if ops % CLOCK_EVERY_OPS == 0 {
            frame.trip_on_deadline();
        }
        frame.tripped
    })
}

/// `limits.max_memory` as the call frames enforce it: 0 when the counting
/// allocator is not installed (nothing to measure with).
fn memory_limit(limits: &ScriptLimits) -> i64 {
    if crate::alloc::installed() {
        i64::try_from(limits.max_memory).unwrap_or(i64::MAX)
    } else {
        0
    }
}

/// What `print` and `debug` may write per call; the rest is dropped, with one note.
pub const MAX_PRINTED_BYTES: usize = 64 << 10;

/// Writes one line of script output to stderr, within the call's allowance.
fn print_capped(prefix: &str, text: &str) {
    let allowed = FRAMES.with_borrow_mut(|frames| {
        let Some(frame) = frames.last_mut() else {
            return Some(text.len());
        };
        let room = MAX_PRINTED_BYTES.saturating_sub(frame.printed);
        if room == 0 {
            return None;
        }
        frame.printed = frame.printed.saturating_add(text.len());
        Some(room)
    });
    let Some(room) = allowed else {
        return;
    };
    let text = crate::text::printable(text);
    if text.len() <= room {
        eprintln!("{prefix}{text}");
    } else {
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = &text[..end];
        eprintln!(
            "{prefix}{cut}… [output of this call past {} KiB dropped]",
            MAX_PRINTED_BYTES >> 10
        );
    }
}

/// The limit the innermost call has gone past, checked now: its deadline or its
/// memory (for helpers that build large results without counting operations).
/// Marks the call, so that it ends as an error whatever the script does next.
fn over_budget() -> Option<&'static str> {
    FRAMES.with_borrow_mut(|frames| {
        let frame = frames.last_mut()?;
        frame.trip_on_memory();
        frame.trip_on_deadline();
        frame.tripped
    })
}

/// Whether the innermost call's deadline has passed (for helpers that work
/// without counting operations); marks the call as timed out when it has.
fn past_deadline() -> bool {
    FRAMES.with_borrow_mut(|frames| {
        let Some(frame) = frames.last_mut() else {
            return false;
        };
        frame.trip_on_deadline();
        frame.tripped.is_some()
    })
}

/// The limit the innermost call has hit, if any.
fn tripped() -> Option<&'static str> {
    FRAMES.with_borrow(|frames| frames.last().and_then(|f| f.tripped))
}

fn current_script() -> String {
    FRAMES.with_borrow(|frames| {
        frames.last().map_or_else(
            || "?".to_owned(),
            |f| f.who.trim_start_matches("script ").to_owned(),
        )
    })
}

/// Runs `f` with the context of the innermost call that has one (for
/// `compare()`); `None` outside of a call.
#[allow(unsafe_code)]
fn with_current_context<R>(f: impl FnOnce(&Context<'_>) -> R) -> Option<R> {
    let ptr = FRAMES.with_borrow(|frames| frames.iter().rev().find_map(|frame| frame.context))?;
    // SAFETY: the pointer was made from the `&Context` a `CallFrame` borrows for
    // as long as it lives; the guard pops its frame when dropped (it is a local of
    // `ScriptComponent::call`, never leaked), so a frame still on this thread's
    // stack points to a context that is still borrowed. `f` cannot keep the
    // reference: it is only valid for the closure's call.
    let ctx = unsafe { &*ptr.0 };
    Some(f(ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_calls_are_spotted_but_not_definitions() {
        assert!(calls_compare(
            "fn evaluate(ctx) { compare(\"exact\", 1, 2) }"
        ));
        assert!(calls_compare("let s = compare (\"x\", a, b);"));
        assert!(!calls_compare("fn compare(expected, actual, ctx) { 1.0 }"));
        assert!(!calls_compare("fn evaluate(ctx) { my_compare(1) + 1 }"));
        assert!(!calls_compare("fn evaluate(ctx) { compared + comparer }"));
        assert!(calls_compare(
            "fn evaluate(ctx) { call(Fn(\"compare\"), \"exact\", 1, 1) }"
        ));
        assert!(!calls_compare("fn evaluate(ctx) { 1 }"));
        assert!(calls_compare(
            "fn compare(e, a, ctx) { compare_with(\"exact\", e, a) }"
        ));
    }

    #[test]
    fn entry_points_are_found_in_the_text() {
        let text = "// fn evaluate(x) in a comment\nfn helper() {}\n  fn evaluate(ctx) { 1 }";
        assert_eq!(definition_position(text, "evaluate"), Position::new(3, 3));
        let text = "fn helper() {}\n  fn  compare (e, a, ctx) { 1 }";
        assert_eq!(definition_position(text, "compare"), Position::new(2, 3));
        assert_eq!(definition_position("", "compare"), Position::new(1, 1));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn rhai_positions_are_stripped() {
        assert_eq!(
            strip_position("Function not found: x () (line 3, position 7)"),
            "Function not found: x ()"
        );
        assert_eq!(strip_position("plain"), "plain");
    }

    #[test]
    fn origin_offsets_positions() {
        let origin = Origin {
            file: PathBuf::from("m.yaml"),
            line_offset: 4,
            column_offset: 4,
        };
        assert_eq!(origin.locate(Position::new(2, 3)), (6, 7));
        assert_eq!(origin.locate(Position::NONE), (5, 5));
    }
}
