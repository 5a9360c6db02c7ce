//! The strict tier: the whole text is a JSON object or array.

/// Parses the whole text, less surrounding whitespace and a leading UTF-8 byte order
/// mark, as a JSON object or array.
pub fn parse<D: super::Document>(text: &str) -> Option<D> {
    let body = text
        .trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .trim_end();
    super::parse_container(body)
}

#[cfg(test)]
mod tests {
    use crate::json::{json, Json};

    /// The value the tier finds.
    fn parse(text: &str) -> Option<Json> {
        super::parse(text)
    }

    #[test]
    fn seed_001() {
        let text =
            r#"{"kind": "world.observed", "text": "The path folds itself into a paper crane."}"#;
        assert_eq!(
            parse(text),
            Some(
                json!({"kind": "world.observed", "text": "The path folds itself into a paper crane."})
            )
        );
    }

    #[test]
    fn objects_and_arrays() {
        assert_eq!(parse("{}"), Some(json!({})));
        assert_eq!(parse("[]"), Some(json!([])));
        assert_eq!(
            parse("[1, {\"a\": [true]}]"),
            Some(json!([1, {"a": [true]}]))
        );
    }

    #[test]
    fn surrounding_whitespace_and_bom() {
        assert_eq!(parse("  \n\t{\"a\": 1}\r\n  "), Some(json!({"a": 1})));
        assert_eq!(parse("\u{feff}{\"a\": 1}"), Some(json!({"a": 1})));
        assert_eq!(parse("\u{feff}  [2]\n"), Some(json!([2])));
    }

    #[test]
    fn scalars_are_rejected() {
        for text in ["1", "-2.5", "\"text\"", "true", "null", "", "   "] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn anything_around_the_value_is_rejected() {
        assert_eq!(parse("Sure: {\"a\": 1}"), None);
        assert_eq!(parse("{\"a\": 1} hope that helps"), None);
        assert_eq!(parse("```json\n{\"a\": 1}\n```"), None);
        assert_eq!(parse("{\"a\": 1,}"), None);
        assert_eq!(parse("{\"a\": 1}{\"b\": 2}"), None);
    }

    #[test]
    fn braces_inside_strings() {
        assert_eq!(parse(r#"{"a": "x}y{"}"#), Some(json!({"a": "x}y{"})));
    }

    #[test]
    fn unicode_is_preserved() {
        let value = parse("{\"mood\": \"🤔\", \"jp\": \"日本語\"}").unwrap();
        assert_eq!(value["mood"], "🤔");
        assert_eq!(value["jp"], "日本語");
    }

    #[test]
    fn deep_nesting_fails_without_crashing() {
        assert_eq!(parse(&"[".repeat(100_000)), None);
        assert_eq!(parse(&"{".repeat(100_000)), None);
        let balanced = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(parse(&balanced), None);
        let objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
        assert_eq!(parse(&objects), None);
    }

    #[test]
    fn moderate_nesting_parses() {
        let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(&nested).is_some());
    }

    #[test]
    fn ten_megabytes_of_braces() {
        assert_eq!(parse(&"{".repeat(10 * 1024 * 1024)), None);
    }
}
