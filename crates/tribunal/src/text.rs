//! Small text utilities shared by rules, strategies and error messages.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::json::Json;

/// Levenshtein distance over Unicode scalar values.
pub fn levenshtein(a: &[char], b: &[char]) -> usize {
    // Inside a script call (`fuzzy` reached through `compare()`) the call's
    // deadline ends the work; the call is then an error, the result unused.
    levenshtein_until(a, b, &mut crate::deadline::watch()).unwrap_or(usize::MAX)
}

/// Above this many cells (`len(a) · len(b)`) the distance is computed row by
/// row, asking the caller between rows whether to go on; below it, in one go
/// with the bit-parallel algorithm (64 cells a word operation: about a
/// millisecond at the bound).
const UNWATCHED_CELLS: usize = 1 << 26;

/// [`levenshtein`] that may give up: on inputs past [`UNWATCHED_CELLS`] it asks
/// `keep_going(cells)` after each row of the table (`cells`: the row's length)
/// and returns `None` when it says no (a script's deadline: the work is
/// quadratic, and scripts may pass megabytes).
pub fn levenshtein_until(
    a: &[char],
    b: &[char],
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<usize> {
    if a.len().saturating_mul(b.len()) <= UNWATCHED_CELLS {
        // Myers' / Hyyrö's bit-parallel algorithm, as maintained by rapidfuzz.
        let distance =
            rapidfuzz::distance::levenshtein::distance(a.iter().copied(), b.iter().copied());
        return keep_going(a.len().min(b.len())).then_some(distance);
    }
    levenshtein_rows(a, b, keep_going)
}

/// The textbook dynamic programme, one row at a time in O(min) memory, asking
/// `keep_going` after each row.
fn levenshtein_rows(
    a: &[char],
    b: &[char],
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<usize> {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, lc) in long.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, sc) in short.iter().enumerate() {
            let above = row[j + 1];
            let cost = usize::from(lc != sc);
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
            diagonal = above;
        }
        if !keep_going(short.len()) {
            return None;
        }
    }
    Some(row[short.len()])
}

/// Normalised similarity `1 - distance / longer length` of the lower-cased strings
/// (1.0 for two empty strings).
pub fn similarity(a: &str, b: &str) -> f64 {
    // As `levenshtein`: a script call's deadline ends the work.
    similarity_until(a, b, &mut crate::deadline::watch()).unwrap_or(0.0)
}

/// [`similarity`] that can give up, as [`levenshtein_until`].
pub fn similarity_until(
    a: &str,
    b: &str,
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<f64> {
    let a = lowered_chars(a);
    let b = lowered_chars(b);
    let longer = a.len().max(b.len());
    if longer == 0 {
        return Some(1.0);
    }
    let distance = levenshtein_until(&a, &b, keep_going)?;
    Some(1.0 - distance as f64 / longer as f64)
}

/// The text's characters, lower-cased as a whole, as Python's `str.lower()` (the
/// final sigma depends on its context), in a vector sized once.
fn lowered_chars(text: &str) -> Vec<char> {
    if text.is_ascii() {
        return text
            .bytes()
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    let lower = text.to_lowercase();
    // At least as many bytes as characters: never grown.
    let mut chars = Vec::with_capacity(lower.len());
    chars.extend(lower.chars());
    chars
}

/// Words that end in a period without ending a sentence (compared without the
/// period, ignoring case): titles, months, and the usual Latin and business
/// abbreviations. A pack adds its own with `contract.sentence_abbreviations`.
pub const SENTENCE_ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "gen", "col", "capt", "lt", "sgt",
    "rev", "hon", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "e.g", "i.e",
    "vs", "cf", "approx", "est", "dept", "inc", "ltd", "co", "corp", "no", "vol", "fig", "ca",
    "al",
];

/// Counts sentences: runs of text ended by `.`, `!` or `?` (repeats such as `...`
/// or `?!` end one sentence) followed by whitespace or the end of the text. Text
/// after the last terminator counts as a sentence too. A period does not end a
/// sentence after an abbreviation ([`SENTENCE_ABBREVIATIONS`]), an initial (one
/// capital letter: `J. R. R. Tolkien`, `U.S.`) or inside a number (`3.14`).
pub fn count_sentences(text: &str) -> usize {
    count_sentences_with(text, &[])
}

/// [`count_sentences`], with `abbreviations` (without their period) added to
/// the list.
pub fn count_sentences_with(text: &str, abbreviations: &[String]) -> usize {
    let mut count = 0;
    let mut in_sentence = false;
    // The word being read (since the last whitespace), for the abbreviation
    // check: where it starts, and whether a run of closing marks skipped after a
    // terminator lies inside it (then it is not its text as written; rare).
    let (mut word_start, mut skipped_inside) = (0, false);
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if is_terminator(c) {
            let abbreviated = c == '.'
                && chars.peek().map(|&(_, n)| n) != Some('.')
                && if skipped_inside {
                    is_abbreviation(&word_as_read(&text[word_start..at]), abbreviations)
                } else {
                    is_abbreviation(&text[word_start..at], abbreviations)
                };
            let mut skipped = false;
            while chars.next_if(|&(_, n)| is_closing(n)).is_some() {
                skipped = true;
            }
            let at_boundary = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
            skipped_inside |= skipped && !at_boundary;
            if at_boundary && in_sentence && !abbreviated {
                count += 1;
                in_sentence = false;
            }
        } else if c.is_whitespace() {
            word_start = at + c.len_utf8();
            skipped_inside = false;
        } else {
            in_sentence = true;
        }
    }
    count + usize::from(in_sentence)
}

/// A character that ends a sentence.
fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// A character skipped after a terminator (repeats, closing quotes and brackets).
fn is_closing(c: char) -> bool {
    is_terminator(c) || matches!(c, '"' | '\'' | ')' | '”' | '’')
}

/// A word (no whitespace) as the sentence counter reads it: without the
/// closing marks that follow each terminator, which it skips.
fn word_as_read(text: &str) -> String {
    let mut word = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        word.push(c);
        if is_terminator(c) {
            while chars.next_if(|&n| is_closing(n)).is_some() {}
        }
    }
    word
}

/// Whether `word` (the text before a period, from the last whitespace) is an
/// abbreviation or an initial.
fn is_abbreviation(word: &str, extra: &[String]) -> bool {
    let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
    if word.is_empty() {
        return false;
    }
    // `J`, `U.S`, `R.R`: single capital letters between periods.
    if word
        .split('.')
        .all(|part| part.chars().count() == 1 && part.chars().all(char::is_uppercase))
    {
        return true;
    }
    SENTENCE_ABBREVIATIONS
        .iter()
        .any(|known| spells(known, word))
        || extra.iter().any(|known| spells(known, word))
}

/// Whether `known` less its final periods is `word`, ignoring ASCII case (the
/// lengths first: most words are longer than any abbreviation).
fn spells(known: &str, word: &str) -> bool {
    let (known, word) = (known.as_bytes(), word.as_bytes());
    known.len() >= word.len()
        && word.last() != Some(&b'.')
        && known[..word.len()].eq_ignore_ascii_case(word)
        && known[word.len()..].iter().all(|&b| b == b'.')
}

/// Python's `str.isspace()`: Unicode `White_Space` and the information
/// separators U+001C–U+001F.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Writes Python's `repr()` of `s` to `out`, so feedback reads exactly like the
/// seeds' `f"Previous issues: {issues}"`: quoted with `'` (with `"` when
/// only `'` occurs), `\\`, `\n`, `\r`, `\t` and the quote escaped, and every
/// other character Python does not print (`str.isprintable()`: control and
/// format characters, separators but the space, private-use and unassigned code
/// points, by the `regex` crate's Unicode tables) as `\xhh`, `\uhhhh` or
/// `\Uhhhhhhhh`. Runs of printable text are copied whole.
fn write_python_repr_str(out: &mut String, s: &str) {
    let quote_byte = if s.contains('\'') && !s.contains('"') {
        b'"'
    } else {
        b'\''
    };
    let quote = char::from(quote_byte);
    out.push(quote);
    // Only ASCII controls, DEL, the backslash, the quote and characters outside
    // ASCII can need an escape.
    let bytes = s.as_bytes();
    let special = |b: &u8| *b < b' ' || *b >= 0x7f || *b == b'\\' || *b == quote_byte;
    let (mut run, mut at) = (0, 0);
    while let Some(offset) = bytes[at..].iter().position(special) {
        at += offset;
        let c = s[at..]
            .chars()
            .next()
            .expect("a special byte starts a character");
        let next = at + c.len_utf8();
        if c.is_ascii() || python_unprintable(c) {
            out.push_str(&s[run..at]);
            run = next;
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c => {
                    let code = u32::from(c);
                    let _ = match code {
                        0..=0xff => write!(out, "\\x{code:02x}"),
                        0x100..=0xffff => write!(out, "\\u{code:04x}"),
                        _ => write!(out, "\\U{code:08x}"),
                    };
                }
            }
        }
        at = next;
    }
    out.push_str(&s[run..]);
    out.push(quote);
}

/// A character outside ASCII that Python's `repr()` escapes.
fn python_unprintable(c: char) -> bool {
    static UNPRINTABLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$").expect("a valid class")
    });
    UNPRINTABLE.is_match(c.encode_utf8(&mut [0; 4]))
}

/// Writes Python's `repr()` of a list of strings to `out`.
pub fn write_python_repr_list<'a>(out: &mut String, items: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_python_repr_str(out, item);
    }
    out.push(']');
}

/// JSON text in Python's `json.dumps` default layout (`", "` and `": "`
/// separators, non-ASCII kept), as the seeds' prompts print it.
pub fn python_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_python_json(&Json::from(value), &mut out, PythonJson::default());
    out
}

/// How [`write_python_json`] lays out keys and numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct PythonJson {
    /// Keys in case-insensitive order (ties: as written) instead of as given.
    pub sort_keys: bool,
    /// Integral floats written as integers (`2.0` → `2`), so that numerically
    /// equal numbers have one spelling.
    pub canonical_numbers: bool,
}

/// Writes `value` in Python's `json.dumps` layout, styled by `style`.
pub fn write_python_json(value: &Json, out: &mut String, style: PythonJson) {
    match value {
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(item, out, style);
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut entries: Vec<(&crate::json::Str, &Json)> = map.iter().collect();
            if style.sort_keys {
                entries.sort_by_cached_key(|(k, _)| (k.to_lowercase(), (*k).clone()));
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Json::String(key.clone()).to_string());
                out.push_str(": ");
                write_python_json(item, out, style);
            }
            out.push('}');
        }
        Json::Number(n) if style.canonical_numbers && n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                let _ = write!(out, "{f:.0}");
            }
            _ => out.push_str(&python_number(n)),
        },
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Python's `str()` of a JSON number: integers as digits, floats as `repr(float)`
/// (`2.0`, `1e-05`, `1.5e+16`).
pub fn python_number(n: &crate::json::Number) -> String {
    if !n.is_f64() {
        // An integer (Python's `str(-0)` is `0`), or a number beyond a float.
        return if n.as_str() == "-0" {
            "0".to_owned()
        } else {
            n.to_string()
        };
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Shortest round-trip digits, then Python's layout: positional for exponents
    // in [-4, 16), scientific with a signed two-digit exponent otherwise.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let text = format!("{f}");
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// "a string", "an object", "null"... for messages about a JSON value's type.
pub fn json_type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// [`json_type_name`] of a `serde_json` value (a pack's config).
pub fn value_type_name(value: &serde_json::Value) -> &'static str {
    json_type_name(&match value {
        serde_json::Value::String(_) => Json::String(crate::json::Str::default()),
        serde_json::Value::Array(_) => Json::Array(Vec::new()),
        serde_json::Value::Object(_) => Json::Object(crate::json::Object::new()),
        scalar => Json::from(scalar),
    })
}

/// The first `max` characters of `s` (not bytes: never splits a character).
pub fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// `s` cut to at most `max` characters, with `…` after a cut (borrowed, not
/// copied, when it is short enough).
pub fn clip_chars(s: &str, max: usize) -> Cow<'_, str> {
    let prefix = prefix_chars(s, max);
    if prefix.len() == s.len() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("{prefix}…"))
    }
}

/// Text safe to show on a terminal: control characters (C0 but newline and tab,
/// DEL, C1) and bidirectional overrides are written as escapes (`\u{1b}`), so
/// a model's output or a pack's name cannot move the cursor, clear the screen,
/// set the window title or reorder what is shown.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, true)
}

/// [`printable`] that also escapes newlines and tabs: for a value shown inside
/// one line of a report (an issue's message, a path, a name).
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, false)
}

/// Appends `c`, escaped when a terminal would act on it.
pub fn push_printable(out: &mut String, c: char, keep_lines: bool) {
    if is_unsafe(c, keep_lines) {
        let _ = write!(out, "{}", c.escape_default());
    } else {
        out.push(c);
    }
}

fn is_unsafe(c: char, keep_lines: bool) -> bool {
    if keep_lines && matches!(c, '\n' | '\t') {
        return false;
    }
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_unsafe(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push_printable(&mut out, c, keep_lines);
    }
    Cow::Owned(out)
}

/// Rewrites each `\uD800`–`\uDFFF` escape of a JSON text that is not half of a
/// surrogate pair as `\uFFFD`; `None` when there is none. Python's `json.dumps`
/// writes such escapes for strings it cannot encode; JSON parsers that build
/// Unicode strings (`serde_json`) refuse them.
pub fn replace_lone_surrogates(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    let surrogate_at = |at: usize| -> Option<u32> {
        let hex = json.get(at + 2..at + 6)?;
        if bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        u32::from_str_radix(hex, 16)
            .ok()
            .filter(|code| (0xD800..=0xDFFF).contains(code))
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = bytes.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        at += offset;
        let Some(code) = surrogate_at(at) else {
            at += 2; // any other escape, `\\` included
            continue;
        };
        let paired = (0xD800..0xDC00).contains(&code)
            && bytes.get(at + 6) == Some(&b'\\')
            && surrogate_at(at + 6).is_some_and(|low| low >= 0xDC00);
        if paired {
            at += 12;
            continue;
        }
        let text = out.get_or_insert_with(|| String::with_capacity(json.len()));
        text.push_str(&json[copied..at]);
        text.push_str("\\ufffd");
        at += 6;
        copied = at;
    }
    let mut text = out?;
    text.push_str(&json[copied..]);
    Some(text)
}

/// A seeded stream of pseudo-random numbers (xorshift), for generated test cases
/// (here, before every module that uses it).
#[cfg(test)]
pub(crate) fn numbers(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(levenshtein(&chars(""), &chars("abc")), 3);
        assert_eq!(levenshtein(&chars("é"), &chars("e")), 1);
    }

    #[test]
    fn lowering_keeps_the_whole_string_rules() {
        for text in [
            "John SMITH",
            "",
            "ΟΔΟΣ ΟΔΟΣ",
            "İstanbul",
            "Straße ẞ",
            "MiXeD 123 ünï",
        ] {
            let expected: Vec<char> = text.to_lowercase().chars().collect();
            assert_eq!(lowered_chars(text), expected, "{text}");
        }
        // The final sigma: a word-final capital sigma lowers to ς.
        assert_eq!(lowered_chars("ΟΔΟΣ").last(), Some(&'ς'));
    }

    #[test]
    fn the_bit_parallel_distance_equals_the_textbook_one() {
        // Differential: random strings over small alphabets (many matches), with
        // multi-byte and astral characters, lengths across the 64-bit word edge.
        let alphabets: [&[char]; 3] = [
            &['a', 'b'],
            &['a', 'b', 'c', 'd', 'e', ' '],
            &['é', 'e', 'ß', '🙂', 'x', '\u{301}'],
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        for round in 0..3000 {
            let alphabet = alphabets[round % alphabets.len()];
            let mut word = |max: usize| -> Vec<char> {
                let len = next(max + 1);
                (0..len).map(|_| alphabet[next(alphabet.len())]).collect()
            };
            let max = [8, 70, 200][round % 3];
            let (a, b) = (word(max), word(max));
            let fast = levenshtein(&a, &b);
            let slow = levenshtein_rows(&a, &b, &mut |_| true);
            assert_eq!(Some(fast), slow, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn a_long_distance_asks_between_rows_and_can_stop() {
        let long: Vec<char> = "ab".repeat(5000).chars().collect();
        let other: Vec<char> = "ba".repeat(7000).chars().collect();
        let mut rows = 0;
        let stopped = levenshtein_until(&long, &other, &mut |_| {
            rows += 1;
            rows < 10
        });
        assert_eq!(stopped, None);
        assert_eq!(rows, 10);
    }

    #[test]
    fn similarity_is_case_insensitive_and_normalised() {
        assert!((similarity("John Smith", "john smyth") - 0.9).abs() < 1e-12);
        assert!((similarity("", "") - 1.0).abs() < f64::EPSILON);
        assert!(similarity("abc", "xyz").abs() < f64::EPSILON);
        assert!(
            (similarity("ΟΔΟΣ", "οδος") - 1.0).abs() < f64::EPSILON,
            "final sigma"
        );
    }

    #[test]
    fn sentences_are_counted() {
        assert_eq!(
            count_sentences("A mossy ticket booth opens in a tree root."),
            1
        );
        assert_eq!(count_sentences("One. Two! Three?"), 3);
        assert_eq!(count_sentences("Wait... what?! Fine"), 3);
        assert_eq!(count_sentences("Pi is 3.14 today."), 1);
        assert_eq!(count_sentences("   "), 0);
        assert_eq!(count_sentences("no terminator"), 1);
        // Abbreviations, initials and numbers do not end a sentence.
        assert_eq!(
            count_sentences("Fly out on Dec. 1. They need two seats."),
            2
        );
        assert_eq!(
            count_sentences("J. R. R. Tolkien wrote it. Dr. Who liked it."),
            2
        );
        assert_eq!(
            count_sentences("Bring fruit, e.g. apples, i.e. food. Then eat."),
            2
        );
        assert_eq!(
            count_sentences("The U.S. team won 3.5 points (approx. 4). Done."),
            2
        );
        assert_eq!(count_sentences("It costs 5 USD. Mr. Smith pays."), 2);
        assert_eq!(count_sentences("See the appx. Then stop."), 2);
        assert_eq!(
            count_sentences_with("See the appx. Then stop.", &["appx".to_owned()]),
            1
        );
        // An ellipsis after an abbreviation-like word still ends the sentence.
        assert_eq!(count_sentences("Wait for Dec... It comes."), 2);
    }

    fn python_repr_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
        let mut out = String::new();
        write_python_repr_list(&mut out, items);
        out
    }

    /// The sentence counter as first written (a word built char by char), to
    /// check the one that reads words from the text against.
    fn count_sentences_as_before(text: &str, abbreviations: &[String]) -> usize {
        let mut count = 0;
        let mut in_sentence = false;
        let mut word = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if matches!(c, '.' | '!' | '?' | '…') {
                let abbreviated =
                    c == '.' && chars.peek() != Some(&'.') && is_abbreviation(&word, abbreviations);
                word.push(c);
                while matches!(
                    chars.peek(),
                    Some('.' | '!' | '?' | '…' | '"' | '\'' | ')' | '”' | '’')
                ) {
                    chars.next();
                }
                let at_boundary = chars.peek().is_none_or(|n| n.is_whitespace());
                if at_boundary && in_sentence && !abbreviated {
                    count += 1;
                    in_sentence = false;
                }
            } else if c.is_whitespace() {
                word.clear();
            } else {
                word.push(c);
                in_sentence = true;
            }
        }
        count + usize::from(in_sentence)
    }

    #[test]
    fn sentences_are_counted_as_before() {
        // Texts made of pieces where the counter's cases meet: abbreviations,
        // initials, numbers, closing marks after terminators, words that go on
        // after them.
        let pieces = [
            "Dr", "dr", "U", "S", "e.g", "I", "x", "3", "14", "word", "Tolkien", "appx", "é", ".",
            ".", "..", "!", "?", "…", ")", "\"", "'", "”", "’", " ", " ", "\n", "\u{a0}",
        ];
        let extra = ["appx".to_owned(), "Co.".to_owned()];
        // A closing mark inside a word: the word is read without it.
        assert_eq!(count_sentences("U.)S. Go."), 1);
        assert_eq!(count_sentences_as_before("U.)S. Go.", &[]), 1);
        assert_eq!(count_sentences("e.)g. x. Dr.\"Who. y"), 3);
        assert_eq!(count_sentences_as_before("e.)g. x. Dr.\"Who. y", &[]), 3);
        let mut next = numbers(7);
        for _ in 0..20_000 {
            let len = usize::try_from(next() % 12).unwrap();
            let text: String = (0..len)
                .map(|_| pieces[usize::try_from(next() % pieces.len() as u64).unwrap()])
                .collect();
            for abbreviations in [&[][..], &extra[..]] {
                assert_eq!(
                    count_sentences_with(&text, abbreviations),
                    count_sentences_as_before(&text, abbreviations),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn an_abbreviation_is_spelled_as_before() {
        let words = [
            "mr", "MR", "Mr.", "e.g", "E.G", "e.g.", "", ".", "st", "sta", "s", "é", "dr..",
        ];
        let known = ["mr", "e.g", "e.g.", "dr..", "st", ".", "", "é", "ÉTÉ"];
        for word in words {
            for known in known {
                let before = known.trim_end_matches('.').eq_ignore_ascii_case(word);
                assert_eq!(spells(known, word), before, "{known:?} for {word:?}");
            }
        }
    }

    #[test]
    fn python_repr_matches_python() {
        assert_eq!(
            python_repr_list(["Missing type1 example", "it's"]),
            "['Missing type1 example', \"it's\"]"
        );
        assert_eq!(python_repr_list(["a'b\"c"]), "['a\\'b\"c']");
        assert_eq!(python_repr_list([]), "[]");
        // What Python 3.11 prints for `repr([...])` of these strings.
        let strings = [
            "a\u{a0}b",
            "x\u{2028}y",
            "z\u{85}",
            "\u{e0001}t",
            "e\u{200b}q",
            "say \"hi\" it's",
            "\u{e9}\u{300}ok \u{1F600}",
            "\u{7f}\u{1f}\0",
            "\u{10ffff}\u{e000}",
            "tab\there\\ \r\n",
        ];
        assert_eq!(
            python_repr_list(strings),
            r#"['a\xa0b', 'x\u2028y', 'z\x85', '\U000e0001t', 'e\u200bq', 'say "hi" it\'s', 'é̀ok 😀', '\x7f\x1f\x00', '\U0010ffff\ue000', 'tab\there\\ \r\n']"#
        );
    }

    #[test]
    fn python_json_uses_spaced_separators() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"kind":"x","n":[1,2],"m":{"a":null}}"#).unwrap();
        assert_eq!(
            python_json(&v),
            r#"{"kind": "x", "n": [1, 2], "m": {"a": null}}"#
        );
    }

    #[test]
    fn prefix_never_splits_characters() {
        assert_eq!(prefix_chars("🤔abc", 2), "🤔a");
        assert_eq!(prefix_chars("ab", 5), "ab");
    }

    #[test]
    fn terminal_controls_are_escaped() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(
            printable("a\u{1b}]0;title\u{7}b"),
            "a\\u{1b}]0;title\\u{7}b"
        );
        assert_eq!(printable("\u{9b}2J\r"), "\\u{9b}2J\\r");
        assert_eq!(printable("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(replace_lone_surrogates(r#"{"a": "x"}"#), None);
        assert_eq!(replace_lone_surrogates(r#""\ud83d\ude00""#), None);
        assert_eq!(
            replace_lone_surrogates(r#"{"a": "x\ud800y", "b": "\udc00"}"#).as_deref(),
            Some(r#"{"a": "x\ufffdy", "b": "\ufffd"}"#)
        );
        // A high surrogate followed by another high one: both lone.
        assert_eq!(
            replace_lone_surrogates(r#""\ud800\ud800""#).as_deref(),
            Some(r#""\ufffd\ufffd""#)
        );
        // An escaped backslash before `u` is not an escape.
        assert_eq!(replace_lone_surrogates(r#""\\ud800""#), None);
        assert_eq!(replace_lone_surrogates(r#""\ud8"#), None);
        // A backslash at the very end (a cut-off line).
        assert_eq!(replace_lone_surrogates(r#""ab\"#), None);
        assert_eq!(replace_lone_surrogates("\\"), None);
        let fixed = replace_lone_surrogates(r#"{"a": "\udfff!"}"#).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&fixed).unwrap()["a"],
            "\u{fffd}!"
        );
    }
}
