//! What a Rhai script costs per record, against the equivalent built-in, over the
//! same 100,000 records.
//!
//! Run with `cargo bench --bench script_overhead` (set `TRIBUNAL_BENCH_RECORDS` to
//! change the size). Four packs evaluate the same generated records on one thread:
//!
//! - `extraction only`: no component, the floor every pack sits on;
//! - `built-in required_fields`: five required paths, non-empty;
//! - `script required_fields`: a Rhai postprocessor doing the same checks, with
//!   the same issues (checked on every record before timing);
//! - `script metric 1.0`: `fn evaluate(ctx) { 1.0 }`, the bare cost of a call
//!   (context conversion, call, result validation).
//!
//! Prints records/s and µs per record for each, then the script's overhead per
//! record in µs and the built-in / script throughput ratio.

use std::fs;
use std::io::{self, Cursor};
use std::path::Path;
use std::time::Instant;

use tribunal::jsonl::{self, Options};
use tribunal::{Input, Pack};

const PATHS: &str = "[/sku, /name, /price, /description, /vendor/name]";

const SCRIPT: &str = r#"
// required_fields, non_empty: true, as a script: a Python-falsy value is missing.
fn falsy(v) {
    switch type_of(v) {
        "()" => true,
        "bool" => !v,
        "i64" => v == 0,
        "f64" => v == 0.0,
        "string" => v.is_empty(),
        "array" => v.is_empty(),
        "map" => v.is_empty(),
        _ => false,
    }
}

fn evaluate(ctx) {
    let issues = [];
    // Bound once: `json_pointer(json, ...)` then reads it in place, while
    // `json_pointer(ctx.json, ...)` would copy the document on every call.
    let json = ctx.json;
    for path in ctx.config.paths {
        if falsy(json_pointer(json, path)) {
            issues.push(#{ message: "missing required field `" + path + "`", path: path });
        }
    }
    issues
}
"#;

fn generate(records: usize) -> Vec<u8> {
    let outputs = [
        r#"{"sku": "MUG-001", "name": "Blue Mug", "price": 12.5, "description": "A 350 ml mug.", "vendor": {"name": "Acme"}}"#,
        r#"{"sku": "LMP-220", "name": "", "price": 39.99, "description": "An LED desk lamp.", "vendor": {"name": "Brightly"}}"#,
        "```json\n{\"sku\": \"CHR-015\", \"name\": \"Chair\", \"price\": 0, \"vendor\": {}}\n```",
        r#"Here: {"sku": "BTL-750", "name": "Bottle", "price": 18, "description": "Steel bottle.", "vendor": {"name": "Hydra"}}"#,
        "I would fill in the record later.",
        r#"{"sku": "KBD-104", "name": "Keyboard", "price": 89, "description": null, "vendor": {"name": "Clack"}, "tags": ["a", "b", "c"]}"#,
    ];
    let mut data = Vec::with_capacity(records * 140);
    for i in 0..records {
        let line = serde_json::json!({ "id": i, "output": outputs[i % outputs.len()] });
        data.extend_from_slice(line.to_string().as_bytes());
        data.push(b'\n');
    }
    data
}

fn write_pack(dir: &Path, name: &str, pipeline: &str) -> Pack {
    let folder = dir.join(name);
    fs::create_dir_all(&folder).expect("temp dir");
    fs::write(
        folder.join("script.yaml"),
        "kind: postprocessor\nname: script_required\nimplementation: { script: script.rhai }\n",
    )
    .expect("temp dir");
    fs::write(folder.join("script.rhai"), SCRIPT).expect("temp dir");
    fs::write(
        folder.join("one.yaml"),
        "kind: metric\nname: one\nimplementation: { inline: 'fn evaluate(ctx) { 1.0 }' }\n",
    )
    .expect("temp dir");
    fs::write(
        folder.join("pack.yaml"),
        format!("name: {name}\ncomponents: [script.yaml, one.yaml]\npipeline:\n{pipeline}"),
    )
    .expect("temp dir");
    Pack::load(&folder).unwrap_or_else(|e| panic!("{e}"))
}

/// Seconds for one pass over `data` on one thread (best of three).
fn seconds(pack: &Pack, data: &[u8]) -> f64 {
    let mut options = Options::default();
    options.jobs = 1;
    (0..3)
        .map(|_| {
            let started = Instant::now();
            jsonl::run(pack, Cursor::new(data), &mut io::sink(), &options, |_| {})
                .expect("sink never fails");
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let records: usize = std::env::var("TRIBUNAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let floor = write_pack(dir.path(), "floor", "  postprocessors: []\n");
    let builtin = write_pack(
        dir.path(),
        "builtin",
        &format!(
            "  postprocessors: [ {{ use: required_fields, with: {{ paths: [{}] }} }} ]\n",
            PATHS
                .trim_matches(['[', ']'])
                .split(", ")
                .map(|p| format!("{{ path: \"{p}\", non_empty: true }}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let script = write_pack(
        dir.path(),
        "script",
        &format!("  postprocessors: [ {{ use: script_required, with: {{ paths: {PATHS} }} }} ]\n"),
    );
    let metric = write_pack(dir.path(), "metric", "  metrics: [one]\n");

    // The script must do the same work as the built-in: same issues, every record.
    let data = generate(records);
    for line in data
        .split(|b| *b == b'\n')
        .take(12)
        .filter(|l| !l.is_empty())
    {
        let record: serde_json::Value = serde_json::from_slice(line).expect("generated");
        let input = Input::new(record["output"].as_str().expect("generated"));
        let (a, b) = (builtin.evaluate(&input), script.evaluate(&input));
        let strip = |r: &tribunal::Report| {
            r.issues
                .iter()
                .map(|i| (i.severity, i.message.clone(), i.path.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&a), strip(&b), "same issues for {}", input.output);
        assert!(b.error().is_none(), "{:?}", b.error());
    }

    println!(
        "script_overhead: {records} records ({} MiB), 1 job, best of 3",
        data.len() >> 20
    );
    let rows = [
        ("extraction only", &floor),
        ("built-in required_fields", &builtin),
        ("script required_fields", &script),
        ("script metric 1.0", &metric),
    ];
    let mut micros = Vec::new();
    for (name, pack) in rows {
        let secs = seconds(pack, &data);
        let per = secs * 1e6 / records as f64;
        micros.push(per);
        println!(
            "  {name:<26} {:>10.0} records/s  {per:>7.2} µs/record",
            records as f64 / secs
        );
    }
    let (floor_us, builtin_us, script_us, call_us) = (micros[0], micros[1], micros[2], micros[3]);
    println!(
        "  script vs built-in: +{:.2} µs/record; built-in is {:.2}x the script's throughput",
        script_us - builtin_us,
        script_us / builtin_us
    );
    println!(
        "  component alone (minus extraction): built-in {:.2} µs, script {:.2} µs ({:.1}x); bare script call {:.2} µs",
        builtin_us - floor_us,
        script_us - floor_us,
        (script_us - floor_us) / (builtin_us - floor_us).max(1e-9),
        call_us - floor_us
    );
}
