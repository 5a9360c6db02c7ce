//! The `semantic` strategy through the real binary: identical results from one and
//! two jobs over several input batches, and the model location order and its
//! errors (`TRIBUNAL_MODEL_DIR`, `json_compare`'s `model:`).

use std::fmt::Write as _;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn tribunal() -> Command {
    // A new, empty embedding cache for each command: every embedding computed.
    static CACHES: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut command = Command::cargo_bin("tribunal").expect("binary builds");
    command.env_remove("TRIBUNAL_MODEL_DIR");
    let base = CACHES.get_or_init(|| tempfile::tempdir().unwrap());
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    command.env("TRIBUNAL_CACHE_DIR", base.path().join(n.to_string()));
    command
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// 700 records (three input batches) whose text fields repeat and vary, so the
/// embedding cache and the batches hold different texts with different jobs.
fn data() -> String {
    let descriptions = [
        "Wholesale distributor of kitchen equipment",
        "Sells restaurant kitchen equipment wholesale",
        "Pet grooming salon",
        "Family-run bakery with two shops",
        "A bakery run by a family, two locations",
        "Software consultancy for logistics firms",
    ];
    let addresses = [
        "12 Harbour Street",
        "12 Harbour St.",
        "Flat 3, 41 Mill Road",
        "41 Mill Rd, flat 3",
    ];
    let mut out = String::new();
    for i in 0..700usize {
        let gt_d = descriptions[i % descriptions.len()];
        let said_d = descriptions[(i * 5 + i / 7) % descriptions.len()];
        let gt_a = addresses[i % addresses.len()];
        let said_a = addresses[(i / 3) % addresses.len()];
        let expected = serde_json::json!({
            "customer_name": "Maria Gonzalez",
            "address_line_1": gt_a,
            "description": gt_d,
            "note": format!("order {} shipped", i % 11),
        });
        let output = serde_json::json!({
            "customer_name": "Maria Gonzales",
            "address_line_1": said_a,
            "description": said_d,
            "note": format!("the order {} has shipped", i % 13),
        });
        let record =
            serde_json::json!({"id": i, "output": output.to_string(), "expected": expected});
        writeln!(out, "{record}").unwrap();
    }
    out
}

#[test]
fn one_and_two_jobs_give_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.jsonl");
    std::fs::write(&input, data()).unwrap();
    let run = |jobs: &str| {
        let out = dir.path().join(format!("out-{jobs}.jsonl"));
        tribunal()
            .current_dir(root())
            .args([
                "eval",
                "--pack",
                "rules/json-eval",
                "--jobs",
                jobs,
                "--input",
            ])
            .arg(&input)
            .arg("--output")
            .arg(&out)
            .assert()
            .code(predicate::in_iter([0, 1]));
        std::fs::read_to_string(out).unwrap()
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one.lines().count(), 700);
    assert!(one == two, "results differ between --jobs 1 and --jobs 2");
    assert!(!one.contains("\"status\":\"ERROR\""));
    assert!(one.contains("\"strategy\":\"semantic\""));
    // Both verdicts occur, so the comparison is not between constant results.
    assert!(one.contains("\"matched\":true") && one.contains("\"matched\":false"));
}

#[test]
fn a_model_folder_that_is_not_there_is_a_load_error_saying_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    // The environment variable is used as given: no fallback to the installed model.
    tribunal()
        .current_dir(root())
        .env("TRIBUNAL_MODEL_DIR", &empty)
        .args(["check", "--pack", "rules/json-eval", "--expected"])
        .arg(root().join("rules/json-eval/examples/walkthrough_gt.json"))
        .arg(root().join("rules/json-eval/examples/walkthrough_aio.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pack.yaml:"))
        .stderr(predicate::str::contains("TRIBUNAL_MODEL_DIR="))
        .stderr(predicate::str::contains(
            "lacks config.json, tokenizer.json, model.safetensors",
        ));
    // `model:` in the pack config is resolved against the manifest and checked at load.
    tribunal()
        .current_dir(root())
        .args([
            "check",
            "--pack",
            "rules/json-eval",
            "--set",
            "json_compare.model=no/such/model",
            "--expected",
        ])
        .arg(root().join("rules/json-eval/examples/walkthrough_gt.json"))
        .arg(root().join("rules/json-eval/examples/walkthrough_aio.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/model"))
        .stderr(predicate::str::contains("does not exist"));
}

#[test]
fn the_environment_variable_and_model_config_find_the_model() {
    // Where `scripts/setup` installs the model.
    let model = root().join("models/all-MiniLM-L6-v2");
    assert!(
        model.join("model.safetensors").is_file(),
        "the set-up installed the model"
    );
    let check = |command: &mut Command, extra: &[String]| {
        command
            .args(["check", "--pack"])
            .arg(root().join("rules/json-eval"))
            .args(extra)
            .args([
                "--set",
                "json_compare.field_strategies={name: FUZZY, bio: SEMANTIC}",
            ])
            .arg("--expected")
            .arg(root().join("rules/json-eval/examples/walkthrough_gt.json"))
            .arg(root().join("rules/json-eval/examples/walkthrough_aio.json"))
            .assert()
            .code(0)
            .stdout(predicate::str::contains("PASS  score 0.7375"));
    };
    let elsewhere = tempfile::tempdir().unwrap();
    check(
        tribunal()
            .current_dir(elsewhere.path())
            .env("TRIBUNAL_MODEL_DIR", &model),
        &[],
    );
    check(
        tribunal().current_dir(elsewhere.path()),
        &[
            "--set".to_owned(),
            format!("json_compare.model={}", model.display()),
        ],
    );
}

#[test]
fn packs_without_semantic_fields_do_not_need_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    tribunal()
        .current_dir(root())
        .env("TRIBUNAL_MODEL_DIR", &empty)
        .args([
            "eval",
            "--pack",
            "rules/json-eval",
            "--input",
            "examples/data/json-eval.jsonl",
            "--set",
            "json_compare.field_strategies={customer_name: FUZZY, address_line_1: FUZZY, phone_number: EXACT, internal_notes: IGNORE, description: FUZZY}",
            "--set",
            "json_compare.text_strategy=fuzzy",
        ])
        .assert()
        .stdout(predicate::str::contains("\"strategy\":\"semantic\"").not())
        .stdout(predicate::str::contains("\"id\":\"je-001\""));
}

#[test]
fn embeddings_are_kept_on_disk_and_reused_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(dir.path().join("data.jsonl"), data()).unwrap();
    // `eval` of the data into `output` with these cache flags: the summary's
    // `embedding_cache`.
    let run = |output: &str, cache_flags: &[&std::ffi::OsStr]| {
        let out = tribunal()
            .args(["eval", "--jobs", "2", "--summary-json"])
            .args(cache_flags)
            .arg(root().join("rules/json-eval"))
            .arg("--input")
            .arg(dir.path().join("data.jsonl"))
            .arg("--output")
            .arg(dir.path().join(output))
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let summary: serde_json::Value = serde_json::from_slice(&out).unwrap();
        summary["embedding_cache"].clone()
    };
    let in_cache = ["--cache-dir".as_ref(), cache.as_os_str()];
    let first = run("first.jsonl", &in_cache);
    let texts = first["misses"].as_u64().unwrap();
    assert!(texts > 10, "{first}");
    assert_eq!(first["hits"], 0, "{first}");
    let second = run("second.jsonl", &in_cache);
    assert_eq!(second["misses"], 0, "nothing embedded again: {second}");
    assert_eq!(second["hits"].as_u64(), Some(texts), "{second}");
    assert_eq!(first["dir"], second["dir"]);
    assert!(first["dir"]
        .as_str()
        .unwrap()
        .starts_with(cache.to_str().unwrap()));
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert_eq!(
        read("first.jsonl"),
        read("second.jsonl"),
        "the same results"
    );

    // --no-cache: everything computed again, nothing stored.
    let third = run("third.jsonl", &["--no-cache".as_ref()]);
    assert_eq!(third["misses"].as_u64(), Some(texts));
    assert_eq!(third["dir"], serde_json::Value::Null, "no cache on disk");
    assert_eq!(read("first.jsonl"), read("third.jsonl"));
    tribunal()
        .args(["eval", "--no-cache", "--cache-dir"])
        .arg(&cache)
        .arg(root().join("rules/json-eval"))
        .args(["--input", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// A Rhai metric calling `compare("semantic", …)`: the model loads during the
/// first record's script call, and neither its memory (about 90 MB, past an
/// 8 MiB `max_memory`) nor its load time (past a 300 ms `timeout_ms` in a debug
/// build) counts against that call. What the script itself holds still does.
#[test]
fn a_script_comparing_semantically_is_not_charged_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    std::fs::create_dir_all(pack.join("components")).unwrap();
    std::fs::write(
        pack.join("pack.yaml"),
        "name: close\nversion: 1.0.0\ncomponents: [components/*.yaml]\n\
         pipeline:\n  metrics:\n    - use: close\n\
         limits:\n  timeout_ms: 300\n  max_memory: 8388608\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("components/close.yaml"),
        "kind: metric\nname: close\nversion: 1.0.0\nimplementation:\n  script: close.rhai\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("components/close.rhai"),
        r#"fn evaluate(ctx) {
    let s = compare("semantic", ctx.expected.answer, ctx.json.answer);
    if ctx.meta.hoard == true {
        let block = "y";
        for i in 0..20 { block += block; }
        let kept = [];
        for i in 0..12 { kept.push(block + i); }
    }
    #{ score: s }
}
"#,
    )
    .unwrap();
    let record = |id: usize, said: &str, hoard: bool| {
        let output = serde_json::json!({"answer": said}).to_string();
        let expected = serde_json::json!({"answer": "a cat was sitting on the mat"});
        serde_json::json!({"id": id, "output": output, "expected": expected, "meta": {"hoard": hoard}})
    };
    let mut data = String::new();
    for (i, said) in ["the cat sat on the mat", "dogs bark", "a cat sat", "bread"]
        .iter()
        .enumerate()
    {
        writeln!(data, "{}", record(i, said, false)).unwrap();
    }
    writeln!(data, "{}", record(4, "the cat sat", true)).unwrap();
    let input = dir.path().join("data.jsonl");
    std::fs::write(&input, data).unwrap();
    for jobs in ["1", "2"] {
        let out = tribunal()
            .args(["eval", "--pack"])
            .arg(&pack)
            .args(["--jobs", jobs, "--input"])
            .arg(&input)
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        let records: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(records.len(), 5);
        for record in &records[..4] {
            assert_eq!(
                record["error"],
                serde_json::Value::Null,
                "--jobs {jobs}: {record}"
            );
            assert!(record["score"].as_f64().unwrap() > 0.0, "{record}");
        }
        // The first record's similarity is high, the fourth's low: real comparisons.
        assert!(records[0]["score"].as_f64() > records[3]["score"].as_f64());
        assert_eq!(records[4]["error_kind"], "memory", "{}", records[4]);
    }
}
