//! Rhai script components through the library and the real binary: every entry
//! point and return shape, the context, every helper, every limit, and the bad
//! input of the scripting issue (runaway loops, deep recursion, huge values,
//! imports, unknown functions, syntax errors).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use assert_cmd::Command;
use serde_json::{json, Value};
use tribunal::{Input, LoadErrors, LoadOptions, Override, Pack, Status};

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A pack with one script component `m` of `kind` (source in `m.rhai`) wired into
/// the pipeline; `extra` is appended to pack.yaml (e.g. a `limits:` section).
fn script_pack(dir: &Path, kind: &str, script: &str, extra: &str) -> Result<Pack, LoadErrors> {
    write(dir, "m.rhai", script);
    write(
        dir,
        "m.yaml",
        &format!("kind: {kind}\nname: m\nimplementation: {{ script: m.rhai }}\nconfig: {{ factor: 2, words: [a, b] }}\n"),
    );
    let pipeline = match kind {
        "metric" => "pipeline:\n  metrics: [m]\n",
        "postprocessor" => "pipeline:\n  postprocessors: [m]\n",
        _ => "pipeline:\n  metrics:\n    - use: json_compare\n      with: { field_strategies: { x: m } }\n",
    };
    write(
        dir,
        "pack.yaml",
        &format!("name: t\nversion: 1.0.0\ncomponents: [m.yaml]\n{pipeline}{extra}"),
    );
    Pack::load_with(dir, &host_limits(extra))
}

/// The script limits' defaults (docs/scripting.md). Should one change, the
/// packs that lift it stop loading here ("lifts the default"), which says so.
const DEFAULT_LIMITS: [(&str, u64); 10] = [
    ("max_operations", 1_000_000),
    ("max_call_depth", 32),
    ("max_expr_depth", 64),
    ("max_function_expr_depth", 32),
    ("max_string_size", 16 << 20),
    ("max_array_size", 100_000),
    ("max_map_size", 100_000),
    ("timeout_ms", 1_000),
    ("max_memory", 64 << 20),
    ("plugin_timeout_ms", 30_000),
];

/// A pack may only tighten its limits: the limits `extra` lifts (a
/// `limits: { key: value, ... }` line), as the run's own `--set limits.key=value`.
fn host_set(extra: &str) -> Vec<String> {
    let Some(limits) = extra
        .lines()
        .find_map(|line| line.strip_prefix("limits: {"))
        .and_then(|rest| rest.trim_end().strip_suffix('}'))
    else {
        return Vec::new();
    };
    let mut sets = Vec::new();
    for pair in limits.split(',') {
        let (key, value) = pair.split_once(':').expect("key: value");
        let (key, value) = (key.trim(), value.trim());
        let lifted = DEFAULT_LIMITS.iter().any(|(k, default)| {
            *k == key
                && value
                    .parse::<u64>()
                    .is_ok_and(|v| (v == 0 && key != "max_call_depth") || v > *default)
        });
        if lifted {
            sets.push(format!("limits.{key}={value}"));
        }
    }
    sets
}

/// [`host_set`] as load options.
fn host_limits(extra: &str) -> LoadOptions {
    let mut options = LoadOptions::default();
    for set in host_set(extra) {
        options
            .overrides
            .push(Override::parse(&set, Path::new(".")).unwrap());
    }
    options
}

/// [`host_set`] as command-line arguments.
fn host_set_args(extra: &str) -> Vec<String> {
    host_set(extra)
        .into_iter()
        .flat_map(|set| ["--set".to_owned(), set])
        .collect()
}

fn metric(script: &str) -> Pack {
    let dir = tempfile::tempdir().unwrap();
    script_pack(dir.path(), "metric", script, "").unwrap_or_else(|e| panic!("{e}"))
}

fn load_error(kind: &str, script: &str, extra: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let err = script_pack(dir.path(), kind, script, extra).expect_err("the pack must not load");
    (err.to_string(), dir)
}

fn eval(pack: &Pack, output: &str) -> tribunal::Report {
    pack.evaluate(&Input::new(output))
}

fn error_of(pack: &Pack, output: &str) -> String {
    let report = eval(pack, output);
    assert_eq!(report.status(), Status::Error, "{report:?}");
    report
        .error()
        .expect("an ERROR record has a reason")
        .to_owned()
}

/// The `details` a metric script returned for `output`.
fn details(pack: &Pack, output: &str) -> Value {
    let report = eval(pack, output);
    assert!(report.error().is_none(), "{:?}", report.error());
    report.metrics["m"].details.to_value()
}

// ---------------------------------------------------------------- entry points

#[test]
fn metric_returns_a_number_a_bool_or_a_map() {
    assert_eq!(
        eval(&metric("fn evaluate(ctx) { 0.25 }"), "x").score,
        Some(0.25)
    );
    assert_eq!(
        eval(&metric("fn evaluate(ctx) { 1 }"), "x").score,
        Some(1.0)
    );
    assert_eq!(
        eval(&metric("fn evaluate(ctx) { true }"), "x").score,
        Some(1.0)
    );
    assert_eq!(
        eval(&metric("fn evaluate(ctx) { false }"), "x").score,
        Some(0.0)
    );
    let pack = metric(
        r#"fn evaluate(ctx) {
            #{ score: 0.5,
               issues: ["plain", #{ message: "soft", severity: "warning", path: "/a" }],
               details: #{ n: 3, list: [1, "two", ()] } }
        }"#,
    );
    let report = eval(&pack, "{}");
    assert_eq!(report.score, Some(0.5));
    assert_eq!(
        report.metrics["m"].details.to_value(),
        json!({"n": 3, "list": [1, "two", null]})
    );
    let issues = serde_json::to_value(&report.issues).unwrap();
    assert_eq!(
        issues,
        json!([
            {"rule": "m", "code": "m", "severity": "error", "message": "plain", "path": null},
            {"rule": "m", "code": "m", "severity": "warning", "message": "soft", "path": "/a"}
        ])
    );
    assert_eq!(report.status(), Status::NeedsImprovement, "one error issue");
}

#[test]
fn postprocessor_returns_issues_or_normalised_json() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "postprocessor",
        r#"fn evaluate(ctx) { if ctx.json.n > 1 { ["too big"] } else { [] } }"#,
        "",
    )
    .unwrap();
    let report = eval(&pack, r#"{"n": 5}"#);
    assert_eq!(report.issues.len(), 1);
    assert_eq!(report.issues[0].message, "too big");
    assert_eq!(report.issues[0].rule, "m");
    assert_eq!(eval(&pack, r#"{"n": 0}"#).status(), Status::Pass);

    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "postprocessor",
        r#"fn evaluate(ctx) {
            let json = ctx.json;
            json.n = parse_int(json.n);
            #{ issues: [#{ message: "n was text", severity: "info" }], json: json }
        }"#,
        "",
    )
    .unwrap();
    let report = eval(&pack, r#"{"n": "42", "keep": [true]}"#);
    assert_eq!(report.json, json!({"n": 42, "keep": [true]}));
    assert_eq!(report.issues[0].severity, tribunal::Severity::Info);
    assert_eq!(report.status(), Status::Pass, "info issues do not count");
}

#[test]
fn strategy_compare_is_used_by_json_compare() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "strategy",
        // Within config.factor of each other: a match.
        r"fn compare(expected, actual, ctx) {
            if (expected - actual).abs() <= ctx.config.factor { 1.0 } else { 0.0 }
        }",
        "",
    )
    .unwrap();
    let report = pack.evaluate(&Input::new(r#"{"x": 11}"#).with_expected(json!({"x": 10})));
    let details = report.metrics["json_compare"].details.to_value();
    let field = &details["fields"]["x"];
    assert_eq!(
        field,
        &json!({"strategy": "m", "similarity": 1.0, "matched": true})
    );
    let report = pack.evaluate(&Input::new(r#"{"x": 20}"#).with_expected(json!({"x": 10})));
    assert_eq!(
        report.metrics["json_compare"].details.to_value()["fields"]["x"]["matched"],
        false
    );
}

#[test]
fn a_missing_or_wrong_entry_point_is_a_load_error() {
    let (err, dir) = load_error("metric", "fn score(ctx) { 1 }", "");
    let file = dir.path().join("m.rhai");
    assert_eq!(
        err,
        format!(
            "error: {}:1:1: script `m`: a metric script must define `fn evaluate(ctx)`, but it defines no `evaluate` function",
            file.display()
        )
    );
    let (err, _dir) = load_error("strategy", "fn compare(a, b) { 1 }", "");
    assert!(
        err.contains("m.rhai:1:1: script `m`: a strategy script must define `fn compare(expected, actual, ctx)`, but its `compare` takes 2 parameter(s)\n"),
        "{err}"
    );
}

// ---------------------------------------------------------------- return values

#[test]
fn bad_return_values_make_the_record_error_naming_the_script() {
    for (script, reason) in [
        ("fn evaluate(ctx) { 1.5 }", "metric `m`: script `m`: the score 1.5 is outside [0, 1]"),
        ("fn evaluate(ctx) { -1 }", "metric `m`: script `m`: the score -1 is outside [0, 1]"),
        (
            "fn evaluate(ctx) { 0.0 / 0.0 }",
            "metric `m`: script `m`: returned NaN; a score must be a number in [0, 1]",
        ),
        (
            r#"fn evaluate(ctx) { "high" }"#,
            "metric `m`: script `m`: the score must be a number in [0, 1] or a bool, got a string \"high\"",
        ),
        (
            "fn evaluate(ctx) { #{ scroe: 1 } }",
            "metric `m`: script `m`: metric result has an unknown key `scroe` (expected `score`, `issues`, `details`, `skip`)",
        ),
        (
            "fn evaluate(ctx) { #{ score: 1, issues: [#{ message: 1 }] } }",
            "metric `m`: script `m`: issue 0: `message` must be a string, got a number 1",
        ),
        (
            "fn evaluate(ctx) { #{ score: 1, details: #{ at: timestamp() } } }",
            "metric `m`: script `m`: returned a value of type `timestamp` at /details/at, which has no JSON form (use numbers, strings, bools, (), arrays and maps)",
        ),
        (
            "fn evaluate(ctx) { if false { 1.0 } }",
            "metric `m`: script `m`: the metric returned nothing (`()` or null); return a score (a number in [0, 1] or a bool), an object { score, issues, details }, or, when the metric does not apply to the record, { skip: REASON } (in Rhai `skip(REASON)`)",
        ),
        (
            r#"fn evaluate(ctx) { #{ score: 1, skip: "why" } }"#,
            "metric `m`: script `m`: a metric result has a `score` or a `skip`, not both",
        ),
        (
            r#"fn evaluate(ctx) { skip("") }"#,
            "metric `m`: script `m` (m.rhai:1:20): skip(): say why the metric does not apply: skip(\"no reference answer\")",
        ),
    ] {
        assert_eq!(error_of(&metric(script), "x"), reason, "{script}");
    }
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(dir.path(), "strategy", "fn compare(e, a, ctx) { true }", "").unwrap();
    let report = pack.evaluate(&Input::new(r#"{"x": 1}"#).with_expected(json!({"x": 1})));
    assert_eq!(
        report.error(),
        Some("metric `json_compare`: json_compare: field `x` (m strategy): script `m`: a strategy must return a number in [0, 1], got a boolean true")
    );
    // NaN from a postprocessor is named as a postprocessor's bad result, not a score.
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "postprocessor",
        "fn evaluate(ctx) { 0.0 / 0.0 }",
        "",
    )
    .unwrap();
    assert_eq!(
        error_of(&pack, "x"),
        "postprocessor `m`: script `m`: a postprocessor must return an array of issues or an object { issues, json }, got NaN"
    );
}

// ---------------------------------------------------------------- context

#[test]
fn the_context_arrives_as_native_values_in_the_plugin_shape() {
    let pack = metric(
        r"fn evaluate(ctx) {
            #{ score: 1.0, details: #{
                ctx: ctx,
                types: [type_of(ctx.output), type_of(ctx.json), type_of(ctx.json.n),
                        type_of(ctx.json.f), type_of(ctx.expected), type_of(ctx.config.words)],
            } }
        }",
    );
    let input = Input::new("```json\n{\"n\": 1, \"f\": 2.5, \"z\": null}\n```")
        .with_meta(json!({"model": "m1"}));
    let report = pack.evaluate(&input);
    let details = report.metrics["m"].details.to_value();
    assert_eq!(
        details["types"],
        json!(["string", "map", "i64", "f64", "()", "array"])
    );
    assert_eq!(
        details["ctx"],
        json!({
            "output": input.output,
            "json": {"n": 1, "f": 2.5, "z": null},
            "extraction": {"tier": "fence", "repairs": [], "raw_fallback": false},
            "expected": null,
            "meta": {"model": "m1"},
            "judging": "whole",
            "config": {"factor": 2, "words": ["a", "b"]},
            "issues": [],
            "scores": {},
        })
    );
}

#[test]
fn issues_and_scores_of_earlier_steps_are_in_the_context() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.rhai",
        "fn evaluate(ctx) { #{ score: 1, details: #{ issues: ctx.issues, scores: ctx.scores } } }",
    );
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    );
    write(
        dir.path(),
        "pack.yaml",
        "name: t\ncomponents: [m.yaml]\npipeline:\n  postprocessors: [no_placeholders]\n  metrics: [json_emission, m]\n",
    );
    let pack = Pack::load(dir.path()).unwrap();
    let d = details(
        &pack,
        r#"{"event": "agent:status", "data": {"note": "TODO"}}"#,
    );
    assert_eq!(d["scores"], json!({"json_emission": 1.0}));
    assert_eq!(d["issues"][0]["rule"], "no_placeholders");
    assert_eq!(d["issues"][0]["severity"], "error");
}

// ---------------------------------------------------------------- helpers

#[test]
fn every_helper_returns_what_the_guide_says() {
    let pack = metric(
        r#"fn evaluate(ctx) {
            #{ score: 1, details: #{
                regex_test: [regex_test("order 66", `\d+`), regex_test("none", `\d+`)],
                regex_find_all: regex_find_all("a1 b22 c333", `\d+`),
                regex_captures: regex_captures("v2.7", `v(?<major>\d+)\.(\d+)(-rc)?`),
                regex_no_match: regex_captures("x", `\d`),
                regex_escape: regex_escape("1+1=2?"),
                levenshtein: levenshtein("kitten", "sitting"),
                similarity: similarity("Kitten", "sitting"),
                jaro_winkler: jaro_winkler("MARTHA", "MARHTA"),
                token_set_ratio: token_set_ratio("new york mets", "the New York Mets"),
                json_pointer: [json_pointer(ctx.json, "/a/1/b"), json_pointer(ctx.json, "/a/9"),
                               json_pointer(ctx.json, "/c~1d"), json_pointer(ctx.json, "")],
                parse_json: parse_json(`{"k": [1, 2.5, null, "s"]}`),
                to_json: to_json(#{ k: [1, (), "s"] }),
                sentence_count: sentence_count("One. Two! Three?"),
                word_count: word_count("  three  little words "),
                compare: [compare("exact", "ABC", "abc"), compare("fuzzy", "kitten", "sitting"),
                          compare("ignore", 1, 2)],
                trimmed: trimmed("  both ends \n"),
                replaced: "a-b-c".replaced("-", "+"),
                short_number: [short_number(0.2549019607843137), short_number(1.0), short_number(3),
                               short_number(0.69999, 0.7)],
            } }
        }"#,
    );
    let d = details(&pack, r#"{"a": [0, {"b": "deep"}], "c/d": true}"#);
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert_eq!(d["regex_test"], json!([true, false]));
    assert_eq!(d["regex_find_all"], json!(["1", "22", "333"]));
    assert_eq!(
        d["regex_captures"],
        json!({"groups": ["v2.7", "2", "7", null], "named": {"major": "2"}})
    );
    assert_eq!(d["regex_no_match"], Value::Null);
    assert_eq!(d["regex_escape"], r"1\+1=2\?");
    assert_eq!(d["levenshtein"], 3);
    assert!(
        close(&d["similarity"], 1.0 - 3.0 / 7.0),
        "{}",
        d["similarity"]
    );
    assert!(
        close(&d["jaro_winkler"], 0.961_111_111_111_111_1),
        "{}",
        d["jaro_winkler"]
    );
    assert!(close(&d["token_set_ratio"], 1.0));
    assert_eq!(
        d["json_pointer"],
        json!(["deep", null, true, {"a": [0, {"b": "deep"}], "c/d": true}])
    );
    assert_eq!(d["parse_json"], json!({"k": [1, 2.5, null, "s"]}));
    assert_eq!(d["to_json"], r#"{"k":[1,null,"s"]}"#);
    assert_eq!(d["sentence_count"], 3);
    assert_eq!(d["word_count"], 3);
    assert_eq!(d["compare"][0], 1.0);
    assert!(close(&d["compare"][1], 1.0 - 3.0 / 7.0));
    assert_eq!(d["compare"][2], 1.0);
    assert_eq!(d["trimmed"], "both ends");
    assert_eq!(d["replaced"], "a+b+c");
    assert_eq!(d["short_number"], json!(["0.2549", "1", "3", "0.69999"]));
}

#[test]
fn a_metric_that_does_not_apply_is_skipped_and_leaves_the_score() {
    // A Rhai metric skips records without a reference; json_compare, with
    // `when_no_expected: skip`, too. The other metric's score is the record's.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.rhai",
        r#"fn evaluate(ctx) {
            if ctx.expected == () { return skip("no reference answer"); }
            if ctx.json.answer == ctx.expected.answer { 1.0 } else { 0.0 }
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
        "name: t\ncomponents: [m.yaml]\npipeline:\n  metrics:\n    - use: json_emission\n      weight: 0.5\n    - use: m\n      weight: 0.3\n    - use: json_compare\n      weight: 0.2\n      with: { when_no_expected: skip }\nscoring: { min_score: 0.9 }\n",
    );
    let pack = Pack::load(dir.path()).unwrap();
    let output = r#"{"event": "agent:status", "data": {}, "answer": "42"}"#;
    let alone = pack.evaluate(&Input::new(output)).to_value();
    assert_eq!(
        alone["metrics"]["m"],
        json!({"score": null, "weight": 0.3, "skipped": "no reference answer"})
    );
    assert_eq!(
        alone["metrics"]["json_compare"],
        json!({"score": null, "weight": 0.2, "skipped": "the record has no `expected` to compare with"})
    );
    assert_eq!(alone["score"], alone["metrics"]["json_emission"]["score"]);
    // With a reference, every metric counts.
    let referenced = pack
        .evaluate(&Input::new(output).with_expected(json!({"answer": "41"})))
        .to_value();
    assert_eq!(
        referenced["metrics"]["m"],
        json!({"score": 0.0, "weight": 0.3})
    );
    assert!(referenced["score"].as_f64() < alone["score"].as_f64());
    // Every metric skipped: no score, so min_score cannot fail the record.
    write(
        dir.path(),
        "pack.yaml",
        "name: t\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\nscoring: { min_score: 0.9 }\n",
    );
    let pack = Pack::load(dir.path()).unwrap();
    let report = pack.evaluate(&Input::new(output));
    assert_eq!(report.score, None);
    assert_eq!(report.status(), Status::Pass);
}

/// A pack whose metric `m` (source `metric`) calls the pack's own script
/// strategy `name` (source `strategy`) through `compare()`.
fn metric_calling_a_script_strategy(dir: &Path, name: &str, strategy: &str, metric: &str) -> Pack {
    write(dir, &format!("{name}.rhai"), strategy);
    write(
        dir,
        &format!("{name}.yaml"),
        &format!("kind: strategy\nname: {name}\nimplementation: {{ script: {name}.rhai }}\n"),
    );
    write(dir, "m.rhai", metric);
    write(
        dir,
        "m.yaml",
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    );
    write(
        dir,
        "pack.yaml",
        "name: t\ncomponents: [\"*.yaml\"]\npipeline:\n  metrics: [m]\n",
    );
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn compare_reaches_the_packs_own_script_strategies() {
    let dir = tempfile::tempdir().unwrap();
    let pack = metric_calling_a_script_strategy(
        dir.path(),
        "near",
        "fn compare(e, a, ctx) { if (e - a).abs() < 1 { 1.0 } else { compare_with(\"exact\", e, a) } }",
        "fn evaluate(ctx) { compare(\"near\", 10, ctx.json.x) }",
    );
    assert_eq!(eval(&pack, r#"{"x": 10.5}"#).score, Some(1.0));
    assert_eq!(eval(&pack, r#"{"x": 12}"#).score, Some(0.0));
    assert_eq!(eval(&pack, r#"{"x": 10}"#).score, Some(1.0));
}

/// A strategy reached through `compare()` reads the record it is called for
/// (the caller's context, borrowed for the call), on every thread.
#[test]
fn a_strategy_reached_through_compare_sees_the_records_context() {
    let dir = tempfile::tempdir().unwrap();
    let pack = metric_calling_a_script_strategy(
        dir.path(),
        "lenient",
        "fn compare(e, a, ctx) { if ctx.meta.lenient || e == a { 1.0 } else { 0.0 } }",
        "fn evaluate(ctx) { compare(\"lenient\", ctx.output, \"x\") }",
    );
    let inputs: Vec<Input> = (0..600)
        .map(|i| {
            Input::new(if i % 3 == 0 { "x" } else { "y" })
                .with_meta(json!({ "lenient": i % 2 == 0 }))
        })
        .collect();
    let mut scores = Vec::new();
    pack.evaluate_batch(inputs, 2, |report| scores.push(report.score));
    for (i, score) in scores.iter().enumerate() {
        let expected = if i % 3 == 0 || i % 2 == 0 { 1.0 } else { 0.0 };
        assert_eq!(*score, Some(expected), "record {i}");
    }
}

#[test]
fn compare_reached_through_a_computed_function_pointer_works() {
    let pack = metric(
        r#"fn evaluate(ctx) { let f = Fn("comp" + "are"); f.call("exact", ctx.output, "x") }"#,
    );
    let report = eval(&pack, "x");
    assert_eq!(report.error(), None);
    assert_eq!(report.score, Some(1.0));
}

#[test]
fn helper_errors_name_the_helper_and_the_position() {
    let pack = metric("fn evaluate(ctx) {\n    regex_test(ctx.output, \"(unclosed\")\n}");
    let err = error_of(&pack, "x");
    assert!(err.starts_with("metric `m`: script `m` ("), "{err}");
    assert!(
        err.contains("m.rhai:2:5): regex_test(): invalid regex `(unclosed`: regex parse error:"),
        "{err}"
    );
    let err = error_of(
        &metric("fn evaluate(ctx) { parse_json(ctx.output) }"),
        "{oops",
    );
    assert!(
        err.contains(
            "m.rhai:1:20): parse_json(): not JSON: key must be a string at line 1 column 2"
        ),
        "{err}"
    );
    let err = error_of(
        &metric(r#"fn evaluate(ctx) { compare("fuzy", 1, 1) }"#),
        "x",
    );
    assert!(
        err.ends_with("compare(): unknown strategy `fuzy` (known: exact, fuzzy, ignore, normalized, semantic); did you mean `fuzzy`?"),
        "{err}"
    );
    let err = error_of(
        &metric(r#"fn evaluate(ctx) { json_pointer(ctx.json, "a") }"#),
        "{}",
    );
    assert!(
        err.ends_with(
            "json_pointer(): `a` is not a JSON pointer (it must be \"\" or start with `/`)"
        ),
        "{err}"
    );
    // parse_json errors can be caught by the script.
    let pack = metric(
        "fn evaluate(ctx) { let ok = 1; try { parse_json(ctx.output); } catch (e) { ok = 0; } ok }",
    );
    assert_eq!(eval(&pack, "nope").score, Some(0.0));
    assert_eq!(eval(&pack, "[1]").score, Some(1.0));
}

#[test]
fn a_throw_and_an_unknown_function_are_errors_with_position() {
    let err = error_of(&metric("fn evaluate(ctx) {\n  throw \"no good\";\n}"), "x");
    assert!(err.ends_with("m.rhai:2:3): script threw: no good"), "{err}");
    let err = error_of(
        &metric("fn evaluate(ctx) {\n  let x = 1;\n  x + no_such_helper(x)\n}"),
        "x",
    );
    assert!(
        err.ends_with("m.rhai:3:7): Function not found: no_such_helper (i64)"),
        "{err}"
    );
    let err = error_of(
        &metric("fn evaluate(ctx) { helper(ctx) }\nfn helper(c) { c.output.len() / 0 }"),
        "x",
    );
    assert!(
        err.ends_with("m.rhai:2:31): Division by zero: 1 / 0"),
        "{err}"
    );
}

// ---------------------------------------------------------------- limits

/// The ERROR record names the limit; the next record evaluates normally.
fn runaway(script: &str, limits: &str, expected_reason: &str) {
    runaway_at(script, limits, expected_reason, "metric `m`: script `m` (");
}

/// [`runaway`], the error starting with `prefix`.
fn runaway_at(script: &str, limits: &str, expected_reason: &str, prefix: &str) {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(dir.path(), "metric", script, limits).unwrap_or_else(|e| panic!("{e}"));
    let err = error_of(&pack, "run away");
    assert!(err.starts_with(prefix), "{err}");
    assert!(
        err.ends_with(expected_reason),
        "{err}\n  expected: {expected_reason}"
    );
    assert_eq!(
        eval(&pack, "ok").score,
        Some(1.0),
        "the next record is fine"
    );
}

#[test]
fn an_endless_loop_hits_the_operation_limit() {
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } loop { } }"#,
        "",
        "exceeded the 1,000,000 operation limit (limits.max_operations)",
    );
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let n = 0; while true { n += 1; } }"#,
        "limits: { max_operations: 5000 }\n",
        "exceeded the 5,000 operation limit (limits.max_operations)",
    );
}

#[test]
fn an_endless_loop_hits_the_deadline() {
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } loop { } }"#,
        "limits: { max_operations: 0, timeout_ms: 50 }\n",
        "exceeded the 50 ms time limit (limits.timeout_ms)",
    );
}

#[test]
fn slow_helpers_on_huge_strings_hit_the_deadline() {
    // Quadratic helpers count no Rhai operations while they work: on strings of
    // a few hundred thousand characters they would run for hours.
    for call in [
        "levenshtein(s, s + \"x\")",
        "similarity(s, \"b\" + s)",
        "jaro_winkler(s, \"b\" + s)",
        "token_set_ratio(w + \"x\", w + \"y\")",
        "compare(\"fuzzy\", s, \"b\" + s)",
    ] {
        let script = format!(
            r#"fn evaluate(ctx) {{
    if ctx.output == "ok" {{ return 1; }}
    let s = "ab"; for i in 0..17 {{ s += s; }}
    let w = ""; for i in 0..20000 {{ w += "w" + i + " "; }}
    {call};
    1
}}"#
        );
        let started = std::time::Instant::now();
        // The script's own check (with its position) usually reports it; on a
        // loaded machine the script may end within the 256 operations between
        // two checks, and then the step's deadline does: either is the ERROR.
        runaway_at(
            &script,
            "limits: { timeout_ms: 200 }\n",
            "exceeded the 200 ms time limit (limits.timeout_ms)",
            "metric `m`: ",
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{call} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn compiling_new_regexes_in_a_loop_stops_at_the_deadline() {
    // Each new pattern is compiled (no Rhai operation counted while it does);
    // the deadline is checked before each compile, not only every 256 operations.
    let started = std::time::Instant::now();
    runaway(
        r#"fn evaluate(ctx) {
    if ctx.output == "ok" { return 1; }
    for i in 0..100000 { regex_test("a", `(?:\w{20}){5}` + i); }
    1
}"#,
        "limits: { max_operations: 0, timeout_ms: 100 }\n",
        "exceeded the 100 ms time limit (limits.timeout_ms)",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_limit_hit_inside_a_sort_comparer_still_errors_the_record() {
    // Rhai ignores the comparer's errors: the call must not go on to a score.
    let script = r#"fn evaluate(ctx) {
    if ctx.output == "ok" { return 1; }
    let a = []; a.pad(2000, 1);
    a.sort(|x, y| { loop { } });
    1
}"#;
    runaway(
        script,
        "",
        "exceeded the 1,000,000 operation limit (limits.max_operations)",
    );
    runaway(
        script,
        "limits: { max_operations: 0, timeout_ms: 100 }\n",
        "exceeded the 100 ms time limit (limits.timeout_ms)",
    );
    // Past the deadline the sort ends fast and the script goes no further.
    let started = std::time::Instant::now();
    runaway(
        r#"fn evaluate(ctx) {
    if ctx.output == "ok" { return 1; }
    let a = []; a.pad(2000, 1);
    loop { a.sort(|x, y| { loop { } }); }
}"#,
        "limits: { max_operations: 0, timeout_ms: 100 }\n",
        "exceeded the 100 ms time limit (limits.timeout_ms)",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    runaway(
        r#"fn evaluate(ctx) {
    if ctx.output == "ok" { return 1; }
    let a = [3, 1, 2, 3]; a.dedup(|x, y| { loop { } });
    1
}"#,
        "limits: { max_operations: 5000 }\n",
        "exceeded the 5,000 operation limit (limits.max_operations)",
    );
}

#[test]
fn deep_recursion_hits_the_call_depth_limit() {
    let script = r#"fn down(n) { down(n + 1) }
fn evaluate(ctx) { if ctx.output == "ok" { return 1; } down(0) }"#;
    runaway(
        script,
        "",
        "exceeded the call depth limit of 32 (limits.max_call_depth)",
    );
    runaway(
        script,
        "limits: { max_call_depth: 5 }\n",
        "exceeded the call depth limit of 5 (limits.max_call_depth)",
    );
    // A depth the native stack cannot hold is refused at load (a stack
    // overflow would abort the run, not fail the record).
    // (on a thread with the stack `tribunal` gives the threads it evaluates on)
    std::thread::Builder::new()
        .stack_size(tribunal::STACK_SIZE)
        .spawn(move || {
            runaway(
                script,
                "limits: { max_call_depth: 256 }\n",
                "exceeded the call depth limit of 256 (limits.max_call_depth)",
            );
        })
        .unwrap()
        .join()
        .unwrap();
    let (err, dir) = load_error("metric", script, "limits:\n  max_call_depth: 100000\n");
    assert_eq!(
        err,
        format!(
            "error: {}:7:3: limits.max_call_depth must be at most 256, got 100000",
            dir.path().join("pack.yaml").display()
        )
    );
    let options = tribunal::LoadOptions {
        overrides: vec![
            tribunal::Override::parse("limits.max_call_depth=257", dir.path()).unwrap(),
        ],
        ..tribunal::LoadOptions::default()
    };
    write(
        dir.path(),
        "pack.yaml",
        "name: t\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n",
    );
    let err = Pack::load_with(dir.path(), &options)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "--set limits.max_call_depth=257: limits.max_call_depth must be at most 256, got 257"
        ),
        "{err}"
    );
}

#[test]
fn a_huge_string_hits_the_string_size_limit() {
    // 1 GB in one go, and by doubling.
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let s = ""; s.pad(1_000_000_000, 'x'); s.len() }"#,
        "",
        "Length of string exceeded the limit of 16,777,216 (limits.max_string_size)",
    );
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let s = "x"; loop { s += s; } }"#,
        "limits: { max_string_size: 1000 }\n",
        "Length of string exceeded the limit of 1,000 (limits.max_string_size)",
    );
}

#[test]
fn a_million_element_array_hits_the_array_size_limit() {
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let a = []; a.pad(1_000_000, 0); a.len() }"#,
        "",
        "Size of array/BLOB exceeded the limit of 100,000 (limits.max_array_size)",
    );
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let a = []; for i in 0..1000 { a.push(i); } 1 }"#,
        "limits: { max_array_size: 10 }\n",
        "Size of array/BLOB exceeded the limit of 10 (limits.max_array_size)",
    );
}

#[test]
fn a_huge_map_hits_the_map_size_limit() {
    runaway(
        r#"fn evaluate(ctx) { if ctx.output == "ok" { return 1; } let m = #{}; for i in 0..1000 { m[`k${i}`] = i; } m.len() }"#,
        "limits: { max_map_size: 50 }\n",
        "Size of object map exceeded the limit of 50 (limits.max_map_size)",
    );
}

#[test]
fn deep_expressions_are_stopped_at_load() {
    let nested = format!("fn evaluate(ctx) {{ {}1{} }}", "(".repeat(8), ")".repeat(8));
    let (err, _dir) = load_error(
        "metric",
        &nested,
        "limits: { max_function_expr_depth: 4 }\n",
    );
    assert!(
        err.contains("script `m`: Expression exceeds maximum complexity"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(
        script_pack(dir.path(), "metric", &nested, "").is_ok(),
        "within the default depth"
    );
    let (err, _dir) = load_error(
        "metric",
        "fn evaluate(ctx) { 1 }",
        "limits: { max_operation: 5 }\n",
    );
    assert!(err.contains("unknown field `max_operation`"), "{err}");
    assert!(err.contains("did you mean `max_operations`?"), "{err}");
}

// ---------------------------------------------------------------- sandbox and load errors

#[test]
fn import_is_refused_at_load_with_its_position() {
    let (err, dir) = load_error(
        "metric",
        "import \"file\" as f;\nfn evaluate(ctx) { 1 }",
        "",
    );
    assert_eq!(
        err,
        format!(
            "error: {}:1:1: script `m`: 'import' is a reserved keyword",
            dir.path().join("m.rhai").display()
        )
    );
    let (err, _dir) = load_error("metric", "fn evaluate(ctx) { eval(\"1\") }", "");
    assert!(
        err.contains("m.rhai:1:20: script `m`: reserved keyword 'eval' is disabled"),
        "{err}"
    );
}

#[test]
fn a_syntax_error_fails_the_load_with_file_line_col() {
    let (err, dir) = load_error("metric", "fn evaluate(ctx) {\n    let x = ;\n    1\n}", "");
    assert_eq!(
        err,
        format!(
            "error: {}:2:13: script `m`: Unexpected ';'",
            dir.path().join("m.rhai").display()
        )
    );
    let (err, dir) = load_error("metric", "fn evaluate(ctx) { undefined_var + 1 }", "");
    assert_eq!(
        err,
        format!(
            "error: {}:1:20: script `m`: Undefined variable: undefined_var",
            dir.path().join("m.rhai").display()
        ),
        "strict variables"
    );
}

#[test]
fn inline_scripts_report_positions_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation:\n  inline: |\n    fn evaluate(ctx) {\n      ctx.output.len() +\n    }\n",
    );
    write(
        dir.path(),
        "pack.yaml",
        "name: t\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n",
    );
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    let at = format!(
        "error: {}:7:5: script `m`: ",
        dir.path().join("m.yaml").display()
    );
    assert!(err.starts_with(&at), "{err}\n  expected to start with {at}");

    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation:\n  inline: |\n    fn evaluate(ctx) {\n      throw \"inline\";\n    }\n",
    );
    let pack = Pack::load(dir.path()).unwrap();
    let err = error_of(&pack, "x");
    assert!(err.ends_with("m.yaml:6:7): script threw: inline"), "{err}");

    // A commented-out `inline:` line before the real one is not the script.
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation:\n  # inline: the old one\n  inline: |\n    fn evaluate(ctx) {\n      throw \"inline\";\n    }\n",
    );
    let err = error_of(&Pack::load(dir.path()).unwrap(), "x");
    assert!(err.ends_with("m.yaml:7:7): script threw: inline"), "{err}");
    // An indentation indicator: the script's own indentation is kept.
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation:\n  inline: |2\n      fn evaluate(ctx) {\n        throw \"inline\";\n      }\n",
    );
    let err = error_of(&Pack::load(dir.path()).unwrap(), "x");
    assert!(err.ends_with("m.yaml:6:9): script threw: inline"), "{err}");
}

#[test]
fn print_and_debug_do_not_touch_stdout() {
    // Through the binary: stdout carries only the result record.
    let dir = tempfile::tempdir().unwrap();
    script_pack(
        dir.path(),
        "metric",
        "fn evaluate(ctx) { print(\"hello\"); debug(42); 1 }",
        "",
    )
    .unwrap();
    let out = tribunal_cmd()
        .args(["check", "--json", "--pack"])
        .arg(dir.path())
        .write_stdin("anything")
        .assert()
        .success();
    let out = out.get_output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value = serde_json::from_str(&stdout).expect("stdout is only the result");
    assert_eq!(record["score"], 1.0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[script `m`] hello"), "{stderr}");
    assert!(stderr.contains("42"), "{stderr}");
}

#[test]
fn a_pack_with_scripts_is_shared_across_threads() {
    let pack = metric("fn evaluate(ctx) { ctx.json.n.to_float() / 100.0 }");
    let inputs: Vec<Input> = (0..400)
        .map(|i| Input::new(format!(r#"{{"n": {}}}"#, i % 101)).with_id(i))
        .collect();
    let mut scores = Vec::new();
    pack.evaluate_batch(inputs, 4, |r| scores.push(r.score));
    let expected: Vec<Option<f64>> = (0..400).map(|i| Some(f64::from(i % 101) / 100.0)).collect();
    assert_eq!(scores, expected);
}

// ---------------------------------------------------------------- examples/scripts

fn example(name: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/scripts")
            .join(name),
    )
    .unwrap()
}

#[test]
fn example_word_budget() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(dir.path(), "metric", &example("word_budget.rhai"), "").unwrap();
    // config has no max_words: the script's default of 50 applies.
    assert_eq!(eval(&pack, "five words are right here").score, Some(1.0));
    let long = "word ".repeat(75);
    assert_eq!(eval(&pack, &long).score, Some(0.5));
    assert_eq!(eval(&pack, &"word ".repeat(200)).score, Some(0.0));
}

#[test]
fn example_banned_phrases() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "postprocessor",
        &example("banned_phrases.rhai"),
        "",
    )
    .unwrap();
    let report = eval(
        &pack,
        "As an AI language model, I cannot. I hope this helps!",
    );
    let messages: Vec<&str> = report.issues.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "banned phrase \"As an AI language model\"",
            "banned phrase \"I hope this helps\""
        ]
    );
    assert_eq!(eval(&pack, "Plain answer.").status(), Status::Pass);
}

#[test]
fn example_token_set_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(dir.path(), "strategy", &example("token_set.rhai"), "").unwrap();
    let score = |expected: Value, actual: &str| {
        let report = pack.evaluate(&Input::new(actual).with_expected(json!({ "x": expected })));
        report.metrics["json_compare"].details.to_value()["fields"]["x"]["similarity"].clone()
    };
    assert_eq!(
        score(json!("New York Mets"), r#"{"x": "the mets (new york)"}"#),
        1.0
    );
    assert_eq!(score(json!(3), r#"{"x": 3.0}"#), 1.0, "non-strings: exact");
    assert_eq!(score(json!("alpha"), r#"{"x": "omega"}"#), json!(0.2));
}

#[test]
fn example_confidence_gate() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(dir.path(), "metric", &example("confidence_gate.rhai"), "").unwrap();
    assert_eq!(
        eval(&pack, r#"{"answer": "yes", "confidence": 0.9}"#).score,
        Some(1.0)
    );
    let report = eval(&pack, r#"{"answer": "yes", "confidence": 0.2}"#);
    assert_eq!(report.score, Some(0.0));
    assert_eq!(report.issues[0].message, "confidence 0.2 is below 0.5");
    assert_eq!(report.issues[0].path.as_deref(), Some("/confidence"));
    assert_eq!(eval(&pack, "no json").score, Some(0.0));
}

// ---------------------------------------------------------------- CLI

fn tribunal_cmd() -> Command {
    Command::cargo_bin("tribunal").expect("binary builds")
}

#[test]
fn cli_eval_errors_the_runaway_record_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    script_pack(
        dir.path(),
        "metric",
        r#"fn evaluate(ctx) { if ctx.output == "spin" { loop {} } 1 }"#,
        "limits: { max_operations: 0, timeout_ms: 200 }\n",
    )
    .unwrap();
    write(
        dir.path(),
        "data.jsonl",
        "{\"id\": 1, \"output\": \"fine\"}\n{\"id\": 2, \"output\": \"spin\"}\n{\"id\": 3, \"output\": \"fine\"}\n",
    );
    let out = tribunal_cmd()
        .args(["eval", "--jobs", "2", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .args(host_set_args(
            "limits: { max_operations: 0, timeout_ms: 200 }\n",
        ))
        .assert()
        .get_output()
        .clone();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "one result per record");
    assert_eq!(lines[0]["status"], "PASS");
    assert_eq!(lines[1]["status"], "ERROR");
    let reason = lines[1]["error"].as_str().unwrap();
    assert!(
        reason.ends_with("exceeded the 200 ms time limit (limits.timeout_ms)"),
        "{reason}"
    );
    assert_eq!(lines[2]["status"], "PASS");
}

#[test]
fn cli_deep_values_and_nested_script_calls_do_not_overflow_the_stack() {
    // Rhai walks nested arrays and maps (size checks, clone, drop) and nests
    // script calls through compare() recursively, on the native stack: within
    // the default limits a few lines of script went deeper than a 2 MiB thread
    // holds, and a stack overflow aborts the whole run.
    let dir = tempfile::tempdir().unwrap();
    script_pack(
        dir.path(),
        "strategy",
        r#"fn down(n, e, a) { if n > 0 { down(n - 1, e, a) } else { compare_with("m", e, a) } }
fn compare(expected, actual, ctx) {
    if ctx.output.contains("nest") {
        let v = []; for i in 0..4000 { v = [v]; }
        return 1.0;
    }
    down(28, expected, actual)
}"#,
        "limits: { timeout_ms: 60000 }\n",
    )
    .unwrap();
    let record = |id: u32, output: &str| {
        json!({"id": id, "output": output, "expected": {"x": 1}}).to_string() + "\n"
    };
    write(
        dir.path(),
        "data.jsonl",
        &format!(
            "{}{}",
            record(1, r#"{"x": 1, "note": "nest"}"#),
            record(2, r#"{"x": 1}"#)
        ),
    );
    for jobs in ["1", "2"] {
        let out = tribunal_cmd()
            .args(["eval", "--jobs", jobs, "--pack"])
            .arg(dir.path())
            .arg("--input")
            .arg(dir.path().join("data.jsonl"))
            .args(host_set_args("limits: { timeout_ms: 60000 }\n"))
            .assert()
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("overflow"), "--jobs {jobs}: {stderr}");
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "--jobs {jobs}: {stderr}");
        assert_eq!(lines[0]["status"], "PASS", "{}", lines[0]);
        // Nested eight deep, then refused: an ERROR record, not a crash.
        assert_eq!(lines[1]["status"], "ERROR", "{}", lines[1]);
        let reason = lines[1]["error"].as_str().unwrap();
        assert!(reason.contains("nest more than 8 deep"), "{reason}");
    }
}

#[test]
fn cli_load_errors_for_scripts_exit_2_with_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    let _ = script_pack(dir.path(), "metric", "fn evaluate(ctx) {\n  1 +\n}", "");
    let file = dir.path().join("m.rhai");
    tribunal_cmd()
        .args(["check", "--pack"])
        .arg(dir.path())
        .write_stdin("x")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{}:3:1: script `m`: ",
            file.display()
        )));
}

#[test]
fn cli_list_explain_and_test_cover_the_scripted_pack() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    tribunal_cmd()
        .current_dir(root)
        .args(["list", "rules/scripted-fields"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "filled_fields            metric        script filled_fields.rhai",
        ));
    tribunal_cmd()
        .current_dir(root)
        .args([
            "explain",
            "filled_fields",
            "--pack",
            "rules/scripted-fields",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "# filled_fields (metric, script filled_fields.rhai)",
        ))
        .stdout(predicates::str::contains(
            "that hold a real value. One error issue per field that is missing, empty or a",
        ));
    tribunal_cmd()
        .current_dir(root)
        .args(["test", "rules/scripted-fields"])
        .assert()
        .success()
        .stdout(predicates::str::contains(" 0 failed"));
    tribunal_cmd()
        .current_dir(root)
        .args(["lint", "--deny-warnings", "rules/scripted-fields"])
        .assert()
        .success();
}

#[test]
fn the_shipped_sample_data_runs_through_the_scripted_pack() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack = Pack::load(root.join("rules/scripted-fields")).unwrap();
    let data = fs::read_to_string(root.join("examples/data/scripted-fields.jsonl")).unwrap();
    let mut statuses = Vec::new();
    for line in data.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let input = Input::new(record["output"].as_str().unwrap())
            .with_id(record["id"].clone())
            .with_expected(record["expected"].clone());
        let report = pack.evaluate(&input);
        assert!(report.error().is_none(), "{:?}", report.error());
        statuses.push(report.status());
    }
    assert!(statuses.contains(&Status::Pass), "{statuses:?}");
    assert!(statuses.iter().any(|s| *s != Status::Pass), "{statuses:?}");
}

#[test]
fn limits_can_be_overridden_per_run_with_set() {
    let dir = tempfile::tempdir().unwrap();
    script_pack(
        dir.path(),
        "metric",
        "fn evaluate(ctx) { let n = 0; while n < 10000 { n += 1; } 1 }",
        "",
    )
    .unwrap();
    let load = |spec: &str| {
        let options = tribunal::LoadOptions {
            overrides: vec![tribunal::Override::parse(spec, dir.path()).unwrap()],
            ..tribunal::LoadOptions::default()
        };
        Pack::load_with(dir.path(), &options)
    };
    let pack = load("limits.max_operations=1000").unwrap();
    assert!(error_of(&pack, "x")
        .ends_with("exceeded the 1,000 operation limit (limits.max_operations)"));
    let pack = load("limits.max_operations=100000").unwrap();
    assert_eq!(eval(&pack, "x").score, Some(1.0));
    let err = load("limits.timeout=5").unwrap_err().to_string();
    assert!(
        err.contains("--set limits.timeout=5: unknown limit `timeout`"),
        "{err}"
    );
    assert!(err.contains("did you mean `timeout_ms`?"), "{err}");
    let err = load("limits.timeout_ms=-1").unwrap_err().to_string();
    assert!(
        err.contains("limits.timeout_ms must be a whole number ≥ 0, got -1"),
        "{err}"
    );
    // Checked in a pack without scripts too (the guide: "in both places").
    let plain = tempfile::tempdir().unwrap();
    write(
        plain.path(),
        "pack.yaml",
        "name: t\npipeline:\n  metrics: [json_emission]\n",
    );
    let load_plain = |spec: &str| {
        let options = tribunal::LoadOptions {
            overrides: vec![tribunal::Override::parse(spec, plain.path()).unwrap()],
            ..tribunal::LoadOptions::default()
        };
        Pack::load_with(plain.path(), &options)
    };
    assert!(load_plain("limits.timeout_ms=5").is_ok());
    let err = load_plain("limits.timeout=5").unwrap_err().to_string();
    assert!(
        err.contains("--set limits.timeout=5: unknown limit `timeout`"),
        "{err}"
    );
    assert_eq!(err.matches("unknown limit").count(), 1, "{err}");
    let err = load("limits.timeout=5").unwrap_err().to_string();
    assert_eq!(
        err.matches("unknown limit").count(),
        1,
        "reported once: {err}"
    );
}

#[test]
fn top_level_expression_depth_is_limited_at_load() {
    let nested = format!(
        "let x = {}1{};\nfn evaluate(ctx) {{ 1 }}",
        "(".repeat(8),
        ")".repeat(8)
    );
    let (err, _dir) = load_error("metric", &nested, "limits: { max_expr_depth: 4 }\n");
    assert!(
        err.contains("script `m`: Expression exceeds maximum complexity"),
        "{err}"
    );
}

/// The issue's bad-input list through the real binary: each record errors with the
/// reason, and the run goes on (exit 1: some records could not be evaluated).
#[test]
fn cli_reports_every_kind_of_runtime_failure_per_record() {
    let cases = [
        (
            "loop {}",
            "exceeded the 1,000,000 operation limit (limits.max_operations)",
        ),
        (
            "down(0)",
            "exceeded the call depth limit of 32 (limits.max_call_depth)",
        ),
        (
            "let s = \"\"; s.pad(1_000_000_000, 'x'); 1",
            "Length of string exceeded the limit of 16,777,216 (limits.max_string_size)",
        ),
        (
            "let a = []; a.pad(1_000_000, 0); 1",
            "Size of array/BLOB exceeded the limit of 100,000 (limits.max_array_size)",
        ),
        (
            "let m = #{}; for i in 0..5000 { m[`k${i}`] = i; } m.len()",
            "Size of object map exceeded the limit of 1,000 (limits.max_map_size)",
        ),
        ("no_such_fn(1)", "Function not found: no_such_fn (i64)"),
        (
            "regex_test(\"x\", \"(\")",
            "regex_test(): invalid regex `(`: regex parse error: ( ^ error: unclosed group",
        ),
        ("throw \"bad\"", "script threw: bad"),
        ("sleep(3600)", "sleep(): not available to scripts"),
        ("sleep(0.5)", "sleep(): not available to scripts"),
        ("return 2;", "the score 2 is outside [0, 1]"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut script = String::from("fn down(n) { down(n + 1) }\nfn evaluate(ctx) {\n");
    for (i, (body, _)) in cases.iter().enumerate() {
        writeln!(script, "    if ctx.output == \"{i}\" {{ {body} }}").unwrap();
    }
    script.push_str("    1\n}\n");
    script_pack(
        dir.path(),
        "metric",
        &script,
        "limits: { max_operations: 1000000, timeout_ms: 0, max_map_size: 1000 }\n",
    )
    .unwrap();
    let mut data = String::new();
    for i in 0..cases.len() {
        writeln!(data, "{{\"id\": {i}, \"output\": \"{i}\"}}").unwrap();
        writeln!(data, "{{\"id\": \"ok{i}\", \"output\": \"fine\"}}").unwrap();
    }
    write(dir.path(), "data.jsonl", &data);
    let out = tribunal_cmd()
        .args(["eval", "--pack"])
        .arg(dir.path())
        .arg("--input")
        .arg(dir.path().join("data.jsonl"))
        .args(host_set_args(
            "limits: { max_operations: 1000000, timeout_ms: 0, max_map_size: 1000 }\n",
        ))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cases.len() * 2);
    for (i, (_, reason)) in cases.iter().enumerate() {
        let bad = &lines[2 * i];
        assert_eq!(bad["status"], "ERROR", "{bad}");
        let error = bad["error"].as_str().unwrap();
        assert!(error.starts_with("metric `m`: script `m`"), "{error}");
        assert!(error.ends_with(reason), "{error}\n  expected: {reason}");
        assert_eq!(
            lines[2 * i + 1]["status"],
            "PASS",
            "the next record is fine"
        );
    }
}

#[test]
fn a_one_line_inline_script_reports_the_column_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation: { inline: \"fn evaluate(ctx) { nope }\" }\n",
    );
    write(
        dir.path(),
        "pack.yaml",
        "name: t\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n",
    );
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "error: {}:3:47: script `m`: Undefined variable: nope",
            dir.path().join("m.yaml").display()
        )
    );
}

#[test]
fn cli_a_script_holding_many_values_within_the_size_limits_hits_the_memory_limit() {
    // Each string is within max_string_size and the array within max_array_size,
    // but together they take 160 MB and could take gigabytes: Rhai checks only the new element on an
    // index assignment. The binary's counting allocator holds the whole call to
    // limits.max_memory (64 MiB by default).
    let dir = tempfile::tempdir().unwrap();
    script_pack(
        dir.path(),
        "metric",
        r#"fn evaluate(ctx) {
               if ctx.output != "hog" { return 1; }
               let a = [];
               a.pad(20, "");
               let s = "x";
               while s.len() < 8000000 { s += s; }
               for i in 0..20 { a[i] = s + i; }
               1
           }"#,
        "limits: { max_operations: 0, timeout_ms: 30000 }\n",
    )
    .unwrap();
    write(
        dir.path(),
        "data.jsonl",
        "{\"id\": 1, \"output\": \"fine\"}\n{\"id\": 2, \"output\": \"hog\"}\n{\"id\": 3, \"output\": \"fine\"}\n",
    );
    let eval = |extra: &[&str]| -> Vec<Value> {
        let out = tribunal_cmd()
            .args(["eval", "--jobs", "2", "--pack"])
            .arg(dir.path())
            .arg("--input")
            .arg(dir.path().join("data.jsonl"))
            .args(host_set_args(
                "limits: { max_operations: 0, timeout_ms: 30000 }\n",
            ))
            .args(extra)
            .assert()
            .get_output()
            .clone();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let lines = eval(&[]);
    assert_eq!(lines.len(), 3, "one result per record");
    assert_eq!(lines[0]["status"], "PASS");
    assert_eq!(lines[1]["status"], "ERROR");
    let reason = lines[1]["error"].as_str().unwrap();
    assert!(
        reason.ends_with("used more than 67,108,864 bytes of memory (limits.max_memory)"),
        "{reason}"
    );
    assert_eq!(lines[2]["status"], "PASS");
    // The limit is a pack/run setting like the others; 0 turns it off. A higher
    // one that the script stays under lets the record pass.
    let lines = eval(&["--set", "limits.max_memory=1000000000"]);
    assert_eq!(lines[1]["status"], "PASS", "{}", lines[1]);
}

#[test]
fn a_backtick_inside_a_backtick_string_is_shown_at_the_string_with_the_escape() {
    for line in [
        "    let m = `use `json` here`;",
        "    let m = `field `${f}` is missing`;",
    ] {
        let script = format!("fn evaluate(ctx) {{\n{line}\n    1\n}}");
        let (err, dir) = load_error("metric", &script, "");
        let at = format!("{}:2:13: script `m`: ", dir.path().join("m.rhai").display());
        assert!(err.starts_with(&format!("error: {at}")), "{err}");
        assert!(
            err.contains(
                "help: a backtick ends a `...` string: write a backtick inside one as two (``)"
            ),
            "{err}"
        );
    }
    // Written as the guide says, the same text loads and is the message.
    let pack = metric("fn evaluate(ctx) {\n    #{ score: 1.0, issues: [`use ``json`` here`] }\n}");
    let report = eval(&pack, "x");
    assert_eq!(report.issues[0].message, "use `json` here");
    // Other syntax errors keep their own position and no such help.
    let (err, _dir) = load_error(
        "metric",
        "fn evaluate(ctx) {\n    let x = `a` + ;\n    1\n}",
        "",
    );
    assert!(!err.contains("help: a backtick"), "{err}");
}

#[test]
fn a_scripts_config_is_checked_against_its_declared_defaults() {
    // A metric `m` whose manifest ends with `declared`, used `with:` `config`.
    let load = |declared: &str, config: &str| {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "m.rhai", "fn evaluate(ctx) { 1.0 }");
        write(
            dir.path(),
            "m.yaml",
            &format!("kind: metric\nname: m\nimplementation: {{ script: m.rhai }}\n{declared}"),
        );
        write(
            dir.path(),
            "pack.yaml",
            &format!("name: t\ncomponents: [m.yaml]\npipeline:\n  metrics:\n    - use: m\n      with: {config}\n"),
        );
        Pack::load(dir.path())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let with = |config: &str| load("config: { factor: 2, words: [a, b], note: null }\n", config);
    assert_eq!(with("{ factor: 3, words: [c], note: anything }"), Ok(()));
    let err = with("{ factr: 3 }").unwrap_err();
    assert!(
        err.contains("pack.yaml:6:15: m: invalid config: unknown key `factr`; the script takes: `factor`, `words`, `note`"),
        "{err}"
    );
    assert!(err.contains("help: did you mean `factor`?"), "{err}");
    let err = with("{ factor: \"3\" }").unwrap_err();
    assert!(
        err.contains("m: invalid config: `factor` must be a number (as its default 2 in the manifest), got a string: \"3\""),
        "{err}"
    );
    // A manifest without `config:` takes none.
    let err = load("", "{ limit: 3 }").unwrap_err();
    assert!(
        err.contains(
            "m: invalid config: unknown key `limit`: the script's manifest declares no `config:`"
        ),
        "{err}"
    );
}

#[test]
fn a_scripts_config_schema_is_checked_instead_of_its_defaults_types() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.rhai", "fn evaluate(ctx) { 1.0 }");
    let load = |manifest_tail: &str, config: &str| {
        write(
            dir.path(),
            "m.yaml",
            &format!(
                "kind: metric\nname: m\nimplementation: {{ script: m.rhai }}\n{manifest_tail}"
            ),
        );
        write(
            dir.path(),
            "pack.yaml",
            &format!("name: t\ncomponents: [m.yaml]\npipeline:\n  metrics:\n    - use: m\n      with: {config}\n"),
        );
        Pack::load(dir.path())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let schema = "config: { today: \"2026-01-01\" }\nconfig_schema:\n  type: object\n  additionalProperties: false\n  properties:\n    today: { type: string, pattern: \"^[0-9]{4}-[0-9]{2}-[0-9]{2}$\" }\n";
    assert_eq!(load(schema, "{ today: \"2026-12-05\" }"), Ok(()));
    let err = load(schema, "{ tday: \"2026-12-05\" }").unwrap_err();
    assert!(
        err.contains("m: invalid config: unknown key `tday`; the script takes: `today`")
            && err.contains("help: did you mean `today`?"),
        "{err}"
    );
    let err = load(schema, "{ today: 20261205 }").unwrap_err();
    assert!(
        err.contains("pack.yaml:6:") && err.contains("m: invalid config at `/today`: 20261205 is not of type \"string\" (the manifest's config_schema)"),
        "{err}"
    );
    let err = load(schema, "{ today: \"5 Dec\" }").unwrap_err();
    assert!(
        err.contains("invalid config at `/today`: \"5 Dec\" does not match"),
        "{err}"
    );
    // A schema the validator cannot compile is a load error at `config_schema`.
    let err = load("config_schema: { type: 12 }\n", "{}").unwrap_err();
    assert!(
        err.contains("m.yaml:4:1: `config_schema` is not a usable JSON Schema"),
        "{err}"
    );
    // `config_schema` is a script's: a built-in declares its own config.
    write(
        dir.path(),
        "m.yaml",
        "kind: metric\nname: m\nimplementation: { builtin: json_emission }\nconfig_schema: { type: object }\n",
    );
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("`config_schema` declares a script's config"),
        "{err}"
    );
}
