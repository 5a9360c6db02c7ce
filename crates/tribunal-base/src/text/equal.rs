//! The equalities of values that rules and strategies share: `exact`'s
//! (Python's lower-cased `str`, numbers by value) and `normalized`'s (case,
//! whitespace and a set of characters ignored).

use crate::json::Json;
use crate::text::{python_number, write_python_json, PythonJson};

/// Python's `str(expected).lower() == str(actual).lower()` (JSON with sorted keys for
/// objects and arrays), with the brief's refinement that numerically equal numbers
/// are equal: two numbers compare by value, and inside objects and arrays an
/// integral float is written as the integer (`[2]` equals `[2.0]`).
pub fn exact_match(expected: &Json, actual: &Json) -> bool {
    match (expected, actual) {
        // Numerically equal numbers are equal (2 == 2.0, as the brief says), by
        // their exact value as written: integers however large, decimals
        // however long (`1` ≠ `1.0000000000000000000001`).
        (Json::Number(x), Json::Number(y)) => crate::decimal::equal(x.as_str(), y.as_str()),
        // ASCII lowers letter by letter: no text to build.
        (Json::String(x), Json::String(y)) if x.is_ascii() && y.is_ascii() => {
            x.eq_ignore_ascii_case(y)
        }
        _ => exact_text(expected).to_lowercase() == exact_text(actual).to_lowercase(),
    }
}

/// Python's `str(value)` for a scalar; sorted JSON text for objects and arrays.
fn exact_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.to_string(),
        Json::Number(n) => python_number(n),
        Json::Bool(true) => "True".to_owned(),
        Json::Bool(false) => "False".to_owned(),
        Json::Null => "None".to_owned(),
        container => {
            let mut out = String::new();
            let style = PythonJson {
                sort_keys: true,
                canonical_numbers: true,
            };
            write_python_json(container, &mut out, style);
            out
        }
    }
}

/// The characters `normalized` removes besides whitespace, unless a rule's
/// `normalize: { strip }` says otherwise.
pub const DEFAULT_NORMALIZE_STRIP: &str = ",./-_*^";

/// The `normalized` strategy's equality: strings equal once lower-cased and
/// stripped of whitespace and of the characters in `strip`, at any depth;
/// numbers by value, booleans and `null` as themselves, containers by their
/// shape.
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// The ASCII characters removed, as a set of bits.
    ascii: u128,
    /// The others, sorted.
    strip: Vec<char>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self::stripping(DEFAULT_NORMALIZE_STRIP)
    }
}

impl Normalizer {
    /// The strategy that removes whitespace and the characters of `strip`.
    pub fn stripping(strip: &str) -> Self {
        let mut ascii = 0u128;
        let mut others: Vec<char> = Vec::new();
        for c in strip.chars().filter(|c| !c.is_whitespace()) {
            if c.is_ascii() {
                ascii |= 1 << u32::from(c);
            } else {
                others.push(c);
            }
        }
        others.sort_unstable();
        others.dedup();
        Self {
            ascii,
            strip: others,
        }
    }

    /// Whether `c` is left out of the comparison.
    fn removes(&self, c: char) -> bool {
        if c.is_ascii() {
            c.is_whitespace() || self.ascii >> u32::from(c) & 1 == 1
        } else {
            c.is_whitespace() || self.strip.binary_search(&c).is_ok()
        }
    }

    /// Whether two values are equal under the strategy.
    pub fn equal(&self, expected: &Json, actual: &Json) -> bool {
        match (expected, actual) {
            (Json::String(x), Json::String(y)) => self.same_text(x, y),
            (Json::Number(x), Json::Number(y)) => crate::decimal::equal(x.as_str(), y.as_str()),
            (Json::Array(x), Json::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(x, y)| self.equal(x, y))
            }
            (Json::Object(x), Json::Object(y)) => {
                x.len() == y.len()
                    && x.iter().all(|(name, value)| {
                        y.get(name).is_some_and(|other| self.equal(value, other))
                    })
            }
            _ => expected == actual,
        }
    }

    /// The two texts' kept characters, lower-cased, compared one by one
    /// (no text is built; ASCII byte by byte).
    fn same_text(&self, x: &str, y: &str) -> bool {
        if x.is_ascii() && y.is_ascii() {
            return self.kept_ascii(x).eq(self.kept_ascii(y));
        }
        self.kept(x).eq(self.kept(y))
    }

    fn kept_ascii<'t>(&'t self, text: &'t str) -> impl Iterator<Item = u8> + 't {
        text.bytes()
            .filter(move |&b| !self.removes(char::from(b)))
            .map(|b| b.to_ascii_lowercase())
    }

    fn kept<'t>(&'t self, text: &'t str) -> impl Iterator<Item = char> + 't {
        text.chars()
            .filter(move |&c| !self.removes(c))
            .flat_map(char::to_lowercase)
    }
}
