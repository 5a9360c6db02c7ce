//! `required_fields` (postprocessor): nested fields of the
//! extracted JSON must exist, optionally be non-empty (Python-truthy), and optionally
//! contain required members; every failure is an issue with a templated message
//! (`Missing {name} example`), in config order.
//!
//! This module also hosts two small helpers shared by the other built-ins of this
//! folder: [`FieldPath`] (a dotted or JSON-pointer path compiled once) and
//! [`Template`] (a `{placeholder}` message compiled once).

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::json::{array_index, Json};

use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, EvalError, Kind, PostOutput, Postprocessor,
};
use crate::json::escape_pointer;
use crate::report::{Issue, Severity};

pub const BUILTIN: Builtin = Builtin {
    name: "required_fields",
    kind: Kind::Postprocessor,
    summary: "Nested fields must exist, be non-empty or contain required members",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied: it judges the final answer",
    },
    docs: include_str!("../../../../docs/builtins/required_fields.md"),
    build,
};

// ---------------------------------------------------------------------------
// Shared helpers: field paths and message templates.
// ---------------------------------------------------------------------------

/// A path into a JSON document, compiled once: dotted (`a.b`) or JSON pointer (`/a/b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldPath {
    segments: Vec<String>,
    pointer: String,
}

impl FieldPath {
    /// Parses a dotted path or a JSON pointer (a path starting with `/`).
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("a field path must not be empty".to_owned());
        }
        let segments: Vec<String> = if let Some(rest) = text.strip_prefix('/') {
            rest.split('/')
                .map(|raw| {
                    crate::json::unescape_pointer(raw)
                        .map(std::borrow::Cow::into_owned)
                        .ok_or_else(|| bad_tilde(text))
                })
                .collect::<Result<_, _>>()?
        } else {
            let segments: Vec<String> = text.split('.').map(str::to_owned).collect();
            if segments.iter().any(String::is_empty) {
                return Err(format!(
                    "`{text}` has an empty segment (write a JSON pointer such as `/a/b` \
                     for keys containing dots or empty keys)"
                ));
            }
            segments
        };
        let mut pointer = String::new();
        for segment in &segments {
            pointer.push('/');
            pointer.push_str(&escape_pointer(segment));
        }
        Ok(Self { segments, pointer })
    }

    /// Checks the field against the pack's contract: see [`check_field_known`].
    pub(crate) fn check_known(
        &self,
        ctx: &BuildCtx<'_>,
        rule: &str,
        written: &str,
    ) -> Result<(), BuildError> {
        let segments: Vec<&str> = self.segments.iter().map(String::as_str).collect();
        check_field_known(ctx, rule, written, &segments)
    }

    /// The JSON pointer of the field.
    pub(crate) fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The last segment (the field's own key).
    pub(crate) fn last_segment(&self) -> &str {
        self.segments.last().map_or("", String::as_str)
    }

    /// Whether the value at `path` is this field (`exact`) or inside it.
    pub(crate) fn holds(&self, path: &[crate::json::Seg], exact: bool) -> bool {
        use crate::json::Seg;
        let fits = if exact {
            path.len() == self.segments.len()
        } else {
            path.len() >= self.segments.len()
        };
        fits && self
            .segments
            .iter()
            .zip(path)
            .all(|(segment, step)| match step {
                Seg::Member(key) => key == segment,
                Seg::Item(index) => crate::json::array_index(segment) == Some(*index),
            })
    }

    /// The value at this path; `None` when any step is missing or its parent is
    /// neither an object nor (for a canonical index) an array.
    pub(crate) fn lookup<'v>(&self, root: &'v Json) -> Option<&'v Json> {
        self.child(self.parent(root)?)
    }

    /// The value holding the field (the root for a path of one segment);
    /// `None` as for [`lookup`](Self::lookup).
    fn parent<'v>(&self, root: &'v Json) -> Option<&'v Json> {
        let (_, parent) = self.segments.split_last()?;
        parent
            .iter()
            .try_fold(root, |current, segment| member(current, segment))
    }

    /// The field in `parent`, the value [`parent`](Self::parent) found.
    fn child<'v>(&self, parent: &'v Json) -> Option<&'v Json> {
        member(parent, self.segments.last()?)
    }

    /// Whether the field's parent is at the same path as `other`'s.
    fn same_parent(&self, other: &Self) -> bool {
        self.segments.split_last().map(|(_, parent)| parent)
            == other.segments.split_last().map(|(_, parent)| parent)
    }
}

/// Checks a field a rule names (`segments`, its path) against the pack's contract, if it has one (`rule`
/// names the key that lists it, and `written` the path as the config
/// writes it, for the error's place): a path no document the contract takes can have is a
/// build error, with the field it most resembles; a path the contract
/// does not describe but an open object may hold gets a warning, since a
/// misspelt name would go unnoticed there.
pub(crate) fn check_field_known(
    ctx: &BuildCtx<'_>,
    rule: &str,
    written: &str,
    segments: &[&str],
) -> Result<(), BuildError> {
    let Some(contract) = ctx.contract else {
        return Ok(());
    };
    let crate::contract::PathKnown::Unknown {
        at,
        closed,
        nearest,
        ..
    } = contract.lookup_path(segments)
    else {
        return Ok(());
    };
    let step = ctx.name;
    let segment = segments[at];
    let within = if at == 0 {
        "the document".to_owned()
    } else {
        format!("`{}`", segments[..at].join("."))
    };
    let path = segments.join(".");
    let problem = BuildError::new(if closed {
        format!(
            "{step}: `{rule}` names `{path}`, which no output the contract takes can have: `{segment}` is not a field of {within}, which takes no other members"
        )
    } else {
        format!(
            "{step}: `{rule}` names `{path}`, which the contract does not describe: `{segment}` is not a field of {within}; a misspelt name would never be found (add the field to the contract)"
        )
    })
    .at_key(rule)
    .at_value(written)
    .suggest(nearest);
    if closed {
        return Err(problem);
    }
    ctx.warn(problem);
    Ok(())
}

/// One step of a path: a member of an object, an item of an array.
fn member<'v>(value: &'v Json, segment: &str) -> Option<&'v Json> {
    match value {
        Json::Object(map) => map.get(segment),
        Json::Array(items) => items.get(array_index(segment)?),
        _ => None,
    }
}

fn bad_tilde(text: &str) -> String {
    format!("`{text}` is not a valid JSON pointer (`~` must be followed by 0 or 1)")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(String),
}

/// A message with `{placeholder}`s, parsed once. `{{` and `}}` are literal braces;
/// a brace not forming `{identifier}` is literal text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `text`, accepting only the placeholders named in `allowed`.
    pub(crate) fn parse(text: &str, allowed: &[&str]) -> Result<Self, BuildError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("{{") || rest.starts_with("}}") {
                literal.push(c);
                rest = &rest[2..];
                continue;
            }
            if c == '{' {
                if let Some(end) = rest.find('}') {
                    let name = &rest[1..end];
                    if is_identifier(name) {
                        if !allowed.contains(&name) {
                            let mut error = BuildError::new(format!(
                                "unknown placeholder `{{{name}}}` in message `{text}` (available: {})",
                                allowed
                                    .iter()
                                    .map(|a| format!("{{{a}}}"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                            error.suggestion =
                                crate::suggest::nearest(name, allowed.iter().copied())
                                    .map(|n| format!("{{{n}}}"));
                            return Err(error);
                        }
                        if !literal.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut literal)));
                        }
                        pieces.push(Piece::Var(name.to_owned()));
                        rest = &rest[end + 1..];
                        continue;
                    }
                }
            }
            literal.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Self { pieces })
    }

    /// Substitutes one placeholder now, keeping the others.
    #[must_use]
    pub(crate) fn bind(&self, name: &str, value: &str) -> Self {
        let mut pieces: Vec<Piece> = Vec::with_capacity(self.pieces.len());
        for piece in &self.pieces {
            let text = match piece {
                Piece::Var(var) if var == name => value,
                Piece::Text(text) => text.as_str(),
                Piece::Var(_) => {
                    pieces.push(piece.clone());
                    continue;
                }
            };
            if let Some(Piece::Text(previous)) = pieces.last_mut() {
                previous.push_str(text);
            } else {
                pieces.push(Piece::Text(text.to_owned()));
            }
        }
        Self { pieces }
    }

    /// The message with every placeholder replaced by `value(name)` (an unbound
    /// placeholder the closure does not know renders as `{name}`).
    pub(crate) fn render<'v>(&self, value: impl Fn(&str) -> Option<&'v str>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Var(name) => match value(name) {
                    Some(v) => out.push_str(v),
                    None => {
                        let _ = write!(out, "{{{name}}}");
                    }
                },
            }
        }
        out
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------
// The rule.
// ---------------------------------------------------------------------------

const DEFAULT_MESSAGE: &str = "missing required field `{path}`";
const DEFAULT_INCOMPLETE_MESSAGE: &str = "`{path}` is incomplete: missing {missing}";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    paths: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntrySpec {
    path: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    non_empty: bool,
    #[serde(default)]
    require: Vec<String>,
    #[serde(default)]
    incomplete_message: Option<String>,
    #[serde(default)]
    each: Option<Vec<String>>,
    #[serde(default)]
    severity: Severity,
}

/// One expanded check, with everything known at load already rendered.
#[derive(Debug)]
struct Check {
    path: FieldPath,
    missing_message: String,
    non_empty: bool,
    require: Vec<String>,
    /// `incomplete_message` with only `{missing}` left to fill.
    incomplete: Template,
    severity: Severity,
    /// The field's parent is the check before's (`type_examples` of each
    /// `type_examples.{name}`): found once for both.
    parent_as_before: bool,
}

impl Check {
    /// `require` members of a field the contract makes an object are
    /// member names: one the object cannot have (it takes no other) would
    /// make the check always fire, an error; one an open object may have
    /// but the contract does not describe, a warning. (Of a string or an
    /// array, a member is a substring or an element: nothing to check.)
    fn check_require(&self, ctx: &BuildCtx<'_>) -> Result<(), BuildError> {
        let Some(contract) = ctx.contract else {
            return Ok(());
        };
        let mut segments: Vec<&str> = self.path.segments.iter().map(String::as_str).collect();
        let depth = segments.len();
        for member in &self.require {
            segments.truncate(depth);
            segments.push(member);
            let crate::contract::PathKnown::Unknown {
                at,
                closed,
                nearest,
                in_array: false,
            } = contract.lookup_path(&segments)
            else {
                continue;
            };
            if at != depth {
                continue; // the path itself: reported by `check_known`
            }
            let path = self.path.segments.join(".");
            let problem = BuildError::new(if closed {
                format!(
                    "{}: `require` names `{member}`, which `{path}` cannot have: the contract's object takes no other members, so the check would always fire",
                    ctx.name
                )
            } else {
                format!(
                    "{}: `require` names `{member}`, which the contract does not describe in `{path}`: a misspelt name would always be missing (add it to the contract)",
                    ctx.name
                )
            })
            .at_key("paths")
            .at_value(member.as_str())
            .suggest(nearest);
            if closed {
                return Err(problem);
            }
            ctx.warn(problem);
        }
        Ok(())
    }
}

#[derive(Debug)]
struct RequiredFields {
    checks: Vec<Check>,
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(ctx.name, config)?;
    if config.paths.is_empty() {
        return Err(BuildError::new(format!(
            "{}: `paths` must list at least one field",
            ctx.name
        ))
        .at_key("paths"));
    }
    let mut checks = Vec::new();
    for (index, raw) in config.paths.iter().enumerate() {
        let spec = match raw {
            Value::String(path) => EntrySpec {
                path: path.clone(),
                message: None,
                non_empty: false,
                require: Vec::new(),
                incomplete_message: None,
                each: None,
                severity: Severity::Error,
            },
            Value::Object(_) => {
                component::parse_config(&format!("{}: paths[{index}]", ctx.name), raw)?
            }
            other => {
                return Err(BuildError::new(format!(
                    "{}: paths[{index}] must be a path string or a map with `path`, got {}",
                    ctx.name,
                    type_name(&Json::from(other))
                ))
                .at_key("paths"));
            }
        };
        let from = checks.len();
        expand(&spec, index, ctx.name, &mut checks)?;
        for (index, check) in checks[from..].iter().enumerate() {
            // An entry expanded from `each` is located at the name there.
            let written = match &spec.each {
                Some(each) if spec.path.contains("{name}") => &each[index],
                _ => &spec.path,
            };
            check.path.check_known(ctx, "paths", written)?;
            check.check_require(ctx)?;
        }
    }
    Ok(Compiled::Postprocessor(Arc::new(RequiredFields { checks })))
}

fn expand(
    spec: &EntrySpec,
    index: usize,
    component: &str,
    out: &mut Vec<Check>,
) -> Result<(), BuildError> {
    let fail = |message: String| {
        BuildError::new(format!("{component}: paths[{index}]: {message}")).at_key("paths")
    };
    let locate = |mut error: BuildError| {
        error.message = format!("{component}: paths[{index}]: {}", error.message);
        error.key = Some("paths".to_owned());
        error
    };
    if spec.require.iter().any(String::is_empty) {
        return Err(fail("`require` members must not be empty".to_owned()));
    }
    let message = Template::parse(
        spec.message.as_deref().unwrap_or(DEFAULT_MESSAGE),
        &["name", "path"],
    )
    .map_err(locate)?;
    let incomplete = Template::parse(
        spec.incomplete_message
            .as_deref()
            .unwrap_or(DEFAULT_INCOMPLETE_MESSAGE),
        &["name", "path", "missing"],
    )
    .map_err(locate)?;
    let names: Vec<Option<&str>> = match &spec.each {
        Some(each) if each.is_empty() => {
            return Err(fail("`each` must list at least one name".to_owned()))
        }
        Some(each) => each.iter().map(|name| Some(name.as_str())).collect(),
        None if spec.path.contains("{name}") => {
            return Err(fail(format!(
                "path `{}` uses {{name}} but the entry has no `each` list",
                spec.path
            )))
        }
        None => vec![None],
    };
    for name in names {
        let written = match name {
            Some(name) => spec.path.replace("{name}", name),
            None => spec.path.clone(),
        };
        let path = FieldPath::parse(&written).map_err(fail)?;
        let name = name.unwrap_or_else(|| path.last_segment()).to_owned();
        let missing_message = message.render(|var| match var {
            "name" => Some(name.as_str()),
            "path" => Some(written.as_str()),
            _ => None,
        });
        let incomplete = incomplete.bind("name", &name).bind("path", &written);
        let parent_as_before = out
            .last()
            .is_some_and(|before| before.path.same_parent(&path));
        out.push(Check {
            path,
            missing_message,
            non_empty: spec.non_empty,
            require: spec.require.clone(),
            incomplete,
            severity: spec.severity,
            parent_as_before,
        });
    }
    Ok(())
}

fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a map",
    }
}

/// Python truthiness: `None`, `False`, `0`, `0.0`, `""`, `[]` and `{}` are falsy.
fn is_falsy(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        Json::Array(items) => items.is_empty(),
        Json::Object(map) => map.is_empty(),
    }
}

/// Python's `member in value` for the JSON types; other values contain nothing.
fn contains(value: &Json, member: &str) -> bool {
    match value {
        Json::Object(map) => map.contains_key(member),
        Json::String(s) => s.contains(member),
        Json::Array(items) => items.iter().any(|item| item.as_str() == Some(member)),
        _ => false,
    }
}

impl Postprocessor for RequiredFields {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let mut issues = Vec::new();
        let mut parent = None;
        for check in &self.checks {
            if !check.parent_as_before {
                parent = check.path.parent(ctx.json);
            }
            let value = parent
                .and_then(|parent| check.path.child(parent))
                .filter(|value| !(check.non_empty && is_falsy(value)));
            let Some(value) = value else {
                issues.push(
                    issue(check.severity, check.missing_message.clone(), &check.path)
                        .code(codes::REQUIRED_MISSING),
                );
                continue;
            };
            let missing: Vec<&str> = check
                .require
                .iter()
                .map(String::as_str)
                .filter(|member| !contains(value, member))
                .collect();
            if !missing.is_empty() {
                let list = missing.join(", ");
                let message = check
                    .incomplete
                    .render(|var| (var == "missing").then_some(list.as_str()));
                issues.push(
                    issue(check.severity, message, &check.path).code(codes::REQUIRED_INCOMPLETE),
                );
            }
        }
        Ok(PostOutput { issues, json: None })
    }

    fn early(&self) -> crate::component::Early {
        crate::component::Early::AtFinish { keeps_json: true }
    }
}

fn issue(severity: Severity, message: String, path: &FieldPath) -> Issue {
    let mut issue = Issue::error("", message).at(path.pointer());
    issue.severity = severity;
    issue
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_support::{build_ctx, Fixture};
    use serde_json::json;

    fn compile(config: &Value) -> Arc<dyn Postprocessor> {
        crate::builtins::test_support::postprocessor(build, "required_fields", config)
    }

    fn messages(rule: &Arc<dyn Postprocessor>, json: Value) -> Vec<String> {
        let fixture = Fixture::new("", json, Value::Null);
        rule.process(&fixture.ctx())
            .unwrap()
            .issues
            .into_iter()
            .map(|i| i.message)
            .collect()
    }

    fn seed_config() -> Value {
        json!({"paths": [
            {
                "path": "type_examples.{name}",
                "each": ["type1", "type2", "type3", "type4"],
                "message": "Missing {name} example",
                "require": ["yaml", "behavior"],
                "incomplete_message": "{name} example incomplete"
            },
            {"path": "check_logic.parsing_method", "non_empty": true, "message": "Missing parsing_method"},
            {"path": "check_logic.pass_fail_logic", "non_empty": true, "message": "Missing pass_fail_logic"}
        ]})
    }

    #[test]
    fn seed_rules_two_and_three_word_for_word() {
        let rule = compile(&seed_config());
        let json = json!({
            "type_examples": {
                "type1": {"yaml": "a: 1"},
                "type2": {"yaml": "b: 2", "behavior": "passes"},
                "type4": {"yaml": "d: 4", "behavior": "fails"}
            },
            "check_logic": {"parsing_method": "", "pass_fail_logic": null}
        });
        assert_eq!(
            messages(&rule, json),
            [
                "type1 example incomplete",
                "Missing type3 example",
                "Missing parsing_method",
                "Missing pass_fail_logic"
            ]
        );
    }

    #[test]
    fn seed_rules_pass_on_a_complete_result_and_paths_are_pointers() {
        let rule = compile(&seed_config());
        let complete = json!({
            "type_examples": {
                "type1": {"yaml": "", "behavior": ""},
                "type2": {"yaml": 1, "behavior": 2},
                "type3": {"yaml": null, "behavior": null},
                "type4": {"yaml": "x", "behavior": "y"}
            },
            "check_logic": {"parsing_method": "regex", "pass_fail_logic": "exit code"}
        });
        assert!(messages(&rule, complete).is_empty());

        let fixture = Fixture::new("", json!({"type_examples": {"type1": {}}}), Value::Null);
        let issues = rule.process(&fixture.ctx()).unwrap().issues;
        let found: Vec<(&str, Option<&str>)> = issues
            .iter()
            .map(|i| (i.message.as_str(), i.path.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("type1 example incomplete", Some("/type_examples/type1")),
                ("Missing type2 example", Some("/type_examples/type2")),
                ("Missing type3 example", Some("/type_examples/type3")),
                ("Missing type4 example", Some("/type_examples/type4")),
                (
                    "Missing parsing_method",
                    Some("/check_logic/parsing_method")
                ),
                (
                    "Missing pass_fail_logic",
                    Some("/check_logic/pass_fail_logic")
                ),
            ]
        );
        assert!(issues
            .iter()
            .all(|i| i.severity == Severity::Error && i.rule.is_empty()));
    }

    #[test]
    fn missing_parents_and_null_documents_mean_missing() {
        let rule = compile(&seed_config());
        let expected = [
            "Missing type1 example",
            "Missing type2 example",
            "Missing type3 example",
            "Missing type4 example",
            "Missing parsing_method",
            "Missing pass_fail_logic",
        ];
        assert_eq!(messages(&rule, Value::Null), expected);
        assert_eq!(
            messages(&rule, json!({"type_examples": "n/a", "check_logic": [1]})),
            expected
        );
    }

    #[test]
    fn presence_without_non_empty_accepts_null() {
        let rule = compile(&json!({"paths": ["a.b", "/c~1d/e~0f"]}));
        assert!(messages(&rule, json!({"a": {"b": null}, "c/d": {"e~f": 0}})).is_empty());
        let fixture = Fixture::new("", json!({"a": {}}), Value::Null);
        let issues = rule.process(&fixture.ctx()).unwrap().issues;
        assert_eq!(issues[0].message, "missing required field `a.b`");
        assert_eq!(issues[0].path.as_deref(), Some("/a/b"));
        assert_eq!(issues[1].message, "missing required field `/c~1d/e~0f`");
        assert_eq!(issues[1].path.as_deref(), Some("/c~1d/e~0f"));
    }

    #[test]
    fn non_empty_uses_python_truthiness() {
        let rule = compile(
            &json!({"paths": [{"path": "x", "non_empty": true, "message": "{name} empty"}]}),
        );
        for falsy in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert_eq!(
                messages(&rule, json!({ "x": falsy })),
                ["x empty"],
                "{falsy}"
            );
        }
        for truthy in [
            json!(true),
            json!(-1),
            json!(0.5),
            json!(" "),
            json!([0]),
            json!({"a": null}),
        ] {
            assert!(
                messages(&rule, json!({ "x": truthy })).is_empty(),
                "{truthy}"
            );
        }
    }

    #[test]
    fn require_follows_python_in() {
        let rule = compile(&json!({"paths": [{"path": "v", "require": ["yaml", "behavior"]}]}));
        assert!(messages(&rule, json!({"v": {"yaml": 1, "behavior": 2}})).is_empty());
        assert!(messages(&rule, json!({"v": "yaml then behavior"})).is_empty());
        assert!(messages(&rule, json!({"v": ["behavior", "yaml"]})).is_empty());
        assert_eq!(
            messages(&rule, json!({"v": ["yaml", ["behavior"]]})),
            ["`v` is incomplete: missing behavior"]
        );
        for other in [json!(null), json!(3), json!(true)] {
            assert_eq!(
                messages(&rule, json!({ "v": other })),
                ["`v` is incomplete: missing yaml, behavior"]
            );
        }
    }

    #[test]
    fn arrays_are_indexed_by_canonical_indices() {
        let rule = compile(&json!({"paths": ["items.1.id", "/items/01"]}));
        assert_eq!(
            messages(&rule, json!({"items": [{}, {"id": 7}]})),
            ["missing required field `/items/01`"]
        );
    }

    #[test]
    fn severity_and_brace_escapes() {
        let rule = compile(&json!({"paths": [
            {"path": "a", "severity": "warning", "message": "{{{name}}} at {path}"}
        ]}));
        let fixture = Fixture::new("", json!({}), Value::Null);
        let issues = rule.process(&fixture.ctx()).unwrap().issues;
        assert_eq!(issues[0].message, "{a} at a");
        assert_eq!(issues[0].severity, Severity::Warning);
    }

    #[test]
    fn bad_configs_are_build_errors() {
        let ctx = build_ctx("required_fields");
        let err = build(&json!({"paths": [{"path": "a", "mesage": "x"}]}), &ctx).unwrap_err();
        assert!(err.message.contains("paths[0]"), "{}", err.message);
        assert_eq!(err.suggestion.as_deref(), Some("message"));

        let err = build(
            &json!({"paths": [{"path": "a", "message": "{nam} gone"}]}),
            &ctx,
        )
        .unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("{name}"));

        let err = build(&json!({"paths": [{"path": "a.{name}"}]}), &ctx).unwrap_err();
        assert!(err.message.contains("no `each`"), "{}", err.message);

        for bad in [
            json!({"paths": []}),
            json!({"paths": ["a..b"]}),
            json!({"paths": [3]}),
            json!({}),
            json!({"paths": ["/a~2"]}),
        ] {
            assert!(build(&bad, &ctx).is_err(), "{bad}");
        }
        let err = build(&json!({"paths": ["a"], "path": 1}), &ctx).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("paths"));
    }

    #[test]
    fn templates_bind_and_render() {
        let t = Template::parse("{name}: {missing} {x y} {{}}", &["name", "missing"]).unwrap();
        let bound = t.bind("name", "t1");
        assert_eq!(bound.render(|_| None), "t1: {missing} {x y} {}");
        assert_eq!(
            bound.render(|v| (v == "missing").then_some("yaml")),
            "t1: yaml {x y} {}"
        );
    }
}
