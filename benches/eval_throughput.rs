//! Throughput of `eval` over a generated data set of 100,000 records.
//!
//! Run with `cargo bench --bench eval_throughput` (set `TRIBUNAL_BENCH_RECORDS`
//! to change the size). Prints records per second for 1 and 2 jobs and, as the
//! baseline measured in the same run, the rate of merely splitting and parsing
//! the JSONL lines (the floor any evaluation sits on).

use std::io::{self, BufRead, Cursor};
use std::path::Path;
use std::time::Instant;

use tribunal::jsonl::{self, Options};
use tribunal::Pack;

fn generate(records: usize) -> Vec<u8> {
    let outputs = [
        r#"{"event": "agent:status", "data": {"status": "ready", "step": 1}}"#,
        r#"Sure! Here it is: {"event": "message:send", "data": {"to": "bob", "body": "hi"}}"#,
        "```json\n{\"event\": \"state:entity:create\", \"data\": {\"id\": \"e1\"}}\n```",
        "I would emit an agent:status event once the build finishes.",
        r#"{"event": "agent:spawn", "data": {'role': 'critic',}}"#,
        "The weather is nice and nothing needs emitting today.",
        r#"{"event": "custom:thing", "data": {"n": 3}"#,
    ];
    let mut data = Vec::with_capacity(records * 120);
    for i in 0..records {
        let output = outputs[i % outputs.len()];
        let line = serde_json::json!({ "id": i, "output": output });
        data.extend_from_slice(line.to_string().as_bytes());
        data.push(b'\n');
    }
    data
}

fn rate(records: usize, seconds: f64) -> f64 {
    records as f64 / seconds
}

fn baseline(data: &[u8]) -> f64 {
    let started = Instant::now();
    let mut parsed = 0usize;
    for line in Cursor::new(data).lines() {
        let value: serde_json::Value =
            serde_json::from_str(&line.expect("in memory")).expect("valid");
        parsed += usize::from(value.is_object());
    }
    rate(parsed, started.elapsed().as_secs_f64())
}

fn run(pack: &Pack, data: &[u8], jobs: usize) -> f64 {
    let mut options = Options::default();
    options.jobs = jobs;
    let started = Instant::now();
    let summary = jsonl::run(pack, Cursor::new(data), &mut io::sink(), &options, |_| {})
        .expect("sink never fails");
    rate(summary.records as usize, started.elapsed().as_secs_f64())
}

fn main() {
    let records: usize = std::env::var("TRIBUNAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let pack_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/ksi-emission");
    let pack = Pack::load(&pack_dir).expect("the shipped pack loads");
    let data = generate(records);
    println!(
        "eval_throughput: {records} records ({} MiB), pack {}",
        data.len() >> 20,
        pack.label()
    );
    let base = baseline(&data);
    println!("  baseline (split + parse JSONL) {base:>12.0} records/s  1.00x");
    for jobs in [1, 2] {
        // Best of three, to dampen noise on a shared machine.
        let best = (0..3).map(|_| run(&pack, &data, jobs)).fold(0.0, f64::max);
        println!(
            "  eval --jobs {jobs}                 {best:>12.0} records/s  {:.2}x of baseline",
            best / base
        );
    }
}
