//! The rewriter's strings: quotes of every kind, escapes, quotes inside a value,
//! doubled quotes, strings cut off or left open.

use super::super::lex::{
    hex_value, is_word_byte, number_shape, opening_quote, past_blanks, past_spaces,
    plain_content_len, NumberShape, Quote,
};
use super::{Fail, Rewriter, Role, StringEnd};
use crate::Repair;

impl<'a> Rewriter<'a> {
    /// Whether the value at the current position is in doubled quotes (`""text""`): two
    /// quotes, a word, and on the same line the next quote doubled too. A value that
    /// only starts with a quoted word (`""quoted" first"`) is not.
    pub(super) fn doubled_quotes(&mut self) -> bool {
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
    pub(super) fn concatenated(&mut self, role: Role) -> Result<StringEnd, Fail> {
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

    /// The text after the quoted string that the quote at `at` opens and the
    /// spaces after it (empty at the end of the text), when that string ends on
    /// its line before any comma, bracket, colon or backslash; `None` otherwise.
    pub(super) fn after_short_string(&mut self, at: usize) -> Option<&'a [u8]> {
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
    pub(super) fn string(&mut self, quote: Quote, role: Role) -> Result<StringEnd, Fail> {
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
            if self.copy_plain(&mut comma_mark) {
                continue;
            }
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

    /// Copies the plain content at the current position, as most of a string
    /// is, in one go, as [`string`](Self::string)'s byte-by-byte arm for
    /// other bytes copies it (where a byte other than a space forgets a comma
    /// seen before, `comma_mark`). Whether there was any.
    fn copy_plain(&mut self, comma_mark: &mut Option<usize>) -> bool {
        let plain = plain_content_len(&self.src[self.pos..]);
        if plain == 0 || !self.plain_runs {
            return false;
        }
        let run = &self.src[self.pos..self.pos + plain];
        if run.iter().any(|&b| b != b' ') {
            *comma_mark = None;
        }
        self.out.extend_from_slice(run);
        self.pos += plain;
        self.steps += plain;
        true
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
