//! `no_placeholders` (postprocessor): reports fields of the extracted
//! JSON (or its whole document, or the raw output when nothing was extracted) whose
//! text still contains an unfilled placeholder token such as `TODO`, `TBD` or `FIXME`.

use std::sync::Arc;

use aho_corasick::AhoCorasick;
use serde::Deserialize;
use serde_json::Value;

use crate::json::Json;

use super::required_fields::{FieldPath, Template};
use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, Early, EarlyStrings, EvalError, Kind, PostOutput,
    Postprocessor,
};
use crate::contract::{pointer_of, Seg};
use crate::deadline::Budget;
use crate::json::escape_pointer;
use crate::report::{Issue, Severity};

pub const BUILTIN: Builtin = Builtin {
    name: "no_placeholders",
    kind: Kind::Postprocessor,
    summary: "Text must not contain unfilled placeholders such as TODO, TBD or FIXME",
    streaming: "as each string value completes (on the document as written: when every step before it keeps it); the raw output, and `containers: python` items and keys, at `finish()`",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied: it judges the final answer",
    },
    docs: include_str!("../../../../docs/builtins/no_placeholders.md"),
    build,
};

const DEFAULT_MESSAGE: &str = "`{field}` contains an unfilled placeholder ({token})";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    tokens: Vec<String>,
    fields: Option<Vec<String>>,
    containers: Containers,
    case_sensitive: bool,
    message: String,
    severity: Severity,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            tokens: ["TODO", "TBD", "FIXME"].map(str::to_owned).to_vec(),
            fields: None,
            containers: Containers::Leaves,
            case_sensitive: true,
            message: DEFAULT_MESSAGE.to_owned(),
            severity: Severity::Error,
        }
    }
}

/// How a listed field holding an array or object is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Containers {
    /// Every string inside it, at any depth.
    Leaves,
    /// Python's `in`: an array holds a token as an element, an object as a key.
    Python,
}

/// The tokens, compiled once into one automaton: a text is read once however many
/// tokens there are.
#[derive(Debug)]
struct Matcher {
    automaton: AhoCorasick,
    /// Case-insensitive: tokens and texts are matched case-folded.
    fold: bool,
}

impl Matcher {
    /// Index of the first token (in config order) that `text` contains. Stops
    /// early when `budget` has passed (the pipeline then discards the result).
    fn first_token(&self, text: &str, budget: &Budget<'_>) -> Option<usize> {
        let folded;
        let text = if self.fold {
            folded = fold_case(text);
            folded.as_str()
        } else {
            text
        };
        let mut keep_going = budget.watch();
        let mut first: Option<usize> = None;
        for found in self.automaton.find_overlapping_iter(text) {
            let token = found.pattern().as_usize();
            if first.is_none_or(|first| token < first) {
                first = Some(token);
                if token == 0 {
                    break;
                }
            }
            if !keep_going(found.len()) {
                break;
            }
        }
        first
    }

    fn equal(&self, token: &str, text: &str) -> bool {
        if self.fold {
            fold_case(token) == fold_case(text)
        } else {
            token == text
        }
    }
}

/// Unicode simple case folding (as a case-insensitive regex matches): each
/// character becomes one representative of the characters it matches.
fn fold_case(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'ſ' => 's',
            'ς' => 'σ',
            'µ' => 'μ',
            'ϐ' => 'β',
            'ϑ' => 'θ',
            'ϕ' => 'φ',
            'ϖ' => 'π',
            'ϰ' => 'κ',
            'ϱ' => 'ρ',
            'ϵ' => 'ε',
            'ẛ' => 'ṡ',
            '\u{345}' | '\u{1fbe}' => 'ι',
            '\u{1c80}' => 'в',
            '\u{1c81}' => 'д',
            '\u{1c82}' => 'о',
            '\u{1c83}' => 'с',
            '\u{1c84}' | '\u{1c85}' => 'т',
            '\u{1c86}' => 'ъ',
            '\u{1c87}' => 'ѣ',
            '\u{1c88}' => 'ꙋ',
            _ => {
                let mut lower = c.to_lowercase();
                match (lower.next(), lower.next()) {
                    (Some(one), None) => one,
                    _ => c,
                }
            }
        })
        .collect()
}

#[derive(Debug)]
struct Field {
    written: String,
    path: FieldPath,
}

#[derive(Debug)]
struct NoPlaceholders {
    tokens: Vec<String>,
    matcher: Matcher,
    fields: Option<Vec<Field>>,
    containers: Containers,
    message: Template,
    severity: Severity,
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(ctx.name, config)?;
    let name = ctx.name;
    if config.tokens.is_empty() || config.tokens.iter().any(String::is_empty) {
        return Err(BuildError::new(format!(
            "{name}: `tokens` must list at least one token, and no token may be empty"
        ))
        .at_key("tokens"));
    }
    let fold = !config.case_sensitive;
    let patterns = config.tokens.iter().map(|token| {
        if fold {
            fold_case(token)
        } else {
            token.clone()
        }
    });
    let automaton = AhoCorasick::new(patterns)
        .map_err(|err| BuildError::new(format!("{name}: tokens: {err}")).at_key("tokens"))?;
    let matcher = Matcher { automaton, fold };
    let fields = match config.fields {
        None => None,
        Some(fields) if fields.is_empty() => {
            return Err(BuildError::new(format!(
                "{name}: `fields` is empty; omit it to check the whole document"
            ))
            .at_key("fields"))
        }
        Some(fields) => Some(
            fields
                .into_iter()
                .map(|written| {
                    let path = FieldPath::parse(&written).map_err(|err| {
                        BuildError::new(format!("{name}: fields: {err}")).at_key("fields")
                    })?;
                    // (A field the document cannot have would never be checked.)
                    path.check_known(ctx, "fields", &written)?;
                    Ok(Field { written, path })
                })
                .collect::<Result<Vec<_>, BuildError>>()?,
        ),
    };
    let message = Template::parse(&config.message, &["field", "token"]).map_err(|mut err| {
        err.message = format!("{name}: {}", err.message);
        err.key = Some("message".to_owned());
        err
    })?;
    Ok(Compiled::Postprocessor(Arc::new(Step(Arc::new(
        NoPlaceholders {
            containers: config.containers,
            tokens: config.tokens,
            matcher,
            fields,
            message,
            severity: config.severity,
        },
    )))))
}

/// The pipeline step: the check, shared with the streaming sessions that
/// run it on each string as it completes.
#[derive(Debug)]
struct Step(Arc<NoPlaceholders>);

impl Postprocessor for Step {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        Ok(self.0.process(ctx))
    }

    fn early(&self) -> Early {
        Early::Strings(Arc::clone(&self.0) as Arc<dyn EarlyStrings>)
    }
}

/// Each string value as it completes, in document order, as [`process`](NoPlaceholders::process)
/// reads them: a leaf of the whole document, or the first offending leaf of a
/// listed field (`containers: python`: a field that is itself a string; the
/// items and keys of a container are judged at `finish()`).
impl EarlyStrings for NoPlaceholders {
    fn fields(&self) -> usize {
        self.fields.as_ref().map_or(0, Vec::len)
    }

    fn string(&self, path: &[Seg], value: &str, done: &mut [bool], out: &mut Vec<Issue>) {
        // (Read as the text streams in, outside any step: no deadline to
        // stop by; the scan is linear in the value.)
        let budget = &Budget::unlimited();
        let Some(fields) = &self.fields else {
            if let Some(token) = self.first_token(value, budget) {
                let pointer = pointer_of(path);
                out.push(self.issue(&pointer, token).at(pointer));
            }
            return;
        };
        let exact = self.containers == Containers::Python;
        let mut token = None;
        for (field, done) in fields.iter().zip(done) {
            if *done || !field.path.holds(path, exact) {
                continue;
            }
            let Some(token) = *token.get_or_insert_with(|| self.first_token(value, budget)) else {
                return;
            };
            *done = true;
            out.push(self.issue(&field.written, token).at(field.path.pointer()));
        }
    }
}

impl NoPlaceholders {
    /// Index of the first token (in config order) that `text` contains.
    fn first_token(&self, text: &str, budget: &Budget<'_>) -> Option<usize> {
        self.matcher.first_token(text, budget)
    }

    /// The first token found in the string leaves of `value`, in document order.
    fn first_token_in(&self, value: &Json, budget: &Budget<'_>) -> Option<usize> {
        if self.containers == Containers::Python {
            return self.first_token_python(value, budget);
        }
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Json::String(s) => {
                    if let Some(token) = self.first_token(s, budget) {
                        return Some(token);
                    }
                }
                Json::Array(items) => stack.extend(items.iter().rev()),
                Json::Object(map) => stack.extend(map.values().rev()),
                _ => {}
            }
        }
        None
    }

    /// Python's `token in value`: substring of a string, element of a list, key of
    /// a dict; nothing else holds a token.
    fn first_token_python(&self, value: &Json, budget: &Budget<'_>) -> Option<usize> {
        let equal = |token: &str, text: &str| self.matcher.equal(token, text);
        match value {
            Json::String(s) => self.first_token(s, budget),
            Json::Array(items) => self.tokens.iter().position(|t| {
                items
                    .iter()
                    .any(|item| item.as_str().is_some_and(|s| equal(t, s)))
            }),
            Json::Object(map) => self
                .tokens
                .iter()
                .position(|t| map.keys().any(|k| equal(t, k))),
            _ => None,
        }
    }

    fn issue(&self, field: &str, token: usize) -> Issue {
        let message = self.message.render(|var| match var {
            "field" => Some(field),
            "token" => Some(self.tokens[token].as_str()),
            _ => None,
        });
        let mut issue = Issue::error("", message).code(codes::PLACEHOLDER_FOUND);
        issue.severity = self.severity;
        issue
    }
}

impl NoPlaceholders {
    fn process(&self, ctx: &Context<'_>) -> PostOutput {
        let mut issues = Vec::new();
        if let Some(fields) = &self.fields {
            for field in fields {
                let token = field
                    .path
                    .lookup(ctx.json)
                    .and_then(|v| self.first_token_in(v, ctx.budget));
                if let Some(token) = token {
                    issues.push(self.issue(&field.written, token).at(field.path.pointer()));
                }
            }
        } else if ctx.json.is_null() {
            if let Some(token) = self.first_token(ctx.output, ctx.budget) {
                issues.push(self.issue("output", token));
            }
        } else {
            // Whole document, iteratively, in document order.
            let mut stack: Vec<(&Json, String)> = vec![(ctx.json, String::new())];
            while let Some((value, pointer)) = stack.pop() {
                match value {
                    Json::String(s) => {
                        if let Some(token) = self.first_token(s, ctx.budget) {
                            issues.push(self.issue(&pointer, token).at(pointer));
                        }
                    }
                    Json::Array(items) => {
                        for (index, item) in items.iter().enumerate().rev() {
                            stack.push((item, format!("{pointer}/{index}")));
                        }
                    }
                    Json::Object(map) => {
                        for (key, item) in map.iter().rev() {
                            stack.push((item, format!("{pointer}/{}", escape_pointer(key))));
                        }
                    }
                    _ => {}
                }
            }
        }
        PostOutput { issues, json: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_containers_follow_pythons_in() {
        let p = compile(&json!({"fields": ["readme"], "containers": "python"}));
        let check = |readme: Value| {
            let fixture = Fixture::new("", json!({ "readme": readme }), Value::Null);
            p.process(&fixture.ctx()).unwrap().issues.len()
        };
        assert_eq!(check(json!("x TODO y")), 1);
        assert_eq!(check(json!(["# tool", "TODO: usage"])), 0);
        assert_eq!(check(json!(["TODO"])), 1);
        assert_eq!(check(json!([["TODO"]])), 0);
        assert_eq!(check(json!({"TODO": "usage"})), 1);
        assert_eq!(check(json!({"usage": "TODO"})), 0);
        assert_eq!(check(json!(5)), 0);
    }
    use crate::builtins::test_support::{build_ctx, Fixture};
    use serde_json::json;

    fn compile(config: &Value) -> Arc<dyn Postprocessor> {
        crate::builtins::test_support::postprocessor(build, "no_placeholders", config)
    }

    fn run(
        rule: &Arc<dyn Postprocessor>,
        output: &str,
        json: Value,
    ) -> Vec<(String, Option<String>)> {
        let fixture = Fixture::new(output, json, Value::Null);
        rule.process(&fixture.ctx())
            .unwrap()
            .issues
            .into_iter()
            .map(|i| (i.message, i.path))
            .collect()
    }

    #[test]
    fn seed_rule_one_with_its_message() {
        let rule = compile(
            &json!({"fields": ["readme"], "message": "README contains unfilled placeholders"}),
        );
        for readme in [
            "# Tool\nTODO: usage",
            "Status: TBD",
            "FIXME later",
            "TODO TBD FIXME",
        ] {
            assert_eq!(
                run(&rule, "", json!({ "readme": readme })),
                [(
                    "README contains unfilled placeholders".to_owned(),
                    Some("/readme".to_owned())
                )]
            );
        }
        assert!(run(
            &rule,
            "",
            json!({"readme": "# Tool\nAll done. todo is fine in lower case"})
        )
        .is_empty());
        assert!(
            run(&rule, "", json!({"other": "TODO"})).is_empty(),
            "a missing field is not an issue"
        );
        assert!(run(&rule, "", json!({"readme": 42})).is_empty());
    }

    #[test]
    fn default_message_names_field_and_first_token_in_token_order() {
        let rule = compile(&json!({"fields": ["docs.readme", "/notes"]}));
        let issues = run(
            &rule,
            "",
            json!({"docs": {"readme": "FIXME and TODO"}, "notes": ["ok", {"x": "TBD"}, "TODO"]}),
        );
        assert_eq!(
            issues,
            [
                (
                    "`docs.readme` contains an unfilled placeholder (TODO)".to_owned(),
                    Some("/docs/readme".to_owned())
                ),
                (
                    "`/notes` contains an unfilled placeholder (TBD)".to_owned(),
                    Some("/notes".to_owned())
                ),
            ]
        );
        let issues = rule
            .process(&Fixture::new("", json!({"notes": "TODO"}), Value::Null).ctx())
            .unwrap()
            .issues;
        assert_eq!(issues[0].severity, Severity::Error);
        assert_eq!(issues[0].rule, "");
    }

    #[test]
    fn whole_document_reports_each_string_leaf_in_order() {
        let rule = compile(&Value::Null);
        let issues = run(
            &rule,
            "",
            json!({"title": "TBD", "n": 1, "a/b": {"list": ["fine", "TODO x", null], "t~": "FIXME"}}),
        );
        let paths: Vec<Option<&str>> = issues.iter().map(|(_, p)| p.as_deref()).collect();
        assert_eq!(
            paths,
            [Some("/title"), Some("/a~1b/list/1"), Some("/a~1b/t~0")]
        );
        assert_eq!(
            issues[1].0,
            "`/a~1b/list/1` contains an unfilled placeholder (TODO)"
        );
    }

    #[test]
    fn raw_output_is_checked_when_nothing_was_extracted() {
        let rule = compile(&Value::Null);
        assert_eq!(
            run(&rule, "Plan: FIXME", Value::Null),
            [(
                "`output` contains an unfilled placeholder (FIXME)".to_owned(),
                None
            )]
        );
        assert!(run(&rule, "All done", Value::Null).is_empty());
    }

    #[test]
    fn case_insensitive_tokens_and_severity() {
        let rule = compile(
            &json!({"tokens": ["todo", "xxx"], "case_sensitive": false, "severity": "warning", "message": "{token}@{field}"}),
        );
        let fixture = Fixture::new("", json!({"a": "ToDo: write", "b": "XXX"}), Value::Null);
        let issues = rule.process(&fixture.ctx()).unwrap().issues;
        assert_eq!(issues.len(), 2);
        assert_eq!(issues[0].message, "todo@/a");
        assert_eq!(issues[1].message, "xxx@/b");
        assert!(issues.iter().all(|i| i.severity == Severity::Warning));
        let sensitive = compile(&json!({"tokens": ["todo"]}));
        assert!(run(&sensitive, "", json!({"a": "TODO"})).is_empty());
    }

    #[test]
    fn bad_configs_are_build_errors() {
        let ctx = build_ctx("no_placeholders");
        for bad in [
            json!({"tokens": []}),
            json!({"tokens": [""]}),
            json!({"fields": []}),
            json!({"fields": ["a..b"]}),
            json!({"message": "{feld}"}),
            json!({"severity": "fatal"}),
        ] {
            assert!(build(&bad, &ctx).is_err(), "{bad}");
        }
        let err = build(&json!({"token": ["X"]}), &ctx).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("tokens"));
        let err = build(&json!({"message": "{feld}"}), &ctx).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("{field}"));
    }

    #[test]
    fn the_first_token_in_config_order_wins_even_when_overlapped() {
        let p = compile(&json!({"tokens": ["TODOS", "DOS", "TODO"], "message": "{token}"}));
        let found = |text: &str| {
            let fixture = Fixture::new("", json!({ "a": text }), Value::Null);
            p.process(&fixture.ctx())
                .unwrap()
                .issues
                .first()
                .map(|i| i.message.clone())
        };
        assert_eq!(found("x TODOS y").as_deref(), Some("TODOS"));
        assert_eq!(found("x TODO y DOS").as_deref(), Some("DOS"));
        assert_eq!(found("x TODO y").as_deref(), Some("TODO"));
        assert_eq!(found("nothing"), None);
    }

    #[test]
    fn case_insensitive_matching_folds_unicode_simply() {
        let p = compile(&json!({"tokens": ["tbd", "Σtop"], "case_sensitive": false}));
        let count = |text: &str| {
            let fixture = Fixture::new("", json!({ "a": text }), Value::Null);
            p.process(&fixture.ctx()).unwrap().issues.len()
        };
        assert_eq!(count("TBD"), 1);
        assert_eq!(count("Tbd"), 1);
        assert_eq!(count("ςTOP"), 1);
        assert_eq!(count("t b d"), 0);
    }

    #[test]
    fn a_hundred_thousand_tokens_cost_one_pass() {
        let tokens: Vec<String> = (0..100_000)
            .map(|i| format!("PLACEHOLDER-{i:06}"))
            .collect();
        let p = compile(&json!({ "tokens": tokens }));
        let text = "lorem ipsum ".repeat(100_000) + "PLACEHOLDER-099999";
        let fixture = Fixture::new("", json!({ "a": text }), Value::Null);
        let issues = p.process(&fixture.ctx()).unwrap().issues;
        assert_eq!(issues.len(), 1);
        assert!(issues[0].message.contains("PLACEHOLDER-099999"));
    }
}
