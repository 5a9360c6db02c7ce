//! The rewriter's byte-level reading: quotes, placeholders, blanks, words and
//! the shapes of numbers as models write them.

use crate::Repair;

/// The quote a string was opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    Double,
    Single,
    /// `“` or `”`.
    CurlyDouble,
    /// `‘` or `’`.
    CurlySingle,
}

/// The quote opening a string at the start of `rest`, and its length in bytes.
pub(super) fn opening_quote(rest: &[u8]) -> Option<(Quote, usize)> {
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
    pub(super) fn closing_len(self, rest: &[u8]) -> Option<usize> {
        match (self, rest) {
            (Quote::Double, [b'"', ..]) | (Quote::Single, [b'\'', ..]) => Some(1),
            (Quote::CurlyDouble, [0xE2, 0x80, 0x9C | 0x9D, ..])
            | (Quote::CurlySingle, [0xE2, 0x80, 0x98 | 0x99, ..]) => Some(3),
            _ => None,
        }
    }

    pub(super) fn repair(self) -> Option<Repair> {
        match self {
            Quote::Double => None,
            Quote::Single => Some(Repair::SingleQuotes),
            Quote::CurlyDouble | Quote::CurlySingle => Some(Repair::TypographicQuotes),
        }
    }
}

/// Whether a string's content holds the byte as it is, whatever its quote, with
/// nothing to decide: not a quote of any kind (nor the first byte of a curly
/// one), a backslash, a control byte or a comma (which may end a value whose
/// closing quote is missing).
const PLAIN_CONTENT: [bool; 256] = {
    let mut plain = [true; 256];
    let mut byte = 0;
    while byte < 0x20 {
        plain[byte] = false;
        byte += 1;
    }
    plain[b'"' as usize] = false;
    plain[b'\'' as usize] = false;
    plain[b'\\' as usize] = false;
    plain[b',' as usize] = false;
    plain[0xE2] = false;
    plain
};

/// How many bytes at the start of `rest` a string's content holds as they are
/// (see [`PLAIN_CONTENT`]): copied in one go.
pub(super) fn plain_content_len(rest: &[u8]) -> usize {
    rest.iter()
        .take_while(|&&byte| PLAIN_CONTENT[usize::from(byte)])
        .count()
}

/// The length of a `...` (three dots or more) or `…` placeholder at the start of `rest`.
pub(super) fn placeholder_len(rest: &[u8]) -> Option<usize> {
    if rest.starts_with("…".as_bytes()) {
        return Some(3);
    }
    let dots = rest.iter().take_while(|&&byte| byte == b'.').count();
    (dots >= 3).then_some(dots)
}

/// The length of the number-like token at the start of `rest` (digits, signs,
/// points and exponents, as models write numbers).
pub(super) fn number_token_len(rest: &[u8]) -> usize {
    rest.iter()
        .take_while(|b| matches!(b, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E'))
        .count()
}

/// `at` moved past the spaces and tabs there (not past a line end).
pub(super) fn past_blanks(src: &[u8], mut at: usize) -> usize {
    while src.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
        at += 1;
    }
    at
}

/// The length of the whitespace JSON does not allow at the start of `rest`, as
/// models emit it between tokens: a no-break space (U+00A0, U+202F), the spaces
/// U+2000 to U+200A, a zero-width space (U+200B), a line or paragraph separator,
/// U+1680, U+205F, an ideographic space (U+3000) or a byte-order mark (U+FEFF).
pub(super) fn unicode_space_len(rest: &[u8]) -> Option<usize> {
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
pub(super) fn past_spaces(src: &[u8], mut at: usize) -> usize {
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
pub(super) fn word_end(src: &[u8], mut at: usize) -> usize {
    while src.get(at).is_some_and(|&b| is_word_byte(b)) && unicode_space_len(&src[at..]).is_none() {
        at += 1;
    }
    at
}

/// Whether a byte may appear in a bare word (an unquoted key or a literal).
pub(super) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// Whether a byte may start a bare word in value position.
pub(super) fn is_word_start(byte: u8) -> bool {
    is_word_byte(byte) && !byte.is_ascii_digit()
}

/// The value of one ASCII hex digit.
pub(super) fn hex_value(byte: u8) -> Option<u16> {
    char::from(byte).to_digit(16).map(|digit| digit as u16)
}

/// How much of a JSON number a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumberShape {
    Complete,
    /// A proper prefix of a number (`-`, `1.`, `2e`, `2e+`).
    Prefix,
    Invalid,
}

/// Classifies a token of `0-9 + - . e E` against the JSON number grammar.
pub(super) fn number_shape(token: &[u8]) -> NumberShape {
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
pub(super) fn fixed_number(token: &[u8]) -> Option<String> {
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
