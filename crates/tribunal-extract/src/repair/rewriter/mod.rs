//! The single-pass rewriter: the open objects and arrays and the values in them.

mod strings;

use super::lex::{
    fixed_number, is_word_byte, is_word_start, number_shape, number_token_len, opening_quote,
    past_blanks, past_spaces, placeholder_len, unicode_space_len, word_end, NumberShape,
};
use super::{RepairSet, MAX_DEPTH};
use crate::Repair;

/// The input cannot be rewritten into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fail;

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

/// The single-pass rewriter.
#[derive(Debug)]
pub(super) struct Rewriter<'a> {
    src: &'a [u8],
    pub(super) pos: usize,
    pub(super) out: Vec<u8>,
    pub(super) repairs: RepairSet,
    stack: Vec<Frame>,
    /// Bytes read or looked at ahead, for the linear-time test.
    pub(super) steps: usize,
    /// The string being read is in doubled quotes (`""text""`): its first closing
    /// quote ends it.
    doubled: bool,
    /// Whether a string's plain content is copied a run at a time (always,
    /// but in the test that holds it to copying byte by byte).
    pub(super) plain_runs: bool,
}

impl<'a> Rewriter<'a> {
    pub(super) fn new(source: &'a str) -> Self {
        Rewriter {
            src: source.as_bytes(),
            pos: 0,
            out: Vec::with_capacity(source.len().min(1 << 16)),
            repairs: RepairSet::default(),
            stack: Vec::new(),
            steps: 0,
            doubled: false,
            plain_runs: true,
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
    pub(super) fn run(&mut self) -> Result<(), Fail> {
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
}
