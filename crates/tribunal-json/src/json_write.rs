//! Writing JSON straight into a byte buffer, byte for byte as `serde_json`'s
//! compact writer does, faster: strings are scanned eight bytes at a time for
//! what needs escaping, and nothing goes through the `io::Write` machinery.
//! The batch runner writes every result record with it (a test compares the
//! two writers on every shipped example and on adversarial strings).

use std::fmt;

use serde_json::Value;

use crate::json::Json;

/// What `serde_json` writes for each byte: 0 = the byte itself, `u` = `\u00XX`,
/// anything else = that letter after a backslash.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `word` (little-endian) that are a control character, `"` or
/// `\`, each flagged by its high bit. Exact for the lowest flagged byte (a borrow
/// only carries past a byte that is itself flagged), which is what is used.
#[inline]
fn escape_mask(word: u64) -> u64 {
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w;
    (below_space | zero_byte(quote) | zero_byte(backslash)) & HIGHS
}

/// Bit `i` set when byte `i` of `chunk` is a control character, `"` or `\`
/// (exact at least for the lowest such byte, which is all that is used).
#[inline]
fn escapes16(chunk: &[u8; 16]) -> u32 {
    let (low, high) = chunk.split_at(8);
    let low = u64::from_le_bytes(low.try_into().expect("eight bytes"));
    let high = u64::from_le_bytes(high.try_into().expect("eight bytes"));
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: the function needs SSE2, which this build targets (the cfg
        // above; every x86-64 CPU has it).
        #[allow(unsafe_code)]
        unsafe {
            escapes16_sse2(low, high)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        escapes16_swar(low, high)
    }
}

/// [`escapes16`] eight bytes at a time, where SSE2 is not there: only the
/// lowest such byte is flagged.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn escapes16_swar(low: u64, high: u64) -> u32 {
    let first = |word: u64| escape_mask(word).trailing_zeros() / 8;
    match (first(low), first(high)) {
        (8, 8) => 0,
        (8, at) => 1 << (8 + at),
        (at, _) => 1 << at,
    }
}

/// [`escapes16`] of the sixteen bytes `low` and `high` (little-endian) in a
/// few instructions, with SSE2, which every x86-64 CPU has.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn escapes16_sse2(low: u64, high: u64) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };
    let bytes = _mm_set_epi64x(high.cast_signed(), low.cast_signed());
    let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"'.cast_signed()));
    let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\'.cast_signed()));
    // Below 0x20 (unsigned): the byte is its own minimum with 0x1f.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
}

/// How many bytes at the start of `bytes` a JSON string holds as they are: the
/// index of the first control character, `"` or `\` (the length if there is none).
/// Reading and writing JSON strings both stop there.
#[inline]
pub fn plain_run(bytes: &[u8]) -> usize {
    // Sixteen bytes at a time, then eight, then the last few one by one.
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 16) {
        let bits = escapes16(chunk.try_into().expect("sixteen bytes"));
        if bits != 0 {
            return at + bits.trailing_zeros() as usize;
        }
        at += 16;
    }
    if let Some(chunk) = bytes.get(at..at + 8) {
        let mask = escape_mask(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        if mask != 0 {
            return at + (mask.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while at < bytes.len() && ESCAPE[usize::from(bytes[at])] == 0 {
        at += 1;
    }
    at
}

/// [`plain_run`] of `bytes[from..]`. A rest shorter than sixteen bytes is
/// looked at in one sixteen-byte window that ends where `bytes` ends (when
/// `bytes` holds sixteen), the bytes before `from` left out of it: a
/// streamed chunk of a few bytes inside a string (the usual small chunk) in a
/// few instructions, not a byte at a time.
#[inline]
pub fn plain_run_from(bytes: &[u8], from: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let rest = bytes.len() - from;
        if rest < 16 && bytes.len() >= 16 {
            let window = &bytes[bytes.len() - 16..];
            let word =
                |at: usize| u64::from_le_bytes(window[at..at + 8].try_into().expect("eight bytes"));
            // SAFETY: as in `escapes16`. Its SSE2 form flags every such byte
            // (not only the first, as the portable one does): those before
            // `from` are shifted out.
            #[allow(unsafe_code)]
            let bits = unsafe { escapes16_sse2(word(0), word(8)) } >> (16 - rest);
            return if bits == 0 {
                rest
            } else {
                bits.trailing_zeros() as usize
            };
        }
    }
    plain_run(&bytes[from..])
}

/// Appends to a byte vector through a pointer and a length kept in registers,
/// the vector taking its length back when the `Room` is dropped. A string
/// dense with escapes (JSON inside JSON escapes a byte in three to eight),
/// written with the vector's own `push`, `extend` and `truncate`, spent most of
/// its time on their checks and on its length, kept in memory, between them.
#[derive(Debug)]
pub struct Room<'v> {
    out: &'v mut Vec<u8>,
    /// The bytes written, from the vector's start; all of them initialised.
    len: usize,
    /// The vector's buffer and capacity as of its last growth.
    buf: *mut u8,
    capacity: usize,
}

impl<'v> Room<'v> {
    /// The most a call writes whole.
    const MOST: usize = 32;

    pub fn new(out: &'v mut Vec<u8>) -> Self {
        Self {
            len: out.len(),
            buf: out.as_mut_ptr(),
            capacity: out.capacity(),
            out,
        }
    }

    /// At least `n` bytes free after `len`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn make(&mut self, n: usize) {
        if self.capacity - self.len < n {
            self.grow(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        #[allow(unsafe_code)]
        // SAFETY: the first `len` bytes are written and within the capacity.
        unsafe {
            self.out.set_len(self.len);
        }
        self.out.reserve(n.max(Self::MOST));
        self.buf = self.out.as_mut_ptr();
        self.capacity = self.out.capacity();
    }

    /// Appends `bytes[..keep]`, writing all of `bytes` (after the end, where
    /// the next write goes): a run of a few bytes in one fixed-size copy.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, bytes: &[u8; N], keep: usize) {
        const { assert!(N <= Self::MOST) };
        debug_assert!(keep <= N);
        self.make(N);
        #[allow(unsafe_code)]
        // SAFETY: `make` left room for `N` bytes after `len`; `bytes` is
        // another buffer than the vector, which this `Room` borrows.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.buf.add(self.len), N);
        }
        self.len += keep.min(N);
    }

    /// Appends one byte.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn byte(&mut self, byte: u8) {
        self.put(&[byte], 1);
    }

    /// Appends `bytes`, whatever their length.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn slice(&mut self, bytes: &[u8]) {
        self.make(bytes.len());
        #[allow(unsafe_code)]
        // SAFETY: as in `put`, for `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.buf.add(self.len), bytes.len());
        }
        self.len += bytes.len();
    }

    /// Appends the bytes of `bytes` from `at` up to the first one a JSON string
    /// escapes (see [`plain_run`]), and returns where it stopped (the length if
    /// there is none): sixteen bytes at a time, each sixteen written whole.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn plain(&mut self, bytes: &[u8], mut at: usize) -> usize {
        while let Some(chunk) = bytes.get(at..at + 16) {
            let chunk: &[u8; 16] = chunk.try_into().expect("sixteen bytes");
            let special = escapes16(chunk);
            if special != 0 {
                let plain = special.trailing_zeros() as usize;
                self.put(chunk, plain);
                return at + plain;
            }
            self.put(chunk, 16);
            at += 16;
        }
        let plain = plain_run(&bytes[at..]);
        self.slice(&bytes[at..at + plain]);
        at + plain
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: every write went to the room made after `len`, and moved
        // `len` past the bytes it wrote only: the first `len` are initialised
        // and within the capacity.
        unsafe {
            self.out.set_len(self.len);
        }
    }
}

/// Appends `text` as a JSON string, quotes included.
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    let end = bytes.len();
    out.reserve(end + 2);
    out.push(b'"');
    // A string without escapes (the usual one) in one copy.
    let mut at = plain_run(bytes);
    out.extend_from_slice(&bytes[..at]);
    if at < end {
        let mut room = Room::new(out);
        while at < end {
            let byte = bytes[at];
            match ESCAPE[usize::from(byte)] {
                b'u' => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    room.put(
                        &[
                            b'\\',
                            b'u',
                            b'0',
                            b'0',
                            HEX[usize::from(byte >> 4)],
                            HEX[usize::from(byte & 0xf)],
                        ],
                        6,
                    );
                }
                escape => room.put(&[b'\\', escape], 2),
            }
            at = room.plain(bytes, at + 1);
        }
    }
    out.push(b'"');
}

/// Appends a float as `serde_json` writes an `f64` (`null` when not finite).
pub fn write_f64(out: &mut Vec<u8>, value: f64) {
    // Whole numbers below 2^53 (most scores and weights: 0.0, 1.0) are written
    // as their digits and `.0`, as serde_json writes them, without the search
    // for the shortest digits.
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        if value.is_sign_negative() {
            out.push(b'-');
        }
        write_u64(out, value.abs() as u64);
        out.extend_from_slice(b".0");
    } else if value.is_finite() {
        // The shortest text that reads back as the value: serde_json's writer.
        out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
    } else {
        write_null(out);
    }
}

/// Appends an unsigned integer.
pub fn write_u64(out: &mut Vec<u8>, value: u64) {
    // One digit (most counts, and the scores 0.0 and 1.0) without the loop.
    if value < 10 {
        out.push(b'0' + value as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let at = u64_digits(value, &mut digits);
    out.extend_from_slice(&digits[at..]);
}

/// Writes `value`'s decimal digits into the end of `digits`: where they start.
pub(crate) fn u64_digits(value: u64, digits: &mut [u8; 20]) -> usize {
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            return at;
        }
    }
}

/// Appends an array, each item written by `write` (`write_str`, `write_value`, ...).
pub fn write_array<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(b'[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

/// Appends `true` or `false`.
#[inline]
pub fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends `null`.
#[inline]
pub fn write_null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"null");
}

/// Appends a JSON value, compact, keys in the map's order.
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => write_null(out),
        Value::Bool(b) => write_bool(out, *b),
        // Numbers keep the text they were read or made with.
        Value::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => write_array(out, items, write_value),
        Value::Object(map) => {
            let mut object = Object::open(out);
            for (key, item) in map {
                write_value(object.key(key), item);
            }
            object.close();
        }
    }
}

/// Appends a [`Json`] value, compact, members in order: what [`write_value`]
/// writes for the same value as `serde_json` holds it.
pub fn write_json(out: &mut Vec<u8>, value: &Json) {
    match value {
        Json::Null => write_null(out),
        Json::Bool(b) => write_bool(out, *b),
        Json::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
        Json::String(s) => write_str(out, s),
        Json::Array(items) => write_array(out, items, write_json),
        Json::Object(members) => write_members(out, members),
    }
}

/// Appends an object's members as a JSON object, in order.
fn write_members(out: &mut Vec<u8>, members: &crate::json::Object) {
    let mut object = Object::open(out);
    for (name, item) in members {
        write_json(object.key(name), item);
    }
    object.close();
}

/// What `write` writes, handed to a formatter as text.
fn show(f: &mut fmt::Formatter<'_>, write: impl FnOnce(&mut Vec<u8>)) -> fmt::Result {
    let mut out = Vec::new();
    write(&mut out);
    f.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)
}

/// The value as compact JSON text.
impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        show(f, |out| write_json(out, self))
    }
}

/// The value as compact JSON text.
impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The members as compact JSON text.
impl fmt::Debug for crate::json::Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        show(f, |out| write_members(out, self))
    }
}

/// An object being written: `key` before each member's value, then `close`.
#[derive(Debug)]
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Object<'a> {
    /// Writes `{`.
    #[inline]
    pub fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out, first: true }
    }

    /// Goes on with the object `out` ends with, written whole (by another
    /// writer): its closing `}` taken off, so members can follow its own;
    /// `None` when `out` does not end with `}`.
    pub fn reopen(out: &'a mut Vec<u8>) -> Option<Self> {
        if out.last() != Some(&b'}') {
            return None;
        }
        out.pop();
        let first = out.last() == Some(&b'{');
        Some(Self { out, first })
    }

    /// Writes the separator and `"key":`; the caller writes the value into the
    /// buffer returned.
    #[inline]
    pub fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(self.out, key);
        self.out.push(b':');
        self.out
    }

    /// As [`key`](Self::key), for a name known to need no escaping (the
    /// record's own field names), given as `,"name":` (what [`field!`] makes
    /// of the name at compile time): one copy, where the separator, the quotes,
    /// the name and the colon were four writes, each checking the room left.
    #[inline]
    pub fn member(&mut self, comma_name: &'static [u8]) -> &mut Vec<u8> {
        debug_assert!(comma_name.starts_with(b",\"") && comma_name.ends_with(b"\":"));
        debug_assert!(comma_name[2..comma_name.len() - 2]
            .iter()
            .all(|&b| ESCAPE[usize::from(b)] == 0 && b != b'"'));
        if self.first {
            self.first = false;
            self.out.extend_from_slice(&comma_name[1..]);
        } else {
            self.out.extend_from_slice(comma_name);
        }
        self.out
    }

    /// Writes `}`.
    #[inline]
    pub fn close(self) {
        self.out.push(b'}');
    }
}

/// `field!(object, "name")`: the buffer to write the member `name`'s value
/// into, after `,"name":` (or `"name":` first): [`Object::member`] with the
/// name's text made at compile time. For names that need no escaping.
#[macro_export]
macro_rules! field {
    ($object:expr, $name:literal) => {
        $object.member(concat!(",\"", $name, "\":").as_bytes())
    };
}
pub use crate::field;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reopened_object_takes_members_after_its_own() {
        for (written, expected) in [
            (&b"{}"[..], &br#"{"a":"b"}"#[..]),
            (br#"{"x":1}"#, br#"{"x":1,"a":"b"}"#),
        ] {
            let mut out = written.to_vec();
            let mut object = Object::reopen(&mut out).unwrap();
            write_str(object.key("a"), "b");
            object.close();
            assert_eq!(out, expected);
        }
        assert!(Object::reopen(&mut b"[1]".to_vec()).is_none());
        assert!(Object::reopen(&mut Vec::new()).is_none());
    }

    #[test]
    fn plain_run_from_is_plain_run_of_the_rest() {
        // Every length up to 40, every start, one or two bytes that stop a
        // run (each kind) or none, anywhere, before and after the start.
        let stops = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        for len in 0..=40usize {
            for first in 0..=len {
                for stop in stops {
                    let mut bytes = vec![b'a'; len];
                    if first < len {
                        bytes[first] = stop;
                    }
                    if len > 0 {
                        bytes[(first * 7 + 3) % len] = 0x80;
                    }
                    for second in [None, Some(len / 2), Some(len.saturating_sub(1))] {
                        let mut bytes = bytes.clone();
                        if let Some(at) = second.filter(|&at| at < len) {
                            bytes[at] = b'"';
                        }
                        for from in 0..=len {
                            assert_eq!(
                                plain_run_from(&bytes, from),
                                plain_run(&bytes[from..]),
                                "{bytes:?} from {from}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn plain_run_stops_at_the_first_byte_a_string_escapes() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
                .unwrap_or(bytes.len())
        };
        // Every byte value at every place of a 40-byte run, after and before
        // bytes that borrow and carry (0x00, 0x20, 0x21, 0x80, 0xff) and others.
        for fill in [b'a', 0x20, 0x21, 0x5b, 0x5d, 0x80, 0xff] {
            for byte in 0..=255u8 {
                for place in 0..40 {
                    let mut bytes = vec![fill; 40];
                    bytes[place] = byte;
                    assert_eq!(plain_run(&bytes), naive(&bytes), "{bytes:?}");
                    // Both ways of looking at sixteen bytes find the same first one.
                    for start in 0..=24 {
                        let chunk: &[u8; 16] = bytes[start..start + 16].try_into().unwrap();
                        let word =
                            |at: usize| u64::from_le_bytes(chunk[at..at + 8].try_into().unwrap());
                        assert_eq!(
                            escapes16(chunk).trailing_zeros(),
                            escapes16_swar(word(0), word(8)).trailing_zeros(),
                            "{chunk:?}"
                        );
                    }
                    // Copied from every start: the plain bytes, and where they stop.
                    for start in 0..40 {
                        let mut out = vec![7];
                        let stop = Room::new(&mut out).plain(&bytes, start);
                        assert_eq!(stop, start + naive(&bytes[start..]), "{bytes:?}");
                        assert_eq!(out[1..], bytes[start..stop], "{bytes:?}");
                    }
                    if place + 1 < 40 {
                        bytes[place + 1] = 0;
                        assert_eq!(plain_run(&bytes), naive(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    fn ours(value: &Value) -> String {
        let mut out = Vec::new();
        write_value(&mut out, value);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "plain ascii, longer than eight bytes".into(),
            "quote \" backslash \\ slash / del \u{7f}".into(),
            "é🙂 ünïcödé \u{2028} \u{2029} \u{fffd}".into(),
        ];
        // Every control character, at every offset within a word.
        for byte in 0u8..0x20 {
            for offset in 0..10 {
                let mut text = "x".repeat(offset);
                text.push(char::from(byte));
                text.push_str("tail\"\\");
                samples.push(text);
            }
        }
        for text in &samples {
            let value = Value::String(text.clone());
            assert_eq!(
                ours(&value),
                serde_json::to_string(&value).unwrap(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let values = [
            json!(null),
            json!(true),
            json!([1, -2.5, 1e300, 12_345_678_901_234_567_890_u128, [], {}]),
            json!({"b": {"z": 1, "a": [null, false]}, "a": "x\ny", "": 0.1}),
            serde_json::from_str::<Value>(
                r#"{"big": 123456789012345678901234567890, "e": 1E400, "f": -0.0}"#,
            )
            .unwrap(),
        ];
        for value in &values {
            assert_eq!(ours(value), serde_json::to_string(value).unwrap());
        }
    }

    #[test]
    fn numbers_and_floats_match() {
        for n in [0u64, 7, 10, 99, 1000, u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(out, n.to_string().into_bytes());
        }
        let whole = (-2000..2000)
            .map(f64::from)
            .chain((0..60).map(|p| 2f64.powi(p)))
            .chain([
                9_007_199_254_740_991.0,
                9_007_199_254_740_992.0,
                1e15,
                1e16,
                1e17,
            ]);
        for f in [0.0, -0.0, 1.0, 0.1, 1e-7, 1e21, f64::NAN, f64::INFINITY]
            .into_iter()
            .chain(whole)
        {
            let mut out = Vec::new();
            write_f64(&mut out, f);
            assert_eq!(out, serde_json::to_vec(&f).unwrap());
        }
    }
}
