//! Stable codes (issue: one engine, many front ends): every issue in a result
//! record has a `code`, a built-in's from the documented list or a script's or
//! plugin's own namespaced by its component, and every `ERROR` record an
//! `error_kind`. Tests match codes and kinds, never wording.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use tribunal::{ErrorKind, Input, LoadOptions, Override, Pack, Status};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The built-in codes docs/builtins.md lists (its "Issue codes" table).
fn documented_codes() -> BTreeSet<String> {
    let text = fs::read_to_string(root().join("docs/builtins.md")).unwrap();
    let table = text
        .split("## Issue codes")
        .nth(1)
        .expect("docs/builtins.md has the codes")
        .split("\n## ")
        .next()
        .unwrap();
    table
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(code, _)| code.to_owned()))
        .collect()
}

/// Whether `code` is documented, or the component `rule`'s own.
fn known(code: &str, rule: &str, documented: &BTreeSet<String>) -> bool {
    documented.contains(code)
        || (code.starts_with("schema.") && documented.contains("schema.KEYWORD"))
        || code == rule
        || code
            .strip_prefix(rule)
            .is_some_and(|rest| rest.starts_with('.'))
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Every shipped pack on its sample data, through the binary: each issue's code
/// is documented or its component's own, the built-ins of each family appear,
/// and the summary counts the codes.
#[test]
fn every_issue_of_the_shipped_packs_has_a_known_code() {
    let documented = documented_codes();
    assert!(
        documented.contains("contract.missing-field"),
        "{documented:?}"
    );
    let mut seen = BTreeSet::new();
    for (pack, data) in [
        ("rules/ksi-emission", "examples/data/ksi-emission.jsonl"),
        ("rules/json-eval", "examples/data/json-eval.jsonl"),
        ("rules/context-agent", "examples/data/context-agent.jsonl"),
        (
            "rules/structured-output",
            "examples/data/structured-output.jsonl",
        ),
        ("rules/agent-response", "examples/data/agent-response.jsonl"),
        (
            "rules/scripted-fields",
            "examples/data/scripted-fields.jsonl",
        ),
        (
            "examples/packs/tool-calls",
            "examples/data/tool-calls.jsonl",
        ),
    ] {
        if !root().join(data).is_file() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("summary.json");
        let out = Command::cargo_bin("tribunal")
            .unwrap()
            .current_dir(root())
            .args(["eval", pack, "--input", data, "--summary-json"])
            .arg(&summary)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{pack}");
        let mut counted = 0;
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            for issue in record["issues"].as_array().unwrap() {
                let (rule, code) = (
                    issue["rule"].as_str().unwrap(),
                    issue["code"].as_str().unwrap(),
                );
                assert!(known(code, rule, &documented), "{pack}: {issue}");
                seen.insert(code.to_owned());
                counted += 1;
            }
            match record["status"].as_str().unwrap() {
                "ERROR" => assert!(record["error_kind"].is_string(), "{record}"),
                _ => assert!(record["error_kind"].is_null(), "{record}"),
            }
        }
        let summary: Value = serde_json::from_str(&fs::read_to_string(summary).unwrap()).unwrap();
        let in_summary: u64 = summary["codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["count"].as_u64().unwrap())
            .sum();
        assert_eq!(
            in_summary, counted,
            "{pack}: the summary counts every issue's code"
        );
    }
    for family in [
        "contract.",
        "emission.",
        "placeholder.",
        "compare.",
        "extraction.",
    ] {
        assert!(
            seen.iter().any(|code| code.starts_with(family)),
            "no {family} code on the sample data: {seen:?}"
        );
    }
}

/// A script's issues: its own code namespaced by its component, its name when
/// it gives none; a bad code is the script's failure (`error_kind: script`).
#[test]
fn a_scripts_codes_are_namespaced_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.rhai",
        r#"fn evaluate(ctx) {
            if ctx.output == "bad code" { return #{ score: 0.5, issues: [#{ message: "x", code: "Not Valid" }] }; }
            #{ score: 0.5, issues: ["plain", #{ message: "long", code: "too-long", severity: "warning" }] }
        }"#,
    );
    write(
        dir.path(),
        "length.yaml",
        "kind: metric\nname: length\nimplementation: { script: m.rhai }\n",
    );
    write(
        dir.path(),
        "pack.yaml",
        "name: t\nversion: 1.0.0\ncomponents: [length.yaml]\npipeline:\n  metrics: [length]\n",
    );
    let pack = Pack::load(dir.path()).unwrap();
    let report = pack.evaluate(&Input::new("fine"));
    let codes: Vec<&str> = report.issues.iter().map(|i| i.code.as_ref()).collect();
    assert_eq!(codes, ["length", "length.too-long"]);
    let report = pack.evaluate(&Input::new("bad code"));
    assert_eq!(report.status(), Status::Error);
    assert_eq!(report.error_kind(), Some(ErrorKind::Script));
}

/// Each kind of failure a pack can meet has its `error_kind`, through the
/// library and in the CLI's records alike.
#[test]
fn each_kind_of_failure_has_its_error_kind() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.rhai",
        r#"fn evaluate(ctx) {
            if ctx.output == "spin" { loop { } }
            if ctx.output == "grow" { let s = "x"; let all = []; loop { s += s; all.push(s); } }
            if ctx.output == "throw" { throw "no"; }
            1.0
        }"#,
    );
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    );
    write(
        dir.path(),
        "pack.yaml",
        "name: t\nversion: 1.0.0\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n",
    );
    let cwd = Path::new(".");
    let options = LoadOptions {
        overrides: vec![
            Override::parse("limits.timeout_ms=50", cwd).unwrap(),
            Override::parse("limits.max_operations=0", cwd).unwrap(),
            Override::parse("limits.max_memory=2000000", cwd).unwrap(),
            Override::parse("limits.max_string_size=0", cwd).unwrap(),
        ],
        ..LoadOptions::default()
    };
    let pack = Pack::load_with(dir.path(), &options).unwrap();
    for (output, kind) in [("spin", ErrorKind::Timeout), ("throw", ErrorKind::Script)] {
        let report = pack.evaluate(&Input::new(output));
        assert_eq!(
            report.error_kind(),
            Some(kind),
            "{output}: {:?}",
            report.error()
        );
    }
    // Memory is counted where the counting allocator is installed: the binary.
    let data = dir.path().join("data.jsonl");
    fs::write(
        &data,
        "{\"id\": 1, \"output\": \"grow\"}\nnot json\n{\"id\": 3, \"output\": \"fine\"}\n{\"id\": 4, \"output\": \"throw\"}\n",
    )
    .unwrap();
    let out = Command::cargo_bin("tribunal")
        .unwrap()
        .args(["eval", "--fields", "id,status,error_kind", "--input"])
        .arg(&data)
        .arg(dir.path())
        .args([
            "--set",
            "limits.max_memory=2000000",
            "--set",
            "limits.max_string_size=0",
            "--set",
            "limits.timeout_ms=0",
            "--set",
            "limits.max_operations=0",
        ])
        .output()
        .unwrap();
    let kinds: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["error_kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            Value::from("memory"),
            Value::from("input"),
            Value::Null,
            Value::from("script")
        ],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
