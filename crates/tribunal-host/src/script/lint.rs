//! Warnings about a script's text that the compiler accepts but that cannot be
//! what the author meant.
//!
//! Rhai's `trim()`, `replace()`, `truncate()`, `crop()`, `pad()`,
//! `make_upper()` and `make_lower()` change a string in place and return `()`.
//! Used as a value (`answer.trim() == ""`, `let t = s.trim();`,
//! `f(s.trim())`), they silently compare or pass `()`: the check is always
//! false, the variable empty. The warning names the returning helper to use
//! (`trimmed(s)`, `replaced(s, a, b)`, `to_upper()`, `to_lower()`).

use std::sync::LazyLock;

use regex::Regex;

use super::Origin;
use crate::yaml::LoadError;

/// The in-place string methods, and what returns the changed text instead.
const IN_PLACE: [(&str, &str); 7] = [
    ("trim", "`trimmed(s)` returns the trimmed text"),
    ("replace", "`replaced(s, from, to)` returns the new text"),
    (
        "truncate",
        "call it on a line of its own, then use the string",
    ),
    ("crop", "call it on a line of its own, then use the string"),
    ("pad", "call it on a line of its own, then use the string"),
    ("make_upper", "`to_upper()` returns the upper-case text"),
    ("make_lower", "`to_lower()` returns the lower-case text"),
];

/// `.METHOD(ARGS)` followed by an operator or a closing bracket or comma (a
/// value compared, combined or passed on), or assigned (`= x.trim();`).
static USED_AS_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    let names = IN_PLACE.map(|(name, _)| name).join("|");
    let call = format!(r"\.({names})\s*\((?:[^()]|\([^()]*\))*\)");
    Regex::new(&format!(
        r"{call}\s*(?:==|!=|<=|>=|<|>|\+|\)|,|\]|\.)|=\s*[\w.\[\]]+{call}\s*;"
    ))
    .expect("a valid pattern")
});

/// Warnings for in-place string methods used as values in `text`.
pub(super) fn in_place_results(name: &str, text: &str, origin: &Origin) -> Vec<LoadError> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for hit in USED_AS_VALUE.captures_iter(code) {
            let Some(method) = hit.get(1).or_else(|| hit.get(2)) else {
                continue;
            };
            let instead = IN_PLACE
                .iter()
                .find(|(m, _)| *m == method.as_str())
                .map_or("", |(_, instead)| instead);
            let column = code[..method.start()].chars().count();
            let at = rhai::Position::new(
                u16::try_from(index + 1).unwrap_or(u16::MAX),
                u16::try_from(column).unwrap_or(u16::MAX),
            );
            found.push(
                LoadError::new(
                    &origin.file,
                    origin.locate(at),
                    format!(
                        "script `{name}`: `.{}()` changes the string in place and returns nothing (`()`), so this uses `()` as its value",
                        method.as_str()
                    ),
                )
                .with_help(Some(instead.to_owned())),
            );
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lints(text: &str) -> Vec<String> {
        in_place_results("s", text, &Origin::file(std::path::Path::new("s.rhai")))
            .into_iter()
            .map(|e| {
                format!(
                    "{}:{} {}",
                    e.position.unwrap().0,
                    e.position.unwrap().1,
                    e.help.unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn in_place_methods_used_as_values_are_found() {
        assert_eq!(
            lints(r#"if answer.trim() == "" { 0.0 }"#),
            ["1:10 `trimmed(s)` returns the trimmed text"]
        );
        assert_eq!(
            lints("let t = ctx.output.trim();"),
            ["1:19 `trimmed(s)` returns the trimmed text"]
        );
        assert_eq!(lints(r#"let x = f(s.replace("a", "b"));"#).len(), 1);
        assert_eq!(lints("  s.make_upper() != t").len(), 1);
        assert_eq!(lints("s.trim().len()").len(), 1);
        // As statements they are right, and comments are not code.
        for fine in [
            "text.trim();",
            r#"text.replace("a", "b");"#,
            "// x.trim() == y",
            "let t = trimmed(s);",
            "s.to_upper() == t",
        ] {
            assert!(lints(fine).is_empty(), "{fine}");
        }
        // Lines and columns count from 1, after the script's first line.
        assert_eq!(
            lints("fn evaluate(ctx) {\n    let a = ctx.output;\n    a.trim() == \"\"\n}"),
            ["3:6 `trimmed(s)` returns the trimmed text"]
        );
    }
}
