//! `contract.repair: schema`: the document brought to the contract after
//! extraction, each change in `extraction.schema_repairs` at its path and its
//! kind in `extraction.repairs`; nothing changes without it; the result
//! records `eval` writes (with and without steps that read the JSON), the
//! library's reports and a streaming session's agree.

use std::path::Path;

use assert_cmd::Command;
use serde_json::{json, Value};
use tribunal::{Input, Pack, StreamEvent};

const CONTRACT: &str = r"  additional_fields: false
  fields:
    name: { type: string, required: true }
    age: { type: integer, min: 0 }
    member: { type: boolean }
    tags: { type: array, items: string }
    lang: { type: string, default: en, enum: [en, fr] }
";

/// A pack of `CONTRACT` (with `repair: schema` when `repair`), and `steps`
/// as its pipeline.
fn pack(dir: &Path, repair: bool, steps: &str) -> Pack {
    let repair = if repair { "  repair: schema\n" } else { "" };
    std::fs::write(
        dir.join("pack.yaml"),
        format!("name: people\ncontract:\n{repair}{CONTRACT}{steps}"),
    )
    .unwrap();
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

const VALIDATE: &str = "pipeline:\n  postprocessors: [ { use: contract } ]\n";

const OUTPUT: &str =
    r#"{"name": "Ada", "age": "36", "member": "true", "tags": "math", "note": "x"}"#;

fn codes(report: &Value) -> Vec<&str> {
    report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["code"].as_str().unwrap())
        .collect()
}

#[test]
fn the_document_is_brought_to_the_contract_and_every_change_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let report = pack(dir.path(), true, VALIDATE)
        .evaluate(&Input::new(OUTPUT))
        .to_value();
    assert_eq!(
        report["json"],
        json!({"name": "Ada", "age": 36, "member": true, "tags": ["math"], "lang": "en"})
    );
    assert_eq!(
        report["extraction"],
        json!({
            "tier": "strict",
            "repairs": ["coerced_number", "coerced_boolean", "wrapped_in_array",
                        "dropped_unexpected_field", "filled_default"],
            "raw_fallback": false,
            "schema_repairs": [
                {"repair": "coerced_number", "path": "/age"},
                {"repair": "coerced_boolean", "path": "/member"},
                {"repair": "wrapped_in_array", "path": "/tags"},
                {"repair": "filled_default", "path": "/lang"},
                {"repair": "dropped_unexpected_field", "path": "/note"},
            ],
        })
    );
    assert_eq!(codes(&report), Vec::<&str>::new());
    assert_eq!(report["status"], "PASS");
}

#[test]
fn without_it_the_document_is_judged_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let report = pack(dir.path(), false, VALIDATE)
        .evaluate(&Input::new(OUTPUT))
        .to_value();
    assert_eq!(
        report["json"],
        serde_json::from_str::<Value>(OUTPUT).unwrap()
    );
    assert_eq!(
        report["extraction"],
        json!({"tier": "strict", "repairs": [], "raw_fallback": false})
    );
    assert_eq!(
        codes(&report),
        [
            "contract.type",
            "contract.type",
            "contract.type",
            "contract.unexpected-field"
        ]
    );
}

#[test]
fn changes_follow_the_tier_s_own_repairs_and_what_cannot_be_read_stays_an_issue() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path(), true, VALIDATE);
    let report = pack
        .evaluate(&Input::new(
            "Here: {'name': 'Ada', 'age': 'about 30', lang: 'fr',}",
        ))
        .to_value();
    assert_eq!(
        report["json"],
        json!({"name": "Ada", "age": "about 30", "lang": "fr"})
    );
    assert_eq!(
        report["extraction"]["repairs"],
        json!([
            "trailing_comma",
            "single_quotes",
            "unquoted_keys",
            "surrounding_text"
        ])
    );
    assert!(report["extraction"].get("schema_repairs").is_none());
    assert_eq!(codes(&report), ["contract.type"]);
}

/// The records `tribunal eval` writes for `outputs` with the pack in `dir`.
fn eval(dir: &Path, outputs: &[&str]) -> Vec<Value> {
    let mut data = String::new();
    for output in outputs {
        data.push_str(&json!({ "output": output }).to_string());
        data.push('\n');
    }
    let out = Command::cargo_bin("tribunal")
        .unwrap()
        .arg("eval")
        .arg(dir)
        .args(["--input", "-"])
        .write_stdin(data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn eval_writes_the_changed_document_whether_or_not_a_step_reads_it() {
    let outputs = [
        OUTPUT,
        r#"{"name": "Bo"}"#,
        "```json\n{\"name\": \"Cy\", \"age\": 4}\n```",
    ];
    for steps in ["", VALIDATE] {
        let dir = tempfile::tempdir().unwrap();
        let library = pack(dir.path(), true, steps);
        let records = eval(dir.path(), &outputs);
        for (record, output) in records.iter().zip(outputs) {
            let report = library.evaluate(&Input::new(output)).to_value();
            assert_eq!(record["json"], report["json"], "{steps:?} {output}");
            assert_eq!(record["extraction"], report["extraction"], "{steps:?}");
        }
        assert_eq!(records[1]["json"], json!({"name": "Bo", "lang": "en"}));
        assert_eq!(
            records[2]["json"],
            json!({"name": "Cy", "age": 4, "lang": "en"})
        );
    }
}

#[test]
fn a_stream_judges_at_finish_what_evaluate_judges() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path(), true, VALIDATE);
    for output in [OUTPUT, r#"{"name": 5, "age": "x", "extra": 1}"#] {
        let mut session = pack.stream();
        let mut events = Vec::new();
        for chunk in output.as_bytes().chunks(3) {
            events.extend(session.push(std::str::from_utf8(chunk).unwrap()));
        }
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, StreamEvent::Violation(_))),
            "no early violation: the changes may undo it ({events:?})"
        );
        assert_eq!(
            session.finish().to_json_line(),
            pack.evaluate(&Input::new(output)).to_json_line()
        );
    }
}

#[test]
fn the_pack_schema_and_json_schema_show_the_key_and_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack(dir.path(), true, "");
    let schema = pack.json_schema().unwrap();
    assert_eq!(schema["properties"]["lang"]["default"], "en");
    let pack_schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas/pack.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let text = pack_schema.to_string();
    assert!(
        text.contains("\"repair\""),
        "regenerate docs/schemas/pack.schema.json"
    );
    assert!(text.contains("filled in under `repair: schema`"));
}
