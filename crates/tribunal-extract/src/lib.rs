//! The extraction ladder: finds the JSON object or array in what a model emitted.
//! A crate of its own under the engine (which names it as its module
//! `extract`), on the JSON layer and the foundation.
//!
//! Each [`Tier`] is a more forgiving way of reading the text:
//!
//! * [`Tier::Strict`]: the whole text is JSON ([`strict::parse`]);
//! * [`Tier::Fence`]: the first Markdown code fence holding JSON ([`fence::extract`]);
//! * [`Tier::Embedded`]: the first balanced object (or array holding one) in prose that is JSON
//!   ([`embedded::extract_with`]);
//! * [`Tier::Repair`]: almost-JSON rewritten into JSON ([`repair::repair_with`]);
//! * [`Tier::Fallback`]: handled by the caller, never by [`extract`].
//!
//! Every tier accepts only an object or an array as its result. No tier recurses on the
//! input, and each one's work is linear in the length of the text, so adversarial input
//! (megabytes of `{`, or 100,000 levels of nesting) neither overflows the stack nor takes
//! quadratic time. Nesting deeper than `serde_json`'s recursion limit simply fails to parse.

pub mod embedded;
pub mod fence;
pub mod repair;
pub mod strict;

// The JSON layer's and the foundation's modules under the names the ladder
// uses (`crate::json`), as in the engine.
use tribunal_base::text;
use tribunal_json::{json, json_read, json_write};

use crate::json::Json;

/// One rung of the extraction ladder, from the strictest to the most forgiving.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The whole text is a JSON object or array.
    Strict,
    /// The first Markdown code fence whose content is a JSON object or array.
    Fence,
    /// The first balanced object in the text (or array holding one) that is JSON.
    Embedded,
    /// Almost-JSON rewritten into JSON, listing the repairs made.
    Repair,
    /// The contract's `fallback:` (the raw text wrapped), when no other tier found JSON.
    Fallback,
}

impl Tier {
    /// Every tier, in ladder order.
    pub const ALL: [Tier; 5] = [
        Tier::Strict,
        Tier::Fence,
        Tier::Embedded,
        Tier::Repair,
        Tier::Fallback,
    ];

    /// The lowercase name, as used in configuration and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Strict => "strict",
            Tier::Fence => "fence",
            Tier::Embedded => "embedded",
            Tier::Repair => "repair",
            Tier::Fallback => "fallback",
        }
    }

    /// The tier with that name (ASCII case and surrounding whitespace are ignored).
    pub fn parse(name: &str) -> Option<Tier> {
        let name = name.trim();
        Tier::ALL
            .into_iter()
            .find(|tier| tier.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One kind of repair the [`Tier::Repair`] rewriter can make.
///
/// The derived order is the order in which repairs are listed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// A comma before `}` or `]` was removed.
    TrailingComma,
    /// A single-quoted string was rewritten with double quotes.
    SingleQuotes,
    /// A bare identifier used as a key was quoted.
    UnquotedKeys,
    /// `True`, `False` or `None` became `true`, `false` or `null`.
    PythonLiterals,
    /// A `//`, `/* */` or `#` comment was removed.
    Comments,
    /// A string cut off by the end of the text was closed.
    ClosedString,
    /// Objects or arrays left open at the end of the text were closed.
    ClosedBrackets,
    /// An unfinished last member (a key without a value, a dangling comma, a cut-off
    /// literal or number) was dropped.
    DroppedIncompleteMember,
    /// A missing comma between two members was inserted.
    MissingComma,
    /// A missing colon between a key and its string value (`{"a" "x"}`) was inserted.
    MissingColon,
    /// A quote inside a string that did not end it was escaped.
    UnescapedQuotes,
    /// An escape JSON does not allow (`\'`, `\x`, a lone surrogate) was rewritten.
    InvalidEscapes,
    /// A raw newline, tab or other control character inside a string was escaped.
    ControlCharacters,
    /// Whitespace JSON does not allow (a no-break space, a zero-width space, a
    /// byte-order mark, an ideographic space, ...) between tokens, or a zero-width space
    /// around the document, was dropped.
    UnicodeWhitespace,
    /// A value that is not JSON (`New York`, `10-20`, `1/3`, `NaN`) was quoted as a
    /// string: in an object, the text up to the next comma, closer or line end.
    UnquotedValues,
    /// A `...` or `…` placeholder standing for omitted items or members was removed.
    Placeholders,
    /// A closer of the wrong kind (`]` for `}`, or the reverse) closed the innermost
    /// object or array.
    MismatchedBrackets,
    /// A string delimited by typographic quotes (`“ ”`, `‘ ’`) was rewritten with double
    /// quotes.
    TypographicQuotes,
    /// A number written the way JSON does not allow (`.25`, `+1`, `1.`, `1e`), or cut off
    /// by the end of the text (`2.`), was rewritten (`0.25`, `1`, `1.0`, `1`, `2`).
    NumberFormat,
    /// A string whose closing quote was missing before the next member's key
    /// (`"a": "x, "b": 1`) was closed.
    MissingQuote,
    /// A value in doubled quotes (`""text""`) was read as one string.
    DoubledQuotes,
    /// A string left open before the brackets that end the text (`["a", "b]`) was
    /// closed before them.
    UnterminatedString,
    /// Strings joined with `+` (`"a" + "b"`) were read as one string.
    StringConcatenation,
    /// A MongoDB shell type (`ObjectId("…")`, `ISODate("…")`, `new Date("…")`,
    /// `NumberLong(…)`, `NumberInt(…)`, `NumberDecimal("…")`) was replaced by its
    /// value: the string, or the number.
    MongoShellTypes,
    /// The whole output was a JSON string holding the document (`"{\"a\": 1}"`):
    /// the document was read from the string.
    JsonInString,
    /// The whole output was a JSONP call (`callback({...});`): the document was
    /// read from its arguments.
    Jsonp,
    /// Text around the document that is not part of it was left out: prose before or
    /// after it, the lines of the code fence it was read from, a closer with nothing
    /// open to close (`{"a": 1}}`). Whitespace around a document is not such text, and
    /// comments around it are listed as [`Repair::Comments`].
    SurroundingText,
    /// Documents separated by commas (`{...}, {...}`) were read as the items of one
    /// array whose brackets were missing, whatever `multiple_values` says.
    CommaSeparatedDocuments,
    /// Several top-level documents followed one another (`{...}{...}`, or with prose
    /// between them); the contract's `multiple_values` chose the first, the last or all.
    MultipleValues,
    /// `repair: schema`: a string holding a number (`"12"`) became the number, for a
    /// field that takes numbers and no strings.
    CoercedNumber,
    /// `repair: schema`: a string `"true"` or `"false"` became the boolean, for a field
    /// that takes booleans and no strings.
    CoercedBoolean,
    /// `repair: schema`: a single value of an array field was wrapped in an array.
    WrappedInArray,
    /// `repair: schema`: a member that `additional_fields: false` forbids was dropped.
    DroppedUnexpectedField,
    /// `repair: schema`: a missing optional field (or its `null`, where its type takes
    /// none) was given its declared `default`.
    FilledDefault,
}

impl Repair {
    /// Every repair kind, in listing order.
    pub const ALL: [Repair; 34] = [
        Repair::TrailingComma,
        Repair::SingleQuotes,
        Repair::UnquotedKeys,
        Repair::PythonLiterals,
        Repair::Comments,
        Repair::ClosedString,
        Repair::ClosedBrackets,
        Repair::DroppedIncompleteMember,
        Repair::MissingComma,
        Repair::MissingColon,
        Repair::UnescapedQuotes,
        Repair::InvalidEscapes,
        Repair::ControlCharacters,
        Repair::UnicodeWhitespace,
        Repair::UnquotedValues,
        Repair::Placeholders,
        Repair::MismatchedBrackets,
        Repair::TypographicQuotes,
        Repair::NumberFormat,
        Repair::MissingQuote,
        Repair::DoubledQuotes,
        Repair::UnterminatedString,
        Repair::StringConcatenation,
        Repair::MongoShellTypes,
        Repair::JsonInString,
        Repair::Jsonp,
        Repair::SurroundingText,
        Repair::CommaSeparatedDocuments,
        Repair::MultipleValues,
        Repair::CoercedNumber,
        Repair::CoercedBoolean,
        Repair::WrappedInArray,
        Repair::DroppedUnexpectedField,
        Repair::FilledDefault,
    ];

    /// The `snake_case` name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Repair::TrailingComma => "trailing_comma",
            Repair::SingleQuotes => "single_quotes",
            Repair::UnquotedKeys => "unquoted_keys",
            Repair::PythonLiterals => "python_literals",
            Repair::Comments => "comments",
            Repair::ClosedString => "closed_string",
            Repair::ClosedBrackets => "closed_brackets",
            Repair::DroppedIncompleteMember => "dropped_incomplete_member",
            Repair::MissingComma => "missing_comma",
            Repair::MissingColon => "missing_colon",
            Repair::UnescapedQuotes => "unescaped_quotes",
            Repair::InvalidEscapes => "invalid_escapes",
            Repair::ControlCharacters => "control_characters",
            Repair::UnicodeWhitespace => "unicode_whitespace",
            Repair::UnquotedValues => "unquoted_values",
            Repair::Placeholders => "placeholders",
            Repair::MismatchedBrackets => "mismatched_brackets",
            Repair::TypographicQuotes => "typographic_quotes",
            Repair::NumberFormat => "number_format",
            Repair::MissingQuote => "missing_quote",
            Repair::DoubledQuotes => "doubled_quotes",
            Repair::UnterminatedString => "unterminated_string",
            Repair::StringConcatenation => "string_concatenation",
            Repair::MongoShellTypes => "mongo_shell_types",
            Repair::JsonInString => "json_in_string",
            Repair::Jsonp => "jsonp",
            Repair::SurroundingText => "surrounding_text",
            Repair::CommaSeparatedDocuments => "comma_separated_documents",
            Repair::MultipleValues => "multiple_values",
            Repair::CoercedNumber => "coerced_number",
            Repair::CoercedBoolean => "coerced_boolean",
            Repair::WrappedInArray => "wrapped_in_array",
            Repair::DroppedUnexpectedField => "dropped_unexpected_field",
            Repair::FilledDefault => "filled_default",
        }
    }

    /// This kind's bit in a set of kinds held as a `u64` (the repair tier's,
    /// the summary's): bit `i` for `Repair::ALL[i]`.
    pub const fn bit(self) -> u64 {
        1 << (self as u32)
    }

    /// The repair kind with that `snake_case` name.
    pub fn parse(name: &str) -> Option<Repair> {
        let name = name.trim();
        Repair::ALL
            .into_iter()
            .find(|repair| repair.as_str().eq_ignore_ascii_case(name))
    }
}

// The repair tier's and the summary's sets of kinds are the bits of a `u64`,
// bit `i` for `Repair::ALL[i]`, which is the kind whose discriminant is `i`.
const _: () = {
    assert!(Repair::ALL.len() <= 64);
    let mut i = 0;
    while i < Repair::ALL.len() {
        assert!(Repair::ALL[i] as usize == i);
        i += 1;
    }
};

impl std::fmt::Display for Repair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the ladder does with several top-level documents in a row (`{...}{...}`, or
/// with prose between them): the contract's `multiple_values`.
///
/// The repair tier lists [`Repair::MultipleValues`] whenever it saw more than one. The
/// embedded tier takes the first document in prose (seed 001's "first {...} block"),
/// listing nothing, as it lists no repairs; with `last` or `all` it leaves several
/// documents to the repair tier.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MultipleValues {
    /// The first document.
    #[default]
    First,
    /// The last document.
    Last,
    /// Every document, in an array (a single document is itself, not wrapped).
    All,
}

/// A JSON value found in a model's output, with how it was found (the
/// pipeline takes [`extract_as`]'s parts).
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// The object or array.
    pub value: Json,
    /// The tier that found it.
    pub tier: Tier,
    /// The repairs made, each kind once, in [`Repair`] order (empty unless `tier` is
    /// [`Tier::Repair`]).
    pub repairs: Vec<Repair>,
}

/// Runs the given tiers in order and returns the first success, or `None`, taking the
/// first of several documents ([`extract_with`] and [`MultipleValues::First`]).
///
/// [`Tier::Fallback`] is ignored here: the caller handles it.
pub fn extract(text: &str, tiers: &[Tier]) -> Option<Extracted> {
    extract_with(text, tiers, MultipleValues::First)
}

/// Runs the given tiers in order and returns the first success, or `None`; `multiple`
/// says what to do with several top-level documents.
///
/// [`Tier::Fallback`] is ignored here: the caller handles it.
pub fn extract_with(text: &str, tiers: &[Tier], multiple: MultipleValues) -> Option<Extracted> {
    extract_as(text, tiers, multiple).map(|(value, tier, repairs)| Extracted {
        value,
        tier,
        repairs,
    })
}

/// [`extract_with`], making a `D` of the document found: its value, or only its
/// text.
pub fn extract_as<D: Document>(
    text: &str,
    tiers: &[Tier],
    multiple: MultipleValues,
) -> Option<(D, Tier, Vec<Repair>)> {
    if !may_hold_document(text) {
        return None;
    }
    tiers.iter().enumerate().find_map(|(at, &tier)| {
        let (document, repairs) = match tier {
            Tier::Strict => (strict::parse(text)?, Vec::new()),
            Tier::Fence => (fence::extract(text)?, Vec::new()),
            // A JSONP call is a dialect the repair tier names, not prose
            // around a document, when the ladder goes on to that tier.
            Tier::Embedded
                if tiers[at..].contains(&Tier::Repair) && repair::jsonp_body(text).is_some() =>
            {
                return None
            }
            Tier::Embedded => (embedded::extract_with(text, multiple)?, Vec::new()),
            Tier::Repair => {
                let (value, repairs) = repair::repair_with(text, multiple)?;
                (D::from_json(value), repairs)
            }
            Tier::Fallback => return None,
        };
        Some((document, tier, repairs))
    })
}

/// Whether any tier could find a document in `text`: one that has no `{`, no
/// `[` and no backslash has none (a document is an object or an array, and
/// only an escape, `\u007b` in a JSON string the repair tier unwraps, makes a
/// bracket of other text). A quarter of the KSI records are prose without
/// one: five scans of the tiers each said so.
fn may_hold_document(text: &str) -> bool {
    memchr::memchr3(b'{', b'[', b'\\', text.as_bytes()).is_some()
}

/// What the ladder makes of the document it finds: its value ([`Json`]), or
/// only the text a result writes for it ([`Written`]), when nothing reads the
/// value.
pub trait Document: Sized {
    /// The object or array `text` holds, with nothing around it.
    fn read(text: &str) -> Option<Self>;
    /// The document that holds `value` (found by a tier that builds it).
    fn from_json(value: Json) -> Self;
    /// Calls `change` on the document's value, and keeps what it did (it
    /// returns whether it changed the value).
    fn change(&mut self, change: impl FnOnce(&mut Json) -> bool);
}

impl Document for Json {
    fn read(text: &str) -> Option<Self> {
        crate::json_read::parse(text)
            .filter(|value| matches!(value, Json::Object(_) | Json::Array(_)))
    }

    fn from_json(value: Json) -> Self {
        value
    }

    fn change(&mut self, change: impl FnOnce(&mut Json) -> bool) {
        change(self);
    }
}

/// A document as compact JSON text: what [`crate::json_write::write_json`]
/// writes for its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written(pub Vec<u8>);

impl Document for Written {
    fn read(text: &str) -> Option<Self> {
        let mut out = Vec::with_capacity(text.len());
        crate::json_read::write_container(text, &mut out)?;
        Some(Self(out))
    }

    fn from_json(value: Json) -> Self {
        let mut out = Vec::new();
        crate::json_write::write_json(&mut out, &value);
        Self(out)
    }

    /// Reads the value from the text, and writes it again when `change`
    /// changed it.
    fn change(&mut self, change: impl FnOnce(&mut Json) -> bool) {
        let Some(mut value) = std::str::from_utf8(&self.0)
            .ok()
            .and_then(crate::json_read::parse)
        else {
            return;
        };
        if change(&mut value) {
            *self = Self::from_json(value);
        }
    }
}

/// A document's value, with the text a result writes for it (see
/// [`parse_writing`](crate::json_read::parse_writing)) when the reading could
/// write it: for a pack whose steps read the value, the result copies that
/// text instead of writing the value again.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub json: Json,
    pub written: Option<Written>,
}

impl Document for Found {
    fn read(text: &str) -> Option<Self> {
        let mut out = Vec::with_capacity(text.len());
        let (json, whole) = crate::json_read::parse_writing(text, &mut out)?;
        if !matches!(json, Json::Object(_) | Json::Array(_)) {
            return None;
        }
        Some(Self {
            json,
            written: whole.then_some(Written(out)),
        })
    }

    fn from_json(json: Json) -> Self {
        Self {
            json,
            written: None,
        }
    }

    /// The text, when the value changes, is no longer the value's.
    fn change(&mut self, change: impl FnOnce(&mut Json) -> bool) {
        if change(&mut self.json) {
            self.written = None;
        }
    }
}

/// Why the JSON a text seems to hold could not be read, when the reason cannot be
/// seen by looking at it: a lone UTF-16 surrogate escape (`"\ud800"`, which
/// Python's `json.dumps` writes). `None` when the text holds no `{` or `[`,
/// parses, or fails for a visible reason. (Numbers keep their text, so `1e400`
/// is read as written, not refused as out of range.)
pub fn hidden_failure(text: &str) -> Option<String> {
    let start = memchr::memchr2(b'{', b'[', text.as_bytes())?;
    let candidate = &text[start..];
    if crate::json_read::parse_first(candidate).is_some() {
        return None;
    }
    crate::text::replace_lone_surrogates(candidate).map(|_| {
        "the JSON has a lone UTF-16 surrogate escape (such as `\\ud800`); the `repair` tier \
         reads it as U+FFFD"
            .to_owned()
    })
}

/// Where and why the JSON the text seems to hold stops being readable, for a
/// person and for a model asked to try again: the lone-surrogate case of
/// [`hidden_failure`], or the parser's reason at the line and column of the
/// output where it stopped, with the text there (``expected `,` or `}` at line 1,
/// column 49, at `-12-01}` ``). `None` when the text holds no `{` or `[` that
/// starts like JSON, or the first value from there parses.
pub fn parse_failure(text: &str) -> Option<String> {
    if let Some(hidden) = hidden_failure(text) {
        return Some(hidden);
    }
    // The first `{` or `[` that starts like JSON (`{"`, `{}`, `[1`, `[{`, ...),
    // not prose in brackets (`[MOOD: calm]`, `{partial json`).
    let start = text.match_indices(['{', '[']).find_map(|(at, open)| {
        // `{` and `[` are one byte: what follows starts at a character boundary.
        let next = text[at + 1..].trim_start().chars().next();
        let starts_json = if open == "{" {
            matches!(next, Some('"' | '}'))
        } else {
            next.is_some_and(|n| matches!(n, '"' | '{' | '[' | ']' | '-') || n.is_ascii_digit())
        };
        starts_json.then_some(at)
    })?;
    let candidate = &text[start..];
    let err = serde_json::Deserializer::from_str(candidate)
        .into_iter::<serde_json::Value>()
        .next()?
        .err()?;
    let reason = err.to_string();
    let reason = reason
        .rsplit_once(" at line ")
        .map_or(reason.as_str(), |(reason, _)| reason);
    // The error's place in the candidate, as a byte offset, then in the output.
    let mut offset = 0;
    for (i, line) in candidate.split_inclusive('\n').enumerate() {
        if i + 1 == err.line() {
            offset += line
                .char_indices()
                .nth(err.column().saturating_sub(1))
                .map_or(line.len(), |(at, _)| at);
            break;
        }
        offset += line.len();
    }
    // A document cut short stops at the end, wherever the parser's last character was.
    let at = if err.is_eof() {
        text.len()
    } else {
        start + offset.min(candidate.len())
    };
    let line = text[..at].matches('\n').count() + 1;
    let column = text[..at]
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count())
        + 1;
    let there: String = text[at..]
        .chars()
        .take_while(|c| *c != '\n')
        .take(24)
        .collect();
    let there = if there.trim().is_empty() {
        "the end of the output".to_owned()
    } else {
        format!("`{there}`")
    };
    Some(format!(
        "{reason} at line {line}, column {column}, at {there}"
    ))
}

/// Parses `text` as JSON, accepting only an object or an array.
///
/// Returns at once (without parsing) unless `text` starts with `{` or `[`, so a long
/// string or number costs nothing.
pub fn parse_container<D: Document>(text: &str) -> Option<D> {
    if !text.starts_with(['{', '[']) {
        return None;
    }
    D::read(text)
}

/// Whether the `{` or `[` at `start` is, by what comes before it, a value inside
/// a structure rather than a document: a member's value (`"key": {`), an element
/// after another (`}, {`, `"a", [`, `1, {`, `null, {`), the first element of an open
/// array or object (`[{`, `{{`), or what follows a stray closer in a member's
/// place (`"key": } {`). Such a candidate's document lost its opener or
/// failed around it, and the candidate is one of its inner values.
pub fn inside_a_structure(bytes: &[u8], start: usize) -> bool {
    let before = |end: usize| {
        bytes[..end]
            .iter()
            .rposition(|byte| !byte.is_ascii_whitespace())
    };
    let Some(at) = before(start) else {
        return false;
    };
    // The last byte that is not whitespace before `at`, and the text up to it.
    let prior = before(at);
    let prior_byte = prior.map(|p| bytes[p]);
    match bytes[at] {
        b'{' | b'[' => true,
        // After a key's closing quote (`"`, `'`, or a typographic `”` / `’`,
        // whose last byte is 0x9D / 0x99).
        b':' => prior_byte.is_some_and(|p| matches!(p, b'"' | b'\'' | 0x9D | 0x99)),
        // After a value: a closer, a string, a number, or one of JSON's literals
        // (`[null, {`).
        b',' => prior.is_some_and(|end| {
            let word = &bytes[..=end];
            matches!(word[end], b'}' | b']' | b'"')
                || word[end].is_ascii_digit()
                || [&b"null"[..], b"true", b"false"].iter().any(|literal| {
                    word.ends_with(literal)
                        && !word[..word.len() - literal.len()]
                            .last()
                            .is_some_and(u8::is_ascii_alphanumeric)
                })
        }),
        // A closer where a member's value should be (`"key": ]{`): a stray one
        // ended the document early, and what follows is the rest of it.
        b'}' | b']' => prior_byte == Some(b':'),
        _ => false,
    }
}

/// The first byte from `end` on that is not whitespace.
fn next_significant(bytes: &[u8], end: usize) -> Option<u8> {
    bytes[end..]
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .copied()
}

/// Whether what follows a document that ends at `end` (past whitespace) shows
/// that it was a value inside a larger structure whose opener is missing: a `,`
/// or `:`, or a `]` (it was an element of an array that lost its `[`: `{...}]`,
/// `[...]]`). A `}` is a stray one and is ignored (`{...}}`): an object or array
/// inside an object is a member's value, found as such by
/// [`inside_a_structure`].
pub fn continues_after(bytes: &[u8], end: usize) -> bool {
    next_significant(bytes, end).is_some_and(|next| matches!(next, b',' | b':' | b']'))
}

/// Where the document at `start`, which could not be read, certainly ends: the
/// byte after its closing bracket, when reading its brackets and strings gives
/// one end that nothing about it puts in doubt. Its closers match their openers;
/// counting every bracket, inside strings too, gives the same end (a doubled or
/// dropped quote that turned strings inside out would not); and what follows is
/// not a `,`, `:`, closer or quote, which would show that the document was
/// inside a structure or did not end there. `None` when the end is in doubt: no
/// later document may then be looked for, since it could be one of this one's
/// inner values. Linear in the length read.
pub fn failed_span_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut open: Vec<u8> = Vec::new();
    // The depth counting every bracket, inside strings too.
    let mut blind = 0usize;
    let mut i = start;
    let end = loop {
        let byte = *bytes.get(i)?;
        i += 1;
        match byte {
            b'{' | b'[' => {
                open.push(byte);
                blind += 1;
            }
            b'}' | b']' => {
                let opener = if byte == b'}' { b'{' } else { b'[' };
                if open.pop() != Some(opener) {
                    return None;
                }
                blind -= 1;
                if open.is_empty() {
                    break i;
                }
                if blind == 0 {
                    return None;
                }
            }
            b'"' => loop {
                match *bytes.get(i)? {
                    b'\\' => i += 1,
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'{' | b'[' => blind += 1,
                    b'}' | b']' => {
                        blind = blind.checked_sub(1).filter(|&depth| depth > 0)?;
                    }
                    _ => {}
                }
                i += 1;
            },
            _ => {}
        }
    };
    let doubtful = next_significant(bytes, end).is_some_and(|next| b",:}]\"'".contains(&next));
    (blind == 0 && !doubtful).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    const LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];

    /// The ladder's shortcut holds: no tier, asked on its own, finds a
    /// document in text without `{`, `[` or a backslash, on generated texts of every
    /// other character a tier looks for (quotes, fences, parentheses, closers,
    /// colons, commas, literals, numbers, a JSONP call, Python's words).
    #[test]
    fn no_tier_finds_a_document_in_text_without_an_opener_or_an_escape() {
        let pieces = [
            "\"",
            "'",
            "`",
            "```",
            "```json\n",
            "~~~",
            "\n",
            " ",
            "(",
            ")",
            "}",
            "]",
            ":",
            ",",
            ";",
            "true",
            "false",
            "null",
            "None",
            "True",
            "1",
            "-2.5e3",
            "a",
            "key",
            "callback(",
            "\u{00e9}",
            "\t",
            "/*",
            "*/",
            "//",
            "#",
            "=",
            "<",
            ">",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let text: String = (0..next(40)).map(|_| pieces[next(pieces.len())]).collect();
            assert!(!may_hold_document(&text), "{text:?}");
            assert!(strict::parse::<Json>(&text).is_none(), "strict: {text:?}");
            assert!(fence::extract::<Json>(&text).is_none(), "fence: {text:?}");
            for multiple in [
                MultipleValues::First,
                MultipleValues::Last,
                MultipleValues::All,
            ] {
                assert!(
                    embedded::extract_with::<Json>(&text, multiple).is_none(),
                    "embedded: {text:?}"
                );
                assert!(
                    repair::repair_with(&text, multiple).is_none(),
                    "repair: {text:?}"
                );
            }
        }
        // And each opener or an escape alone makes the ladder look.
        for text in ["{", "[", "\"\\u007b\\\"a\\\": 1\\u007d\""] {
            assert!(may_hold_document(text), "{text:?}");
        }
        assert!(
            repair::repair_with("\"\\u007b\\\"a\\\": 1\\u007d\"", MultipleValues::First).is_some()
        );
    }

    /// A document that cannot be read or repaired is a failure, never one of
    /// its valid inner objects reported as the whole (a scorer would score the
    /// wrong data without knowing it). The repair tier repairs the outermost
    /// document or fails.
    #[test]
    fn a_damaged_document_never_yields_one_of_its_inner_objects() {
        let cases: [(&str, Option<Json>); 11] = [
            (
                r#"{"name": "A", "meta": {"x": 1}, "bad": 2026-12-01}"#,
                Some(json!({"name": "A", "meta": {"x": 1}, "bad": "2026-12-01"})),
            ),
            (
                r#"{"user": {"name": "x", "address": {"city": "Paris"}}, "n": @@}"#,
                None,
            ),
            (
                r#"Here: {"order": {"id": 7, "items": [{"sku": "A"}]}, "total": 12,50 EUR}"#,
                None,
            ),
            ("```json\n{\"a\": {\"b\": 1}, \"c\": <unknown>}\n```", None),
            (
                r#"{"steps": [{"n": 1}, {"n": 2}], "status": done-ish}"#,
                Some(json!({"steps": [{"n": 1}, {"n": 2}], "status": "done-ish"})),
            ),
            (
                r#"Result {"outer": {"inner": {"deep": true}}, "score": 0..5} end"#,
                Some(json!({"outer": {"inner": {"deep": true}}, "score": "0..5"})),
            ),
            // The first element of a damaged top-level array.
            (r#"Items: [{"a": 1}, {"b": 2}, @@]"#, None),
            // A separate document after the failed one is tried (it is not inside).
            (
                r#"[{"a": 1}, {"b": 2}, <x>] and {"c": 3"#,
                Some(json!({"c": 3})),
            ),
            // An object inside a string literal.
            (r#"{"note": "use {\"x\": 1} here", "n": <y>}"#, None),
            (r#"{"note": "see {'x': 1}", "n": %%}"#, None),
            // An inner object of a document cut short is not the answer: the
            // document is closed.
            (
                r#"{"meta": {"v": 2}, "items": [{"id": 1}], "text": "cut"#,
                Some(json!({"meta": {"v": 2}, "items": [{"id": 1}], "text": "cut"})),
            ),
        ];
        for (text, repaired) in cases {
            for tier in [Tier::Strict, Tier::Fence, Tier::Embedded] {
                assert_eq!(extract(text, &[tier]), None, "{tier:?} on {text}");
            }
            let found = extract(text, &[Tier::Repair]).map(|found| found.value);
            assert_eq!(found, repaired, "repair on {text}");
        }
        // A candidate that fails early lets a later document be tried: prose in
        // braces (an unquoted key needs a colon), then the JSON.
        let found = extract(
            r#"Sure! {note this is prose} here: {"a": 1}"#,
            &[Tier::Repair],
        );
        assert_eq!(found.map(|f| f.value), Some(json!({"a": 1})));
    }

    /// What each tier does with top-level arrays and scalars: scalars are never a
    /// success; `strict`, `fence` and `repair` take an array, `embedded` only one that
    /// holds an object. The contract then decides (its field rules expect an object).
    #[test]
    fn top_level_arrays_and_scalars_by_tier() {
        let array = "[1, 2]";
        for tier in [Tier::Strict, Tier::Repair] {
            assert_eq!(
                extract(array, &[tier]).map(|f| f.value),
                Some(json!([1, 2]))
            );
        }
        assert_eq!(extract(array, &[Tier::Embedded]), None);
        assert_eq!(
            extract("```json\n[1, 2]\n```", &[Tier::Fence]).map(|f| f.value),
            Some(json!([1, 2]))
        );
        assert_eq!(
            extract("Here: [{\"a\": 1}] ok", &[Tier::Embedded]).map(|f| f.value),
            Some(json!([{"a": 1}]))
        );
        for text in ["42", "\"s\"", "null", "true", "```json\n7\n```", "NaN"] {
            for tier in Tier::ALL {
                assert_eq!(extract(text, &[tier]), None, "{tier:?} on {text}");
            }
        }
    }

    #[test]
    fn a_jsonp_call_is_left_to_the_repair_tier_which_names_it() {
        let text = r#"callback({"a": [1, 2]});"#;
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(
            (found.tier, found.repairs),
            (Tier::Repair, vec![Repair::Jsonp])
        );
        assert_eq!(found.value, json!({"a": [1, 2]}));
        // A ladder without the repair tier keeps finding it as before.
        let found = extract(text, &[Tier::Strict, Tier::Embedded]).unwrap();
        assert_eq!(
            (found.tier, found.value),
            (Tier::Embedded, json!({"a": [1, 2]}))
        );
        // A call in prose is prose around a document.
        let found = extract(r#"Run search({"q": "x"}) now."#, &LADDER).unwrap();
        assert_eq!((found.tier, found.repairs), (Tier::Embedded, vec![]));
    }

    #[test]
    fn multiple_values_are_chosen_by_the_contract() {
        let text = "{\"a\": 1}\n{\"b\": 2}";
        let take = |multiple| extract_with(text, &LADDER, multiple).unwrap();
        let first = take(MultipleValues::First);
        assert_eq!((first.tier, first.value), (Tier::Embedded, json!({"a": 1})));
        let last = take(MultipleValues::Last);
        assert_eq!((last.tier, last.value), (Tier::Repair, json!({"b": 2})));
        assert_eq!(last.repairs, [Repair::MultipleValues]);
        let all = take(MultipleValues::All);
        assert_eq!(all.value, json!([{"a": 1}, {"b": 2}]));
        assert_eq!(all.repairs, [Repair::MultipleValues]);
    }

    #[test]
    fn parse_failure_says_where_and_why_the_json_stopped() {
        assert_eq!(
            parse_failure("Sure:\n{\"tool\": \"book\",\n \"date\": 2026-12-01}").as_deref(),
            Some("expected `,` or `}` at line 3, column 14, at `-12-01}`")
        );
        // Columns count characters; a document cut short stops at the end.
        assert_eq!(
            parse_failure("é🙂 {\"a\": [1, 2").as_deref(),
            Some("EOF while parsing a list at line 1, column 15, at the end of the output")
        );
        assert_eq!(
            parse_failure("é🙂 {\"a\": tru}\nmore").as_deref(),
            Some("expected ident at line 1, column 13, at `}`")
        );
        // Prose in brackets is not JSON; nor is text without any, or JSON that parses.
        for text in [
            "[MOOD: calm] fine",
            "I'm not sure {partial json",
            "no json",
            "{\"a\": 1}",
            "ü[ü{ü",
        ] {
            assert_eq!(parse_failure(text), None, "{text}");
        }
        assert!(parse_failure("[1, 2,, 3]").unwrap().contains("at `, 3]`"));
    }

    #[test]
    fn tier_names_round_trip() {
        for tier in Tier::ALL {
            assert_eq!(Tier::parse(tier.as_str()), Some(tier));
            assert_eq!(tier.to_string(), tier.as_str());
            let serialized = serde_json::to_string(&tier).unwrap();
            assert_eq!(serialized, format!("\"{}\"", tier.as_str()));
            let back: Tier = serde_json::from_str(&serialized).unwrap();
            assert_eq!(back, tier);
        }
        assert_eq!(Tier::parse(" Fence "), Some(Tier::Fence));
        assert_eq!(Tier::parse("REPAIR"), Some(Tier::Repair));
        assert_eq!(Tier::parse("loose"), None);
        assert_eq!(Tier::parse(""), None);
    }

    #[test]
    fn tier_order_is_ladder_order() {
        let mut sorted = Tier::ALL;
        sorted.sort();
        assert_eq!(sorted, Tier::ALL);
    }

    #[test]
    fn repair_names_round_trip() {
        let mut sorted = Repair::ALL;
        sorted.sort();
        assert_eq!(sorted, Repair::ALL);
        for repair in Repair::ALL {
            let serialized = serde_json::to_string(&repair).unwrap();
            assert_eq!(serialized, format!("\"{}\"", repair.as_str()));
            assert_eq!(Repair::parse(repair.as_str()), Some(repair));
            assert_eq!(repair.to_string(), repair.as_str());
        }
        assert_eq!(Repair::TrailingComma.as_str(), "trailing_comma");
        assert_eq!(
            Repair::DroppedIncompleteMember.as_str(),
            "dropped_incomplete_member"
        );
        assert_eq!(Repair::parse("nope"), None);
    }

    #[test]
    fn parse_container_accepts_only_objects_and_arrays() {
        let cases = [
            ("{}", Some(json!({}))),
            ("[1]", Some(json!([1]))),
            (
                r#"{"a": 1E5, "a": [" \u00e9 "]}"#,
                Some(json!({"a": [" é "]})),
            ),
            ("1", None),
            ("\"s\"", None),
            ("null", None),
            (" {}", None),
            ("{} x", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_container::<Json>(text), expected, "{text:?}");
            // Its text only: what the value's writer writes.
            let written = expected.map(|value| Written(value.to_string().into_bytes()));
            assert_eq!(parse_container::<Written>(text), written, "{text:?}");
        }
    }

    #[test]
    fn seed_001_strict() {
        let text =
            r#"{"kind": "world.observed", "text": "The path folds itself into a paper crane."}"#;
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Strict);
        assert!(found.repairs.is_empty());
        assert_eq!(
            found.value,
            json!({"kind": "world.observed", "text": "The path folds itself into a paper crane."})
        );
    }

    #[test]
    fn seed_001_embedded() {
        let text =
            r#"Certainly! Here is the JSON: {"kind": "agent.spoke", "text": "I collect echoes."}"#;
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Embedded);
        assert_eq!(
            found.value,
            json!({"kind": "agent.spoke", "text": "I collect echoes."})
        );
        assert!(found.repairs.is_empty());
    }

    #[test]
    fn seed_001_pure_text() {
        let text = "The mushrooms charge admission to their bioluminescent shows.";
        assert_eq!(extract(text, &LADDER), None);
        for tier in Tier::ALL {
            assert_eq!(extract(text, &[tier]), None);
        }
    }

    #[test]
    fn seed_004_fence() {
        let text = "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thinking\", \"mood\": \"🤔\", \"confidence\": 0.7, \"monologue\": \"hmm\"}\n```";
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Fence);
        assert_eq!(
            found.value,
            json!({"eval": null, "thought": "thinking", "mood": "🤔", "confidence": 0.7, "monologue": "hmm"})
        );
        assert_eq!(
            found.value["mood"].as_str().unwrap().as_bytes(),
            "🤔".as_bytes()
        );
        let keys: Vec<&str> = found
            .value
            .as_object()
            .unwrap()
            .keys()
            .map(crate::json::Str::as_str)
            .collect();
        assert_eq!(keys, ["eval", "thought", "mood", "confidence", "monologue"]);
    }

    #[test]
    fn seed_004_malformed() {
        let text = "I'm not sure what to do {partial json";
        assert_eq!(extract(text, &[Tier::Strict, Tier::Fence]), None);
        assert_eq!(extract(text, &LADDER), None);
        assert_eq!(extract(text, &Tier::ALL), None);
    }

    #[test]
    fn tiers_run_in_the_given_order() {
        let text = "{\"a\": 1}";
        assert_eq!(extract(text, &LADDER).unwrap().tier, Tier::Strict);
        let reversed = [Tier::Repair, Tier::Embedded, Tier::Fence, Tier::Strict];
        let found = extract(text, &reversed).unwrap();
        assert_eq!(found.tier, Tier::Repair);
        assert!(found.repairs.is_empty());
        assert_eq!(
            extract(text, &[Tier::Embedded]).unwrap().tier,
            Tier::Embedded
        );
        assert_eq!(extract(text, &[Tier::Fence]), None);
    }

    #[test]
    fn only_requested_tiers_run() {
        let text = "Sure: {\"a\": 1}";
        assert_eq!(extract(text, &[Tier::Strict, Tier::Fence]), None);
        assert_eq!(extract(text, &[]), None);
        assert_eq!(extract(text, &[Tier::Fallback]), None);
        let found = extract(text, &[Tier::Fallback, Tier::Embedded]).unwrap();
        assert_eq!(found.tier, Tier::Embedded);
    }

    #[test]
    fn repair_tier_reports_repairs() {
        let text = "{'a': True, 'b': [1, 2,],}";
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Repair);
        assert_eq!(found.value, json!({"a": true, "b": [1, 2]}));
        assert_eq!(
            found.repairs,
            [
                Repair::TrailingComma,
                Repair::SingleQuotes,
                Repair::PythonLiterals
            ]
        );
    }

    #[test]
    fn truncated_output_reaches_the_repair_tier() {
        let text = "```json\n{\"thought\": \"I was thinking abo";
        let found = extract(text, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Repair);
        assert_eq!(found.value, json!({"thought": "I was thinking abo"}));
        assert_eq!(
            found.repairs,
            [
                Repair::ClosedString,
                Repair::ClosedBrackets,
                Repair::SurroundingText
            ]
        );
    }

    #[test]
    fn every_truncation_of_a_fenced_answer_is_handled() {
        let full = "Here's my response:\n```json\n{\n  \"thought\": \"a \\\"quoted\\\" 🤔 idea\",\n  \"scores\": [1, -2.5e1, true, null],\n  \"nested\": {\"k\": \"v\"}\n}\n```\nHope that helps!";
        let expected = json!({
            "thought": "a \"quoted\" 🤔 idea",
            "scores": [1, serde_json::from_str::<Json>("-2.5e1").unwrap(), true, null],
            "nested": {"k": "v"}
        });
        let found = extract(full, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Fence);
        assert_eq!(found.value, expected);
        let open_brace = full.find('{').unwrap();
        let close_brace = full.rfind('}').unwrap();
        for (end, _) in full.char_indices().skip(1) {
            let prefix = &full[..end];
            let found = extract(prefix, &LADDER);
            if end <= open_brace {
                assert_eq!(found, None, "{prefix:?}");
                continue;
            }
            let found = found.unwrap_or_else(|| panic!("nothing for {prefix:?}"));
            assert!(found.value.is_object(), "{prefix:?}");
            if end <= close_brace {
                assert_eq!(found.tier, Tier::Repair, "{prefix:?}");
                assert!(
                    found.repairs.contains(&Repair::ClosedBrackets),
                    "{prefix:?}"
                );
            } else {
                assert_eq!(found.value, expected, "{prefix:?}");
            }
        }
    }

    #[test]
    fn scalars_are_never_a_success() {
        for text in ["42", "\"just a string\"", "null", "true", "```json\n7\n```"] {
            assert_eq!(extract(text, &LADDER), None, "{text}");
        }
    }

    #[test]
    fn deep_nesting_fails_without_crashing() {
        for open in ["[", "{", "{\"a\":", "[{\"a\":"] {
            let unbalanced = open.repeat(100_000);
            assert_eq!(extract(&unbalanced, &LADDER), None);
        }
        let arrays = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(extract(&arrays, &LADDER), None);
        let objects = format!("{}{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
        assert_eq!(extract(&objects, &LADDER), None);
        let braces = format!("{}{}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(extract(&braces, &LADDER), None);
    }

    #[test]
    fn ten_megabytes_of_braces() {
        let text = "{".repeat(10 * 1024 * 1024);
        assert_eq!(extract(&text, &LADDER), None);
        // An unclosed brace hides what follows it from the embedded tier, and the repair
        // tier gives up after its eight attempts.
        let object_after = format!("{text}{{\"a\": 1}}");
        assert_eq!(extract(&object_after, &LADDER), None);
        let object_before = format!("{{\"a\": 1}}{text}");
        let found = extract(&object_before, &LADDER).unwrap();
        assert_eq!(found.tier, Tier::Embedded);
        assert_eq!(found.value, json!({"a": 1}));
    }

    #[test]
    fn hidden_failures_are_explained() {
        // Numbers keep their text: `1e400` is read (and echoed) as written.
        assert_eq!(hidden_failure(r#"{"a": 1e400}"#), None);
        let reason = hidden_failure("Answer:\n  {\"a\": [1, \"\\udc00\"]}").unwrap();
        assert!(reason.contains("lone UTF-16 surrogate"), "{reason}");
        let reason = hidden_failure(r#"{"a": "\ud800"}"#).unwrap();
        assert!(reason.contains("lone UTF-16 surrogate"), "{reason}");
        assert_eq!(hidden_failure(r#"{"a": 1e300}"#), None);
        assert_eq!(hidden_failure(r#"{"a": 1,}"#), None);
        assert_eq!(hidden_failure("no json here"), None);
    }

    #[test]
    fn a_value_inside_a_structure_is_told_by_what_comes_before_it() {
        let inside = |text: &str| {
            let start = text.rfind(['{', '[']).unwrap();
            inside_a_structure(text.as_bytes(), start)
        };
        for text in [
            r#""meta": {"#,
            "'meta' :\n  [",
            "\"meta”: {",
            r#"{"a": 1}, {"#,
            r#""x",  ["#,
            "12,{",
            "[null, {",
            "true ,[",
            "[ {",
            "{{",
            r#""meta": } {"#,
            r#""tags":]["#,
        ] {
            assert!(inside(text), "{text:?}");
        }
        for text in [
            "{",
            "Here is the JSON: {",
            "Sure, {",
            "It is untrue, {",
            "{\"a\": 1} {",
            "{\"a\": 1}\n[",
            "see [1] and {",
        ] {
            assert!(!inside(text), "{text:?}");
        }
    }

    #[test]
    fn a_document_followed_by_a_separator_was_part_of_a_structure() {
        // The document is the text before the `|`.
        let after = |text: &str| {
            let end = text.find('|').unwrap();
            let text = text.replace('|', "");
            continues_after(text.as_bytes(), end)
        };
        for text in [
            r#"{"a": 1}|,"#,
            "{\"a\": 1}|\n  :",
            "{\"a\": 1}| ]",
            "[1]|, ",
            "[1]|]",
        ] {
            assert!(after(text), "{text:?}");
        }
        for text in [
            "{\"a\": 1}|",
            "{\"a\": 1}|}",
            "[1]|}",
            "{\"a\": 1}| and more",
            "{\"a\": 1}|\n{\"b\": 2}",
        ] {
            assert!(!after(text), "{text:?}");
        }
    }

    #[test]
    fn a_failed_document_ends_only_where_that_is_certain() {
        let end = |text: &str| failed_span_end(text.as_bytes(), 0);
        assert_eq!(end("{x} and {'a': 1}"), Some(3));
        assert_eq!(end("{\"a\": \"[}\", \"b\": [x]} then"), Some(21));
        assert_eq!(end("[MOOD: calm]"), Some(12));
        for text in [
            // Never closed, or closed by the wrong kind.
            "{\"a\": {\"b\": 1}",
            "{\"a\": [1}, \"b\": {\"c\": 2}}",
            // A doubled quote turns the strings inside out: counted with the
            // strings, the brackets close at another place than counted without.
            r#"{"a": "x"", "b": {"c": "}"}, "d": {"e": 1}}"#,
            // What follows shows that it did not end there.
            "{\"a\": x}, \"b\": {\"c\": 1}}",
            "{\"a\": x}\"",
            "{\"a\": x} ]",
            "{\"a\": \"unclosed}",
            // Brackets in a string that close it when counted: in doubt too.
            "{\"a\": \"}]\", \"b\": [x]} then",
        ] {
            assert_eq!(end(text), None, "{text:?}");
        }
    }
}
