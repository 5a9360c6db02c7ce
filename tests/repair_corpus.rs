//! The repair corpus: LLM-style damaged JSON on which two widely used repairers agree
//! (`tests/repair_corpus/corpus.jsonl`, built by `generate.py` and `consensus.py` in
//! that folder), run through the `repair` tier alone and through the default ladder.
//!
//! Prints the agreement per category and overall on stderr: `cargo test --test
//! repair_corpus -- --nocapture` shows it. Fails when the overall agreement of either
//! is under 95% (categories excluded from the target are listed with their reason), or
//! when any result is an inner value of the expected document (a part reported as the
//! whole), in any category.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;
use tribunal::fuzzing::{is_inner_value, same_json as same};
use tribunal::{MultipleValues, Tier};

const LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];

/// Categories not counted toward the target, with why.
const EXCLUDED: [(&str, &str); 1] = [(
    "truncation_in_literal",
    "both repairers turn a cut literal (`tr`, `nul`) into a string (\"tr\"): a guess at \
     prose; the repair tier drops the cut member instead (dropped_incomplete_member)",
)];

#[derive(Default)]
struct Tally {
    cases: usize,
    repair: usize,
    ladder: usize,
}

#[test]
fn the_repair_tier_agrees_with_the_consensus_of_two_repairers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/repair_corpus/corpus.jsonl");
    let text = fs::read_to_string(&path).expect("the committed repair corpus");
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut inner = Vec::new();
    let mut misses = Vec::new();
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let category = case["category"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        let expected = &case["expected"];
        // Both repairers return every document, in an array.
        let multiple = if category == "multiple_values" {
            MultipleValues::All
        } else {
            MultipleValues::First
        };
        let repaired = tribunal::fuzzing::ladder(input, &[Tier::Repair], multiple);
        let laddered = tribunal::fuzzing::ladder(input, &LADDER, multiple);
        let tally = tallies.entry(category.to_owned()).or_default();
        tally.cases += 1;
        for (found, count) in [
            (&repaired, &mut tally.repair),
            (&laddered, &mut tally.ladder),
        ] {
            match found {
                Some((value, _, _)) if same(value, expected) => *count += 1,
                Some((value, tier, _)) if is_inner_value(value, expected) => {
                    inner.push(format!(
                        "{category}: {input:?} gave {value} ({tier}), expected {expected}"
                    ));
                }
                _ => {}
            }
        }
        if !repaired
            .as_ref()
            .is_some_and(|(value, _, _)| same(value, expected))
        {
            misses.push(format!(
                "{category}: {input:?}\n    expected {expected}\n    repair   {}",
                repaired.map_or("nothing".to_owned(), |(value, _, repairs)| format!(
                    "{value} {repairs:?}"
                ))
            ));
        }
    }
    let excluded = |category: &str| EXCLUDED.iter().any(|(name, _)| *name == category);
    let mut counted = Tally::default();
    eprintln!("repair corpus agreement ({}):", path.display());
    eprintln!(
        "  {:24} {:>5} {:>15} {:>15}",
        "category", "cases", "repair tier", "default ladder"
    );
    let percent = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    for (category, tally) in &tallies {
        eprintln!(
            "  {category:24} {:>5} {:>14.1}% {:>14.1}%{}",
            tally.cases,
            percent(tally.repair, tally.cases),
            percent(tally.ladder, tally.cases),
            if excluded(category) {
                "  (excluded from the target)"
            } else {
                ""
            }
        );
        if !excluded(category) {
            counted.cases += tally.cases;
            counted.repair += tally.repair;
            counted.ladder += tally.ladder;
        }
    }
    let (repair, ladder) = (
        percent(counted.repair, counted.cases),
        percent(counted.ladder, counted.cases),
    );
    eprintln!(
        "  {:24} {:>5} {repair:>14.1}% {ladder:>14.1}%",
        "overall", counted.cases
    );
    for (name, why) in EXCLUDED {
        eprintln!("  excluded: {name}: {why}");
    }
    if std::env::var_os("REPAIR_CORPUS_MISSES").is_some() {
        eprintln!("{}", misses.join("\n"));
    }
    assert!(
        inner.is_empty(),
        "inner values reported as the whole:\n{}",
        inner.join("\n")
    );
    assert!(
        repair >= 95.0,
        "repair tier agreement {repair:.1}% < 95% (REPAIR_CORPUS_MISSES=1 lists the misses)"
    );
    assert!(
        ladder >= 95.0,
        "default ladder agreement {ladder:.1}% < 95%"
    );
}
