//! Throughput of the `semantic` strategy in field pairs per second.
//!
//! Run with `cargo bench --bench semantic` after `scripts/setup` (set
//! `TRIBUNAL_BENCH_PAIRS` to change the number of pairs, default 512). Every text
//! is distinct, so the embedding cache does not help unless said so. Prints, with
//! FUZZY (Levenshtein) over the same pairs as the baseline measured in the same run:
//!
//! - single: each pair embedded on its own (two texts per forward pass);
//! - batched: all texts embedded at once (grouped by token length, 64 a pass);
//! - `eval` of json-eval records holding the pairs as SEMANTIC fields, 1 and 2
//!   jobs (the engine's prepare hook batches per input batch), cold cache; then
//!   the same records again (every embedding cached).

use std::io::{self, Cursor};
use std::path::Path;
use std::time::Instant;

use serde_json::json;
use tribunal::eval::{self, EvalOptions};
use tribunal::semantic::{cosine, locate, Embedder};
use tribunal::Pack;

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

fn main() {
    let n: usize = std::env::var("TRIBUNAL_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let dir = locate(None).unwrap_or_else(|why| panic!("{why}"));
    let embedder = Embedder::load(&dir).expect("the model loads");
    let pairs = pairs(n);
    println!(
        "semantic: {n} distinct field pairs, model {}",
        dir.display()
    );

    let base = best_of(3, || {
        let started = Instant::now();
        let mut matched = 0usize;
        for (a, b) in &pairs {
            matched += usize::from(tribunal::text::similarity(a, b) >= 0.85);
        }
        std::hint::black_box(matched);
        per_second(pairs.len(), started)
    });
    println!("  baseline FUZZY (Levenshtein)      {base:>12.0} pairs/s  1.00x");

    let single = best_of(2, || {
        let started = Instant::now();
        for (a, b) in &pairs {
            let e = embedder.embed(&[a, b]).expect("embeds");
            std::hint::black_box(cosine(&e[0], &e[1]));
        }
        per_second(pairs.len(), started)
    });
    println!(
        "  SEMANTIC single pair              {single:>12.1} pairs/s  {:.5}x of baseline",
        single / base
    );

    let batched = best_of(2, || {
        let started = Instant::now();
        let texts: Vec<&str> = pairs
            .iter()
            .flat_map(|(a, b)| [a.as_str(), b.as_str()])
            .collect();
        let e = embedder.embed(&texts).expect("embeds");
        for pair in e.chunks(2) {
            std::hint::black_box(cosine(&pair[0], &pair[1]));
        }
        per_second(pairs.len(), started)
    });
    println!(
        "  SEMANTIC batched                  {batched:>12.1} pairs/s  {:.5}x of baseline  ({:.2}x single)",
        batched / base,
        batched / single
    );

    // End to end: one SEMANTIC field per record, through eval. Each job count
    // gets its own texts (a suffix), so its first run starts with a cold cache.
    let pack_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/json-eval");
    let pack = Pack::load(&pack_dir).expect("json-eval loads");
    for jobs in [1, 2] {
        let mut data = Vec::new();
        for (i, (gt, aio)) in pairs.iter().enumerate() {
            let line = json!({
                "id": i,
                "output": json!({"description": format!("{aio} [{jobs}]")}).to_string(),
                "expected": {"description": format!("{gt} [{jobs}]")},
            });
            data.extend_from_slice(line.to_string().as_bytes());
            data.push(b'\n');
        }
        let options = EvalOptions {
            jobs,
            ..EvalOptions::default()
        };
        let mut run = || {
            let started = Instant::now();
            let summary = eval::run(&pack, Cursor::new(&data), &mut io::sink(), &options, |_| {})
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
