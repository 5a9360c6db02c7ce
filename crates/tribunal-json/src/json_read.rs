//! JSON text read into [`Json`] values exactly as `serde_json` reads it into its
//! own (the same values, numbers kept as written, the same texts refused, the
//! same nesting limit), in one pass: a string is unescaped straight into its one allocation
//! instead of through a scratch buffer one escape at a time. The extraction tiers
//! read every candidate document with it, and the input reader every record.
//!
//! Anything `serde_json` refuses gives `None` (without its message: a caller that
//! shows the reason asks `serde_json`).

use std::borrow::Cow;

use crate::json::{kept_number_text, number_extent, Json, Number, Object};

use crate::json_write::{plain_run, write_json, write_str, Room};

/// The most arrays and objects open inside one another: the 128th is refused
/// ([`NESTING_LIMIT`](crate::json::NESTING_LIMIT)).
const MAX_DEPTH: usize = crate::json::NESTING_LIMIT - 1;

/// The most a string with escapes reserves before its end is known: enough for
/// a model output in one go, and a document of many small strings does not ask
/// for the rest of the text for each.
const ROOM: usize = 4096;

/// The value `text` holds, with nothing but JSON whitespace around it: what
/// `serde_json::from_str::<serde_json::Value>` gives, `None` where it fails.
pub fn parse(text: &str) -> Option<Json> {
    Reader::new(text).whole().map(|(value, _)| value)
}

/// [`parse`], with what [`write_json`] writes for the value appended to `out`
/// in the same pass, each string without escapes copied as it stands (a
/// model's document is mostly such strings: scanning them again was most of
/// writing it; see [`write_read_string`]). `Some((value, false))` when an object
/// gives a name twice: then `out` holds the text's members, not the value's,
/// and the caller writes the value. `None` (`out` then holding part of the
/// text) where [`parse`] gives `None`.
pub fn parse_writing(text: &str, out: &mut Vec<u8>) -> Option<(Json, bool)> {
    Reader::writing(text, Echo(out))
        .whole()
        .map(|(value, repeated)| (value, !repeated))
}

/// The first value of `text` and the offset just after it: what one step of
/// `serde_json`'s `StreamDeserializer` gives, `None` where it fails. (Like it, a
/// number, `true`, `false` or `null` must be followed by whitespace, a bracket, a
/// comma, a colon, a quote or the end.)
pub fn parse_first(text: &str) -> Option<(Json, usize)> {
    let mut reader = Reader::new(text);
    let value = reader.value()?;
    let self_delimited = matches!(value, Json::String(_) | Json::Array(_) | Json::Object(_));
    let next = reader.bytes.get(reader.at);
    let ends = self_delimited
        || next.is_none_or(|b| {
            matches!(
                b,
                b' ' | b'\t' | b'\n' | b'\r' | b'[' | b']' | b'{' | b'}' | b',' | b':' | b'"'
            )
        });
    ends.then_some((value, reader.at))
}

/// The members of the object `text` holds (with nothing but JSON whitespace
/// around it), handed to `each` in order with their names unescaped (borrowed
/// when they have no escape): what `serde_json` reads from the object, member by
/// member, and `None` where it fails. A reader that keeps only some members
/// need not build the object.
pub fn parse_members<'a>(text: &'a str, each: impl FnMut(Cow<'a, str>, Json)) -> Option<()> {
    let mut reader = Reader::new(text);
    reader.skip_space();
    if reader.peek()? != b'{' {
        return None;
    }
    reader.members(each)?;
    reader.skip_space();
    (reader.at == text.len()).then_some(())
}

/// Appends the object or array `text` holds (with nothing but JSON whitespace
/// around it) as [`write_json`] writes what [`parse`] reads from it, without
/// building it; `None`, with `out` as it was, where [`parse`] gives `None` or
/// something else than an object or an array. A pack whose components never
/// read the JSON needs only its text, for the result.
pub fn write_container(text: &str, out: &mut Vec<u8>) -> Option<()> {
    thread_local! {
        /// The name list of the last document written on this thread, kept
        /// for the next (a document would otherwise grow its own).
        static NAMES: std::cell::Cell<Vec<(usize, usize)>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let start = out.len();
    let mut names = NAMES.take();
    names.clear();
    let mut writer = Writer {
        reader: Reader::new(text),
        out,
        names,
    };
    writer.reader.skip_space();
    let written = match writer.reader.peek() {
        Some(b'{' | b'[') => match writer.value() {
            Some(Ok(())) => {
                writer.reader.skip_space();
                (writer.reader.at == text.len()).then_some(Ok(()))
            }
            other => other,
        },
        _ => None,
    };
    NAMES.set(writer.names);
    match written {
        Some(Ok(())) => Some(()),
        // A name given twice: the reading keeps its first place and last value.
        Some(Err(Twice)) => {
            out.truncate(start);
            write_json(out, &parse(text)?);
            Some(())
        }
        None => {
            out.truncate(start);
            None
        }
    }
}

/// A member name an object gives twice.
struct Twice;

/// [`Reader`]'s walk through a value, writing it instead of building it.
struct Writer<'a, 'o> {
    reader: Reader<'a>,
    out: &'o mut Vec<u8>,
    /// Where the member names of the objects being written are in `out`.
    names: Vec<(usize, usize)>,
}

impl Writer<'_, '_> {
    /// `None` for text [`Reader::value`] refuses; `Some(Err(Twice))` for an
    /// object that gives a name twice (then `out` holds a part of the value).
    fn value(&mut self) -> Option<Result<(), Twice>> {
        let reader = &mut self.reader;
        reader.skip_space();
        match reader.peek()? {
            b'{' => return self.object(),
            b'[' => return self.array(),
            b'"' => self.string()?,
            b't' => self.word(b"true")?,
            b'f' => self.word(b"false")?,
            b'n' => self.word(b"null")?,
            b'-' | b'0'..=b'9' => {
                let start = reader.at;
                let (end, exponent) = number_extent(reader.bytes, start)?;
                reader.at = end;
                let text = &reader.text[start..end];
                if exponent {
                    for piece in kept_number_text(text) {
                        self.out.extend_from_slice(piece.as_bytes());
                    }
                } else {
                    self.out.extend_from_slice(text.as_bytes());
                }
            }
            _ => return None,
        }
        Some(Ok(()))
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.reader.skip_word(word)?;
        self.out.extend_from_slice(word);
        Some(())
    }

    /// The string at the reader's quote, written as [`write_str`] writes it:
    /// one without escapes as it stands, quotes and all.
    fn string(&mut self) -> Option<()> {
        let (string, quote) = self.reader.string()?;
        self.write_string(&string, quote);
        Some(())
    }

    /// A string just read from its quote at `quote` (see [`write_read_string`]).
    fn write_string(&mut self, string: &str, quote: usize) {
        let raw = &self.reader.bytes[quote..self.reader.at];
        write_read_string(self.out, raw, string);
    }

    fn array(&mut self) -> Option<Result<(), Twice>> {
        self.reader.open(b'[')?;
        self.out.push(b'[');
        if !self.reader.closes_at_once(b']') {
            loop {
                if let Err(twice) = self.value()? {
                    return Some(Err(twice));
                }
                if !self.reader.next_or_close(b']')? {
                    break;
                }
                self.out.push(b',');
            }
        }
        self.out.push(b']');
        Some(Ok(()))
    }

    fn object(&mut self) -> Option<Result<(), Twice>> {
        self.reader.open(b'{')?;
        self.out.push(b'{');
        let first_name = self.names.len();
        // As [`Reader::object`]: a name whose bit no earlier name set is new.
        let mut seen = 0u64;
        if !self.reader.closes_at_once(b'}') {
            loop {
                let (name, quote) = self.reader.name()?;
                let start = self.out.len();
                self.write_string(&name, quote);
                // The name as written, quotes included: two names are the same
                // exactly when their written texts are.
                let name = &self.out[start..];
                let bit = name_bit(&name[1..name.len() - 1]);
                if seen & bit != 0
                    && self.names[first_name..]
                        .iter()
                        .any(|&(from, to)| self.out[from..to] == self.out[start..])
                {
                    return Some(Err(Twice));
                }
                seen |= bit;
                self.names.push((start, self.out.len()));
                self.reader.colon()?;
                self.out.push(b':');
                if let Err(twice) = self.value()? {
                    return Some(Err(twice));
                }
                if !self.reader.next_or_close(b'}')? {
                    break;
                }
                self.out.push(b',');
            }
        }
        self.names.truncate(first_name);
        self.out.push(b'}');
        Some(Ok(()))
    }
}

/// One of 64 bits for a member name (by its length and end bytes, mixed by a
/// multiplication so that names alike, `yaml` and `behavior`, `type1` and
/// `type2`, seldom share one): names with different bits differ.
fn name_bit(bytes: &[u8]) -> u64 {
    let first = u64::from(bytes.first().copied().unwrap_or(0));
    let last = u64::from(bytes.last().copied().unwrap_or(0));
    let mark = (bytes.len() as u64 | first << 32 | last << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    1 << (mark >> 58)
}

/// Where a [`Reader`] writes what it reads, compact: nowhere ([`Silent`]), or
/// into a buffer ([`Echo`], for [`parse_writing`]).
trait Sink {
    fn byte(&mut self, byte: u8);
    fn bytes(&mut self, bytes: &[u8]);
    /// A string read from `raw` (quotes included) as `string`.
    fn string(&mut self, raw: &[u8], string: &str);
}

/// A reading that writes nothing.
struct Silent;

impl Sink for Silent {
    #[inline]
    fn byte(&mut self, _: u8) {}
    #[inline]
    fn bytes(&mut self, _: &[u8]) {}
    #[inline]
    fn string(&mut self, _: &[u8], _: &str) {}
}

/// A reading that appends what it reads to its buffer, as [`write_json`]
/// writes it.
struct Echo<'o>(&'o mut Vec<u8>);

impl Sink for Echo<'_> {
    #[inline]
    fn byte(&mut self, byte: u8) {
        self.0.push(byte);
    }
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    #[inline]
    fn string(&mut self, raw: &[u8], string: &str) {
        write_read_string(self.0, raw, string);
    }
}

/// Appends a string just read from `raw` (quotes included) as `string`, as
/// [`write_str`] writes it: `raw` itself when it has no escape (then it is
/// `string` in quotes; each escape makes it longer). One with escapes is
/// written again: checking that its escapes are the ones [`write_str`] writes
/// cost as much (a text-only KSI record 1% more instructions, a context-agent
/// record 0.7% fewer).
#[inline]
fn write_read_string(out: &mut Vec<u8>, raw: &[u8], string: &str) {
    if raw.len() == string.len() + 2 {
        out.extend_from_slice(raw);
    } else {
        write_str(out, string);
    }
}

struct Reader<'a, S = Silent> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
    /// Whether an object read so far gave a member name twice.
    repeated: bool,
    sink: S,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader::writing(text, Silent)
    }
}

impl<'a, S: Sink> Reader<'a, S> {
    fn writing(text: &'a str, sink: S) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
            repeated: false,
            sink,
        }
    }

    /// The value the whole text holds (JSON whitespace around it), and whether
    /// an object in it gave a name twice.
    fn whole(mut self) -> Option<(Json, bool)> {
        let value = self.value()?;
        self.skip_space();
        (self.at == self.text.len()).then_some((value, self.repeated))
    }

    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn value(&mut self) -> Option<Json> {
        self.skip_space();
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => Some(Json::String(self.string()?.0.into())),
            b't' => self.word(b"true", Json::Bool(true)),
            b'f' => self.word(b"false", Json::Bool(false)),
            b'n' => self.word(b"null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// The string at the reader's quote (see [`string`]), and where that
    /// quote is; the reader then stands after it.
    #[inline]
    fn string(&mut self) -> Option<(Cow<'a, str>, usize)> {
        let quote = self.at;
        let (string, end) = string(self.text, quote + 1)?;
        self.at = end;
        self.sink.string(&self.bytes[quote..end], &string);
        Some((string, quote))
    }

    /// A member's name (after any whitespace), as [`Reader::string`].
    #[inline]
    fn name(&mut self) -> Option<(Cow<'a, str>, usize)> {
        self.skip_space();
        if self.peek()? != b'"' {
            return None;
        }
        self.string()
    }

    /// The colon after a member's name (after any whitespace).
    #[inline]
    fn colon(&mut self) -> Option<()> {
        self.skip_space();
        (self.peek()? == b':').then(|| {
            self.sink.byte(b':');
            self.at += 1;
        })
    }

    fn word(&mut self, word: &[u8], value: Json) -> Option<Json> {
        self.skip_word(word).map(|()| value)
    }

    /// Past `word` (`true`, `false`, `null`) when the text has it here.
    fn skip_word(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.at..].starts_with(word).then(|| {
            self.sink.bytes(word);
            self.at += word.len();
        })
    }

    /// A number as JSON writes it, kept as its text (`arbitrary_precision`).
    fn number(&mut self) -> Option<Json> {
        let start = self.at;
        let (end, exponent) = number_extent(self.bytes, start)?;
        self.at = end;
        let text = &self.text[start..end];
        let number = if exponent {
            Number::from_json_text(text)
        } else {
            Number::without_exponent(text)
        };
        self.sink.bytes(number.as_str().as_bytes());
        Some(Json::Number(number))
    }

    /// Opens an array or an object at its `opener` (`serde_json` refuses the
    /// 128th level).
    fn open(&mut self, opener: u8) -> Option<()> {
        self.depth += 1;
        self.sink.byte(opener);
        self.at += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// After a member or an element: `true` at a comma, `false` at the closer.
    fn next_or_close(&mut self, closer: u8) -> Option<bool> {
        self.skip_space();
        let byte = self.peek()?;
        self.at += 1;
        if byte == b',' {
            self.sink.byte(byte);
            Some(true)
        } else if byte == closer {
            self.sink.byte(byte);
            self.depth -= 1;
            Some(false)
        } else {
            None
        }
    }

    /// Just after an opener: whether the container closes at once (then closed).
    fn closes_at_once(&mut self, closer: u8) -> bool {
        self.skip_space();
        let empty = self.peek() == Some(closer);
        if empty {
            self.sink.byte(closer);
            self.at += 1;
            self.depth -= 1;
        }
        empty
    }

    fn array(&mut self) -> Option<Json> {
        self.open(b'[')?;
        let mut items = Vec::new();
        if self.closes_at_once(b']') {
            return Some(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            if !self.next_or_close(b']')? {
                return Some(Json::Array(items));
            }
        }
    }

    fn object(&mut self) -> Option<Json> {
        let mut members = Object::new();
        // A name given twice keeps its first place and its last value. Each
        // name so far sets one of 64 bits (by its length and end bytes): a name
        // whose bit is clear is new, and goes last without a search.
        let mut seen = 0u64;
        let mut repeated = false;
        self.members(|name, value| {
            let bit = name_bit(name.as_bytes());
            if seen & bit == 0 {
                seen |= bit;
                members.push_new_read(name, value);
            } else if members.insert(name, value).is_some() {
                repeated = true;
            }
        })?;
        self.repeated |= repeated;
        Some(Json::Object(members))
    }

    /// The members of the object at its `{`, each handed to `each` in order.
    fn members(&mut self, mut each: impl FnMut(Cow<'a, str>, Json)) -> Option<()> {
        self.open(b'{')?;
        if self.closes_at_once(b'}') {
            return Some(());
        }
        loop {
            let (name, _) = self.name()?;
            self.colon()?;
            let value = self.value()?;
            each(name, value);
            if !self.next_or_close(b'}')? {
                return Some(());
            }
        }
    }
}

/// The JSON string whose content starts at `start` (after its opening quote),
/// and where it ends (after its closing quote); `None` for an unescaped control
/// character, an unknown escape, a UTF-16 surrogate without its pair, or no end.
/// Borrowed from the text when it has no escape.
pub fn string(text: &str, start: usize) -> Option<(Cow<'_, str>, usize)> {
    let bytes = text.as_bytes();
    let stop = start + plain_run(bytes.get(start..)?);
    if bytes.get(stop) == Some(&b'"') {
        return Some((Cow::Borrowed(&text[start..stop]), stop + 1));
    }
    // Escapes (a model output's JSON escapes every quote): one pass, into room for
    // the rest of the text up to 4 KiB (it grows past that), given back at the end
    // if much of it is unused.
    let mut out = Vec::with_capacity((bytes.len() - start).min(ROOM));
    out.extend_from_slice(&bytes[start..stop]);
    let end = unescape_rest(bytes, stop, &mut out)?;
    if out.capacity() > 2 * out.len() + 64 {
        out.shrink_to_fit();
    }
    debug_assert!(std::str::from_utf8(&out).is_ok());
    // SAFETY: `out` is UTF-8 without checking it again (a string of a model
    // output is mostly escapes: a second pass over it was 2.5% of a
    // context-agent record). It holds runs of `text`, a `str`, each cut before
    // and after an ASCII byte (the quote, backslash or control byte
    // `plain_run` and `Room::plain` stop at, so at character boundaries; a run
    // copied in blocks keeps only the bytes up to its end), and whole
    // characters written by `encode_utf8` or as one ASCII byte.
    #[allow(unsafe_code)]
    let out = unsafe { String::from_utf8_unchecked(out) };
    Some((Cow::Owned(out), end))
}

/// Appends the rest of a string, from its escape at `at` to its closing quote,
/// unescaped, to `out`, and returns where the text goes on after the quote;
/// `None` (with `out` holding part of it) as for [`string`]. Written through
/// a [`Room`]: its length in a register, each run after an escape copied in
/// sixteen-byte pieces.
fn unescape_rest(bytes: &[u8], mut at: usize, out: &mut Vec<u8>) -> Option<usize> {
    let mut room = Room::new(out);
    loop {
        match bytes.get(at)? {
            b'\\' => {}
            b'"' => return Some(at + 1),
            _ => return None,
        }
        let escaped = *bytes.get(at + 1)?;
        let short = SHORT_ESCAPE[usize::from(escaped)];
        if short != 0 {
            // `\n`, `\"`...: one byte, the usual escape.
            room.byte(short);
            at += 2;
        } else {
            if escaped != b'u' {
                return None;
            }
            let (c, next) = unicode_escape(bytes, at + 2)?;
            room.slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            at = next;
        }
        at = room.plain(bytes, at);
    }
}

/// The byte each one-letter escape stands for (a newline for `\n`...), 0 for the
/// letters that are not one (`u` is read by [`unicode_escape`]).
static SHORT_ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// The character a `\uXXXX` escape (a UTF-16 pair of them, for a character
/// beyond U+FFFF) stands for (`at` is just after its `u`) and where the text
/// goes on; `None` for a surrogate without its pair.
fn unicode_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let unit = hex4(bytes, at)?;
    match unit {
        0xD800..=0xDBFF => {
            if bytes.get(at + 4..at + 6) != Some(b"\\u") {
                return None;
            }
            let low = hex4(bytes, at + 6)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            Some((char::from_u32(code)?, at + 10))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(unit)?, at + 4)),
    }
}

/// Four hex digits at `at`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |value, &digit| {
        Some(value * 16 + char::from(digit).to_digit(16)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text read by both readers: the same value, or both refuse it.
    fn agree(text: &str) {
        // Compared as written, so the members' order counts too.
        let written = |value: &Json| serde_json::to_string(&value.to_serde()).unwrap();
        let serde = serde_json::from_str::<serde_json::Value>(text).ok();
        assert_eq!(
            parse(text).as_ref().map(written),
            serde.map(|v| v.to_string()),
            "{text:?}"
        );
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
        let first = match stream.next() {
            Some(Ok(value)) => Some((value.to_string(), stream.byte_offset())),
            _ => None,
        };
        assert_eq!(
            parse_first(text).map(|(value, end)| (written(&value), end)),
            first,
            "first value of {text:?}"
        );
        // Written without being built: the same text, for an object or an array.
        let mut out = b"x".to_vec();
        let wrote = write_container(text, &mut out).map(|()| {
            assert_eq!(out[0], b'x');
            String::from_utf8(out[1..].to_vec()).unwrap()
        });
        let container = parse(text).filter(|v| matches!(v, Json::Object(_) | Json::Array(_)));
        assert_eq!(wrote, container.as_ref().map(written), "written {text:?}");
        if wrote.is_none() {
            assert_eq!(out, b"x", "nothing left of {text:?}");
        }
        // Built and written in one pass: the same value, and its text unless
        // a name is given twice.
        let mut out = b"x".to_vec();
        let read = parse_writing(text, &mut out);
        assert_eq!(
            read.as_ref().map(|(value, _)| value),
            parse(text).as_ref(),
            "{text:?}"
        );
        if let Some((value, whole)) = read {
            assert_eq!(out[0], b'x');
            let twice = serde_json::from_str::<GivesANameTwice>(text).unwrap().0;
            assert_eq!(whole, !twice, "{text:?}");
            if whole {
                assert_eq!(
                    std::str::from_utf8(&out[1..]),
                    Ok(written(&value).as_str()),
                    "{text:?}"
                );
            }
        }
    }

    /// Whether an object of the text gives a member name twice, as `serde_json`
    /// reads it.
    struct GivesANameTwice(bool);

    impl<'de> serde::Deserialize<'de> for GivesANameTwice {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(GivesANameTwiceVisitor)
        }
    }

    struct GivesANameTwiceVisitor;

    impl<'de> serde::de::Visitor<'de> for GivesANameTwiceVisitor {
        type Value = GivesANameTwice;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut names = std::collections::HashSet::new();
            let mut twice = false;
            while let Some(name) = map.next_key::<String>()? {
                twice |= !names.insert(name);
                twice |= map.next_value::<GivesANameTwice>()?.0;
            }
            Ok(GivesANameTwice(twice))
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut twice = false;
            while let Some(item) = seq.next_element::<GivesANameTwice>()? {
                twice |= item.0;
            }
            Ok(GivesANameTwice(twice))
        }

        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }

        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(GivesANameTwice(false))
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#,
            "  [1, -0, 0.5, -1.25e10, 1E5, 1e-5, 2E+3, 0.000, 123456789012345678901234567890]  ",
            "1.7976931348623157e309",
            "-",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "-a",
            "+1",
            r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\u12""#,
            r#""\x""#,
            "\"a\u{1}b\"",
            "\"tab\tin\"",
            r#""no end"#,
            r#""ends with a backslash\"#,
            r#"{"a": 1, "a": 2, "b": 3}"#,
            r#"{"a": 1,}"#,
            "[1,]",
            "[,1]",
            "[1 2]",
            r#"{"a" 1}"#,
            "{a: 1}",
            r#"{"a": 1} x"#,
            r#"{"a": 1}{"b": 2}"#,
            "truex",
            "true x",
            "[true]x",
            "nul",
            "",
            "   ",
            "{}",
            "[]",
            "[[]]",
            "{\"é\": \"ü\", \"\\u00e9\": 1}",
            "1 2",
            "1]",
            "1x",
            "\"s\"x",
        ] {
            agree(text);
        }
    }

    /// Names given twice, in objects searched in place and in indexed ones.
    #[test]
    fn a_name_given_twice_keeps_its_first_place_and_its_last_value() {
        for members in [3, 15, 16, 17, 40] {
            let mut text: Vec<String> = (0..members).map(|i| format!("\"k{i}\": {i}")).collect();
            text.push(format!("\"k{}\": \"again\"", members / 2));
            text.push("\"k0\": [0]".to_owned());
            agree(&format!("{{{}}}", text.join(", ")));
        }
        // The same name escaped and not; the same names in other objects.
        agree(r#"{"é": 1, "b": [{"é": 2, "b": 3}], "\u00e9": {"a": 4}}"#);
        agree(r#"{"a\"b": 1, "a\u0022b": 2}"#);
        agree(r#"[{"a": 1, "b": {"a": 2, "b": 3}}, {"a": 1, "a": 0}]"#);
        agree(r#"{"ab": 1, "ba": 2, "a": {}, "b": []}"#);
    }

    #[test]
    fn refuses_the_nesting_serde_json_refuses() {
        for depth in [1, 100, 126, 127, 128, 129, 200] {
            agree(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
            agree(&objects);
        }
    }

    /// Strings are read sixteen bytes at a time: each kind of escape, valid or
    /// not, at every place of a string several blocks long, alone and twice
    /// (the second near it and a few blocks on), closed and cut short.
    #[test]
    fn reads_every_escape_at_every_place_of_a_long_string() {
        let escapes = [
            r#"\""#,
            r"\\",
            r"\/",
            r"\b",
            r"\f",
            r"\n",
            r"\r",
            r"\t",
            r"\u00e9",
            r"\u20AC",
            r"\ud83d\ude00",
            r"\ud83d",
            r"\ude00",
            r"\ud83dx",
            r"\x",
            r"\u12",
            "\u{1}",
            "é",
            r"\",
            "\"",
        ];
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ".repeat(4);
        for escape in escapes {
            for place in 0..plain.len() {
                let seconds = [1, 15, 62, 63, 64, 127].map(|after| Some(place + after));
                for second in std::iter::once(None).chain(seconds) {
                    let mut body = plain.clone();
                    if let Some(second) = second.filter(|&at| at < body.len()) {
                        body.insert_str(second, escape);
                    }
                    body.insert_str(place, escape);
                    let text = format!("[\"{body}\", 1]");
                    agree(&text);
                    agree(&text[..text.len() - 4]);
                    agree(&format!("\"{body}"));
                }
            }
        }
    }

    /// A string far longer than the room reserved for it at first (4 KiB),
    /// dense with escapes of every length, grows its buffer as it goes.
    #[test]
    fn a_long_string_dense_with_escapes_is_read_whole() {
        let pieces = [
            r#"\""#,
            "ab",
            r"\n",
            "    ",
            r"\u00e9",
            r"\ud83d\ude00",
            "é",
            "x",
        ];
        let mut body = String::new();
        let mut next = crate::json::numbers(0x5eed);
        while body.len() < 20_000 {
            body.push_str(pieces[usize::try_from(next()).unwrap() % pieces.len()]);
        }
        for text in [
            format!("\"{body}\""),
            format!("{{\"output\": \"{body}\", \"id\": 1}}"),
        ] {
            assert!(parse(&text).is_some(), "a valid text is read");
            agree(&text);
        }
    }

    /// Generated documents, whole and cut at every length, with strings of every
    /// kind of character and escapes `serde_json` never writes.
    #[test]
    fn agrees_with_serde_json_on_generated_documents() {
        let mut next = crate::json::numbers(0x2545_f491_4f6c_dd1d);
        let alphabet: Vec<char> = "ab \"\\/\u{0}\u{1f}\n\u{7f}é😀{}[]:,u0".chars().collect();
        for _ in 0..200 {
            let mut text = || -> String {
                let len = next() % 10;
                (0..len)
                    .map(|_| alphabet[usize::try_from(next()).unwrap() % alphabet.len()])
                    .collect()
            };
            let document = serde_json::json!({
                text(): [text(), 1, -2.5, true, null, {"k": text()}],
                "n": serde_json::from_str::<serde_json::Value>("1E400").unwrap(),
                text(): {},
            });
            let mut line = serde_json::to_string_pretty(&document).unwrap();
            if next().is_multiple_of(2) {
                line = line.replace('é', "\\u00e9").replace('😀', "\\ud83d\\ude00");
            }
            for cut in (0..=line.len()).filter(|&cut| line.is_char_boundary(cut)) {
                agree(&line[..cut]);
            }
        }
    }
}
