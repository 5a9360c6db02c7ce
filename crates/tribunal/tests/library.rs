//! The library API: loading, sharing across threads, revisions, batches.

use std::fs;
use std::path::Path;

use serde_json::json;
use tribunal::{Input, LoadOptions, Override, Pack, Runtime, Status};

fn assert_send_sync<T: Send + Sync>() {}

fn pack_dir(dir: &Path, min_score: f64) {
    fs::write(
        dir.join("pack.yaml"),
        format!(
            "name: lib\nversion: 2.0.0\npipeline:\n  metrics: [json_emission]\nscoring:\n  min_score: {min_score}\n"
        ),
    )
    .unwrap();
}

#[test]
fn a_loaded_pack_is_send_and_sync() {
    assert_send_sync::<Pack>();
    assert_send_sync::<tribunal::Report>();
}

#[test]
fn one_pack_serves_many_threads() {
    let dir = tempfile::tempdir().unwrap();
    pack_dir(dir.path(), 0.7);
    let pack = Pack::load(dir.path()).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let pack = &pack;
            scope.spawn(move || {
                for i in 0..200 {
                    let output =
                        format!(r#"{{"event": "agent:status", "data": {{"t": {t}, "i": {i}}}}}"#);
                    let report = pack.evaluate(&Input::new(output));
                    assert_eq!(report.status(), Status::Pass);
                }
            });
        }
    });
}

#[test]
fn revision_changes_with_the_files_and_the_overrides() {
    let dir = tempfile::tempdir().unwrap();
    pack_dir(dir.path(), 0.7);
    let first = Pack::load(dir.path()).unwrap().revision().to_owned();
    assert_eq!(
        first,
        Pack::load(dir.path()).unwrap().revision(),
        "stable for the same files"
    );
    let overrides = vec![Override::parse("json_emission.threshold=0.5", dir.path()).unwrap()];
    let with_set = Pack::load_with(
        dir.path(),
        &LoadOptions {
            overrides,
            ..LoadOptions::default()
        },
    )
    .unwrap()
    .revision()
    .to_owned();
    assert_ne!(first, with_set);
    fs::write(dir.path().join("README.md"), "# Docs only\n").unwrap();
    assert_eq!(
        first,
        Pack::load(dir.path()).unwrap().revision(),
        "the README is not behaviour"
    );
    pack_dir(dir.path(), 0.8);
    assert_ne!(first, Pack::load(dir.path()).unwrap().revision());
    let report = Pack::load(dir.path()).unwrap().evaluate(&Input::new("x"));
    assert_eq!(report.pack, "lib@2.0.0");
    assert_eq!(report.revision.len(), 16);
}

#[test]
fn batch_results_come_back_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    pack_dir(dir.path(), 0.7);
    let pack = Pack::load(dir.path()).unwrap();
    let inputs = (0..2_000).map(|i| {
        let output = if i % 2 == 0 {
            r#"{"event": "agent:status", "data": {}}"#.to_owned()
        } else {
            "I will emit an event".to_owned()
        };
        Input::new(output).with_id(i)
    });
    let mut seen = Vec::new();
    pack.evaluate_batch(inputs, 2, |report| {
        seen.push((report.id.clone(), report.passed()));
    });
    assert_eq!(seen.len(), 2_000);
    for (i, (id, passed)) in seen.iter().enumerate() {
        assert_eq!(*id, json!(i));
        assert_eq!(*passed, i % 2 == 0);
    }
}

/// Every shipped rule pack's example records, and records made to stress the writer.
fn sample_reports() -> Vec<tribunal::Report> {
    let mut reports = Vec::new();
    let packs = [
        ("rules/agent-response", "agent-response"),
        ("rules/context-agent", "context-agent"),
        ("rules/json-eval", "json-eval"),
        ("rules/ksi-emission", "ksi-emission"),
        ("rules/scripted-fields", "scripted-fields"),
        ("rules/structured-output", "structured-output"),
    ];
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    for (pack, data) in packs {
        let pack = Pack::load(root.join(pack)).unwrap();
        let text = fs::read_to_string(root.join(format!("examples/data/{data}.jsonl"))).unwrap();
        for (i, line) in text.lines().enumerate() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let input = Input::new(record["output"].as_str().unwrap())
                .with_id(record["id"].clone())
                .with_expected(record.get("expected").cloned().unwrap_or_default())
                .with_meta(record.get("meta").cloned().unwrap_or_default());
            let mut report = pack.evaluate(&input);
            report.line = Some(i as u64 + 1);
            reports.push(report);
        }
        let odd = "\u{0}\u{1f}\"\\/\u{7f}é🙂\u{2028}\n\t\r\u{8}\u{c}";
        reports.push(pack.evaluate(&Input::new(
            format!("{{\"k{odd}\": \"{odd}\"}}").replace('\n', "\\n"),
        )));
        reports.push(pack.evaluate(&Input::new(odd).with_id(json!([1.5, {"x": null}]))));
    }
    reports.push(tribunal::Report::errored(
        json!(7),
        tribunal::ErrorKind::Input,
        "line 3: not valid JSON",
        "p@1",
        "abc",
    ));
    reports
}

#[test]
fn result_records_are_written_as_serde_writes_them() {
    for report in sample_reports() {
        let expected = serde_json::to_string(&report).unwrap();
        assert_eq!(report.to_json_line(), expected);
        let mut line = Vec::new();
        report.write_json_line(&mut line);
        assert_eq!(line, format!("{expected}\n").into_bytes());
    }
}

#[test]
fn chosen_fields_are_written_in_the_records_order() {
    let fields = tribunal::Fields::parse("score, id,status").unwrap();
    for report in sample_reports() {
        let mut out = Vec::new();
        report.write_fields(&mut out, fields);
        let full = report.to_value();
        let expected = json!({"id": full["id"], "status": full["status"], "score": full["score"]});
        assert_eq!(String::from_utf8(out).unwrap(), expected.to_string());
    }
    let err = tribunal::Fields::parse("id,stauts")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown result field `stauts` (did you mean `status`?)"),
        "{err}"
    );
    assert!(tribunal::Fields::parse(" , ").is_err());
}

/// A pack (in a temporary folder) of one metric `m`, the Rhai `script`.
fn script_metric_pack(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("m.rhai"), script).unwrap();
    fs::write(
        dir.path().join("m.yaml"),
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("pack.yaml"),
        "name: t\nversion: 1.0.0\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_runtime_sets_limits_for_every_pack_and_a_pack_s_own_win() {
    // A script that loops (10,000 times: well within the default time limit
    // unoptimised on a loaded machine): the runtime's 1,000-operation limit stops it in
    // every pack loaded on the runtime, unless the pack's own --set lifts it.
    let dir =
        script_metric_pack("fn evaluate(ctx) { let n = 0; for i in 0..10000 { n += i; } 1.0 }\n");
    let cwd = Path::new(".");
    let runtime = Runtime::builder()
        .limit(Override::parse("limits.max_operations=1000", cwd).unwrap())
        .unwrap()
        .build();
    let pack = runtime.load(dir.path()).unwrap();
    let report = pack.evaluate(&Input::new("x"));
    assert_eq!(report.status(), Status::Error, "{report:?}");
    assert!(
        report.error().unwrap().contains("operations"),
        "{:?}",
        report.error()
    );
    let lifted = LoadOptions {
        overrides: vec![Override::parse("limits.max_operations=0", cwd).unwrap()],
        ..LoadOptions::default()
    };
    let pack = runtime.load_with(dir.path(), &lifted).unwrap();
    assert_eq!(pack.evaluate(&Input::new("x")).status(), Status::Pass);
    // The pack was loaded on the runtime, which holds the limit.
    assert_eq!(pack.runtime().limits().len(), 1);
    // Without the runtime's limit, the defaults hold (the loop is within them).
    assert_eq!(
        Pack::load(dir.path())
            .unwrap()
            .evaluate(&Input::new("x"))
            .status(),
        Status::Pass
    );
    // A runtime sets limits only: a component's config is the pack's.
    let err = Runtime::builder()
        .limit(Override::parse("m.threshold=1", cwd).unwrap())
        .unwrap_err();
    assert!(err.reason.contains("only `limits.*`"), "{}", err.reason);
}

#[test]
fn a_runtime_resolves_job_counts_in_one_place() {
    let runtime = Runtime::builder().jobs(2).build();
    assert_eq!(runtime.jobs(0), 2, "0: the runtime's");
    assert_eq!(runtime.jobs(3), 3);
    assert_eq!(runtime.jobs(1000), 256, "at most 256");
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    assert_eq!(Runtime::new().jobs(0), cores, "every core by default");
}

#[test]
fn an_interrupt_ends_its_runtime_s_evaluations_and_no_other_s() {
    // A script that counts to the number its output gives, with no time or
    // operation limit: only an interrupt stops a long count.
    let dir = script_metric_pack(
        "fn evaluate(ctx) { let n = 0; for i in 0..parse_int(ctx.output) { n += 1; } 1.0 }\n",
    );
    let cwd = Path::new(".");
    let unlimited = || {
        Runtime::builder()
            .limit(Override::parse("limits.max_operations=0", cwd).unwrap())
            .unwrap()
            .limit(Override::parse("limits.timeout_ms=0", cwd).unwrap())
            .unwrap()
            .build()
    };
    let (stopped, other) = (unlimited(), unlimited());
    let pack = stopped.load(dir.path()).unwrap();
    let others = other.load(dir.path()).unwrap();
    let counting = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        (
            pack.evaluate(&Input::new("100000000000")),
            started.elapsed(),
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    stopped.interrupt().clone().interrupt();
    let (report, took) = counting.join().unwrap();
    assert_eq!(report.status(), Status::Error, "{report:?}");
    assert!(
        report.error().unwrap().contains("interrupted"),
        "{:?}",
        report.error()
    );
    assert!(took.as_secs() < 60, "stopped mid-count, after {took:?}");
    // The other runtime's evaluations go on; the interrupted one's stop at
    // their first step.
    assert_eq!(others.evaluate(&Input::new("1000")).status(), Status::Pass);
    let after = stopped.load(dir.path()).unwrap().evaluate(&Input::new("1"));
    assert!(after.error().unwrap().contains("interrupted"), "{after:?}");
}
