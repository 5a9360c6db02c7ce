//! A JSON number's text: where it ends, whether it has an exponent, and the
//! pieces a [`Number`](super::Number) keeps of it.

/// A JSON number's text as a [`Number`](super::Number) keeps it, in three pieces to join: the
/// mantissa, then `e` or `e+` (empty without an exponent), then the exponent's
/// sign and digits (`1E5` is `1`, `e+`, `5`).
pub fn kept_number_text(text: &str) -> [&str; 3] {
    // `E` or `e` (`| 0x20` lowers an ASCII letter; no other byte gives `e`).
    match text.bytes().position(|b| b | 0x20 == b'e') {
        None => [text, "", ""],
        Some(at) => {
            let exponent = &text[at + 1..];
            let mark = if exponent.starts_with(['+', '-']) {
                "e"
            } else {
                "e+"
            };
            [&text[..at], mark, exponent]
        }
    }
}

/// Where the JSON number starting at `start` ends (`None` where none starts:
/// `-`, an integer part without a leading zero, then an optional fraction and
/// exponent), and whether it has an exponent: a reader that knows it has none
/// keeps its text as it is ([`Number::without_exponent`](super::Number::without_exponent)),
/// without looking for one again ([`kept_number_text`]).
pub(crate) fn number_extent(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let digits = |mut at: usize| {
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        at
    };
    let mut at = start + usize::from(bytes.get(start) == Some(&b'-'));
    match bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits(at + 1),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if !matches!(bytes.get(at), Some(b'e' | b'E')) {
        return Some((at, false));
    }
    at += 1;
    if matches!(bytes.get(at), Some(b'+' | b'-')) {
        at += 1;
    }
    let end = digits(at);
    (end > at).then_some((end, true))
}
