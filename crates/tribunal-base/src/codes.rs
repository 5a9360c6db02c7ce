//! The codes of the built-in issues: stable names for what a finding is, in
//! the style of a linter's rule codes, so agents, CI scripts and tests match a
//! code instead of a message's wording. `docs/builtins.md` lists them (generated
//! from [`ALL`]). A script's or plugin's issues get codes namespaced by their
//! component (`length_ok`, `length_ok.too-long`).

macro_rules! codes {
    ($($name:ident = $code:literal: $what:literal;)*) => {
        $(
            #[doc = $what]
            pub const $name: &str = $code;
        )*
        /// Every built-in code, with what it means (docs/builtins.md).
        #[cfg_attr(not(test), allow(dead_code))]
        pub const ALL: &[(&str, &str)] = &[$(($code, $what)),*];
    };
}

codes! {
    CONTRACT_NOT_AN_OBJECT = "contract.not-an-object": "the extracted JSON is not an object (or there is none) where the contract expects one";
    CONTRACT_MISSING_FIELD = "contract.missing-field": "a required field is absent";
    CONTRACT_TYPE = "contract.type": "a field's value has a type the contract does not allow";
    CONTRACT_RANGE = "contract.range": "a number below `min` or above `max`";
    CONTRACT_ONE_OF = "contract.one-of": "a value not among the field's `enum` values";
    CONTRACT_LENGTH = "contract.length": "a string, array or object shorter than `min_length` or longer than `max_length`, or an array with fewer items than `min_items` or more than `max_items`";
    CONTRACT_SENTENCES = "contract.sentences": "a text with fewer or more sentences than the field allows";
    CONTRACT_PATTERN = "contract.pattern": "a string that does not match its field's `pattern` (a regular expression)";
    CONTRACT_ITEM = "contract.item": "an array item or map value of the wrong type (`items`, `values`)";
    CONTRACT_UNIQUE_ITEMS = "contract.unique-items": "an array item equal to an earlier one, under `unique_items: true`";
    CONTRACT_UNEXPECTED_FIELD = "contract.unexpected-field": "a field the contract does not name, under `additional_fields: false`";
    CONTRACT_KIND_NOT_ALLOWED = "contract.kind-not-allowed": "a variant the contract does not allow (`on_violation: reject`)";
    CONTRACT_KIND_REPLACED = "contract.kind-replaced": "a variant the contract does not allow, replaced with the fallback kind";
    EMISSION_DESCRIBED = "emission.described-not-emitted": "the output describes what it would emit instead of emitting it (`json_emission`)";
    PLACEHOLDER_FOUND = "placeholder.found": "a placeholder token (TODO, TBD, …) in the output (`no_placeholders`)";
    MESSAGE_MISSING_TEXT = "message.missing-text": "a message without a text its role's `contains` asks for (`messages`)";
    MESSAGE_NO_MATCH = "message.no-match": "a message its role's `matches` pattern does not match (`messages`)";
    MESSAGE_FORBIDDEN_MATCH = "message.forbidden-match": "a message its role's `not_matches` pattern matches (`messages`)";
    SECRET_FOUND = "secret.found": "a credential in a provider's token format in the output, a message, a tool output or a call's arguments (`no_secrets`)";
    UNICODE_HIDDEN = "unicode.hidden": "a character a reader cannot see (a bidirectional control, a tag, a zero-width or other invisible character) in a text the record carries (`no_hidden_unicode`)";
    REQUIRED_MISSING = "required.missing": "a required field is missing or empty (`required_fields`)";
    REQUIRED_INCOMPLETE = "required.incomplete": "a required field lacks members it must contain (`required_fields`)";
    SCHEMA_NO_JSON = "schema.no-json": "no JSON to validate against the JSON Schema (`json_schema`)";
    SCHEMA_KEYWORD = "schema.KEYWORD": "the JSON Schema keyword that failed, in kebab case (`schema.type`, `schema.required`, `schema.min-length`, …; `json_schema`)";
    COMPARE_NO_JSON = "compare.no-json": "no JSON object to compare with the expected one (`json_compare`)";
    COMPARE_MISSING = "compare.missing-field": "a field of the expected object is missing or null (`json_compare`)";
    COMPARE_UNEXPECTED = "compare.unexpected-field": "a field the expected object does not have (`json_compare`)";
    COMPARE_UNEXPECTED_VALUE = "compare.unexpected-value": "a value where the expected object has null (`json_compare`)";
    COMPARE_MISMATCH = "compare.mismatch": "a field whose value does not match the expected one under its strategy (`json_compare`)";
    EXTRACTION_FALLBACK = "extraction.fallback": "no JSON was found and the contract's fallback values were used";
    EXTRACTION_FAILED = "extraction.failed": "JSON-looking text that no tier could read";
    SCORE_BELOW_MIN = "score.below-min": "the record's score is under `scoring.min_score`, which fails a record its issues alone would not";
    INPUT_LONE_SURROGATE = "input.lone-surrogate": "lone UTF-16 surrogate escapes in the input record, read as U+FFFD";
    TRANSCRIPT_INVALID = "transcript.invalid": "a record's `messages` that is not a list of messages, or a message, content or result of the wrong type, or an item of an output's list of tool calls that is not a call";
    TRANSCRIPT_NO_ROLE = "transcript.no-role": "a message without a `role`, or with one that is not system, developer, user, assistant or tool";
    TRANSCRIPT_ARGUMENTS_NOT_JSON = "transcript.arguments-not-json": "a tool call whose arguments text is not JSON";
    TRANSCRIPT_UNKNOWN_BLOCK = "transcript.unknown-block": "a content block or item of a type Tribunal does not read (left out of the turns)";
    TRANSCRIPT_ORPHAN_RESULT = "transcript.orphan-result": "a tool result whose call was not made before it";
    TOOL_CALLS_NOT_ALLOWED = "tool.not-allowed": "a call of a tool not in `allowed` (`tool_calls`)";
    TOOL_CALLS_FORBIDDEN = "tool.forbidden": "a call of a `forbidden` tool (`tool_calls`)";
    TOOL_CALLS_MISSING = "tool.missing": "a `required` tool never called (`tool_calls`)";
    TOOL_CALLS_ORDER = "tool.order": "a tool called before the one an `order` pair puts first (`tool_calls`)";
    TOOL_CALLS_TOO_MANY = "tool.too-many": "a call past a `max_calls` limit (`tool_calls`)";
    TOOL_CALLS_OUTPUT_BOUND = "tool.output-bound": "an argument past a bound taken from an earlier tool's output, or with no such output to bound it (`tool_calls`' `min`/`max: {output_of, pointer}`)";
    TOOL_CALLS_AFTER_OUTPUT = "tool.after-output": "a call of a tool that `after_output` forbids once an output matched its pattern (`tool_calls`)";
    TOOL_CALLS_VALUE_NOT_FROM = "tool.value-not-from": "an argument value that no message of the role `values_from` names holds (`tool_calls`)";
    TOOL_CALLS_REPEATED = "tool.repeated": "the same tool called again with equal arguments, under `no_repeat` (`tool_calls`)";
    TOOL_CALLS_EXPECTED_MISSING = "tool.expected-missing": "a call of the expected trajectory (`expected.tool_calls`) the agent did not make (`tool_calls`)";
    TOOL_CALLS_UNEXPECTED = "tool.unexpected": "a call the expected trajectory does not have at its place, under `match: exact` (`tool_calls`)";
    TOOL_CALLS_ARGUMENT_MISMATCH = "tool.argument-mismatch": "an argument of a call that does not match the expected trajectory's, by its strategy (`tool_calls`)";
    TRANSCRIPT_MIXED_FORMATS = "transcript.mixed-formats": "one transcript written in two formats (OpenAI Chat, Anthropic Messages, OpenAI Responses)";
}

/// `schema.KEYWORD` for a JSON Schema keyword: `minLength` → `schema.min-length`.
pub fn schema_keyword(keyword: &str) -> String {
    let mut code = String::from(SCHEMA_KEYWORD.trim_end_matches("KEYWORD"));
    for c in keyword.trim_start_matches('$').chars() {
        if c.is_ascii_uppercase() {
            code.push('-');
            code.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() || c == '-' {
            code.push(c);
        } else {
            code.push('-');
        }
    }
    code
}

/// Whether an issue of `code` is about the output's format (its JSON, the
/// contract's fields and kinds, a JSON Schema, required fields): the issues
/// after which a transcript's re-ask text shows the OUTPUT FORMAT block.
pub fn about_format(code: &str) -> bool {
    [
        "contract.",
        "extraction.",
        "schema.",
        "required.",
        "emission.",
    ]
    .iter()
    .any(|family| code.starts_with(family))
        || code == COMPARE_NO_JSON
}

/// Whether `code` is one a script or plugin may give an issue (namespaced by
/// the host): lower-case letters, digits, `-` and `.`, at most 64 bytes, not
/// starting or ending with `.`.
pub fn is_custom_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && !code.starts_with('.')
        && !code.ends_with('.')
        && !code.contains("..")
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, what) in ALL {
            assert!(seen.insert(*code), "{code} twice");
            assert!(!what.is_empty());
            let (family, name) = code.split_once('.').expect("family.name");
            assert!(is_custom_code(family), "{code}");
            assert!(name == "KEYWORD" || is_custom_code(name), "{code}");
        }
        assert_eq!(schema_keyword("minLength"), "schema.min-length");
        assert_eq!(schema_keyword("type"), "schema.type");
        assert_eq!(schema_keyword("$ref"), "schema.ref");
        for bad in ["", "A", "x y", ".x", "x.", "x..y", &"x".repeat(65)] {
            assert!(!is_custom_code(bad), "{bad:?}");
        }
    }
}
