//! The library API: loading, sharing across threads, revisions, batches.

use std::fs;
use std::path::Path;

use serde_json::json;
use tribunal::{Input, LoadOptions, Override, Pack, Status};

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
                    assert_eq!(report.status, Status::Pass);
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
        seen.push((report.id.clone(), report.passed));
    });
    assert_eq!(seen.len(), 2_000);
    for (i, (id, passed)) in seen.iter().enumerate() {
        assert_eq!(*id, json!(i));
        assert_eq!(*passed, i % 2 == 0);
    }
}
