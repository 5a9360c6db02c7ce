//! Exact comparison of JSON number texts as decimals: [`compare`].
//!
//! Numbers keep the text they were written with (`serde_json`'s
//! `arbitrary_precision`), and that text can say more than an `f64` holds:
//! `1.0000000000000000000001` is more than `1`, `1e400` is more than `500`, and
//! `123456789012345678901234567890` is not `123456789012345678901234567891`,
//! yet all of them collapse when read as floats. This module compares the texts'
//! exact values instead, never going through `f64`.
//!
//! Each text is normalised to a sign, its significant digits (leading and
//! trailing zeros dropped, read in place from the text: no copy) and an
//! adjusted exponent `E` such that the value is `0.d1d2…dn × 10^E` with `d1`
//! not zero. Two numbers of one sign then compare by `E` first and by their
//! digits, left to right, second. `E` is the written exponent plus the decimal
//! point's distance from the first significant digit; it is an `i128` whenever
//! the exponent text has at most 38 digits, and otherwise a small exact decimal
//! integer ([`Wide`]) whose size is that of the exponent's text, not of its
//! value (`1e999999999999999999999999999999999999999` costs forty digits). So
//! the work is linear in the texts' length, however long their digits or their
//! exponents are.
//!
//! A bound given as an `f64` ([`compare_f64`]) is compared as the decimal a
//! person wrote for it, its shortest round-trip text: `0.1` is the decimal 0.1,
//! not the binary fraction nearest to it.
//!
//! Texts that are not JSON numbers (the grammar
//! `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) are never expected here,
//! but they are handled without a panic and deterministically: they order
//! before every number and among themselves byte by byte, they are not
//! integers and they do not fit an `f64`.

use std::borrow::Cow;
use std::cmp::Ordering;

/// How two number texts' exact values compare (see the module's doc for texts
/// that are not JSON numbers: they order before every number).
pub fn compare(a: &str, b: &str) -> Ordering {
    match (normalize(a), normalize(b)) {
        (Some(x), Some(y)) => compare_numbers(&x, &y),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => a.as_bytes().cmp(b.as_bytes()),
    }
}

/// How a number text compares with a finite `f64` bound taken as its shortest
/// round-trip decimal (`0.1` is the decimal 0.1, `500.0` is 500); `None` when
/// the bound is NaN or infinite.
pub fn compare_f64(a: &str, b: f64) -> Option<Ordering> {
    if !b.is_finite() {
        return None;
    }
    // A whole bound (`min: 1`, the common case) is written as its integer's
    // digits, exact below 2^53, without the float formatter or an allocation:
    // a contract compares every number of a record with its bounds.
    if b.fract() == 0.0 && b.abs() < 9.0e15 {
        // And a small integer's text (a page number, a count) as its value.
        if let Some(n) = small_integer(a) {
            return Some(n.cmp(&(b as i64)));
        }
        let mut digits = [0u8; 20];
        return Some(compare(a, integer_text(b as i64, &mut digits)));
    }
    // `{:e}` writes the shortest digits that read back as `b`, in a form the
    // JSON grammar accepts (`1e-1`, `5e2`, `1.7976931348623157e308`).
    Some(compare(a, &format!("{b:e}")))
}

/// The value of a JSON integer's text of at most 15 digits (`-?(0|[1-9][0-9]*)`:
/// exact in an `i64`); `None` for any other text, which the exact decimal
/// comparison reads (`01` is not a number).
fn small_integer(a: &str) -> Option<i64> {
    let negative = a.starts_with('-');
    let digits = if negative {
        &a.as_bytes()[1..]
    } else {
        a.as_bytes()
    };
    if digits.is_empty() || digits.len() > 15 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut n = 0i64;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(digit - b'0');
    }
    Some(if negative { -n } else { n })
}

/// `n` in decimal digits (with its sign), written into the end of `digits`
/// (|n| < 9e15: room for the sign is left).
fn integer_text(n: i64, digits: &mut [u8; 20]) -> &str {
    let mut at = crate::json_write::u64_digits(n.unsigned_abs(), digits);
    if n < 0 {
        at -= 1;
        digits[at] = b'-';
    }
    // Only ASCII digits and a sign were written.
    std::str::from_utf8(&digits[at..]).unwrap_or("0")
}

/// Whether two number texts have the same exact value (`25`, `25.0`, `2.5e1`
/// and `250e-1` do; so do `0` and `-0`).
pub fn equal(a: &str, b: &str) -> bool {
    compare(a, b) == Ordering::Equal
}

/// Whether a number text's exact value is an integer (`5`, `5.0`, `2.5e1` and
/// `1e400` are; `5.5` and `1e-400` are not).
pub fn is_integer(a: &str) -> bool {
    // The common case (`page: 3` checked as an integer) without normalizing.
    small_integer(a).is_some() || normalized_is_integer(a)
}

/// [`is_integer`] by the text's normalized digits and exponent, for any text.
fn normalized_is_integer(a: &str) -> bool {
    normalize(a).is_some_and(|number| match number.magnitude {
        None => true,
        // 0.d1…dn × 10^E is an integer when the point moves past the last digit.
        Some(magnitude) => {
            magnitude.exponent.cmp_i128(count(magnitude.digits.len())) != Ordering::Less
        }
    })
}

/// Whether a number text reads as a finite `f64`: its magnitude rounds to at
/// most `f64::MAX` (`1e308` does, `1e309` does not; `2e-400` does, reading as
/// zero).
///
/// Reading rounds to the nearest `f64`, so the limit is exactly halfway
/// between `f64::MAX` and 2^1024, 2^1024 − 2^970, excluded (the tie goes to the
/// even neighbour, 2^1024, which is infinite): a text a little above
/// `f64::MAX`, such as `1.7976931348623158e308`, still reads as `f64::MAX`.
pub fn fits_f64(a: &str) -> bool {
    /// 2^1024 − 2^970, the least magnitude that reads as an infinite `f64`.
    const OVERFLOW: &str = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
    let magnitude = a.strip_prefix('-').unwrap_or(a);
    normalize(magnitude).is_some() && compare(magnitude, OVERFLOW) == Ordering::Less
}

/// One text for every writing of a value (`25`, `25.0`, `2.5e1` and
/// `250e-1` give the same; `0` and `-0` too), for keys of equal values: `0`,
/// or the sign, the significant digits and the adjusted exponent
/// (`0.25e2` → `25e2`, as `±d1…dn` then `e` and `E`). A text that is not a
/// JSON number is returned as it is.
pub fn canonical(a: &str) -> Cow<'_, str> {
    let Some(number) = normalize(a) else {
        return Cow::Borrowed(a);
    };
    let Some(magnitude) = number.magnitude else {
        return Cow::Borrowed("0");
    };
    let mut out = String::with_capacity(magnitude.digits.len() + 8);
    if number.negative {
        out.push('-');
    }
    for piece in [magnitude.digits.head, magnitude.digits.tail] {
        out.extend(piece.iter().map(|&b| char::from(b)));
    }
    out.push('e');
    match &magnitude.exponent {
        Exponent::Small(exponent) => out.push_str(&exponent.to_string()),
        Exponent::Wide(wide) => {
            if wide.negative {
                out.push('-');
            }
            out.extend(wide.digits.iter().map(|&d| char::from(b'0' + d)));
        }
    }
    Cow::Owned(out)
}

/// Whether two JSON values are equal, numbers by their exact value
/// (`25 == 25.0 == 2.5e1`, `1 != 1.0000000000000000000001`), objects whatever
/// their members' order: the one equality of values that rules compare
/// (`enum`, `unique_items`, `no_repeat`, expected values, pack tests'
/// `expect`).
pub fn equal_values(a: &crate::json::Json, b: &crate::json::Json) -> bool {
    use crate::json::Json;
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => equal(x.as_str(), y.as_str()),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(x, y)| equal_values(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(name, value)| {
                    y.get(name).is_some_and(|other| equal_values(value, other))
                })
        }
        _ => a == b,
    }
}

/// Whether a number is written as an integer: digits alone, with no fraction
/// or exponent (`5`, `-12`; not `5.0` nor `5e0`), as typed graders read it.
pub fn written_as_integer(a: &str) -> bool {
    !a.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// `numbers: strict`'s one-sided rule: whether somewhere in `expected` a
/// number written as an integer meets, at the same place in `actual`, a number
/// written with a fraction or an exponent (`5` against `5.0`: not equal; `5.0`
/// against `5`: no objection).
pub fn strict_mismatch(expected: &crate::json::Json, actual: &crate::json::Json) -> bool {
    use crate::json::Json;
    match (expected, actual) {
        (Json::Number(x), Json::Number(y)) => {
            written_as_integer(x.as_str()) && !written_as_integer(y.as_str())
        }
        (Json::Array(x), Json::Array(y)) => {
            x.iter().zip(y.iter()).any(|(x, y)| strict_mismatch(x, y))
        }
        (Json::Object(x), Json::Object(y)) => x.iter().any(|(name, value)| {
            y.get(name)
                .is_some_and(|other| strict_mismatch(value, other))
        }),
        _ => false,
    }
}

/// A key for [`equal_values`]: the value's text with every object's members
/// in name order and every number in its [`canonical`] form, so two values have
/// the same key exactly when they are equal (for sets and maps of values:
/// `unique_items`, `no_repeat`).
pub fn value_key(value: &crate::json::Json) -> Vec<u8> {
    let mut out = Vec::new();
    write_key(&mut out, value);
    out
}

fn write_key(out: &mut Vec<u8>, value: &crate::json::Json) {
    use crate::json::Json;
    match value {
        Json::Array(items) => crate::json_write::write_array(out, items, write_key),
        Json::Object(members) => {
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut object = crate::json_write::Object::open(out);
            for (name, member) in sorted {
                write_key(object.key(name), member);
            }
            object.close();
        }
        Json::Number(number) => out.extend_from_slice(canonical(number.as_str()).as_bytes()),
        scalar => crate::json_write::write_json(out, scalar),
    }
}

/// [`equal_values`] for `serde_json` values (the fuzz targets' round trips,
/// tests): the same function, off the hot path.
#[doc(hidden)]
pub fn equal_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    equal_values(&a.into(), &b.into())
}

/// A number text normalised for comparison: `±0.d1d2…dn × 10^E`.
#[derive(Debug)]
struct Number<'a> {
    /// Whether a minus sign was written (also on zero, where it means nothing).
    negative: bool,
    /// The digits and exponent; `None` for zero.
    magnitude: Option<Magnitude<'a>>,
}

/// The magnitude of a number other than zero: `0.d1d2…dn × 10^exponent`,
/// with `d1` and `dn` not zero.
#[derive(Debug)]
struct Magnitude<'a> {
    /// `d1…dn`, read in place from the text.
    digits: Digits<'a>,
    /// `E`, the adjusted exponent.
    exponent: Exponent,
}

/// Significant digits (ASCII) in at most two pieces of the text: the integer
/// part's and the fraction's (the decimal point between them left out).
#[derive(Debug, Clone, Copy)]
struct Digits<'a> {
    /// The first digits.
    head: &'a [u8],
    /// The digits after them (empty when they all lie in one part).
    tail: &'a [u8],
}

impl Digits<'_> {
    /// How many digits there are.
    fn len(self) -> usize {
        self.head.len() + self.tail.len()
    }
}

/// An adjusted exponent: an `i128`, or a [`Wide`] integer when the exponent
/// text is too long for one.
#[derive(Debug)]
enum Exponent {
    /// The usual case.
    Small(i128),
    /// An exponent written with more than 38 digits.
    Wide(Wide),
}

impl Exponent {
    /// The exponent as a [`Wide`] integer (a copy only for a small one).
    fn wide(&self) -> Cow<'_, Wide> {
        match self {
            Exponent::Small(value) => Cow::Owned(Wide::from_i128(*value)),
            Exponent::Wide(value) => Cow::Borrowed(value),
        }
    }

    /// How this exponent compares with another.
    fn compare(&self, other: &Exponent) -> Ordering {
        match (self, other) {
            (Exponent::Small(x), Exponent::Small(y)) => x.cmp(y),
            _ => self.wide().cmp(&other.wide()),
        }
    }

    /// How this exponent compares with an `i128`.
    fn cmp_i128(&self, other: i128) -> Ordering {
        self.compare(&Exponent::Small(other))
    }
}

/// An exact signed integer held as its decimal digits, for adjusted exponents
/// whose text is too long for an `i128`: only adding an `i128` and comparing
/// are needed, both linear in the digits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wide {
    /// Whether it is below zero (never for zero).
    negative: bool,
    /// The magnitude's digit values (0 to 9), most significant first, without
    /// leading zeros (empty for zero).
    digits: Vec<u8>,
}

impl Wide {
    /// The integer of this sign and these digit values, leading zeros dropped.
    fn new(negative: bool, mut digits: Vec<u8>) -> Wide {
        let zeros = digits.iter().take_while(|&&digit| digit == 0).count();
        digits.drain(..zeros);
        Wide {
            negative: negative && !digits.is_empty(),
            digits,
        }
    }

    /// The integer an `i128` holds.
    fn from_i128(value: i128) -> Wide {
        let mut rest = value.unsigned_abs();
        let mut digits = Vec::new();
        while rest > 0 {
            // A remainder below 10 fits a byte.
            digits.push((rest % 10) as u8);
            rest /= 10;
        }
        digits.reverse();
        Wide::new(value < 0, digits)
    }

    /// The integer written with these ASCII digits.
    fn from_text(negative: bool, text: &[u8]) -> Wide {
        Wide::new(negative, text.iter().map(|digit| digit - b'0').collect())
    }

    /// The sum of this integer and another.
    fn plus(&self, other: &Wide) -> Wide {
        if self.negative == other.negative {
            return Wide::new(self.negative, add_magnitudes(&self.digits, &other.digits));
        }
        match cmp_magnitudes(&self.digits, &other.digits) {
            Ordering::Equal => Wide::new(false, Vec::new()),
            Ordering::Greater => Wide::new(
                self.negative,
                subtract_magnitudes(&self.digits, &other.digits),
            ),
            Ordering::Less => Wide::new(
                other.negative,
                subtract_magnitudes(&other.digits, &self.digits),
            ),
        }
    }
}

impl Ord for Wide {
    fn cmp(&self, other: &Wide) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_magnitudes(&self.digits, &other.digits),
            (true, true) => cmp_magnitudes(&other.digits, &self.digits),
        }
    }
}

impl PartialOrd for Wide {
    fn partial_cmp(&self, other: &Wide) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How two magnitudes (digit values without leading zeros) compare: the longer
/// is larger, and of one length the first differing digit decides.
fn cmp_magnitudes(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The sum of two magnitudes' digit values (maybe with a leading zero).
fn add_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut sum = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut a, mut b) = (a.iter().rev(), b.iter().rev());
    let mut carry = 0;
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            break;
        }
        let digit = x.unwrap_or(&0) + y.unwrap_or(&0) + carry;
        sum.push(digit % 10);
        carry = digit / 10;
    }
    sum.push(carry);
    sum.reverse();
    sum
}

/// `larger − smaller` for two magnitudes' digit values, `larger` being at least
/// `smaller` (maybe with leading zeros).
fn subtract_magnitudes(larger: &[u8], smaller: &[u8]) -> Vec<u8> {
    let mut difference = Vec::with_capacity(larger.len());
    let mut smaller = smaller.iter().rev();
    let mut borrow = 0;
    for &x in larger.iter().rev() {
        let y = smaller.next().unwrap_or(&0) + borrow;
        if x >= y {
            difference.push(x - y);
            borrow = 0;
        } else {
            difference.push(x + 10 - y);
            borrow = 1;
        }
    }
    difference.reverse();
    difference
}

/// The parts of a JSON number text, as written.
#[derive(Debug)]
struct Parts<'a> {
    /// Whether it starts with `-`.
    negative: bool,
    /// The integer part's digits (`0` or no leading zero).
    integer: &'a [u8],
    /// The fraction's digits (empty when there is no `.`).
    fraction: &'a [u8],
    /// Whether the exponent has a `-`.
    exponent_negative: bool,
    /// The exponent's digits (empty when there is no exponent; leading zeros
    /// allowed).
    exponent: &'a [u8],
}

/// Splits a JSON number text into its parts; `None` when it is not one.
fn parse(text: &str) -> Option<Parts<'_>> {
    let (negative, rest) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let (integer, rest) = rest.split_at(digit_run(rest));
    if integer.is_empty() || (integer.len() > 1 && integer[0] == b'0') {
        return None;
    }
    let (fraction, rest) = match rest {
        [b'.', rest @ ..] => {
            let (fraction, rest) = rest.split_at(digit_run(rest));
            if fraction.is_empty() {
                return None;
            }
            (fraction, rest)
        }
        rest => (&rest[..0], rest),
    };
    let (exponent_negative, exponent) = match rest {
        [] => (false, rest),
        [b'e' | b'E', rest @ ..] => {
            let (negative, digits) = match rest {
                [b'-', digits @ ..] => (true, digits),
                [b'+', digits @ ..] | digits => (false, digits),
            };
            if digits.is_empty() || digit_run(digits) != digits.len() {
                return None;
            }
            (negative, digits)
        }
        _ => return None,
    };
    Some(Parts {
        negative,
        integer,
        fraction,
        exponent_negative,
        exponent,
    })
}

/// How many ASCII digits `bytes` starts with.
fn digit_run(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|byte| !byte.is_ascii_digit())
        .unwrap_or(bytes.len())
}

/// A count or a position in a text as an `i128` (a `usize` has at most 64 bits
/// on every platform Rust supports, so this never saturates).
fn count(n: usize) -> i128 {
    i128::try_from(n).unwrap_or(i128::MAX)
}

/// Normalises a number text (`None` when it is not a JSON number).
fn normalize(text: &str) -> Option<Number<'_>> {
    let parts = parse(text)?;
    let (integer, fraction) = (parts.integer, parts.fraction);
    let significant = |digit: &u8| *digit != b'0';
    // The point's place relative to the first significant digit, and the
    // digits from that one to the last significant one.
    let (offset, digits) = if let Some(first) = integer.iter().position(significant) {
        let digits = if let Some(last) = fraction.iter().rposition(significant) {
            Digits {
                head: &integer[first..],
                tail: &fraction[..=last],
            }
        } else {
            let last = integer.iter().rposition(significant).unwrap_or(first);
            Digits {
                head: &integer[first..=last],
                tail: &[],
            }
        };
        (count(integer.len() - first), digits)
    } else if let Some(first) = fraction.iter().position(significant) {
        let last = fraction.iter().rposition(significant).unwrap_or(first);
        let digits = Digits {
            head: &fraction[first..=last],
            tail: &[],
        };
        (-count(first), digits)
    } else {
        return Some(Number {
            negative: parts.negative,
            magnitude: None,
        });
    };
    Some(Number {
        negative: parts.negative,
        magnitude: Some(Magnitude {
            digits,
            exponent: adjusted_exponent(parts.exponent_negative, parts.exponent, offset),
        }),
    })
}

/// The written exponent (sign and ASCII digits) plus `offset`, exactly.
fn adjusted_exponent(negative: bool, digits: &[u8], offset: i128) -> Exponent {
    /// The most digits whose value always fits an `i128` (10^38 − 1 < 2^127).
    const SMALL_DIGITS: usize = 38;
    let zeros = digits.iter().take_while(|&&digit| digit == b'0').count();
    let digits = &digits[zeros..];
    if digits.len() <= SMALL_DIGITS {
        let magnitude = digits
            .iter()
            .fold(0_i128, |value, digit| value * 10 + i128::from(digit - b'0'));
        let value = if negative { -magnitude } else { magnitude };
        if let Some(exponent) = value.checked_add(offset) {
            return Exponent::Small(exponent);
        }
    }
    Exponent::Wide(Wide::from_text(negative, digits).plus(&Wide::from_i128(offset)))
}

/// How two normalised numbers compare.
fn compare_numbers(x: &Number<'_>, y: &Number<'_>) -> Ordering {
    let sign = |number: &Number<'_>| match number.magnitude {
        None => 0,
        Some(_) if number.negative => -1,
        Some(_) => 1,
    };
    sign(x)
        .cmp(&sign(y))
        .then_with(|| match (&x.magnitude, &y.magnitude) {
            (Some(a), Some(b)) => {
                let order = compare_magnitudes(a, b);
                if x.negative {
                    order.reverse()
                } else {
                    order
                }
            }
            // Both zero (or, by the signs, nothing else).
            _ => Ordering::Equal,
        })
}

/// How two magnitudes compare: `0.d… × 10^E` with a first digit that is not
/// zero grows with `E`, and for one `E` with its digits read left to right (a
/// number whose digits continue another's is the larger one, its extra digits
/// ending in one that is not zero).
fn compare_magnitudes(a: &Magnitude<'_>, b: &Magnitude<'_>) -> Ordering {
    a.exponent
        .compare(&b.exponent)
        .then_with(|| compare_digits(a.digits, b.digits))
}

/// Compares two digit sequences left to right, a run at a time (a shorter one
/// that the other continues is the smaller).
fn compare_digits(mut a: Digits<'_>, mut b: Digits<'_>) -> Ordering {
    loop {
        if a.head.is_empty() {
            a = Digits {
                head: a.tail,
                tail: &[],
            };
        }
        if b.head.is_empty() {
            b = Digits {
                head: b.tail,
                tail: &[],
            };
        }
        if a.head.is_empty() || b.head.is_empty() {
            return (!a.head.is_empty()).cmp(&!b.head.is_empty());
        }
        let n = a.head.len().min(b.head.len());
        let order = a.head[..n].cmp(&b.head[..n]);
        if order != Ordering::Equal {
            return order;
        }
        a.head = &a.head[n..];
        b.head = &b.head[n..];
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering::{self, Equal, Greater, Less};

    use num_bigint::BigInt;

    use super::*;

    /// A generated number text with the parts it was written from, so that the
    /// reference value does not depend on the module's own reading.
    #[derive(Debug, Clone)]
    struct Written {
        negative: bool,
        /// The integer part's digits (`0` or no leading zero).
        integer: String,
        /// The fraction's digits (maybe empty).
        fraction: String,
        /// The exponent's value.
        exponent: i64,
        /// The text.
        text: String,
    }

    /// A random number in `0..n`.
    fn below(next: &mut impl FnMut() -> u64, n: usize) -> usize {
        usize::try_from(next() % u64::try_from(n).unwrap()).unwrap()
    }

    /// `length` random ASCII digits drawn from `alphabet`.
    fn random_digits(next: &mut impl FnMut() -> u64, length: usize, alphabet: &[u8]) -> String {
        (0..length)
            .map(|_| char::from(alphabet[below(next, alphabet.len())]))
            .collect()
    }

    /// The text of these parts, the exponent written in a random style (`e`,
    /// `E`, `e+`, `E-`…, with leading zeros, or left out when it is zero).
    fn write(
        next: &mut impl FnMut() -> u64,
        negative: bool,
        integer: String,
        fraction: String,
        exponent: i64,
    ) -> Written {
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push_str(&integer);
        if !fraction.is_empty() {
            text.push('.');
            text.push_str(&fraction);
        }
        if exponent != 0 || below(next, 3) == 0 {
            text.push(if below(next, 2) == 0 { 'e' } else { 'E' });
            if exponent < 0 {
                text.push('-');
            } else if below(next, 2) == 0 {
                text.push('+');
            }
            for _ in 0..below(next, 4).saturating_sub(1) {
                text.push('0');
            }
            text.push_str(&exponent.unsigned_abs().to_string());
        }
        Written {
            negative,
            integer,
            fraction,
            exponent,
            text,
        }
    }

    /// A random number text: 1 to 60 integer digits or `0.`, 0 to 60 fraction
    /// digits (trailing zeros included), an exponent in `range`, digits from
    /// `alphabet`.
    fn generate(
        next: &mut impl FnMut() -> u64,
        alphabet: &[u8],
        max_digits: usize,
        range: i64,
    ) -> Written {
        let negative = below(next, 2) == 0;
        let integer = if below(next, 3) == 0 {
            "0".to_owned()
        } else {
            let length = 1 + below(next, max_digits);
            let digits = random_digits(next, length, alphabet);
            let trimmed = digits.trim_start_matches('0');
            if trimmed.is_empty() {
                "0".to_owned()
            } else {
                trimmed.to_owned()
            }
        };
        let length = below(next, max_digits + 1);
        let mut fraction = random_digits(next, length, alphabet);
        if below(next, 4) == 0 {
            fraction.push_str(&"0".repeat(1 + below(next, 5)));
        }
        let span = u64::try_from(2 * range + 1).unwrap();
        let exponent = i64::try_from(next() % span).unwrap() - range;
        write(next, negative, integer, fraction, exponent)
    }

    /// The same value written another way: trailing zeros added, the decimal
    /// point moved and the exponent changed to match.
    fn rewrite(next: &mut impl FnMut() -> u64, number: &Written) -> Written {
        let zeros = below(next, 4);
        let all = format!("{}{}{}", number.integer, number.fraction, "0".repeat(zeros));
        let fraction_length = below(next, all.len() + 1);
        let (integer, fraction) = all.split_at(all.len() - fraction_length);
        let integer = match integer.trim_start_matches('0') {
            "" => "0",
            trimmed => trimmed,
        };
        let shift = i64::try_from(fraction_length).unwrap()
            - i64::try_from(number.fraction.len() + zeros).unwrap();
        write(
            next,
            number.negative,
            integer.to_owned(),
            fraction.to_owned(),
            number.exponent + shift,
        )
    }

    /// The number with its last written digit one more or one less.
    fn near_miss(next: &mut impl FnMut() -> u64, number: &Written) -> Written {
        let (mut integer, mut fraction) = (number.integer.clone(), number.fraction.clone());
        let part = if fraction.is_empty() {
            &mut integer
        } else {
            &mut fraction
        };
        let last = part.pop().unwrap();
        let changed = match last {
            '0' => '1',
            '9' => '8',
            _ if below(next, 2) == 0 => char::from(u8::try_from(last).unwrap() + 1),
            _ => char::from(u8::try_from(last).unwrap() - 1),
        };
        part.push(changed);
        write(next, number.negative, integer, fraction, number.exponent)
    }

    /// The exact value: a signed integer and a power of ten.
    fn reference(number: &Written) -> (BigInt, i64) {
        let digits = format!("{}{}", number.integer, number.fraction);
        let mut mantissa: BigInt = digits.parse().unwrap();
        if number.negative {
            mantissa = -mantissa;
        }
        let exponent = number.exponent - i64::try_from(number.fraction.len()).unwrap();
        (mantissa, exponent)
    }

    /// How two exact values compare, cross-multiplied to one power of ten.
    fn reference_compare(a: &Written, b: &Written) -> Ordering {
        let ((a_mantissa, a_exponent), (b_mantissa, b_exponent)) = (reference(a), reference(b));
        let low = a_exponent.min(b_exponent);
        let scale = |exponent: i64| BigInt::from(10).pow(u32::try_from(exponent - low).unwrap());
        (a_mantissa * scale(a_exponent)).cmp(&(b_mantissa * scale(b_exponent)))
    }

    /// Checks `compare` on a pair against the reference, both ways round.
    fn check(a: &Written, b: &Written) -> Ordering {
        let expected = reference_compare(a, b);
        assert_eq!(
            compare(&a.text, &b.text),
            expected,
            "{} vs {}",
            a.text,
            b.text
        );
        assert_eq!(
            compare(&b.text, &a.text),
            expected.reverse(),
            "{} vs {}",
            b.text,
            a.text
        );
        assert_eq!(equal(&a.text, &b.text), expected == Equal);
        expected
    }

    #[test]
    fn generated_numbers_compare_as_exact_rationals() {
        let mut next = crate::json::numbers(0x9E37_79B9_7F4A_7C15);
        let pool: Vec<Written> = (0..3000)
            .map(|_| generate(&mut next, b"0123456789", 60, 400))
            .collect();
        let mut equal_rewrites = 0;
        for (i, number) in pool.iter().enumerate() {
            assert_eq!(
                compare(&number.text, &number.text),
                Equal,
                "{}",
                number.text
            );
            for other in [
                &pool[(i + 1) % pool.len()],
                &pool[below(&mut next, pool.len())],
            ] {
                check(number, other);
            }
            for _ in 0..3 {
                let same = rewrite(&mut next, number);
                assert_eq!(check(number, &same), Equal);
                equal_rewrites += 1;
                let miss = near_miss(&mut next, &same);
                assert_ne!(check(number, &miss), Equal);
                assert_ne!(check(&same, &miss), Equal);
            }
        }
        assert_eq!(equal_rewrites, 9000);
    }

    #[test]
    fn generated_close_numbers_compare_as_exact_rationals() {
        // Few digits and exponents near zero: many pairs share an adjusted
        // exponent or are equal, so the digits decide.
        let mut next = crate::json::numbers(0x2545_F491_4F6C_DD1D);
        let pool: Vec<Written> = (0..250)
            .map(|_| generate(&mut next, b"0019", 4, 3))
            .collect();
        let mut orders = [0; 3];
        for a in &pool {
            for b in &pool {
                orders[match check(a, b) {
                    Less => 0,
                    Equal => 1,
                    Greater => 2,
                }] += 1;
            }
        }
        assert!(orders.iter().all(|&n| n > 1000), "{orders:?}");
    }

    /// A random JSON value holding `numbers` at its leaves (nested in arrays
    /// and objects), built by `leaf` for each; `shuffle` puts each object's
    /// members in another order.
    fn value_of(
        next: &mut impl FnMut() -> u64,
        numbers: &[String],
        shape: u64,
        shuffle: bool,
    ) -> crate::json::Json {
        use crate::json::{Json, Object};
        let leaves: Vec<Json> = numbers
            .iter()
            .map(|n| Json::Number(n.parse().unwrap()))
            .collect();
        // The shape is fixed by `shape`, so two calls with one shape differ
        // only in their numbers and (with `shuffle`) their members' order.
        let mut members: Vec<(String, Json)> = leaves
            .iter()
            .enumerate()
            .map(|(i, leaf)| {
                let nested = match (shape >> (2 * i)) & 3 {
                    0 => leaf.clone(),
                    1 => Json::Array(vec![leaf.clone(), Json::from("x")]),
                    2 => {
                        let mut object = Object::new();
                        object.insert("v", leaf.clone());
                        object.insert("n", Json::Null);
                        Json::Object(object)
                    }
                    _ => Json::Array(vec![Json::Array(vec![leaf.clone()])]),
                };
                (format!("k{i}"), nested)
            })
            .collect();
        if shuffle {
            for i in (1..members.len()).rev() {
                members.swap(i, below(next, i + 1));
            }
        }
        let mut object = Object::new();
        for (name, member) in members {
            object.insert(name, member);
        }
        Json::Object(object)
    }

    #[test]
    fn one_equality_of_values_holds_for_every_rewriting_and_no_near_miss() {
        let mut next = crate::json::numbers(0x51_7CC1_B727_220A);
        for round in 0..2000 {
            let count = 1 + below(&mut next, 4);
            let numbers: Vec<Written> = (0..count)
                .map(|_| {
                    // Mostly small numbers a double holds; some long ones and
                    // big integers, beyond it.
                    if round % 3 == 0 {
                        generate(&mut next, b"0123456789", 40, 400)
                    } else {
                        generate(&mut next, b"0123456789", 6, 4)
                    }
                })
                .collect();
            let shape = next();
            let texts = |ns: &[Written]| ns.iter().map(|n| n.text.clone()).collect::<Vec<_>>();
            let value = value_of(&mut next, &texts(&numbers), shape, false);
            let rewritten: Vec<Written> = numbers.iter().map(|n| rewrite(&mut next, n)).collect();
            let same = value_of(&mut next, &texts(&rewritten), shape, true);
            assert!(equal_values(&value, &same), "{value} vs {same}");
            assert_eq!(value_key(&value), value_key(&same), "{value} vs {same}");
            let (a, b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&value.to_string()).unwrap(),
                serde_json::from_str(&same.to_string()).unwrap(),
            );
            assert!(equal_json(&a, &b), "{a} vs {b}");
            // One number off by its last digit: another value.
            let mut off = rewritten;
            let which = below(&mut next, count);
            off[which] = near_miss(&mut next, &numbers[which]);
            let other = value_of(&mut next, &texts(&off), shape, true);
            let differs = reference_compare(&off[which], &numbers[which]) != Equal;
            assert_eq!(!equal_values(&value, &other), differs, "{value} vs {other}");
            assert_eq!(
                value_key(&value) != value_key(&other),
                differs,
                "{value} vs {other}"
            );
        }
    }

    #[test]
    fn rewritings_of_one_value_are_equal() {
        for group in [
            &[
                "25",
                "25.0",
                "2.5e1",
                "250e-1",
                "0.25E+2",
                "2500000e-5",
                "25.000e0",
            ][..],
            &[
                "0",
                "-0",
                "0.0",
                "-0.000",
                "0e5",
                "0E-5",
                "0.0e+0007",
                "-0e-1",
            ],
            &[
                "1", "1.0", "10e-1", "0.1e1", "100E-002", "1e0", "1E+0", "1e-0",
            ],
            &["-123.456", "-123456e-3", "-0.123456e3", "-1234560000E-7"],
        ] {
            for a in group {
                for b in group {
                    assert_eq!(compare(a, b), Equal, "{a} vs {b}");
                    assert!(equal(a, b), "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn edge_cases_compare_exactly() {
        for (a, b, order) in [
            ("1.0000000000000000000001", "1", Greater),
            ("0.9999999999999999999999", "1", Less),
            ("1e400", "500", Greater),
            ("-1e400", "0", Less),
            ("1e-400", "0", Greater),
            ("-1e-400", "-0", Less),
            ("-1e-400", "-1e-401", Less),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567891",
                Less,
            ),
            ("9007199254740993", "9007199254740992", Greater),
            ("-5", "-4.99999999999999999999", Less),
            ("-5", "5", Less),
            ("100", "99.99e0", Greater),
            ("0.001", "1e-3", Equal),
            ("10", "9", Greater),
            ("1.5", "1.25", Greater),
            ("1.25", "1.3", Less),
        ] {
            assert_eq!(compare(a, b), order, "{a} vs {b}");
            assert_eq!(compare(b, a), order.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn huge_exponents_compare_exactly() {
        let nines = |n: usize| "9".repeat(n);
        let power = |n: usize| format!("1{}", "0".repeat(n));
        let cases = [
            (
                "1e100000000000000000000",
                "10e99999999999999999999".to_owned(),
                Equal,
            ),
            (
                "12e100000000000000000000",
                "1e100000000000000000001".to_owned(),
                Greater,
            ),
            (
                "1e999999999999999999999999999999999999999",
                "1e400".to_owned(),
                Greater,
            ),
            // Across the i128 boundary: 38 digits against 39.
            (
                "10e99999999999999999999999999999999999999",
                "1e100000000000000000000000000000000000000".to_owned(),
                Equal,
            ),
            (
                "0.01e-99999999999999999999999999999999999998",
                "1e-100000000000000000000000000000000000000".to_owned(),
                Equal,
            ),
            (
                "1e99999999999999999999999999999999999999",
                "1e100000000000000000000000000000000000000".to_owned(),
                Less,
            ),
        ];
        for (a, b, order) in &cases {
            assert_eq!(compare(a, b), *order, "{a} vs {b}");
            assert_eq!(compare(b, a), order.reverse(), "{b} vs {a}");
        }
        // Hundreds of exponent digits.
        let big = format!("1e{}", nines(300));
        let smaller = format!("1e{}8", nines(299));
        let shifted = format!("0.1e{}", power(300));
        let long_digits = format!("{}e{}", "1".repeat(500), nines(300));
        let long_shifted = format!("0.0{}e{}", "1".repeat(500), power(300));
        let tiny = format!("1e-{}", nines(300));
        let tinier = format!("1e-{}", power(300));
        let pairs = [
            (&big, &smaller, Greater),
            (&big, &shifted, Equal),
            (&long_digits, &big, Greater),
            (&long_shifted, &big, Less),
            (&tiny, &tinier, Greater),
            (&tiny, &"0".to_owned(), Greater),
            (&format!("-{tiny}"), &"-0".to_owned(), Less),
            (&format!("-{big}"), &format!("-{smaller}"), Less),
            (&format!("-{big}"), &tiny, Less),
            (
                &format!("{}e{}", "1".repeat(500), power(300)),
                &format!("0.{}e{}", "1".repeat(500), {
                    // 10^300 + 500, written out.
                    let mut digits = power(300);
                    digits.replace_range(digits.len() - 3.., "500");
                    digits
                }),
                Equal,
            ),
            (&format!("0e{}", nines(300)), &"-0.0e-1".to_owned(), Equal),
        ];
        for (a, b, order) in pairs {
            assert_eq!(compare(a, b), order, "{a} vs {b}");
            assert_eq!(compare(b, a), order.reverse(), "{b} vs {a}");
        }
        assert!(is_integer(&big));
        assert!(!is_integer(&tiny));
        assert!(!fits_f64(&big));
        assert!(fits_f64(&tiny));
    }

    #[test]
    fn wide_integers_add_and_compare_exactly() {
        let mut next = crate::json::numbers(0xD1B5_4A32_D192_ED03);
        let mut values = Vec::new();
        for _ in 0..2000 {
            let negative = below(&mut next, 2) == 0;
            let length = 1 + below(&mut next, 80);
            let text = random_digits(&mut next, length, b"0123456789");
            let offset = i128::from(next() >> below(&mut next, 64))
                * if below(&mut next, 2) == 0 { -1 } else { 1 };
            let sum = Wide::from_text(negative, text.as_bytes()).plus(&Wide::from_i128(offset));
            let mut expected: BigInt = text.parse().unwrap();
            if negative {
                expected = -expected;
            }
            expected += BigInt::from(offset);
            let written = format!(
                "{}{}",
                if sum.negative { "-" } else { "" },
                if sum.digits.is_empty() {
                    "0".to_owned()
                } else {
                    sum.digits.iter().map(|d| char::from(b'0' + d)).collect()
                }
            );
            assert_eq!(written, expected.to_string());
            values.push((sum, expected));
        }
        for pair in values.windows(2) {
            assert_eq!(pair[0].0.cmp(&pair[1].0), pair[0].1.cmp(&pair[1].1));
        }
        assert_eq!(
            Wide::from_i128(i128::MIN).plus(&Wide::from_i128(i128::MAX)),
            Wide::from_i128(-1)
        );
    }

    #[test]
    fn zero_in_all_its_spellings() {
        let zeros = [
            "0".to_owned(),
            "-0".to_owned(),
            "0.0".to_owned(),
            "-0.000000".to_owned(),
            "0e0".to_owned(),
            "0E+5".to_owned(),
            "-0e-5".to_owned(),
            "0.0e00000".to_owned(),
            format!("0e{}", "9".repeat(400)),
            format!("-0.{}e-{}", "0".repeat(100), "9".repeat(400)),
        ];
        for a in &zeros {
            for b in &zeros {
                assert!(equal(a, b), "{a} vs {b}");
            }
            assert!(is_integer(a), "{a}");
            assert!(fits_f64(a), "{a}");
            assert_eq!(
                compare(a, "1e-999999999999999999999999999999999999999999"),
                Less
            );
            assert_eq!(
                compare(a, "-1e-999999999999999999999999999999999999999999"),
                Greater
            );
            assert_eq!(compare_f64(a, 0.0), Some(Equal));
            assert_eq!(compare_f64(a, -0.0), Some(Equal));
        }
    }

    #[test]
    fn a_million_digits_compare_with_their_rewriting() {
        let mut next = crate::json::numbers(0x0123_4567_89AB_CDEF);
        let digits = format!("7{}", random_digits(&mut next, 999_999, b"0123456789"));
        let number = format!("{digits}.5");
        let rewritten = format!("0.{digits}50000e1000000");
        let started = std::time::Instant::now();
        assert_eq!(compare(&number, &rewritten), Equal);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn integers_are_recognised_exactly() {
        for text in [
            "5", "5.0", "2.5e1", "1e400", "-7", "0", "-0.0", "1.000e3", "12.5e1", "1.2345e4",
        ] {
            assert!(is_integer(text), "{text}");
        }
        for text in [
            "5.5", "1e-400", "-0.5", "12.5", "1.2345e3", "123e-2", "1.01e1",
        ] {
            assert!(!is_integer(text), "{text}");
        }
    }

    #[test]
    fn fitting_an_f64_agrees_with_reading_one() {
        // 2^1024 − 2^970, the least magnitude that reads as infinite.
        let overflow: BigInt = (BigInt::from(1) << 1024_u32) - (BigInt::from(1) << 970_u32);
        let overflow = overflow.to_string();
        let below_overflow = (overflow.parse::<BigInt>().unwrap() - BigInt::from(1)).to_string();
        let texts = [
            "1e308".to_owned(),
            "1e309".to_owned(),
            "2e-400".to_owned(),
            "-1e309".to_owned(),
            "1.7976931348623157e308".to_owned(),
            "1.7976931348623158e308".to_owned(),
            "1.7976931348623159e308".to_owned(),
            format!("-{overflow}"),
            overflow.clone(),
            format!("{overflow}.0000000000000000000000000000001"),
            below_overflow.clone(),
            format!("{below_overflow}.9999999999999999999999999999"),
            format!("0.{below_overflow}e309"),
            format!("1e{}", "9".repeat(300)),
            format!("1e-{}", "9".repeat(300)),
        ];
        for text in &texts {
            let read: f64 = text.parse().unwrap();
            assert_eq!(fits_f64(text), read.is_finite(), "{text}");
        }
        assert!(fits_f64("1e308") && !fits_f64("1e309") && fits_f64("2e-400"));
        assert!(!fits_f64(&overflow) && fits_f64(&below_overflow));
    }

    #[test]
    fn f64_bounds_compare_as_their_shortest_decimal() {
        let max_exact = format!("{:.0}", f64::MAX);
        for (text, bound, order) in [
            ("0.1", 0.1, Equal),
            ("1e-1", 0.1, Equal),
            ("0.10000000000000001", 0.1, Greater),
            ("0.09999999999999999", 0.1, Less),
            ("0.1000000000000000055511151231257827", 0.1, Greater),
            ("1", 1.0, Equal),
            ("1.0", 1.0, Equal),
            ("10e-1", 1.0, Equal),
            ("1.0000000000000000000001", 1.0, Greater),
            ("0.9999999999999999999999", 1.0, Less),
            ("500", 500.0, Equal),
            ("5e2", 500.0, Equal),
            ("500.000", 500.0, Equal),
            ("500.000000000000000001", 500.0, Greater),
            ("499.99999999999999999999", 500.0, Less),
            ("0", -0.0, Equal),
            ("-0", -0.0, Equal),
            ("1e-400", -0.0, Greater),
            ("-1e-400", -0.0, Less),
            ("1e308", 1e308, Equal),
            ("1e309", 1e308, Greater),
            ("99999999999999999999e288", 1e308, Less),
            ("1.7976931348623157e308", f64::MAX, Equal),
            (max_exact.as_str(), f64::MAX, Greater),
            ("1e309", f64::MAX, Greater),
            ("-1.7976931348623157e308", f64::MAX, Less),
            ("5e-324", 5e-324, Equal),
            ("0.5e-323", 5e-324, Equal),
            ("4.9406564584124654e-324", 5e-324, Less),
            ("0", 5e-324, Less),
        ] {
            assert_eq!(compare_f64(text, bound), Some(order), "{text} vs {bound:e}");
        }
        for bound in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(compare_f64("1", bound), None);
        }
    }

    /// Whole bounds are written as integers, others by the float formatter:
    /// either way a text compares with a bound as with the bound's shortest
    /// round-trip text.
    #[test]
    fn a_bound_compares_as_its_shortest_text_whole_or_not() {
        let mut bounds = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            9.0e15,
            -9.0e15,
            8_999_999_999_999_998.0,
        ];
        bounds.extend([
            2f64.powi(53),
            2f64.powi(53) + 2.0,
            1e16,
            1e300,
            0.5,
            -2.5,
            1e-7,
        ]);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let whole = (state % 2_000_001) as f64 - 1_000_000.0;
            bounds.extend([whole, whole * 1e9, whole / 8.0, whole * 1e-3]);
        }
        for bound in bounds {
            let shortest = format!("{bound:e}");
            let near = [
                shortest.clone(),
                format!("{}", bound.trunc() as i128),
                format!("{}", (bound.trunc() as i128).saturating_add(1)),
                format!("{}", (bound.trunc() as i128).saturating_sub(1)),
                format!("{}.5", bound.trunc() as i128),
                "0".to_owned(),
                "-0".to_owned(),
                "-0.0".to_owned(),
                "1e400".to_owned(),
                "x".to_owned(),
                // Not numbers (leading zeros, a lone sign), and integers at
                // the edge of the small ones (15 and 16 digits).
                format!("0{}", (bound.trunc() as i128).unsigned_abs()),
                format!("-0{}", (bound.trunc() as i128).unsigned_abs()),
                "-".to_owned(),
                "999999999999999".to_owned(),
                "-999999999999999".to_owned(),
                "1000000000000000".to_owned(),
            ];
            for text in &near {
                assert_eq!(
                    compare_f64(text, bound),
                    Some(compare(text, &shortest)),
                    "{text} vs {shortest}"
                );
                // The small integers' shortcut says what normalizing says.
                assert_eq!(is_integer(text), normalized_is_integer(text), "{text}");
            }
        }
    }

    #[test]
    fn texts_that_are_not_numbers_order_first_without_a_panic() {
        let invalid = [
            "", "-", "01", "-01", "1.", ".5", "1e", "1e+", "+1", "abc", "NaN", "Infinity", "1 ",
            " 1", "1.2.3", "1e5e5", "0x10", "١",
        ];
        for text in invalid {
            assert_eq!(
                compare(text, "-1e999999999999999999999999999999999999999999"),
                Less
            );
            assert_eq!(compare("0", text), Greater);
            assert_eq!(compare(text, text), Equal);
            assert!(!is_integer(text), "{text:?}");
            assert!(!fits_f64(text), "{text:?}");
            assert_eq!(compare_f64(text, 0.0), Some(Less));
        }
        assert_eq!(compare("abc", "abd"), Less);
        assert!(!equal("1.", "1"));
    }
}
