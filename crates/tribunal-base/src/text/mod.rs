//! Small text utilities shared by rules, strategies and error messages, one
//! file per concern: similarity, sentences, Python's formatting, printable
//! text; here, the names of JSON types for messages.

use crate::json::Json;

mod equal;
mod printable;
mod python;
mod sentences;
mod similarity;
mod utf8;

pub use equal::{exact_match, Normalizer, DEFAULT_NORMALIZE_STRIP};
pub use printable::{clip_chars, one_line, prefix_chars, printable, push_printable};
pub use python::{
    is_python_space, python_json, python_number, replace_lone_surrogates, write_python_json,
    write_python_repr_list, PythonJson,
};
pub use sentences::{count_sentences, count_sentences_with};
pub use similarity::{levenshtein, levenshtein_until, similarity, similarity_until};
pub use utf8::Utf8Chunks;

/// "a string", "an object", "null"... for messages about a JSON value's type.
/// A number for messages, as the built-ins write scores and similarities: up to
/// four decimals, trailing zeros dropped (`0.2549`, `0.85`, `1`), and every
/// digit when four would make it look equal to `other`, the number it is
/// compared with (`0.699996 < 0.7`, not `0.7 < 0.7`).
pub fn short_number(value: f64, other: f64) -> String {
    short_numbers(value, other).0
}

/// [`short_number`] of each of two numbers compared with each other (`score
/// 0.4 is below min_score 0.8`): each formatted once.
pub fn short_numbers(a: f64, b: f64) -> (String, String) {
    let (a_text, b_text) = (four_decimals(a), four_decimals(b));
    if a_text == b_text && a.to_bits() != b.to_bits() {
        (format!("{a}"), format!("{b}"))
    } else {
        (a_text, b_text)
    }
}

/// `x` to four decimals, trailing zeros (and a bare point) dropped, `-0` as `0`:
/// `format!("{x:.4}")` trimmed. Without float formatting when `x` is the double
/// nearest a multiple of 0.0001 (a score such as 0.4, 0.85 or 1; a record under
/// `min_score` names two): exact float formatting costs a few thousand
/// instructions, a tenth of a KSI record's whole evaluation. (Such an `x` is
/// within half an ulp of `k / 10_000`, far less than the 0.00005 that could
/// round it elsewhere, so the digits are `k`'s.)
fn four_decimals(x: f64) -> String {
    let scaled = (x * 10_000.0).round();
    // (Exactly equal: the nearest double to `k / 10_000` is `x` itself.)
    if scaled.abs() < 1e15 && (scaled / 10_000.0).to_bits() == x.to_bits() {
        // In range: exact as an integer.
        #[allow(clippy::cast_possible_truncation)]
        let k = scaled as i64;
        let (whole, fraction) = (k.unsigned_abs() / 10_000, k.unsigned_abs() % 10_000);
        // The digits by hand (`to_string` and `format!` go through the
        // formatting machinery, hundreds of instructions a call).
        let mut text = Vec::with_capacity(24);
        if k < 0 {
            text.push(b'-');
        }
        crate::json_write::write_u64(&mut text, whole);
        if fraction != 0 {
            text.push(b'.');
            // Up to the last decimal that is not zero.
            let (mut shown, mut trimmed) = (4, fraction);
            while trimmed % 10 == 0 {
                trimmed /= 10;
                shown -= 1;
            }
            for place in &[1000, 100, 10, 1][..shown] {
                text.push(b'0' + (fraction / place % 10) as u8);
            }
        }
        return String::from_utf8(text).expect("ASCII digits");
    }
    four_decimals_by_formatting(x)
}

/// [`four_decimals`] by float formatting, for every `x` (the fast path's
/// reference in the tests).
fn four_decimals_by_formatting(x: f64) -> String {
    let text = format!("{x:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

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

/// `source` compiled as a regular expression (Rust's `regex` syntax), or why
/// it is not one ([`NotARegex`]).
pub fn regex(source: &str) -> Result<regex::Regex, NotARegex> {
    regex::Regex::new(source).map_err(|err| {
        NotARegex(
            err.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        )
    })
}

/// Why a text is not a regular expression: the `regex` crate's message, on
/// one line (the crate's spans lines: a caret diagram).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotARegex(String);

#[cfg(test)]
mod tests {

    #[test]
    fn four_decimals_without_formatting_writes_what_formatting_writes() {
        let mut values: Vec<f64> = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            0.00005,
            -0.00005,
            0.000_049_99,
            0.99995,
            0.69995,
            1e11,
            -1e11,
            1e14,
            123_456_789.123_4,
            1e300,
            -1e-300,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::MAX,
            f64::MIN,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.1 + 0.2,
        ];
        // Every multiple of 0.0001 in [-3, 3], as literals give them and as
        // arithmetic does (0.1 * 3 is not 0.3).
        for k in -30_000..=30_000 {
            let k = f64::from(k);
            values.extend([k / 10_000.0, k * 0.0001, (k / 1000.0) * 0.1]);
        }
        // Doubles all over: an xorshift's bit patterns, and in [-10, 10].
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
            #[allow(clippy::cast_precision_loss)]
            values.push((state >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0);
        }
        for x in values {
            assert_eq!(
                super::four_decimals(x),
                four_decimals_by_formatting(x),
                "{x:e} ({:#x})",
                x.to_bits()
            );
        }
    }

    #[test]
    fn short_numbers_show_every_digit_only_when_four_would_look_equal() {
        let pairs = [
            (0.4, 0.7, "0.4", "0.7"),
            (0.0, 0.7, "0", "0.7"),
            (0.69995, 0.7, "0.6999", "0.7"),
            (0.699_996, 0.7, "0.699996", "0.7"),
            (0.700_001, 0.7, "0.700001", "0.7"),
            (0.25, 0.25, "0.25", "0.25"),
            (1.0, 0.99999, "1", "0.99999"),
            (-0.5, 1e-5, "-0.5", "0"),
        ];
        for (a, b, a_text, b_text) in pairs {
            let (a_shown, b_shown) = short_numbers(a, b);
            assert_eq!((a_shown.as_str(), b_shown.as_str()), (a_text, b_text));
            assert_eq!(a_shown, short_number(a, b));
            assert_eq!(b_shown, short_number(b, a));
        }
    }

    use std::borrow::Cow;

    use super::sentences::spells;
    use super::similarity::{levenshtein_rows, lowered_chars};
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
                let abbreviated = c == '.'
                    && chars.peek() != Some(&'.')
                    && is_abbreviation_as_before(&word, abbreviations);
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

    /// [`is_abbreviation`] as first written (every character of the word
    /// counted for an initial, the whole list tried for any word).
    fn is_abbreviation_as_before(word: &str, extra: &[String]) -> bool {
        let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
        if word.is_empty() {
            return false;
        }
        if word
            .split('.')
            .all(|part| part.chars().count() == 1 && part.chars().all(char::is_uppercase))
        {
            return true;
        }
        super::sentences::SENTENCE_ABBREVIATIONS
            .iter()
            .any(|known| spells(known, word))
            || extra.iter().any(|known| spells(known, word))
    }

    #[test]
    fn sentences_are_counted_as_before() {
        // Texts made of pieces where the counter's cases meet: abbreviations,
        // initials, numbers, closing marks after terminators, words that go on
        // after them.
        // Also every kind of whitespace (ASCII, Unicode, control bytes that
        // are not), words at and past the longest abbreviation's length, and
        // letters whose case is neither or both.
        let pieces = [
            "Dr", "dr", "U", "S", "e.g", "I", "x", "3", "14", "word", "Tolkien", "appx", "é", ".",
            ".", "..", "!", "?", "…", ")", "\"", "'", "”", "’", " ", " ", "\n", "\u{a0}", "\t",
            "\u{b}", "\u{c}", "\r", "\u{1c}", "\u{85}", "\u{2003}", "\u{3000}", "\u{0}", "i.e",
            "No", "etc", "3.14", "The", "naïve", "日本", "Ω", ",", "-", "(", "approx", "APPROX",
            "approxi", "sept", "thurs", "É", "ǅ", "ß", "Mr", "mR", "Jr",
        ];
        let extra = [
            "appx".to_owned(),
            "Co.".to_owned(),
            "etc".to_owned(),
            "approx.".to_owned(),
        ];
        // A closing mark inside a word: the word is read without it.
        assert_eq!(count_sentences("U.)S. Go."), 1);
        assert_eq!(count_sentences_as_before("U.)S. Go.", &[]), 1);
        assert_eq!(count_sentences("e.)g. x. Dr.\"Who. y"), 3);
        assert_eq!(count_sentences_as_before("e.)g. x. Dr.\"Who. y", &[]), 3);
        let mut next = crate::json::numbers(7);
        for _ in 0..30_000 {
            let len = usize::try_from(next() % 24).unwrap();
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
