//! The Rhai host: custom metrics, postprocessors and strategies written as scripts.
//!
//! One hardened `rhai::Engine` per pack (built from the pack's `limits:`), every
//! script compiled once to an `AST` at load and shared by all threads, a fresh
//! `Scope` per call. Scripts see the same context shape as plugins
//! (`Context::with_config`'s serialisation), as native Rhai values; what they return goes through
//! `crate::wire`, so scripts and plugins are validated alike.
//!
//! The sandbox: no module resolver (and `import` is not even a keyword), no
//! `eval`, strict variables, `print`/`debug` go to stderr (stdout carries
//! results), limits on operations, call depth, expression depth, string / array /
//! map sizes, and a wall-clock deadline per call checked from `on_progress`.
//! Nothing here reads files at evaluation time: script files are read at load.

mod component;
mod convert;
mod frame;
mod helpers;
mod limits;
mod lint;
pub mod strings;

pub use component::build;
use component::strip_position;
use frame::{
    current_script, over_budget, past_deadline, print_capped, progress, tripped,
    with_current_context, TIMEOUT_TOKEN,
};
pub use helpers::RegexCache;
pub use limits::ScriptLimits;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhai::{Dynamic, Engine, Position, AST};

use crate::component::Kind;
use crate::yaml::LoadError;

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

impl ScriptHost {
    /// The hardened engine: raw engine plus the standard package, no module
    /// resolver, `import` and `eval` disabled, strict variables, every limit,
    /// a wall-clock deadline and the helper library.
    /// The regex helpers compile their patterns into `regexes` (the
    /// runtime's, shared by its packs).
    pub fn new(limits: ScriptLimits, regexes: &Arc<RegexCache>) -> Self {
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
        helpers::register(&mut engine, &limits, regexes);
        Self { engine, limits }
    }
}

/// Where a script's text lives, to turn Rhai's positions into `file:line:col`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// The file as a record's error names it: relative to the pack's folder, so
    /// the message is the same wherever the pack is run from (`None`: `file`).
    pub shown: Option<String>,
    /// Lines before the script's first line in `file` (0 for a `.rhai` file).
    pub line_offset: usize,
    /// Columns before the script's text on each line (the indentation of an
    /// `inline: |` block).
    pub column_offset: usize,
}

impl Origin {
    pub fn file(path: &Path) -> Self {
        Self {
            shown: None,
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
        match &self.shown {
            Some(shown) => format!("{shown}:{line}:{column}"),
            None => format!("{}:{line}:{column}", self.file.display()),
        }
    }

    /// The same origin, naming its file relative to the pack folder `root` (a
    /// canonical path) in records' errors; load errors keep the path as given.
    #[must_use]
    pub fn within_pack(mut self, root: &Path) -> Self {
        self.shown = std::fs::canonicalize(&self.file).ok().and_then(|file| {
            file.strip_prefix(root)
                .ok()
                .map(|relative| relative.display().to_string())
        });
        self
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
            shown: None,
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
            shown: None,
            file: source.path.clone(),
            line_offset: file_line,
            column_offset: indent,
        }
    } else {
        let quote = usize::from(value.starts_with(['"', '\'']));
        let start = key_line.len() - value.len() + quote;
        Origin {
            shown: None,
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
    /// A metric script that defines `fn prepare(ctx)`: it runs once per
    /// record, and what it returns is `ctx.prepared` in every `evaluate`.
    prepares: bool,
    /// What the load warns about in the script's text ([`lint`]).
    lints: Vec<LoadError>,
}

impl CompiledScript {
    /// The script's lint warnings (`tribunal lint` prints them).
    pub fn lints(&self) -> &[LoadError] {
        &self.lints
    }

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
pub(super) fn entry_point(kind: Kind) -> (&'static str, &'static str) {
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
        let message = format!("script `{name}`: {}", strip_position(&err.0.to_string()));
        match backtick_in_string(text, err.1) {
            // Point at the string a backtick ended early, and say how to write one.
            Some(string_at) => LoadError::new(&origin.file, origin.locate(string_at), message)
                .with_help(Some(
                    "a backtick ends a `...` string: write a backtick inside one as two (``), or use a \"...\" string"
                        .to_owned(),
                )),
            None => LoadError::new(&origin.file, origin.locate(err.1), message),
        }
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
    let lints = lint::in_place_results(name, text, &origin);
    let prepares = kind == Kind::Metric
        && ast
            .iter_functions()
            .any(|f| f.name == "prepare" && f.params.len() == 1);
    Ok(Arc::new(CompiledScript {
        prepares,
        host: Arc::clone(host),
        ast,
        origin,
        kind,
        header: leading_comment(text),
        entry_at: definition_position(text, entry),
        uses_compare,
        lints,
    }))
}

/// Where the backtick string starts when a syntax error at `at` looks like a
/// literal backtick that ended it early: on the error's line, a backtick string
/// closes right before the error's column and a word character follows
/// (`` `use `json` here` ``). `None` otherwise (and for a string that started
/// on an earlier line).
fn backtick_in_string(text: &str, at: Position) -> Option<Position> {
    let line_number = at.line()?;
    let line = text.lines().nth(line_number.checked_sub(1)?)?;
    let chars: Vec<char> = line.chars().collect();
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' {
            match open {
                None => open = Some(i),
                // `` inside a string is an escaped backtick, not its end.
                Some(_) if chars.get(i + 1) == Some(&'`') => i += 1,
                Some(start) => {
                    // The error is at the text right after this backtick.
                    let next = chars.get(i + 1);
                    let error_here = at.position() == Some(i + 2);
                    if error_here
                        && next.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '$'))
                    {
                        let column = u16::try_from(start + 1).ok()?;
                        return Some(Position::new(u16::try_from(line_number).ok()?, column));
                    }
                    open = None;
                }
            }
        }
        i += 1;
    }
    None
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
        assert_eq!(component::thousands(0), "0");
        assert_eq!(component::thousands(999), "999");
        assert_eq!(component::thousands(1000), "1,000");
        assert_eq!(component::thousands(1_000_000), "1,000,000");
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
            shown: None,
            file: PathBuf::from("m.yaml"),
            line_offset: 4,
            column_offset: 4,
        };
        assert_eq!(origin.locate(Position::new(2, 3)), (6, 7));
        assert_eq!(origin.locate(Position::NONE), (5, 5));
    }
}
