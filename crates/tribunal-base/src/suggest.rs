//! "Did you mean" suggestions for load errors.

use crate::text::levenshtein;

/// The help line for a suggestion: "did you mean `NAME`?".
pub fn did_you_mean(suggestion: &str) -> String {
    format!("did you mean `{suggestion}`?")
}

/// The candidate closest to `wanted`, if it is close enough to be a likely typo.
pub fn nearest<I>(wanted: &str, candidates: I) -> Option<String>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let wanted_chars: Vec<char> = wanted.to_lowercase().chars().collect();
    let mut best: Option<(usize, String)> = None;
    for candidate in candidates {
        let candidate = candidate.as_ref();
        let chars: Vec<char> = candidate.to_lowercase().chars().collect();
        let distance = levenshtein(&wanted_chars, &chars);
        let limit = (wanted_chars.len().max(chars.len()) / 3).max(1);
        let is_prefix = chars.len() >= 3
            && wanted_chars.len() >= 3
            && (chars.starts_with(&wanted_chars) || wanted_chars.starts_with(&chars));
        if (distance <= limit || is_prefix) && best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, candidate.to_owned()));
        }
    }
    best.map(|(_, name)| name)
}

/// Parses serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a`").
pub fn parse_unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    parse_unknown("unknown field `", message)
}

/// Parses "unknown variant `x`, expected one of `a`, `b`".
pub fn parse_unknown_variant(message: &str) -> Option<(String, Vec<String>)> {
    parse_unknown("unknown variant `", message)
}

fn parse_unknown(marker: &str, message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.split(marker).nth(1)?;
    let (wrong, rest) = rest.split_once('`')?;
    // Everything after the first "expected": a field may itself be named
    // `expected` (a pack test case's keys).
    let expected = rest
        .split_once("expected")
        .map(|(_, list)| {
            list.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some((wrong.to_owned(), expected))
}

/// Parses "missing field `x`" or "...for key `x`" style messages for the field name.
pub fn parse_field_in_message(message: &str) -> Option<String> {
    let rest = message.split("field `").nth(1)?;
    let (field, _) = rest.split_once('`')?;
    Some(field.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["json_emission", "json_compare", "no_placeholders"];
        assert_eq!(
            nearest("json_emision", names).as_deref(),
            Some("json_emission")
        );
        assert_eq!(
            nearest("no_placeholder", names).as_deref(),
            Some("no_placeholders")
        );
        assert_eq!(nearest("totally_else", names), None);
    }

    #[test]
    fn parses_serde_unknown_field() {
        let (field, expected) =
            parse_unknown_field("unknown field `wieght`, expected one of `use`, `weight`, `with`")
                .unwrap();
        assert_eq!(field, "wieght");
        assert_eq!(expected, ["use", "weight", "with"]);
        let (_, keys) = parse_unknown_field(
            "cases[0]: unknown field `expcet`, expected one of `output`, `expected`, `expect`",
        )
        .unwrap();
        assert_eq!(
            keys,
            ["output", "expected", "expect"],
            "a field named `expected`"
        );
        let (field, expected) = parse_unknown_field("unknown field `x`, expected `use`").unwrap();
        assert_eq!((field.as_str(), expected.len()), ("x", 1));
    }
}
