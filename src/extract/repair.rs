//! The repair tier: rewrites almost-JSON into JSON, listing the repairs it made.
//!
//! The rewriter reads the text once, left to right, keeping the open objects and arrays
//! on an explicit stack (nothing recurses), and writes compact JSON. It stops as soon as
//! the top-level value is complete, ignoring whatever follows. What it fixes:
//!
//! * trailing commas, single-quoted strings, unquoted keys (a bare identifier followed by
//!   `:`), Python's `True`/`False`/`None`, and `//`, `/* */` and `#` comments;
//! * missing commas between members, quotes inside a value string that do not end it (a
//!   quote followed by a letter or digit; if the string then runs to the end of the text
//!   the guess was wrong and the attempt fails), escapes JSON does not allow, and raw
//!   control characters inside strings;
//! * truncation: at the end of the text a string is closed, an unfinished last member (a
//!   key without a value, a dangling comma, a cut-off literal or number) is dropped, and
//!   the open objects and arrays are closed.
//!
//! It never guesses at prose: a bare word in value position other than `true`, `false`,
//! `null`, `True`, `False` or `None` fails, and so does a bare word in key position that
//! is not followed by `:`.
//!
//! Candidates: the content of the first JSON-like code fence (closed or not), from its
//! first `{` or `[`; then the text from its first `{` or `[`, and from each following
//! `{` after the point where the previous candidate could not be read (never a `{`
//! inside a document that failed: its inner objects are not the answer), at most
//! [`MAX_ATTEMPTS`] starts in all. Each attempt is linear and fails as soon
//! as the input cannot be JSON, or once nesting exceeds [`MAX_DEPTH`] (deeper than
//! `serde_json` parses).

use super::{fence, parse_container, Repair};
use serde_json::Value;

/// How many start positions in the text are tried (the fence candidate is extra).
pub const MAX_ATTEMPTS: usize = 8;

/// The deepest nesting the rewriter follows; `serde_json` rejects deeper input anyway.
pub const MAX_DEPTH: usize = 128;

/// Rewrites the almost-JSON in `text` into a JSON object or array.
///
/// Returns the value and the repairs made (each kind once, in [`Repair`] order), or
/// `None` when no candidate could be rewritten into JSON. The repair list is empty when
/// the candidate was already JSON (for instance an array in prose, which the embedded
/// tier does not look for).
pub fn repair(text: &str) -> Option<(Value, Vec<Repair>)> {
    if let Some(block) = fence::blocks(text).find(|block| fence::is_json_info(block.info)) {
        if let Some(start) = block.content.find(['{', '[']) {
            if let Ok(found) = attempt(&block.content[start..]) {
                return Some(found);
            }
        }
    }
    let mut start = text.find(['{', '['])?;
    for _ in 0..MAX_ATTEMPTS {
        let failed_at = match attempt(&text[start..]) {
            Ok(found) => return Some(found),
            Err(failed_at) => start + failed_at,
        };
        // The next candidate starts after the point where this one could not be
        // read: a `{` before it is inside the document that failed (a nested
        // `meta` or `address` object), and an inner value is never returned as
        // the whole.
        let from = failed_at.max(start + 1);
        let from = (from..=text.len()).find(|&i| text.is_char_boundary(i))?;
        start = from + text[from..].find('{')?;
    }
    None
}

/// Rewrites the value at the start of `source` and parses the result; on
/// failure, the offset in `source` where it could not go on.
fn attempt(source: &str) -> Result<(Value, Vec<Repair>), usize> {
    let mut rewriter = Rewriter::new(source);
    if rewriter.run().is_err() {
        return Err(rewriter.pos);
    }
    let end = rewriter.pos;
    let json = String::from_utf8(rewriter.out).map_err(|_| end)?;
    let value = parse_container(&json).ok_or(end)?;
    Ok((value, rewriter.repairs.to_vec()))
}

/// The set of repairs made, listed in [`Repair`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RepairSet(u32);

impl RepairSet {
    fn insert(&mut self, repair: Repair) {
        self.0 |= 1 << (repair as u32);
    }

    fn contains(self, repair: Repair) -> bool {
        self.0 & (1 << (repair as u32)) != 0
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

/// The single-pass rewriter.
#[derive(Debug)]
struct Rewriter<'a> {
    src: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    repairs: RepairSet,
    stack: Vec<Frame>,
}

impl<'a> Rewriter<'a> {
    fn new(source: &'a str) -> Self {
        Rewriter {
            src: source.as_bytes(),
            pos: 0,
            out: Vec::with_capacity(source.len().min(1 << 16)),
            repairs: RepairSet::default(),
            stack: Vec::new(),
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
            self.skip_trivia();
            let Some(byte) = self.peek() else {
                self.finish();
                break;
            };
            let frame = *self.top();
            match frame.state {
                State::Start | State::AfterComma => {
                    if byte == frame.kind.closer() {
                        if frame.state == State::AfterComma {
                            self.note(Repair::TrailingComma);
                        }
                        self.pos += 1;
                        self.close();
                    } else {
                        self.member(byte)?;
                    }
                }
                State::AfterKey => {
                    if byte != b':' {
                        return Err(Fail);
                    }
                    self.pos += 1;
                    self.out.push(b':');
                    self.top().state = State::AfterColon;
                }
                State::AfterColon => self.value(byte)?,
                State::AfterValue => {
                    if byte == frame.kind.closer() {
                        self.pos += 1;
                        self.close();
                    } else if byte == b',' {
                        self.pos += 1;
                        self.top().state = State::AfterComma;
                    } else if matches!(byte, b'"' | b'\'' | b'{' | b'[' | b'-')
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

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) {
        loop {
            while self.peek().is_some_and(|byte| byte.is_ascii_whitespace()) {
                self.pos += 1;
            }
            let rest = &self.src[self.pos..];
            if rest.starts_with(b"//") || rest.starts_with(b"#") {
                self.pos += rest
                    .iter()
                    .position(|&byte| byte == b'\n')
                    .unwrap_or(rest.len());
            } else if rest.starts_with(b"/*") {
                self.pos += rest[2..]
                    .windows(2)
                    .position(|pair| pair == b"*/")
                    .map_or(rest.len(), |at| at + 4);
            } else {
                return;
            }
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

    /// Starts a member of the innermost container: a key in an object, a value in an array.
    fn member(&mut self, byte: u8) -> Result<(), Fail> {
        let frame = *self.top();
        if byte == b',' {
            return Err(Fail);
        }
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
        if byte == b'"' || byte == b'\'' {
            match self.string(byte, true)? {
                StringEnd::Closed => self.top().state = State::AfterKey,
                StringEnd::EndOfText => self.drop_member(),
            }
            return Ok(());
        }
        if !is_word_byte(byte) {
            return Err(Fail);
        }
        let start = self.pos;
        while self.peek().is_some_and(is_word_byte) {
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        let mut after = self.pos;
        while self.src.get(after).is_some_and(u8::is_ascii_whitespace) {
            after += 1;
        }
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
        match byte {
            b'{' | b'[' => self.open(byte),
            b'"' | b'\'' => {
                if self.string(byte, false)? == StringEnd::EndOfText {
                    self.out.push(b'"');
                    self.note(Repair::ClosedString);
                }
                self.complete_value();
                Ok(())
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ if is_word_start(byte) => self.literal(),
            _ => Err(Fail),
        }
    }

    fn number(&mut self) -> Result<(), Fail> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|byte| matches!(byte, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E'))
        {
            self.pos += 1;
        }
        let token = &self.src[start..self.pos];
        match number_shape(token) {
            NumberShape::Complete => {
                self.out.extend_from_slice(token);
                self.complete_value();
                Ok(())
            }
            NumberShape::Prefix if self.pos == self.src.len() => {
                self.drop_member();
                Ok(())
            }
            _ => Err(Fail),
        }
    }

    fn literal(&mut self) -> Result<(), Fail> {
        const LITERALS: [(&[u8], &[u8]); 6] = [
            (b"true", b"true"),
            (b"false", b"false"),
            (b"null", b"null"),
            (b"True", b"true"),
            (b"False", b"false"),
            (b"None", b"null"),
        ];
        let start = self.pos;
        while self.peek().is_some_and(is_word_byte) {
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        if let Some(&(written, json)) = LITERALS.iter().find(|(written, _)| *written == word) {
            if written != json {
                self.note(Repair::PythonLiterals);
            }
            self.out.extend_from_slice(json);
            self.complete_value();
            return Ok(());
        }
        let truncated = self.pos == self.src.len()
            && LITERALS
                .iter()
                .any(|(written, _)| written.starts_with(word));
        if truncated {
            self.drop_member();
            Ok(())
        } else {
            Err(Fail)
        }
    }

    /// Copies a string opened by `quote` (at the current position) as a JSON string.
    ///
    /// At the end of the text the string is left open (without its closing quote). In a
    /// value (not in a key) a quote followed by a letter or digit is taken for a quote
    /// inside the string; should the string then run to the end of the text, that guess
    /// was likely wrong, and the attempt fails.
    fn string(&mut self, quote: u8, is_key: bool) -> Result<StringEnd, Fail> {
        let mut guessed_inner_quote = false;
        if quote == b'\'' {
            self.note(Repair::SingleQuotes);
        }
        self.pos += 1;
        self.out.push(b'"');
        while let Some(byte) = self.peek() {
            match byte {
                _ if byte == quote => {
                    self.pos += 1;
                    if !is_key && self.quote_is_inside() {
                        guessed_inner_quote = true;
                        self.note(Repair::UnescapedQuotes);
                        if quote == b'"' {
                            self.out.extend_from_slice(b"\\\"");
                        } else {
                            self.out.push(b'\'');
                        }
                    } else {
                        self.out.push(b'"');
                        return Ok(StringEnd::Closed);
                    }
                }
                b'"' => {
                    self.pos += 1;
                    self.out.extend_from_slice(b"\\\"");
                }
                b'\\' => {
                    if self.escape(quote) == StringEnd::EndOfText {
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
                }
                _ => {
                    self.pos += 1;
                    self.out.push(byte);
                }
            }
        }
        if guessed_inner_quote {
            return Err(Fail);
        }
        Ok(StringEnd::EndOfText)
    }

    /// Whether the quote just read sits inside the string rather than ending it: it is
    /// followed, after any whitespace, by a letter, a digit or a non-ASCII character,
    /// which can never follow the end of a string in JSON.
    fn quote_is_inside(&self) -> bool {
        self.src[self.pos..]
            .iter()
            .find(|byte| !byte.is_ascii_whitespace())
            .is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte >= 0x80)
    }

    /// Copies the escape at the current position (a backslash) inside a string opened by
    /// `quote`. Returns [`StringEnd::EndOfText`] when the text ends inside the escape,
    /// which is then dropped.
    fn escape(&mut self, quote: u8) -> StringEnd {
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
                if quote != b'\'' {
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
    use serde_json::json;

    /// Repairs `text`, expecting success.
    fn fixed(text: &str) -> (Value, Vec<Repair>) {
        repair(text).unwrap_or_else(|| panic!("no repair for {text:?}"))
    }

    #[track_caller]
    fn check(text: &str, expected: &Value, repairs: &[Repair]) {
        let (value, made) = fixed(text);
        assert_eq!(&value, expected, "value for {text:?}");
        assert_eq!(made, repairs, "repairs for {text:?}");
    }

    use Repair::{
        ClosedBrackets, ClosedString, Comments, ControlCharacters, DroppedIncompleteMember,
        InvalidEscapes, MissingComma, PythonLiterals, SingleQuotes, TrailingComma, UnescapedQuotes,
        UnquotedKeys,
    };

    #[test]
    fn valid_json_needs_no_repair() {
        check(
            "{\"a\": [1, -2.5e3, true, null, \"x\"], \"b\": {}}",
            // Numbers are kept as written.
            &serde_json::from_str::<Value>(r#"{"a": [1, -2.5e3, true, null, "x"], "b": {}}"#)
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
    fn other_bare_words_fail() {
        for text in [
            "{\"a\": yes}",
            "{\"a\": undefined}",
            "{\"a\": NaN}",
            "[Infinity]",
            "{\"a\": TRUE}",
            "[truex]",
            "{\"a\": hello world}",
        ] {
            assert_eq!(repair(text), None, "{text:?}");
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
        let expected: Value = serde_json::from_str(
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
                    assert_eq!(member, &expected[key]);
                }
            }
        }
    }

    #[test]
    fn truncated_members_are_dropped() {
        let cases: [(&str, Value); 12] = [
            ("{\"a\": 1, \"b\"", json!({"a": 1})),
            ("{\"a\": 1, \"b\":", json!({"a": 1})),
            ("{\"a\": 1, \"b\": ", json!({"a": 1})),
            ("{\"a\": 1, \"b", json!({"a": 1})),
            ("{\"a\": 1,", json!({"a": 1})),
            ("{\"a\": tru", json!({})),
            ("{\"a\": 1, \"b\": Fal", json!({"a": 1})),
            ("[1, 2.", json!([1])),
            ("[1, 2e", json!([1])),
            ("[1, -", json!([1])),
            ("[1, 2e+", json!([1])),
            ("{\"a\": 1, bee", json!({"a": 1})),
        ];
        for (text, expected) in cases {
            check(text, &expected, &[ClosedBrackets, DroppedIncompleteMember]);
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
    fn trailing_prose_is_ignored() {
        check(
            "{'a': 1} and that's my answer {",
            &json!({"a": 1}),
            &[SingleQuotes],
        );
        check(
            "Sure! [1, 2,] Hope it helps.",
            &json!([1, 2]),
            &[TrailingComma],
        );
    }

    #[test]
    fn fence_content_is_the_first_candidate() {
        check(
            "Here you go {not this}:\n```json\n{'a': 1,}\n```\nDone {x}.",
            &json!({"a": 1}),
            &[TrailingComma, SingleQuotes],
        );
    }

    #[test]
    fn unclosed_fence_at_the_end() {
        check(
            "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thin",
            &json!({"eval": null, "thought": "thin"}),
            &[ClosedString, ClosedBrackets],
        );
    }

    #[test]
    fn fence_end_is_the_end_of_the_candidate() {
        check(
            "```json\n{\"a\": 1, \"b\":\n```\nThat was cut.",
            &json!({"a": 1}),
            &[ClosedBrackets, DroppedIncompleteMember],
        );
    }

    #[test]
    fn later_starts_are_tried() {
        check(
            "Use {braces} like this: {'a': 1}",
            &json!({"a": 1}),
            &[SingleQuotes],
        );
        let eight_failures = "{x} ".repeat(MAX_ATTEMPTS);
        assert_eq!(repair(&format!("{eight_failures}{{'a': 1}}")), None);
        let seven_failures = "{x} ".repeat(MAX_ATTEMPTS - 1);
        check(
            &format!("{seven_failures}{{'a': 1}}"),
            &json!({"a": 1}),
            &[SingleQuotes],
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
    fn mismatched_brackets_fail() {
        assert_eq!(repair("{\"a\": 1]"), None);
        assert_eq!(repair("[1}"), None);
        assert_eq!(repair("{\"a\" 1}"), None);
        assert_eq!(repair("{,}"), None);
        assert_eq!(repair("[1,,2]"), None);
        assert_eq!(repair("{\"a\": }"), None);
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
        assert!(serde_json::from_str::<Value>(&depth_ok).is_ok());
        check(&depth_ok, &serde_json::from_str(&depth_ok).unwrap(), &[]);
        let truncated = "[".repeat(127);
        assert_eq!(fixed(&truncated).1, [ClosedBrackets]);
        let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(serde_json::from_str::<Value>(&too_deep).is_err());
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
