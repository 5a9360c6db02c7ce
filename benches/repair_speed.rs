//! The repair tier's speed on the repair corpus's inputs (every input
//! `tests/repair_corpus/generate.py` writes), for `benches/repair_speed.py`,
//! which times `json_repair` and `jsonrepair` on the same inputs and prints the
//! ratios:
//!
//!     cargo bench --bench repair_speed -- INPUTS.jsonl [ROUNDS]
//!
//! INPUTS.jsonl holds lines `{"category", "input"}`. Prints one line: the
//! inputs, their bytes, and the best of ROUNDS (default 5) runs over all of
//! them, in microseconds per input (`ladder` with the repair tier alone and
//! `multiple_values: first`, the value built, as a caller gets it).

#[path = "support/timing.rs"]
mod timing;

use tribunal::{MultipleValues, Tier};

fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    let Some(path) = args.next() else {
        eprintln!("usage: cargo bench --bench repair_speed -- INPUTS.jsonl [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let text = std::fs::read_to_string(&path).expect("the inputs file");
    let inputs: Vec<String> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let case: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            case["input"].as_str().expect("an input").to_owned()
        })
        .collect();
    let bytes: usize = inputs.iter().map(String::len).sum();
    let mut repaired = 0;
    let per_pass = timing::time(rounds, 1, || {
        repaired = inputs
            .iter()
            .filter(|input| {
                tribunal::fuzzing::ladder(input, &[Tier::Repair], MultipleValues::First).is_some()
            })
            .count();
    });
    let per_input = per_pass.as_secs_f64() * 1e6 / inputs.len() as f64;
    println!(
        "tribunal repair tier: {} inputs, {bytes} bytes, {repaired} repaired, {per_input:.3} us per input",
        inputs.len()
    );
}
