//! What grading function calls costs with built-ins only (issue 61): the
//! example pack `examples/packs/function-calling` judging parallel calls
//! (three calls, the output a JSON list, in any order) against the expected
//! calls, on one core.
//!
//! Four configurations of the same records: expected values written plainly
//! or as `any_of` lists of three accepted spellings (the one made last), and
//! arguments compared with EXACT or NORMALIZED. Prints µs per record and the
//! ratio of each to the first (plain, EXACT): the promise is at most 30 µs per
//! record, and `any_of` and NORMALIZED adding at most 20%.
//!
//! Run with `cargo bench --bench function_calling`.

#[path = "support/timing.rs"]
mod timing;

use serde_json::{json, Value};
use timing::time;
use tribunal::{Input, LoadOptions, Override, Pack};

const CITIES: [[&str; 3]; 4] = [
    ["NY", "New York, NY", "New York"],
    ["SF", "San Francisco, CA", "San Francisco"],
    ["LA", "Los Angeles, CA", "Los Angeles"],
    ["OSL", "Oslo, Norway", "Oslo"],
];

/// Record `i`: three calls made in reverse order of the expected ones.
fn record(i: usize, any_of: bool) -> Input {
    let city = CITIES[i % CITIES.len()];
    let people = 2 + i % 6;
    let output = json!([
        {"name": "convert_currency", "arguments": {"amount": 10.5, "from": "USD", "to": "EUR"}},
        {"name": "book_table", "arguments": {"restaurant": "Nopa", "people": people, "time": "19:30"}},
        {"name": "get_weather", "arguments": {"city": city[2], "unit": "celsius"}},
    ]);
    let (want_city, want_unit): (Value, Value) = if any_of {
        (
            json!({"any_of": city}),
            json!({"optional": {"any_of": ["fahrenheit", "kelvin", "celsius"]}}),
        )
    } else {
        (json!(city[2]), json!("celsius"))
    };
    let expected = json!({"tool_calls": [
        {"name": "get_weather", "arguments": {"city": want_city, "unit": want_unit}},
        {"name": "book_table", "arguments": {"restaurant": "Nopa", "people": people, "time": "19:30"}},
        {"name": "convert_currency", "arguments": {"amount": 10.5, "from": "USD", "to": "EUR"}},
    ]});
    Input::new(output.to_string()).with_expected(expected)
}

fn pack(strategy: &str) -> Pack {
    let options = LoadOptions {
        overrides: vec![
            Override::new("tool_calls.argument_strategies", json!({"*": strategy})).unwrap(),
        ],
        ..LoadOptions::default()
    };
    Pack::load_with("examples/packs/function-calling", &options).unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let n = 2000;
    let configurations = [
        ("plain values, EXACT", "EXACT", false),
        ("any_of, EXACT", "EXACT", true),
        ("plain values, NORMALIZED", "NORMALIZED", false),
        ("any_of, NORMALIZED", "NORMALIZED", true),
    ];
    let runs: Vec<(Pack, Vec<Input>)> = configurations
        .iter()
        .map(|&(label, strategy, any_of)| {
            let pack = pack(strategy);
            let records: Vec<Input> = (0..64).map(|i| record(i, any_of)).collect();
            for input in &records {
                let report = pack.evaluate(input);
                assert!(report.passed(), "{label}: {:?}", report.issues);
            }
            (pack, records)
        })
        .collect();
    // Rounds alternate the configurations, so that the machine's drift hits
    // each alike; the best round of each is its figure.
    let mut best = vec![f64::INFINITY; runs.len()];
    for _ in 0..9 {
        for ((pack, records), best) in runs.iter().zip(&mut best) {
            let mut next = 0;
            let per = time(1, n, || {
                std::hint::black_box(pack.evaluate(&records[next % records.len()]));
                next += 1;
            });
            *best = best.min(per.as_secs_f64() * 1e6);
        }
    }
    println!(
        "function calling, 3 parallel calls per record, one core (best of 9 alternating rounds)"
    );
    println!(
        "{:<28} {:>12} {:>10}",
        "configuration", "µs/record", "× plain"
    );
    for ((label, ..), micros) in configurations.iter().zip(&best) {
        println!("{label:<28} {micros:>12.2} {:>10.2}", micros / best[0]);
    }
}
