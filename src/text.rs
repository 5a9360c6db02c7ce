//! Small text utilities shared by rules, strategies and error messages.

use std::fmt::Write as _;

use serde_json::Value;

/// Levenshtein distance over Unicode scalar values, in O(len(a) · len(b)) time
/// and O(min) memory.
pub fn levenshtein(a: &[char], b: &[char]) -> usize {
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
    }
    row[short.len()]
}

/// Normalised similarity `1 - distance / longer length` of the lower-cased strings
/// (1.0 for two empty strings).
pub fn similarity(a: &str, b: &str) -> f64 {
    // Whole-string lowering, as Python's `str.lower()` (final sigma depends on context).
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    1.0 - levenshtein(&a, &b) as f64 / longer as f64
}

/// Counts sentences: runs of text ended by `.`, `!` or `?` (repeats such as `...`
/// or `?!` end one sentence) followed by whitespace or the end of the text. Text
/// after the last terminator counts as a sentence too.
pub fn count_sentences(text: &str) -> usize {
    let mut count = 0;
    let mut in_sentence = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '…') {
            while matches!(
                chars.peek(),
                Some('.' | '!' | '?' | '…' | '"' | '\'' | ')' | '”' | '’')
            ) {
                chars.next();
            }
            let at_boundary = chars.peek().is_none_or(|n| n.is_whitespace());
            if at_boundary && in_sentence {
                count += 1;
                in_sentence = false;
            }
        } else if !c.is_whitespace() {
            in_sentence = true;
        }
    }
    count + usize::from(in_sentence)
}

/// Python's `repr()` of a string, so feedback reads exactly like the seeds'
/// `f"Previous issues: {issues}"`.
pub fn python_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr()` of a list of strings.
pub fn python_repr_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let parts: Vec<String> = items.into_iter().map(python_repr_str).collect();
    format!("[{}]", parts.join(", "))
}

/// JSON text in Python's `json.dumps` default layout (`", "` and `": "`
/// separators, non-ASCII kept), as the seeds' prompts print it.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_python_json(value, &mut out);
    out
}

fn write_python_json(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_python_json(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Escapes one key for use in a JSON pointer (RFC 6901): `~` → `~0`, `/` → `~1`.
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// "a string", "an object", "null"... for messages about a JSON value's type.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first `max` characters of `s` (not bytes: never splits a character).
pub fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
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
    }

    #[test]
    fn python_repr_matches_python() {
        assert_eq!(
            python_repr_list(["Missing type1 example", "it's"]),
            "['Missing type1 example', \"it's\"]"
        );
        assert_eq!(python_repr_str("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(python_repr_list([]), "[]");
    }

    #[test]
    fn python_json_uses_spaced_separators() {
        let v: Value = serde_json::from_str(r#"{"kind":"x","n":[1,2],"m":{"a":null}}"#).unwrap();
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
}
