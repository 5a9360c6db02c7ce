//! A validating reader that accepts exactly what Python's `json.loads` (the default C
//! scanner, `strict=True`) accepts, keeping only what the seed looks at.

use std::borrow::Cow;

/// Python's default recursion limit; deeper input raises `RecursionError` (at a
/// depth that depends on the Python version).
const MAX_DEPTH: usize = 1000;
/// `sys.int_info.default_max_str_digits` (Python 3.11+).
const MAX_INT_DIGITS: usize = 4300;

/// What the metric needs from a parsed match.
#[derive(Debug, Default)]
pub(super) struct Parsed<'a> {
    /// The document is an object with an `event` key.
    pub has_event: bool,
    /// The document is an object with a `data` key.
    pub has_data: bool,
    /// The (last) `event` value, when the document is an object and that value is
    /// a string representable in Rust (a lone surrogate never equals an event name).
    pub event: Option<Cow<'a, str>>,
}

/// `json.loads(text)`, or `None` where Python raises.
pub(super) fn loads(text: &str) -> Option<Parsed<'_>> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    reader.skip_ws();
    let parsed = if reader.peek() == Some(b'{') {
        reader.top_object()?
    } else {
        reader.value(0)?;
        Parsed::default()
    };
    reader.skip_ws();
    (reader.at == reader.bytes.len()).then_some(parsed)
}

/// A decoded string (borrowed from the text when it has no escape): `None`
/// when it holds a lone surrogate.
type PyStr<'a> = Option<Cow<'a, str>>;

enum Scalar<'a> {
    Str(PyStr<'a>),
    Other,
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> Option<()> {
        if self.bytes[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            Some(())
        } else {
            None
        }
    }

    /// The top-level object, recording its `event` / `data` keys.
    fn top_object(&mut self) -> Option<Parsed<'a>> {
        let mut parsed = Parsed::default();
        self.object(0, |key, value| match key.as_deref() {
            Some("event") => {
                parsed.has_event = true;
                parsed.event = match value {
                    Scalar::Str(s) => s,
                    Scalar::Other => None,
                };
            }
            Some("data") => parsed.has_data = true,
            _ => {}
        })?;
        Some(parsed)
    }

    fn object(&mut self, depth: usize, mut entry: impl FnMut(PyStr<'a>, Scalar<'a>)) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1; // `{`
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return None;
            }
            let key = self.string()?;
            self.skip_ws();
            self.eat(":")?;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            entry(key, value);
            self.skip_ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.skip_ws();
                }
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1; // `[`
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.value(depth + 1)?;
            self.skip_ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.skip_ws();
                }
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Scalar<'a>> {
        match self.peek()? {
            b'"' => return self.string().map(Scalar::Str),
            b'{' => self.object(depth, |_, _| {})?,
            b'[' => self.array(depth)?,
            b'n' => self.eat("null")?,
            b't' => self.eat("true")?,
            b'f' => self.eat("false")?,
            b'N' => self.eat("NaN")?,
            b'I' => self.eat("Infinity")?,
            b'-' if self.bytes[self.at..].starts_with(b"-I") => self.eat("-Infinity")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(Scalar::Other)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?` with ASCII digits; any
    /// number is accepted whatever its magnitude (`1e400` is `inf` in Python).
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let int_start = self.at;
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_digits = self.at - int_start;
        let mut is_float = false;
        if self.peek() == Some(b'.') && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit)
        {
            self.at += 1;
            self.digits();
            is_float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let start = self.at;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.digits();
                is_float = true;
            } else {
                // Python ends the number before the `e`; what follows then fails.
                self.at = start;
            }
        }
        // `int()` refuses longer digit strings (ValueError) since Python 3.11.
        (is_float || int_digits <= MAX_INT_DIGITS).then_some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        let mut value = 0u16;
        for &d in digits {
            value = value * 16 + u16::try_from((d as char).to_digit(16)?).ok()?;
        }
        self.at += 4;
        Some(value)
    }

    /// Past string content that stands for itself (up to a quote, a
    /// backslash or a control character, which `strict=True` refuses).
    fn skip_plain(&mut self) {
        self.at += crate::json_write::plain_run(&self.text.as_bytes()[self.at..]);
    }

    /// A string at `"`; `Some(None)` when it decodes to a lone surrogate.
    fn string(&mut self) -> Option<PyStr<'a>> {
        self.at += 1; // opening quote
        let begin = self.at;
        self.skip_plain();
        if self.peek()? == b'"' {
            // No escape: the text itself (only ASCII bytes stop the scan).
            let text = self.text;
            self.at += 1;
            return Some(Some(Cow::Borrowed(&text[begin..self.at - 1])));
        }
        let mut out = String::with_capacity(self.at - begin + 16);
        out.push_str(&self.text[begin..self.at]);
        let mut exact = true;
        loop {
            let start = self.at;
            self.skip_plain();
            // Only ASCII bytes stop the scan, so `start..at` is on char boundaries.
            out.push_str(&self.text[start..self.at]);
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(exact.then_some(Cow::Owned(out)));
                }
                b'\\' => {
                    self.at += 1;
                    let escape = self.peek()?;
                    self.at += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            match unit {
                                0xD800..=0xDBFF => {
                                    let save = self.at;
                                    let low = if self.eat("\\u").is_some() {
                                        self.hex4()?
                                    } else {
                                        0
                                    };
                                    if (0xDC00..=0xDFFF).contains(&low) {
                                        let code = 0x10000
                                            + ((u32::from(unit) - 0xD800) << 10)
                                            + (u32::from(low) - 0xDC00);
                                        out.push(char::from_u32(code)?);
                                    } else {
                                        // A lone high surrogate: Python keeps it.
                                        self.at = save;
                                        exact = false;
                                    }
                                }
                                0xDC00..=0xDFFF => exact = false,
                                _ => out.push(char::from_u32(u32::from(unit))?),
                            }
                        }
                        _ => return None,
                    }
                }
                // A raw control character: invalid with `strict=True`.
                _ => return None,
            }
        }
    }
}
