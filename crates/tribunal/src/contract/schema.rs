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
                .map(|variant| self.variant_schema(variant))
                .collect();
            schema.insert("oneOf".into(), Value::Array(branches));
        }
        Value::Object(schema)
    }

    /// One kind's complete object schema: the common fields (its kind a
    /// `const`), then its own.
    fn variant_schema(&self, variant: &Variant) -> Value {
        let fields: Vec<&FieldRule> = self.fields.iter().chain(&variant.fields).collect();
        let mut branch = Map::new();
        branch.insert("title".into(), json!(variant.kind));
        if let Some(description) = &variant.description {
            branch.insert("description".into(), json!(description.trim()));
        }
        branch.extend(object_schema(&fields, self.additional_fields, |field| {
            if field.label == self.kind_field {
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
        if let Some(values) = spec.values {
            schema.insert("additionalProperties".into(), type_schema(values));
        }
        if let Some(items) = spec.items {
            schema.insert("items".into(), type_schema(items));
        }
        if !field.children.is_empty() || spec.additional_fields.is_some() {
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
