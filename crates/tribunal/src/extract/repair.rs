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

use super::{fence, parse_container, MultipleValues, Repair};
use crate::json::Json;

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

/// The input cannot be rewritten into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fail;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
}

impl Kind {
    fn closer(self) -> u8 {
        match self {
            Kind::Object => b'}',
            Kind::Array => b']',
        }
    }
}

/// Where the rewriter is inside an object or array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Just after the opening bracket.
    Start,
    /// After a comma (or where a missing comma goes): a member must follow.
    AfterComma,
    /// After a key: a colon must follow.
    AfterKey,
    /// After a colon: a value must follow.
    AfterColon,
    /// After a complete member: a comma or the closing bracket must follow.
    AfterValue,
}

/// An open object or array.
#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: Kind,
    state: State,
    /// Output length after the opening bracket or the last complete member: dropping an
    /// unfinished member truncates the output here (its comma is written with it).
    mark: usize,
    has_members: bool,
    /// The member being read follows a comma the rewriter inserted.
    comma_inserted: bool,
}

/// How a string ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StringEnd {
    Closed,
    EndOfText,
    /// Its closing quote was missing: a comma in it was followed by the next member's key
    /// (`"a": "x, "b": 1`). The string ends before that comma, which is read.
    BeforeKey,
}

/// What a string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Key,
    ObjectValue,
    ArrayValue,
}

/// The quote a string was opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Double,
    Single,
    /// `“` or `”`.
    CurlyDouble,
    /// `‘` or `’`.
    CurlySingle,
}

/// The quote opening a string at the start of `rest`, and its length in bytes.
fn opening_quote(rest: &[u8]) -> Option<(Quote, usize)> {
    match rest {
        [b'"', ..] => Some((Quote::Double, 1)),
        [b'\'', ..] => Some((Quote::Single, 1)),
        [0xE2, 0x80, 0x9C | 0x9D, ..] => Some((Quote::CurlyDouble, 3)),
        [0xE2, 0x80, 0x98 | 0x99, ..] => Some((Quote::CurlySingle, 3)),
        _ => None,
    }
}

impl Quote {
    /// The length of the quote at the start of `rest` if it may close such a string.
    fn closing_len(self, rest: &[u8]) -> Option<usize> {
        match (self, rest) {
            (Quote::Double, [b'"', ..]) | (Quote::Single, [b'\'', ..]) => Some(1),
            (Quote::CurlyDouble, [0xE2, 0x80, 0x9C | 0x9D, ..])
            | (Quote::CurlySingle, [0xE2, 0x80, 0x98 | 0x99, ..]) => Some(3),
            _ => None,
        }
    }

    fn repair(self) -> Option<Repair> {
        match self {
            Quote::Double => None,
            Quote::Single => Some(Repair::SingleQuotes),
            Quote::CurlyDouble | Quote::CurlySingle => Some(Repair::TypographicQuotes),
        }
    }
}

/// The length of a `...` (three dots or more) or `…` placeholder at the start of `rest`.
fn placeholder_len(rest: &[u8]) -> Option<usize> {
    if rest.starts_with("…".as_bytes()) {
        return Some(3);
    }
    let dots = rest.iter().take_while(|&&byte| byte == b'.').count();
    (dots >= 3).then_some(dots)
}

/// The length of the number-like token at the start of `rest` (digits, signs,
/// points and exponents, as models write numbers).
fn number_token_len(rest: &[u8]) -> usize {
    rest.iter()
        .take_while(|b| matches!(b, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E'))
        .count()
}

/// `at` moved past the spaces and tabs there (not past a line end).
fn past_blanks(src: &[u8], mut at: usize) -> usize {
    while src.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
        at += 1;
    }
    at
}

/// The length of the whitespace JSON does not allow at the start of `rest`, as
/// models emit it between tokens: a no-break space (U+00A0, U+202F), the spaces
/// U+2000 to U+200A, a zero-width space (U+200B), a line or paragraph separator,
/// U+1680, U+205F, an ideographic space (U+3000) or a byte-order mark (U+FEFF).
fn unicode_space_len(rest: &[u8]) -> Option<usize> {
    match rest {
        [0xC2, 0xA0, ..] => Some(2),
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8B | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..]
        | [0xEF, 0xBB, 0xBF, ..] => Some(3),
        _ => None,
    }
}

/// `at` moved past the whitespace there, ASCII or [`unicode_space_len`]'s.
fn past_spaces(src: &[u8], mut at: usize) -> usize {
    loop {
        if src.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        } else if let Some(len) = unicode_space_len(&src[at.min(src.len())..]) {
            at += len;
        } else {
            return at;
        }
    }
}

/// The end of the bare word (an unquoted key or a literal) that starts at `at`: its
/// word bytes, up to whitespace JSON does not allow (which is not part of it).
fn word_end(src: &[u8], mut at: usize) -> usize {
    while src.get(at).is_some_and(|&b| is_word_byte(b)) && unicode_space_len(&src[at..]).is_none() {
        at += 1;
    }
    at
}

/// Whether a byte may appear in a bare word (an unquoted key or a literal).
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// Whether a byte may start a bare word in value position.
fn is_word_start(byte: u8) -> bool {
    is_word_byte(byte) && !byte.is_ascii_digit()
}

/// The value of one ASCII hex digit.
fn hex_value(byte: u8) -> Option<u16> {
    char::from(byte).to_digit(16).map(|digit| digit as u16)
}

/// How much of a JSON number a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberShape {
    Complete,
    /// A proper prefix of a number (`-`, `1.`, `2e`, `2e+`).
    Prefix,
    Invalid,
}

/// Classifies a token of `0-9 + - . e E` against the JSON number grammar.
fn number_shape(token: &[u8]) -> NumberShape {
    // 0 start, 1 after '-', 2 after a leading '0', 3 integer digits, 4 after '.',
    // 5 fraction digits, 6 after 'e', 7 after the exponent sign, 8 exponent digits.
    let mut state = 0u8;
    for &byte in token {
        state = match (state, byte) {
            (0, b'-') => 1,
            (0 | 1, b'0') => 2,
            (0 | 1, b'1'..=b'9') | (3, b'0'..=b'9') => 3,
            (2 | 3, b'.') => 4,
            (4 | 5, b'0'..=b'9') => 5,
            (2 | 3 | 5, b'e' | b'E') => 6,
            (6, b'+' | b'-') => 7,
            (6..=8, b'0'..=b'9') => 8,
            _ => return NumberShape::Invalid,
        };
    }
    match state {
        2 | 3 | 5 | 8 => NumberShape::Complete,
        _ => NumberShape::Prefix,
    }
}

/// A number token as models write it, rewritten as JSON: a leading `+` dropped, a
/// missing integer part (`.25`) or fraction digit (`1.`) supplied, an exponent without
/// digits (`1e`, `1e+`) dropped. `None` when the token is not such a number (`10-20`,
/// `1.2.3`, a lone `-`, leading zeros).
fn fixed_number(token: &[u8]) -> Option<String> {
    fn digits(rest: &[u8]) -> usize {
        rest.iter().take_while(|byte| byte.is_ascii_digit()).count()
    }
    let mut fixed = String::new();
    let mut rest = token;
    match rest.first() {
        Some(b'+') => rest = &rest[1..],
        Some(b'-') => {
            fixed.push('-');
            rest = &rest[1..];
        }
        _ => {}
    }
    let int = &rest[..digits(rest)];
    rest = &rest[int.len()..];
    if int.len() > 1 && int[0] == b'0' {
        return None;
    }
    let mut fraction: Option<&[u8]> = None;
    if rest.first() == Some(&b'.') {
        let n = digits(&rest[1..]);
        fraction = Some(&rest[1..=n]);
        rest = &rest[1 + n..];
    }
    if int.is_empty() && fraction.is_none_or(<[u8]>::is_empty) {
        return None;
    }
    let mut exponent: &[u8] = &[];
    if matches!(rest.first(), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(rest.get(1), Some(b'+' | b'-')));
        let n = digits(&rest[1 + sign..]);
        if n > 0 {
            exponent = &rest[1..=sign + n];
        }
        rest = &rest[1 + sign + n..];
    }
    if !rest.is_empty() {
        return None;
    }
    let ascii = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    if int.is_empty() {
        fixed.push('0');
    } else {
        fixed.push_str(&ascii(int));
    }
    match fraction {
        Some(digits) if !digits.is_empty() => {
            fixed.push('.');
            fixed.push_str(&ascii(digits));
        }
        Some(_) => fixed.push_str(".0"),
        None => {}
    }
    if !exponent.is_empty() {
        fixed.push('e');
        fixed.push_str(&ascii(exponent));
    }
    Some(fixed)
}

/// The single-pass rewriter.
#[derive(Debug)]
struct Rewriter<'a> {
    src: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    repairs: RepairSet,
    stack: Vec<Frame>,
    /// Bytes read or looked at ahead, for the linear-time test.
    steps: usize,
    /// The string being read is in doubled quotes (`""text""`): its first closing
    /// quote ends it.
    doubled: bool,
}

impl<'a> Rewriter<'a> {
    fn new(source: &'a str) -> Self {
        Rewriter {
            src: source.as_bytes(),
            pos: 0,
            out: Vec::with_capacity(source.len().min(1 << 16)),
            repairs: RepairSet::default(),
            stack: Vec::new(),
            steps: 0,
            doubled: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn note(&mut self, repair: Repair) {
        self.repairs.insert(repair);
    }

    fn top(&mut self) -> &mut Frame {
        self.stack
            .last_mut()
            .expect("the rewriter only reads members inside an open object or array")
    }

    /// Rewrites the top-level object or array at the start of the source.
    fn run(&mut self) -> Result<(), Fail> {
        self.skip_trivia();
        match self.peek() {
            Some(byte @ (b'{' | b'[')) => self.open(byte)?,
            _ => return Err(Fail),
        }
        while !self.stack.is_empty() {
            self.steps += 1;
            self.skip_trivia();
            let Some(byte) = self.peek() else {
                self.finish();
                break;
            };
            let frame = *self.top();
            let is_closer = byte == b'}' || byte == b']';
            match frame.state {
                State::Start | State::AfterComma => {
                    if is_closer {
                        if frame.state == State::AfterComma {
                            self.note(Repair::TrailingComma);
                        }
                        self.closer(byte);
                    } else {
                        self.member(byte)?;
                    }
                }
                State::AfterKey => {
                    if byte == b':' {
                        self.pos += 1;
                        self.out.push(b':');
                        self.top().state = State::AfterColon;
                    } else if is_closer || byte == b',' {
                        // A key without a value (`{"a": 1, "b"}`).
                        self.drop_member();
                    } else if self.colon_is_missing() {
                        self.out.push(b':');
                        self.note(Repair::MissingColon);
                        self.top().state = State::AfterColon;
                    } else {
                        return Err(Fail);
                    }
                }
                State::AfterColon => {
                    if is_closer || byte == b',' {
                        // A colon without a value (`{"a": 1, "b": }`).
                        self.drop_member();
                    } else {
                        self.value(byte)?;
                    }
                }
                State::AfterValue => {
                    if is_closer {
                        self.closer(byte);
                    } else if byte == b',' {
                        self.pos += 1;
                        self.top().state = State::AfterComma;
                    } else if matches!(byte, b'"' | b'\'' | b'{' | b'[' | b'-' | b'.' | b'+')
                        || is_word_byte(byte)
                    {
                        let top = self.top();
                        top.state = State::AfterComma;
                        top.comma_inserted = true;
                    } else {
                        return Err(Fail);
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a string at the current position, after a key, is that key's value whose
    /// colon is missing (`{"a" "x"}`): it is not itself a key (`{"a" "b": 1}`). Only a
    /// string is taken for such a value; anything else after a key fails.
    fn colon_is_missing(&mut self) -> bool {
        opening_quote(&self.src[self.pos..]).is_some() && !self.key_follows(self.pos)
    }

    /// Reads the closer at the current position: it closes the innermost open object or
    /// array, whichever kind it is (`["a", "b"}` is an array).
    fn closer(&mut self, byte: u8) {
        if byte != self.top().kind.closer() {
            self.note(Repair::MismatchedBrackets);
        }
        self.pos += 1;
        self.close();
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) {
        loop {
            let start = self.pos;
            loop {
                if self.peek().is_some_and(|byte| byte.is_ascii_whitespace()) {
                    self.pos += 1;
                } else if let Some(len) = unicode_space_len(&self.src[self.pos..]) {
                    self.pos += len;
                    self.note(Repair::UnicodeWhitespace);
                } else {
                    break;
                }
            }
            let rest = &self.src[self.pos..];
            if rest.starts_with(b"//") || rest.starts_with(b"#") {
                let line = rest
                    .iter()
                    .position(|&byte| byte == b'\n')
                    .unwrap_or(rest.len());
                // A "comment" that opens more objects or arrays than it closes
                // (`#"meta": {`) is a stray character before a member, not a
                // comment: read as one, the member's inner object would be taken
                // for the members of the object around it.
                let opens = rest[..line]
                    .iter()
                    .filter(|&&byte| byte == b'{' || byte == b'[')
                    .count();
                let closes = rest[..line]
                    .iter()
                    .filter(|&&byte| byte == b'}' || byte == b']')
                    .count();
                if opens > closes {
                    self.steps += self.pos - start + line;
                    return;
                }
                self.pos += line;
            } else if rest.starts_with(b"/*") {
                self.pos += rest[2..]
                    .windows(2)
                    .position(|pair| pair == b"*/")
                    .map_or(rest.len(), |at| at + 4);
            } else {
                self.steps += self.pos - start;
                return;
            }
            self.steps += self.pos - start;
            self.note(Repair::Comments);
        }
    }

    /// Opens a nested object or array at the current position.
    fn open(&mut self, byte: u8) -> Result<(), Fail> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Fail);
        }
        self.pos += 1;
        self.out.push(byte);
        self.stack.push(Frame {
            kind: if byte == b'{' {
                Kind::Object
            } else {
                Kind::Array
            },
            state: State::Start,
            mark: self.out.len(),
            has_members: false,
            comma_inserted: false,
        });
        Ok(())
    }

    /// Writes the closing bracket of the innermost container and completes it as a value.
    fn close(&mut self) {
        let frame = self.stack.pop().expect("close needs an open container");
        self.out.push(frame.kind.closer());
        self.complete_value();
    }

    /// Records that the innermost container's current member is complete.
    fn complete_value(&mut self) {
        let out_len = self.out.len();
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        frame.state = State::AfterValue;
        frame.mark = out_len;
        frame.has_members = true;
        if frame.comma_inserted {
            frame.comma_inserted = false;
            self.note(Repair::MissingComma);
        }
    }

    /// Drops the unfinished member the text ends in.
    fn drop_member(&mut self) {
        let frame = self.top();
        let mark = frame.mark;
        frame.state = if frame.has_members {
            State::AfterValue
        } else {
            State::Start
        };
        frame.comma_inserted = false;
        self.out.truncate(mark);
        self.note(Repair::DroppedIncompleteMember);
    }

    /// Closes everything still open at the end of the text.
    fn finish(&mut self) {
        while let Some(frame) = self.stack.last() {
            match frame.state {
                State::Start | State::AfterValue => {}
                State::AfterComma => self.note(Repair::DroppedIncompleteMember),
                State::AfterKey | State::AfterColon => self.drop_member(),
            }
            self.note(Repair::ClosedBrackets);
            self.close();
        }
    }

    /// Starts a member of the innermost container: a key in an object, a value in an
    /// array, or a placeholder standing for omitted ones.
    fn member(&mut self, byte: u8) -> Result<(), Fail> {
        if byte == b',' {
            return Err(Fail);
        }
        if let Some(len) = placeholder_len(&self.src[self.pos..]) {
            self.pos += len;
            self.note(Repair::Placeholders);
            self.skip_trivia();
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                // The comma before the placeholder was its own: not a trailing comma.
                let top = self.top();
                if top.has_members {
                    top.state = State::AfterValue;
                    top.comma_inserted = false;
                }
            }
            return Ok(());
        }
        let frame = *self.top();
        if frame.has_members {
            self.out.push(b',');
        }
        match frame.kind {
            Kind::Object => self.key(byte),
            Kind::Array => self.value(byte),
        }
    }

    /// Reads a key, quoted or bare.
    fn key(&mut self, byte: u8) -> Result<(), Fail> {
        if let Some((quote, _)) = opening_quote(&self.src[self.pos..]) {
            match self.string(quote, Role::Key)? {
                StringEnd::EndOfText => self.drop_member(),
                StringEnd::Closed | StringEnd::BeforeKey => self.top().state = State::AfterKey,
            }
            return Ok(());
        }
        if !is_word_byte(byte) {
            return Err(Fail);
        }
        let start = self.pos;
        // A key's word may hold a `-` or a `.` after its first byte (`user-id`, `a.b`).
        loop {
            self.pos = word_end(self.src, self.pos);
            let joined = matches!(self.peek(), Some(b'-' | b'.'))
                && self.src.get(self.pos + 1).is_some_and(|&b| is_word_byte(b));
            if !joined {
                break;
            }
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        let after = past_spaces(self.src, self.pos);
        self.steps += after - start;
        match self.src.get(after) {
            Some(b':') => {
                self.out.push(b'"');
                self.out.extend_from_slice(word);
                self.out.push(b'"');
                self.note(Repair::UnquotedKeys);
                self.top().state = State::AfterKey;
                Ok(())
            }
            // A bare word cut off by the end of the text is only taken for a truncated key
            // when the object already holds a member: `{partial` is prose, not JSON.
            None if self.top().has_members => {
                self.pos = after;
                self.drop_member();
                Ok(())
            }
            _ => Err(Fail),
        }
    }

    /// Reads a value.
    fn value(&mut self, byte: u8) -> Result<(), Fail> {
        let in_object = self.top().kind == Kind::Object;
        let rest = &self.src[self.pos..];
        if in_object && placeholder_len(rest).is_some() {
            // `"a": ...` keeps the placeholder as the value's text.
            return self.unquoted(self.pos);
        }
        if let Some((quote, _)) = opening_quote(rest) {
            let doubled = self.doubled_quotes();
            if doubled {
                self.note(Repair::DoubledQuotes);
                self.pos += 1;
            }
            let role = if in_object {
                Role::ObjectValue
            } else {
                Role::ArrayValue
            };
            self.doubled = doubled;
            let end = self.string(quote, role);
            self.doubled = false;
            let mut end = end?;
            if end == StringEnd::Closed {
                if doubled && self.peek() == Some(b'"') {
                    self.pos += 1;
                }
                end = self.concatenated(role)?;
            }
            match end {
                StringEnd::Closed => {}
                StringEnd::EndOfText => {
                    self.out.push(b'"');
                    self.note(Repair::ClosedString);
                }
                StringEnd::BeforeKey => {
                    self.complete_value();
                    self.top().state = State::AfterComma;
                    return Ok(());
                }
            }
            self.complete_value();
            return Ok(());
        }
        match byte {
            b'{' | b'[' => self.open(byte),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(),
            _ if is_word_start(byte) => self.literal(in_object),
            _ => Err(Fail),
        }
    }

    /// Whether the value at the current position is in doubled quotes (`""text""`): two
    /// quotes, a word, and on the same line the next quote doubled too. A value that
    /// only starts with a quoted word (`""quoted" first"`) is not.
    fn doubled_quotes(&mut self) -> bool {
        let rest = &self.src[self.pos..];
        if !(rest.starts_with(b"\"\"") && rest.get(2).is_some_and(|&b| is_word_byte(b))) {
            return false;
        }
        let Some(len) = rest[2..].iter().position(|&b| b == b'"' || b == b'\n') else {
            return false;
        };
        self.steps += len;
        rest[2..].get(len..len + 2) == Some(b"\"\"")
    }

    /// After a value string closed: strings joined to it with `+` (`"a" + "b"`,
    /// across lines too) are read into it, as one string. Returns how the last
    /// one ended ([`StringEnd::Closed`] when none follows).
    fn concatenated(&mut self, role: Role) -> Result<StringEnd, Fail> {
        loop {
            let src = self.src;
            let mut at = self.pos;
            while src.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            if src.get(at) != Some(&b'+') {
                return Ok(StringEnd::Closed);
            }
            at += 1;
            while src.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            let Some((quote, _)) = opening_quote(&src[at..]) else {
                return Ok(StringEnd::Closed);
            };
            self.steps += at - self.pos;
            self.pos = at;
            self.note(Repair::StringConcatenation);
            // The first string's closing quote and the next one's opening quote go.
            debug_assert_eq!(self.out.last(), Some(&b'"'));
            self.out.pop();
            let opening = self.out.len();
            let end = self.string(quote, role)?;
            self.out.remove(opening);
            if end != StringEnd::Closed {
                return Ok(end);
            }
        }
    }

    /// Whether a token ends at `at`: the end of the text, whitespace, a comma, a
    /// bracket, a quote or a comment.
    fn token_ends(&self, at: usize) -> bool {
        let rest = &self.src[at..];
        match rest.first() {
            None => true,
            Some(&byte) => {
                byte.is_ascii_whitespace()
                    || unicode_space_len(rest).is_some()
                    || matches!(byte, b',' | b'}' | b']' | b'{' | b'[' | b'"' | b'\'' | b'#')
                    || rest.starts_with(b"//")
                    || rest.starts_with(b"/*")
            }
        }
    }

    fn number(&mut self) -> Result<(), Fail> {
        let start = self.pos;
        self.pos += number_token_len(&self.src[start..]);
        self.steps += self.pos - start;
        if !self.token_ends(self.pos) {
            // Glued to more text: `1/3`, `10:30`, `-Infinity`, `3rd`.
            return self.unquoted(start);
        }
        let token = &self.src[start..self.pos];
        if number_shape(token) == NumberShape::Complete {
            self.out.extend_from_slice(token);
        } else if let Some(fixed) = fixed_number(token) {
            // `.25`, `+1`, `1.`, `1e`; at the end of the text, a cut `2.` or `1.5e`.
            self.out.extend_from_slice(fixed.as_bytes());
            self.note(Repair::NumberFormat);
        } else if self.pos == self.src.len() {
            // A lone `-` or `+` cut off by the end of the text.
            self.drop_member();
            return Ok(());
        } else {
            // `10-20`, `0..5`, `1.2.3`.
            return self.unquoted(start);
        }
        self.complete_value();
        Ok(())
    }

    fn literal(&mut self, in_object: bool) -> Result<(), Fail> {
        const LITERALS: [(&[u8], &[u8]); 6] = [
            (b"true", b"true"),
            (b"false", b"false"),
            (b"null", b"null"),
            (b"True", b"true"),
            (b"False", b"false"),
            (b"None", b"null"),
        ];
        let start = self.pos;
        self.pos = word_end(self.src, self.pos);
        self.steps += self.pos - start;
        if self.shell_type(start) {
            return Ok(());
        }
        let word = &self.src[start..self.pos];
        let at_end = self.pos == self.src.len();
        if at_end || self.token_ends(self.pos) {
            if let Some(&(written, json)) = LITERALS.iter().find(|(written, _)| *written == word) {
                if written != json {
                    self.note(Repair::PythonLiterals);
                }
                self.out.extend_from_slice(json);
                self.complete_value();
                return Ok(());
            }
        }
        let truncated = at_end
            && LITERALS
                .iter()
                .any(|(written, _)| written.starts_with(word));
        if truncated {
            self.drop_member();
            Ok(())
        } else if in_object || word == b"NaN" || word == b"Infinity" {
            self.unquoted(start)
        } else {
            Err(Fail)
        }
    }

    /// A MongoDB shell type whose name was just read (from `start`; `new
    /// Date(...)` too) with one string or number argument, written as that value
    /// (a string for `ObjectId`, `ISODate`, `Date`, `UUID`; a number for
    /// `NumberLong`, `NumberInt`, `NumberDecimal`, `Int32`, `Long`, `Double`,
    /// `Decimal128`). Reads nothing and returns false for anything else.
    fn shell_type(&mut self, start: usize) -> bool {
        const STRINGS: [&[u8]; 5] = [b"ObjectId", b"ObjectID", b"ISODate", b"Date", b"UUID"];
        const NUMBERS: [&[u8]; 7] = [
            b"NumberLong",
            b"NumberInt",
            b"NumberDecimal",
            b"Int32",
            b"Long",
            b"Double",
            b"Decimal128",
        ];
        let src = self.src;
        let mut name = &src[start..self.pos];
        let mut at = self.pos;
        if name == b"new" {
            let from = past_blanks(src, at);
            let end = from + src[from..].iter().take_while(|&&b| is_word_byte(b)).count();
            name = &src[from..end];
            at = end;
        }
        let is_string = STRINGS.contains(&name);
        if !is_string && !NUMBERS.contains(&name) || src.get(at) != Some(&b'(') {
            return false;
        }
        at = past_blanks(src, at + 1);
        // The argument: a quoted text without escapes on one line, or a number.
        let (text, quoted, end) = match src.get(at) {
            Some(&quote @ (b'"' | b'\'')) => {
                let body = at + 1;
                let Some(len) = src[body..]
                    .iter()
                    .position(|&b| b == quote || b == b'\\' || b == b'\n')
                else {
                    return false;
                };
                if src[body + len] != quote {
                    return false;
                }
                (&src[body..body + len], true, body + len + 1)
            }
            Some(b'-' | b'+' | b'.' | b'0'..=b'9') => {
                let len = number_token_len(&src[at..]);
                (&src[at..at + len], false, at + len)
            }
            _ => return false,
        };
        let close = past_blanks(src, end);
        if src.get(close) != Some(&b')') {
            return false;
        }
        let value = if is_string {
            let Ok(text) = std::str::from_utf8(text) else {
                return false;
            };
            let Ok(quoted) = serde_json::to_string(text) else {
                return false;
            };
            quoted
        } else {
            let text = if quoted { text.trim_ascii() } else { text };
            if number_shape(text) == NumberShape::Complete {
                String::from_utf8_lossy(text).into_owned()
            } else if let Some(fixed) = fixed_number(text) {
                fixed
            } else {
                return false;
            }
        };
        self.out.extend_from_slice(value.as_bytes());
        self.steps += close + 1 - self.pos;
        self.pos = close + 1;
        self.note(Repair::MongoShellTypes);
        self.complete_value();
        true
    }

    /// Writes the unquoted value at `start` as a string: the text up to the next comma,
    /// closer or line end (or the end of the text), less the whitespace around it.
    fn unquoted(&mut self, start: usize) -> Result<(), Fail> {
        let rest = &self.src[start..];
        let len = rest
            .iter()
            .position(|&byte| matches!(byte, b',' | b'}' | b']' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
        self.steps += len;
        let text = std::str::from_utf8(&rest[..len])
            .map_err(|_| Fail)?
            .trim_end();
        if text.is_empty() {
            return Err(Fail);
        }
        let quoted = serde_json::to_string(text).map_err(|_| Fail)?;
        self.out.extend_from_slice(quoted.as_bytes());
        self.pos = start + len;
        self.note(Repair::UnquotedValues);
        self.complete_value();
        Ok(())
    }

    /// Whether the quote at `at` opens the next item of an array: a quoted string
    /// on one line followed by `,`, `]` or the end of the text.
    fn item_follows(&mut self, at: usize) -> bool {
        self.after_short_string(at)
            .is_some_and(|rest| matches!(rest.first(), None | Some(b',' | b']')))
    }

    /// Whether the quote at `at` opens a key: a quoted string on one line followed by `:`.
    fn key_follows(&mut self, at: usize) -> bool {
        self.after_short_string(at)
            .is_some_and(|rest| rest.first() == Some(&b':'))
    }

    /// The text after the quoted string that the quote at `at` opens and the
    /// spaces after it (empty at the end of the text), when that string ends on
    /// its line before any comma, bracket, colon or backslash; `None` otherwise.
    fn after_short_string(&mut self, at: usize) -> Option<&'a [u8]> {
        let (quote, len) = opening_quote(&self.src[at..])?;
        let mut i = at + len;
        while i < self.src.len() {
            self.steps += 1;
            if let Some(close) = quote.closing_len(&self.src[i..]) {
                let after = past_blanks(self.src, i + close);
                self.steps += after - i;
                return Some(&self.src[after.min(self.src.len())..]);
            }
            if matches!(
                self.src[i],
                b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b':' | b'\\'
            ) {
                return None;
            }
            i += 1;
        }
        None
    }

    /// Copies a string opened by `quote` (at the current position) as a JSON string.
    ///
    /// At the end of the text the string is left open (without its closing quote, and
    /// without its trailing spaces in a value). In a value (not in a key) a quote
    /// followed by a letter or digit is taken for a quote inside the string; should the
    /// string then run to the end of the text, that guess was likely wrong, and the
    /// attempt fails. In an object's value, a comma followed by the next member's key
    /// (`"a": "x, "b": 1`) ends a string whose closing quote is missing.
    fn string(&mut self, quote: Quote, role: Role) -> Result<StringEnd, Fail> {
        let mut guessed_inner_quote = false;
        if let Some(repair) = quote.repair() {
            self.note(repair);
        }
        let (_, open_len) = opening_quote(&self.src[self.pos..]).expect("a quote opens the string");
        self.pos += open_len;
        self.out.push(b'"');
        let content_start = self.out.len();
        let string_start = self.pos;
        let had_control = self.repairs.contains(Repair::ControlCharacters);
        // The output length before a comma in the string followed by whitespace only.
        let mut comma_mark: Option<usize> = None;
        while let Some(byte) = self.peek() {
            self.steps += 1;
            if let Some(len) = quote.closing_len(&self.src[self.pos..]) {
                let next_begins = comma_mark.is_some()
                    && match role {
                        Role::ObjectValue => self.key_follows(self.pos),
                        Role::ArrayValue => self.item_follows(self.pos),
                        Role::Key => false,
                    };
                if next_begins {
                    self.out.truncate(comma_mark.unwrap_or(content_start));
                    self.out.push(b'"');
                    self.note(Repair::MissingQuote);
                    return Ok(StringEnd::BeforeKey);
                }
                self.pos += len;
                if role != Role::Key && self.quote_is_inside(quote) {
                    guessed_inner_quote = true;
                    self.note(Repair::UnescapedQuotes);
                    if quote == Quote::Double {
                        self.out.extend_from_slice(b"\\\"");
                    } else {
                        self.out
                            .extend_from_slice(&self.src[self.pos - len..self.pos]);
                    }
                    comma_mark = None;
                    continue;
                }
                self.out.push(b'"');
                return Ok(StringEnd::Closed);
            }
            match byte {
                b'"' => {
                    self.pos += 1;
                    self.out.extend_from_slice(b"\\\"");
                    comma_mark = None;
                }
                b'\\' => {
                    comma_mark = None;
                    if self.escape(quote == Quote::Single) == StringEnd::EndOfText {
                        break;
                    }
                }
                0x00..=0x1f => {
                    self.pos += 1;
                    self.note(Repair::ControlCharacters);
                    match byte {
                        b'\n' => self.out.extend_from_slice(b"\\n"),
                        b'\r' => self.out.extend_from_slice(b"\\r"),
                        b'\t' => self.out.extend_from_slice(b"\\t"),
                        0x08 => self.out.extend_from_slice(b"\\b"),
                        0x0c => self.out.extend_from_slice(b"\\f"),
                        _ => self
                            .out
                            .extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
                    }
                    if !matches!(byte, b'\n' | b'\r' | b'\t') {
                        comma_mark = None;
                    }
                }
                _ => {
                    self.pos += 1;
                    if byte == b',' {
                        comma_mark = Some(self.out.len());
                    } else if byte != b' ' {
                        comma_mark = None;
                    }
                    self.out.push(byte);
                }
            }
        }
        if guessed_inner_quote {
            return Err(Fail);
        }
        if role != Role::Key {
            if self.closed_before_final_closers(string_start, content_start, had_control) {
                return Ok(StringEnd::Closed);
            }
            self.trim_cut_string(content_start);
        }
        Ok(StringEnd::EndOfText)
    }

    /// A string that ran to the end of the text (from `string_start`; its text
    /// written from `content_start`) into the closers that end the document
    /// ([`closers_at_end`](Self::closers_at_end)): closed before them, which are
    /// then read as closers. `had_control`: a control character had been
    /// escaped before this string. Returns false, changing nothing, otherwise.
    fn closed_before_final_closers(
        &mut self,
        string_start: usize,
        content_start: usize,
        had_control: bool,
    ) -> bool {
        let Some(run) = self.closers_at_end() else {
            return false;
        };
        // Each byte of the run was written into the string as one byte, or as a
        // two-byte escape.
        let tail = &self.src[self.src.len() - run..];
        let written: usize = tail
            .iter()
            .map(|b| {
                if matches!(b, b'\n' | b'\r' | b'\t') {
                    2
                } else {
                    1
                }
            })
            .sum();
        self.out.truncate(self.out.len() - written);
        let own = &self.src[string_start..self.src.len() - run];
        if !had_control && !own.iter().any(|&b| b < 0x20) {
            self.repairs.remove(Repair::ControlCharacters);
        }
        self.trim_cut_string(content_start);
        self.out.push(b'"');
        self.pos = self.src.len() - run;
        self.note(Repair::UnterminatedString);
        true
    }

    /// A string cut short (its text written from `content_start`) loses its
    /// trailing spaces, as the common repairers do.
    fn trim_cut_string(&mut self, content_start: usize) {
        while self.out.len() > content_start && self.out.last() == Some(&b' ') {
            self.out.pop();
        }
    }

    /// The bytes at the end of the text that close every open container from
    /// the innermost out, or the innermost few (`]`, `]}`, `] \n }`, with
    /// whitespace around): the closers a string left open ran into (`["a",
    /// "b]`). `None` when the text does not end so.
    fn closers_at_end(&self) -> Option<usize> {
        let src = self.src;
        let is_space = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
        let mut start = src.len();
        while start > 0 && (is_space(src[start - 1]) || matches!(src[start - 1], b']' | b'}')) {
            start -= 1;
        }
        let mut depth = self.stack.len();
        let mut first = None;
        for (at, &byte) in src.iter().enumerate().skip(start) {
            if is_space(byte) {
                continue;
            }
            if depth == 0 || self.stack[depth - 1].kind.closer() != byte {
                return None;
            }
            depth -= 1;
            first.get_or_insert(at);
        }
        first.map(|at| src.len() - at)
    }

    /// Whether the quote just read (a `quote`) sits inside the string rather than ending
    /// it. It does when it is followed on the same line, after any spaces, by what can
    /// never follow the end of a string in JSON (a letter, a digit, a non-ASCII
    /// character, punctuation such as `.` or `!`: anything but a comma, a colon, a
    /// bracket, a quote, a `+` or a comment), unless what follows is a whole literal or
    /// number (`"a" true]`: a missing comma); or when it is followed at once by
    /// another quote that is followed by a comma, a colon, a closer, a line end or the
    /// end of the text (`"called "Ada""`: that one ends the string).
    fn quote_is_inside(&mut self, quote: Quote) -> bool {
        let rest = &self.src[self.pos..];
        let skip = past_spaces(rest, 0);
        self.steps += skip;
        if rest[..skip].contains(&b'\n') {
            return false;
        }
        let next = &rest[skip..];
        let Some(&first) = next.first() else {
            return false;
        };
        if let Some(len) = quote
            .closing_len(next)
            .filter(|_| skip == 0 && !self.doubled)
        {
            let after = past_blanks(next, len);
            self.steps += after;
            return next
                .get(after)
                .is_none_or(|&byte| matches!(byte, b',' | b':' | b'}' | b']' | b'\n' | b'\r'));
        }
        let comment = next.starts_with(b"//") || next.starts_with(b"/*");
        if comment
            || matches!(
                first,
                b',' | b':' | b'}' | b']' | b'{' | b'[' | b'"' | b'\'' | b'+' | b'#'
            )
        {
            return false;
        }
        let word_len = next
            .iter()
            .position(|&byte| !(is_word_byte(byte) || matches!(byte, b'.' | b'-' | b'+')))
            .unwrap_or(next.len());
        self.steps += word_len;
        let word = &next[..word_len];
        let delimited = next
            .get(word_len)
            .is_none_or(|&byte| byte.is_ascii_whitespace() || matches!(byte, b',' | b']' | b'}'));
        let value = matches!(
            word,
            b"true" | b"false" | b"null" | b"True" | b"False" | b"None"
        ) || number_shape(word) == NumberShape::Complete;
        !(delimited && value)
    }

    /// Copies the escape at the current position (a backslash) inside a string, opened
    /// by a single quote when `single` (where `\'` is a valid escape). Returns
    /// [`StringEnd::EndOfText`] when the text ends inside the escape, which is then
    /// dropped.
    fn escape(&mut self, single: bool) -> StringEnd {
        let Some(&next) = self.src.get(self.pos + 1) else {
            self.pos = self.src.len();
            return StringEnd::EndOfText;
        };
        match next {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.out.push(b'\\');
                self.out.push(next);
                self.pos += 2;
            }
            b'\'' => {
                if !single {
                    self.note(Repair::InvalidEscapes);
                }
                self.out.push(b'\'');
                self.pos += 2;
            }
            b'u' => return self.unicode_escape(),
            _ => self.literal_backslash(),
        }
        StringEnd::Closed
    }

    /// Writes the current backslash as a literal backslash; what follows is read as text.
    fn literal_backslash(&mut self) {
        self.note(Repair::InvalidEscapes);
        self.out.extend_from_slice(b"\\\\");
        self.pos += 1;
    }

    /// Reads `\uXXXX` at `at`: the code unit, `Err(true)` when the text ends inside it
    /// (every byte present fits), `Err(false)` when it is not such an escape.
    fn code_unit(&self, at: usize) -> Result<u16, bool> {
        let rest = &self.src[at.min(self.src.len())..];
        let mut unit = 0u16;
        for (i, pattern) in [b'\\', b'u', 0, 0, 0, 0].into_iter().enumerate() {
            let Some(&byte) = rest.get(i) else {
                return Err(true);
            };
            if i < 2 {
                if byte != pattern {
                    return Err(false);
                }
            } else {
                unit = unit * 16 + hex_value(byte).ok_or(false)?;
            }
        }
        Ok(unit)
    }

    /// Copies the `\u` escape at the current position, pairing surrogates.
    fn unicode_escape(&mut self) -> StringEnd {
        let unit = match self.code_unit(self.pos) {
            Ok(unit) => unit,
            Err(true) => {
                self.pos = self.src.len();
                return StringEnd::EndOfText;
            }
            Err(false) => {
                self.literal_backslash();
                return StringEnd::Closed;
            }
        };
        match unit {
            0xD800..=0xDBFF => match self.code_unit(self.pos + 6) {
                Ok(0xDC00..=0xDFFF) => {
                    self.out
                        .extend_from_slice(&self.src[self.pos..self.pos + 12]);
                    self.pos += 12;
                }
                Err(true) => {
                    self.pos = self.src.len();
                    return StringEnd::EndOfText;
                }
                _ => self.replacement_character(),
            },
            0xDC00..=0xDFFF => self.replacement_character(),
            _ => {
                self.out
                    .extend_from_slice(&self.src[self.pos..self.pos + 6]);
                self.pos += 6;
            }
        }
        StringEnd::Closed
    }

    /// Replaces the lone surrogate escape at the current position with U+FFFD.
    fn replacement_character(&mut self) {
        self.note(Repair::InvalidEscapes);
        self.out.extend_from_slice(b"\\ufffd");
        self.pos += 6;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    /// Repairs `text`, expecting success.
    fn fixed(text: &str) -> (Json, Vec<Repair>) {
        repair(text).unwrap_or_else(|| panic!("no repair for {text:?}"))
    }

    #[track_caller]
    fn check(text: &str, expected: &Json, repairs: &[Repair]) {
        let (value, made) = fixed(text);
        assert_eq!(&value, expected, "value for {text:?}");
        assert_eq!(made, repairs, "repairs for {text:?}");
    }

    use Repair::{
        ClosedBrackets, ClosedString, CommaSeparatedDocuments, Comments, ControlCharacters,
        DoubledQuotes, DroppedIncompleteMember, InvalidEscapes, JsonInString, Jsonp,
        MismatchedBrackets, MissingColon, MissingComma, MissingQuote, MongoShellTypes,
        NumberFormat, Placeholders, PythonLiterals, SingleQuotes, StringConcatenation,
        SurroundingText, TrailingComma, TypographicQuotes, UnescapedQuotes, UnicodeWhitespace,
        UnquotedKeys, UnquotedValues, UnterminatedString,
    };
    #[allow(non_upper_case_globals)]
    const MultipleValuesRepair: Repair = Repair::MultipleValues;

    #[test]
    fn valid_json_needs_no_repair() {
        check(
            "{\"a\": [1, -2.5e3, true, null, \"x\"], \"b\": {}}",
            // Numbers are kept as written.
            &serde_json::from_str::<Json>(r#"{"a": [1, -2.5e3, true, null, "x"], "b": {}}"#)
                .unwrap(),
            &[],
        );
        check("[1, 2]", &json!([1, 2]), &[]);
    }

    #[test]
    fn trailing_commas() {
        check("{\"a\": 1,}", &json!({"a": 1}), &[TrailingComma]);
        check("[1, 2, ]", &json!([1, 2]), &[TrailingComma]);
        check(
            "{\"a\": [1,\n], \"b\": {\"c\": 2,},\n}",
            &json!({"a": [1], "b": {"c": 2}}),
            &[TrailingComma],
        );
    }

    #[test]
    fn single_quotes() {
        check(
            r#"{'a': 'it\'s', 'b': 'say "hi"'}"#,
            &json!({"a": "it's", "b": "say \"hi\""}),
            &[SingleQuotes],
        );
        check(
            r"['a\nb', 'c\\d']",
            &json!(["a\nb", "c\\d"]),
            &[SingleQuotes],
        );
        check(r#"{'a': 'x\"y'}"#, &json!({"a": "x\"y"}), &[SingleQuotes]);
    }

    #[test]
    fn apostrophes_inside_single_quoted_strings() {
        check(
            "{'text': 'it's fine'}",
            &json!({"text": "it's fine"}),
            &[SingleQuotes, UnescapedQuotes],
        );
    }

    #[test]
    fn unquoted_keys() {
        check(
            "{a: 1, foo_bar: 2, $x: 3}",
            &json!({"a": 1, "foo_bar": 2, "$x": 3}),
            &[UnquotedKeys],
        );
        check("{ key : \"v\" }", &json!({"key": "v"}), &[UnquotedKeys]);
        check("{1: \"one\"}", &json!({"1": "one"}), &[UnquotedKeys]);
        check("{clé: 1}", &json!({"clé": 1}), &[UnquotedKeys]);
        check(
            "{user-id: 1, max-tokens: 2, a.b: 3}",
            &json!({"user-id": 1, "max-tokens": 2, "a.b": 3}),
            &[UnquotedKeys],
        );
    }

    #[test]
    fn bare_key_must_be_followed_by_colon() {
        assert_eq!(repair("{a 1}"), None);
        assert_eq!(repair("{a, b}"), None);
        assert_eq!(repair("{partial json"), None);
        assert_eq!(repair("{partial"), None);
        assert_eq!(repair("{partial json}"), None);
    }

    #[test]
    fn python_literals() {
        check(
            "{'a': True, 'b': False, 'c': None}",
            &json!({"a": true, "b": false, "c": null}),
            &[SingleQuotes, PythonLiterals],
        );
        check("[True, None]", &json!([true, null]), &[PythonLiterals]);
    }

    #[test]
    fn bare_words_in_arrays_fail() {
        for text in [
            "[yes]",
            "[undefined]",
            "[TRUE]",
            "[truex]",
            "[MOOD: calm]",
            "[see below]",
        ] {
            assert_eq!(repair(text), None, "{text:?}");
        }
        check(
            "[NaN, Infinity, -Infinity]",
            &json!(["NaN", "Infinity", "-Infinity"]),
            &[UnquotedValues],
        );
    }

    #[test]
    fn unquoted_values_run_to_the_next_comma_or_closer() {
        check(
            "{\"city\": New York, \"n\": 1}",
            &json!({"city": "New York", "n": 1}),
            &[UnquotedValues],
        );
        check(
            "{key: value}",
            &json!({"key": "value"}),
            &[UnquotedKeys, UnquotedValues],
        );
        check(
            "{\"a\": New York\n \"b\": done-ish}",
            &json!({"a": "New York", "b": "done-ish"}),
            &[MissingComma, UnquotedValues],
        );
        for (word, expected) in [
            ("yes", "yes"),
            ("undefined", "undefined"),
            ("NaN", "NaN"),
            ("-Infinity", "-Infinity"),
            ("TRUE", "TRUE"),
            ("10-20", "10-20"),
            ("1/3", "1/3"),
            ("0..5", "0..5"),
            ("x: y", "x: y"),
            ("it is \"quoted\"", "it is \"quoted\""),
            ("...", "..."),
        ] {
            check(
                &format!("{{\"a\": {word}, \"b\": [2]}}"),
                &json!({"a": expected, "b": [2]}),
                &[UnquotedValues],
            );
        }
        check("[10-20, 1/3]", &json!(["10-20", "1/3"]), &[UnquotedValues]);
        // Cut off by the end of the text: the value so far (a cut literal is dropped).
        check(
            "{\"a\": New Yo",
            &json!({"a": "New Yo"}),
            &[ClosedBrackets, UnquotedValues],
        );
        // Punctuation is not a value.
        assert_eq!(repair("{\"a\": @@}"), None);
        assert_eq!(repair("{\"a\": <unknown>}"), None);
    }

    #[test]
    fn placeholders_are_removed_with_their_comma() {
        check("[1, 2, ...]", &json!([1, 2]), &[Placeholders]);
        check("[1, …, 5]", &json!([1, 5]), &[Placeholders]);
        check("[..., 1]", &json!([1]), &[Placeholders]);
        check("[...]", &json!([]), &[Placeholders]);
        check(
            "{\"a\": 1, \"b\": 2, ... }",
            &json!({"a": 1, "b": 2}),
            &[Placeholders],
        );
        check(
            "{\"items\": [{\"id\": 1}, ...], …}",
            &json!({"items": [{"id": 1}]}),
            &[Placeholders],
        );
        check(
            "[1, 2, ...",
            &json!([1, 2]),
            &[ClosedBrackets, Placeholders],
        );
    }

    #[test]
    fn a_wrong_closer_closes_the_innermost_container() {
        check("[\"a\", \"b\"}", &json!(["a", "b"]), &[MismatchedBrackets]);
        check(
            "[{\"k\": \"v\"], {\"k\": 2}]",
            &json!([{"k": "v"}, {"k": 2}]),
            &[MismatchedBrackets],
        );
        check(
            "{\"a\": [1, 2}, \"b\": 3}",
            &json!({"a": [1, 2], "b": 3}),
            &[MismatchedBrackets],
        );
        check(
            "{\"a\": [1, 2}",
            &json!({"a": [1, 2]}),
            &[ClosedBrackets, MismatchedBrackets],
        );
        check("{\"a\": 1]", &json!({"a": 1}), &[MismatchedBrackets]);
        // A closer after the document, with nothing open to close, is text around it.
        check("[1,]}", &json!([1]), &[TrailingComma, SurroundingText]);
    }

    #[test]
    fn typographic_quotes_delimit_strings() {
        check(
            "{“a”: “b”, ‘c’: ‘it’s’}",
            &json!({"a": "b", "c": "it’s"}),
            &[UnescapedQuotes, TypographicQuotes],
        );
        check(
            "{“a”: \"he said “hi”\"}",
            &json!({"a": "he said “hi”"}),
            &[TypographicQuotes],
        );
        check("[“x \"y\" z”]", &json!(["x \"y\" z"]), &[TypographicQuotes]);
    }

    #[test]
    fn numbers_as_models_write_them() {
        check(
            "[.25, -.5, 1., +1, 1e, 2E+, 0.5e-]",
            &serde_json::from_str::<Json>("[0.25, -0.5, 1.0, 1, 1, 2, 0.5]").unwrap(),
            &[NumberFormat],
        );
        check(
            "{\"a\": 1.5e",
            &json!({"a": 1.5}),
            &[ClosedBrackets, NumberFormat],
        );
        assert_eq!(fixed_number(b"01"), None);
        assert_eq!(fixed_number(b"-"), None);
        assert_eq!(fixed_number(b"."), None);
        assert_eq!(fixed_number(b"1-2").as_deref(), None);
        assert_eq!(fixed_number(b"+.5e+3").as_deref(), Some("0.5e+3"));
    }

    #[test]
    fn a_missing_closing_quote_before_the_next_key() {
        check(
            "{\"a\": \"unterminated, \"b\": 2}",
            &json!({"a": "unterminated", "b": 2}),
            &[MissingQuote],
        );
        // A comma and a quoted word that is not a key: the quote is inside.
        check(
            "{\"a\": \"He said, \"hi\" there\"}",
            &json!({"a": "He said, \"hi\" there"}),
            &[UnescapedQuotes],
        );
    }

    #[test]
    fn mongo_shell_types_become_their_values() {
        check(
            r#"{"_id": ObjectId("5f1d7a2b9c1e4a3b2c1d0e9f"), "at": ISODate("2024-05-01T10:00:00Z"), "n": NumberLong(42), "m": NumberInt("7"), "d": NumberDecimal("1.25"), "when": new Date("2024-05-02")}"#,
            &json!({"_id": "5f1d7a2b9c1e4a3b2c1d0e9f", "at": "2024-05-01T10:00:00Z", "n": 42, "m": 7, "d": 1.25, "when": "2024-05-02"}),
            &[MongoShellTypes],
        );
        check(
            "[ObjectId('a1'), NumberLong( -3 )]",
            &json!(["a1", -3]),
            &[MongoShellTypes],
        );
        // Not a shell type, or not one argument it can take: as before.
        check(
            r#"{"a": Foo("x")}"#,
            &json!({"a": "Foo(\"x\")"}),
            &[UnquotedValues],
        );
        check(
            r#"{"n": NumberLong("many")}"#,
            &json!({"n": "NumberLong(\"many\")"}),
            &[UnquotedValues],
        );
        assert!(repair("[ObjectId(x)]").is_none());
    }

    #[test]
    fn a_jsonp_call_is_read_from_its_arguments() {
        check(r#"callback({"a": 1});"#, &json!({"a": 1}), &[Jsonp]);
        check(
            "/**/ jQuery3_1.cb_2( [{\"a\": [1, 2]}] ) ;\n",
            &json!([{"a": [1, 2]}]),
            &[Jsonp],
        );
        // Damaged inside: its repairs are listed with it.
        check(
            "cb({'a': True, })",
            &json!({"a": true}),
            &[TrailingComma, SingleQuotes, PythonLiterals, Jsonp],
        );
        // A call in prose, cut off, or of something else is not JSONP.
        check(
            r#"search({"q": "x"}) is the call"#,
            &json!({"q": "x"}),
            &[SurroundingText],
        );
        check(
            r#"cb({"a": 1"#,
            &json!({"a": 1}),
            &[ClosedBrackets, SurroundingText],
        );
        for text in [r#"1cb({"a": 1})"#, r#"cb("a")"#, r#"a b({"a": 1})"#, "cb()"] {
            assert!(super::jsonp_body(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_json_string_holding_the_document_is_read_from_it() {
        check(
            r#""{\"event\": \"agent:status\", \"data\": {\"a\": [1, 2]}}""#,
            &json!({"event": "agent:status", "data": {"a": [1, 2]}}),
            &[JsonInString],
        );
        // Damaged inside too: its repairs are listed with it.
        check(
            r#"  "{'a': 1, \"b\": [true,],}"  "#,
            &json!({"a": 1, "b": [true]}),
            &[TrailingComma, SingleQuotes, JsonInString],
        );
        // Encoded twice over.
        check(r#""\"[1, 2]\"""#, &json!([1, 2]), &[JsonInString]);
        // A string that is not a document, or more text around the string.
        assert!(repair(r#""just text""#).is_none());
        assert!(repair(r#""{not json at all"#).is_none());
    }

    #[test]
    fn doubled_quotes() {
        check(
            "{\"a\": \"\"hello\"\", \"b\": \"\"}",
            &json!({"a": "hello", "b": ""}),
            &[DoubledQuotes],
        );
    }

    #[test]
    fn a_key_without_a_value_is_dropped() {
        for text in [
            "{\"a\": 1, \"b\"}",
            "{\"a\": 1, \"b\":}",
            "{\"a\": 1, \"b\": }",
        ] {
            check(text, &json!({"a": 1}), &[DroppedIncompleteMember]);
        }
    }

    #[test]
    fn a_cut_string_loses_its_trailing_spaces() {
        check(
            "{\"a\": \"abc   ",
            &json!({"a": "abc"}),
            &[ClosedString, ClosedBrackets],
        );
        check(
            "[\"a b\", \"   ",
            &json!(["a b", ""]),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn ndjson_is_an_array_of_its_lines_under_all() {
        let text =
            "{\"id\": 1, \"ok\": true}\n{\"id\": 2, \"ok\": false}\n{\"id\": 3, \"ok\": true}\n";
        assert_eq!(
            repair_with(text, MultipleValues::All),
            Some((
                json!([{"id": 1, "ok": true}, {"id": 2, "ok": false}, {"id": 3, "ok": true}]),
                vec![MultipleValuesRepair]
            ))
        );
        assert_eq!(
            repair_with(text, MultipleValues::Last),
            Some((json!({"id": 3, "ok": true}), vec![MultipleValuesRepair]))
        );
    }

    #[test]
    fn concatenated_strings_are_one_string() {
        check(
            r#"{"x": "a" + "b"}"#,
            &json!({"x": "ab"}),
            &[StringConcatenation],
        );
        check(
            "{\"x\": \"ab\" +\n  \"cd\" + 'ef', \"y\": 1}",
            &json!({"x": "abcdef", "y": 1}),
            &[SingleQuotes, StringConcatenation],
        );
        check(
            r#"["a" + "b", "c"]"#,
            &json!(["ab", "c"]),
            &[StringConcatenation],
        );
        // Cut off after the `+`, or inside the next string.
        check(
            r#"{"x": "a" + "b"#,
            &json!({"x": "ab"}),
            &[ClosedString, ClosedBrackets, StringConcatenation],
        );
        // A `+` inside a string, or before something that is not a string, is not one.
        check(r#"{"x": "a + b"}"#, &json!({"x": "a + b"}), &[]);
        assert!(repair(r#"{"x": "a" + 1}"#).is_none());
    }

    #[test]
    fn a_string_without_its_closing_quote_before_the_next_item() {
        check(
            r#"["a", "b, "c"]"#,
            &json!(["a", "b", "c"]),
            &[MissingQuote],
        );
        check(
            r#"{"tags": ["red, "green", "blue"]}"#,
            &json!({"tags": ["red", "green", "blue"]}),
            &[MissingQuote],
        );
        // A quote after a comma that does not start an item stays in the string.
        check(
            r#"["He said, "hi" there"]"#,
            &json!(["He said, \"hi\" there"]),
            &[UnescapedQuotes],
        );
    }

    #[test]
    fn a_string_left_open_before_the_last_closers_ends_before_them() {
        check(
            r#"["one", "two, three", "four]"#,
            &json!(["one", "two, three", "four"]),
            &[UnterminatedString],
        );
        check(
            r#"{"a": ["x", "y]}"#,
            &json!({"a": ["x", "y"]}),
            &[UnterminatedString],
        );
        check(
            "{\"a\": [\"x\", \"y ]\n}\n",
            &json!({"a": ["x", "y"]}),
            &[UnterminatedString],
        );
        check(
            r#"{"note": "done}"#,
            &json!({"note": "done"}),
            &[UnterminatedString],
        );
        // Closing only the innermost: the rest is closed as a cut document.
        check(
            r#"{"a": ["x", "y]"#,
            &json!({"a": ["x", "y"]}),
            &[ClosedBrackets, UnterminatedString],
        );
        // Closers that do not match the open containers are the string's.
        check(
            r#"["x", "y}"#,
            &json!(["x", "y}"]),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn several_top_level_documents() {
        let text = "{\"a\": 1}{'b': 2} and then [3]";
        let take = |multiple| repair_with(text, multiple).unwrap();
        assert_eq!(
            take(MultipleValues::First),
            (json!({"a": 1}), vec![MultipleValuesRepair])
        );
        assert_eq!(
            take(MultipleValues::Last),
            (json!([3]), vec![MultipleValuesRepair])
        );
        assert_eq!(
            take(MultipleValues::All),
            (
                json!([{"a": 1}, {"b": 2}, [3]]),
                vec![SingleQuotes, MultipleValuesRepair]
            )
        );
        // One document is itself, whatever the choice; prose after it is not another
        // (it is text around it).
        for (text, repairs) in [
            ("{\"a\": 1} hope that helps {", vec![SurroundingText]),
            ("{\"a\": 1} {x}", vec![SurroundingText]),
            ("{\"a\": 1}", vec![]),
        ] {
            for multiple in [
                MultipleValues::First,
                MultipleValues::Last,
                MultipleValues::All,
            ] {
                assert_eq!(
                    repair_with(text, multiple),
                    Some((json!({"a": 1}), repairs.clone()))
                );
            }
        }
        // A later document cut short still counts.
        assert_eq!(
            repair_with("{\"a\": 1}\n{\"b\": 2, \"c", MultipleValues::All),
            Some((
                json!([{"a": 1}, {"b": 2}]),
                vec![
                    ClosedBrackets,
                    DroppedIncompleteMember,
                    MultipleValuesRepair
                ]
            ))
        );
    }

    /// The rewriter's work (bytes read, looked at ahead, written and parsed again,
    /// counted by `repair_counted`) is at most a constant times the length of the
    /// text, and grows in proportion with it, on inputs built to make a careless
    /// repairer quadratic. Work is counted, not timed, so a loaded machine cannot
    /// make this flaky.
    #[test]
    fn work_is_linear_in_the_length_of_adversarial_inputs() {
        let patterns: &[(&str, &str, &str)] = &[
            ("", "[", ""),
            ("", "{", ""),
            ("", "{\"a\":", ""),
            ("", "{a:[", ""),
            ("{\"a\": \"", "\"", ""),
            ("[", "\"", "]"),
            ("{\"a\": \"x, ", "\"b ", ""),
            ("{\"a\": \"", "x\" ", "}"),
            ("{\"a\": \"", "x, \"b\": ", ""),
            ("[", "..., ", "]"),
            ("[", ".", "]"),
            ("{\"a\": ", "...", "}"),
            ("", "{}", ""),
            ("", "{\"a\": 1} x ", ""),
            ("", "[1]", ""),
            ("{\"a\": 1}", "{ ", ""),
            ("{\"a\": 1}", "[ ", ""),
            ("{\"a\": 1}", "{x} ", ""),
            ("{\"a\": ", "b", "}"),
            ("{\"a\": ", "1", "x}"),
            ("[", "1e", "]"),
            ("", "“", ""),
            ("{", "“a”: “b”, ", "}"),
            ("", "/*", ""),
            ("[", "1 ", "]"),
            ("[", "{\"a\": [1}, ", "]"),
            ("", "{\"a\": 1, \"b\"}", ""),
        ];
        let work = |prefix: &str, unit: &str, suffix: &str, n: usize| {
            let text = format!("{prefix}{}{suffix}", unit.repeat(n));
            let mut steps = 0;
            let _ = repair_counted(&text, MultipleValues::All, &mut steps);
            (steps, text.len())
        };
        for &(prefix, unit, suffix) in patterns {
            let n = (256 * 1024) / unit.len();
            let (small, _) = work(prefix, unit, suffix, n);
            let (large, length) = work(prefix, unit, suffix, 4 * n);
            assert!(
                large <= 16 * length + 1024,
                "{prefix:?} + {unit:?} x {} + {suffix:?}: {large} steps for {length} bytes",
                4 * n
            );
            assert!(
                large <= 5 * small + 1024,
                "{prefix:?} + {unit:?}: {small} steps for n, {large} for 4n"
            );
        }
    }

    #[test]
    fn comments() {
        check(
            "{\n  // the answer\n  \"a\": 1, /* inline */ \"b\": 2 # python style\n}",
            &json!({"a": 1, "b": 2}),
            &[Comments],
        );
        check("[1 /* unclosed", &json!([1]), &[Comments, ClosedBrackets]);
        check(
            "{\"url\": \"http://x/#y\"}",
            &json!({"url": "http://x/#y"}),
            &[],
        );
        assert_eq!(repair("[1 / 2]"), None);
    }

    #[test]
    fn missing_commas() {
        check(
            "{\"a\": 1\n \"b\": 2}",
            &json!({"a": 1, "b": 2}),
            &[MissingComma],
        );
        check("[1 2 [3] {}]", &json!([1, 2, [3], {}]), &[MissingComma]);
    }

    #[test]
    fn unescaped_inner_quotes() {
        check(
            r#"{"text": "He said "hi" to me", "n": 1}"#,
            &json!({"text": "He said \"hi\" to me", "n": 1}),
            &[UnescapedQuotes],
        );
    }

    #[test]
    fn inner_quotes_before_punctuation_or_the_closing_quote() {
        for (text, expected) in [
            // Followed by punctuation that cannot follow a string.
            (
                r#"{"t": "she said "no".", "n": 1}"#,
                json!({"t": "she said \"no\".", "n": 1}),
            ),
            (r#"{"t": "say "hi"!"}"#, json!({"t": "say \"hi\"!"})),
            // Followed by the quote that ends the string.
            (
                r#"{"t": "called "Ada"", "n": 1}"#,
                json!({"t": "called \"Ada\"", "n": 1}),
            ),
            (r#"["x "y"", "z"]"#, json!(["x \"y\"", "z"])),
            (r#"{"id": "gamma""}"#, json!({"id": "gamma\""})),
            // A value that starts with a quoted word is not in doubled quotes.
            (
                r#"{"t": ""quoted" first"}"#,
                json!({"t": "\"quoted\" first"}),
            ),
        ] {
            check(text, &expected, &[UnescapedQuotes]);
        }
        // What may follow a string still ends it: a comma, a closer, a comment, `+`.
        check("{\"a\": \"x\" // note\n}", &json!({"a": "x"}), &[Comments]);
        check(r#"{"a": "x", "b": "y"}"#, &json!({"a": "x", "b": "y"}), &[]);
    }

    #[test]
    fn a_missing_colon_before_a_string_value() {
        check(
            r#"{"a" "x", "b": 1}"#,
            &json!({"a": "x", "b": 1}),
            &[MissingColon],
        );
        check(
            r#"{"a" "x" "b" "y"}"#,
            &json!({"a": "x", "b": "y"}),
            &[MissingComma, MissingColon],
        );
        // Only a string is taken for the value, and not one that is a key itself.
        assert_eq!(repair(r#"{"a" 1}"#), None);
        assert_eq!(repair(r#"{"a" "b": 1}"#), None);
    }

    #[test]
    fn unicode_whitespace_between_tokens() {
        check(
            "{\u{a0}\"a\":\u{3000} [1,\u{200b}2],\u{feff} \"b\":\u{202f} true\u{2003}}",
            &json!({"a": [1, 2], "b": true}),
            &[UnicodeWhitespace],
        );
        // Inside a string it is text.
        check("[\"a\u{a0}b\"]", &json!(["a\u{a0}b"]), &[]);
    }

    #[test]
    fn documents_separated_by_commas_are_an_array() {
        for multiple in [
            MultipleValues::First,
            MultipleValues::Last,
            MultipleValues::All,
        ] {
            for text in ["{\"a\": 1},\n{\"b\": 2}", "{\"a\": 1}, {\"b\": 2}]"] {
                assert_eq!(
                    repair_with(text, multiple),
                    Some((json!([{"a": 1}, {"b": 2}]), vec![CommaSeparatedDocuments])),
                    "{text:?} ({multiple:?})"
                );
            }
        }
        check(
            "[1], [2, 3], {'c': 4}",
            &json!([[1], [2, 3], {"c": 4}]),
            &[SingleQuotes, CommaSeparatedDocuments],
        );
        check(
            "{\"a\": 1},\n{\"b\": 2},\n",
            &json!([{"a": 1}, {"b": 2}]),
            &[TrailingComma, CommaSeparatedDocuments],
        );
        // One document followed by a comma is still an element of something else.
        assert_eq!(repair("{\"a\": 1}, "), None);
        assert_eq!(repair("{\"a\": 1}, {\"b\": 2}, x"), None);
    }

    #[test]
    fn inner_quote_guesses_that_run_to_the_end_fail() {
        assert_eq!(repair(r#"{"a": "x" 1}"#), None);
        assert_eq!(repair(r#"{"text": "He said "hi"#), None);
        // Keys never guess.
        assert_eq!(repair(r#"{"a" 1}"#), None);
        assert_eq!(repair(r#"{"a "b": 1}"#), None);
    }

    #[test]
    fn invalid_escapes() {
        check(
            r#"{"a": "it\'s"}"#,
            &json!({"a": "it's"}),
            &[InvalidEscapes],
        );
        check(
            r#"{"a": "C:\dir"}"#,
            &json!({"a": "C:\\dir"}),
            &[InvalidEscapes],
        );
        check(
            r#"{"a": "\x41"}"#,
            &json!({"a": "\\x41"}),
            &[InvalidEscapes],
        );
        check(
            r#"{"a": "\u12G4"}"#,
            &json!({"a": "\\u12G4"}),
            &[InvalidEscapes],
        );
        check(
            r#"{"a": "\ud83d!", "b": "\udc00"}"#,
            &json!({"a": "\u{fffd}!", "b": "\u{fffd}"}),
            &[InvalidEscapes],
        );
        check(
            r#"{"a": "\ud83e\udd14 \u00e9"}"#,
            &json!({"a": "🤔 é"}),
            &[],
        );
    }

    #[test]
    fn control_characters_in_strings() {
        check(
            "{\"a\": \"line one\nline two\ttabbed\r\u{1}\"}",
            &json!({"a": "line one\nline two\ttabbed\r\u{1}"}),
            &[ControlCharacters],
        );
    }

    #[test]
    fn truncated_value_string_is_closed() {
        check(
            "{\"thought\": \"I was thinking abo",
            &json!({"thought": "I was thinking abo"}),
            &[ClosedString, ClosedBrackets],
        );
        check(
            "[\"a\", \"b",
            &json!(["a", "b"]),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn truncated_inside_an_escape() {
        check(
            "{\"a\": \"x\\",
            &json!({"a": "x"}),
            &[ClosedString, ClosedBrackets],
        );
        check(
            "{\"a\": \"x\\u00",
            &json!({"a": "x"}),
            &[ClosedString, ClosedBrackets],
        );
        check(
            "{\"a\": \"x\\ud83d",
            &json!({"a": "x"}),
            &[ClosedString, ClosedBrackets],
        );
        check(
            "{\"a\": \"x\\ud83d\\ud",
            &json!({"a": "x"}),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn truncated_at_every_point() {
        let full = "{\"a\": [1, 2.5, true], \"b\": {\"c\": \"text\", \"d\": null}, \"e\": -3e2}";
        let expected: Json = serde_json::from_str(
            r#"{"a": [1, 2.5, true], "b": {"c": "text", "d": null}, "e": -3e2}"#,
        )
        .unwrap();
        assert_eq!(fixed(full), (expected.clone(), vec![]));
        for end in 1..full.len() {
            let (value, repairs) = fixed(&full[..end]);
            assert!(!repairs.is_empty(), "prefix {:?}", &full[..end]);
            assert!(
                repairs.contains(&ClosedBrackets),
                "prefix {:?}",
                &full[..end]
            );
            // Every member that survives is a prefix of the full document's member.
            let object = value.as_object().unwrap();
            for (key, member) in object {
                assert!(
                    expected.get(key).is_some(),
                    "key {key:?} of {:?}",
                    &full[..end]
                );
                if key != "e" && member.is_number() {
                    assert_eq!(member, &expected[key.as_str()]);
                }
            }
        }
    }

    #[test]
    fn truncated_members_are_dropped() {
        let cases: [(&str, Json); 9] = [
            ("{\"a\": 1, \"b\"", json!({"a": 1})),
            ("{\"a\": 1, \"b\":", json!({"a": 1})),
            ("{\"a\": 1, \"b\": ", json!({"a": 1})),
            ("{\"a\": 1, \"b", json!({"a": 1})),
            ("{\"a\": 1,", json!({"a": 1})),
            ("{\"a\": tru", json!({})),
            ("{\"a\": 1, \"b\": Fal", json!({"a": 1})),
            ("[1, -", json!([1])),
            ("{\"a\": 1, bee", json!({"a": 1})),
        ];
        for (text, expected) in cases {
            check(text, &expected, &[ClosedBrackets, DroppedIncompleteMember]);
        }
    }

    #[test]
    fn truncated_numbers_keep_their_complete_part() {
        for (text, expected) in [
            ("[1, 2.", "[1, 2.0]"),
            ("[1, 2e", "[1, 2]"),
            ("[1, -2.5e+", "[1, -2.5]"),
        ] {
            let expected: Json = serde_json::from_str(expected).unwrap();
            check(text, &expected, &[ClosedBrackets, NumberFormat]);
        }
    }

    #[test]
    fn truncated_complete_tokens_are_kept() {
        check("[1, 23", &json!([1, 23]), &[ClosedBrackets]);
        check("{\"a\": true", &json!({"a": true}), &[ClosedBrackets]);
        check(
            "{\"a\": None",
            &json!({"a": null}),
            &[PythonLiterals, ClosedBrackets],
        );
        check("{\"a\": [", &json!({"a": []}), &[ClosedBrackets]);
        check(
            "{\"a\": {\"b\": [1, {\"c\"",
            &json!({"a": {"b": [1, {}]}}),
            &[ClosedBrackets, DroppedIncompleteMember],
        );
        check("[", &json!([]), &[ClosedBrackets]);
    }

    #[test]
    fn nested_truncation_closes_in_reverse_order() {
        check(
            "{\"a\": [{\"b\": [\"c",
            &json!({"a": [{"b": ["c"]}]}),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn trailing_prose_is_left_out() {
        check(
            "{'a': 1} and that's my answer {",
            &json!({"a": 1}),
            &[SingleQuotes, SurroundingText],
        );
        check(
            "Sure! [1, 2,] Hope it helps.",
            &json!([1, 2]),
            &[TrailingComma, SurroundingText],
        );
        // Prose around a document that needed nothing else is still named.
        check(
            "The scores: [1, 2, 3].",
            &json!([1, 2, 3]),
            &[SurroundingText],
        );
        check("[1, 2]\n```", &json!([1, 2]), &[SurroundingText]);
        check("{\"a\": 1}}", &json!({"a": 1}), &[SurroundingText]);
        // Comments around it are comments; whitespace is nothing, but for the
        // zero-width space, which JSON does not take as whitespace.
        check("// the list\n[1, 2] /* end */", &json!([1, 2]), &[Comments]);
        check("\u{feff} \u{a0}[1, 2]\n\u{3000}", &json!([1, 2]), &[]);
        check("\u{200b}[1, 2]", &json!([1, 2]), &[UnicodeWhitespace]);
    }

    #[test]
    fn fence_content_is_the_first_candidate() {
        check(
            "Here you go {not this}:\n```json\n{'a': 1,}\n```\nDone {x}.",
            &json!({"a": 1}),
            &[TrailingComma, SingleQuotes, SurroundingText],
        );
    }

    #[test]
    fn unclosed_fence_at_the_end() {
        check(
            "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thin",
            &json!({"eval": null, "thought": "thin"}),
            &[ClosedString, ClosedBrackets, SurroundingText],
        );
    }

    #[test]
    fn fence_end_is_the_end_of_the_candidate() {
        check(
            "```json\n{\"a\": 1, \"b\":\n```\nThat was cut.",
            &json!({"a": 1}),
            &[ClosedBrackets, DroppedIncompleteMember, SurroundingText],
        );
    }

    #[test]
    fn a_damaged_document_never_yields_its_inner_values() {
        // The shapes issue 46 found, each once returned an inner object as the
        // whole (listing only `multiple_values`); now the whole is repaired, or
        // nothing is returned.
        for text in [
            // An unquoted word in a nested array.
            r#"{"id": 1, "tags": [plain, "Zoë"], "meta": {"a": 1}, "more": {"b": 2}}"#,
            // An object in an array that lost its closing brace.
            r#"{"items": [{"a": 1, {"b": 2}, {"c": 3}], "n": 2}"#,
            // A doubled quote after a value.
            r#"{"id": "gamma"", "meta": {"a": 1}, "more": {"b": 2}}"#,
            // A stray character before a colon or a comma.
            r#"{"id"x: 1, "meta": {"a": 1}, "more": {"b": 2}}"#,
            r#"{"id": 1x, "meta": {"a": "}"}, "more": {"b": 2}}"#,
            // The document's own opener lost.
            r#""meta": {"a": 1}, "more": {"b": 2}}"#,
            r#"{"a": 1}, {"b": 2}]"#,
            "{\"a\": [1]}]",
            // A stray closer where a value should be.
            r#"{"n": 0, "meta": ]{"b": 2, "c": {"a": 1}}}"#,
            // A "comment" that swallows a member's opening brace.
            "{\n  #\"meta\": {\n    \"a\": 1\n  }\n}",
        ] {
            for multiple in [
                MultipleValues::First,
                MultipleValues::Last,
                MultipleValues::All,
            ] {
                if let Some((value, repairs)) = repair_with(text, multiple) {
                    let inner = [json!({"a": 1}), json!({"b": 2}), json!({"c": 3})];
                    assert!(
                        !inner.contains(&value) && !repairs.contains(&MultipleValuesRepair),
                        "{text:?} ({multiple:?}) gave {value} {repairs:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn later_starts_are_tried() {
        check(
            "Use {braces} like this: {'a': 1}",
            &json!({"a": 1}),
            &[SingleQuotes, SurroundingText],
        );
        let eight_failures = "{x} ".repeat(MAX_ATTEMPTS);
        assert_eq!(repair(&format!("{eight_failures}{{'a': 1}}")), None);
        let seven_failures = "{x} ".repeat(MAX_ATTEMPTS - 1);
        check(
            &format!("{seven_failures}{{'a': 1}}"),
            &json!({"a": 1}),
            &[SingleQuotes, SurroundingText],
        );
    }

    #[test]
    fn seed_004_malformed_and_prose() {
        assert_eq!(repair("I'm not sure what to do {partial json"), None);
        assert_eq!(
            repair("The mushrooms charge admission to their bioluminescent shows."),
            None
        );
        assert_eq!(repair(""), None);
        assert_eq!(repair("He said \"hello\" and 'bye'."), None);
    }

    #[test]
    fn what_cannot_be_repaired_fails() {
        assert_eq!(repair("{\"a\" 1}"), None);
        assert_eq!(repair("{,}"), None);
        assert_eq!(repair("[1,,2]"), None);
        assert_eq!(repair("{\"a\": 1 : 2}"), None);
    }

    #[test]
    fn every_repair_at_once() {
        let text = "```json\n{\n  // note\n  thought: 'it\\'s \"odd\"',\n  ok: True,\n  list: [1, 2,],\n  \"quote\": \"a \"b\" c\" \"esc\": \"\\q\",\n  \"raw\": \"x\ny\",\n  \"cut\": \"abc";
        let (value, repairs) = fixed(text);
        assert_eq!(
            value,
            json!({
                "thought": "it's \"odd\"",
                "ok": true,
                "list": [1, 2],
                "quote": "a \"b\" c",
                "esc": "\\q",
                "raw": "x\ny",
                "cut": "abc"
            })
        );
        assert_eq!(
            repairs,
            [
                TrailingComma,
                SingleQuotes,
                UnquotedKeys,
                PythonLiterals,
                Comments,
                ClosedString,
                ClosedBrackets,
                MissingComma,
                UnescapedQuotes,
                InvalidEscapes,
                ControlCharacters,
                SurroundingText,
            ]
        );
    }

    #[test]
    fn number_shapes() {
        for complete in ["0", "-0", "12", "1.5", "-1.5e10", "2E-3", "0.0"] {
            assert_eq!(
                number_shape(complete.as_bytes()),
                NumberShape::Complete,
                "{complete}"
            );
        }
        for prefix in ["-", "1.", "1e", "1e+", "-0."] {
            assert_eq!(
                number_shape(prefix.as_bytes()),
                NumberShape::Prefix,
                "{prefix}"
            );
        }
        for invalid in ["01", "1..2", "+1", "1e5.0", "--1", ".5", "1-2"] {
            assert_eq!(
                number_shape(invalid.as_bytes()),
                NumberShape::Invalid,
                "{invalid}"
            );
        }
    }

    #[test]
    fn unicode_is_preserved() {
        check(
            "{'mood': '🤔', 'jp': '日本語'",
            &json!({"mood": "🤔", "jp": "日本語"}),
            &[SingleQuotes, ClosedBrackets],
        );
    }

    #[test]
    fn depth_limit_matches_serde_json() {
        let depth_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(serde_json::from_str::<Json>(&depth_ok).is_ok());
        check(&depth_ok, &serde_json::from_str(&depth_ok).unwrap(), &[]);
        let truncated = "[".repeat(127);
        assert_eq!(fixed(&truncated).1, [ClosedBrackets]);
        let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(serde_json::from_str::<Json>(&too_deep).is_err());
        assert_eq!(repair(&too_deep), None);
    }

    #[test]
    fn deep_nesting_fails_without_crashing() {
        assert_eq!(repair(&"[".repeat(100_000)), None);
        assert_eq!(repair(&"{".repeat(100_000)), None);
        assert_eq!(repair(&"{\"a\":".repeat(100_000)), None);
        assert_eq!(repair(&"{a:[".repeat(100_000)), None);
        let balanced = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(repair(&balanced), None);
        let fenced = format!("```json\n{}\n```", "[{'a':".repeat(100_000));
        assert_eq!(repair(&fenced), None);
    }

    #[test]
    fn ten_megabytes_of_braces() {
        let text = "{".repeat(10 * 1024 * 1024);
        assert_eq!(repair(&text), None);
        let text = "[".repeat(10 * 1024 * 1024);
        assert_eq!(repair(&text), None);
        let text = format!("{{\"a\": \"{}", "{".repeat(10 * 1024 * 1024));
        let (value, repairs) = fixed(&text);
        assert_eq!(value["a"].as_str().unwrap().len(), 10 * 1024 * 1024);
        assert_eq!(repairs, [ClosedString, ClosedBrackets]);
    }
}
