//! The contract as a JSON Schema (draft 2020-12), for structured-output APIs.

use serde_json::{json, Map, Value};

use super::{sentences_phrase, Contract, JsonType};

impl Contract {
    /// A JSON Schema (draft 2020-12) of the contract.
    pub fn json_schema(&self, title: &str) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in &self.fields {
            let mut schema = Map::new();
            match field.types.as_slice() {
                [] | [JsonType::Any] => {}
                [one] => {
                    schema.insert("type".into(), json!(one.as_str()));
                }
                many => {
                    let names: Vec<&str> = many
                        .iter()
                        .filter(|t| **t != JsonType::Any)
                        .map(|t| t.as_str())
                        .collect();
                    schema.insert("type".into(), json!(names));
                }
            }
            if field.name == self.kind_field {
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
            if let Some(n) = spec.min_length {
                let key = if is_string {
                    "minLength"
                } else if is_array {
                    "minItems"
                } else {
                    "minProperties"
                };
                schema.insert(key.into(), json!(n));
            }
            if let Some(n) = spec.max_length {
                let key = if is_string {
                    "maxLength"
                } else if is_array {
                    "maxItems"
                } else {
                    "maxProperties"
                };
                schema.insert(key.into(), json!(n));
            }
            if let Some(values) = spec.values {
                schema.insert("additionalProperties".into(), type_schema(values));
            }
            if let Some(items) = spec.items {
                schema.insert("items".into(), type_schema(items));
            }
            let mut description: Vec<String> = spec.description.iter().cloned().collect();
            if let Some((lo, hi)) = field.sentences {
                description.push(format!("Must be {}.", sentences_phrase(lo, hi)));
            }
            if !description.is_empty() {
                schema.insert("description".into(), json!(description.join(" ")));
            }
            if spec.required {
                required.push(field.name.clone());
            }
            properties.insert(field.name.clone(), Value::Object(schema));
        }
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("title".into(), json!(title));
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        schema.insert("required".into(), json!(required));
        schema.insert("additionalProperties".into(), json!(self.additional_fields));
        Value::Object(schema)
    }
}

fn type_schema(t: JsonType) -> Value {
    if t == JsonType::Any {
        json!({})
    } else {
        json!({ "type": t.as_str() })
    }
}
