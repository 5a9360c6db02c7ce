//! Matchers in an expected call's arguments (`expected.tool_calls`): a map of
//! one key that says how the argument may be, instead of the one value it must
//! equal (the syntax pack tests use for their matchers):
//!
//! - `{any_of: [v1, v2, …]}`: equal to any of them under the argument's strategy;
//! - `{optional: M}`: may be left out; when passed, it must match `M`;
//! - `{equals: V}`: the value `V` itself, for the rare map whose single key is one
//!   of these words.
//!
//! Matchers nest: inside objects and lists, and as members of `any_of`. `null`
//! is a value: an argument passed as `null` is passed.

use crate::component::EvalError;
use crate::json::Json;
use crate::report::ErrorKind;

/// The matcher a value is, if it is one.
#[derive(Debug, Clone, Copy)]
pub(super) enum Matcher<'e> {
    AnyOf(&'e [Json]),
    Optional(&'e Json),
    Equals(&'e Json),
}

/// The matcher `value` is: a map of one key `any_of`, `optional` or `equals`.
pub(super) fn matcher(value: &Json) -> Option<Matcher<'_>> {
    let object = value.as_object().filter(|object| object.len() == 1)?;
    let (key, inner) = object.iter().next()?;
    match key.as_str() {
        "any_of" => Some(Matcher::AnyOf(
            inner.as_array().map_or(&[], |a| a.as_slice()),
        )),
        "optional" => Some(Matcher::Optional(inner)),
        "equals" => Some(Matcher::Equals(inner)),
        _ => None,
    }
}

/// Whether `value` holds a matcher anywhere.
pub(super) fn has_matcher(value: &Json) -> bool {
    if matcher(value).is_some() {
        return true;
    }
    match value {
        Json::Array(items) => items.iter().any(has_matcher),
        Json::Object(members) => members.values().any(has_matcher),
        _ => false,
    }
}

/// What is wrong with the matchers in `value` (an expected argument at
/// `place`), for the record's input error: an `any_of` that is not a
/// non-empty list. (Every record's expected calls are checked: the places
/// are written only when something is wrong.)
pub(super) fn check(value: &Json, place: &str) -> Result<(), EvalError> {
    if well_formed(value) {
        return Ok(());
    }
    located(value, place)
}

/// Whether every `any_of` in `value` is a non-empty list.
fn well_formed(value: &Json) -> bool {
    match matcher(value) {
        Some(Matcher::AnyOf(members)) => {
            matches!(
                value.as_object().and_then(|o| o.get("any_of")),
                Some(Json::Array(_))
            ) && !members.is_empty()
                && members.iter().all(well_formed)
        }
        Some(Matcher::Optional(inner)) => well_formed(inner),
        Some(Matcher::Equals(_)) => true,
        None => match value {
            Json::Array(items) => items.iter().all(well_formed),
            Json::Object(members) => members.values().all(well_formed),
            _ => true,
        },
    }
}

/// [`check`]'s error, at the place of the first malformed matcher.
fn located(value: &Json, place: &str) -> Result<(), EvalError> {
    let bad = |what: &str| {
        Err(EvalError::new(
            ErrorKind::Input,
            format!("`{place}`: {what}"),
        ))
    };
    match matcher(value) {
        Some(Matcher::AnyOf(members)) => {
            match value.as_object().and_then(|o| o.get("any_of")) {
                Some(Json::Array(_)) if !members.is_empty() => {}
                Some(Json::Array(_)) => return bad("`any_of` needs at least one value"),
                _ => return bad("`any_of` takes a list of values"),
            }
            for (index, member) in members.iter().enumerate() {
                located(member, &format!("{place}/any_of/{index}"))?;
            }
            Ok(())
        }
        Some(Matcher::Optional(inner)) => located(inner, &format!("{place}/optional")),
        // What `equals` holds is a value, matchers' words and all.
        Some(Matcher::Equals(_)) => Ok(()),
        None => match value {
            Json::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(index, item)| located(item, &format!("{place}/{index}"))),
            Json::Object(members) => members.iter().try_for_each(|(name, member)| {
                located(
                    member,
                    &format!("{place}/{}", crate::json::escape_pointer(name)),
                )
            }),
            _ => Ok(()),
        },
    }
}

/// How well `actual` (`None`: not passed) matches `expected`, a value or a
/// matcher, in [0, 1]: the values `expected` holds are compared with `leaf`
/// (the argument's strategy); `any_of` takes its best member; a container
/// holding matchers is compared member by member (the same names, but an
/// `optional` one may be missing) or item by item, and is as good as its
/// worst part.
pub(super) fn score(
    expected: &Json,
    actual: Option<&Json>,
    leaf: &mut dyn FnMut(&Json, &Json) -> Result<f64, EvalError>,
) -> Result<f64, EvalError> {
    match (matcher(expected), actual) {
        (Some(Matcher::Optional(_)), None) => Ok(1.0),
        (_, None) => Ok(0.0),
        (Some(Matcher::Optional(inner)), Some(actual)) => score(inner, Some(actual), leaf),
        (Some(Matcher::Equals(value)), Some(actual)) => leaf(value, actual),
        (Some(Matcher::AnyOf(members)), Some(actual)) => {
            let mut best: f64 = 0.0;
            for member in members {
                best = best.max(score(member, Some(actual), leaf)?);
                if best >= 1.0 {
                    break;
                }
            }
            Ok(best)
        }
        (None, Some(actual)) if !has_matcher(expected) => leaf(expected, actual),
        (None, Some(actual)) => match (expected, actual) {
            (Json::Array(want), Json::Array(got)) if want.len() == got.len() => {
                let mut worst: f64 = 1.0;
                for (want, got) in want.iter().zip(got.iter()) {
                    worst = worst.min(score(want, Some(got), leaf)?);
                }
                Ok(worst)
            }
            (Json::Object(want), Json::Object(got)) => {
                if got.keys().any(|name| want.get(name).is_none()) {
                    return Ok(0.0);
                }
                let mut worst: f64 = 1.0;
                for (name, want) in want.iter() {
                    worst = worst.min(score(want, got.get(name), leaf)?);
                }
                Ok(worst)
            }
            _ => Ok(0.0),
        },
    }
}

/// `expected` as a message shows it: a matcher in words (`"NY" or "New
/// York"`), a value as JSON.
pub(super) fn describe(expected: &Json) -> String {
    match matcher(expected) {
        Some(Matcher::AnyOf(members)) => {
            let each: Vec<String> = members.iter().map(describe).collect();
            format!("any of {}", each.join(" | "))
        }
        Some(Matcher::Optional(inner)) => format!("{} (or none)", describe(inner)),
        Some(Matcher::Equals(value)) => value.to_string(),
        None => expected.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    /// Whether `actual` (`None`: left out) matches `expected`, values equal
    /// by value.
    fn matches(expected: &Json, actual: Option<&Json>) -> bool {
        let mut equal =
            |a: &Json, b: &Json| Ok(f64::from(u8::from(crate::decimal::equal_values(a, b))));
        score(expected, actual, &mut equal).unwrap() >= 1.0
    }

    #[test]
    fn matchers_match_as_the_issue_says_and_nest() {
        let yes = |expected: &Json, actual: Json| matches(expected, Some(&actual));
        let ny = json!({"any_of": ["NY", "New York"]});
        assert!(yes(&ny, json!("NY")));
        assert!(yes(&ny, json!("New York")));
        assert!(!yes(&ny, json!("Boston")));
        assert!(!matches(&ny, None));
        let optional = json!({"optional": {"any_of": [1, 2]}});
        assert!(matches(&optional, None));
        assert!(yes(&optional, json!(2.0)));
        assert!(!yes(&optional, json!(3)));
        assert!(!yes(&optional, json!(null)), "null is passed, not left out");
        assert!(!matches(&json!(null), None));
        let literal = json!({"equals": {"optional": 1}});
        assert!(yes(&literal, json!({"optional": 1})));
        assert!(!matches(&literal, None));
        let nested = json!({"city": {"any_of": ["NY", "New York"]}, "zip": {"optional": "10001"}});
        assert!(yes(&nested, json!({"city": "NY"})));
        assert!(yes(&nested, json!({"city": "NY", "zip": "10001"})));
        assert!(!yes(&nested, json!({"city": "NY", "extra": 1})));
        assert!(!yes(&nested, json!({"zip": "10001"})));
        let list = json!([{"any_of": [1, 2]}, 3]);
        assert!(yes(&list, json!([2, 3])));
        assert!(!yes(&list, json!([2])));
        assert!(!yes(&list, json!([2, 4])));
        let inside_any = json!({"any_of": [{"a": {"any_of": ["x", "y"]}}, "z"]});
        assert!(yes(&inside_any, json!({"a": "y"})));
        assert!(yes(&inside_any, json!("z")));
    }

    #[test]
    fn a_malformed_matcher_is_the_record_s_input_error_at_its_place() {
        let err = check(
            &json!({"a": {"any_of": "NY"}}),
            "expected.tool_calls/0/arguments",
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Input);
        assert!(err.message.contains("arguments/a"), "{}", err.message);
        assert!(err.message.contains("takes a list"), "{}", err.message);
        let err = check(&json!({"optional": {"any_of": []}}), "x").unwrap_err();
        assert!(err.message.contains("at least one"), "{}", err.message);
        check(&json!({"equals": {"any_of": 1}}), "x").unwrap();
        assert_eq!(
            describe(&json!({"optional": {"any_of": ["a", 1]}})),
            "any of \"a\" | 1 (or none)"
        );
    }
}
