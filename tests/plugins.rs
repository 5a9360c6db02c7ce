//! Compiled plugins through the library and the CLI: the example plugins, and
//! fixture libraries that are missing, foreign, of another ABI version, or that
//! panic and return bad results.

#[path = "support/plugin_build.rs"]
mod plugin_build;

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{json, Value};
use tribunal::{Input, LoadOptions, Pack, Status};

use plugin_build::{library_path, plugin_dir};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example_pack() -> PathBuf {
    root().join("examples/packs/invoice-summary")
}

/// The plugin folder, and consent to opening plugins: the fixtures are named
/// by their absolute paths there.
fn with_plugins() -> LoadOptions {
    LoadOptions {
        plugin_dirs: vec![plugin_dir().to_path_buf()],
        allow_plugins: true,
        ..LoadOptions::default()
    }
}

/// The binary, with consent to opening plugins (`TRIBUNAL_ALLOW_PLUGINS`) and
/// the plugin folder on `TRIBUNAL_PLUGIN_PATH` (a test may remove or replace it).
fn tribunal() -> Command {
    let mut command = Command::cargo_bin("tribunal").unwrap();
    command
        .env("TRIBUNAL_ALLOW_PLUGINS", "1")
        .env("TRIBUNAL_PLUGIN_PATH", plugin_dir());
    command
}

/// A pack in `dir` whose components are `(file name, manifest)` pairs.
fn write_pack(dir: &Path, components: &[(&str, String)], pipeline: &str) {
    fs::create_dir_all(dir.join("components")).unwrap();
    fs::write(
        dir.join("pack.yaml"),
        format!("name: t\nversion: 1.0.0\ncomponents: [components/*.yaml]\npipeline:\n{pipeline}"),
    )
    .unwrap();
    for (file, manifest) in components {
        fs::write(dir.join("components").join(file), manifest).unwrap();
    }
}

/// A component manifest using `component` of the plugin `library`.
fn plugin_manifest(name: &str, kind: &str, library: &str, component: &str, config: &str) -> String {
    format!(
        "kind: {kind}\nname: {name}\nimplementation:\n  plugin: {{ library: \"{library}\", component: {component} }}\n{config}"
    )
}

fn fixture(name: &str, kind: &str, component: &str) -> String {
    let library = library_path("tribunal_fixture_sdk");
    plugin_manifest(name, kind, &library.display().to_string(), component, "")
}

fn load_error(dir: &Path) -> String {
    Pack::load_with(dir, &with_plugins())
        .unwrap_err()
        .to_string()
}

// ---- the example plugins and pack --------------------------------------------

#[test]
fn the_example_pack_scores_with_both_plugins_through_the_library() {
    let pack = Pack::load_with(example_pack(), &with_plugins()).unwrap();
    let report = pack.evaluate(&Input {
        expected: json!({"summary": "x", "total": 1234.5, "tax": 205.75, "currency": "EUR"}).into(),
        ..Input::new(
            r#"{"summary": "You owe 1,234.50 euros for the May cloud plan. Please pay by 1 July.", "total": "1234.50", "tax": 205.7, "currency": "EUR"}"#,
        )
    });
    assert_eq!(report.status(), Status::Pass, "{:?}", report.error());
    let value = report.to_value();
    let fields = &value["metrics"]["json_compare"]["details"]["fields"];
    assert_eq!(fields["total"]["strategy"], "money");
    assert_eq!(fields["total"]["matched"], true);
    assert_eq!(fields["tax"]["matched"], true); // 205.7 is within 1% of 205.75
    let readability = &value["metrics"]["summary_readability"];
    assert_eq!(readability["score"], 1.0);
    assert_eq!(readability["details"]["words"], 14);
    assert_eq!(readability["details"]["sentences"], 2);
}

#[test]
fn the_example_pack_tests_pass_through_the_cli() {
    Command::cargo_bin("tribunal")
        .unwrap()
        .env_remove("TRIBUNAL_ALLOW_PLUGINS")
        .env_remove("TRIBUNAL_PLUGIN_PATH")
        .args(["test"])
        .arg(example_pack())
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .arg("--allow-plugins")
        .assert()
        .success()
        .stdout(predicate::str::ends_with("4 passed, 0 failed\n"));
}

#[test]
fn the_example_data_set_evaluates_through_the_cli() {
    let output = tribunal()
        .args(["eval", "--pack"])
        .arg(example_pack())
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .arg("--input")
        .arg(root().join("examples/data/invoice-summary.jsonl"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let records: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let statuses: Vec<&str> = records
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["PASS", "PASS", "FAIL", "PASS", "PASS", "FAIL"]);
}

#[test]
fn without_a_plugin_dir_the_cli_lists_every_path_it_tried() {
    let components = example_pack().join("components");
    tribunal()
        .args(["lint"])
        .arg(example_pack())
        .env_remove("TRIBUNAL_PLUGIN_PATH")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("components/summary_readability.yaml:6:22: plugin library `tribunal_readability` not found; tried: ")
                .and(predicate::str::contains(
                    components
                        .join(format!(
                            "{}tribunal_readability{}",
                            std::env::consts::DLL_PREFIX,
                            std::env::consts::DLL_SUFFIX
                        ))
                        .display()
                        .to_string(),
                )),
        );
}

#[test]
fn explain_shows_what_the_plugin_publishes() {
    tribunal()
        .args(["explain", "money", "--pack"])
        .arg(example_pack())
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("# money (strategy, plugin tribunal_tolerance::tolerance)")
                .and(predicate::str::contains("plugin `tolerance` 0.1.0 ("))
                .and(predicate::str::contains("config defaults: {"))
                .and(predicate::str::contains("\"rel_tol\":0.01"))
                .and(predicate::str::contains("config schema: {")),
        );
}

#[test]
fn the_plugin_path_variable_is_searched() {
    tribunal()
        .args(["lint"])
        .arg(example_pack())
        .env("TRIBUNAL_PLUGIN_PATH", plugin_dir())
        .assert()
        .success()
        .stdout(predicate::str::contains("ok  invoice-summary@1.0.0"));
}

#[test]
fn an_empty_plugin_path_entry_does_not_search_the_current_directory() {
    // `TRIBUNAL_PLUGIN_PATH=` or `TRIBUNAL_PLUGIN_PATH=":/opt/plugins"` (from
    // `export TRIBUNAL_PLUGIN_PATH="$TRIBUNAL_PLUGIN_PATH:/opt/plugins"`) must not
    // load a library planted in whatever folder tribunal runs in.
    let pack = tempfile::tempdir().unwrap();
    write_pack(
        pack.path(),
        &[(
            "m.yaml",
            plugin_manifest(
                "m",
                "metric",
                "tribunal_readability",
                "readability",
                "config: { field: null }\n",
            ),
        )],
        "  metrics: [m]\n",
    );
    let cwd = tempfile::tempdir().unwrap();
    let file = library_path("tribunal_readability");
    fs::copy(&file, cwd.path().join(file.file_name().unwrap())).unwrap();
    let elsewhere = cwd.path().join("nothing-here");
    let with_empty_entry = std::env::join_paths([Path::new(""), elsewhere.as_path()]).unwrap();
    for value in [std::ffi::OsString::new(), with_empty_entry] {
        tribunal()
            .args(["lint"])
            .arg(pack.path())
            .current_dir(cwd.path())
            .env("TRIBUNAL_PLUGIN_PATH", &value)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "plugin library `tribunal_readability` not found; tried: ",
            ));
    }
}

#[test]
fn a_library_next_to_the_manifest_is_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[(
            "m.yaml",
            plugin_manifest(
                "plain",
                "metric",
                "tribunal_readability",
                "readability",
                "config: { field: null }\n",
            ),
        )],
        "  metrics: [plain]\n",
    );
    let file = library_path("tribunal_readability");
    fs::copy(
        &file,
        dir.path()
            .join("components")
            .join(file.file_name().unwrap()),
    )
    .unwrap();
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let report = pack.evaluate(&Input::new("Short words. Clear text."));
    assert_eq!(report.score, Some(1.0));
}

// ---- libraries that cannot be loaded ---------------------------------------------

#[test]
fn a_library_that_is_not_a_plugin_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_fixture_not_a_plugin");
    write_pack(
        dir.path(),
        &[(
            "m.yaml",
            plugin_manifest("m", "metric", &library.display().to_string(), "x", ""),
        )],
        "  metrics: [m]\n",
    );
    let err = load_error(dir.path());
    assert!(err.contains("components/m.yaml:4:"), "{err}");
    assert!(
        err.contains(&format!(
            "{} is not a tribunal plugin: it has no `tribunal_plugin_abi_version` symbol (expected ABI version 1)",
            library.canonicalize().unwrap().display()
        )),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_shared_library_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("m.yaml", plugin_manifest("m", "metric", "fake", "x", ""))],
        "  metrics: [m]\n",
    );
    let fake = dir.path().join("components").join(format!(
        "{}fake{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    fs::write(&fake, "this is text, not machine code\n").unwrap();
    let err = load_error(dir.path());
    assert!(
        err.contains(&format!(
            "cannot load plugin library {}: ",
            fake.canonicalize().unwrap().display()
        )),
        "{err}"
    );
}

#[test]
fn another_abi_version_is_refused_before_anything_else_is_called() {
    // Every other export of this fixture aborts the process.
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_fixture_wrong_abi");
    write_pack(
        dir.path(),
        &[(
            "m.yaml",
            plugin_manifest("m", "metric", &library.display().to_string(), "x", ""),
        )],
        "  metrics: [m]\n",
    );
    let err = load_error(dir.path());
    assert!(
        err.contains(&format!(
            "plugin library {} has ABI version 999, but this tribunal expects ABI version 1; rebuild the plugin",
            library.canonicalize().unwrap().display()
        )),
        "{err}"
    );
    // Through the CLI as well: a load error, exit 2.
    tribunal()
        .args(["lint"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "has ABI version 999, but this tribunal expects ABI version 1",
        ));
}

#[test]
fn an_unknown_component_lists_the_plugin_components_and_suggests_one() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("m.yaml", fixture("m", "metric", "panic"))],
        "  metrics: [m]\n",
    );
    let err = load_error(dir.path());
    assert!(
        err.contains(
            "plugin `fixtures` (libtribunal_fixture_sdk.so) has no component `panic`; it exports: panics (metric), out_of_range (metric), fails (metric), echo (metric), lowercase (postprocessor), panics_strategy (strategy), crashes (metric)"
        ) || !cfg!(target_os = "linux"),
        "{err}"
    );
    assert!(err.contains("help: did you mean `panics`?"), "{err}");
}

#[test]
fn a_broken_plugin_reference_is_a_load_error_even_when_unused() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("spare.yaml", fixture("spare", "metric", "no_such_thing"))],
        "  metrics: [json_emission]\n",
    );
    let err = load_error(dir.path());
    assert!(
        err.contains("components/spare.yaml:4:")
            && err.contains("has no component `no_such_thing`; it exports: panics (metric)"),
        "{err}"
    );
}

#[test]
fn a_component_of_another_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("s.yaml", fixture("s", "strategy", "panics"))],
        "  metrics: []\n",
    );
    let err = load_error(dir.path());
    assert!(
        err.contains("component `s` is declared a strategy, but plugin `fixtures`")
            && err.contains("exports `panics` as a metric"),
        "{err}"
    );
}

#[test]
fn a_plugin_without_a_schema_takes_the_keys_and_types_of_its_published_defaults() {
    // `echo` publishes `{"score": 0.0}` as its defaults and no schema.
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_fixture_sdk").display().to_string();
    let load = |config: &str| {
        write_pack(
            dir.path(),
            &[(
                "e.yaml",
                plugin_manifest("e", "metric", &library, "echo", config),
            )],
            "  metrics: [e]\n",
        );
        Pack::load_with(dir.path(), &with_plugins()).map(|_| ())
    };
    load("config:\n  score: 1\n").unwrap();
    let err = load("config:\n  scor: 1\n").unwrap_err().to_string();
    assert!(
        err.contains("e: invalid config: unknown key `scor`; plugin `fixtures` takes: `score`")
            && err.contains("help: did you mean `score`?"),
        "{err}"
    );
    let err = load("config:\n  score: high\n").unwrap_err().to_string();
    assert!(
        err.contains("e: invalid config: `score` must be a number (as its default 0.0 published by the plugin), got a string: \"high\""),
        "{err}"
    );
    // A component with no config publishes `{}`: every key is refused.
    let err = {
        write_pack(
            dir.path(),
            &[(
                "e.yaml",
                plugin_manifest("e", "metric", &library, "fails", "config:\n  x: 1\n"),
            )],
            "  metrics: [e]\n",
        );
        load_error(dir.path())
    };
    assert!(
        err.contains("e: invalid config: unknown key `x`: plugin `fixtures` takes no config"),
        "{err}"
    );
}

#[test]
fn plugin_config_errors_point_at_the_key_and_suggest_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_readability").display().to_string();
    write_pack(
        dir.path(),
        &[(
            "r.yaml",
            plugin_manifest(
                "r",
                "metric",
                &library,
                "readability",
                "config:\n  field: /text\n  targt: [60, 80]\n",
            ),
        )],
        "  metrics: [r]\n",
    );
    let err = load_error(dir.path());
    assert!(
        err.contains("components/r.yaml:7:3: r: invalid config: unknown key `targt`; plugin `readability` takes: `field`, `target`, `tolerance`")
            && err.contains("help: did you mean `target`?"),
        "{err}"
    );
    // A value the plugin's published config schema refuses: checked by the
    // host, before the plugin sees it, and blamed on the key.
    fs::write(
        dir.path().join("components/r.yaml"),
        plugin_manifest(
            "r",
            "metric",
            &library,
            "readability",
            "config:\n  field: /text\n  tolerance: -1\n",
        ),
    )
    .unwrap();
    let err = load_error(dir.path());
    assert!(
        err.contains("components/r.yaml:7:3: r: invalid config at `/tolerance`: -1 is less than or equal to the minimum of 0 (the plugin's config schema)"),
        "{err}"
    );
    // A value the plugin's own check refuses, given in the pipeline's `with:`.
    fs::write(
        dir.path().join("components/r.yaml"),
        plugin_manifest("r", "metric", &library, "readability", ""),
    )
    .unwrap();
    fs::write(
        dir.path().join("pack.yaml"),
        "name: t\ncomponents: [components/*.yaml]\npipeline:\n  metrics:\n    - use: r\n      with: { target: [80, 60] }\n",
    )
    .unwrap();
    let err = load_error(dir.path());
    assert!(
        err.contains("`target` must be [low, high] with low ≤ high, got [80, 60]"),
        "{err}"
    );
}

// ---- misbehaving plugins at evaluation time -------------------------------------

#[test]
fn a_panic_makes_that_record_error_and_the_next_record_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("p.yaml", fixture("p", "metric", "panics"))],
        "  metrics: [p]\n",
    );
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let inputs = ["fine", "please panic", "fine again"].map(Input::new);
    let mut reports = Vec::new();
    pack.evaluate_batch(inputs, 2, |r| reports.push(r));
    assert_eq!(reports[0].status(), Status::Pass);
    assert_eq!(reports[1].status(), Status::Error);
    let error = reports[1].error().unwrap();
    assert!(
        error.contains("plugin `p` (")
            && error.contains("panicked at plugins/fixtures/sdk-fixtures/src/lib.rs:")
            && error.ends_with("fixture asked to panic by output \"please panic\""),
        "{error}"
    );
    assert_eq!(reports[2].status(), Status::Pass);
    assert_eq!(reports[2].score, Some(1.0));
}

#[test]
fn a_panic_through_the_cli_is_an_error_record_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("p.yaml", fixture("p", "metric", "panics"))],
        "  metrics: [p]\n",
    );
    let data = dir.path().join("data.jsonl");
    fs::write(
        &data,
        "{\"id\": 1, \"output\": \"panic now\"}\n{\"id\": 2, \"output\": \"calm\"}\n",
    )
    .unwrap();
    let output = tribunal()
        .args(["eval", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "some record is ERROR");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let records: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["status"], "ERROR");
    assert!(records[0]["error"]
        .as_str()
        .unwrap()
        .contains("panicked at"));
    assert_eq!(records[1]["status"], "PASS");
    // The panic was captured, not printed by a panic hook.
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The record's error when a one-metric pack evaluates `output` with `component`.
fn metric_error(library: &str, component: &str, output: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let library = library_path(library).display().to_string();
    write_pack(
        dir.path(),
        &[(
            "m.yaml",
            plugin_manifest("m", "metric", &library, component, ""),
        )],
        "  metrics: [m]\n",
    );
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let report = pack.evaluate(&Input::new(output));
    assert_eq!(report.status(), Status::Error);
    report.error().unwrap().to_owned()
}

#[test]
fn invalid_json_a_null_result_or_a_bare_result_are_record_errors() {
    let file = "libtribunal_fixture_raw.so";
    let linux = cfg!(target_os = "linux");
    let err = metric_error("tribunal_fixture_raw", "bad_json", "{}");
    assert!(
        err.contains("plugin `m` (")
            && err.contains("returned invalid JSON (EOF while parsing an object"),
        "{err}"
    );
    assert!(err.ends_with(r#": {"ok": 0.5"#), "{err}");
    assert!(!linux || err.contains(file), "{err}");
    let err = metric_error("tribunal_fixture_raw", "null_result", "{}");
    assert!(
        err.ends_with("returned a null pointer instead of a JSON reply"),
        "{err}"
    );
    let err = metric_error("tribunal_fixture_raw", "not_an_envelope", "{}");
    assert!(
        err.ends_with(r#"returned JSON that is neither {"ok": ...} nor {"error": ...}"#),
        "{err}"
    );
}

#[test]
fn a_score_outside_zero_to_one_is_a_record_error() {
    let err = metric_error("tribunal_fixture_sdk", "out_of_range", "{}");
    assert!(err.contains("plugin `m` ("), "{err}");
    assert!(err.ends_with("`score` 1.5 is outside [0, 1]"), "{err}");
}

#[test]
fn an_error_returned_by_the_plugin_names_the_plugin() {
    let err = metric_error("tribunal_fixture_sdk", "fails", " ");
    assert!(
        err.contains("plugin `m` (") && err.ends_with(": nothing to look at"),
        "{err}"
    );
}

#[test]
fn plugins_see_the_shared_context() {
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_fixture_sdk").display().to_string();
    write_pack(
        dir.path(),
        &[
            (
                "echo.yaml",
                plugin_manifest(
                    "echo",
                    "metric",
                    &library,
                    "echo",
                    "config: { score: 0.25 }\n",
                ),
            ),
            (
                "lower.yaml",
                plugin_manifest("lower", "postprocessor", &library, "lowercase", ""),
            ),
        ],
        "  postprocessors: [lower]\n  metrics: [json_emission, echo]\n",
    );
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let report = pack.evaluate(&Input {
        meta: json!({"run": 7}).into(),
        expected: json!({"event": "agent:status"}).into(),
        ..Input::new("```json\n{\"event\": \"Agent:Status\", \"data\": {}}\n```")
    });
    let value = report.to_value();
    // The postprocessor normalised the JSON and reported it, under its step name.
    assert_eq!(value["json"], json!({"event": "agent:status", "data": {}}));
    assert_eq!(
        value["issues"][0],
        json!({"rule": "lower", "code": "lower", "severity": "warning", "message": "lower-cased `event`", "path": "/event"})
    );
    let details = &value["metrics"]["echo"]["details"];
    assert_eq!(details["tier"], "fence");
    assert_eq!(
        details["json"],
        json!({"event": "agent:status", "data": {}})
    );
    assert_eq!(details["expected"], json!({"event": "agent:status"}));
    assert_eq!(details["meta"], json!({"run": 7}));
    assert_eq!(details["config"], json!({"score": 0.25}));
    assert_eq!(details["issues"], json!(["lower-cased `event`"]));
    assert_eq!(
        details["scores"],
        json!({"json_emission": value["metrics"]["json_emission"]["score"]})
    );
    assert_eq!(value["metrics"]["echo"]["score"], 0.25);
    assert!(details.get("calls").is_none(), "no transcript, no turns");

    // A transcript's turns reach the plugin, in the SDK's shape.
    let transcript = pack
        .evaluate(&Input::from_messages(json!([
            {"role": "user", "content": "status?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "probe", "input": {"deep": true}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "up"}]},
            {"role": "assistant", "content": "{\"event\": \"agent:status\", \"data\": {}}"}
        ])))
        .to_value();
    let details = &transcript["metrics"]["echo"]["details"];
    assert_eq!(
        details["roles"],
        json!(["user", "assistant", "tool", "assistant"])
    );
    assert_eq!(
        details["calls"],
        json!([["probe", {"deep": true}, "/messages/1/content/0"]])
    );
    assert_eq!(
        details["output"],
        "{\"event\": \"agent:status\", \"data\": {}}"
    );

    // A plugin metric's "not applicable": the step is skipped with its reason
    // and its weight leaves the record's score (json_emission's alone).
    let skipped = pack
        .evaluate(&Input {
            meta: json!({"skip": "no reference run"}).into(),
            ..Input::new("{\"event\": \"agent:status\", \"data\": {}}")
        })
        .to_value();
    assert_eq!(
        skipped["metrics"]["echo"],
        json!({"score": null, "weight": 1.0, "details": {"asked": true}, "skipped": "no reference run"})
    );
    assert_eq!(
        skipped["score"],
        skipped["metrics"]["json_emission"]["score"]
    );
}

#[test]
fn json_as_deep_as_the_engine_accepts_crosses_the_boundary_both_ways() {
    // The engine extracts JSON nested up to serde_json's limit of 128 levels; the
    // `{"context": {"json": ...}}` request and the `{"ok": {"details": ...}}` reply
    // wrap it in more, which must not turn the record into an ERROR.
    let dir = tempfile::tempdir().unwrap();
    let library = library_path("tribunal_fixture_sdk").display().to_string();
    write_pack(
        dir.path(),
        &[(
            "echo.yaml",
            plugin_manifest(
                "echo",
                "metric",
                &library,
                "echo",
                "config: { score: 0.25 }\n",
            ),
        )],
        "  metrics: [echo]\n",
    );
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let depth = 126;
    let output = format!(r#"{{"x": {}{}}}"#, "[".repeat(depth), "]".repeat(depth));
    let report = pack.evaluate(&Input::new(output.as_str()));
    assert_eq!(report.status(), Status::Pass, "{:?}", report.error());
    let value = report.to_value();
    assert_eq!(value["metrics"]["echo"]["score"], 0.25);
    assert_eq!(value["metrics"]["echo"]["details"]["json"], value["json"]);
    assert!(value["json"]["x"].is_array());
}

#[test]
fn a_panicking_strategy_makes_the_record_error() {
    let dir = tempfile::tempdir().unwrap();
    write_pack(
        dir.path(),
        &[("s.yaml", fixture("boom", "strategy", "panics_strategy"))],
        "  metrics:\n    - use: json_compare\n      with: { field_strategies: { n: boom } }\n",
    );
    let pack = Pack::load_with(dir.path(), &with_plugins()).unwrap();
    let report = pack.evaluate(&Input {
        expected: json!({"n": 1}).into(),
        ..Input::new(r#"{"n": 1}"#)
    });
    assert_eq!(report.status(), Status::Error);
    let err = report.error().unwrap();
    assert!(
        err.contains("plugin `boom` (") && err.contains("strategy fixture always panics"),
        "{err}"
    );
}

// ---- many threads, one plugin ------------------------------------------------------

#[test]
fn many_threads_calling_one_plugin_match_a_single_thread() {
    let pack = Pack::load_with(example_pack(), &with_plugins()).unwrap();
    let words = [
        "You owe",
        "the invoice totals",
        "notwithstanding considerable organizational complexity",
        "please pay",
        "by Friday.",
        "It is due soon.",
    ];
    let inputs = || {
        (0..3000u32).map(|i| {
            let summary: Vec<&str> = (0..=(i % 7))
                .map(|k| words[((i + k) as usize) % words.len()])
                .collect();
            let total = 100.0 + f64::from(i % 50);
            let output = json!({
                "summary": summary.join(" "),
                "total": total * (1.0 + f64::from(i % 3) * 0.006),
                "currency": "EUR",
            });
            Input {
                expected: json!({"summary": "x", "total": total, "currency": "EUR"}).into(),
                ..Input::new(output.to_string())
            }
        })
    };
    let mut one = Vec::new();
    pack.evaluate_batch(inputs(), 1, |r| one.push(r.to_value()));
    let mut four = Vec::new();
    pack.evaluate_batch(inputs(), 4, |r| four.push(r.to_value()));
    assert_eq!(one.len(), 3000);
    assert!(one == four, "jobs 4 differs from jobs 1");
    // The data exercises both outcomes of both plugins.
    let matched =
        |r: &Value| r["metrics"]["json_compare"]["details"]["fields"]["total"]["matched"] == true;
    assert!(one.iter().any(matched) && !one.iter().all(matched));
    let readable = |r: &Value| r["metrics"]["summary_readability"]["score"] == 1.0;
    assert!(one.iter().any(readable) && !one.iter().all(readable));
}

// ---- isolation: process -------------------------------------------------------

/// A pack whose one metric is the fixture that crashes on demand, run with
/// the manifest's `plugin:` extra keys (`isolation`, `timeout_ms`).
fn crashing_pack(dir: &Path, plugin_keys: &str) {
    let library = library_path("tribunal_fixture_sdk").display().to_string();
    write_pack(
        dir,
        &[(
            "c.yaml",
            format!("kind: metric\nname: c\nimplementation:\n  plugin: {{ library: \"{library}\", component: crashes{plugin_keys} }}\n"),
        )],
        "  metrics: [c]\n",
    );
}

fn data(dir: &Path, outputs: &[&str]) -> PathBuf {
    let mut text = String::new();
    for (i, output) in outputs.iter().enumerate() {
        text.push_str(&json!({"id": i, "output": output}).to_string());
        text.push('\n');
    }
    let path = dir.join("data.jsonl");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_isolated_plugin_that_crashes_costs_only_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    crashing_pack(&pack, ", isolation: process, timeout_ms: 2000");
    let outputs = [
        "ok", "abort", "ok", "segfault", "exit", "print", "hang", "ok",
    ];
    let input = data(dir.path(), &outputs);
    let out = tribunal()
        .args([
            "eval",
            "--jobs",
            "2",
            "--fields",
            "id,status,score,error,error_kind",
            // The step's limit above the plugin's own, which this test is about.
            "--set",
            "limits.timeout_ms=10000",
            "--input",
        ])
        .arg(&input)
        .arg(&pack)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The plugin's own print went to stderr: stdout holds only result records.
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), outputs.len());
    let who = "metric `c`: plugin `c` (libtribunal_fixture_sdk.so): ";
    let expect = [
        ("PASS", ""),
        (
            "ERROR",
            "its helper process was killed by signal 6 (SIGABRT); a new one takes the next call",
        ),
        ("PASS", ""),
        (
            "ERROR",
            "its helper process was killed by signal 11 (SIGSEGV); a new one takes the next call",
        ),
        (
            "ERROR",
            "its helper process exited with code 7; a new one takes the next call",
        ),
        ("PASS", ""),
        (
            "ERROR",
            "did not answer within 2000 ms (timeout_ms): its helper process was stopped",
        ),
        ("PASS", ""),
    ];
    for (result, (status, error)) in results.iter().zip(expect) {
        assert_eq!(result["status"], status, "{result}");
        if error.is_empty() {
            assert_eq!(result["error"], Value::Null, "{result}");
        } else if cfg!(target_os = "linux") {
            assert_eq!(result["error"], format!("{who}{error}"), "{result}");
        }
    }
    // What kind of failure each was, whatever the wording.
    let kinds: Vec<&Value> = results.iter().map(|r| &r["error_kind"]).collect();
    assert_eq!(
        kinds,
        [
            &Value::Null,
            &json!("plugin-crash"),
            &Value::Null,
            &json!("plugin-crash"),
            &json!("plugin-crash"),
            &Value::Null,
            &json!("timeout"),
            &Value::Null,
        ]
    );
    assert_eq!(results[5]["score"], 0.5);
    assert!(String::from_utf8_lossy(&out.stderr).contains("a plugin printing to stdout"));
}

/// A helper is stopped at the deadline of the step its call is part of (the
/// pack's `limits.timeout_ms`, 1 s by default), not left to the plugin's own
/// `timeout_ms` (30 s by default): a record already out of time is not waited
/// for, and the run goes on with a new helper.
#[test]
fn an_isolated_plugin_is_stopped_at_the_steps_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    crashing_pack(&pack, ", isolation: process");
    let input = data(dir.path(), &["hang", "ok"]);
    let started = std::time::Instant::now();
    let out = tribunal()
        .args(["eval", "--fields", "id,status,error", "--input"])
        .arg(&input)
        .arg(&pack)
        .output()
        .unwrap();
    let took = started.elapsed();
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(results[0]["status"], "ERROR", "{}", results[0]);
    let error = results[0]["error"].as_str().unwrap();
    assert!(
        error.contains("did not answer before the step's time limit (limits.timeout_ms) passed")
            && error.contains("its helper process was stopped"),
        "{error}"
    );
    assert_eq!(results[1]["status"], "PASS", "{}", results[1]);
    // Stopped at about 1 s, far from the plugin's 30 s.
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

/// A component's `timeout_ms` is under a host ceiling, `limits.plugin_timeout_ms`
/// (30 s by default), that only the user lifts; it also bounds the helper's
/// start and the component's instantiation at load, outside any step.
#[test]
fn a_plugins_timeout_is_under_a_ceiling_only_the_user_lifts() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    let input = data(dir.path(), &["ok"]);
    let eval = |extra: &[&str], hang_on_new: bool| {
        let mut cmd = tribunal();
        cmd.args(["eval", "--fields", "id,status", "--input"])
            .arg(&input)
            .arg(&pack)
            .args(extra);
        if hang_on_new {
            cmd.env("TRIBUNAL_FIXTURE_HANG_ON_NEW", "1");
        }
        let started = std::time::Instant::now();
        let out = cmd.output().unwrap();
        (out, started.elapsed())
    };
    let stderr = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();

    // A pack asking for more than the ceiling is refused at its `timeout_ms`.
    crashing_pack(&pack, ", isolation: process, timeout_ms: 3600000");
    let (out, _) = eval(&[], false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("components/c.yaml:4:")
            && stderr(&out).contains("`timeout_ms`: 3600000 is above the ceiling of 30000 ms (limits.plugin_timeout_ms); a pack may only tighten it")
            && stderr(&out).contains("help: the user lifts it for a run with --set limits.plugin_timeout_ms=3600000"),
        "{}",
        stderr(&out)
    );
    // The user lifts it.
    let (out, _) = eval(&["--set", "limits.plugin_timeout_ms=3600000"], false);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A pack's own limits may only lower the ceiling.
    fs::write(
        pack.join("pack.yaml"),
        fs::read_to_string(pack.join("pack.yaml")).unwrap() + "limits:\n  plugin_timeout_ms: 0\n",
    )
    .unwrap();
    let (out, _) = eval(&[], false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("limits.plugin_timeout_ms: 0 (unlimited) is above the ceiling of 30000"),
        "{}",
        stderr(&out)
    );

    // A component that never finishes instantiating stops the load at the
    // ceiling (here lowered by the user to 700 ms), not after 30 s or never.
    crashing_pack(&pack, ", isolation: process");
    let (out, took) = eval(&["--set", "limits.plugin_timeout_ms=700"], true);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "did not answer within 700 ms (limits.plugin_timeout_ms): its helper process was stopped"
        ),
        "{}",
        stderr(&out)
    );
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

#[test]
fn timeout_ms_needs_process_isolation() {
    let dir = tempfile::tempdir().unwrap();
    crashing_pack(dir.path(), ", timeout_ms: 100");
    let err = load_error(dir.path());
    assert!(
        err.contains("components/c.yaml:4:")
            && err.contains("`timeout_ms` applies to `isolation: process`")
            && err.contains("help: add `isolation: process`, or remove `timeout_ms`"),
        "{err}"
    );
    crashing_pack(dir.path(), ", isolation: sandbox");
    let err = load_error(dir.path());
    assert!(
        err.contains("unknown variant `sandbox`") || err.contains("unknown value `sandbox`"),
        "{err}"
    );
}

/// In-process, a crash ends the run; `--resume` then finishes the output
/// without evaluating again what was written.
#[cfg(unix)]
#[test]
fn after_an_in_process_crash_resume_completes_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    crashing_pack(&pack, "");
    let mut outputs = vec!["ok"; 3000];
    outputs[2600] = "abort when asked";
    let input = data(dir.path(), &outputs);
    let eval = |extra: &[&str], abort: bool| {
        let mut cmd = tribunal();
        cmd.current_dir(dir.path())
            .args(["eval", "--jobs", "1", "--input"])
            .arg(&input)
            .arg(&pack)
            .args(extra);
        if abort {
            cmd.env("TRIBUNAL_FIXTURE_ABORT", "1");
        } else {
            cmd.env_remove("TRIBUNAL_FIXTURE_ABORT");
        }
        cmd.output().unwrap()
    };
    let crashed = eval(&["--output", "out.jsonl"], true);
    assert_eq!(crashed.status.code(), None, "not killed by a signal");
    let partial = fs::read_to_string(dir.path().join(".out.jsonl.partial")).unwrap();
    let kept = partial.lines().count();
    assert!(kept > 0 && kept <= 2600, "{kept}");
    assert!(!dir.path().join("out.jsonl").exists());
    let resumed = eval(&["--output", "out.jsonl", "--resume"], false);
    let message = String::from_utf8_lossy(&resumed.stderr).into_owned();
    assert_eq!(resumed.status.code(), Some(0), "{message}");
    assert!(
        message.contains(&format!(
            "resumed: {kept} records kept from .out.jsonl.partial"
        )),
        "{message}"
    );
    let full = eval(&["--output", "full.jsonl"], false);
    assert_eq!(full.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        fs::read_to_string(dir.path().join("full.jsonl")).unwrap()
    );
}

/// Ctrl-C in a terminal signals the whole process group: the run stops
/// cleanly, and the isolated plugin's helpers (in a group of their own) finish
/// the records being evaluated instead of dying with them.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_run_without_killing_its_plugin_helpers() {
    use std::os::unix::process::CommandExt;
    use std::process::{Command as StdCommand, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    crashing_pack(&pack, ", isolation: process");
    let input = data(dir.path(), &vec!["ok"; 40_000]);
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("tribunal"))
        .env("TRIBUNAL_ALLOW_PLUGINS", "1")
        .env("TRIBUNAL_PLUGIN_PATH", plugin_dir())
        .current_dir(dir.path())
        .args(["eval", "--jobs", "2", "--output", "out.jsonl", "--input"])
        .arg(&input)
        .arg(&pack)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let partial = dir.path().join(".out.jsonl.partial");
    let started = Instant::now();
    while fs::metadata(&partial).map_or(0, |m| m.len()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no results written"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // As the terminal does: SIGINT to every process of the foreground group.
    let group = format!("-{}", child.id());
    assert!(StdCommand::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let message = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{message}");
    let kept = fs::read_to_string(&partial).unwrap();
    assert!(kept.lines().count() < 40_000, "the run was not stopped");
    assert!(
        !kept.contains("\"ERROR\""),
        "a record failed when the run was stopped:\n{message}"
    );
    let resumed = tribunal()
        .current_dir(dir.path())
        .args([
            "eval",
            "--jobs",
            "2",
            "--output",
            "out.jsonl",
            "--resume",
            "--input",
        ])
        .arg(&input)
        .arg(&pack)
        .output()
        .unwrap();
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let results = fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 40_000);
    assert!(!results.contains("\"ERROR\""));
}
