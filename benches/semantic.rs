//! Throughput of the `semantic` strategy in field pairs per second.
//!
//! Run with `cargo bench --bench semantic` after `scripts/setup` (set
//! `TRIBUNAL_BENCH_PAIRS` to change the number of pairs, default 512). Every
//! record is one json-eval record whose `description` field is compared, and
//! every text is distinct (a suffix per row), so each row starts with a cold
//! embedding cache unless said so. Prints, with the same records compared FUZZY
//! (Levenshtein) as the baseline measured in the same run:
//!
//! - single: `Pack::evaluate` one record at a time (each pair embedded on its own);
//! - batched: `Pack::evaluate_many` over all records (the metric's prepare hook
//!   embeds every text at once, grouped by token length, 64 a pass);
//! - `jsonl::run` (what `tribunal eval` runs), 1 and 2 jobs, cold cache; then the
//!   same records again (every embedding cached).

use std::io::{self, Cursor};
use std::path::Path;
use std::time::Instant;

use serde_json::json;
use tribunal::jsonl::{self, Options};
use tribunal::{Input, LoadOptions, Override, Pack};

const SUBJECTS: [&str; 8] = [
    "The customer",
    "Our senior engineer",
    "A small bakery in Lisbon",
    "The logistics team",
    "My neighbour's daughter",
    "The wholesale distributor",
    "Every new subscriber",
    "The support agent on duty",
];
const VERBS: [&str; 8] = [
    "asked for",
    "complained about",
    "was delighted with",
    "needs help with",
    "reported a problem with",
    "wants to cancel",
    "recommended",
    "is waiting for",
];
const OBJECTS: [&str; 8] = [
    "the yearly billing plan",
    "a refund for the damaged kitchen equipment",
    "the delivery that arrived two days late",
    "the new mobile app and its offline mode",
    "an invoice with the wrong address",
    "the onboarding call scheduled for Monday morning",
    "a replacement part",
    "faster shipping to the islands",
];

/// `n` distinct (expected, actual) text pairs of varied length.
fn pairs(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let (s, v, o) = (i % 8, (i / 8) % 8, (i / 64) % 8);
            let round = i / 512;
            let gt = format!("{} {} {} (case {i}).", SUBJECTS[s], VERBS[v], OBJECTS[o]);
            let aio = format!(
                "{} {} {}, ticket {}{}.",
                SUBJECTS[(s + 1) % 8],
                VERBS[v],
                OBJECTS[(o + round) % 8],
                i * 7,
                " again".repeat(i % 3)
            );
            (gt, aio)
        })
        .collect()
}

fn best_of<F: FnMut() -> f64>(runs: usize, mut f: F) -> f64 {
    (0..runs).map(|_| f()).fold(0.0, f64::max)
}

fn per_second(count: usize, started: Instant) -> f64 {
    count as f64 / started.elapsed().as_secs_f64()
}

/// json-eval comparing `description` with `strategy`.
fn pack(strategy: &str) -> Pack {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let set = format!("json_compare.field_strategies={{description: {strategy}}}");
    let options = LoadOptions {
        overrides: vec![Override::parse(&set, root).expect("a valid override")],
        ..LoadOptions::default()
    };
    Pack::load_with(root.join("rules/json-eval"), &options).expect("json-eval loads")
}

/// One record per pair, its texts marked with `tag` (distinct texts per row).
fn inputs(pairs: &[(String, String)], tag: &str) -> Vec<Input> {
    pairs
        .iter()
        .enumerate()
        .map(|(i, (gt, aio))| {
            Input::new(json!({ "description": format!("{aio} [{tag}]") }).to_string())
                .with_id(i)
                .with_expected(json!({ "description": format!("{gt} [{tag}]") }))
        })
        .collect()
}

fn main() {
    let n: usize = std::env::var("TRIBUNAL_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let pairs = pairs(n);
    let (fuzzy, semantic) = (pack("FUZZY"), pack("SEMANTIC"));
    println!("semantic: {n} distinct field pairs, json-eval records, one field each");

    let records = inputs(&pairs, "fuzzy");
    let base = best_of(3, || {
        let started = Instant::now();
        for input in &records {
            std::hint::black_box(fuzzy.evaluate(input));
        }
        per_second(pairs.len(), started)
    });
    println!("  baseline FUZZY (Levenshtein)      {base:>12.0} pairs/s  1.00x");

    // Warm the model up (loading it is not what is measured).
    std::hint::black_box(semantic.evaluate(&inputs(&pairs[..1], "load")[0]));
    let mut round = 0;
    let single = best_of(2, || {
        round += 1;
        let records = inputs(&pairs, &format!("single {round}"));
        let started = Instant::now();
        for input in &records {
            std::hint::black_box(semantic.evaluate(input));
        }
        per_second(pairs.len(), started)
    });
    println!(
        "  SEMANTIC single pair              {single:>12.1} pairs/s  {:.5}x of baseline",
        single / base
    );

    let batched = best_of(2, || {
        round += 1;
        let records = inputs(&pairs, &format!("batched {round}"));
        let started = Instant::now();
        std::hint::black_box(semantic.evaluate_many(&records));
        per_second(pairs.len(), started)
    });
    println!(
        "  SEMANTIC batched                  {batched:>12.1} pairs/s  {:.5}x of baseline  ({:.2}x single)",
        batched / base,
        batched / single
    );

    // End to end, through the JSONL runner `tribunal eval` uses.
    for jobs in [1, 2] {
        let mut data = Vec::new();
        for input in inputs(&pairs, &format!("eval {jobs}")) {
            let line =
                json!({ "id": input.id, "output": input.output, "expected": input.expected });
            data.extend_from_slice(line.to_string().as_bytes());
            data.push(b'\n');
        }
        let mut options = Options::default();
        options.jobs = jobs;
        let mut run = || {
            let started = Instant::now();
            let summary = jsonl::run(
                &semantic,
                Cursor::new(&data),
                &mut io::sink(),
                &options,
                |_| {},
            )
            .expect("sink never fails");
            assert_eq!(summary.records as usize, pairs.len());
            per_second(pairs.len(), started)
        };
        let cold = run();
        let warm = best_of(3, &mut run);
        println!(
            "  eval --jobs {jobs} (cold cache)        {cold:>12.1} pairs/s  {:.5}x of baseline  ({:.2}x single)",
            cold / base,
            cold / single
        );
        println!(
            "  eval --jobs {jobs} (all cached)        {warm:>12.1} pairs/s  {:.5}x of baseline",
            warm / base
        );
    }
}
