//! The `semantic` strategy in packs, against the real model (all-MiniLM-L6-v2,
//! installed by `scripts/setup` into models/): the seed's walkthrough score, and
//! batched and parallel evaluation equal to records one by one. The model itself
//! (tokens and embeddings against sentence-transformers') is tested beside its
//! code, in `crates/tribunal-semantic/src/model_tests.rs`.

#![allow(clippy::too_many_lines)] // a test reads top to bottom; the 100-line limit is for code

#[path = "../../../tests/support/model.rs"]
mod model;

use std::path::Path;

use model::model_copy;
use serde_json::{json, Value};
use tribunal::{Input, LoadOptions, Override, Pack};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Seed 002's walkthrough with the seed's own config (name FUZZY, bio SEMANTIC).
#[test]
fn seed_walkthrough_scores_0_7375_with_the_real_model() {
    let input = Input::new(
        r#"{"name": "John Smyth", "email": "john@example.com", "bio": "Experienced senior engineer, 10+ years...", "internal_id": "abc123", "extra_field": "surprise"}"#,
    )
    .with_expected(json!({
        "name": "John Smith",
        "email": "john@example.com",
        "bio": "Senior engineer with 10 years of experience...",
        "internal_id": null,
        "status": "active"
    }));
    let overrides = LoadOptions {
        overrides: vec![Override::parse(
            r#"json_compare.field_strategies={"name": "FUZZY", "bio": "SEMANTIC"}"#,
            root(),
        )
        .unwrap()],
        ..LoadOptions::default()
    };
    let seed_config =
        Pack::load_with(root().join("rules/json-eval"), &overrides).expect("loads with --set");
    let report = seed_config.evaluate(&input);
    assert_eq!(report.error(), None);
    let score = report.score.unwrap();
    assert!((score - 0.7375).abs() < 1e-12, "RQS {score}");
    let details = report.metrics["json_compare"].details.to_value();
    assert_eq!(details["accuracy"], 1.0);
    let bio = &details["fields"]["bio"];
    assert_eq!(bio["strategy"], "semantic");
    assert_eq!(bio["matched"], true);
    let similarity = bio["similarity"].as_f64().unwrap();
    assert!((0.80..=1.0).contains(&similarity), "{bio}");
}

/// json-eval with its model in `dir` (an embedding cache of its own).
fn pack_on_model(dir: &Path) -> Pack {
    let options = LoadOptions {
        overrides: vec![
            Override::parse(&format!("json_compare.model={}", dir.display()), root()).unwrap(),
        ],
        ..LoadOptions::default()
    };
    Pack::load_with(root().join("rules/json-eval"), &options).expect("json-eval loads")
}

/// What a report says about the record (the revision differs with `--set`).
fn verdict(report: &tribunal::Report) -> Value {
    let value = report.to_value();
    json!([
        value["id"],
        value["status"],
        value["score"],
        value["metrics"],
        value["issues"],
        value["error"]
    ])
}

/// Many records with SEMANTIC fields, evaluated one by one, as a batch, and on
/// several threads, each on a cold embedding cache of its own (a warm cache
/// would hand every run the same embeddings): every score is the same bits.
#[test]
fn batched_and_parallel_evaluation_give_identical_scores() {
    let notes = [
        "Customer wants a refund",
        "Asked for money back on the order",
        "Shipping address changed",
        "Delivery address was updated",
        "Complained about slow support",
    ];
    let inputs: Vec<Input> = (0..90)
        .map(|i| {
            let gt = notes[i % notes.len()];
            let said = notes[(i * 7 + 1) % notes.len()];
            Input::new(
                json!({"description": said, "summary": format!("{said} #{}", i % 4)}).to_string(),
            )
            .with_id(i)
            .with_expected(json!({"description": gt, "summary": format!("{gt} #{}", i % 3)}))
        })
        .collect();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let packs: Vec<Pack> = dirs
        .iter()
        .map(|d| pack_on_model(&model_copy(d.path())))
        .collect();
    let mut parallel = Vec::new();
    packs[0].evaluate_batch(inputs.clone(), 2, |r| parallel.push(verdict(&r)));
    let batched: Vec<Value> = packs[1]
        .evaluate_many(&inputs)
        .iter()
        .map(verdict)
        .collect();
    let one_by_one: Vec<Value> = inputs
        .iter()
        .map(|i| verdict(&packs[2].evaluate(i)))
        .collect();
    assert_eq!(one_by_one.len(), 90);
    assert!(
        one_by_one.iter().all(|r| r[5].is_null()),
        "{:?}",
        one_by_one[0]
    );
    assert_eq!(one_by_one, parallel);
    assert_eq!(one_by_one, batched);
    let fields = &one_by_one[0][3]["json_compare"]["details"]["fields"];
    assert_eq!(fields["description"]["strategy"], "semantic");
    assert_eq!(
        fields["summary"]["strategy"], "semantic",
        "auto-detected text"
    );
}

/// A pack with a postprocessor that fails on outputs saying "boom" and
/// `json_compare` (`desc` SEMANTIC, other text auto-detected) on the model in `model`.
fn mixed_pack(dir: &Path, model: &Path) -> Pack {
    std::fs::write(
        dir.join("boom.yaml"),
        "kind: postprocessor\nname: boom\nimplementation:\n  inline: |\n    fn evaluate(ctx) {\n      if ctx.output.contains(\"boom\") { throw \"boom\"; }\n      []\n    }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("pack.yaml"),
        format!(
            "name: mixed\nversion: 1.0.0\ncomponents: [boom.yaml]\npipeline:\n  postprocessors: [boom]\n  metrics:\n    - use: json_compare\n      with: {{ field_strategies: {{ desc: SEMANTIC }}, model: {:?} }}\n",
            model.display().to_string()
        ),
    )
    .unwrap();
    // The copy links to the installed model's files, outside the pack: allowed.
    let options = LoadOptions {
        allow_paths: vec![model::model_dir()],
        ..LoadOptions::default()
    };
    Pack::load_with(dir, &options).expect("mixed pack loads")
}

/// Evaluating a batch is evaluating each record, whatever fails where: a
/// postprocessor error, a record without (or with a non-object) ground truth, no
/// JSON, non-string, empty, unicode and over-long texts, duplicates; in any
/// order, on any number of jobs, each on a cold cache of its own.
#[test]
fn a_batch_with_failing_records_equals_records_one_by_one() {
    let long = "The quarterly report covers revenue, costs and hiring. ".repeat(60);
    let cases: Vec<(String, Value)> = vec![
        (
            json!({"desc": "Customer wants a refund"}).to_string(),
            json!({"desc": "Asked for money back"}),
        ),
        ("boom {\"desc\": \"x\"}".to_owned(), json!({"desc": "y"})),
        (json!({"desc": "Refund wanted"}).to_string(), Value::Null),
        (
            json!({"desc": "Refund wanted"}).to_string(),
            json!("not an object"),
        ),
        (
            "no json here".to_owned(),
            json!({"desc": "Asked for money back"}),
        ),
        (
            json!({"desc": 5, "note": true}).to_string(),
            json!({"desc": "five", "note": "yes"}),
        ),
        (
            json!({"desc": "", "note": "   "}).to_string(),
            json!({"desc": "a", "note": "b"}),
        ),
        (
            json!({"desc": "Зустріч перенесли на понеділок 🙂", "note": "会议改到周一"})
                .to_string(),
            json!({"desc": "The meeting moved to Monday", "note": "Meeting moved to Monday"}),
        ),
        (
            json!({"desc": long.clone(), "note": format!("{long} extra")}).to_string(),
            json!({"desc": format!("{long}!"), "note": long}),
        ),
        (
            json!({"desc": "Customer wants a refund"}).to_string(),
            json!({"desc": "Asked for money back"}),
        ),
    ];
    let inputs: Vec<Input> = cases
        .into_iter()
        .enumerate()
        .map(|(i, (output, expected))| Input::new(output).with_id(i).with_expected(expected))
        .collect();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let packs: Vec<Pack> = dirs
        .iter()
        .map(|d| mixed_pack(d.path(), &model_copy(d.path())))
        .collect();
    // Error messages name the pack's folder: the same for every pack.
    let seen = |k: usize| {
        let dir = dirs[k].path().display().to_string();
        move |report: &tribunal::Report| {
            let text = verdict(report).to_string().replace(&dir, "PACK");
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let one_by_one: Vec<Value> = inputs
        .iter()
        .map(|i| seen(0)(&packs[0].evaluate(i)))
        .collect();
    let batched: Vec<Value> = packs[1]
        .evaluate_many(&inputs)
        .iter()
        .map(seen(1))
        .collect();
    let mut reversed_inputs = inputs.clone();
    reversed_inputs.reverse();
    let mut reversed: Vec<Value> = packs[2]
        .evaluate_many(&reversed_inputs)
        .iter()
        .map(seen(2))
        .collect();
    reversed.reverse();
    let mut parallel = Vec::new();
    let in_parallel = seen(3);
    packs[3].evaluate_batch(inputs.clone(), 2, |r| parallel.push(in_parallel(&r)));
    assert!(packs[1].evaluate_many(&[]).is_empty());

    assert_eq!(one_by_one, batched);
    assert_eq!(one_by_one, reversed);
    assert_eq!(one_by_one, parallel);
    let errors: Vec<&str> = one_by_one.iter().filter_map(|v| v[5].as_str()).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("boom"), "{errors:?}");
    assert_eq!(
        one_by_one[0],
        one_by_one[9]
            .as_array()
            .map(|v| {
                let mut v = v.clone();
                v[0] = json!(0);
                Value::Array(v)
            })
            .unwrap()
    );
    let fields = |i: usize| one_by_one[i][3]["json_compare"]["details"]["fields"].clone();
    assert_eq!(fields(5)["desc"]["strategy"], "semantic");
    assert_eq!(
        fields(5)["desc"]["similarity"],
        0.0,
        "5 vs \"five\" is exact"
    );
    assert_eq!(fields(7)["note"]["strategy"], "semantic");
    // Texts beyond the model's 256 tokens are truncated: equal beginnings, equal embeddings.
    assert_eq!(fields(8)["desc"]["similarity"], 1.0);
    assert_eq!(fields(8)["note"]["similarity"], 1.0);
}
