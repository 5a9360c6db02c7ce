//! The repair tier: rewrites almost-JSON into JSON, listing the repairs it made.
//!
//! The rewriter reads the text once, left to right, keeping the open objects and arrays
//! on an explicit stack (nothing recurses), and writes compact JSON. It repairs the
//! outermost document or fails: it never returns a value from inside one. What it fixes
//! (each change is listed, by the [`Repair`] names):
//!
//! * trailing commas, single-quoted and typographic (`“ ” ‘ ’`) strings, unquoted keys (a
//!   bare identifier followed by `:`, which may hold a `-` or a `.`), Python's
//!   `True`/`False`/`None`, `//`, `/* */` and `#` comments, and whitespace JSON does not
//!   allow (a no-break or zero-width space, a byte-order mark) between tokens;
//! * unquoted values: in an object, a member's value that is not JSON (`New York`,
//!   `done-ish`, `10-20`, `1/3`, `NaN`) is the text up to the next comma, closer or line
//!   end, as a string; in an array only `NaN`, `Infinity` and tokens that start like a
//!   number are (a bare word in an array is prose: `[MOOD: calm]` fails);
//! * numbers as models write them: `.25`, `+1`, `1.`, `1e` become `0.25`, `1`, `1.0`, `1`;
//! * `...` and `…` placeholders for omitted items or members (with their comma);
//! * a closer of the wrong kind (`["a", "b"}`) closes the innermost open object or array;
//! * missing commas between members, a missing colon before a key's string value
//!   (`{"a" "x"}`), a string whose closing quote is missing before the next member
//!   (`"a": "x, "b": 1`), `""doubled""` quotes around a value, quotes inside a value
//!   string that do not end it (a quote followed by what cannot follow a string, such as
//!   a letter, a digit or `.`, or by the quote that ends it: `"called "Ada""`; if the
//!   string then runs to the end of the text the guess was wrong and the attempt fails),
//!   escapes JSON does not allow, and raw control characters inside strings;
//! * truncation: at the end of the text a string is closed (less its trailing spaces), a
//!   cut number keeps its complete part (`2.` is `2`, `1.5e` is `1.5`), an unfinished
//!   last member (a key without a value, a dangling comma, a cut-off literal) is dropped,
//!   and the open objects and arrays are closed;
//! * several top-level documents in a row (`{…}{…}`, or separated by prose): the first,
//!   the last or all of them as an array, as [`MultipleValues`] says; separated by
//!   commas (`{…}, {…}`), the items of one array whatever it says;
//! * the text around the document: prose, the lines of the code fence it was read from,
//!   a stray closer after it ([`Repair::SurroundingText`]), comments, a zero-width
//!   space. Only whitespace the strict tier takes around a document needs no repair:
//!   whatever the tier returns lists at least one repair unless it is what the strict
//!   tier reads.
//!
//! It never guesses at prose: a bare word in key position that is not followed by `:`
//! fails, and so does punctuation where a value should be (`"n": @@`).
//!
//! Candidates: the content of the first JSON-like code fence (closed or not), from its
//! first `{` or `[`; then the text from its first `{` or `[`, and from each following
//! `{` after the end of the previous candidate that could not be read, when that end is
//! certain ([`failed_span_end`](super::failed_span_end)); when it is not, no later
//! candidate is tried: a `{` inside a document that failed is one of its inner objects,
//! never the answer. At most [`MAX_ATTEMPTS`] failed starts in all. A candidate that is
//! a value inside a structure by what precedes it
//! ([`inside_a_structure`](super::inside_a_structure)) ends the search, and a document
//! followed by what shows it was part of one ([`continues_after`](super::continues_after))
//! is not taken. After a document, the next `{` or `[` that
//! starts like JSON is tried as a further document. Each attempt is linear and fails as
//! soon as the input cannot be JSON, or once nesting exceeds [`MAX_DEPTH`] (deeper than
//! `serde_json` parses); attempts never read the same text twice but for a bounded
//! look-ahead, so the whole tier is linear in the length of the text.

mod lex;
mod rewriter;

use super::{fence, parse_container, MultipleValues, Repair};
use crate::json::Json;
use lex::{is_word_start, opening_quote, unicode_space_len};
use rewriter::Rewriter;

/// How many start positions in the text may fail (the fence candidate is extra).
pub const MAX_ATTEMPTS: usize = 8;

/// The deepest nesting the rewriter follows; the reader rejects deeper input anyway
/// ([`NESTING_LIMIT`](crate::json::NESTING_LIMIT)).
pub const MAX_DEPTH: usize = crate::json::NESTING_LIMIT;

/// Rewrites the almost-JSON in `text` into a JSON object or array, taking the first of
/// several documents ([`repair_with`] with [`MultipleValues::First`]).
#[cfg(test)]
fn repair(text: &str) -> Option<(Json, Vec<Repair>)> {
    repair_with(text, MultipleValues::First)
}

/// Rewrites the almost-JSON in `text` into a JSON object or array.
///
/// Returns the value and the repairs made (each kind once, in [`Repair`] order), or
/// `None` when no candidate could be rewritten into JSON. The repair list is empty only
/// when the text was already the document, but for whitespace around it (an array of
/// numbers in prose, which the embedded tier does not look for, lists
/// [`Repair::SurroundingText`]).
pub fn repair_with(text: &str, multiple: MultipleValues) -> Option<(Json, Vec<Repair>)> {
    repair_counted(text, multiple, &mut 0)
}

/// [`repair_with`], adding the work done (bytes read, looked at ahead and written) to
/// `steps`: the measure the linear-time test checks.
fn repair_counted(
    text: &str,
    multiple: MultipleValues,
    steps: &mut usize,
) -> Option<(Json, Vec<Repair>)> {
    if let Some(inner) = json_in_string(text) {
        *steps += text.len();
        if let Some(found) = unwrapped(&inner, Repair::JsonInString, multiple, steps) {
            return Some(found);
        }
    }
    if let Some(body) = jsonp_body(text) {
        *steps += text.len() - body.len();
        if let Some(found) = unwrapped(body, Repair::Jsonp, multiple, steps) {
            return Some(found);
        }
    }
    if let Some(block) = fence::blocks(text).find(|block| fence::is_json_info(block.info)) {
        *steps += block.content.len();
        if let Some((value, mut repairs)) = documents(block.content, multiple, steps) {
            // The fence's lines (and any prose around them) are left out.
            repairs.insert(Repair::SurroundingText);
            return Some((value, repairs.to_vec()));
        }
    }
    documents(text, multiple, steps).map(|(value, repairs)| (value, repairs.to_vec()))
}

/// The document in `inner`, the text a wrapper (`kind`) held: read as it is, or
/// repaired; `kind` is listed with the repairs.
fn unwrapped(
    inner: &str,
    kind: Repair,
    multiple: MultipleValues,
    steps: &mut usize,
) -> Option<(Json, Vec<Repair>)> {
    let (value, repairs) = match parse_container::<Json>(inner.trim()) {
        Some(value) => (value, Vec::new()),
        None => repair_counted(inner, multiple, steps)?,
    };
    let mut set = RepairSet::default();
    for repair in repairs {
        set.insert(repair);
    }
    set.insert(kind);
    Some((value, set.to_vec()))
}

/// The arguments of a whole output that is a JSONP call whose first argument
/// starts like a JSON object or array: `callback({...})`, `jQuery3_1.cb([...]);`,
/// with the `/**/` some servers put first. The whole text must end the call
/// (a `)`, then perhaps `;`): a call in prose, or cut off, is not one.
pub(super) fn jsonp_body(text: &str) -> Option<&str> {
    let text = text.trim();
    let text = text.strip_prefix("/**/").map_or(text, str::trim_start);
    let bytes = text.as_bytes();
    let mut at = 0;
    // The callee: identifiers joined by dots.
    loop {
        let start = at;
        while bytes
            .get(at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
        {
            at += 1;
        }
        if at == start || bytes[start].is_ascii_digit() {
            return None;
        }
        if bytes.get(at) != Some(&b'.') {
            break;
        }
        at += 1;
    }
    let arguments = text[at..].trim_start().strip_prefix('(')?;
    let arguments = arguments.strip_suffix(';').unwrap_or(arguments).trim_end();
    let body = arguments.strip_suffix(')')?;
    body.trim_start().starts_with(['{', '[']).then_some(body)
}

/// The text of a whole output that is one JSON string whose text starts like a
/// JSON object or array (`"{\"a\": 1}"`, as a model or a tool that encoded the
/// document twice writes it).
fn json_in_string(text: &str) -> Option<String> {
    let is_string = |text: &str| text.len() >= 2 && text.starts_with('"') && text.ends_with('"');
    let mut inner: String =
        serde_json::from_str(Some(text.trim()).filter(|t| is_string(t))?).ok()?;
    // Encoded more than once: each decoding makes the text shorter.
    while is_string(inner.trim()) {
        inner = serde_json::from_str(inner.trim()).ok()?;
    }
    inner.trim_start().starts_with(['{', '[']).then_some(inner)
}

/// The documents of `text`, combined as `multiple` says, with what leaving out the
/// text around them repairs ([`note_outside`]).
fn documents(text: &str, multiple: MultipleValues, steps: &mut usize) -> Option<(Json, RepairSet)> {
    let bytes = text.as_bytes();
    let mut found: Vec<(Json, RepairSet)> = Vec::new();
    // Where the first document read starts, and where the last one ends.
    let mut span: Option<(usize, usize)> = None;
    let mut failures = 0;
    let mut from = 0;
    while failures < MAX_ATTEMPTS {
        let start = if found.is_empty() {
            // The first document: any `{` or `[` at first, then any `{` after the
            // point where the previous candidate could not be read.
            let rest = &text.as_bytes()[from..];
            let opener = if failures == 0 {
                memchr::memchr2(b'{', b'[', rest)
            } else {
                memchr::memchr(b'{', rest)
            };
            let Some(offset) = opener else {
                *steps += text.len() - from;
                break;
            };
            *steps += offset;
            from + offset
        } else {
            match next_document(text, from, steps) {
                Some(start) => start,
                None => break,
            }
        };
        // A value inside a structure (`"key": {`, `}, {`) is never a document:
        // the structure around it lost its opener or failed.
        if super::inside_a_structure(bytes, start) {
            break;
        }
        if let Some((value, repairs, end)) = attempt(&text[start..], steps) {
            // So is a document followed by a `,`, a `:` or a `]`, unless
            // documents joined by commas follow it.
            let Some((value, repairs, end)) = joined(text, (value, repairs, start + end), steps)
            else {
                break;
            };
            found.push((value, repairs));
            span = Some((span.map_or(start, |(first, _)| first), end));
            from = end;
            if multiple == MultipleValues::First && found.len() > 1 {
                break;
            }
            continue;
        }
        failures += 1;
        // The next candidate starts after the end of the document that failed, when
        // that end is certain; otherwise there is none: a `{` inside it (a nested
        // `meta` or `address` object) is never returned as the whole.
        let Some(end) = super::failed_span_end(bytes, start) else {
            *steps += text.len() - start;
            break;
        };
        *steps += end - start;
        from = end;
    }
    let several = found.len() > 1;
    let (value, mut repairs) = match multiple {
        MultipleValues::First => found.into_iter().next()?,
        MultipleValues::All if several => {
            let mut union = RepairSet::default();
            let values = found
                .into_iter()
                .map(|(value, repairs)| {
                    union.0 |= repairs.0;
                    value
                })
                .collect();
            (Json::Array(values), union)
        }
        // One document is itself, not wrapped.
        MultipleValues::Last | MultipleValues::All => found.pop()?,
    };
    if several {
        repairs.insert(Repair::MultipleValues);
    }
    if let Some((first, last)) = span {
        note_outside(&text[..first], true, &mut repairs);
        *steps += first;
        // Taking the first of several, the search stopped after the second: what
        // follows it was not looked at.
        if !(several && multiple == MultipleValues::First) {
            note_outside(&text[last..], false, &mut repairs);
            *steps += text.len() - last;
        }
    }
    Some((value, repairs))
}

/// The document read from `text` (its value, its repairs and the byte where it ends),
/// with the documents that follow it joined by commas (`{...}, {...}`, as a model
/// writes the items of an array and forgets its brackets): then the array of them,
/// taking a `]` after the last one as the array's closer
/// ([`Repair::CommaSeparatedDocuments`]). `None` when a single document is followed
/// by what shows that it was part of a structure
/// ([`continues_after`](super::continues_after)): one of its inner values.
fn joined(
    text: &str,
    (value, mut repairs, mut end): (Json, RepairSet, usize),
    steps: &mut usize,
) -> Option<(Json, RepairSet, usize)> {
    let bytes = text.as_bytes();
    let past_whitespace = |at: usize| {
        at + bytes[at.min(bytes.len())..]
            .iter()
            .take_while(|byte| byte.is_ascii_whitespace())
            .count()
    };
    let mut items = vec![value];
    loop {
        let comma = past_whitespace(end);
        if bytes.get(comma) != Some(&b',') {
            break;
        }
        let next = past_whitespace(comma + 1);
        *steps += next - end;
        if !matches!(bytes.get(next), Some(b'{' | b'[')) {
            break;
        }
        let Some((item, more, len)) = attempt(&text[next..], steps) else {
            break;
        };
        items.push(item);
        repairs.0 |= more.0;
        end = next + len;
    }
    if items.len() == 1 {
        return (!super::continues_after(bytes, end)).then(|| (items.remove(0), repairs, end));
    }
    let mut after = past_whitespace(end);
    // A comma after the last one, before the missing array's closer or the end.
    if bytes.get(after) == Some(&b',') {
        let closer = past_whitespace(after + 1);
        if matches!(bytes.get(closer), None | Some(b']')) {
            repairs.insert(Repair::TrailingComma);
            (end, after) = (closer, closer);
        }
    }
    if bytes.get(after) == Some(&b']') {
        end = after + 1;
    } else if super::continues_after(bytes, end) {
        return None;
    }
    repairs.insert(Repair::CommaSeparatedDocuments);
    Some((Json::Array(items), repairs, end))
}

/// Notes what leaving out `outside`, text before (`leading`) or after the documents
/// read, repairs: nothing for whitespace the strict tier takes around a document (a
/// byte-order mark too, before it), [`Repair::Comments`] for comments,
/// [`Repair::UnicodeWhitespace`] for other whitespace JSON does not allow (a
/// zero-width space), and [`Repair::SurroundingText`] for anything else: prose, a
/// closer with nothing open to close, a stray code fence.
fn note_outside(outside: &str, leading: bool, repairs: &mut RepairSet) {
    let bytes = outside.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest[0].is_ascii_whitespace() {
            at += 1;
        } else if let Some(len) = unicode_space_len(rest) {
            let taken = outside[at..]
                .chars()
                .next()
                .is_some_and(|c| c.is_whitespace() || leading && c == '\u{feff}');
            if !taken {
                repairs.insert(Repair::UnicodeWhitespace);
            }
            at += len;
        } else if rest.starts_with(b"//") || rest.starts_with(b"#") {
            at += memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            repairs.insert(Repair::Comments);
        } else if rest.starts_with(b"/*") {
            at += rest[2..]
                .windows(2)
                .position(|pair| pair == b"*/")
                .map_or(rest.len(), |end| end + 4);
            repairs.insert(Repair::Comments);
        } else {
            repairs.insert(Repair::SurroundingText);
            return;
        }
    }
}

/// The next `{` or `[` from `from` that starts like a JSON document (`{"`, `{key`, `{}`,
/// `[{`, `["`, `[1`, `[]`, ...), so that prose after a document (`see [1]`, a lone `{`)
/// is not taken for another one.
pub(super) fn next_document(text: &str, from: usize, steps: &mut usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        let offset = memchr::memchr2(b'{', b'[', &bytes[at..])?;
        *steps += offset + 1;
        at += offset;
        let next = bytes[at + 1..]
            .iter()
            .position(|byte| !byte.is_ascii_whitespace())
            .map(|skip| {
                *steps += skip;
                &bytes[at + 1 + skip..]
            })
            .unwrap_or_default();
        let starts_like_json = match bytes[at] {
            b'{' => next
                .first()
                .is_some_and(|&n| matches!(n, b'"' | b'\'' | b'}') || is_word_start(n)),
            _ => next.first().is_some_and(|&n| {
                matches!(n, b'{' | b'[' | b'"' | b'\'' | b']' | b'-') || n.is_ascii_digit()
            }),
        } || opening_quote(next).is_some();
        if starts_like_json {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// Rewrites the value at the start of `source` and parses the result: the value, the
/// repairs and the length read; `None` when it cannot be rewritten into JSON.
fn attempt(source: &str, steps: &mut usize) -> Option<(Json, RepairSet, usize)> {
    let mut rewriter = Rewriter::new(source);
    let ran = rewriter.run();
    // Writing the output and parsing it again are each linear in its length.
    *steps += rewriter.steps + 2 * rewriter.out.len();
    ran.ok()?;
    let end = rewriter.pos;
    let json = String::from_utf8(rewriter.out).ok()?;
    let value = parse_container::<Json>(&json)?;
    Some((value, rewriter.repairs, end))
}

/// The set of repairs made, listed in [`Repair`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RepairSet(u64);

impl RepairSet {
    fn insert(&mut self, repair: Repair) {
        self.0 |= repair.bit();
    }

    fn remove(&mut self, repair: Repair) {
        self.0 &= !repair.bit();
    }

    fn contains(self, repair: Repair) -> bool {
        self.0 & repair.bit() != 0
    }

    fn to_vec(self) -> Vec<Repair> {
        Repair::ALL
            .into_iter()
            .filter(|&repair| self.contains(repair))
            .collect()
    }
}

#[cfg(test)]
mod tests;
