//! The repair corpus: LLM-style damaged JSON on which two widely used repairers agree
//! (`tests/repair_corpus/corpus.jsonl`, built by `generate.py` and `consensus.py` in
//! that folder), run through the `repair` tier alone and through the default ladder.
//!
//! Both repairers return every document of a text with several, in an array, so
//! every case is read with `multiple_values: all` (a single document stays itself);
//! the default ladder with `first` is shown too, not counted. Prints the agreement per
//! category and overall on stderr: `cargo test --test repair_corpus -- --nocapture`
//! shows it. Fails when the overall agreement of either with `all` is under 97%
//! (categories excluded from the target are listed with their reason), when any
//! result is an inner value of the expected document (a part reported as the whole),
//! in any category, or when a result of the repair tier lists no repair while it is
//! not what the strict tier reads (an unlisted repair).

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
    /// The default ladder with `multiple_values: first`: shown, not counted.
    first: usize,
}

/// What the ladder found, as `tribunal::fuzzing::ladder` returns it.
type Found = Option<(Value, Tier, Vec<tribunal::Repair>)>;

/// Whether `found` came from the repair tier without listing a repair while it is
/// not what the strict tier reads in `input` (so something was repaired unsaid).
fn unlisted(input: &str, found: &Found, multiple: MultipleValues) -> bool {
    let Some((value, Tier::Repair, repairs)) = found else {
        return false;
    };
    let strict = tribunal::fuzzing::ladder(input, &[Tier::Strict], multiple);
    repairs.is_empty() && !strict.is_some_and(|(read, _, _)| same(&read, value))
}

/// Prints the agreement per category and overall (the excluded categories shown, not
/// counted), and returns the overall agreement of the repair tier and of the default
/// ladder, in percent.
fn print_agreement(tallies: &BTreeMap<String, Tally>) -> (f64, f64) {
    let excluded = |category: &str| EXCLUDED.iter().any(|(name, _)| *name == category);
    let mut counted = Tally::default();
    eprintln!(
        "  {:24} {:>5} {:>15} {:>15} {:>15}",
        "category", "cases", "repair tier", "default ladder", "ladder, first"
    );
    let percent = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    for (category, tally) in tallies {
        eprintln!(
            "  {category:24} {:>5} {:>14.1}% {:>14.1}% {:>14.1}%{}",
            tally.cases,
            percent(tally.repair, tally.cases),
            percent(tally.ladder, tally.cases),
            percent(tally.first, tally.cases),
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
            counted.first += tally.first;
        }
    }
    let (repair, ladder) = (
        percent(counted.repair, counted.cases),
        percent(counted.ladder, counted.cases),
    );
    eprintln!(
        "  {:24} {:>5} {repair:>14.1}% {ladder:>14.1}% {:>14.1}%",
        "overall",
        counted.cases,
        percent(counted.first, counted.cases)
    );
    (repair, ladder)
}

#[test]
fn the_repair_tier_agrees_with_the_consensus_of_two_repairers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/repair_corpus/corpus.jsonl");
    let text = fs::read_to_string(&path).expect("the committed repair corpus");
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut inner = Vec::new();
    let mut unlisted_repairs = Vec::new();
    let mut misses = Vec::new();
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let category = case["category"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        let expected = &case["expected"];
        // Both repairers return every document, in an array.
        let all = MultipleValues::All;
        let repaired = tribunal::fuzzing::ladder(input, &[Tier::Repair], all);
        let laddered = tribunal::fuzzing::ladder(input, &LADDER, all);
        let first = tribunal::fuzzing::ladder(input, &LADDER, MultipleValues::First);
        let tally = tallies.entry(category.to_owned()).or_default();
        tally.cases += 1;
        for (found, multiple, count) in [
            (&repaired, all, &mut tally.repair),
            (&laddered, all, &mut tally.ladder),
            (&first, MultipleValues::First, &mut tally.first),
        ] {
            match found {
                Some((value, _, _)) if same(value, expected) => *count += 1,
                // With `first`, the first of several documents is what was asked for.
                Some((value, tier, _)) if multiple == all && is_inner_value(value, expected) => {
                    inner.push(format!(
                        "{category}: {input:?} gave {value} ({tier}, {multiple:?}), expected \
                         {expected}"
                    ));
                }
                _ => {}
            }
            if unlisted(input, found, multiple) {
                unlisted_repairs.push(format!("{category} ({multiple:?}): {input:?}"));
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
    eprintln!(
        "repair corpus agreement, multiple_values: all ({}):",
        path.display()
    );
    let (repair, ladder) = print_agreement(&tallies);
    for (name, why) in EXCLUDED {
        eprintln!("  excluded: {name}: {why}");
    }
    eprintln!(
        "  inner values: {}, unlisted repairs: {}",
        inner.len(),
        unlisted_repairs.len()
    );
    if std::env::var_os("REPAIR_CORPUS_MISSES").is_some() {
        eprintln!("{}", misses.join("\n"));
        eprintln!("unlisted repairs:\n{}", unlisted_repairs.join("\n"));
    }
    assert!(
        inner.is_empty(),
        "inner values reported as the whole:\n{}",
        inner.join("\n")
    );
    assert!(
        unlisted_repairs.is_empty(),
        "repair tier results that list no repair:\n{}",
        unlisted_repairs.join("\n")
    );
    assert!(
        repair >= 97.0,
        "repair tier agreement {repair:.1}% < 97% (REPAIR_CORPUS_MISSES=1 lists the misses)"
    );
    assert!(
        ladder >= 97.0,
        "default ladder agreement {ladder:.1}% < 97%"
    );
}
