//! The repair tier's promises, as the fuzz targets and the property tests
//! check them: kinds of damage models do to JSON, and what repairing the
//! damaged text may and may not give.

use serde_json::Value;

use super::ladder;
use crate::extract::{self, Tier};

/// Values equal as JSON, numbers by value (`1.0` equals `1`), members in any
/// order: [`crate::decimal::equal_json`].
pub fn same_json(a: &Value, b: &Value) -> bool {
    crate::decimal::equal_json(a, b)
}

/// Whether `part` is what `whole`, cut somewhere and closed, repairs to: equal
/// but for its last element or member, itself such a cut (or a string's start).
/// A document that repeats itself (`[[[[[]]]]]` cut to `[[[[`) closes to a value
/// equal to one inside it, which is still the whole, repaired.
fn is_cut_of(part: &Value, whole: &Value) -> bool {
    match (part, whole) {
        (Value::String(part), Value::String(whole)) => whole.starts_with(part.as_str()),
        (Value::Array(part), Value::Array(whole)) => match part.split_last() {
            None => true,
            Some((last, before)) => {
                part.len() <= whole.len()
                    && before.iter().zip(whole).all(|(a, b)| same_json(a, b))
                    && is_cut_of(last, &whole[before.len()])
            }
        },
        (Value::Object(part), Value::Object(whole)) => {
            let mut cut = 0;
            part.iter().all(|(key, value)| match whole.get(key) {
                Some(full) if same_json(value, full) => true,
                Some(full) if is_cut_of(value, full) => {
                    cut += 1;
                    cut == 1
                }
                _ => false,
            })
        }
        _ => same_json(part, whole),
    }
}

/// Whether `found` is a strict sub-value of `whole`: equal to an object or array
/// inside it, at any depth, while differing from `whole` itself (a part reported
/// as the whole).
pub fn is_inner_value(found: &Value, whole: &Value) -> bool {
    if same_json(found, whole) {
        return false;
    }
    let mut stack: Vec<&Value> = match whole {
        Value::Array(items) => items.iter().collect(),
        Value::Object(members) => members.values().collect(),
        _ => Vec::new(),
    };
    while let Some(value) = stack.pop() {
        if (value.is_object() || value.is_array()) && same_json(found, value) {
            return true;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    false
}

/// The kinds of single damage [`damage`] applies to a document's text, as the
/// property test and the extraction target name them.
pub const DAMAGES: [&str; 8] = [
    "dropped",
    "doubled",
    "stray",
    "truncated",
    "unquoted_word",
    "doubled_quote",
    "dropped_closer",
    "unclosed_string",
];

/// The characters a `stray` damage inserts.
const STRAY: [char; 16] = [
    'x', '"', '\'', ',', ':', '{', '}', '[', ']', '\\', ' ', '#', '/', '.', '\n', 'é',
];

/// `text` with one damage of the kind `DAMAGES[kind]`, at the place `at` picks
/// (taken modulo the places there are; `pick` chooses a stray character): a
/// character dropped, doubled or inserted, the text cut, a string's quotes
/// dropped (an unquoted word: one without brackets, quotes, commas, colons or
/// escapes), a quote doubled after a string, a `}` or `]`
/// dropped, or a string's closing quote dropped. `None` when the text has no
/// place for that damage.
pub fn damage(text: &str, kind: usize, at: usize, pick: usize) -> Option<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    // The byte ranges of the strings (quotes included), read as JSON does.
    let mut strings = Vec::new();
    let mut open: Option<usize> = None;
    let mut escaped = false;
    for &(i, c) in &chars {
        match (open, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(start), '"') => {
                strings.push((start, i + 1));
                open = None;
            }
            (None, '"') => open = Some(i),
            _ => {}
        }
    }
    let in_string = |i: usize| strings.iter().any(|&(s, e)| s <= i && i < e);
    let closers: Vec<usize> = chars
        .iter()
        .filter(|&&(i, c)| matches!(c, '}' | ']') && !in_string(i))
        .map(|&(i, _)| i)
        .collect();
    let nth = |n: usize| at % n.max(1);
    let mut out = String::with_capacity(text.len() + 4);
    match DAMAGES[kind % DAMAGES.len()] {
        "dropped" | "doubled" | "stray" | "truncated" if chars.is_empty() => return None,
        "dropped" => {
            let (i, c) = chars[nth(chars.len())];
            out.push_str(&text[..i]);
            out.push_str(&text[i + c.len_utf8()..]);
        }
        "doubled" => {
            let (i, c) = chars[nth(chars.len())];
            out.push_str(&text[..i]);
            out.push(c);
            out.push_str(&text[i..]);
        }
        "stray" => {
            let i = chars
                .get(nth(chars.len() + 1))
                .map_or(text.len(), |&(i, _)| i);
            out.push_str(&text[..i]);
            out.push(STRAY[pick % STRAY.len()]);
            out.push_str(&text[i..]);
        }
        "truncated" => {
            let (i, _) = chars[nth(chars.len())];
            out.push_str(&text[..i]);
        }
        "unquoted_word" | "doubled_quote" | "unclosed_string" if strings.is_empty() => {
            return None;
        }
        "unquoted_word" => {
            // A word: what a model writes bare. A string holding a bracket, a
            // quote, a comma, a colon or an escape, unquoted, is no longer one
            // document (`"a}b"` bare closes what it is in), whatever reads it.
            let words: Vec<(usize, usize)> = strings
                .iter()
                .copied()
                .filter(|&(s, e)| {
                    e - s > 2
                        && !text[s + 1..e - 1].contains(['{', '}', '[', ']', '"', ',', ':', '\\'])
                })
                .collect();
            if words.is_empty() {
                return None;
            }
            let (s, e) = words[nth(words.len())];
            out.push_str(&text[..s]);
            out.push_str(&text[s + 1..e - 1]);
            out.push_str(&text[e..]);
        }
        "doubled_quote" => {
            let (_, e) = strings[nth(strings.len())];
            out.push_str(&text[..e]);
            out.push('"');
            out.push_str(&text[e..]);
        }
        "unclosed_string" => {
            let (_, e) = strings[nth(strings.len())];
            out.push_str(&text[..e - 1]);
            out.push_str(&text[e..]);
        }
        _ => {
            if closers.is_empty() {
                return None;
            }
            let i = closers[nth(closers.len())];
            out.push_str(&text[..i]);
            out.push_str(&text[i + 1..]);
        }
    }
    Some(out)
}

/// A promise of the extraction ladder broken ([`no_inner_value`],
/// [`lists_its_repairs`]): which tier found what, in which text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BrokenPromise(pub String);

/// The promise of the extraction ladder for a damaged document: whatever any tier,
/// and the default ladder, finds in `damaged` (with `multiple_values` first, last
/// or all) is never a strict sub-value of `whole`, the document before the damage,
/// nor, for several documents joined, any one of them. Two kinds of value are
/// taken for repairs of the whole even when they equal an inner value: an empty
/// object or array (a document cut at its start repairs to one), and a value
/// that starts as the whole does. `Err` says which tier found
/// which inner value.
pub fn no_inner_value(whole: &Value, damaged: &str) -> Result<(), BrokenPromise> {
    const LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];
    let ladders: [&[Tier]; 5] = [
        &LADDER,
        &[Tier::Strict],
        &[Tier::Fence],
        &[Tier::Embedded],
        &[Tier::Repair],
    ];
    for tiers in ladders {
        for multiple in [
            extract::MultipleValues::First,
            extract::MultipleValues::Last,
            extract::MultipleValues::All,
        ] {
            let Some((found, tier, repairs)) = ladder(damaged, tiers, multiple) else {
                continue;
            };
            let joined = multiple == extract::MultipleValues::All
                && repairs.contains(&extract::Repair::MultipleValues);
            let parts = match &found {
                Value::Array(items) if joined => items.iter().collect(),
                _ => vec![&found],
            };
            // An empty object or array is what a document cut or closed at its
            // start repairs to (`[` is `[]`), whatever empty values it holds.
            let empty = |part: &Value| match part {
                Value::Array(items) => items.is_empty(),
                Value::Object(members) => members.is_empty(),
                _ => false,
            };
            // A value that starts as the whole does (its first member's key, or
            // its first element) is taken for a repair of the whole, which may
            // equal an inner value of a document that repeats itself
            // (`{"": {"": 1}}` cut to `{"": {"": 1`).
            let starts_like_whole = |part: &Value| match (part, whole) {
                (Value::Object(part), Value::Object(whole)) => {
                    part.keys().next() == whole.keys().next()
                }
                (Value::Array(part), Value::Array(whole)) => match (part.first(), whole.first()) {
                    (Some(a), Some(b)) => same_json(a, b),
                    _ => false,
                },
                _ => false,
            };
            if let Some(part) = parts.iter().find(|part| {
                !empty(part)
                    && !starts_like_whole(part)
                    && !is_cut_of(part, whole)
                    && is_inner_value(part, whole)
            }) {
                return Err(BrokenPromise(format!(
                    "{tier} ({multiple:?}, repairs {repairs:?}) found the inner value {part} \
                     in {damaged:?}"
                )));
            }
        }
    }
    Ok(())
}

/// The repair tier's promise to say what it did: whatever it finds in `text`, alone
/// or as the default ladder's last tier (with `multiple_values` first, last or all),
/// lists at least one repair unless it is what the strict tier reads from `text`
/// (an unlisted repair otherwise). `Err` says which ladder found what.
pub fn lists_its_repairs(text: &str) -> Result<(), BrokenPromise> {
    const LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];
    for tiers in [&LADDER[..], &[Tier::Repair]] {
        for multiple in [
            extract::MultipleValues::First,
            extract::MultipleValues::Last,
            extract::MultipleValues::All,
        ] {
            let Some((found, Tier::Repair, repairs)) = ladder(text, tiers, multiple) else {
                continue;
            };
            let strict = ladder(text, &[Tier::Strict], multiple);
            if repairs.is_empty() && !strict.is_some_and(|(read, _, _)| same_json(&read, &found)) {
                return Err(BrokenPromise(format!(
                    "{tiers:?} ({multiple:?}) found {found} in {text:?} and listed no repair"
                )));
            }
        }
    }
    Ok(())
}
