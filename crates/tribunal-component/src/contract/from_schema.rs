//! Field rules from JSON Schema: the argument rules of the tools an OpenAI or
//! Anthropic tools file declares (`tribunal new tools --from FILE`), so a team
//! brings the definitions it already sends to the model. What a rule cannot
//! say is listed, never dropped without a word.

use serde_json::{Map, Value};

/// Why a tools file is not one (`tribunal new tools --from FILE`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsFileError {
    /// Neither a list nor an object with a `tools` list.
    #[error("a tools file is a list of tools, or an object with a `tools` list")]
    NotAList,
    /// The tool at `index` (from 0) has no name.
    #[error("tool {index} has no `name` (at /{index})")]
    NoName {
        /// Where the tool is in the list.
        index: usize,
    },
    /// A second tool of that name, at `index`.
    #[error("tool {index}: `{name}` is declared twice")]
    Twice {
        /// Where the second one is in the list.
        index: usize,
        /// The name.
        name: String,
    },
    /// The tool's parameters are not a JSON object.
    #[error("tool `{name}`: its parameters are not a JSON Schema object")]
    NotASchema {
        /// The tool.
        name: String,
    },
    /// The tool's parameters' schema is not of an object.
    #[error("tool `{name}`: its parameters must be an object schema (`type: object`)")]
    NotAnObject {
        /// The tool.
        name: String,
    },
}

/// One tool of a tools file, as `tool_calls`' rules of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRules {
    /// The tool's name.
    pub name: String,
    /// What the file says the tool is for.
    pub description: Option<String>,
    /// Its arguments' field rules, by argument, as a pack writes them.
    pub fields: Map<String, Value>,
    /// Whether the schema takes no argument it does not name
    /// (`additionalProperties: false`).
    pub closed: bool,
    /// The schema keywords no field rule says, each as `path: keyword`.
    pub dropped: Vec<String>,
}

/// The tools a tools file declares: a list (or `{"tools": [...]}`) of OpenAI
/// Chat tools (`{"type": "function", "function": {"name", "description",
/// "parameters"}}`), OpenAI Responses tools (`{"type": "function", "name",
/// "parameters"}`) or Anthropic tools (`{"name", "description",
/// "input_schema"}`). An error says which item is not a tool, and why.
pub fn tools_from_file(file: &Value) -> Result<Vec<ToolRules>, ToolsFileError> {
    let list = match file {
        Value::Array(list) => list,
        Value::Object(object) => match object.get("tools") {
            Some(Value::Array(list)) => list,
            _ => return Err(ToolsFileError::NotAList),
        },
        _ => return Err(ToolsFileError::NotAList),
    };
    let mut tools = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let tool = item.get("function").unwrap_or(item);
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return Err(ToolsFileError::NoName { index });
        };
        if tools.iter().any(|t: &ToolRules| t.name == name) {
            return Err(ToolsFileError::Twice {
                index,
                name: name.to_owned(),
            });
        }
        let empty = Value::Object(Map::new());
        let schema = tool
            .get("parameters")
            .or_else(|| tool.get("input_schema"))
            .unwrap_or(&empty);
        let mut dropped = Vec::new();
        let object = schema
            .as_object()
            .ok_or_else(|| ToolsFileError::NotASchema {
                name: name.to_owned(),
            })?;
        if object
            .get("type")
            .is_some_and(|t| t.as_str() != Some("object"))
        {
            return Err(ToolsFileError::NotAnObject {
                name: name.to_owned(),
            });
        }
        let fields = members(object, name, &mut dropped);
        for key in object.keys() {
            if !matches!(
                key.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "additionalProperties"
                    | "$schema"
                    | "title"
                    | "description"
            ) {
                dropped.push(format!("{name}: {key}"));
            }
        }
        dropped.sort();
        tools.push(ToolRules {
            name: name.to_owned(),
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            fields,
            closed: object.get("additionalProperties") == Some(&Value::Bool(false)),
            dropped,
        });
    }
    Ok(tools)
}

/// The field rules of an object schema's `properties` (`required` ones so).
fn members(
    object: &Map<String, Value>,
    path: &str,
    dropped: &mut Vec<String>,
) -> Map<String, Value> {
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Map::new();
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, schema) in properties {
            let at = format!("{path}.{name}");
            let mut rule = field(schema, &at, dropped);
            if required.contains(&name.as_str()) {
                // A required field has no default (the contract refuses both).
                if rule.remove("default").is_some() {
                    dropped.push(format!("{at}: default (the argument is required)"));
                }
                rule.insert("required".into(), Value::Bool(true));
            }
            fields.insert(name.clone(), Value::Object(rule));
        }
    }
    fields
}

/// JSON Schema keywords that are a field rule's key under another name.
const RENAMED: [(&str, &str); 11] = [
    ("type", "type"),
    ("enum", "enum"),
    ("minimum", "min"),
    ("maximum", "max"),
    ("minLength", "min_length"),
    ("maxLength", "max_length"),
    ("pattern", "pattern"),
    ("minItems", "min_items"),
    ("maxItems", "max_items"),
    ("uniqueItems", "unique_items"),
    ("description", "description"),
];

/// One field rule from its JSON Schema, at `path` (for what is dropped).
fn field(schema: &Value, path: &str, dropped: &mut Vec<String>) -> Map<String, Value> {
    let mut rule = Map::new();
    let Some(schema) = schema.as_object() else {
        // `true` (anything) and `false` (nothing) have no rule.
        dropped.push(format!("{path}: a schema that is not an object"));
        return rule;
    };
    for (key, value) in schema {
        if let Some((_, name)) = RENAMED.iter().find(|(k, _)| k == key) {
            rule.insert((*name).to_owned(), value.clone());
            continue;
        }
        match key.as_str() {
            "const" => {
                rule.insert("enum".into(), Value::Array(vec![value.clone()]));
            }
            "default" => {
                rule.insert("default".into(), value.clone());
            }
            "items" => {
                let item = field(value, &format!("{path}[]"), dropped);
                rule.insert("items".into(), Value::Object(item));
            }
            "properties" => {
                let fields = members(schema, path, dropped);
                rule.insert("fields".into(), Value::Object(fields));
            }
            "additionalProperties" => match value {
                Value::Bool(open) => {
                    rule.insert("additional_fields".into(), Value::Bool(*open));
                }
                Value::Object(inner) if inner.len() == 1 && inner.contains_key("type") => {
                    rule.insert("values".into(), inner["type"].clone());
                }
                _ => dropped.push(format!("{path}: additionalProperties")),
            },
            // Read with `properties`; metadata.
            "required" | "title" | "$schema" | "examples" | "$comment" => {}
            other => dropped.push(format!("{path}: {other}")),
        }
    }
    rule
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_forms_give_the_same_rules_and_what_is_dropped_is_said() {
        let parameters = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name", "minLength": 2},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "exclusiveMaximum": 8},
                "tags": {"type": "array", "items": {"type": "string", "format": "uri"}, "maxItems": 3},
                "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"], "additionalProperties": false}
            },
            "required": ["city", "unit"],
            "additionalProperties": false
        });
        let openai = json!([{"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": parameters}}]);
        let responses = json!({"tools": [{"type": "function", "name": "weather", "description": "Weather.", "parameters": parameters}]});
        let anthropic =
            json!([{"name": "weather", "description": "Weather.", "input_schema": parameters}]);
        let read = tools_from_file(&openai).unwrap();
        assert_eq!(read, tools_from_file(&responses).unwrap());
        assert_eq!(read, tools_from_file(&anthropic).unwrap());
        let tool = &read[0];
        assert!(tool.closed);
        assert_eq!(tool.description.as_deref(), Some("Weather."));
        assert_eq!(
            Value::Object(tool.fields.clone()),
            json!({
                "city": {"type": "string", "description": "City name", "min_length": 2, "required": true},
                "unit": {"type": "string", "enum": ["c", "f"], "required": true},
                "days": {"type": "integer", "min": 1, "max": 7},
                "tags": {"type": "array", "items": {"type": "string"}, "max_items": 3},
                "where": {"type": "object", "fields": {"lat": {"type": "number", "required": true}}, "additional_fields": false}
            })
        );
        assert_eq!(
            tool.dropped,
            [
                "weather.days: exclusiveMaximum",
                "weather.tags[]: format",
                "weather.unit: default (the argument is required)",
            ]
        );
        let no_name = tools_from_file(&json!([{"description": "x"}])).unwrap_err();
        assert_eq!(no_name, ToolsFileError::NoName { index: 0 });
        assert_eq!(no_name.to_string(), "tool 0 has no `name` (at /0)");
        assert_eq!(
            tools_from_file(&json!({"a": 1})),
            Err(ToolsFileError::NotAList)
        );
        let twice = json!([{"name": "a"}, {"name": "a"}]);
        assert_eq!(
            tools_from_file(&twice).unwrap_err().to_string(),
            "tool 1: `a` is declared twice"
        );
    }
}
