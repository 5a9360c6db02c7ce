//! Checking extracted JSON against the contract: required fields, types,
//! allowed values, sentence counts, the kind field and its coercion.

use crate::json::{escape_pointer, Json, Object};

use crate::codes;
use crate::report::Issue;
use crate::text::{count_sentences_with, json_type_name as type_name};

use super::{
    article, display_value, sentences_phrase, types_phrase, Contract, FieldRule, JsonType,
    OnViolation, RAW_FALLBACK_KEY,
};

impl Contract {
    /// Validates `json` against the contract. Returns the issues and, when the
    /// kind was coerced, the corrected JSON.
    /// `output` is the raw text, to say where its JSON broke when none was read.
    pub fn validate(&self, json: &Json, output: &str) -> (Vec<Issue>, Option<Json>) {
        let mut issues = Vec::new();
        let Json::Object(object) = json else {
            let message = if json.is_null() {
                match crate::extract::parse_failure(output) {
                    Some(why) => format!("the output's JSON could not be read: {why}"),
                    None => "the output contains no JSON object".to_owned(),
                }
            } else {
                format!("expected a JSON object, got {}", type_name(json))
            };
            issues.push(
                Issue::error("", message)
                    .at("")
                    .code(codes::CONTRACT_NOT_AN_OBJECT),
            );
            return (issues, None);
        };
        let variant = self.variant_of(object);
        let variant_fields = variant.map_or(&[][..], |v| v.fields.as_slice());
        let fields: Vec<&FieldRule> = self.fields.iter().chain(variant_fields).collect();
        self.check_members(&fields, object, &mut issues);
        if !self.additional_fields {
            // A kind outside the variants is reported once, at the kind: the
            // members some variant has are not "unexpected" on top of it.
            let known: Vec<&FieldRule> = if variant.is_none() && !self.variants.is_empty() {
                let every = self.variants.iter().flat_map(|v| &v.fields);
                self.fields.iter().chain(every).collect()
            } else {
                fields
            };
            check_no_other_members(&known, object, "", &mut issues);
        }
        let coerced = self.coerce_kind(object, &mut issues);
        (issues, coerced)
    }

    /// Checks the members of `object` that `fields` describe (a missing
    /// required one is an issue at its path).
    fn check_members(&self, fields: &[&FieldRule], object: &Object, issues: &mut Vec<Issue>) {
        for field in fields {
            match object.get(&field.name) {
                None => {
                    if field.spec.required {
                        issues.push(
                            Issue::error("", format!("missing required field `{}`", field.label))
                                .at(field.pointer.clone())
                                .code(codes::CONTRACT_MISSING_FIELD),
                        );
                    }
                }
                Some(value) => self.check_field(field, value, issues),
            }
        }
    }

    fn check_field(&self, field: &FieldRule, value: &Json, issues: &mut Vec<Issue>) {
        let name = &field.label;
        let mut fail = |code: &'static str, message: String| {
            issues.push(
                Issue::error("", message)
                    .at(field.pointer.clone())
                    .code(code),
            );
        };
        if !field.types.is_empty() && !field.types.iter().any(|t| t.accepts(value)) {
            let (wanted, got) = (types_phrase(&field.types), type_name(value));
            fail(
                codes::CONTRACT_TYPE,
                format!("`{name}` must be {wanted}, got {got}"),
            );
            return;
        }
        let spec = &field.spec;
        if let Some(number) = value.as_f64() {
            if let Some(min) = spec.min.filter(|min| number < *min) {
                fail(
                    codes::CONTRACT_RANGE,
                    format!("`{name}` must be at least {min}, got {number}"),
                );
            }
            if let Some(max) = spec.max.filter(|max| number > *max) {
                fail(
                    codes::CONTRACT_RANGE,
                    format!("`{name}` must be at most {max}, got {number}"),
                );
            }
        }
        if let Some(allowed) = &spec.one_of {
            if !allowed.iter().any(|a| same_value(a, value)) {
                let list: Vec<String> = allowed.iter().map(display_value).collect();
                fail(
                    codes::CONTRACT_ONE_OF,
                    format!("`{name}` must be one of: {}, got {value}", list.join(" | ")),
                );
            }
        }
        if let Some(length) = length_of(value) {
            if let Some(min) = spec.min_length.filter(|min| length < *min) {
                fail(
                    codes::CONTRACT_LENGTH,
                    format!("`{name}` must have a length of at least {min}, got {length}"),
                );
            }
            if let Some(max) = spec.max_length.filter(|max| length > *max) {
                fail(
                    codes::CONTRACT_LENGTH,
                    format!("`{name}` must have a length of at most {max}, got {length}"),
                );
            }
        }
        if let (Some((lo, hi)), Json::String(text)) = (field.sentences, value) {
            let count = count_sentences_with(text, &self.sentence_abbreviations);
            if count < lo || count > hi {
                fail(
                    codes::CONTRACT_SENTENCES,
                    format!("`{name}` must be {}, got {count}", sentences_phrase(lo, hi)),
                );
            }
        }
        check_values_and_items(field, value, issues);
        if let Json::Object(members) = value {
            let children: Vec<&FieldRule> = field.children.iter().collect();
            self.check_members(&children, members, issues);
            if field.spec.additional_fields == Some(false) {
                check_no_other_members(&children, members, &field.pointer, issues);
            }
        }
    }

    fn coerce_kind(&self, object: &Object, issues: &mut Vec<Issue>) -> Option<Json> {
        let may_emit = self.may_emit.as_ref()?;
        let kind = object.get(&self.kind_field)?;
        let Json::String(kind) = kind else {
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
                        "{} \"{kind}\" is not allowed ({}: {})",
                        self.kind_field,
                        self.kinds_key(),
                        may_emit.join(" | ")
                    ),
                )
                .at(at)
                .code(codes::CONTRACT_KIND_NOT_ALLOWED),
            );
            return None;
        }
        let replacement = self.fallback_kind()?;
        issues.push(
            Issue::error(
                "",
                format!(
                    "{} \"{kind}\" is not allowed ({}: {}); replaced with \"{replacement}\"",
                    self.kind_field,
                    self.kinds_key(),
                    may_emit.join(" | ")
                ),
            )
            .at(at)
            .code(codes::CONTRACT_KIND_REPLACED),
        );
        let mut fixed = object.clone();
        fixed.insert(self.kind_field.as_str(), Json::from(replacement));
        Some(Json::Object(fixed))
    }
}

/// Equality for `enum`: JSON equality, except that numbers compare by value (2 == 2.0).
fn same_value(a: &serde_json::Value, b: &Json) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => {
            (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

/// The length `min_length` and `max_length` bound: characters of a string,
/// items of an array, members of an object.
fn length_of(value: &Json) -> Option<usize> {
    match value {
        Json::String(s) => Some(s.chars().count()),
        Json::Array(a) => Some(a.len()),
        Json::Object(o) => Some(o.len()),
        _ => None,
    }
}

/// With `additional_fields: false`: each member of `object` (at `pointer`)
/// that `fields` do not list is an issue at its path.
fn check_no_other_members(
    fields: &[&FieldRule],
    object: &Object,
    pointer: &str,
    issues: &mut Vec<Issue>,
) {
    for key in object.keys() {
        if key != RAW_FALLBACK_KEY && !fields.iter().any(|f| &f.name == key) {
            let at = format!("{pointer}/{}", escape_pointer(key));
            let label = super::pointer_label(&at);
            issues.push(
                Issue::error("", format!("unexpected field `{label}`"))
                    .at(at)
                    .code(codes::CONTRACT_UNEXPECTED_FIELD),
            );
        }
    }
}

/// `values:` (the type of every member of an object) and `items:` (of every
/// item of an array), each wrong one reported at its own path.
fn check_values_and_items(field: &FieldRule, value: &Json, issues: &mut Vec<Issue>) {
    let name = &field.label;
    let spec = &field.spec;
    let wrong = |expected: JsonType, item: &Json| {
        (!expected.accepts(item))
            .then(|| format!("{}, got {}", article(expected.as_str()), type_name(item)))
    };
    if let (Some(expected), Json::Object(map)) = (spec.values, value) {
        for (key, item) in map {
            if let Some(what) = wrong(expected, item) {
                let at = format!("{}/{}", field.pointer, escape_pointer(key));
                issues.push(
                    Issue::error("", format!("`{name}.{key}` must be {what}"))
                        .at(at)
                        .code(codes::CONTRACT_ITEM),
                );
            }
        }
    }
    if let (Some(expected), Json::Array(items)) = (spec.items, value) {
        for (index, item) in items.iter().enumerate() {
            if let Some(what) = wrong(expected, item) {
                let at = format!("{}/{index}", field.pointer);
                issues.push(
                    Issue::error("", format!("`{name}[{index}]` must be {what}"))
                        .at(at)
                        .code(codes::CONTRACT_ITEM),
                );
            }
        }
    }
}
