//! Per-call cost of a plugin metric, measured through packs.
//!
//! Run with `cargo bench --bench plugin_overhead` (set `TRIBUNAL_BENCH_RECORDS`
//! to change the size; default 100,000). It builds the workspace's plugins, then
//! evaluates the same records, one thread, with four packs that differ only in
//! their metric:
//!
//! - baseline: no metric (extraction and scoring only);
//! - no-op plugin metric: the `panics` fixture, which returns 1.0 unless the
//!   output says "panic": its cost is the boundary itself (the context
//!   serialised to JSON, parsed in the plugin, the result serialised, parsed and
//!   checked by the host);
//! - the same no-op metric with `isolation: process`: the boundary plus the
//!   round trip to a helper process over pipes;
//! - the `readability` example plugin on `/text`: the boundary plus real work.
//!
//! Printed: µs per record, the ratio to the baseline and the cost per call, for
//! short and long texts (the context grows with the text).

#[path = "../tests/support/plugin_build.rs"]
mod plugin_build;

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use tribunal::{Input, LoadOptions, Pack, Status};

/// A pack in `dir` whose one metric is `metric` (a manifest body), or none.
fn pack(dir: &Path, metric: Option<&str>) -> Pack {
    std::fs::create_dir_all(dir).expect("a temporary folder");
    let mut yaml = String::from("name: overhead\nversion: 1.0.0\n");
    if let Some(manifest) = metric {
        std::fs::write(dir.join("metric.yaml"), manifest).expect("writable");
        yaml.push_str("components: [metric.yaml]\npipeline:\n  metrics: [measured]\n");
    } else {
        yaml.push_str("pipeline: {}\n");
    }
    std::fs::write(dir.join("pack.yaml"), yaml).expect("writable");
    let options = LoadOptions {
        plugin_dirs: vec![plugin_build::plugin_dir().to_path_buf()],
        allow_plugins: true,
        ..LoadOptions::default()
    };
    Pack::load_with(dir, &options).unwrap_or_else(|err| panic!("{err}"))
}

fn texts(records: usize, sentences_per_text: usize) -> Vec<Input> {
    let sentences = [
        "You owe 1,234.50 euros for the May cloud plan.",
        "Please pay by the first of July.",
        "Notwithstanding considerable organizational complexity, the engagement necessitates reconciliation.",
        "The bill covers three laptops and a docking station.",
        "Late payment adds a fee of two percent per month.",
        "Call us if anything looks wrong.",
    ];
    (0..records)
        .map(|i| {
            let text: Vec<&str> = (0..sentences_per_text)
                .map(|k| sentences[(i + k * 5) % sentences.len()])
                .collect();
            Input::new(json!({ "text": text.join(" "), "total": i }).to_string())
        })
        .collect()
}

/// Seconds to evaluate every record with `pack` (checking that none failed).
fn run(pack: &Pack, records: &[Input]) -> f64 {
    let started = Instant::now();
    for input in records {
        let report = pack.evaluate(input);
        assert_ne!(report.status(), Status::Error, "{:?}", report.error());
        std::hint::black_box(report);
    }
    started.elapsed().as_secs_f64()
}

fn main() {
    let records: usize = std::env::var("TRIBUNAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    // `isolation: process` runs helpers with the tribunal binary Cargo built.
    std::env::set_var("TRIBUNAL_PLUGIN_HOST", env!("CARGO_BIN_EXE_tribunal"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let packs = [
        ("no metric (baseline)", pack(&dir.path().join("none"), None)),
        (
            "no-op plugin metric",
            pack(
                &dir.path().join("noop"),
                Some("kind: metric\nname: measured\nimplementation:\n  plugin: { library: tribunal_fixture_sdk, component: panics }\n"),
            ),
        ),
        (
            "no-op, isolation: process",
            pack(
                &dir.path().join("isolated"),
                Some("kind: metric\nname: measured\nimplementation:\n  plugin: { library: tribunal_fixture_sdk, component: panics, isolation: process }\n"),
            ),
        ),
        (
            "readability plugin metric",
            pack(
                &dir.path().join("readability"),
                Some("kind: metric\nname: measured\nimplementation:\n  plugin: { library: tribunal_readability, component: readability }\nconfig:\n  field: /text\n"),
            ),
        ),
    ];
    println!("plugin_overhead: {records} records per run, best of 3, one thread");
    for (label, sentences) in [
        ("short text (1 sentence)", 1),
        ("long text (40 sentences)", 40),
    ] {
        let data = texts(records, sentences);
        let bytes: usize = data.iter().map(|input| input.output.len()).sum::<usize>() / records;
        let mut best = [f64::INFINITY; 4];
        for _ in 0..3 {
            for (i, (_, pack)) in packs.iter().enumerate() {
                best[i] = best[i].min(run(pack, &data));
            }
        }
        let per = |seconds: f64| seconds * 1e6 / records as f64;
        let base = per(best[0]);
        println!("  {label}, ~{bytes} bytes of output per record:");
        for (i, ((name, _), seconds)) in packs.iter().zip(best).enumerate() {
            let us = per(seconds);
            if i == 0 {
                println!("    {name:<26} {us:>8.2} µs/record  1.00x");
            } else {
                println!(
                    "    {name:<26} {us:>8.2} µs/record  {:.2}x of baseline (+{:.2} µs per call)",
                    us / base,
                    us - base
                );
            }
        }
    }
}
