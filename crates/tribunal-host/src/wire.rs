//! The result shapes an extension (a Rhai script or a native plugin) returns, and
//! their validation. Both hosts turn what the extension produced into a
//! [`Json`] value and hand it here, so a script and a plugin that return the
//! same thing get the same outcome and the same error messages.
//!
//! - metric: a number in [0, 1], a bool (`true` = 1, `false` = 0), or an object
//!   `{ score, issues?, details? }`, or `{ skip: REASON, issues?, details? }` for
//!   a record the metric does not apply to (its weight leaves the score);
//! - postprocessor: an array of issues, or an object `{ issues?, json? }` (`json`
//!   replaces the extracted JSON);
//! - strategy: a number in [0, 1];
//! - an issue: a string (an `error` with that message) or an object
//!   `{ message, severity?, path?, rule?, code? }` with `severity` one of `error`,
//!   `warning`, `info` (default `error`), `path` a JSON pointer, `rule`
//!   defaulting to the component's name, and `code` the component's own code
//!   for the finding, namespaced by the component's name (`NAME.CODE`; without
//!   one, the code is `NAME`).
//!
//! A value that breaks these rules is an `ERROR` of kind `plugin-reply` (the
//! script host turns it into `script`).
//!
//! Every error message names the component (`who`, e.g. "script \`name\`"), so a
//! record that becomes `ERROR` says which extension produced the bad value; issues
//! without a `rule` of their own get `rule`, the component's name in the pack.

use crate::json::{Json, Object};

use crate::component::{EvalError, MetricOutput, PostOutput};
use crate::report::{ErrorKind, Issue, Severity};
use crate::text::json_type_name;

/// A metric's return value.
pub fn metric_output(who: &str, rule: &str, value: Json) -> Result<MetricOutput, EvalError> {
    match value {
        Json::Object(mut map) => {
            check_keys(who, "metric result", &map, &["score", "issues", "details", "skip"])?;
            let skipped = match map.swap_remove("skip") {
                None => None,
                Some(Json::String(reason)) if !reason.trim().is_empty() => Some(reason.into_string()),
                Some(other) => {
                    return Err(EvalError::new(
                        ErrorKind::PluginReply,
                        format!(
                            "{who}: `skip` must say why the metric does not apply (a non-empty string), got {}",
                            describe(&other)
                        ),
                    ))
                }
            };
            let score = match (map.swap_remove("score"), &skipped) {
                (Some(_), Some(_)) => {
                    return Err(EvalError::new(
                        ErrorKind::PluginReply,
                        format!("{who}: a metric result has a `score` or a `skip`, not both"),
                    ))
                }
                (Some(score), None) => score_value(who, "`score`", &score)?,
                (None, Some(_)) => 0.0,
                (None, None) => {
                    return Err(EvalError::new(
                        ErrorKind::PluginReply,
                        format!("{who}: a metric result object needs a `score` (or a `skip`, with why the metric does not apply)"),
                    ))
                }
            };
            let issues = match map.swap_remove("issues") {
                Some(issues) => issue_list(who, rule, issues)?,
                None => Vec::new(),
            };
            let details = map.swap_remove("details").unwrap_or(Json::Null).into();
            Ok(MetricOutput {
                score,
                issues,
                details,
                skipped,
            })
        }
        Json::Null => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!(
                "{who}: the metric returned nothing (`()` or null); return a score (a number in [0, 1] or a bool), an object {{ score, issues, details }}, or, when the metric does not apply to the record, {{ skip: REASON }} (in Rhai `skip(REASON)`)"
            ),
        )),
        other => Ok(MetricOutput::score(score_value(who, "the score", &other)?)),
    }
}

/// A postprocessor's return value.
pub fn post_output(who: &str, rule: &str, value: Json) -> Result<PostOutput, EvalError> {
    match value {
        Json::Array(_) => Ok(PostOutput {
            issues: issue_list(who, rule, value)?,
            json: None,
        }),
        Json::Null => Ok(PostOutput::default()),
        Json::Object(mut map) => {
            check_keys(who, "postprocessor result", &map, &["issues", "json"])?;
            let issues = match map.swap_remove("issues") {
                Some(issues) => issue_list(who, rule, issues)?,
                None => Vec::new(),
            };
            Ok(PostOutput {
                issues,
                json: map.swap_remove("json"),
            })
        }
        other => Err(EvalError::new(ErrorKind::PluginReply, format!(
            "{who}: a postprocessor must return an array of issues or an object {{ issues, json }}, got {}",
            describe(&other)
        ))),
    }
}

/// A strategy's return value.
pub fn similarity(who: &str, value: &Json) -> Result<f64, EvalError> {
    match value {
        Json::Number(_) => score_value(who, "the similarity", value),
        other => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!(
                "{who}: a strategy must return a number in [0, 1], got {}",
                describe(other)
            ),
        )),
    }
}

/// Checks a score: a finite number within [0, 1], or a bool.
pub fn score_value(who: &str, what: &str, value: &Json) -> Result<f64, EvalError> {
    let score = match value {
        Json::Bool(b) => return Ok(if *b { 1.0 } else { 0.0 }),
        Json::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        other => {
            return Err(EvalError::new(
                ErrorKind::PluginReply,
                format!(
                    "{who}: {what} must be a number in [0, 1] or a bool, got {}",
                    describe(other)
                ),
            ))
        }
    };
    check_score(who, what, score)
}

/// Checks a score that is already a float (NaN and infinities included).
pub fn check_score(who: &str, what: &str, score: f64) -> Result<f64, EvalError> {
    if score.is_nan() {
        return Err(EvalError::new(
            ErrorKind::PluginReply,
            format!("{who}: {what} is NaN; it must be a number in [0, 1]"),
        ));
    }
    if !(0.0..=1.0).contains(&score) {
        return Err(EvalError::new(
            ErrorKind::PluginReply,
            format!("{who}: {what} {score} is outside [0, 1]"),
        ));
    }
    Ok(score)
}

/// Checks that each issue that names a turn (`turn`) names one of the
/// record's (`ctx.turns`).
pub fn turns_in_range(
    who: &str,
    issues: &[Issue],
    ctx: &crate::component::Context<'_>,
) -> Result<(), EvalError> {
    let count = ctx.turns.map_or(0, <[_]>::len);
    match issues
        .iter()
        .enumerate()
        .find(|(_, i)| i.turn.is_some_and(|t| t >= count))
    {
        None => Ok(()),
        Some((index, issue)) => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!(
                "{who}: issue {index}: `turn` is {}, but the record has {}",
                issue.turn.unwrap_or_default(),
                match count {
                    0 => "no transcript (`messages`)".to_owned(),
                    1 => "1 turn (0)".to_owned(),
                    n => format!("{n} turns (0 to {})", n - 1),
                }
            ),
        )),
    }
}

/// An array of issues (strings or objects).
pub fn issue_list(who: &str, rule: &str, value: Json) -> Result<Vec<Issue>, EvalError> {
    let Json::Array(items) = value else {
        return Err(EvalError::new(
            ErrorKind::PluginReply,
            format!("{who}: `issues` must be an array, got {}", describe(&value)),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| issue(who, rule, i, item))
        .collect()
}

fn issue(who: &str, rule: &str, index: usize, value: Json) -> Result<Issue, EvalError> {
    // The component's own codes are namespaced by its name in the pack.
    let component = rule;
    let rule = rule.to_owned();
    match value {
        Json::String(message) => {
            Ok(Issue::error(rule, message.into_string()).code(component.to_owned()))
        }
        Json::Object(mut map) => {
            let at = format!("issue {index}");
            check_keys(
                who,
                &at,
                &map,
                &["message", "severity", "path", "rule", "code", "turn"],
            )?;
            let message = match map.swap_remove("message") {
                Some(Json::String(m)) => m.into_string(),
                Some(other) => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at}: `message` must be a string, got {}",
                        describe(&other)
                    )))
                }
                None => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at} has no `message`"
                    )))
                }
            };
            let severity = match map.swap_remove("severity") {
                None | Some(Json::Null) => Severity::Error,
                Some(Json::String(s)) => match s.to_ascii_lowercase().as_str() {
                    "error" => Severity::Error,
                    "warning" | "warn" => Severity::Warning,
                    "info" => Severity::Info,
                    _ => {
                        return Err(EvalError::new(ErrorKind::PluginReply, format!(
                            "{who}: {at}: unknown severity `{s}` (expected error, warning or info)"
                        )))
                    }
                },
                Some(other) => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at}: `severity` must be a string, got {}",
                        describe(&other)
                    )))
                }
            };
            let path = path_of(who, &at, map.swap_remove("path"))?;
            let rule = match map.swap_remove("rule") {
                None | Some(Json::Null) => rule,
                Some(Json::String(r)) => r.into_string(),
                Some(other) => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at}: `rule` must be a string, got {}",
                        describe(&other)
                    )))
                }
            };
            let code = match map.swap_remove("code") {
                None | Some(Json::Null) => component.to_owned(),
                Some(Json::String(code)) if crate::codes::is_custom_code(&code) => {
                    format!("{component}.{code}")
                }
                Some(Json::String(code)) => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at}: `code` must be lower-case letters, digits, `-` and `.` (at most 64 bytes, not starting or ending with `.`), got {:?}",
                        crate::text::prefix_chars(&code, 80)
                    )))
                }
                Some(other) => {
                    return Err(EvalError::new(ErrorKind::PluginReply, format!(
                        "{who}: {at}: `code` must be a string, got {}",
                        describe(&other)
                    )))
                }
            };
            let turn = turn_of(who, &at, map.swap_remove("turn"))?;
            Ok(Issue {
                rule,
                code: code.into(),
                severity,
                message,
                path,
                turn,
            })
        }
        other => Err(EvalError::new(ErrorKind::PluginReply, format!(
            "{who}: issue {index} must be a string or an object {{ message, severity, path }}, got {}",
            describe(&other)
        ))),
    }
}

/// An issue's `path`: a JSON pointer, or none.
fn path_of(who: &str, at: &str, path: Option<Json>) -> Result<Option<String>, EvalError> {
    match path {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(p)) if p.is_empty() || p.starts_with('/') => Ok(Some(p.into_string())),
        Some(Json::String(p)) => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!(
                "{who}: {at}: `path` must be a JSON pointer (\"\" or starting with `/`), got \"{p}\""
            ),
        )),
        Some(other) => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!("{who}: {at}: `path` must be a string, got {}", describe(&other)),
        )),
    }
}

/// An issue's `turn`: the index of a turn in `ctx.turns`, or none.
fn turn_of(who: &str, at: &str, turn: Option<Json>) -> Result<Option<usize>, EvalError> {
    match turn {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) if n.as_u64().is_some() => Ok(Some(
            usize::try_from(n.as_u64().unwrap_or_default()).unwrap_or(usize::MAX),
        )),
        Some(other) => Err(EvalError::new(
            ErrorKind::PluginReply,
            format!(
                "{who}: {at}: `turn` must be the index of a turn in `ctx.turns` (an integer ≥ 0), got {}",
                describe(&other)
            ),
        )),
    }
}

fn check_keys(who: &str, what: &str, map: &Object, allowed: &[&str]) -> Result<(), EvalError> {
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        let expected = allowed
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(EvalError::new(
            ErrorKind::PluginReply,
            format!("{who}: {what} has an unknown key `{key}` (expected {expected})"),
        ));
    }
    Ok(())
}

fn describe(value: &Json) -> String {
    if value.is_null() {
        // A script that returned `()` (or nothing).
        return "null (nothing)".to_owned();
    }
    let text = value.to_string();
    let shown = crate::text::prefix_chars(&text, 60);
    if shown.len() < text.len() {
        format!("{} {shown}...", json_type_name(value))
    } else {
        format!("{} {shown}", json_type_name(value))
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::json::json;

    const WHO: &str = "script `fields`";
    const RULE: &str = "fields";

    #[test]
    fn metric_shapes() {
        assert_eq!(metric_output(WHO, RULE, json!(0.5)).unwrap().score, 0.5);
        assert_eq!(metric_output(WHO, RULE, json!(true)).unwrap().score, 1.0);
        assert_eq!(metric_output(WHO, RULE, json!(false)).unwrap().score, 0.0);
        assert_eq!(metric_output(WHO, RULE, json!(1)).unwrap().score, 1.0);
        let out = metric_output(
            WHO,
            RULE,
            json!({"score": 0.25, "issues": ["bad", {"message": "meh", "severity": "warning", "path": "/a"}], "details": {"k": 1}}),
        )
        .unwrap();
        assert_eq!(out.score, 0.25);
        assert_eq!(out.details.to_value(), json!({"k": 1}));
        assert_eq!(out.issues[0], Issue::error("fields", "bad").code("fields"));
        assert_eq!(
            out.issues[1],
            Issue::warning("fields", "meh").at("/a").code("fields")
        );
    }

    #[test]
    fn bad_metric_results_name_the_component() {
        for (value, expected) in [
            (json!(1.5), "script `fields`: the score 1.5 is outside [0, 1]"),
            (json!(-0.1), "script `fields`: the score -0.1 is outside [0, 1]"),
            (
                json!("high"),
                "script `fields`: the score must be a number in [0, 1] or a bool, got a string \"high\"",
            ),
            (
                json!({"issues": []}),
                "script `fields`: a metric result object needs a `score` (or a `skip`, with why the metric does not apply)",
            ),
            (
                json!({"score": 1, "scroe": 2}),
                "script `fields`: metric result has an unknown key `scroe` (expected `score`, `issues`, `details`, `skip`)",
            ),
            (
                json!({"score": 1, "issues": [{"message": "x", "severity": "fatal"}]}),
                "script `fields`: issue 0: unknown severity `fatal` (expected error, warning or info)",
            ),
            (
                json!({"score": 1, "issues": [{"message": "x", "path": "a"}]}),
                "script `fields`: issue 0: `path` must be a JSON pointer (\"\" or starting with `/`), got \"a\"",
            ),
            (
                json!({"score": 1, "issues": [3]}),
                "script `fields`: issue 0 must be a string or an object { message, severity, path }, got a number 3",
            ),
        ] {
            assert_eq!(metric_output(WHO, RULE, value).unwrap_err().message, expected);
        }
        assert_eq!(
            check_score(WHO, "the score", f64::NAN).unwrap_err().message,
            "script `fields`: the score is NaN; it must be a number in [0, 1]"
        );
    }

    #[test]
    fn postprocessor_shapes() {
        let out = post_output(WHO, RULE, json!(["a"])).unwrap();
        assert_eq!(out.issues, [Issue::error("fields", "a").code("fields")]);
        assert_eq!(out.json, None);
        let out = post_output(WHO, RULE, json!({"json": {"x": 1}})).unwrap();
        assert!(out.issues.is_empty());
        assert_eq!(out.json, Some(crate::json::json!({"x": 1})));
        assert_eq!(
            post_output(WHO, RULE, Json::Null).unwrap(),
            PostOutput::default()
        );
        assert_eq!(
            post_output(WHO, RULE, json!(2)).unwrap_err().message,
            "script `fields`: a postprocessor must return an array of issues or an object { issues, json }, got a number 2"
        );
    }

    #[test]
    fn strategy_shape() {
        assert_eq!(similarity(WHO, &json!(0.9)).unwrap(), 0.9);
        assert_eq!(
            similarity(WHO, &json!(true)).unwrap_err().message,
            "script `fields`: a strategy must return a number in [0, 1], got a boolean true"
        );
        assert_eq!(
            similarity(WHO, &json!(2)).unwrap_err().message,
            "script `fields`: the similarity 2 is outside [0, 1]"
        );
    }
}
