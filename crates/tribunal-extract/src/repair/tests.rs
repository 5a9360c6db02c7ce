use super::lex::{fixed_number, number_shape, NumberShape};
use super::*;
use crate::json::json;

/// Repairs `text`, expecting success.
fn fixed(text: &str) -> (Json, Vec<Repair>) {
    repair(text).unwrap_or_else(|| panic!("no repair for {text:?}"))
}

#[track_caller]
fn check(text: &str, expected: &Json, repairs: &[Repair]) {
    let (value, made) = fixed(text);
    assert_eq!(&value, expected, "value for {text:?}");
    assert_eq!(made, repairs, "repairs for {text:?}");
}

use Repair::{
    ClosedBrackets, ClosedString, CommaSeparatedDocuments, Comments, ControlCharacters,
    DoubledQuotes, DroppedIncompleteMember, InvalidEscapes, JsonInString, Jsonp,
    MismatchedBrackets, MissingColon, MissingComma, MissingQuote, MongoShellTypes, NumberFormat,
    Placeholders, PythonLiterals, SingleQuotes, StringConcatenation, SurroundingText,
    TrailingComma, TypographicQuotes, UnescapedQuotes, UnicodeWhitespace, UnquotedKeys,
    UnquotedValues, UnterminatedString,
};
#[allow(non_upper_case_globals)]
const MultipleValuesRepair: Repair = Repair::MultipleValues;

#[test]
fn valid_json_needs_no_repair() {
    check(
        "{\"a\": [1, -2.5e3, true, null, \"x\"], \"b\": {}}",
        // Numbers are kept as written.
        &serde_json::from_str::<Json>(r#"{"a": [1, -2.5e3, true, null, "x"], "b": {}}"#).unwrap(),
        &[],
    );
    check("[1, 2]", &json!([1, 2]), &[]);
}

#[test]
fn trailing_commas() {
    check("{\"a\": 1,}", &json!({"a": 1}), &[TrailingComma]);
    check("[1, 2, ]", &json!([1, 2]), &[TrailingComma]);
    check(
        "{\"a\": [1,\n], \"b\": {\"c\": 2,},\n}",
        &json!({"a": [1], "b": {"c": 2}}),
        &[TrailingComma],
    );
}

#[test]
fn single_quotes() {
    check(
        r#"{'a': 'it\'s', 'b': 'say "hi"'}"#,
        &json!({"a": "it's", "b": "say \"hi\""}),
        &[SingleQuotes],
    );
    check(
        r"['a\nb', 'c\\d']",
        &json!(["a\nb", "c\\d"]),
        &[SingleQuotes],
    );
    check(r#"{'a': 'x\"y'}"#, &json!({"a": "x\"y"}), &[SingleQuotes]);
}

#[test]
fn apostrophes_inside_single_quoted_strings() {
    check(
        "{'text': 'it's fine'}",
        &json!({"text": "it's fine"}),
        &[SingleQuotes, UnescapedQuotes],
    );
}

#[test]
fn unquoted_keys() {
    check(
        "{a: 1, foo_bar: 2, $x: 3}",
        &json!({"a": 1, "foo_bar": 2, "$x": 3}),
        &[UnquotedKeys],
    );
    check("{ key : \"v\" }", &json!({"key": "v"}), &[UnquotedKeys]);
    check("{1: \"one\"}", &json!({"1": "one"}), &[UnquotedKeys]);
    check("{clé: 1}", &json!({"clé": 1}), &[UnquotedKeys]);
    check(
        "{user-id: 1, max-tokens: 2, a.b: 3}",
        &json!({"user-id": 1, "max-tokens": 2, "a.b": 3}),
        &[UnquotedKeys],
    );
}

#[test]
fn bare_key_must_be_followed_by_colon() {
    assert_eq!(repair("{a 1}"), None);
    assert_eq!(repair("{a, b}"), None);
    assert_eq!(repair("{partial json"), None);
    assert_eq!(repair("{partial"), None);
    assert_eq!(repair("{partial json}"), None);
}

#[test]
fn python_literals() {
    check(
        "{'a': True, 'b': False, 'c': None}",
        &json!({"a": true, "b": false, "c": null}),
        &[SingleQuotes, PythonLiterals],
    );
    check("[True, None]", &json!([true, null]), &[PythonLiterals]);
}

#[test]
fn bare_words_in_arrays_fail() {
    for text in [
        "[yes]",
        "[undefined]",
        "[TRUE]",
        "[truex]",
        "[MOOD: calm]",
        "[see below]",
    ] {
        assert_eq!(repair(text), None, "{text:?}");
    }
    check(
        "[NaN, Infinity, -Infinity]",
        &json!(["NaN", "Infinity", "-Infinity"]),
        &[UnquotedValues],
    );
}

#[test]
fn unquoted_values_run_to_the_next_comma_or_closer() {
    check(
        "{\"city\": New York, \"n\": 1}",
        &json!({"city": "New York", "n": 1}),
        &[UnquotedValues],
    );
    check(
        "{key: value}",
        &json!({"key": "value"}),
        &[UnquotedKeys, UnquotedValues],
    );
    check(
        "{\"a\": New York\n \"b\": done-ish}",
        &json!({"a": "New York", "b": "done-ish"}),
        &[MissingComma, UnquotedValues],
    );
    for (word, expected) in [
        ("yes", "yes"),
        ("undefined", "undefined"),
        ("NaN", "NaN"),
        ("-Infinity", "-Infinity"),
        ("TRUE", "TRUE"),
        ("10-20", "10-20"),
        ("1/3", "1/3"),
        ("0..5", "0..5"),
        ("x: y", "x: y"),
        ("it is \"quoted\"", "it is \"quoted\""),
        ("...", "..."),
    ] {
        check(
            &format!("{{\"a\": {word}, \"b\": [2]}}"),
            &json!({"a": expected, "b": [2]}),
            &[UnquotedValues],
        );
    }
    check("[10-20, 1/3]", &json!(["10-20", "1/3"]), &[UnquotedValues]);
    // Cut off by the end of the text: the value so far (a cut literal is dropped).
    check(
        "{\"a\": New Yo",
        &json!({"a": "New Yo"}),
        &[ClosedBrackets, UnquotedValues],
    );
    // Punctuation is not a value.
    assert_eq!(repair("{\"a\": @@}"), None);
    assert_eq!(repair("{\"a\": <unknown>}"), None);
}

#[test]
fn placeholders_are_removed_with_their_comma() {
    check("[1, 2, ...]", &json!([1, 2]), &[Placeholders]);
    check("[1, …, 5]", &json!([1, 5]), &[Placeholders]);
    check("[..., 1]", &json!([1]), &[Placeholders]);
    check("[...]", &json!([]), &[Placeholders]);
    check(
        "{\"a\": 1, \"b\": 2, ... }",
        &json!({"a": 1, "b": 2}),
        &[Placeholders],
    );
    check(
        "{\"items\": [{\"id\": 1}, ...], …}",
        &json!({"items": [{"id": 1}]}),
        &[Placeholders],
    );
    check(
        "[1, 2, ...",
        &json!([1, 2]),
        &[ClosedBrackets, Placeholders],
    );
}

#[test]
fn a_wrong_closer_closes_the_innermost_container() {
    check("[\"a\", \"b\"}", &json!(["a", "b"]), &[MismatchedBrackets]);
    check(
        "[{\"k\": \"v\"], {\"k\": 2}]",
        &json!([{"k": "v"}, {"k": 2}]),
        &[MismatchedBrackets],
    );
    check(
        "{\"a\": [1, 2}, \"b\": 3}",
        &json!({"a": [1, 2], "b": 3}),
        &[MismatchedBrackets],
    );
    check(
        "{\"a\": [1, 2}",
        &json!({"a": [1, 2]}),
        &[ClosedBrackets, MismatchedBrackets],
    );
    check("{\"a\": 1]", &json!({"a": 1}), &[MismatchedBrackets]);
    // A closer after the document, with nothing open to close, is text around it.
    check("[1,]}", &json!([1]), &[TrailingComma, SurroundingText]);
}

#[test]
fn typographic_quotes_delimit_strings() {
    check(
        "{“a”: “b”, ‘c’: ‘it’s’}",
        &json!({"a": "b", "c": "it’s"}),
        &[UnescapedQuotes, TypographicQuotes],
    );
    check(
        "{“a”: \"he said “hi”\"}",
        &json!({"a": "he said “hi”"}),
        &[TypographicQuotes],
    );
    check("[“x \"y\" z”]", &json!(["x \"y\" z"]), &[TypographicQuotes]);
}

#[test]
fn numbers_as_models_write_them() {
    check(
        "[.25, -.5, 1., +1, 1e, 2E+, 0.5e-]",
        &serde_json::from_str::<Json>("[0.25, -0.5, 1.0, 1, 1, 2, 0.5]").unwrap(),
        &[NumberFormat],
    );
    check(
        "{\"a\": 1.5e",
        &json!({"a": 1.5}),
        &[ClosedBrackets, NumberFormat],
    );
    assert_eq!(fixed_number(b"01"), None);
    assert_eq!(fixed_number(b"-"), None);
    assert_eq!(fixed_number(b"."), None);
    assert_eq!(fixed_number(b"1-2").as_deref(), None);
    assert_eq!(fixed_number(b"+.5e+3").as_deref(), Some("0.5e+3"));
}

#[test]
fn a_missing_closing_quote_before_the_next_key() {
    check(
        "{\"a\": \"unterminated, \"b\": 2}",
        &json!({"a": "unterminated", "b": 2}),
        &[MissingQuote],
    );
    // A comma and a quoted word that is not a key: the quote is inside.
    check(
        "{\"a\": \"He said, \"hi\" there\"}",
        &json!({"a": "He said, \"hi\" there"}),
        &[UnescapedQuotes],
    );
}

#[test]
fn mongo_shell_types_become_their_values() {
    check(
        r#"{"_id": ObjectId("5f1d7a2b9c1e4a3b2c1d0e9f"), "at": ISODate("2024-05-01T10:00:00Z"), "n": NumberLong(42), "m": NumberInt("7"), "d": NumberDecimal("1.25"), "when": new Date("2024-05-02")}"#,
        &json!({"_id": "5f1d7a2b9c1e4a3b2c1d0e9f", "at": "2024-05-01T10:00:00Z", "n": 42, "m": 7, "d": 1.25, "when": "2024-05-02"}),
        &[MongoShellTypes],
    );
    check(
        "[ObjectId('a1'), NumberLong( -3 )]",
        &json!(["a1", -3]),
        &[MongoShellTypes],
    );
    // Not a shell type, or not one argument it can take: as before.
    check(
        r#"{"a": Foo("x")}"#,
        &json!({"a": "Foo(\"x\")"}),
        &[UnquotedValues],
    );
    check(
        r#"{"n": NumberLong("many")}"#,
        &json!({"n": "NumberLong(\"many\")"}),
        &[UnquotedValues],
    );
    assert!(repair("[ObjectId(x)]").is_none());
}

#[test]
fn a_jsonp_call_is_read_from_its_arguments() {
    check(r#"callback({"a": 1});"#, &json!({"a": 1}), &[Jsonp]);
    check(
        "/**/ jQuery3_1.cb_2( [{\"a\": [1, 2]}] ) ;\n",
        &json!([{"a": [1, 2]}]),
        &[Jsonp],
    );
    // Damaged inside: its repairs are listed with it.
    check(
        "cb({'a': True, })",
        &json!({"a": true}),
        &[TrailingComma, SingleQuotes, PythonLiterals, Jsonp],
    );
    // A call in prose, cut off, or of something else is not JSONP.
    check(
        r#"search({"q": "x"}) is the call"#,
        &json!({"q": "x"}),
        &[SurroundingText],
    );
    check(
        r#"cb({"a": 1"#,
        &json!({"a": 1}),
        &[ClosedBrackets, SurroundingText],
    );
    for text in [r#"1cb({"a": 1})"#, r#"cb("a")"#, r#"a b({"a": 1})"#, "cb()"] {
        assert!(super::jsonp_body(text).is_none(), "{text}");
    }
}

#[test]
fn a_json_string_holding_the_document_is_read_from_it() {
    check(
        r#""{\"event\": \"agent:status\", \"data\": {\"a\": [1, 2]}}""#,
        &json!({"event": "agent:status", "data": {"a": [1, 2]}}),
        &[JsonInString],
    );
    // Damaged inside too: its repairs are listed with it.
    check(
        r#"  "{'a': 1, \"b\": [true,],}"  "#,
        &json!({"a": 1, "b": [true]}),
        &[TrailingComma, SingleQuotes, JsonInString],
    );
    // Encoded twice over.
    check(r#""\"[1, 2]\"""#, &json!([1, 2]), &[JsonInString]);
    // A string that is not a document, or more text around the string.
    assert!(repair(r#""just text""#).is_none());
    assert!(repair(r#""{not json at all"#).is_none());
}

#[test]
fn doubled_quotes() {
    check(
        "{\"a\": \"\"hello\"\", \"b\": \"\"}",
        &json!({"a": "hello", "b": ""}),
        &[DoubledQuotes],
    );
}

#[test]
fn a_key_without_a_value_is_dropped() {
    for text in [
        "{\"a\": 1, \"b\"}",
        "{\"a\": 1, \"b\":}",
        "{\"a\": 1, \"b\": }",
    ] {
        check(text, &json!({"a": 1}), &[DroppedIncompleteMember]);
    }
}

#[test]
fn a_cut_string_loses_its_trailing_spaces() {
    check(
        "{\"a\": \"abc   ",
        &json!({"a": "abc"}),
        &[ClosedString, ClosedBrackets],
    );
    check(
        "[\"a b\", \"   ",
        &json!(["a b", ""]),
        &[ClosedString, ClosedBrackets],
    );
}

#[test]
fn ndjson_is_an_array_of_its_lines_under_all() {
    let text = "{\"id\": 1, \"ok\": true}\n{\"id\": 2, \"ok\": false}\n{\"id\": 3, \"ok\": true}\n";
    assert_eq!(
        repair_with(text, MultipleValues::All),
        Some((
            json!([{"id": 1, "ok": true}, {"id": 2, "ok": false}, {"id": 3, "ok": true}]),
            vec![MultipleValuesRepair]
        ))
    );
    assert_eq!(
        repair_with(text, MultipleValues::Last),
        Some((json!({"id": 3, "ok": true}), vec![MultipleValuesRepair]))
    );
}

#[test]
fn concatenated_strings_are_one_string() {
    check(
        r#"{"x": "a" + "b"}"#,
        &json!({"x": "ab"}),
        &[StringConcatenation],
    );
    check(
        "{\"x\": \"ab\" +\n  \"cd\" + 'ef', \"y\": 1}",
        &json!({"x": "abcdef", "y": 1}),
        &[SingleQuotes, StringConcatenation],
    );
    check(
        r#"["a" + "b", "c"]"#,
        &json!(["ab", "c"]),
        &[StringConcatenation],
    );
    // Cut off after the `+`, or inside the next string.
    check(
        r#"{"x": "a" + "b"#,
        &json!({"x": "ab"}),
        &[ClosedString, ClosedBrackets, StringConcatenation],
    );
    // A `+` inside a string, or before something that is not a string, is not one.
    check(r#"{"x": "a + b"}"#, &json!({"x": "a + b"}), &[]);
    assert!(repair(r#"{"x": "a" + 1}"#).is_none());
}

#[test]
fn a_string_without_its_closing_quote_before_the_next_item() {
    check(
        r#"["a", "b, "c"]"#,
        &json!(["a", "b", "c"]),
        &[MissingQuote],
    );
    check(
        r#"{"tags": ["red, "green", "blue"]}"#,
        &json!({"tags": ["red", "green", "blue"]}),
        &[MissingQuote],
    );
    // A quote after a comma that does not start an item stays in the string.
    check(
        r#"["He said, "hi" there"]"#,
        &json!(["He said, \"hi\" there"]),
        &[UnescapedQuotes],
    );
}

#[test]
fn a_string_left_open_before_the_last_closers_ends_before_them() {
    check(
        r#"["one", "two, three", "four]"#,
        &json!(["one", "two, three", "four"]),
        &[UnterminatedString],
    );
    check(
        r#"{"a": ["x", "y]}"#,
        &json!({"a": ["x", "y"]}),
        &[UnterminatedString],
    );
    check(
        "{\"a\": [\"x\", \"y ]\n}\n",
        &json!({"a": ["x", "y"]}),
        &[UnterminatedString],
    );
    check(
        r#"{"note": "done}"#,
        &json!({"note": "done"}),
        &[UnterminatedString],
    );
    // Closing only the innermost: the rest is closed as a cut document.
    check(
        r#"{"a": ["x", "y]"#,
        &json!({"a": ["x", "y"]}),
        &[ClosedBrackets, UnterminatedString],
    );
    // Closers that do not match the open containers are the string's.
    check(
        r#"["x", "y}"#,
        &json!(["x", "y}"]),
        &[ClosedString, ClosedBrackets],
    );
}

#[test]
fn several_top_level_documents() {
    let text = "{\"a\": 1}{'b': 2} and then [3]";
    let take = |multiple| repair_with(text, multiple).unwrap();
    assert_eq!(
        take(MultipleValues::First),
        (json!({"a": 1}), vec![MultipleValuesRepair])
    );
    assert_eq!(
        take(MultipleValues::Last),
        (json!([3]), vec![MultipleValuesRepair])
    );
    assert_eq!(
        take(MultipleValues::All),
        (
            json!([{"a": 1}, {"b": 2}, [3]]),
            vec![SingleQuotes, MultipleValuesRepair]
        )
    );
    // One document is itself, whatever the choice; prose after it is not another
    // (it is text around it).
    for (text, repairs) in [
        ("{\"a\": 1} hope that helps {", vec![SurroundingText]),
        ("{\"a\": 1} {x}", vec![SurroundingText]),
        ("{\"a\": 1}", vec![]),
    ] {
        for multiple in [
            MultipleValues::First,
            MultipleValues::Last,
            MultipleValues::All,
        ] {
            assert_eq!(
                repair_with(text, multiple),
                Some((json!({"a": 1}), repairs.clone()))
            );
        }
    }
    // A later document cut short still counts.
    assert_eq!(
        repair_with("{\"a\": 1}\n{\"b\": 2, \"c", MultipleValues::All),
        Some((
            json!([{"a": 1}, {"b": 2}]),
            vec![
                ClosedBrackets,
                DroppedIncompleteMember,
                MultipleValuesRepair
            ]
        ))
    );
}

/// The rewriter's work (bytes read, looked at ahead, written and parsed again,
/// counted by `repair_counted`) is at most a constant times the length of the
/// text, and grows in proportion with it, on inputs built to make a careless
/// repairer quadratic. Work is counted, not timed, so a loaded machine cannot
/// make this flaky.
#[test]
fn work_is_linear_in_the_length_of_adversarial_inputs() {
    let patterns: &[(&str, &str, &str)] = &[
        ("", "[", ""),
        ("", "{", ""),
        ("", "{\"a\":", ""),
        ("", "{a:[", ""),
        ("{\"a\": \"", "\"", ""),
        ("[", "\"", "]"),
        ("{\"a\": \"x, ", "\"b ", ""),
        ("{\"a\": \"", "x\" ", "}"),
        ("{\"a\": \"", "x, \"b\": ", ""),
        ("[", "..., ", "]"),
        ("[", ".", "]"),
        ("{\"a\": ", "...", "}"),
        ("", "{}", ""),
        ("", "{\"a\": 1} x ", ""),
        ("", "[1]", ""),
        ("{\"a\": 1}", "{ ", ""),
        ("{\"a\": 1}", "[ ", ""),
        ("{\"a\": 1}", "{x} ", ""),
        ("{\"a\": ", "b", "}"),
        ("{\"a\": ", "1", "x}"),
        ("[", "1e", "]"),
        ("", "“", ""),
        ("{", "“a”: “b”, ", "}"),
        ("", "/*", ""),
        ("[", "1 ", "]"),
        ("[", "{\"a\": [1}, ", "]"),
        ("", "{\"a\": 1, \"b\"}", ""),
    ];
    let work = |prefix: &str, unit: &str, suffix: &str, n: usize| {
        let text = format!("{prefix}{}{suffix}", unit.repeat(n));
        let mut steps = 0;
        let _ = repair_counted(&text, MultipleValues::All, &mut steps);
        (steps, text.len())
    };
    for &(prefix, unit, suffix) in patterns {
        let n = (256 * 1024) / unit.len();
        let (small, _) = work(prefix, unit, suffix, n);
        let (large, length) = work(prefix, unit, suffix, 4 * n);
        assert!(
            large <= 16 * length + 1024,
            "{prefix:?} + {unit:?} x {} + {suffix:?}: {large} steps for {length} bytes",
            4 * n
        );
        assert!(
            large <= 5 * small + 1024,
            "{prefix:?} + {unit:?}: {small} steps for n, {large} for 4n"
        );
    }
}

#[test]
fn comments() {
    check(
        "{\n  // the answer\n  \"a\": 1, /* inline */ \"b\": 2 # python style\n}",
        &json!({"a": 1, "b": 2}),
        &[Comments],
    );
    check("[1 /* unclosed", &json!([1]), &[Comments, ClosedBrackets]);
    check(
        "{\"url\": \"http://x/#y\"}",
        &json!({"url": "http://x/#y"}),
        &[],
    );
    assert_eq!(repair("[1 / 2]"), None);
}

#[test]
fn missing_commas() {
    check(
        "{\"a\": 1\n \"b\": 2}",
        &json!({"a": 1, "b": 2}),
        &[MissingComma],
    );
    check("[1 2 [3] {}]", &json!([1, 2, [3], {}]), &[MissingComma]);
}

#[test]
fn unescaped_inner_quotes() {
    check(
        r#"{"text": "He said "hi" to me", "n": 1}"#,
        &json!({"text": "He said \"hi\" to me", "n": 1}),
        &[UnescapedQuotes],
    );
}

#[test]
fn inner_quotes_before_punctuation_or_the_closing_quote() {
    for (text, expected) in [
        // Followed by punctuation that cannot follow a string.
        (
            r#"{"t": "she said "no".", "n": 1}"#,
            json!({"t": "she said \"no\".", "n": 1}),
        ),
        (r#"{"t": "say "hi"!"}"#, json!({"t": "say \"hi\"!"})),
        // Followed by the quote that ends the string.
        (
            r#"{"t": "called "Ada"", "n": 1}"#,
            json!({"t": "called \"Ada\"", "n": 1}),
        ),
        (r#"["x "y"", "z"]"#, json!(["x \"y\"", "z"])),
        (r#"{"id": "gamma""}"#, json!({"id": "gamma\""})),
        // A value that starts with a quoted word is not in doubled quotes.
        (
            r#"{"t": ""quoted" first"}"#,
            json!({"t": "\"quoted\" first"}),
        ),
    ] {
        check(text, &expected, &[UnescapedQuotes]);
    }
    // What may follow a string still ends it: a comma, a closer, a comment, `+`.
    check("{\"a\": \"x\" // note\n}", &json!({"a": "x"}), &[Comments]);
    check(r#"{"a": "x", "b": "y"}"#, &json!({"a": "x", "b": "y"}), &[]);
}

#[test]
fn a_missing_colon_before_a_string_value() {
    check(
        r#"{"a" "x", "b": 1}"#,
        &json!({"a": "x", "b": 1}),
        &[MissingColon],
    );
    check(
        r#"{"a" "x" "b" "y"}"#,
        &json!({"a": "x", "b": "y"}),
        &[MissingComma, MissingColon],
    );
    // Only a string is taken for the value, and not one that is a key itself.
    assert_eq!(repair(r#"{"a" 1}"#), None);
    assert_eq!(repair(r#"{"a" "b": 1}"#), None);
}

#[test]
fn unicode_whitespace_between_tokens() {
    check(
        "{\u{a0}\"a\":\u{3000} [1,\u{200b}2],\u{feff} \"b\":\u{202f} true\u{2003}}",
        &json!({"a": [1, 2], "b": true}),
        &[UnicodeWhitespace],
    );
    // Inside a string it is text.
    check("[\"a\u{a0}b\"]", &json!(["a\u{a0}b"]), &[]);
}

#[test]
fn documents_separated_by_commas_are_an_array() {
    for multiple in [
        MultipleValues::First,
        MultipleValues::Last,
        MultipleValues::All,
    ] {
        for text in ["{\"a\": 1},\n{\"b\": 2}", "{\"a\": 1}, {\"b\": 2}]"] {
            assert_eq!(
                repair_with(text, multiple),
                Some((json!([{"a": 1}, {"b": 2}]), vec![CommaSeparatedDocuments])),
                "{text:?} ({multiple:?})"
            );
        }
    }
    check(
        "[1], [2, 3], {'c': 4}",
        &json!([[1], [2, 3], {"c": 4}]),
        &[SingleQuotes, CommaSeparatedDocuments],
    );
    check(
        "{\"a\": 1},\n{\"b\": 2},\n",
        &json!([{"a": 1}, {"b": 2}]),
        &[TrailingComma, CommaSeparatedDocuments],
    );
    // One document followed by a comma is still an element of something else.
    assert_eq!(repair("{\"a\": 1}, "), None);
    assert_eq!(repair("{\"a\": 1}, {\"b\": 2}, x"), None);
}

#[test]
fn inner_quote_guesses_that_run_to_the_end_fail() {
    assert_eq!(repair(r#"{"a": "x" 1}"#), None);
    assert_eq!(repair(r#"{"text": "He said "hi"#), None);
    // Keys never guess.
    assert_eq!(repair(r#"{"a" 1}"#), None);
    assert_eq!(repair(r#"{"a "b": 1}"#), None);
}

#[test]
fn invalid_escapes() {
    check(
        r#"{"a": "it\'s"}"#,
        &json!({"a": "it's"}),
        &[InvalidEscapes],
    );
    check(
        r#"{"a": "C:\dir"}"#,
        &json!({"a": "C:\\dir"}),
        &[InvalidEscapes],
    );
    check(
        r#"{"a": "\x41"}"#,
        &json!({"a": "\\x41"}),
        &[InvalidEscapes],
    );
    check(
        r#"{"a": "\u12G4"}"#,
        &json!({"a": "\\u12G4"}),
        &[InvalidEscapes],
    );
    check(
        r#"{"a": "\ud83d!", "b": "\udc00"}"#,
        &json!({"a": "\u{fffd}!", "b": "\u{fffd}"}),
        &[InvalidEscapes],
    );
    check(
        r#"{"a": "\ud83e\udd14 \u00e9"}"#,
        &json!({"a": "🤔 é"}),
        &[],
    );
}

#[test]
fn control_characters_in_strings() {
    check(
        "{\"a\": \"line one\nline two\ttabbed\r\u{1}\"}",
        &json!({"a": "line one\nline two\ttabbed\r\u{1}"}),
        &[ControlCharacters],
    );
}

#[test]
fn truncated_value_string_is_closed() {
    check(
        "{\"thought\": \"I was thinking abo",
        &json!({"thought": "I was thinking abo"}),
        &[ClosedString, ClosedBrackets],
    );
    check(
        "[\"a\", \"b",
        &json!(["a", "b"]),
        &[ClosedString, ClosedBrackets],
    );
}

#[test]
fn truncated_inside_an_escape() {
    check(
        "{\"a\": \"x\\",
        &json!({"a": "x"}),
        &[ClosedString, ClosedBrackets],
    );
    check(
        "{\"a\": \"x\\u00",
        &json!({"a": "x"}),
        &[ClosedString, ClosedBrackets],
    );
    check(
        "{\"a\": \"x\\ud83d",
        &json!({"a": "x"}),
        &[ClosedString, ClosedBrackets],
    );
    check(
        "{\"a\": \"x\\ud83d\\ud",
        &json!({"a": "x"}),
        &[ClosedString, ClosedBrackets],
    );
}

#[test]
fn truncated_at_every_point() {
    let full = "{\"a\": [1, 2.5, true], \"b\": {\"c\": \"text\", \"d\": null}, \"e\": -3e2}";
    let expected: Json =
        serde_json::from_str(r#"{"a": [1, 2.5, true], "b": {"c": "text", "d": null}, "e": -3e2}"#)
            .unwrap();
    assert_eq!(fixed(full), (expected.clone(), vec![]));
    for end in 1..full.len() {
        let (value, repairs) = fixed(&full[..end]);
        assert!(!repairs.is_empty(), "prefix {:?}", &full[..end]);
        assert!(
            repairs.contains(&ClosedBrackets),
            "prefix {:?}",
            &full[..end]
        );
        // Every member that survives is a prefix of the full document's member.
        let object = value.as_object().unwrap();
        for (key, member) in object {
            assert!(
                expected.get(key).is_some(),
                "key {key:?} of {:?}",
                &full[..end]
            );
            if key != "e" && member.is_number() {
                assert_eq!(member, &expected[key.as_str()]);
            }
        }
    }
}

#[test]
fn truncated_members_are_dropped() {
    let cases: [(&str, Json); 9] = [
        ("{\"a\": 1, \"b\"", json!({"a": 1})),
        ("{\"a\": 1, \"b\":", json!({"a": 1})),
        ("{\"a\": 1, \"b\": ", json!({"a": 1})),
        ("{\"a\": 1, \"b", json!({"a": 1})),
        ("{\"a\": 1,", json!({"a": 1})),
        ("{\"a\": tru", json!({})),
        ("{\"a\": 1, \"b\": Fal", json!({"a": 1})),
        ("[1, -", json!([1])),
        ("{\"a\": 1, bee", json!({"a": 1})),
    ];
    for (text, expected) in cases {
        check(text, &expected, &[ClosedBrackets, DroppedIncompleteMember]);
    }
}

#[test]
fn truncated_numbers_keep_their_complete_part() {
    for (text, expected) in [
        ("[1, 2.", "[1, 2.0]"),
        ("[1, 2e", "[1, 2]"),
        ("[1, -2.5e+", "[1, -2.5]"),
    ] {
        let expected: Json = serde_json::from_str(expected).unwrap();
        check(text, &expected, &[ClosedBrackets, NumberFormat]);
    }
}

#[test]
fn truncated_complete_tokens_are_kept() {
    check("[1, 23", &json!([1, 23]), &[ClosedBrackets]);
    check("{\"a\": true", &json!({"a": true}), &[ClosedBrackets]);
    check(
        "{\"a\": None",
        &json!({"a": null}),
        &[PythonLiterals, ClosedBrackets],
    );
    check("{\"a\": [", &json!({"a": []}), &[ClosedBrackets]);
    check(
        "{\"a\": {\"b\": [1, {\"c\"",
        &json!({"a": {"b": [1, {}]}}),
        &[ClosedBrackets, DroppedIncompleteMember],
    );
    check("[", &json!([]), &[ClosedBrackets]);
}

#[test]
fn nested_truncation_closes_in_reverse_order() {
    check(
        "{\"a\": [{\"b\": [\"c",
        &json!({"a": [{"b": ["c"]}]}),
        &[ClosedString, ClosedBrackets],
    );
}

#[test]
fn trailing_prose_is_left_out() {
    check(
        "{'a': 1} and that's my answer {",
        &json!({"a": 1}),
        &[SingleQuotes, SurroundingText],
    );
    check(
        "Sure! [1, 2,] Hope it helps.",
        &json!([1, 2]),
        &[TrailingComma, SurroundingText],
    );
    // Prose around a document that needed nothing else is still named.
    check(
        "The scores: [1, 2, 3].",
        &json!([1, 2, 3]),
        &[SurroundingText],
    );
    check("[1, 2]\n```", &json!([1, 2]), &[SurroundingText]);
    check("{\"a\": 1}}", &json!({"a": 1}), &[SurroundingText]);
    // Comments around it are comments; whitespace is nothing, but for the
    // zero-width space, which JSON does not take as whitespace.
    check("// the list\n[1, 2] /* end */", &json!([1, 2]), &[Comments]);
    check("\u{feff} \u{a0}[1, 2]\n\u{3000}", &json!([1, 2]), &[]);
    check("\u{200b}[1, 2]", &json!([1, 2]), &[UnicodeWhitespace]);
}

#[test]
fn fence_content_is_the_first_candidate() {
    check(
        "Here you go {not this}:\n```json\n{'a': 1,}\n```\nDone {x}.",
        &json!({"a": 1}),
        &[TrailingComma, SingleQuotes, SurroundingText],
    );
}

#[test]
fn unclosed_fence_at_the_end() {
    check(
        "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thin",
        &json!({"eval": null, "thought": "thin"}),
        &[ClosedString, ClosedBrackets, SurroundingText],
    );
}

#[test]
fn fence_end_is_the_end_of_the_candidate() {
    check(
        "```json\n{\"a\": 1, \"b\":\n```\nThat was cut.",
        &json!({"a": 1}),
        &[ClosedBrackets, DroppedIncompleteMember, SurroundingText],
    );
}

#[test]
fn a_damaged_document_never_yields_its_inner_values() {
    // The shapes issue 46 found, each once returned an inner object as the
    // whole (listing only `multiple_values`); now the whole is repaired, or
    // nothing is returned.
    for text in [
        // An unquoted word in a nested array.
        r#"{"id": 1, "tags": [plain, "Zoë"], "meta": {"a": 1}, "more": {"b": 2}}"#,
        // An object in an array that lost its closing brace.
        r#"{"items": [{"a": 1, {"b": 2}, {"c": 3}], "n": 2}"#,
        // A doubled quote after a value.
        r#"{"id": "gamma"", "meta": {"a": 1}, "more": {"b": 2}}"#,
        // A stray character before a colon or a comma.
        r#"{"id"x: 1, "meta": {"a": 1}, "more": {"b": 2}}"#,
        r#"{"id": 1x, "meta": {"a": "}"}, "more": {"b": 2}}"#,
        // The document's own opener lost.
        r#""meta": {"a": 1}, "more": {"b": 2}}"#,
        r#"{"a": 1}, {"b": 2}]"#,
        "{\"a\": [1]}]",
        // A stray closer where a value should be.
        r#"{"n": 0, "meta": ]{"b": 2, "c": {"a": 1}}}"#,
        // A "comment" that swallows a member's opening brace.
        "{\n  #\"meta\": {\n    \"a\": 1\n  }\n}",
    ] {
        for multiple in [
            MultipleValues::First,
            MultipleValues::Last,
            MultipleValues::All,
        ] {
            if let Some((value, repairs)) = repair_with(text, multiple) {
                let inner = [json!({"a": 1}), json!({"b": 2}), json!({"c": 3})];
                assert!(
                    !inner.contains(&value) && !repairs.contains(&MultipleValuesRepair),
                    "{text:?} ({multiple:?}) gave {value} {repairs:?}"
                );
            }
        }
    }
}

#[test]
fn later_starts_are_tried() {
    check(
        "Use {braces} like this: {'a': 1}",
        &json!({"a": 1}),
        &[SingleQuotes, SurroundingText],
    );
    let eight_failures = "{x} ".repeat(MAX_ATTEMPTS);
    assert_eq!(repair(&format!("{eight_failures}{{'a': 1}}")), None);
    let seven_failures = "{x} ".repeat(MAX_ATTEMPTS - 1);
    check(
        &format!("{seven_failures}{{'a': 1}}"),
        &json!({"a": 1}),
        &[SingleQuotes, SurroundingText],
    );
}

#[test]
fn seed_004_malformed_and_prose() {
    assert_eq!(repair("I'm not sure what to do {partial json"), None);
    assert_eq!(
        repair("The mushrooms charge admission to their bioluminescent shows."),
        None
    );
    assert_eq!(repair(""), None);
    assert_eq!(repair("He said \"hello\" and 'bye'."), None);
}

#[test]
fn what_cannot_be_repaired_fails() {
    assert_eq!(repair("{\"a\" 1}"), None);
    assert_eq!(repair("{,}"), None);
    assert_eq!(repair("[1,,2]"), None);
    assert_eq!(repair("{\"a\": 1 : 2}"), None);
}

#[test]
fn every_repair_at_once() {
    let text = "```json\n{\n  // note\n  thought: 'it\\'s \"odd\"',\n  ok: True,\n  list: [1, 2,],\n  \"quote\": \"a \"b\" c\" \"esc\": \"\\q\",\n  \"raw\": \"x\ny\",\n  \"cut\": \"abc";
    let (value, repairs) = fixed(text);
    assert_eq!(
        value,
        json!({
            "thought": "it's \"odd\"",
            "ok": true,
            "list": [1, 2],
            "quote": "a \"b\" c",
            "esc": "\\q",
            "raw": "x\ny",
            "cut": "abc"
        })
    );
    assert_eq!(
        repairs,
        [
            TrailingComma,
            SingleQuotes,
            UnquotedKeys,
            PythonLiterals,
            Comments,
            ClosedString,
            ClosedBrackets,
            MissingComma,
            UnescapedQuotes,
            InvalidEscapes,
            ControlCharacters,
            SurroundingText,
        ]
    );
}

#[test]
fn number_shapes() {
    for complete in ["0", "-0", "12", "1.5", "-1.5e10", "2E-3", "0.0"] {
        assert_eq!(
            number_shape(complete.as_bytes()),
            NumberShape::Complete,
            "{complete}"
        );
    }
    for prefix in ["-", "1.", "1e", "1e+", "-0."] {
        assert_eq!(
            number_shape(prefix.as_bytes()),
            NumberShape::Prefix,
            "{prefix}"
        );
    }
    for invalid in ["01", "1..2", "+1", "1e5.0", "--1", ".5", "1-2"] {
        assert_eq!(
            number_shape(invalid.as_bytes()),
            NumberShape::Invalid,
            "{invalid}"
        );
    }
}

#[test]
fn unicode_is_preserved() {
    check(
        "{'mood': '🤔', 'jp': '日本語'",
        &json!({"mood": "🤔", "jp": "日本語"}),
        &[SingleQuotes, ClosedBrackets],
    );
}

#[test]
fn depth_limit_matches_serde_json() {
    let depth_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    assert!(serde_json::from_str::<Json>(&depth_ok).is_ok());
    check(&depth_ok, &serde_json::from_str(&depth_ok).unwrap(), &[]);
    let truncated = "[".repeat(127);
    assert_eq!(fixed(&truncated).1, [ClosedBrackets]);
    let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
    assert!(serde_json::from_str::<Json>(&too_deep).is_err());
    assert_eq!(repair(&too_deep), None);
}

#[test]
fn deep_nesting_fails_without_crashing() {
    assert_eq!(repair(&"[".repeat(100_000)), None);
    assert_eq!(repair(&"{".repeat(100_000)), None);
    assert_eq!(repair(&"{\"a\":".repeat(100_000)), None);
    assert_eq!(repair(&"{a:[".repeat(100_000)), None);
    let balanced = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(repair(&balanced), None);
    let fenced = format!("```json\n{}\n```", "[{'a':".repeat(100_000));
    assert_eq!(repair(&fenced), None);
}

#[test]
fn ten_megabytes_of_braces() {
    let text = "{".repeat(10 * 1024 * 1024);
    assert_eq!(repair(&text), None);
    let text = "[".repeat(10 * 1024 * 1024);
    assert_eq!(repair(&text), None);
    let text = format!("{{\"a\": \"{}", "{".repeat(10 * 1024 * 1024));
    let (value, repairs) = fixed(&text);
    assert_eq!(value["a"].as_str().unwrap().len(), 10 * 1024 * 1024);
    assert_eq!(repairs, [ClosedString, ClosedBrackets]);
}

/// The rewriter's output, end, repairs and verdict for `source`, copying
/// strings' plain content a run at a time or byte by byte.
fn rewritten(source: &str, plain_runs: bool) -> (Vec<u8>, usize, RepairSet, bool, usize) {
    let mut rewriter = Rewriter::new(source);
    rewriter.plain_runs = plain_runs;
    let ran = rewriter.run().is_ok();
    (
        rewriter.out,
        rewriter.pos,
        rewriter.repairs,
        ran,
        rewriter.steps,
    )
}

#[test]
fn strings_copied_a_run_at_a_time_are_those_copied_byte_by_byte() {
    // Contents dense with what a string's end turns on (quotes of every kind,
    // commas then spaces or a key, escapes, control bytes, brackets), in every
    // place a string can be: a key, an object's or an array's value, quoted
    // each way, closed or cut off.
    const PIECES: &[&str] = &[
        "a",
        "word",
        " ",
        "  ",
        ",",
        ", ",
        ",\"b\": 1",
        ", 'c': ",
        "\"",
        "'",
        "\\\"",
        "\\n",
        "\\u00e9",
        "\\",
        "\n",
        "\t",
        "\u{1}",
        "“",
        "”",
        "‘",
        "’",
        "é",
        "{",
        "}",
        "[",
        "]",
        ":",
        "\"\"",
        "+ \"x\"",
        "...",
        "…",
        "TODO",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % n as u64).unwrap()
    };
    let mut compared = 0;
    for _ in 0..4000 {
        let content: String = (0..next(12)).map(|_| PIECES[next(PIECES.len())]).collect();
        let documents = [
            format!("{{\"k\": \"{content}\", \"n\": 1}}"),
            format!("{{'k': '{content}'}}"),
            format!("{{\"{content}\": 1}}"),
            format!("[\"{content}\", \"{content}\"]"),
            format!("{{“k”: “{content}”}}"),
            format!("{{\"k\": \"{content}"),
            format!("{{\"k\": \"{content}\"}}"),
        ];
        for document in &documents {
            assert_eq!(
                rewritten(document, true),
                rewritten(document, false),
                "{document:?}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 28_000);
}
