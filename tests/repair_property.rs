//! The extraction ladder's promises, as properties: a damaged document yields a
//! repaired whole or nothing, never one of its inner values as the whole; and what
//! the repair tier finds lists at least one repair unless it is what the strict tier
//! reads (no unlisted repair).
//!
//! Documents are generated here (objects holding objects and arrays of objects,
//! strings holding brackets, quotes, backslashes and non-ASCII text, written
//! compact and pretty), each gets one damage of every kind in
//! `tribunal::fuzzing::DAMAGES` at many places, and every damaged text that no
//! longer parses goes through each tier alone and the default ladder, with
//! `multiple_values` first, last and all.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tribunal::fuzzing::{damage, lists_its_repairs, no_inner_value, DAMAGES};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

const WORDS: [&str; 16] = [
    "id", "name", "tags", "meta", "items", "kind", "text", "score", "address", "city", "alpha",
    "beta", "gamma", "Zoë", "東京", "note",
];

const PIECES: [&str; 14] = [
    "plain",
    "a {brace}",
    "[bracket]",
    "say \"hi\"",
    "back\\slash",
    "Zoë",
    "東京 🌸",
    "}{",
    "][",
    "x, \"y\": 1",
    "it's",
    "a: b",
    "{\"k\": [1]}",
    "  spaced  ",
];

fn string(rng: &mut Rng) -> Value {
    let parts = 1 + rng.below(3);
    let text: Vec<&str> = (0..parts).map(|_| rng.pick(&PIECES)).collect();
    Value::String(text.join(" "))
}

fn scalar(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 | 1 => string(rng),
        2 => Value::from(i64::from(rng.below(10_000) as u32) - 500),
        3 => Value::from((rng.below(1000) as f64) / 8.0),
        4 => Value::Bool(rng.below(2) == 0),
        _ => Value::Null,
    }
}

fn object(rng: &mut Rng, depth: usize) -> Value {
    let mut members = Map::new();
    for _ in 0..=rng.below(4) {
        let key = format!("{}{}", rng.pick(&WORDS), rng.below(100));
        members.insert(key, value(rng, depth + 1));
    }
    Value::Object(members)
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    if depth >= 4 {
        return scalar(rng);
    }
    match rng.below(7) {
        0 | 1 => object(rng, depth),
        // An array of objects.
        2 => Value::Array((0..=rng.below(3)).map(|_| object(rng, depth + 1)).collect()),
        // An array of scalars.
        3 => Value::Array((0..rng.below(4)).map(|_| scalar(rng)).collect()),
        _ => scalar(rng),
    }
}

/// A document: an object with at least one object or array inside it (an inner
/// value to mistake for the whole), or, one time in eight, an array of objects,
/// or one time in sixteen an array of values (arrays among them).
fn document(rng: &mut Rng) -> Value {
    loop {
        let doc = match rng.below(16) {
            // An array of objects.
            0 | 1 => Value::Array((0..=rng.below(3)).map(|_| object(rng, 1)).collect()),
            // An array of arrays.
            2 => Value::Array((0..=rng.below(2)).map(|_| value(rng, 2)).collect()),
            _ => object(rng, 0),
        };
        let nested = match &doc {
            Value::Object(members) => members.values().any(|v| v.is_object() || v.is_array()),
            _ => true,
        };
        if nested {
            return doc;
        }
    }
}

/// How a model wraps a document (`{}` stands for it), for the unlisted-repair check.
const WRAPPERS: [&str; 5] = [
    "Here is the JSON:\n{}",
    "```json\n{}\n```",
    "// the answer\n{}",
    "{}\n}",
    "\u{200b}{} Hope this helps!",
];

#[test]
fn a_damaged_document_never_yields_an_inner_value() {
    const PLACES: usize = 12;
    // PROPERTY_DOCUMENTS=4000 explores ten times as many.
    let documents: usize = std::env::var("PROPERTY_DOCUMENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let mut cases: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut unlisted: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for n in 0..documents {
        let whole = document(&mut rng);
        let text = if n % 2 == 0 {
            serde_json::to_string(&whole).unwrap()
        } else {
            serde_json::to_string_pretty(&whole).unwrap()
        };
        for (kind, name) in DAMAGES.iter().enumerate() {
            for _ in 0..PLACES {
                let (at, pick) = (rng.below(1 << 20), rng.below(64));
                let Some(damaged) = damage(&text, kind, at, pick) else {
                    continue;
                };
                if serde_json::from_str::<Value>(&damaged).is_ok() {
                    continue;
                }
                *cases.entry(name).or_default() += 1;
                if let Err(why) = no_inner_value(&whole, &damaged) {
                    if std::env::var_os("PROPERTY_TRACE").is_some() {
                        eprintln!("{name}: {why}\n  whole: {whole}");
                    }
                    failures.entry(name).or_default().push(why.to_string());
                }
                // Also as models wrap it: after prose, in a code fence, after a
                // comment, or followed by a stray closer.
                let wrapped = WRAPPERS[n % WRAPPERS.len()].replace("{}", &damaged);
                for text in [&damaged, &wrapped] {
                    if let Err(why) = lists_its_repairs(text) {
                        unlisted.entry(name).or_default().push(why.to_string());
                    }
                }
            }
        }
    }
    let total: usize = cases.values().sum();
    eprintln!("inner-value property: {total} damaged documents");
    for (name, count) in &cases {
        let failed = failures.get(name).map_or(0, Vec::len);
        let silent = unlisted.get(name).map_or(0, Vec::len);
        eprintln!("  {name:16} {count:>6} cases, {failed} inner values, {silent} unlisted repairs");
    }
    assert!(total >= 20_000, "only {total} cases");
    let examples: Vec<String> = failures
        .values()
        .flat_map(|list| list.iter().take(3).cloned())
        .collect();
    assert!(
        failures.is_empty(),
        "inner values reported as the whole:\n{}",
        examples.join("\n")
    );
    let examples: Vec<String> = unlisted
        .values()
        .flat_map(|list| list.iter().take(3).cloned())
        .collect();
    assert!(
        unlisted.is_empty(),
        "repair tier results that list no repair:\n{}",
        examples.join("\n")
    );
}
