//! `repair: schema`: bringing the document the ladder found to the contract,
//! where the change cannot lose what the model meant, each change listed with
//! its path.
//!
//! The changes: a string holding a number (`"12"`) or a boolean (`"true"`)
//! becomes one, for a value whose types take it and no string; a single value
//! of an array field is wrapped in an array; a member `additional_fields:
//! false` forbids is dropped; a missing optional field (or its `null`, where
//! its type takes none) gets its `default`. Everything else is left for the
//! contract's checks to report.

use std::str::FromStr;

use crate::extract::Repair;
use crate::json::{Json, Number, Object};
use crate::report::SchemaRepair;

use super::place::Place;
use super::validate::Shape;
use super::{Contract, FieldRule, JsonType, RepairMode, Variant};

impl Contract {
    /// Whether the contract brings documents to its shape (`repair: schema`).
    pub fn repairs_schema(&self) -> bool {
        self.repair == RepairMode::Schema
    }

    /// Brings `json`, the document the ladder found, to the contract; the
    /// changes made, in the order made (none when the document is not an
    /// object, or the contract does not say `repair: schema`).
    pub fn conform(&self, json: &mut Json) -> Vec<SchemaRepair> {
        let mut changes = Vec::new();
        if let (true, Json::Object(object)) = (self.repairs_schema(), json) {
            let shape = (
                &self.fields[..],
                &self.variants[..],
                self.kind_field.as_str(),
            );
            conform_members(
                shape,
                !self.additional_fields,
                object,
                Place::Root,
                &mut changes,
            );
        }
        changes
    }
}

/// The members of an object (at `place`) with `common` fields and
/// `variants`: the common members, then those of the variant the kind
/// (as they left it) selects; the missing members' defaults; and, when
/// `closed`, the members it does not allow.
fn conform_members(
    (common, variants, kind_field): (&[FieldRule], &[Variant], &str),
    closed: bool,
    object: &mut Object,
    place: Place<'_>,
    changes: &mut Vec<SchemaRepair>,
) {
    conform_rules(common, object, place, changes);
    let shape = Shape::of(common, variants, kind_field, object);
    if let Some(variant) = shape.variant() {
        conform_rules(&variant.fields, object, place, changes);
    }
    if closed {
        let known = shape.known();
        object.retain(|key, _| {
            let allowed = known.iter().any(|rule| rule.name == key.as_str());
            if !allowed {
                changes.push(change(
                    Repair::DroppedUnexpectedField,
                    Place::Member(&place, key),
                ));
            }
            allowed
        });
    }
}

/// The members `rules` describe, each brought to its rule or given its
/// default.
fn conform_rules(
    rules: &[FieldRule],
    object: &mut Object,
    place: Place<'_>,
    changes: &mut Vec<SchemaRepair>,
) {
    for rule in rules {
        let at = Place::Member(&place, &rule.name);
        match object.get_mut(&rule.name) {
            Some(value) => conform_value(rule, value, at, changes),
            None => {
                if let Some(default) = &rule.default {
                    object.insert(rule.name.as_str(), default.clone());
                    changes.push(change(Repair::FilledDefault, at));
                }
            }
        }
    }
}

/// `value`, at `place`, brought to `rule`: its own type, then its items or
/// members.
fn conform_value(
    rule: &FieldRule,
    value: &mut Json,
    place: Place<'_>,
    changes: &mut Vec<SchemaRepair>,
) {
    if !accepted(&rule.types, value) {
        if let Some((coerced, kind)) = coerce(&rule.types, value) {
            *value = coerced;
            changes.push(change(kind, place));
        } else if let (true, Some(default)) = (value.is_null(), &rule.default) {
            *value = default.clone();
            changes.push(change(Repair::FilledDefault, place));
            return;
        } else if rule.types.contains(&JsonType::Array) {
            *value = Json::Array(vec![value.take()]);
            changes.push(change(Repair::WrappedInArray, place));
        }
    }
    match value {
        Json::Array(items) => {
            if let Some(item) = &rule.item {
                for (index, one) in items.iter_mut().enumerate() {
                    conform_value(item, one, Place::Item(&place, index), changes);
                }
            }
        }
        Json::Object(members) => {
            if let Some(expected) = rule.spec.values {
                for (key, one) in members.iter_mut() {
                    if let Some((coerced, kind)) = coerce(&[expected], one) {
                        *one = coerced;
                        changes.push(change(kind, Place::Member(&place, key)));
                    }
                }
            }
            let shape = (
                &rule.children[..],
                &rule.variants[..],
                rule.kind_field.as_str(),
            );
            let closed = rule.spec.additional_fields == Some(false);
            conform_members(shape, closed, members, place, changes);
        }
        _ => {}
    }
}

/// Whether one of `types` takes `value` (no types: any value).
fn accepted(types: &[JsonType], value: &Json) -> bool {
    types.is_empty() || types.iter().any(|t| t.accepts(value))
}

/// A string `value` none of `types` takes, read as the number or boolean it
/// holds when one of them takes that: `"12"` (`" 12 "`, `"-0.5"`, `"1e3"`,
/// as JSON writes numbers) for `integer` or `number`, `"true"` or `"False"`
/// for `boolean`.
fn coerce(types: &[JsonType], value: &Json) -> Option<(Json, Repair)> {
    if accepted(types, value) {
        return None;
    }
    let text = value.as_str()?.trim();
    if let Ok(number) = Number::from_str(text) {
        let number = Json::Number(number);
        return accepted(types, &number).then_some((number, Repair::CoercedNumber));
    }
    let boolean = if text.eq_ignore_ascii_case("true") {
        Json::Bool(true)
    } else if text.eq_ignore_ascii_case("false") {
        Json::Bool(false)
    } else {
        return None;
    };
    accepted(types, &boolean).then_some((boolean, Repair::CoercedBoolean))
}

fn change(repair: Repair, place: Place<'_>) -> SchemaRepair {
    SchemaRepair {
        repair,
        path: place.pointer(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::contract::{Contract, ContractSpec};
    use crate::json::Json;

    fn contract(yaml: &str) -> Contract {
        let spec: ContractSpec = serde_yaml::from_str(yaml).unwrap();
        Contract::compile(&spec).unwrap()
    }

    /// The document `input` becomes, and its changes as `kind at path`.
    fn conform(contract: &Contract, input: &serde_json::Value) -> (serde_json::Value, Vec<String>) {
        let mut json = Json::from(input);
        let changes = contract.conform(&mut json);
        let listed = changes
            .iter()
            .map(|c| format!("{} at {}", c.repair, c.path))
            .collect();
        (json.to_serde(), listed)
    }

    const PERSON: &str = r#"
repair: schema
additional_fields: false
fields:
  name: { type: string, required: true }
  age: { type: integer }
  score: { type: number }
  active: { type: boolean }
  tags: { type: array, items: string }
  ids: { type: array, items: integer }
  lang: { type: string, default: en }
  limit: { type: integer, default: 10 }
  address:
    type: object
    additional_fields: false
    fields:
      zip: { type: string }
      floor: { type: [integer, "null"] }
  scores: { type: object, values: number }
"#;

    #[test]
    fn strings_holding_numbers_and_booleans_become_them() {
        let c = contract(PERSON);
        let (json, changes) = conform(
            &c,
            &json!({"name": "Ada", "age": "36", "score": " 0.5 ", "active": "True",
                   "lang": "fr", "limit": 3}),
        );
        assert_eq!(
            json,
            json!({"name": "Ada", "age": 36, "score": 0.5, "active": true, "lang": "fr", "limit": 3})
        );
        assert_eq!(
            changes,
            [
                "coerced_number at /age",
                "coerced_number at /score",
                "coerced_boolean at /active"
            ]
        );
    }

    #[test]
    fn what_cannot_be_read_safely_is_left_for_the_checks() {
        let c = contract(PERSON);
        let input = json!({"name": 7, "age": "12.5", "score": "0x10", "active": "yes",
                           "lang": "de", "limit": "007", "address": "Main St"});
        let (json, changes) = conform(&c, &input);
        assert_eq!(json, input, "{changes:?}");
        assert!(changes.is_empty());
        // A number in a string is left alone for a field that takes strings.
        let c = contract("repair: schema\nfields:\n  zip: { type: [string, integer] }\n");
        let (json, changes) = conform(&c, &json!({"zip": "02139"}));
        assert_eq!((json, changes.len()), (json!({"zip": "02139"}), 0));
    }

    #[test]
    fn single_values_are_wrapped_and_their_items_conformed() {
        let c = contract(PERSON);
        let (json, changes) = conform(
            &c,
            &json!({"name": "Ada", "tags": "x", "ids": "4", "lang": "en", "limit": 1}),
        );
        assert_eq!(
            json,
            json!({"name": "Ada", "tags": ["x"], "ids": [4], "lang": "en", "limit": 1})
        );
        assert_eq!(
            changes,
            [
                "wrapped_in_array at /tags",
                "wrapped_in_array at /ids",
                "coerced_number at /ids/0"
            ]
        );
    }

    #[test]
    fn defaults_fill_missing_and_null_members_and_forbidden_members_go() {
        let c = contract(PERSON);
        let (json, changes) = conform(
            &c,
            &json!({"name": "Ada", "limit": null, "extra": 1,
                   "address": {"zip": "x", "floor": null, "door": "b"},
                   "scores": {"a": "0.25", "b": 1}}),
        );
        assert_eq!(
            json,
            json!({"name": "Ada", "limit": 10, "lang": "en",
                   "address": {"zip": "x", "floor": null},
                   "scores": {"a": 0.25, "b": 1}})
        );
        assert_eq!(
            changes,
            [
                "filled_default at /lang",
                "filled_default at /limit",
                "dropped_unexpected_field at /address/door",
                "coerced_number at /scores/a",
                "dropped_unexpected_field at /extra"
            ]
        );
    }

    #[test]
    fn variants_choose_the_members_kept_and_paths_are_escaped() {
        let c = contract(
            r#"
repair: schema
additional_fields: false
kind_field: tool
variants:
  search: { fields: { "q/x": { type: string }, "k~n": { type: integer } } }
  stop: {}
"#,
        );
        let (json, changes) = conform(
            &c,
            &json!({"tool": "search", "k~n": "3", "q/x": "a", "z": 0}),
        );
        assert_eq!(json, json!({"tool": "search", "k~n": 3, "q/x": "a"}));
        assert_eq!(
            changes,
            ["coerced_number at /k~0n", "dropped_unexpected_field at /z"]
        );
        // A kind outside the variants keeps what some variant has.
        let (json, changes) = conform(&c, &json!({"tool": "other", "q/x": "a", "z": 0}));
        assert_eq!(json, json!({"tool": "other", "q/x": "a"}));
        assert_eq!(changes, ["dropped_unexpected_field at /z"]);
    }

    #[test]
    fn without_repair_schema_nothing_changes() {
        let c =
            contract("fields:\n  age: { type: integer }\n  lang: { type: string, default: en }\n");
        let (json, changes) = conform(&c, &json!({"age": "3"}));
        assert_eq!((json, changes.len()), (json!({"age": "3"}), 0));
        let c = contract("repair: schema\nfields:\n  age: { type: integer }\n");
        let (json, changes) = conform(&c, &json!([{"age": "3"}]));
        assert_eq!((json, changes.len()), (json!([{"age": "3"}]), 0));
    }

    #[test]
    fn defaults_are_checked_when_the_contract_compiles() {
        let fails = |yaml: &str| {
            let spec: ContractSpec = serde_yaml::from_str(yaml).unwrap();
            Contract::compile(&spec).unwrap_err().to_string()
        };
        let wrong_type = fails("fields:\n  n: { type: integer, default: x }\n");
        assert!(
            wrong_type.contains("the default of `n` is a string, but the field must be an integer"),
            "{wrong_type}"
        );
        let required = fails("fields:\n  n: { type: integer, required: true, default: 1 }\n");
        assert!(
            required.contains("is required and has a `default`"),
            "{required}"
        );
        let not_listed = fails("fields:\n  n: { enum: [a, b], default: c }\n");
        assert!(
            not_listed.contains("not one of its `enum` (a | b)"),
            "{not_listed}"
        );
        // `enum` compares numbers by value, for a default too.
        contract("fields:\n  n: { type: number, enum: [2, 3], default: 2.0 }\n");
        let item = fails("fields:\n  n: { type: array, items: { type: string, default: x } }\n");
        assert!(
            item.contains("only a member of an object can be missing"),
            "{item}"
        );
    }
}
