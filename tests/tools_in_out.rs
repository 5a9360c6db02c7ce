//! Tools in and out: `tribunal new tools --from FILE` turns an OpenAI or
//! Anthropic tools file into `tool_calls` argument rules, and `tribunal prompt
//! PACK --tools openai|anthropic` writes a pack's tools back as those APIs'
//! definitions. On generated tools files (every keyword a rule says, nested
//! objects and arrays, in the three forms), the definitions come back as they
//! went in, and the pack judges calls by them.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Map, Value};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

fn tribunal(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A JSON Schema of a value, `depth` levels of nesting at most, using every
/// keyword a field rule says.
fn schema(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth == 0 { 4 } else { 6 };
    let mut schema = Map::new();
    match rng.below(kinds) {
        0 => {
            schema.insert("type".into(), json!("string"));
            if rng.below(2) == 0 {
                schema.insert("minLength".into(), json!(rng.below(3)));
                schema.insert("maxLength".into(), json!(5 + rng.below(50)));
            }
            match rng.below(3) {
                0 => {
                    schema.insert("enum".into(), json!(["a", "b c", "Ü"]));
                }
                1 => {
                    schema.insert("pattern".into(), json!("^[A-Z]{3}$"));
                }
                _ => {}
            }
        }
        1 => {
            schema.insert("type".into(), json!(["integer", "number"][rng.below(2)]));
            if rng.below(2) == 0 {
                schema.insert("minimum".into(), json!(rng.below(10)));
            }
            if rng.below(2) == 0 {
                schema.insert("maximum".into(), json!(100 + rng.below(10)));
            }
        }
        2 => {
            schema.insert("type".into(), json!("boolean"));
        }
        3 => {
            schema.insert("type".into(), json!(["string", "null"]));
        }
        4 => {
            schema.insert("type".into(), json!("array"));
            schema.insert("items".into(), self::schema(rng, depth - 1));
            if rng.below(2) == 0 {
                schema.insert("minItems".into(), json!(1));
                schema.insert("maxItems".into(), json!(4));
                schema.insert("uniqueItems".into(), json!(true));
            }
        }
        _ => {
            let closed = rng.below(2) == 0;
            schema = object(rng, depth - 1, closed);
        }
    }
    if rng.below(3) == 0 {
        schema.insert("description".into(), json!(format!("what it is ({depth})")));
    }
    Value::Object(schema)
}

fn object(rng: &mut Rng, depth: usize, closed: bool) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for index in 0..rng.below(4) {
        let name = format!("p{index}_{}", ["x", "y", "z z"][rng.below(3)]);
        if rng.below(2) == 0 {
            required.push(json!(name));
        }
        properties.insert(name, schema(rng, depth));
    }
    let mut object = Map::new();
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), Value::Object(properties));
    object.insert("required".into(), Value::Array(required));
    object.insert("additionalProperties".into(), json!(!closed));
    object
}

/// Numbers by value (`1` is `1.0`), as the definitions compare.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn write_pack(dir: &Path, file: &Value) -> String {
    let tools = dir.join("tools.json");
    std::fs::write(&tools, file.to_string()).unwrap();
    let (ok, pack, err) = tribunal(&["new", "tools", "--from", tools.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.is_empty(), "nothing is dropped: {err}");
    let folder = dir.join("pack");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("pack.yaml"), &pack).unwrap();
    folder.to_str().unwrap().to_owned()
}

#[test]
fn tools_files_come_back_as_they_went_in_in_every_form() {
    let mut rng = Rng(0xA076_1D64_78BD_642F);
    let dir = tempfile::tempdir().unwrap();
    for round in 0..6 {
        let closed = round % 2 == 0;
        let tools: Vec<(String, String, Value)> = (0..25)
            .map(|index| {
                let parameters = Value::Object(object(&mut rng, 2, closed));
                (
                    format!("tool_{round}_{index}"),
                    format!("Tool {index}."),
                    parameters,
                )
            })
            .collect();
        let file: Vec<Value> = tools
            .iter()
            .map(|(name, description, parameters)| match round % 3 {
                0 => json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}),
                1 => json!({"type": "function", "name": name, "description": description, "parameters": parameters}),
                _ => json!({"name": name, "description": description, "input_schema": parameters}),
            })
            .collect();
        let file = if round == 1 {
            json!({"tools": file})
        } else {
            Value::Array(file)
        };
        let pack = write_pack(dir.path(), &file);
        for (api, key) in [("openai", "parameters"), ("anthropic", "input_schema")] {
            let (ok, out, err) = tribunal(&["prompt", &pack, "--tools", api]);
            assert!(ok, "{err}");
            let written: Vec<Value> = serde_json::from_str(&out).unwrap();
            assert_eq!(written.len(), tools.len());
            for ((name, _, parameters), definition) in tools.iter().zip(&written) {
                let definition = definition.get("function").unwrap_or(definition);
                assert_eq!(definition["name"], json!(name));
                assert!(
                    same(&definition[key], parameters),
                    "round {round}, {api}, {name}:\n in  {parameters}\n out {}",
                    definition[key]
                );
            }
        }
    }
}

#[test]
fn the_pack_new_tools_writes_judges_calls_by_the_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let file = json!([{"type": "function", "function": {"name": "book", "parameters": {
        "type": "object",
        "properties": {
            "seats": {"type": "integer", "minimum": 1, "maximum": 9},
            "class": {"type": "string", "enum": ["economy", "business"]}
        },
        "required": ["seats"],
        "additionalProperties": false}}}]);
    let pack = write_pack(dir.path(), &file);
    let judge = |arguments: &str| {
        // The output is the calls themselves, as the API returns them.
        let output = json!([{"id": "c", "type": "function",
            "function": {"name": "book", "arguments": arguments}}]);
        let input = dir.path().join("output.json");
        std::fs::write(&input, output.to_string()).unwrap();
        let (_, out, _) = tribunal(&["check", &pack, input.to_str().unwrap(), "--json"]);
        let result: Value = serde_json::from_str(&out).unwrap();
        let codes: Vec<String> = result["issues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["code"].as_str().unwrap().to_owned())
            .collect();
        codes
    };
    assert!(judge(r#"{"seats": 2, "class": "economy"}"#).is_empty());
    assert_eq!(judge(r#"{"seats": 0}"#), ["contract.range"]);
    assert_eq!(
        judge(r#"{"class": "first"}"#),
        ["contract.missing-field", "contract.one-of"]
    );
    assert_eq!(
        judge(r#"{"seats": 1, "pet": "cat"}"#),
        ["contract.unexpected-field"]
    );
    // What a rule cannot say is named, on stderr and in the pack.
    let file = json!([{"name": "f", "input_schema": {"type": "object", "properties": {
        "when": {"type": "string", "format": "date-time"},
        "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}]);
    let tools = dir.path().join("dropped.json");
    std::fs::write(&tools, file.to_string()).unwrap();
    let (ok, pack, err) = tribunal(&["new", "tools", "--from", tools.to_str().unwrap()]);
    assert!(ok);
    assert!(err.contains("`f.when: format` has no rule"), "{err}");
    assert!(err.contains("`f.n: anyOf` has no rule"), "{err}");
    assert!(pack.contains("# not a rule here: f.n: anyOf"), "{pack}");
    // A file that is not one is an error that says where.
    std::fs::write(&tools, "[{\"name\": \"f\",]").unwrap();
    let (ok, _, err) = tribunal(&["new", "tools", "--from", tools.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("dropped.json:1:"), "{err}");
}
