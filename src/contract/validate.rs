//! Checking extracted JSON against the contract: required fields, types,
//! allowed values, sentence counts, the kind field and its coercion.

use serde_json::{Map, Value};

use crate::report::Issue;
use crate::text::{count_sentences_with, escape_pointer, json_type_name as type_name};

use super::{
    article, display_value, sentences_phrase, types_phrase, Contract, FieldRule, JsonType,
    OnViolation, RAW_FALLBACK_KEY,
};

impl Contract {
    /// Validates `json` against the contract. Returns the issues and, when the
    /// kind was coerced, the corrected JSON.
    /// `output` is the raw text, to say where its JSON broke when none was read.
    pub fn validate(&self, json: &Value, output: &str) -> (Vec<Issue>, Option<Value>) {
        let mut issues = Vec::new();
        let Value::Object(object) = json else {
            let message = if json.is_null() {
                match crate::extract::parse_failure(output) {
                    Some(why) => format!("the output's JSON could not be read: {why}"),
                    None => "the output contains no JSON object".to_owned(),
                }
            } else {
                format!("expected a JSON object, got {}", type_name(json))
            };
            issues.push(Issue::error("", message).at(""));
            return (issues, None);
        };
        for field in &self.fields {
            match object.get(&field.name) {
                None => {
                    if field.spec.required {
                        issues.push(
                            Issue::error("", format!("missing required field `{}`", field.name))
                                .at(field.pointer.clone()),
                        );
                    }
                }
                Some(value) => self.check_field(field, value, &mut issues),
            }
        }
        if !self.additional_fields {
            for key in object.keys() {
                if key != RAW_FALLBACK_KEY && !self.fields.iter().any(|f| &f.name == key) {
                    issues.push(
                        Issue::error("", format!("unexpected field `{key}`"))
                            .at(format!("/{}", escape_pointer(key))),
                    );
                }
            }
        }
        let coerced = self.coerce_kind(object, &mut issues);
        (issues, coerced)
    }

    fn check_field(&self, field: &FieldRule, value: &Value, issues: &mut Vec<Issue>) {
        let name = &field.name;
        let mut fail =
            |message: String| issues.push(Issue::error("", message).at(field.pointer.clone()));
        if !field.types.is_empty() && !field.types.iter().any(|t| t.accepts(value)) {
            let (wanted, got) = (types_phrase(&field.types), type_name(value));
            fail(format!("`{name}` must be {wanted}, got {got}"));
            return;
        }
        let spec = &field.spec;
        if let Some(number) = value.as_f64() {
            if let Some(min) = spec.min.filter(|min| number < *min) {
                fail(format!("`{name}` must be at least {min}, got {number}"));
            }
            if let Some(max) = spec.max.filter(|max| number > *max) {
                fail(format!("`{name}` must be at most {max}, got {number}"));
            }
        }
        if let Some(allowed) = &spec.one_of {
            if !allowed.iter().any(|a| same_value(a, value)) {
                let list: Vec<String> = allowed.iter().map(display_value).collect();
                fail(format!(
                    "`{name}` must be one of: {}, got {value}",
                    list.join(" | ")
                ));
            }
        }
        if let Some(length) = length_of(value) {
            if let Some(min) = spec.min_length.filter(|min| length < *min) {
                fail(format!(
                    "`{name}` must have a length of at least {min}, got {length}"
                ));
            }
            if let Some(max) = spec.max_length.filter(|max| length > *max) {
                fail(format!(
                    "`{name}` must have a length of at most {max}, got {length}"
                ));
            }
        }
        if let (Some((lo, hi)), Value::String(text)) = (field.sentences, value) {
            let count = count_sentences_with(text, &self.sentence_abbreviations);
            if count < lo || count > hi {
                fail(format!(
                    "`{name}` must be {}, got {count}",
                    sentences_phrase(lo, hi)
                ));
            }
        }
        check_members(field, value, issues);
    }

    fn coerce_kind(&self, object: &Map<String, Value>, issues: &mut Vec<Issue>) -> Option<Value> {
        let may_emit = self.may_emit.as_ref()?;
        let kind = object.get(&self.kind_field)?;
        let Value::String(kind) = kind else {
            return None;
        };
        if may_emit.iter().any(|m| m == kind) {
            return None;
        }
        let at = format!("/{}", escape_pointer(&self.kind_field));
        if self.on_violation == OnViolation::Reject {
            issues.push(
                Issue::error(
                    "",
                    format!(
                        "{} \"{kind}\" is not allowed (may_emit: {})",
                        self.kind_field,
                        may_emit.join(" | ")
                    ),
                )
                .at(at),
            );
            return None;
        }
        let replacement = self.fallback_kind()?;
        issues.push(
            Issue::error(
                "",
                format!(
                    "{} \"{kind}\" is not allowed (may_emit: {}); replaced with \"{replacement}\"",
                    self.kind_field,
                    may_emit.join(" | ")
                ),
            )
            .at(at),
        );
        let mut fixed = object.clone();
        fixed.insert(
            self.kind_field.clone(),
            Value::String(replacement.to_owned()),
        );
        Some(Value::Object(fixed))
    }
}

/// Equality for `enum`: JSON equality, except that numbers compare by value (2 == 2.0).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => {
            (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

/// The length `min_length` and `max_length` bound: characters of a string,
/// items of an array, members of an object.
fn length_of(value: &Value) -> Option<usize> {
    match value {
        Value::String(s) => Some(s.chars().count()),
        Value::Array(a) => Some(a.len()),
        Value::Object(o) => Some(o.len()),
        _ => None,
    }
}

/// `values:` (the type of every member of an object) and `items:` (of every
/// item of an array), each wrong one reported at its own path.
fn check_members(field: &FieldRule, value: &Value, issues: &mut Vec<Issue>) {
    let name = &field.name;
    let spec = &field.spec;
    let wrong = |expected: JsonType, item: &Value| {
        (!expected.accepts(item))
            .then(|| format!("{}, got {}", article(expected.as_str()), type_name(item)))
    };
    if let (Some(expected), Value::Object(map)) = (spec.values, value) {
        for (key, item) in map {
            if let Some(what) = wrong(expected, item) {
                let at = format!("{}/{}", field.pointer, escape_pointer(key));
                issues.push(Issue::error("", format!("`{name}.{key}` must be {what}")).at(at));
            }
        }
    }
    if let (Some(expected), Value::Array(items)) = (spec.items, value) {
        for (index, item) in items.iter().enumerate() {
            if let Some(what) = wrong(expected, item) {
                let at = format!("{}/{index}", field.pointer);
                issues.push(Issue::error("", format!("`{name}[{index}]` must be {what}")).at(at));
            }
        }
    }
}
