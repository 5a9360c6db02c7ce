//! The contract's `items:` with a field spec of their own, at any depth: arrays
//! of objects (with `fields`, `additional_fields` and `variants`), arrays of
//! arrays, `min_items`/`max_items`/`unique_items`; their issues at each value's
//! own path, their prompt lines and their JSON Schema, and the load errors.

use std::path::Path;

use serde_json::{json, Value};
use tribunal::{Input, Pack};

/// A pack of `contract` alone, from its YAML (indented under `contract:`).
fn load(dir: &Path, contract: &str) -> Result<Pack, String> {
    std::fs::write(
        dir.join("pack.yaml"),
        format!("name: items\ncontract:\n{contract}"),
    )
    .unwrap();
    Pack::load(dir).map_err(|err| err.to_string())
}

/// Each issue as `[code, path, message]`.
fn issues(pack: &Pack, output: &Value) -> Vec<[String; 3]> {
    let report = pack.evaluate(&Input::new(output.to_string()));
    let value = report.to_value();
    value["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| {
            [
                issue["code"].as_str().unwrap().to_owned(),
                issue["path"].as_str().unwrap().to_owned(),
                issue["message"].as_str().unwrap().to_owned(),
            ]
        })
        .collect()
}

const PLAN: &str = r#"
  additional_fields: false
  fields:
    steps:
      type: array
      required: true
      min_items: 1
      max_items: 3
      items:
        type: object
        additional_fields: false
        kind_field: action
        fields:
          note: { type: string }
        variants:
          call:
            description: "call a tool"
            fields:
              tool: { type: string, required: true, enum: [search, fetch] }
              args:
                type: array
                items: { type: array, items: integer, min_items: 2, max_items: 2 }
          say:
            fields:
              text: { type: string, required: true, sentences: 1 }
    tags: { type: array, items: string, unique_items: true }
"#;

#[test]
fn issues_name_each_item_s_own_path_at_any_depth() {
    let dir = tempfile::tempdir().unwrap();
    let pack = load(dir.path(), PLAN).unwrap();
    let good = json!({"steps": [
        {"action": "call", "tool": "search", "args": [[1, 2], [3, 4]]},
        {"action": "say", "text": "Done.", "note": "end"}
    ], "tags": ["a", "b"]});
    assert_eq!(issues(&pack, &good), Vec::<[String; 3]>::new());

    let bad = json!({"steps": [
        {"action": "call", "tool": "delete", "args": [[1, 2], [3], [4, "x"]], "text": "no"},
        {"action": "shout", "text": "Hi."},
        {"text": "Where is the action?"},
        "say"
    ], "tags": ["a", "b", "a"]});
    let got = issues(&pack, &bad);
    let want: Vec<[&str; 3]> = vec![
        [
            "contract.one-of",
            "/steps/0/tool",
            "`steps[0].tool` must be one of: search | fetch, got \"delete\"",
        ],
        [
            "contract.length",
            "/steps/0/args/1",
            "`steps[0].args[1]` must have at least 2 items, got 1",
        ],
        [
            "contract.item",
            "/steps/0/args/2/1",
            "`steps[0].args[2][1]` must be an integer, got a string",
        ],
        [
            "contract.unexpected-field",
            "/steps/0/text",
            "unexpected field `steps[0].text`",
        ],
        [
            "contract.one-of",
            "/steps/1/action",
            "`steps[1].action` must be one of: call | say, got \"shout\"",
        ],
        [
            "contract.missing-field",
            "/steps/2/action",
            "missing required field `steps[2].action`",
        ],
        [
            "contract.item",
            "/steps/3",
            "`steps[3]` must be an object, got a string",
        ],
        [
            "contract.length",
            "/steps",
            "`steps` must have at most 3 items, got 4",
        ],
        [
            "contract.unique-items",
            "/tags/2",
            "`tags[2]` repeats `tags[0]` (unique_items)",
        ],
    ];
    let mut got_sorted = got.clone();
    got_sorted.sort();
    let mut want_sorted: Vec<[String; 3]> = want.iter().map(|w| w.map(str::to_owned)).collect();
    want_sorted.sort();
    assert_eq!(got_sorted, want_sorted, "{got:#?}");
    // The array's own checks come first, then its items in order.
    assert_eq!(got[0][1], "/steps");
}

#[test]
fn the_prompt_and_the_schema_describe_the_items() {
    let dir = tempfile::tempdir().unwrap();
    let pack = load(dir.path(), PLAN).unwrap();
    let prompt = pack.prompt().unwrap();
    let want = "\
Schema: {\"steps\": [{\"action\": \"...\", \"note\": \"...\"}], \"tags\": []}
steps must have 1 to 3 items.
steps[].action must be one of: call | say
Each steps[].action has fields of its own:
- \"call\" (call a tool): {\"tool\": \"...\", \"args\": [[]]}
  steps[].tool must be one of: search | fetch
  steps[].args[] must have exactly 2 items.
- \"say\": {\"text\": \"...\"}
  steps[].text must be exactly one sentence.
tags must have no item twice.";
    assert!(prompt.contains(want), "{prompt}");

    let schema = pack.json_schema().unwrap();
    let steps = &schema["properties"]["steps"];
    assert_eq!(steps["minItems"], 1);
    assert_eq!(steps["maxItems"], 3);
    let branches = steps["items"]["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 2);
    let call = &branches[0];
    assert_eq!(call["title"], "call");
    assert_eq!(
        call["properties"]["action"],
        json!({"type": "string", "const": "call"})
    );
    assert_eq!(call["required"], json!(["action", "tool"]));
    assert_eq!(call["additionalProperties"], false);
    assert_eq!(
        call["properties"]["args"]["items"],
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2})
    );
    assert_eq!(schema["properties"]["tags"]["uniqueItems"], true);
    // The schema accepts what validation accepts, and rejects what it rejects.
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json!({"steps": [{"action": "say", "text": "Hi."}]})));
    assert!(!validator.is_valid(&json!({"steps": [{"action": "say", "text": "Hi.", "tool": "x"}]})));
    assert!(!validator
        .is_valid(&json!({"steps": [{"action": "call", "tool": "search", "args": [[1]]}]})));
}

#[test]
fn item_specs_that_cannot_apply_are_load_errors_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "  fields:\n    xs: { type: array, items: { type: string, required: true } }\n",
            "the items of `xs` have `required`",
        ),
        (
            "  fields:\n    xs: { type: string, items: string }\n",
            "field `xs` has `items`, `min_items`, `max_items` or `unique_items`, but its type does not allow an array",
        ),
        (
            "  fields:\n    xs: { type: array, min_items: 3, max_items: 2 }\n",
            "field `xs`: min_items 3 is above max_items 2",
        ),
        (
            "  fields:\n    xs:\n      type: array\n      items: { type: string, fields: { a: { type: string } } }\n",
            "field `xs[]` has `fields` or `variants`, but its type does not allow an object",
        ),
        (
            "  fields:\n    o: { type: object, kind_field: type }\n",
            "field `o` has `kind_field` but no `variants`",
        ),
        (
            "  fields:\n    o:\n      type: object\n      fields: { kind: { type: string, enum: [a] } }\n      variants: { a: }\n",
            "field `o.kind` has `enum`, but its kinds are the names of `variants`",
        ),
        (
            "  fields:\n    xs: { type: array, items: strnig }\n",
            "unknown value `strnig`",
        ),
        (
            "  fields:\n    xs:\n      type: array\n      items: { type: object, feilds: { a: { type: string } } }\n",
            "did you mean `fields`?",
        ),
    ];
    for (contract, wanted) in cases {
        let err = load(dir.path(), contract).expect_err(contract);
        assert!(err.contains(wanted), "{contract}\n→ {err}");
        assert!(err.contains("pack.yaml:"), "no location: {err}");
    }
}

/// Every object in `schema` (any depth) is closed and requires all its properties.
fn assert_strict(schema: &Value, at: &str) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        assert_eq!(schema["additionalProperties"], false, "{at}");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(required, names, "{at}");
        for (name, property) in properties {
            assert_strict(property, &format!("{at}/properties/{name}"));
        }
    }
    for key in ["minLength", "maxLength", "uniqueItems", "oneOf", "$schema"] {
        assert!(schema.get(key).is_none(), "{at} keeps {key}");
    }
    if let Some(items) = schema.get("items") {
        assert_strict(items, &format!("{at}/items"));
    }
    for branch in schema
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        assert_strict(branch, &format!("{at}/anyOf"));
    }
}

#[test]
fn the_strict_schema_is_openai_s_subset() {
    let dir = tempfile::tempdir().unwrap();
    let pack = load(dir.path(), PLAN).unwrap();
    let strict = pack.json_schema_strict().unwrap().unwrap();
    assert_strict(&strict, "");
    let steps = &strict["properties"]["steps"];
    assert_eq!(steps["minItems"], 1, "kept: strict mode takes item counts");
    let say = &steps["items"]["anyOf"][1];
    // An optional member is required and nullable; its enum, if any, takes null.
    assert_eq!(say["properties"]["note"]["type"], json!(["string", "null"]));
    assert_eq!(
        strict["properties"]["tags"],
        json!({"type": ["array", "null"], "items": {"type": "string"}, "description": "Must have no item twice."})
    );
    // Still a valid JSON Schema, accepting a complete plan.
    let validator = jsonschema::validator_for(&strict).unwrap();
    let plan = json!({"steps": [{"action": "say", "text": "Hi.", "note": null}], "tags": null});
    assert!(validator.is_valid(&plan));

    // What strict mode cannot say is an error naming the place.
    let cases = [
        (
            "  fields:\n    scores: { type: object, values: number }\n",
            "a map (`values:`) (at /properties/scores in the schema)",
        ),
        (
            "  fields:\n    extra: { type: object }\n",
            "an object with no `fields` (at /properties/extra in the schema)",
        ),
        (
            "  fields:\n    x: { type: any }\n",
            "a value of any type (at /properties/x in the schema)",
        ),
        (
            "  variants: { a: , b: }\n",
            "variants of the whole output (at the root in the schema)",
        ),
    ];
    for (contract, wanted) in cases {
        let loaded = load(dir.path(), contract).unwrap();
        let err = loaded
            .json_schema_strict()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(err.contains(wanted), "{contract}\n→ {err}");
    }
}
