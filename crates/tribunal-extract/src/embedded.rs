//! The embedded tier: the first outermost balanced JSON document in prose that parses:
//! an object `{...}`, or an array `[...]` that holds an object.
//!
//! One pass over the bytes with an explicit stack of open brackets finds every balanced
//! span. Quotes start a JSON string only inside brackets (quotes in the surrounding prose
//! are ignored at depth 0), and inside a string brackets do not count and backslash
//! escapes are honoured. At depth 0, a `[` opens a document only when a letter does not
//! follow it, so prose in brackets (`[MOOD: calm]`, `[see below]`) is not one, while
//! `[{`, `["`, `[1`, `[...` are.
//!
//! An array is a document enclosing its objects: `[{"a": 1}, {"b": 2}]` is found as the
//! array, never as its first element, and an array that fails to parse hides the objects
//! inside it (the repair tier gets the whole of it). An array without any object inside
//! is not this tier's business (`see [1]` in prose).
//!
//! The spans are tried by start position, skipping any span that lies inside a span
//! already tried that failed. Balanced spans nest or are disjoint, so a span is only
//! ever tried if no balanced span encloses it: the spans tried are exactly the outermost
//! ones. The pass therefore keeps only those (dropping the spans a newly closed one
//! encloses), which leaves them sorted and disjoint: the total parsing work is at most
//! the length of the text, and the whole tier is linear.
//!
//! A `{` (or a document's `[`) never closed counts as a failed span running to the end
//! of the text, so it hides every span after it: in a truncated `{"a": {"b": 1}, "c": ...`
//! the complete inner object is not mistaken for the answer (the repair tier closes the
//! outer one instead).
//!
//! Balanced spans are found by a reading that a damaged document can fool (a doubled
//! quote turns its strings inside out), so a span is taken, or passed over when it fails
//! to parse, only when nothing puts its extent in doubt: not a value inside a structure
//! by what precedes it, not followed by what shows it was part of one, and, when it
//! failed, with an end that [`failed_span_end`](super::failed_span_end) confirms.
//! Otherwise the tier finds nothing, and the repair tier gets the text.

use super::MultipleValues;

/// The first outermost balanced document of the text (an object, or an array holding an
/// object) that parses.
#[cfg(test)]
fn extract(text: &str) -> Option<crate::json::Json> {
    extract_with(text, MultipleValues::First)
}

/// The first outermost balanced document of the text (an object, or an array holding an
/// object) that parses; with [`MultipleValues::Last`] or [`MultipleValues::All`]
/// a text with more than one document is left to the repair tier (`None`), which
/// reads them all: more than one balanced document, or after the one a further `{`
/// or `[` that starts like a document (cut short, or an array without objects).
pub fn extract_with<D: super::Document>(text: &str, multiple: MultipleValues) -> Option<D> {
    let spans = outermost_spans(text);
    if multiple != MultipleValues::First {
        let further =
            |&(_, end): &(usize, usize)| super::repair::next_document(text, end, &mut 0).is_some();
        if spans.len() > 1 || spans.first().is_some_and(further) {
            return None;
        }
    }
    // A span that is, by its surroundings, a value inside a structure, or that
    // failed where its end is in doubt, ends the search: what follows could be
    // its inner values (see the module's documentation).
    let bytes = text.as_bytes();
    for (start, end) in spans {
        if super::inside_a_structure(bytes, start) {
            return None;
        }
        if let Some(document) = super::parse_container(&text[start..end]) {
            return (!super::continues_after(bytes, end)).then_some(document);
        }
        if super::failed_span_end(bytes, start) != Some(end) {
            return None;
        }
    }
    None
}

/// An open bracket on the stack.
#[derive(Debug, Clone, Copy)]
struct Open {
    at: usize,
    byte: u8,
    /// An object was opened inside it (for an array: whether its span is a document).
    holds_object: bool,
}

/// Whether the `[` at `at` starts like JSON (or almost-JSON: `[...`, `['a'`, `[“a”`):
/// what follows it is not a letter.
fn starts_like_json(text: &[u8], at: usize) -> bool {
    text[at + 1..]
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|&n| !n.is_ascii_alphabetic())
}

/// The outermost balanced documents before the first one never closed, as byte ranges
/// `(start, end)`, sorted and disjoint.
fn outermost_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    // How many of each kind are open, so a closer with no opener of its kind is ignored
    // without searching the stack.
    let (mut braces, mut brackets) = (0usize, 0usize);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Prose between documents and the inside of strings are skipped to the next
        // byte that matters.
        if open.is_empty() {
            match memchr::memchr2(b'{', b'[', &bytes[i..]) {
                Some(offset) => i += offset,
                None => break,
            }
        }
        let (at, byte) = (i, bytes[i]);
        i += 1;
        match byte {
            b'{' => {
                braces += 1;
                open.push(Open {
                    at,
                    byte,
                    holds_object: true,
                });
            }
            // A whitespace run after `[` is scanned again only for the next `[`; at
            // depth 0 a run of `[ [ [` is at most twice the text.
            b'[' if !open.is_empty() || starts_like_json(bytes, at) => {
                brackets += 1;
                open.push(Open {
                    at,
                    byte,
                    holds_object: false,
                });
            }
            b'}' | b']' => {
                let (opener, count) = if byte == b'}' {
                    (b'{', braces)
                } else {
                    (b'[', brackets)
                };
                if count == 0 {
                    continue;
                }
                // Brackets left open inside are closed by this one (a mismatched
                // document, which then fails to parse as a whole).
                while let Some(top) = open.pop() {
                    if top.byte == b'{' {
                        braces -= 1;
                    } else {
                        brackets -= 1;
                    }
                    if let Some(parent) = open.last_mut() {
                        parent.holds_object |= top.holds_object;
                    }
                    if top.byte != opener {
                        continue;
                    }
                    if top.holds_object {
                        while spans.last().is_some_and(|&(inner, _)| inner > top.at) {
                            spans.pop();
                        }
                        spans.push((top.at, i));
                    }
                    break;
                }
            }
            // A string inside a document: brackets in it do not count, and a
            // backslash escapes the byte after it.
            b'"' => loop {
                match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                    Some(offset) if bytes[i + offset] == b'\\' => i += offset + 2,
                    Some(offset) => {
                        i += offset + 1;
                        break;
                    }
                    None => {
                        i = bytes.len();
                        break;
                    }
                }
                if i >= bytes.len() {
                    break;
                }
            },
            _ => {}
        }
    }
    if let Some(unclosed) = open.first() {
        spans.truncate(spans.partition_point(|&(start, _)| start < unclosed.at));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn seed_001() {
        let text =
            r#"Certainly! Here is the JSON: {"kind": "agent.spoke", "text": "I collect echoes."}"#;
        assert_eq!(
            extract(text),
            Some(json!({"kind": "agent.spoke", "text": "I collect echoes."}))
        );
    }

    #[test]
    fn seed_004_malformed() {
        assert_eq!(extract("I'm not sure what to do {partial json"), None);
    }

    #[test]
    fn pure_text() {
        assert_eq!(
            extract("The mushrooms charge admission to their bioluminescent shows."),
            None
        );
        assert_eq!(extract(""), None);
    }

    #[test]
    fn whole_text_object() {
        assert_eq!(extract("{\"a\": 1}"), Some(json!({"a": 1})));
    }

    #[test]
    fn trailing_prose() {
        let text = "Here: {\"a\": [1, 2]} and that's all, \"folks\".";
        assert_eq!(extract(text), Some(json!({"a": [1, 2]})));
    }

    #[test]
    fn braces_inside_strings_do_not_count() {
        let text = r#"Result: {"a": "x}y{"} done"#;
        assert_eq!(extract(text), Some(json!({"a": "x}y{"})));
        let text = r#"Result: {"a": "}}}", "b": "{{{"} done"#;
        assert_eq!(extract(text), Some(json!({"a": "}}}", "b": "{{{"})));
    }

    #[test]
    fn escaped_quotes_inside_strings() {
        let text = r#"x {"a": "say \"}\" now", "b": "\\"} y"#;
        assert_eq!(
            extract(text),
            Some(json!({"a": "say \"}\" now", "b": "\\"}))
        );
    }

    #[test]
    fn quotes_in_prose_are_ignored() {
        let text = r#"She said "look: {" and then {"a": 1}"#;
        // The first brace opens inside the prose quote, which is not tracked at depth 0;
        // its content then holds a quote that opens a string, so nothing closes.
        assert_eq!(extract(text), None);
        let text = r#"He said "here it is" {"a": 1} "ok""#;
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn first_parsing_span_wins() {
        let text = r#"{not json} then {"a": 1} then {"b": 2}"#;
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn failing_outer_span_hides_inner_spans() {
        let text = r#"{broken {"a": 1} still broken}"#;
        assert_eq!(extract(text), None);
        let text = r#"{broken {"a": 1} still broken} but {"b": 2}"#;
        assert_eq!(extract(text), Some(json!({"b": 2})));
    }

    #[test]
    fn unclosed_brace_hides_later_spans() {
        let text = r#"{"outer": {"inner": 1}"#;
        assert_eq!(extract(text), None);
        let text = r#"{"a": {"b": 1}, "c": [{"d": 2}], "e": "trunc"#;
        assert_eq!(extract(text), None);
        let text = r#"Note {see below. Here: {"a": 1}"#;
        assert_eq!(extract(text), None);
        let text = r#"First {"a": 1} then {"b": "#;
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn arrays_are_found_only_when_they_hold_an_object() {
        assert_eq!(extract("list: [1, 2, 3]"), None);
        assert_eq!(extract("see [1] and {\"a\": 1}"), Some(json!({"a": 1})));
        assert_eq!(extract("[MOOD: calm] {\"a\": 1}"), Some(json!({"a": 1})));
        assert_eq!(extract("[..., {\"a\": 1}] done"), None);
    }

    /// An array is the document enclosing its objects: never one of them as the whole.
    #[test]
    fn an_array_document_is_never_split_into_its_objects() {
        assert_eq!(
            extract("list: [{\"a\": 1}, {\"b\": 2}] done"),
            Some(json!([{"a": 1}, {"b": 2}]))
        );
        for text in [
            "list: [{\"a\": 1}, {\"b\": 2",
            "list: [{\"a\": 1}, {\"b\": 2}, oops]",
            "[{\"a\": 1}, {\"b\": 2}}",
            "x [[{\"a\": 1}], [1 2]] y",
            "{\"a\": [{\"b\": 1}, 2}",
        ] {
            assert_eq!(extract(text), None, "{text}");
        }
        // A failed array hides its objects, not a document after it.
        assert_eq!(
            extract("[{\"a\": 1} oops] then {\"b\": 2}"),
            Some(json!({"b": 2}))
        );
    }

    #[test]
    fn several_documents_are_left_to_repair_unless_the_first_is_wanted() {
        let text = r#"{"a": 1} and {"b": 2}"#;
        assert_eq!(extract(text), Some(json!({"a": 1})));
        assert_eq!(
            extract_with::<crate::json::Json>(text, MultipleValues::Last),
            None
        );
        assert_eq!(
            extract_with::<crate::json::Json>(text, MultipleValues::All),
            None
        );
        let text = r#"{"a": 1} and nothing else"#;
        assert_eq!(
            extract_with(text, MultipleValues::All),
            Some(json!({"a": 1}))
        );
    }

    #[test]
    fn spans_are_outermost_and_sorted() {
        let text = "{a{b}c} {d} {{e}";
        assert_eq!(outermost_spans(text), [(0, 7), (8, 11)]);
        assert_eq!(
            outermost_spans("{a{b}c} {d} {e}"),
            [(0, 7), (8, 11), (12, 15)]
        );
        assert_eq!(outermost_spans("}}{{"), []);
        assert_eq!(outermost_spans("{a} {b {c}"), [(0, 3)]);
        assert_eq!(outermost_spans("[{a}] [1] {b}"), [(0, 5), (10, 13)]);
        assert_eq!(outermost_spans("{a]} [x]"), [(0, 4)]);
    }

    #[test]
    fn unicode_around_and_inside() {
        let text = "🤔 voilà: {\"mood\": \"🤔\"} ✓";
        assert_eq!(extract(text), Some(json!({"mood": "🤔"})));
    }

    #[test]
    fn deep_nesting_fails_without_crashing() {
        assert_eq!(extract(&"{".repeat(100_000)), None);
        assert_eq!(extract(&"[".repeat(100_000)), None);
        let balanced = format!("{}{}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(extract(&balanced), None);
        let objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
        assert_eq!(extract(&objects), None);
    }

    #[test]
    fn deep_unclosed_prefix_hides_the_object() {
        let text = format!("{}{{\"a\": 1}}", "{".repeat(100_000));
        assert_eq!(extract(&text), None);
        let text = format!("{{\"a\": 1}}{}", "{".repeat(100_000));
        assert_eq!(extract(&text), Some(json!({"a": 1})));
    }

    #[test]
    fn ten_megabytes_of_braces() {
        let text = "{".repeat(10 * 1024 * 1024);
        assert_eq!(extract(&text), None);
        let closers = "}".repeat(10 * 1024 * 1024);
        assert_eq!(extract(&closers), None);
        let pairs = "{}".repeat(5 * 1024 * 1024);
        assert_eq!(extract(&pairs), Some(json!({})));
        let failing_pairs = "{x}".repeat(3 * 1024 * 1024);
        assert_eq!(extract(&failing_pairs), None);
    }
}
