//! Integration tests through the real `tribunal` binary: exit codes, bad input,
//! load errors with file, line and column, ordering and the summary.

use std::fs;
use std::io::Write;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn tribunal() -> Command {
    Command::cargo_bin("tribunal").expect("binary builds")
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A small pack with a contract, a placeholder check and the emission metric.
fn demo_pack(dir: &Path) {
    write(
        dir,
        "pack.yaml",
        r#"name: demo
version: 0.1.0
components: [components/*.yaml]
contract:
  may_emit: [note]
  fields:
    kind: { type: string, required: true }
    text: { type: string, required: true, sentences: [1, 2] }
  fallback: { kind: note, text: "{raw}" }
pipeline:
  postprocessors: [ { use: no_placeholders, with: { fields: [text] } } ]
  metrics: [ { use: emission, weight: 1.0 } ]
"#,
    );
    write(
        dir,
        "components/emission.yaml",
        "kind: metric\nname: emission\nimplementation: { builtin: json_emission }\n",
    );
}

fn results(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("result lines are JSON"))
        .collect()
}

#[test]
fn check_exit_code_says_whether_the_output_passed() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .write_stdin(r#"{"kind": "note", "text": "All good."}"#)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "PASS  score 0.0000  extraction strict  (demo@0.1.0)",
        ));
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .write_stdin(r#"{"kind": "note", "text": "TODO. One. Two."}"#)
        .assert()
        .code(1)
        .stdout(
            predicate::str::starts_with("NEEDS_IMPROVEMENT")
                .and(predicate::str::contains("error   contract           /text          `text` must be one or two sentences, got 3")),
        );
    tribunal()
        .args(["check", "--feedback", "--pack"])
        .arg(dir.path())
        .write_stdin(r#"{"kind": "note"}"#)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(
            "Previous issues: ['missing required field `text`']\n\nOUTPUT FORMAT\n",
        ));
}

#[test]
fn check_json_prints_the_result_record() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let out = tribunal()
        .args(["check", "--json", "--pack"])
        .arg(dir.path())
        .write_stdin("Sure! {\"kind\": \"other\", \"text\": \"TODO write this.\"}")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let record: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(record["extraction"]["tier"], "embedded");
    assert_eq!(
        record["json"]["kind"], "note",
        "kind outside may_emit is replaced"
    );
    let messages: Vec<&str> = record["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("\"other\" is not allowed")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("unfilled placeholder")),
        "{messages:?}"
    );
    assert_eq!(record["status"], "NEEDS_IMPROVEMENT");
    let feedback = record["feedback"].as_str().unwrap();
    assert!(feedback.starts_with("Previous issues: ['"), "{feedback}");
    assert!(feedback.contains("OUTPUT FORMAT"), "{feedback}");
    assert_eq!(record["revision"].as_str().unwrap().len(), 16);
}

#[test]
fn eval_keeps_order_and_turns_bad_lines_into_error_records() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let mut data = Vec::new();
    for i in 0..300 {
        writeln!(
            data,
            r#"{{"id": {i}, "output": "{{\"kind\": \"note\", \"text\": \"Line {i}.\"}}"}}"#
        )
        .unwrap();
        match i {
            10 => data.extend_from_slice(b"{\"id\": \"bad-json\", \"output\": \n"),
            20 => data.extend_from_slice(b"{\"id\": \"no-output\"}\n"),
            30 => data.extend_from_slice(b"{\"id\": \"latin1\", \"output\": \"caf\xe9\"}\n"),
            40 => data.extend_from_slice(b"\n"),
            _ => {}
        }
    }
    write(dir.path(), "data.jsonl", &String::from_utf8_lossy(&data));
    // Rewrite with the raw (non-UTF-8) bytes.
    fs::write(dir.path().join("data.jsonl"), &data).unwrap();
    let out = tribunal()
        .args(["eval", "--jobs", "2", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let records = results(&out);
    assert_eq!(records.len(), 303, "every non-blank line yields a result");
    let ids: Vec<String> = records.iter().map(|r| r["id"].to_string()).collect();
    let numbers: Vec<&String> = ids.iter().filter(|id| !id.starts_with('"')).collect();
    let expected: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    assert_eq!(
        numbers,
        expected.iter().collect::<Vec<_>>(),
        "results come in input order"
    );
    for (id, line, reason) in [
        ("\"bad-json\"", 12, "not valid JSON"),
        ("\"no-output\"", 23, "no `output` field"),
        ("\"latin1\"", 34, "not valid UTF-8"),
    ] {
        let index = ids.iter().position(|i| i == id).unwrap();
        assert_eq!(records[index]["status"], "ERROR");
        assert_eq!(records[index]["line"], line);
        assert!(
            records[index]["error"].as_str().unwrap().contains(reason),
            "{}",
            records[index]
        );
    }
    assert_eq!(ids[11], "\"bad-json\"");
    let errors = records.iter().filter(|r| r["status"] == "ERROR").count();
    assert_eq!(errors, 3);
}

#[test]
fn eval_oversized_record_is_an_error_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let big = "x".repeat(10 * 1024 * 1024);
    let data = format!(
        "{{\"id\": \"big\", \"output\": \"{big}\"}}\n{{\"id\": \"small\", \"output\": \"hi\"}}\n"
    );
    write(dir.path(), "data.jsonl", &data);
    let out = tribunal()
        .args(["eval", "--no-progress", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .args(["--max-record-bytes", "1048576"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let records = results(&out);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["id"], "big");
    assert_eq!(records[0]["status"], "ERROR");
    assert!(records[0]["error"]
        .as_str()
        .unwrap()
        .contains("above the limit of 1048576 bytes"));
    assert_eq!(records[1]["id"], "small");
    assert_ne!(records[1]["status"], "ERROR");
}

#[test]
fn deeply_nested_output_does_not_overflow_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_obj = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let lines = [
        serde_json::json!({"id": "arrays", "output": deep}).to_string(),
        serde_json::json!({"id": "objects", "output": deep_obj}).to_string(),
        format!("{{\"id\": \"raw\", \"output\": {deep}}}"),
    ];
    write(dir.path(), "deep.jsonl", &(lines.join("\n") + "\n"));
    let out = tribunal()
        .args(["eval", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("deep.jsonl"))
        .assert()
        .code(1) // the third line's record is itself too deep to parse: an ERROR record
        .get_output()
        .stdout
        .clone();
    let records = results(&out);
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["extraction"]["tier"], "fallback");
    assert_eq!(records[1]["extraction"]["tier"], "fallback");
    assert_eq!(records[2]["status"], "ERROR");
}

#[test]
fn eval_output_path_that_cannot_be_written_fails_before_evaluating() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    write(dir.path(), "data.jsonl", "{\"output\": \"x\"}\n");
    tribunal()
        .args(["eval", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .arg("--output")
        .arg(dir.path().join("no/such/dir/out.jsonl"))
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains("cannot write results to")
                .and(predicate::str::contains("out.jsonl")),
        );
}

#[test]
fn eval_summary_counts_statuses_tiers_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    write(
        dir.path(),
        "data.jsonl",
        concat!(
            r#"{"id": 1, "output": "{\"kind\": \"note\", \"text\": \"Fine.\"}"}"#,
            "\n",
            r#"{"id": 2, "output": "```json\n{\"kind\": \"note\", \"text\": \"Fenced.\"}\n```"}"#,
            "\n",
            r#"{"id": 3, "output": "just prose"}"#,
            "\n",
        ),
    );
    tribunal()
        .args(["eval", "--summary", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .arg("--output")
        .arg(dir.path().join("out.jsonl"))
        .assert()
        .success()
        .stdout(
            predicate::str::contains("records     3")
                .and(predicate::str::contains(
                    "extraction  strict 1  fence 1  fallback 1",
                ))
                .and(predicate::str::contains("emission")),
        );
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

#[test]
fn set_overrides_a_component_config() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let run = |extra: &[&str]| {
        let out = tribunal()
            .args(["check", "--json", "--pack"])
            .arg(dir.path())
            .args(extra)
            .write_stdin(r#"{"event": "custom:go", "data": {}}"#)
            .output()
            .unwrap();
        let record: Value = serde_json::from_slice(&out.stdout).unwrap();
        record["score"].as_f64().unwrap()
    };
    assert!((run(&[]) - 0.7).abs() < 1e-9);
    assert!((run(&["--set", "emission.events=[custom:go]"]) - 1.0).abs() < 1e-9);
    let kind = |extra: &[&str]| {
        let out = tribunal()
            .args(["check", "--json", "--pack"])
            .arg(dir.path())
            .args(extra)
            .write_stdin(r#"{"kind": "memo", "text": "Hi."}"#)
            .output()
            .unwrap();
        let record: Value = serde_json::from_slice(&out.stdout).unwrap();
        record["json"]["kind"].as_str().unwrap().to_owned()
    };
    assert_eq!(kind(&[]), "note", "memo is outside may_emit: coerced");
    assert_eq!(kind(&["--set", "contract.may_emit=[note, memo]"]), "memo");
    // `on_violation: reject` keeps what the model wrote, with the error.
    assert_eq!(kind(&["--set", "contract.on_violation=reject"]), "memo");
    let out = tribunal()
        .args(["check", "--json", "--pack"])
        .arg(dir.path())
        .args(["--set", "contract.on_violation=reject"])
        .write_stdin(r#"{"kind": "memo", "text": "Hi."}"#)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(record["status"], "PASS");
    assert!(record["issues"].as_array().unwrap().iter().any(|issue| {
        issue["message"] == "kind \"memo\" is not allowed (may_emit: note)"
            && issue["severity"] == "error"
            && issue["path"] == "/kind"
    }));
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .args(["--set", "contract.on_violation=drop"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown variant `drop`, expected `coerce` or `reject`",
        ));
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .args(["--set", "contract.may_emit=7"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--set contract.may_emit=7"));
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .args(["--set", "emisson.events=[x]"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `emission`?"));
}

fn lint_fails_with(files: &[(&str, &str)], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    let assert = tribunal().arg("lint").arg(dir.path()).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    for needle in expected {
        assert!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }
    // check reports the same load error with exit 2.
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .write_stdin("{}")
        .assert()
        .code(2);
}

#[test]
fn unknown_key_is_a_load_error_with_position_and_suggestion() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\npipeline:\n  metrics:\n    - use: json_emission\n      wieght: 2\n",
        )],
        &[
            "pack.yaml:5:7: pipeline.metrics[0]: unknown field `wieght`",
            "did you mean `weight`?",
        ],
    );
}

#[test]
fn unknown_component_is_suggested() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\npipeline:\n  metrics:\n    - use: json_emision\n",
        )],
        &[
            "pack.yaml:4:12: unknown component `json_emision`",
            "did you mean `json_emission`?",
        ],
    );
}

#[test]
fn a_component_in_the_wrong_section_says_where_it_belongs() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\npipeline:\n  metrics: [required_fields]\n  postprocessors: [json_emission]\n",
        )],
        &[
            "pack.yaml:3:13: built-in `required_fields` is a postprocessor, not a metric; list it under `pipeline.postprocessors`",
            "pack.yaml:4:20: built-in `json_emission` is a metric, not a postprocessor; list it under `pipeline.metrics`",
        ],
    );
    lint_fails_with(
        &[
            (
                "pack.yaml",
                "name: p\ncomponents: [near.yaml]\npipeline:\n  metrics: [near]\n",
            ),
            (
                "near.yaml",
                "kind: strategy\nname: near\nimplementation:\n  inline: |\n    fn compare(e, a, ctx) { 1.0 }\n",
            ),
        ],
        &["pack.yaml:4:13: `near` is a strategy, not a metric; list it under `components` and name it in a `field_strategies` map"],
    );
}

#[test]
fn wrong_type_is_a_load_error() {
    lint_fails_with(
        &[("pack.yaml", "name: p\nscoring:\n  min_score: high\n")],
        &["pack.yaml:3:14: scoring.min_score: invalid type: string \"high\", expected f64"],
    );
}

#[test]
fn missing_file_is_a_load_error() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\ncomponents: [components/missing.yaml]\n",
        )],
        &["pack.yaml:2:14: missing file `components/missing.yaml`"],
    );
}

#[test]
fn dependency_cycle_is_a_load_error() {
    lint_fails_with(
        &[
            ("pack.yaml", "name: p\ncomponents: [c/*.yaml]\npipeline:\n  metrics: [a]\n"),
            ("c/a.yaml", "kind: metric\nname: a\ndependencies: [b]\nimplementation: { builtin: json_emission }\n"),
            ("c/b.yaml", "kind: metric\nname: b\ndependencies: [a]\nimplementation: { builtin: json_emission }\n"),
        ],
        &["b.yaml:3:16: dependency cycle: a → b → a", "help: remove one of these dependencies"],
    );
}

#[test]
fn manifest_in_markdown_front_matter_with_seed_aliases_loads_and_explains() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack.yaml",
        "name: p\ncomponents: [c/*.md]\npipeline:\n  metrics: [m]\n",
    );
    write(
        dir.path(),
        "c/m.md",
        "---\ncomponent_type: evaluation\nname: m\nimplementation:\n  builtin: json_emission\n---\n# M\n\nExplains itself.\n",
    );
    tribunal().arg("lint").arg(dir.path()).assert().success();
    tribunal()
        .args(["explain", "m", "--pack"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("Explains itself."));
    tribunal()
        .args(["list"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("m  ").and(predicate::str::contains("builtin json_emission")),
        );
    tribunal()
        .args(["explain", "json_emision"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `json_emission`?"));
}

#[test]
fn prompt_prints_the_format_block_and_schema() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    tribunal()
        .args(["prompt", "--pack"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout("OUTPUT FORMAT\nReply with a single JSON object and nothing else — no prose before or after.\nSchema: {\"kind\": \"...\", \"text\": \"...\"}\nkind must be one of: note\ntext must be one or two sentences.\n");
    let out = tribunal()
        .args(["prompt", "--schema", "--pack"])
        .arg(dir.path())
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(
        schema["properties"]["kind"]["enum"],
        serde_json::json!(["note"])
    );
    assert_eq!(schema["required"], serde_json::json!(["kind", "text"]));
}

/// The example tool-call pack's contract has per-tool variants: its JSON
/// Schema is a `oneOf` (one complete object per tool, the tool a `const`) that
/// a JSON Schema validator compiles, and it accepts and refuses what the
/// contract does.
#[test]
fn variants_export_a_one_of_schema_a_validator_accepts() {
    let pack = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/packs/tool-calls");
    let out = tribunal()
        .args(["prompt", "--schema", "--pack"])
        .arg(&pack)
        .output()
        .unwrap();
    assert!(out.status.success());
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let branches = schema["oneOf"].as_array().expect("a oneOf");
    let kinds: Vec<&Value> = branches
        .iter()
        .map(|b| &b["properties"]["tool"]["const"])
        .collect();
    assert_eq!(
        kinds,
        [
            "search_flights",
            "book_flight",
            "cancel_booking",
            "ask_user"
        ]
    );
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let call = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
    for good in [
        r#"{"tool": "search_flights", "args": {"origin": "LHR", "destination": "JFK", "date": "2026-12-05", "passengers": 2}, "reason": "To New York."}"#,
        r#"{"tool": "search_flights", "args": {"origin": "LHR", "destination": "JFK", "date": "2026-12-05", "return_date": null, "passengers": 2, "cabin": "business"}, "reason": "To New York."}"#,
        r#"{"tool": "cancel_booking", "args": {"booking_id": "QX7P2K"}, "reason": "Cancel it."}"#,
        r#"{"tool": "ask_user", "args": {"question": "When?"}, "reason": "No date given."}"#,
    ] {
        let errors: Vec<String> = validator
            .iter_errors(&call(good))
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{good}: {errors:?}");
    }
    for bad in [
        // a tool outside the list
        r#"{"tool": "delete_booking", "args": {"booking_id": "QX7P2K"}, "reason": "Gone."}"#,
        // another tool's arguments
        r#"{"tool": "cancel_booking", "args": {"origin": "LHR", "destination": "JFK"}, "reason": "Cancel."}"#,
        // a required argument missing, an argument the tool does not take
        r#"{"tool": "search_flights", "args": {"origin": "LHR", "destination": "JFK", "passengers": 2}, "reason": "To New York."}"#,
        r#"{"tool": "cancel_booking", "args": {"booking_id": "QX7P2K", "seat": "aisle"}, "reason": "Cancel."}"#,
        // a value out of range, a member the contract does not allow
        r#"{"tool": "search_flights", "args": {"origin": "LHR", "destination": "JFK", "date": "2026-12-05", "passengers": 12}, "reason": "A group."}"#,
        r#"{"tool": "ask_user", "args": {"question": "When?"}, "reason": "No date.", "note": "x"}"#,
    ] {
        assert!(!validator.is_valid(&call(bad)), "accepted: {bad}");
    }
}

/// A type listed twice counts once, and `any` in a union takes every value: the
/// exported JSON Schema stays valid (found by the `contract` fuzz target).
#[test]
fn type_unions_export_a_valid_schema() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack.yaml",
        "name: u\ncontract:\n  fields:\n    total: { type: [number, string, string] }\n    x: { type: [any, string] }\n",
    );
    let out = tribunal()
        .args(["prompt", "--schema", "--pack"])
        .arg(dir.path())
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema["properties"]["total"]["type"],
        serde_json::json!(["number", "string"])
    );
    assert_eq!(schema["properties"]["x"].get("type"), None);
    jsonschema::validator_for(&schema).expect("a valid JSON Schema");
}

/// Mistakes in `variants:` and nested `fields:` are load errors at their line.
#[test]
fn contract_variant_mistakes_are_load_errors_at_their_line() {
    let lint = |contract: &str| {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "pack.yaml",
            &format!("name: v\ncontract:\n{contract}"),
        );
        let out = tribunal().arg("lint").arg(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{contract}");
        String::from_utf8(out.stderr).unwrap()
    };
    let err = lint("  kind_field: tool\n  may_emit: [a]\n  variants:\n    a: {}\n");
    assert!(
        err.contains(
            "pack.yaml:4:3: contract: `may_emit` and `variants` both list the allowed kinds"
        ),
        "{err}"
    );
    let err = lint("  kind_field: tool\n  fields:\n    args: { type: object }\n  variants:\n    a:\n      fields:\n        args: { type: object }\n");
    assert!(
        err.contains("pack.yaml:9:9: contract: variant `a` repeats the field `args` of `fields`"),
        "{err}"
    );
    let err = lint("  variants:\n    a:\n      fields:\n        args:\n          type: string\n          fields:\n            x: { type: string }\n");
    assert!(
        err.contains("pack.yaml:6:9: contract: field `args` has `fields` or `variants`, but its type does not allow an object"),
        "{err}"
    );
    let err = lint("  fields:\n    args:\n      fields:\n        n: { min: 3, max: 1 }\n");
    assert!(
        err.contains("pack.yaml:6:9: contract: field `args.n`: min 3 is above max 1"),
        "{err}"
    );
    let err = lint("  variants:\n    a:\n      fieldz: {}\n");
    assert!(err.contains("unknown field `fieldz`"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    tribunal().args(["eval"]).assert().code(2);
    tribunal()
        .args(["check", "--pack", "/no/such/pack"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(
            "error: /no/such/pack: no such file or folder; a pack is a folder holding a pack.yaml (or the pack.yaml itself)\n",
        );
}

/// Every command that loads a pack takes it as its first argument or as `--pack`,
/// the same way, with one message for a missing pack and no made-up position.
#[test]
fn the_pack_is_an_argument_or_an_option_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let pack = dir.path().to_str().unwrap();
    let output = dir.path().join("reply.txt");
    write(
        dir.path(),
        "reply.txt",
        r#"{"kind": "note", "text": "All good."}"#,
    );
    let data = dir.path().join("data.jsonl");
    write(dir.path(), "data.jsonl", "{\"output\": \"{}\"}\n");
    let (output, data) = (output.to_str().unwrap(), data.to_str().unwrap());
    let forms: [(&[&str], &[&str]); 6] = [
        (
            &["check", pack, output, "--json"],
            &["check", "--pack", pack, output, "--json"],
        ),
        (
            &["eval", pack, "--input", data],
            &["eval", "--pack", pack, "--input", data],
        ),
        (&["list", pack], &["list", "--pack", pack]),
        (&["prompt", pack], &["prompt", "--pack", pack]),
        (
            &["explain", "contract", pack],
            &["explain", "contract", "--pack", pack],
        ),
        (&["lint", pack], &["lint", "--pack", pack]),
    ];
    for (positional, option) in forms {
        let a = tribunal().args(positional).output().unwrap();
        let b = tribunal().args(option).output().unwrap();
        assert_eq!(a.status.code(), b.status.code(), "{positional:?}");
        assert!(
            a.status.code().unwrap() < 2,
            "{positional:?}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(a.stdout, b.stdout, "{positional:?}");
    }
    // `check --pack P FILE` and `check P FILE` name the record after the file.
    let record: Value = serde_json::from_slice(
        &tribunal()
            .args(["check", "--pack", pack, output, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(record["id"], output);
    // Both at once is a usage error.
    tribunal()
        .args(["list", pack, "--pack", pack])
        .assert()
        .code(2);
    tribunal()
        .args(["check", "--pack", pack, pack, output])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("too many arguments"));
    // One message for a missing pack, whatever the command.
    for command in [
        &["check", "/no/such"][..],
        &["eval", "/no/such", "--input", data],
        &["list", "/no/such"],
        &["prompt", "/no/such"],
        &["lint", "/no/such"],
        &["test", "/no/such"],
        &["explain", "contract", "/no/such"],
        &["explain", "/no/such", "contract"],
    ] {
        tribunal().args(command).write_stdin("{}").assert().code(2).stderr(
            "error: /no/such: no such file or folder; a pack is a folder holding a pack.yaml (or the pack.yaml itself)\n",
        );
    }
}

#[test]
fn an_empty_data_set_or_test_suite_is_said_and_fails_a_gate() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    write(dir.path(), "empty.jsonl", "\n\n");
    let data = dir.path().join("empty.jsonl");
    tribunal()
        .args(["eval", "--input"])
        .arg(&data)
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout("")
        .stderr(predicate::str::contains(
            "no records (the data set is empty or holds only blank lines)",
        ));
    tribunal()
        .args(["eval", "--require-pass", "--input"])
        .arg(&data)
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--require-pass and --fail-under fail on an empty data set",
        ));
    // demo_pack has no tests: nothing tested is not a success.
    tribunal()
        .arg("test")
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::ends_with(
            "  (no tests)\n0 passed, 0 failed\n",
        ))
        .stderr(predicate::str::contains("no test cases found"));
}

#[test]
fn counts_are_written_with_correct_plurals() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let lint = tribunal().arg("lint").arg(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&lint.stdout);
    assert!(
        !text.contains(" 1 components") && !text.contains(" 1 metrics"),
        "{text}"
    );
    assert!(text.contains("0 test files"), "{text}");
}

#[test]
fn completions_and_man_pages_are_generated_from_the_cli() {
    let bash = tribunal().args(["completions", "bash"]).output().unwrap();
    let bash = String::from_utf8_lossy(&bash.stdout);
    for word in ["check", "eval", "--pack", "--require-pass", "--plugin-dir"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let dir = tempfile::tempdir().unwrap();
    tribunal()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .code(0);
    let eval = std::fs::read_to_string(dir.path().join("tribunal-eval.1")).unwrap();
    assert!(
        eval.contains(".TH tribunal-eval 1") && eval.contains("require\\-pass"),
        "{eval}"
    );
    tribunal()
        .args(["man"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(".SH SUBCOMMANDS"));
}

#[test]
fn misplaced_weight_and_unscorable_min_score_are_load_errors() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\npipeline:\n  postprocessors:\n    - use: no_placeholders\n      weight: 2\n",
        )],
        &["pack.yaml:5:7: postprocessor `no_placeholders` has a `weight`, but only metrics are weighted"],
    );
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\npipeline:\n  metrics: [{ use: json_emission, weight: 0 }]\nscoring:\n  min_score: 0.5\n",
        )],
        &["pack.yaml:5:3: min_score needs a score"],
    );
}

#[test]
fn a_type_typo_in_the_contract_is_suggested() {
    lint_fails_with(
        &[(
            "pack.yaml",
            "name: p\ncontract:\n  fields:\n    n: { type: numbr }\n",
        )],
        &[
            "pack.yaml:4:16: contract.fields.n.type: unknown value `numbr`",
            "did you mean `number`?",
        ],
    );
}

#[test]
fn an_unknown_builtin_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack.yaml",
        "name: p\ncomponents: [c/*.yaml]\npipeline:\n  metrics: [m]\n",
    );
    write(
        dir.path(),
        "c/m.yaml",
        "kind: metric\nname: m\nimplementation: { builtin: json_emision }\n",
    );
    let out = tribunal()
        .arg("lint")
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&out);
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert!(
        stderr.contains("m.yaml:3:28: unknown built-in `json_emision`"),
        "{stderr}"
    );

    // A strategy without an implementation: one error too.
    write(dir.path(), "pack.yaml", "name: p\ncomponents: [c/*.yaml]\n");
    write(dir.path(), "c/m.yaml", "kind: strategy\nname: m\n");
    let out = tribunal()
        .arg("lint")
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&out);
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}

#[test]
fn a_bad_set_value_is_blamed_on_the_set() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .args(["--set", "emission.threshold=high"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("emission: invalid config: invalid type: string \"high\"")
                .and(predicate::str::contains(
                    "help: this config was changed by --set emission.threshold=high",
                )),
        );
    tribunal()
        .args(["check", "--pack"])
        .arg(dir.path())
        .args(["--set", "emission.tresholds=0.5"])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("pack.yaml: --set emission.tresholds=0.5: emission: invalid config: unknown field `tresholds`")
                .and(predicate::str::contains("did you mean `threshold`?")),
        );
}

#[test]
fn eval_summary_counts_records_of_a_pack_without_metrics() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack.yaml",
        "name: nometric\npipeline:\n  postprocessors: [ { use: required_fields, with: { paths: [a] } } ]\n",
    );
    write(
        dir.path(),
        "data.jsonl",
        "{\"output\": \"{\\\"a\\\": 1}\"}\n{\"output\": \"{}\"}\n{\"nope\": 1}\n",
    );
    tribunal()
        .args(["eval", "--summary", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .arg("--output")
        .arg(dir.path().join("out.jsonl"))
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("records     3")
                .and(predicate::str::contains(
                    "status      PASS 1  NEEDS_IMPROVEMENT 1  FAIL 0  ERROR 1",
                ))
                .and(predicate::str::contains("extraction  strict 2")),
        );
}

#[test]
fn set_reads_a_value_from_a_file_with_at() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    write(dir.path(), "events.json", r#"["custom:go", "custom:stop"]"#);
    let out = tribunal()
        .current_dir(dir.path())
        .args([
            "check",
            "--json",
            "--pack",
            ".",
            "--set",
            "emission.events=@events.json",
        ])
        .write_stdin(r#"{"event": "custom:stop", "data": {}}"#)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        (record["score"].as_f64().unwrap() - 1.0).abs() < 1e-9,
        "{record}"
    );
    tribunal()
        .current_dir(dir.path())
        .args([
            "check",
            "--pack",
            ".",
            "--set",
            "emission.events=@missing.json",
        ])
        .write_stdin("{}")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--set emission.events=@missing.json: cannot read",
        ));
}

#[test]
fn a_reader_that_stops_early_does_not_make_tribunal_panic() {
    // `tribunal explain contract | head -1`: stdout is closed before the command has
    // written everything. The command must end quietly, not panic.
    for args in [
        &["explain", "contract"][..],
        &["list", "rules/ksi-emission"][..],
        &["prompt", "--pack", "rules/structured-output"][..],
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tribunal"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("tribunal starts");
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("tribunal ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            output.status.success(),
            "{args:?}: {:?} {stderr}",
            output.status
        );
    }
}

/// A `--set limits.KEY=VALUE` with a known key and a bad value suggests nothing
/// (it used to suggest the key that was typed); an unknown key gets the nearest.
#[test]
fn a_bad_limit_value_suggests_no_key() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let stderr = |set: &str| {
        let output = tribunal()
            .args(["check", "--set", set])
            .arg(dir.path())
            .write_stdin("{}")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{set}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let bad_value = stderr("limits.max_call_depth=100000");
    assert!(
        bad_value.starts_with(&format!(
            "error: {}: --set limits.max_call_depth=100000: ",
            dir.path().join("pack.yaml").display()
        )) && !bad_value.contains("did you mean"),
        "{bad_value}"
    );
    let typo = stderr("limits.max_call_dept=10");
    assert!(typo.contains("did you mean `max_call_depth`?"), "{typo}");
}

#[test]
fn eval_fields_chooses_what_each_result_record_holds() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let data = "{\"id\": \"a\", \"output\": \"{\\\"kind\\\": \\\"note\\\", \\\"text\\\": \\\"Hi.\\\"}\"}\nnot json\n";
    write(dir.path(), "data.jsonl", data);
    let run = |fields: &[&str]| {
        tribunal()
            .args(["eval", "--jobs", "2", "--pack"])
            .arg(dir.path())
            .arg("--input")
            .arg(dir.path().join("data.jsonl"))
            .args(fields)
            .assert()
    };
    let full = results(&run(&[]).code(1).get_output().stdout);
    let chosen = results(
        &run(&["--fields", "score,id,status,error"])
            .code(1)
            .get_output()
            .stdout,
    );
    assert_eq!(full.len(), 2);
    for (full, chosen) in full.iter().zip(&chosen) {
        let keys: Vec<&String> = chosen.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["id", "status", "score", "error"],
            "the record's order"
        );
        for key in keys {
            assert_eq!(chosen[key], full[key]);
        }
    }
    let err = run(&["--fields", "id,stauts"])
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&err);
    assert!(
        err.contains("unknown result field `stauts` (did you mean `status`?)"),
        "{err}"
    );
}

/// Ten records of the demo pack: four PASS (emitted notes), five that do not
/// pass (prose), one ERROR (not JSON).
fn gate_data(dir: &Path) {
    use std::fmt::Write as _;
    let mut data = String::new();
    for i in 0..4 {
        writeln!(
            data,
            r#"{{"id": {i}, "output": "{{\"event\": \"agent:status\", \"data\": {{}}, \"kind\": \"note\", \"text\": \"Ok.\"}}"}}"#
        )
        .unwrap();
    }
    for i in 4..9 {
        writeln!(data, r#"{{"id": {i}, "output": "I would emit an event."}}"#).unwrap();
    }
    data.push_str("not json\n");
    write(dir, "data.jsonl", &data);
}

fn gated(dir: &Path, gates: &[&str]) -> assert_cmd::assert::Assert {
    tribunal()
        .arg("eval")
        .arg(dir)
        .arg("--input")
        .arg(dir.join("data.jsonl"))
        .arg("--output")
        .arg(dir.join("out.jsonl"))
        .args(gates)
        .assert()
}

#[test]
fn eval_gates_decide_the_exit_code_and_say_by_how_much() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    gate_data(dir.path());
    let statuses: Vec<Value> = {
        gated(dir.path(), &[]).code(1); // no gate: an ERROR record is a record not passed
        fs::read_to_string(dir.path().join("out.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["status"].clone())
            .collect()
    };
    let pass = statuses.iter().filter(|s| *s == "PASS").count();
    assert_eq!((pass, statuses.len()), (4, 10), "{statuses:?}");
    // 40% pass: a 0.3 gate passes, whatever the ERROR record.
    gated(dir.path(), &["--fail-under", "pass_rate=0.3"])
        .code(0)
        .stderr(predicate::str::contains(
            "gate passed: pass_rate 0.4000 >= 0.3",
        ));
    gated(dir.path(), &["--fail-under", "pass_rate=0.95"])
        .code(1)
        .stderr(predicate::str::contains(
            "gate FAILED: pass_rate 0.4000 < 0.95 (0.5500 short)",
        ));
    gated(
        dir.path(),
        &["--fail-under", "emission=0.3", "--max-errors", "1"],
    )
    .code(0)
    .stderr(predicate::str::contains("gate passed: emission (mean)"))
    .stderr(predicate::str::contains(
        "gate passed: ERROR records 1 <= 1",
    ));
    gated(dir.path(), &["--max-errors", "0"])
        .code(1)
        .stderr(predicate::str::contains(
            "gate FAILED: ERROR records 1 > 0 (1 too many)",
        ));
    gated(dir.path(), &["--fail-under", "emision=0.3"])
        .code(2)
        .stderr(predicate::str::contains(
            "--fail-under emision: no such gate (did you mean `emission`?)",
        ));
    gated(dir.path(), &["--fail-under", "score=2"])
        .code(2)
        .stderr(predicate::str::contains(
            "the minimum must be a number from 0 to 1",
        ));
}

#[test]
fn eval_summary_json_file_holds_the_run_and_its_gates() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    gate_data(dir.path());
    let summary_file = dir.path().join("summary.json");
    gated(
        dir.path(),
        &[
            "--fail-under",
            "score=0.9",
            "--summary-json",
            summary_file.to_str().unwrap(),
        ],
    )
    .code(1)
    .stdout("");
    let summary: Value = serde_json::from_str(&fs::read_to_string(&summary_file).unwrap()).unwrap();
    assert_eq!(summary["records"], 10);
    assert_eq!(summary["statuses"]["PASS"], 4);
    assert_eq!(summary["statuses"]["ERROR"], 1);
    assert_eq!(summary["pack"]["name"], "demo");
    assert_eq!(summary["pack"]["version"], "0.1.0");
    assert!(summary["pack"]["revision"].is_string());
    assert_eq!(summary["tribunal"], env!("CARGO_PKG_VERSION"));
    assert_eq!(summary["gates"][0]["gate"], "score >= 0.9");
    assert_eq!(summary["gates"][0]["passed"], false);
    assert!(summary["metrics"]["emission"]["mean"].is_number());
    assert!(summary["seconds"].is_number());
    let issues = summary["issues"].as_array().unwrap();
    assert!(!issues.is_empty());
    let counted: u64 = issues.iter().map(|i| i["count"].as_u64().unwrap()).sum();
    let in_records: usize = fs::read_to_string(dir.path().join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["issues"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(
        counted, in_records as u64,
        "every issue of every record, per rule"
    );
    // With a file, --summary still prints the table.
    let second = dir.path().join("second.json");
    gated(
        dir.path(),
        &["--summary", "--summary-json", second.to_str().unwrap()],
    )
    .code(1)
    .stdout(predicate::str::contains("records     10"));
    assert!(second.is_file());
    // A folder there (a pack after a bare --summary-json) is refused before the run.
    gated(
        dir.path(),
        &["--summary-json", dir.path().to_str().unwrap()],
    )
    .code(2)
    .stderr(predicate::str::contains("is a folder, not a file"));
}

#[test]
fn eval_that_cannot_write_its_results_is_aborted() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    gate_data(dir.path());
    tribunal()
        .arg("eval")
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .args(["--output", "/dev/full"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("cannot write results"));
}

/// A JUnit file read back with a maintained JUnit parser (the `junit-parser` crate).
fn read_junit(path: &Path) -> junit_parser::TestSuites {
    let file = std::io::BufReader::new(fs::File::open(path).unwrap());
    junit_parser::from_reader(file).expect("well-formed JUnit XML")
}

#[test]
fn eval_junit_has_a_case_per_record_that_a_junit_parser_reads() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    gate_data(dir.path());
    // Text XML cannot hold, and markup, in an output that fails.
    let mut data = fs::read_to_string(dir.path().join("data.jsonl")).unwrap();
    data.push_str(
        "{\"id\": \"odd <&>\", \"output\": \"I would emit \\u0000\\u001b ]]> <x> & done\"}\n",
    );
    write(dir.path(), "data.jsonl", &data);
    let junit = dir.path().join("results.xml");
    gated(dir.path(), &["--junit", junit.to_str().unwrap()]).code(1);
    let suites = read_junit(&junit);
    assert_eq!((suites.tests, suites.failures, suites.errors), (11, 6, 1));
    let suite = &suites.suites[0];
    assert_eq!(suite.name, "demo@0.1.0");
    assert_eq!(suite.cases.len(), 11);
    assert!(suite.cases[0].status.is_success());
    assert_eq!(suite.cases[0].original_name, "0");
    let prose = &suite.cases[4];
    assert!(prose.status.is_failure(), "{prose:?}");
    assert_eq!(
        prose.properties.hashmap.get("status").map(String::as_str),
        Some("NEEDS_IMPROVEMENT")
    );
    let broken = &suite.cases[9];
    assert_eq!(broken.original_name, "line 10");
    assert!(broken.status.is_error());
    assert!(broken
        .status
        .error_as_ref()
        .message
        .contains("not valid JSON"));
    let odd = &suite.cases[10];
    assert_eq!(odd.original_name, "odd <&>");
    assert!(odd.status.is_failure());
    assert_eq!(
        suite.properties.hashmap.get("pack").map(String::as_str),
        Some("demo@0.1.0")
    );
    let leftovers: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn test_junit_has_a_suite_per_pack_and_a_case_per_test_case() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let mut pack = fs::read_to_string(dir.path().join("pack.yaml")).unwrap();
    pack.push_str("tests: [tests/*.yaml]\n");
    write(dir.path(), "pack.yaml", &pack);
    write(
        dir.path(),
        "tests/cases.yaml",
        r#"cases:
  - name: an emitted note passes
    output: '{"event": "agent:status", "data": {}, "kind": "note", "text": "Ok."}'
    expect: { status: PASS }
  - name: prose is expected to pass (it does not)
    output: I would emit an event.
    expect: { status: PASS }
"#,
    );
    let junit = dir.path().join("tests.xml");
    tribunal()
        .arg("test")
        .arg(dir.path())
        .arg("--junit")
        .arg(&junit)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("1 passed, 1 failed"))
        // A failure says why: what the record said, under what did not match.
        .stdout(predicate::str::is_match(r#"status: expected "PASS", got "[A-Z_]+"\n        \| the record is [A-Z_]+ \(score [0-9.]+\), with [0-9a-z ]+\n"#).unwrap());
    let suites = read_junit(&junit);
    assert_eq!((suites.tests, suites.failures, suites.errors), (2, 1, 0));
    let cases = &suites.suites[0].cases;
    assert_eq!(
        cases[0].original_name,
        "tests/cases.yaml: an emitted note passes"
    );
    assert!(cases[0].status.is_success());
    assert!(cases[1].status.is_failure());
    assert!(cases[1]
        .status
        .failure_as_ref()
        .message
        .contains("status: expected \"PASS\""));
    let text = &cases[1].status.failure_as_ref().text;
    assert!(text.contains("the record is "), "{text}");
}

fn result_line(id: &str, status: &str, score: f64, pack: &str) -> String {
    format!(
        r#"{{"id":{id},"status":"{status}","passed":{},"score":{score},"metrics":{{"m":{{"score":{score},"weight":1.0}}}},"issues":[],"pack":"{pack}","revision":"r-{pack}"}}"#,
        status == "PASS"
    )
}

#[test]
fn diff_shows_regressions_first_and_survives_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let old = [
        result_line(r#""a""#, "PASS", 0.9, "p@1"),
        result_line(r#""b""#, "PASS", 0.8, "p@1"),
        result_line(r#""c""#, "FAIL", 0.2, "p@1"),
        result_line(r#""d""#, "PASS", 0.9, "p@1"),
        result_line("null", "PASS", 0.9, "p@1"),
        result_line(r#""dup""#, "PASS", 0.9, "p@1"),
        result_line(r#""dup""#, "PASS", 0.9, "p@1"),
    ]
    .join("\n");
    let new = [
        result_line(r#""a""#, "FAIL", 0.3, "p@2"),
        result_line(r#""b""#, "PASS", 0.85, "p@2"),
        result_line(r#""c""#, "PASS", 0.9, "p@2"),
        result_line(r#""e""#, "PASS", 1.0, "p@2"),
        result_line("null", "ERROR", 0.0, "p@2"),
        result_line(r#""dup""#, "PASS", 0.9, "p@2"),
        result_line(r#""dup""#, "FAIL", 0.1, "p@2"),
        r#"{"id": "cut", "sta"#.to_owned(),
    ]
    .join("\n");
    write(dir.path(), "old.jsonl", &old);
    write(dir.path(), "new.jsonl", &new);
    let run = |extra: &[&str]| {
        tribunal()
            .arg("diff")
            .arg(dir.path().join("old.jsonl"))
            .arg(dir.path().join("new.jsonl"))
            .args(extra)
            .assert()
    };
    let out = run(&[]).code(0).get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    for expected in [
        "line(s) are not result records and were skipped (first: line 8: not JSON",
        "record(s) have no `id`: matched by position (their input line)",
        "repeat an earlier `id`: matched by id and occurrence",
        "the runs are of different packs: p@1 (revision r-p@1) and p@2 (revision r-p@2)",
        "status      PASS 6 → 4  NEEDS_IMPROVEMENT 0 → 0  FAIL 1 → 2  ERROR 0 → 1",
        "regressions: 3\n  line 5  PASS → ERROR",
        "  a  PASS → FAIL  score 0.9000 → 0.3000 (-0.6000)  m 0.9000 → 0.3000 (-0.6000)",
        "  dup (#2)  PASS → FAIL",
        "improvements: 1\n  c  FAIL → PASS",
        "score changes: 1\n  b  PASS → PASS  score 0.8000 → 0.8500 (+0.0500)",
        "only in old: 1  d",
        "only in new: 1  e",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let json = run(&["--json", "--fail-on-regression"])
        .code(1)
        .get_output()
        .stdout
        .clone();
    let diff: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(diff["regressions"].as_array().unwrap().len(), 3);
    assert_eq!(diff["improvements"][0]["id"], "c");
    assert_eq!(diff["only_old"], serde_json::json!(["d"]));
    assert_eq!(diff["new"]["records"], 7);
    // A file that is not there is a usage error.
    tribunal()
        .args(["diff", "nowhere.jsonl"])
        .arg(dir.path().join("new.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read `nowhere.jsonl`"));
}

#[test]
fn lint_says_what_it_found_and_prints_each_packs_line_before_its_warnings() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(&dir.path().join("a"));
    demo_pack(&dir.path().join("b"));
    // b declares tests, but the folder holds none yet.
    let manifest = dir.path().join("b/pack.yaml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, format!("{text}tests: [tests/*.yaml]\n")).unwrap();
    fs::create_dir_all(dir.path().join("b/tests")).unwrap();
    let out = tribunal().arg("lint").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.starts_with(&format!(
            "{}: a folder of packs: linting its 2 packs\n",
            dir.path().display()
        )),
        "{stdout}"
    );
    assert_eq!(stdout.matches("warn  demo@0.1.0").count(), 2, "{stdout}");
    assert!(
        stderr.contains("a: the pack has no tests (add `tests: [tests/*.yaml]`)"),
        "{stderr}"
    );
    // b: only the loader's warning at the glob, not the suggestion to add the line.
    assert!(
        stderr.contains("b/pack.yaml:13:9: `tests/*.yaml` matches no file"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("the pack has no tests").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn test_without_a_pack_outside_a_checkout_says_what_it_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    tribunal()
        .arg("test")
        .current_dir(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no pack given, and no `rules/` folder here to test: name packs or folders of packs (tribunal test PACK...)",
        ));
}

#[test]
fn check_takes_expected_and_meta_as_a_file_at_file_or_inline_json() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "meta.json", r#"{"from": "file"}"#);
    let run = |expected: &str, meta: &str| {
        let out = tribunal()
            .args([
                "check",
                "rules/ksi-emission",
                "--json",
                "--expected",
                expected,
                "--meta",
                meta,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .write_stdin(r#"{"event": "agent:status", "data": {}}"#)
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let file = dir.path().join("meta.json");
    let file = file.to_str().unwrap();
    for (expected, meta) in [
        (r#"{"inline": true}"#.to_owned(), format!("@{file}")),
        (file.to_owned(), r#"{"from": "inline"}"#.to_owned()),
        (format!("@{file}"), file.to_owned()),
    ] {
        let (stdout, stderr) = run(&expected, &meta);
        assert!(stdout.contains("\"status\": \"PASS\""), "{stdout}{stderr}");
    }
    let (_, stderr) = run("no-such-file.json", "{}");
    assert!(
        stderr.contains("--expected: cannot read `no-such-file.json`"),
        "{stderr}"
    );
    let (_, stderr) = run("{}", "@no-such-file.json");
    assert!(stderr.contains("--meta: "), "{stderr}");
    let (_, stderr) = run("{\"a\": ", "{}");
    assert!(
        stderr.contains("--expected: not valid JSON: ")
            && stderr.contains("(give inline JSON, @FILE, or a JSON file)"),
        "{stderr}"
    );
}

/// Every flag of every command is in the command-line reference, docs/cli.md
/// (or, for the flags every pack-loading command shares, named there once).
#[test]
fn the_cli_reference_names_every_flag() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let commands = [
        "check",
        "eval",
        "test",
        "lint",
        "diff",
        "report",
        "list",
        "explain",
        "prompt",
        "completions",
        "man",
        "schema",
    ];
    let mut missing = Vec::new();
    for command in commands {
        let help = tribunal().args([command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        for line in help.lines() {
            let Some(at) = line.find("--") else { continue };
            if !line.trim_start().starts_with('-') {
                continue;
            }
            let flag: String = line[at..]
                .chars()
                .take_while(|c| *c == '-' || c.is_alphanumeric())
                .collect();
            if flag != "--help"
                && !readme.contains(&format!("`{flag}"))
                && !readme.contains(&format!("[{flag}"))
                && !readme.contains(&format!(" {flag} "))
            {
                missing.push(format!("{command} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags docs/cli.md does not name: {missing:?}"
    );
}

#[test]
fn pack_tests_match_messages_with_contains_and_matches() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    let manifest = dir.path().join("pack.yaml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, format!("{text}tests: [tests/*.yaml]\n")).unwrap();
    write(
        dir.path(),
        "tests/t.yaml",
        r#"- name: prose is described, not emitted
  output: I would emit a JSON event here.
  expect:
    status: NEEDS_IMPROVEMENT
    feedback: { contains: "describes JSON instead of emitting it" }
    issues:
      - message: { contains: "Raw output starts" }
      - message: { matches: "^describes JSON" }
- name: a wrong expectation says what it wanted
  output: I would emit a JSON event here.
  expect:
    feedback: { matches: "^Nothing" }
"#,
    );
    let out = tribunal().arg("test").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
    assert!(
        stdout.contains("feedback: expected text matching \"^Nothing\", got \"Previous issues:"),
        "{stdout}"
    );
}

#[test]
fn a_scripts_error_names_its_file_the_same_wherever_the_pack_is_run_from() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack.yaml",
        "name: thrower\ncomponents: [components/t.yaml]\npipeline:\n  metrics: [t]\n",
    );
    write(
        dir.path(),
        "components/t.yaml",
        "kind: metric\nname: t\nimplementation: { script: t.rhai }\n",
    );
    write(
        dir.path(),
        "components/t.rhai",
        "fn evaluate(ctx) {\n    throw \"no\";\n}\n",
    );
    let error_from = |cwd: &Path, pack: &Path| {
        let out = tribunal()
            .args(["check", "--json"])
            .arg(pack)
            .current_dir(cwd)
            .write_stdin("x")
            .output()
            .unwrap();
        let record: Value = serde_json::from_slice(&out.stdout).unwrap();
        record["error"].as_str().unwrap().to_owned()
    };
    let inside = error_from(dir.path(), Path::new("."));
    let parent = dir.path().parent().unwrap();
    let beside = error_from(parent, dir.path().strip_prefix(parent).unwrap());
    let absolute = error_from(Path::new("/"), dir.path());
    assert_eq!(
        inside,
        "metric `t`: script `t` (components/t.rhai:2:5): script threw: no"
    );
    assert_eq!((&beside, &absolute), (&inside, &inside));
}

#[test]
fn no_json_in_a_contract_pack_fails_unless_the_pack_counts_it_as_issues() {
    let dir = tempfile::tempdir().unwrap();
    let pack = |scoring: &str| {
        write(
            dir.path(),
            "pack.yaml",
            &format!(
                "name: nj\ncontract:\n  fields:\n    tool: {{ type: string, required: true }}\npipeline:\n  postprocessors: [contract]\n{scoring}"
            ),
        );
        let out = tribunal()
            .args(["check", "--json"])
            .arg(dir.path())
            .write_stdin("I will book the flight for you.")
            .output()
            .unwrap();
        let record: Value = serde_json::from_slice(&out.stdout).unwrap();
        record["status"].as_str().unwrap().to_owned()
    };
    assert_eq!(pack(""), "FAIL");
    assert_eq!(pack("scoring: { no_json: issues }\n"), "NEEDS_IMPROVEMENT");
    assert_eq!(pack("scoring: { no_json: fail }\n"), "FAIL");
    // JSON with a contract error is a near miss, as before.
    write(
        dir.path(),
        "pack.yaml",
        "name: nj\ncontract:\n  fields:\n    tool: { type: string, required: true }\npipeline:\n  postprocessors: [contract]\n",
    );
    let out = tribunal()
        .args(["check", "--json"])
        .arg(dir.path())
        .write_stdin(r#"{"tool": 7}"#)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "NEEDS_IMPROVEMENT");
}

#[test]
fn explain_takes_the_pack_first_and_explains_the_strategies() {
    let root = env!("CARGO_MANIFEST_DIR");
    let pack = format!("{root}/rules/scripted-fields");
    for args in [
        vec!["explain", pack.as_str(), "filled_fields"],
        vec!["explain", "filled_fields", pack.as_str()],
        vec!["explain", "--pack", pack.as_str(), "filled_fields"],
    ] {
        tribunal()
            .args(&args)
            .assert()
            .success()
            .stdout(predicate::str::starts_with(
                "# filled_fields (metric, script filled_fields.rhai)",
            ));
    }
    tribunal()
        .args(["explain", "FUZZY"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("# fuzzy (strategy)"));
    tribunal()
        .args(["explain", "semantik"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `semantic`?"));
}

#[test]
fn eval_ends_with_a_line_saying_how_it_went_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    demo_pack(dir.path());
    write(
        dir.path(),
        "data.jsonl",
        "{\"id\": 1, \"output\": \"{}\"}\n{\"id\": 2}\n",
    );
    let data = dir.path().join("data.jsonl");
    let out = dir.path().join("out.jsonl");
    tribunal()
        .arg("eval")
        .arg(dir.path())
        .arg("--input")
        .arg(&data)
        .arg("--output")
        .arg(&out)
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::is_match(format!(
            r"^eval: 2 records \(PASS \d, NEEDS_IMPROVEMENT \d, FAIL \d, ERROR 1\) -> {} in \d+\.\d\ds\n$",
            regex::escape(&out.display().to_string())
        )).unwrap());
    tribunal()
        .arg("eval")
        .arg(dir.path())
        .arg("--input")
        .arg(&data)
        .arg("--quiet")
        .assert()
        .code(1)
        .stderr("");
    // `report` says what it wrote.
    let page = dir.path().join("page.html");
    tribunal()
        .arg("report")
        .arg(&out)
        .arg("-o")
        .arg(&page)
        .assert()
        .success()
        .stderr(format!(
            "report: 2 records of {} -> {}\n",
            out.display(),
            page.display()
        ));
}

/// `check --stream` reads a model's output as it is piped in and shows a
/// violation before the input ends; its result is `check`'s for the whole text.
#[test]
fn check_stream_reports_a_violation_before_the_input_ends() {
    use std::io::{BufRead, BufReader, Write as _};
    use std::process::{Command as Process, Stdio};
    let root = env!("CARGO_MANIFEST_DIR");
    let mut child = Process::new(env!("CARGO_BIN_EXE_tribunal"))
        .args([
            "check",
            &format!("{root}/rules/structured-output"),
            "-",
            "--stream",
            "--json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // A character cut between two writes waits for its other bytes.
    let first = "{\"kind\": \"agent.shout\", \"text\": \"Zo\u{eb}";
    let (cut, rest_of_char) = first.as_bytes().split_at(first.len() - 1);
    stdin.write_all(cut).unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let event: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["event"], "violation");
    assert_eq!(event["code"], "contract.kind-replaced");
    assert_eq!(event["path"], "/kind");
    // The rest, then the end of the input: the result record, last.
    stdin.write_all(rest_of_char).unwrap();
    stdin.write_all(b" says hi.\"}").unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(!child.wait().unwrap().success());
    let record: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(record["json"]["text"], "Zo\u{eb} says hi.");
    assert_eq!(record["issues"][0]["code"], "contract.kind-replaced");
    // The same record as `check` on the whole text.
    let whole = tribunal()
        .args([
            "check",
            &format!("{root}/rules/structured-output"),
            "-",
            "--json",
        ])
        .write_stdin("{\"kind\": \"agent.shout\", \"text\": \"Zo\u{eb} says hi.\"}")
        .output()
        .unwrap();
    let whole: Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert_eq!(record, whole);
}

/// `--output` into a folder that does not exist names the output and its
/// folder, not the hidden partial file the run would have written first.
#[test]
fn an_output_in_a_missing_folder_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("missing/out.jsonl");
    let out = tribunal()
        .args([
            "eval",
            "rules/ksi-emission",
            "--input",
            "examples/data/ksi-emission.jsonl",
            "--output",
        ])
        .arg(&output)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("cannot write results to {}", output.display()))
            && said.contains("does not exist")
            && !said.contains(".partial"),
        "{said}"
    );
}
