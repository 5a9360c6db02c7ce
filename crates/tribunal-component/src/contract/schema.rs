//! The contract as a JSON Schema (draft 2020-12), for structured-output APIs.

use serde_json::{json, Map, Value};

use super::{sentences_phrase, Contract, FieldRule, JsonType, Variant};

impl Contract {
    /// A JSON Schema (draft 2020-12) of the contract. With variants it is a
    /// `oneOf` of one complete object schema per kind, each with its kind as a
    /// `const` (the discriminator) and the common fields repeated.
    pub fn json_schema(&self, title: &str) -> Value {
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("title".into(), json!(title));
        if self.variants.is_empty() {
            let fields: Vec<&FieldRule> = self.fields.iter().collect();
            schema.extend(object_schema(&fields, self.additional_fields, |field| {
                self.field_schema(field)
            }));
        } else {
            schema.insert("type".into(), json!("object"));
            let branches: Vec<Value> = self
                .variants
                .iter()
                .map(|variant| {
                    self.variant_schema(
                        &self.fields,
                        variant,
                        &self.kind_field,
                        self.additional_fields,
                    )
                })
                .collect();
            schema.insert("oneOf".into(), Value::Array(branches));
        }
        Value::Object(schema)
    }

    /// The JSON Schema of the object this contract's fields describe, as a
    /// tool's parameters (`tool_calls`' rules of a tool's arguments): no
    /// `$schema` nor title.
    pub fn arguments_schema(&self) -> Value {
        let fields: Vec<&FieldRule> = self.fields.iter().collect();
        Value::Object(object_schema(&fields, self.additional_fields, |field| {
            self.field_schema(field)
        }))
    }

    /// The JSON Schema of one field rule of this contract (a variant's
    /// arguments field, as a tool's parameters).
    pub fn rule_schema(&self, field: &FieldRule) -> Value {
        self.field_schema(field)
    }

    /// One kind's complete object schema: the common fields (its kind, the
    /// member `kind_field`, a `const`), then its own.
    fn variant_schema(
        &self,
        common: &[FieldRule],
        variant: &Variant,
        kind_field: &str,
        additional: bool,
    ) -> Value {
        let fields: Vec<&FieldRule> = common.iter().chain(&variant.fields).collect();
        let mut branch = Map::new();
        branch.insert("title".into(), json!(variant.kind));
        if let Some(description) = &variant.description {
            branch.insert("description".into(), json!(description.trim()));
        }
        branch.extend(object_schema(&fields, additional, |field| {
            if field.name == kind_field {
                let mut kind = Map::new();
                kind.insert("type".into(), json!("string"));
                kind.insert("const".into(), json!(variant.kind));
                if let Some(description) = &field.spec.description {
                    kind.insert("description".into(), json!(description));
                }
                Value::Object(kind)
            } else {
                self.field_schema(field)
            }
        }));
        Value::Object(branch)
    }

    /// A field's schema: its types, bounds, allowed values and, for an object
    /// with `fields`, its members.
    fn field_schema(&self, field: &FieldRule) -> Value {
        let mut schema = Map::new();
        match field.types.as_slice() {
            // `any`, alone or in a union, takes every value: no `type`.
            types if types.is_empty() || types.contains(&JsonType::Any) => {}
            [one] => {
                schema.insert("type".into(), json!(one.as_str()));
            }
            many => {
                let names: Vec<&str> = many.iter().map(|t| t.as_str()).collect();
                schema.insert("type".into(), json!(names));
            }
        }
        if field.label == self.kind_field {
            if let Some(may_emit) = &self.may_emit {
                schema.insert("enum".into(), json!(may_emit));
            }
        }
        let spec = &field.spec;
        if let Some(default) = &spec.default {
            schema.insert("default".into(), default.clone());
        }
        if let Some(one_of) = &spec.one_of {
            schema.insert("enum".into(), json!(one_of));
        }
        if let Some(min) = spec.min {
            schema.insert("minimum".into(), json!(min));
        }
        if let Some(max) = spec.max {
            schema.insert("maximum".into(), json!(max));
        }
        let is_string = field.types.contains(&JsonType::String);
        let is_array = field.types.contains(&JsonType::Array);
        let length_key = |string: &'static str, array: &'static str, object: &'static str| {
            if is_string {
                string
            } else if is_array {
                array
            } else {
                object
            }
        };
        if let Some(n) = spec.min_length {
            let key = length_key("minLength", "minItems", "minProperties");
            schema.insert(key.into(), json!(n));
        }
        if let Some(n) = spec.max_length {
            let key = length_key("maxLength", "maxItems", "maxProperties");
            schema.insert(key.into(), json!(n));
        }
        if let Some(pattern) = &spec.pattern {
            schema.insert("pattern".into(), json!(pattern));
        }
        if let Some(values) = spec.values {
            schema.insert("additionalProperties".into(), type_schema(values));
        }
        if let Some(item) = &field.item {
            schema.insert("items".into(), self.field_schema(item));
        }
        if let Some(n) = spec.min_items {
            schema.insert("minItems".into(), json!(n));
        }
        if let Some(n) = spec.max_items {
            schema.insert("maxItems".into(), json!(n));
        }
        if spec.unique_items {
            schema.insert("uniqueItems".into(), json!(true));
        }
        if !field.variants.is_empty() {
            let additional = spec.additional_fields.unwrap_or(true);
            let branches: Vec<Value> = field
                .variants
                .iter()
                .map(|variant| {
                    self.variant_schema(&field.children, variant, &field.kind_field, additional)
                })
                .collect();
            schema.insert("oneOf".into(), Value::Array(branches));
        } else if !field.children.is_empty() || spec.additional_fields.is_some() {
            let children: Vec<&FieldRule> = field.children.iter().collect();
            let members =
                object_schema(&children, spec.additional_fields.unwrap_or(true), |child| {
                    self.field_schema(child)
                });
            for (key, value) in members {
                // `type` is the field's own; `values:` already set additionalProperties.
                if key != "type" && !(key == "additionalProperties" && spec.values.is_some()) {
                    schema.insert(key, value);
                }
            }
        }
        let mut description: Vec<String> = spec.description.iter().cloned().collect();
        if let Some((lo, hi)) = field.sentences {
            description.push(format!("Must be {}.", sentences_phrase(lo, hi)));
        }
        if !description.is_empty() {
            schema.insert("description".into(), json!(description.join(" ")));
        }
        Value::Object(schema)
    }
}

/// `type: object` with `properties` (each from `schema_of`), `required` and
/// `additionalProperties`.
fn object_schema(
    fields: &[&FieldRule],
    additional: bool,
    schema_of: impl Fn(&FieldRule) -> Value,
) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        if field.spec.required {
            required.push(field.name.clone());
        }
        properties.insert(field.name.clone(), schema_of(field));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), json!(required));
    schema.insert("additionalProperties".into(), json!(additional));
    schema
}

fn type_schema(t: JsonType) -> Value {
    if t == JsonType::Any {
        json!({})
    } else {
        json!({ "type": t.as_str() })
    }
}

/// Why a contract's JSON Schema has no form OpenAI's strict mode accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenAI's strict mode cannot express {what} (at {at} in the schema): {why}")]
pub struct StrictSchemaError {
    /// Where, as a JSON pointer into the schema (`/properties/steps/items`).
    pub at: String,
    pub what: String,
    pub why: String,
}

/// Keywords strict mode refuses, and the sentence kept in the description
/// instead (the pack still checks them).
const STRICT_DROPPED: [(&str, &str); 7] = [
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minProperties", "at least {} members"),
    ("maxProperties", "at most {} members"),
    ("uniqueItems", "no item twice"),
    ("$schema", ""),
    // Every member is written in strict mode (an optional one may be null).
    ("default", ""),
];

/// The schema in the subset OpenAI's Structured Outputs take with
/// `strict: true`: every object closed (`additionalProperties: false`) and every
/// property required, an optional one made nullable instead; `oneOf` written
/// `anyOf`; the keywords it refuses (string lengths, `uniqueItems`, member
/// counts) moved into the description as words. What it cannot express at all
/// (a map of `values:`, an object with no listed members, `any`, variants at
/// the root) is an error naming the place.
pub fn openai_strict(schema: &Value) -> Result<Value, StrictSchemaError> {
    let mut out = schema.clone();
    if out.get("oneOf").is_some() {
        return Err(StrictSchemaError {
            at: "the root".into(),
            what: "variants of the whole output".into(),
            why: "the root must be one object, not a union of them; put the variants under a field"
                .into(),
        });
    }
    strictify(&mut out, "")?;
    Ok(out)
}

fn strictify(schema: &mut Value, at: &str) -> Result<(), StrictSchemaError> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    let refuse = |what: &str, why: &str| {
        Err(StrictSchemaError {
            at: if at.is_empty() { "the root" } else { at }.to_owned(),
            what: what.to_owned(),
            why: why.to_owned(),
        })
    };
    if !map.contains_key("type") && !map.contains_key("oneOf") && !map.contains_key("const") {
        return refuse("a value of any type", "every value needs a `type`");
    }
    let mut words: Vec<String> = Vec::new();
    for (key, sentence) in STRICT_DROPPED {
        if let Some(value) = map.shift_remove(key) {
            if !sentence.is_empty() {
                words.push(sentence.replace("{}", &value.to_string()));
            }
        }
    }
    if !words.is_empty() {
        let rule = format!("Must have {}.", words.join(", "));
        let description = match map.get("description").and_then(Value::as_str) {
            Some(text) if text.ends_with(['.', '!', '?']) => format!("{text} {rule}"),
            Some(text) => format!("{text}. {rule}"),
            None => rule,
        };
        map.insert("description".into(), json!(description));
    }
    if let Some(branches) = map.shift_remove("oneOf") {
        map.insert("anyOf".into(), branches);
    }
    let is_object = map.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|ts| ts.iter().any(|t| t == "object"))
    });
    if map.contains_key("anyOf") {
        // Each branch says its own type.
        map.shift_remove("type");
    } else if is_object {
        if map
            .get("additionalProperties")
            .is_some_and(Value::is_object)
        {
            return refuse("a map (`values:`)", "objects must list their members");
        }
        let required: Vec<Value> = map
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(Value::Object(properties)) = map.get_mut("properties") else {
            return refuse(
                "an object with no `fields`",
                "objects must list their members",
            );
        };
        let mut names = Vec::with_capacity(properties.len());
        for (name, property) in properties.iter_mut() {
            strictify(property, &format!("{at}/properties/{name}"))?;
            if !required.iter().any(|r| r == name) {
                make_nullable(property);
            }
            names.push(Value::String(name.clone()));
        }
        map.insert("required".into(), Value::Array(names));
        map.insert("additionalProperties".into(), json!(false));
    }
    if let Some(items) = map.get_mut("items") {
        strictify(items, &format!("{at}/items"))?;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for (i, branch) in branches.iter_mut().enumerate() {
            strictify(branch, &format!("{at}/anyOf/{i}"))?;
        }
    }
    Ok(())
}

/// An optional property, in strict mode: required, and null allowed.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    match map.get_mut("type") {
        Some(Value::String(one)) if one != "null" => {
            let one = std::mem::take(one);
            map.insert("type".into(), json!([one, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push(json!("null"));
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = map.get_mut("enum") {
        if !allowed.iter().any(Value::is_null) {
            allowed.push(Value::Null);
        }
    }
}
