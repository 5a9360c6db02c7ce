//! Fail closed at load: a rule that names something the pack does not know — a
//! tool, a field — is a load error at the misspelt name's own line and
//! column, with the name it meant; where nothing can check the name, a warning
//! (an error under `tribunal lint --deny-warnings`). Each case is a support
//! agent's pack as a user writes it, one rule misspelt at a time: every key of
//! every built-in that names a tool or a field.

use std::path::Path;

use tribunal::Pack;

/// The pack, with `{RULES}` replaced by one step's rules.
const PACK: &str = "name: support
contract:
  additional_fields: false
  fields:
    answer: { type: string, required: true }
    order:
      type: object
      additional_fields: false
      fields:
        id: { type: string }
        notes: { type: string }
    extra: { type: object }
pipeline:
  postprocessors:
    - contract
{RULES}
";

const TOOLS: &str = "    - use: tool_calls
      with:
        allowed: [lookup_order, refund]
";

/// Each misspelt rule (written under the pack's pipeline), the misspelt name,
/// the name it meant, and the text the error's line holds.
const CASES: &[(&str, &str, &str)] = &[
    ("        required: [refnd]\n", "refnd", "refund"),
    (
        "        order: [[lookup_order, refnd]]\n",
        "refnd",
        "refund",
    ),
    (
        "        order: [[lookup_ordr, refund]]\n",
        "lookup_ordr",
        "lookup_order",
    ),
    ("        max_calls: { refnd: 1 }\n", "refnd", "refund"),
    (
        "        max_calls:\n          \"*\": 4\n          refnd: 1\n",
        "refnd",
        "refund",
    ),
    (
        "        arguments:\n          refnd:\n            amount: { type: number }\n",
        "refnd",
        "refund",
    ),
    (
        "        argument_strategies: { refnd.amount: IGNORE }\n",
        "refnd",
        "refund",
    ),
    (
        "        after_output: [{ tool: refnd, matches: error, forbid: [refund] }]\n",
        "refnd",
        "refund",
    ),
    (
        "        after_output: [{ tool: refund, matches: error, forbid: [lookup_ordr] }]\n",
        "lookup_ordr",
        "lookup_order",
    ),
    (
        "        values_from: { refnd.order_id: { role: user } }\n",
        "refnd",
        "refund",
    ),
    (
        "        arguments:\n          refund:\n            amount: { type: number, max: { output_of: lookup_ordr, pointer: /total } }\n",
        "lookup_ordr",
        "lookup_order",
    ),
];

fn load(yaml: &str) -> (tempfile::TempDir, Result<Pack, tribunal::LoadErrors>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pack.yaml"), yaml).unwrap();
    let pack = Pack::load(dir.path());
    (dir, pack)
}

/// The 1-based line and column of the first `word` at or after `line`, as a
/// reader of the file finds it.
fn place_of(yaml: &str, word: &str, from_line: usize) -> (usize, usize) {
    yaml.lines()
        .enumerate()
        .skip(from_line - 1)
        .find_map(|(i, line)| line.find(word).map(|c| (i + 1, c + 1)))
        .unwrap_or_else(|| panic!("no {word} in\n{yaml}"))
}

#[test]
fn a_misspelt_tool_in_any_rule_is_a_load_error_at_its_own_place() {
    for (rule, wrong, meant) in CASES {
        let yaml = PACK.replace("{RULES}", &format!("{TOOLS}{rule}"));
        let (_dir, loaded) = load(&yaml);
        let errors = loaded.err().unwrap_or_else(|| panic!("loads:\n{yaml}")).0;
        let error = &errors[0];
        assert!(error.message.contains(&format!("`{wrong}`")), "{error}");
        assert_eq!(
            error.help.as_deref(),
            Some(format!("did you mean `{meant}`?").as_str()),
            "{error}"
        );
        // At the misspelt name itself, in the step's rules.
        let rules_start = place_of(&yaml, "use: tool_calls", 1).0;
        assert_eq!(
            error.position,
            Some(place_of(&yaml, wrong, rules_start)),
            "{error}\n{yaml}"
        );
        // Spelt right, the pack loads.
        let right = yaml.replace(wrong, meant);
        let (_dir, loaded) = load(&right);
        assert!(loaded.is_ok(), "{right}\n{}", loaded.err().unwrap());
    }
}

#[test]
fn a_misspelt_field_is_a_load_error_where_no_output_can_have_it_and_a_warning_where_one_may() {
    for (rules, wrong, meant, error) in [
        (
            "    - use: no_placeholders\n      with: { fields: [answr] }\n",
            "answr",
            "answer",
            true,
        ),
        (
            "    - use: no_placeholders\n      with:\n        fields: [order.nots]\n",
            "order.nots",
            "notes",
            true,
        ),
        (
            "    - use: required_fields\n      with: { paths: [/order/idd] }\n",
            "/order/idd",
            "id",
            true,
        ),
        (
            "    - use: required_fields\n      with:\n        paths:\n          - path: anwser\n",
            "anwser",
            "answer",
            true,
        ),
        // Inside a free object: any name may be there.
        (
            "    - use: no_placeholders\n      with: { fields: [extra.anything] }\n",
            "",
            "",
            false,
        ),
    ] {
        let yaml = PACK.replace("{RULES}", rules);
        let (_dir, loaded) = load(&yaml);
        if !error {
            let pack = loaded.unwrap_or_else(|e| panic!("{e}\n{yaml}"));
            assert!(pack.warnings().is_empty(), "{:?}", pack.warnings());
            continue;
        }
        let errors = loaded.err().unwrap_or_else(|| panic!("loads:\n{yaml}")).0;
        let error = &errors[0];
        assert!(
            error
                .message
                .contains("which no output the contract takes can have"),
            "{error}"
        );
        assert_eq!(
            error.help.as_deref(),
            Some(format!("did you mean `{meant}`?").as_str())
        );
        let start = place_of(&yaml, "- use:", place_of(&yaml, "- contract", 1).0).0;
        assert_eq!(
            error.position,
            Some(place_of(&yaml, wrong, start)),
            "{error}\n{yaml}"
        );
    }
    // Under a contract that takes other members, a field it does not describe
    // may be in an output: a warning, at the name.
    let open = PACK
        .replacen("  additional_fields: false\n", "", 1)
        .replace(
            "{RULES}",
            "    - use: no_placeholders\n      with: { fields: [answr] }\n",
        );
    let (_dir, loaded) = load(&open);
    let pack = loaded.unwrap();
    let warnings = pack.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .message
            .contains("which the contract does not describe"),
        "{}",
        warnings[0]
    );
    assert_eq!(warnings[0].help.as_deref(), Some("did you mean `answer`?"));
    assert_eq!(warnings[0].position, Some(place_of(&open, "answr", 15)));
}

#[test]
fn an_example_the_contract_does_not_take_is_a_warning_at_its_member() {
    let yaml = "name: p\ncontract:\n  additional_fields: false\n  fields:\n    answer: { type: string }\n  example: { answr: yes }\n";
    let (_dir, loaded) = load(yaml);
    let pack = loaded.unwrap();
    let warnings = pack.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].message.contains("`answr`"), "{}", warnings[0]);
    assert_eq!(warnings[0].position.map(|(line, _)| line), Some(6));
}

#[test]
fn lint_deny_warnings_fails_on_rules_that_name_tools_nothing_checks() {
    // (The data flow's names too: `after_output`, `values_from`, `output_of`.)
    for rules in [
        "        max_calls: { refnd: 1 }\n",
        "        after_output: [{ tool: refnd, matches: error, forbid: [refund] }]\n",
        "        values_from: { refnd.to: { role: user } }\n",
    ] {
        lint_warns_of_unchecked_names(rules);
    }
}

fn lint_warns_of_unchecked_names(rules: &str) {
    let dir = tempfile::tempdir().unwrap();
    let yaml = PACK.replace(
        "{RULES}",
        &format!("    - use: tool_calls\n      with:\n{rules}"),
    );
    std::fs::write(dir.path().join("pack.yaml"), &yaml).unwrap();
    let lint = |deny: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tribunal"));
        command.arg("lint").arg(dir.path());
        if deny {
            command.arg("--deny-warnings");
        }
        command.output().unwrap()
    };
    let out = lint(false);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("name tools, but the step lists none"),
        "{said}"
    );
    assert!(!lint(true).status.success());
    assert!(Path::new(&dir.path().join("pack.yaml")).exists());
}

/// What a built-in's config key names, besides plain values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Names {
    /// Nothing the pack defines: a number, a flag, a pattern, a file, a
    /// list that is itself the definition (`allowed`, `fields`, `events`
    /// without a contract that lists kinds).
    Nothing,
    /// A tool, a field, a strategy, a metric or an output kind: a misspelt
    /// name must be a load error (`MISSPELT` holds the case).
    Something,
}

/// Every config key the built-ins document (`docs/builtins.md`, generated
/// from the code) and the contract's keys (`docs/schemas/pack.schema.json`,
/// generated too): a key added later fails the walk until it is classified
/// here, and a key that names something until a misspelt case proves it
/// fails closed.
const KEYS: &[(&str, &str, Names)] = &[
    ("contract", "extract", Names::Nothing),
    ("contract", "multiple_values", Names::Nothing),
    ("contract", "repair", Names::Nothing),
    ("contract", "may_emit", Names::Something),
    ("contract", "on_violation", Names::Nothing),
    ("contract", "kind_field", Names::Something),
    ("contract", "fields", Names::Nothing),
    ("contract", "fallback", Names::Something),
    ("contract", "instructions", Names::Nothing),
    // (An example the contract does not take is a warning: a `--set` that
    // changes the contract may leave it behind; `lint --deny-warnings` fails.)
    ("contract", "example", Names::Nothing),
    ("contract", "additional_fields", Names::Nothing),
    ("contract", "sentence_abbreviations", Names::Nothing),
    ("contract", "numbers", Names::Nothing),
    ("contract", "variants", Names::Nothing),
    ("json_compare", "field_strategies", Names::Something),
    ("json_compare", "fuzzy_threshold", Names::Nothing),
    ("json_compare", "semantic_threshold", Names::Nothing),
    ("json_compare", "text_strategy", Names::Something),
    ("json_compare", "thresholds", Names::Something),
    ("json_compare", "normalize", Names::Nothing),
    ("json_compare", "weights", Names::Nothing),
    ("json_compare", "safety_metric", Names::Something),
    ("json_compare", "model", Names::Nothing),
    ("json_compare", "when_no_expected", Names::Nothing),
    ("json_emission", "events", Names::Something),
    ("json_emission", "threshold", Names::Nothing),
    ("json_emission", "pattern", Names::Nothing),
    ("json_emission", "description_patterns", Names::Nothing),
    ("json_emission", "points", Names::Nothing),
    ("json_emission", "penalty", Names::Nothing),
    ("json_emission", "description_message", Names::Nothing),
    ("json_schema", "schema", Names::Nothing),
    ("json_schema", "max_issues", Names::Nothing),
    ("json_schema", "severity", Names::Nothing),
    // (A fixed list of places: a misspelt one is serde's error, with the
    // places; crates/tribunal/tests/detectors.rs.)
    // (Roles: fixed names, each a struct that refuses unknown keys.)
    ("messages", "system", Names::Nothing),
    ("messages", "user", Names::Nothing),
    ("messages", "assistant", Names::Nothing),
    ("messages", "tool", Names::Nothing),
    ("messages", "severity", Names::Nothing),
    ("no_hidden_unicode", "in", Names::Nothing),
    ("no_hidden_unicode", "severity", Names::Nothing),
    ("no_secrets", "in", Names::Nothing),
    ("no_secrets", "severity", Names::Nothing),
    ("no_placeholders", "tokens", Names::Nothing),
    ("no_placeholders", "fields", Names::Something),
    ("no_placeholders", "containers", Names::Nothing),
    ("no_placeholders", "case_sensitive", Names::Nothing),
    ("no_placeholders", "message", Names::Nothing),
    ("no_placeholders", "severity", Names::Nothing),
    ("required_fields", "paths", Names::Something),
    ("required_fields", "path", Names::Something),
    ("required_fields", "each", Names::Something),
    ("required_fields", "message", Names::Nothing),
    ("required_fields", "non_empty", Names::Nothing),
    ("required_fields", "require", Names::Something),
    ("required_fields", "incomplete_message", Names::Nothing),
    ("required_fields", "severity", Names::Nothing),
    ("tool_calls", "allowed", Names::Nothing),
    ("tool_calls", "forbidden", Names::Something),
    ("tool_calls", "required", Names::Something),
    ("tool_calls", "order", Names::Something),
    ("tool_calls", "max_calls", Names::Something),
    ("tool_calls", "no_repeat", Names::Nothing),
    ("tool_calls", "severity", Names::Nothing),
    ("tool_calls", "arguments", Names::Something),
    ("tool_calls", "additional_arguments", Names::Nothing),
    ("tool_calls", "after_output", Names::Something),
    ("tool_calls", "values_from", Names::Something),
    ("tool_calls", "match", Names::Nothing),
    ("tool_calls", "argument_strategies", Names::Something),
    ("tool_calls", "thresholds", Names::Something),
    ("tool_calls", "normalize", Names::Nothing),
    ("tool_calls", "numbers", Names::Nothing),
    ("tool_calls", "model", Names::Nothing),
];

/// For each key that names something, a whole pack with one misspelt name
/// in it, the name, and the name the error must offer.
const MISSPELT: &[(&str, &str, &str, &str, &str)] = &[
    (
        "contract",
        "may_emit",
        "name: p\ncontract:\n  may_emit: [answer, refusl]\n  fields:\n    kind: { enum: [answer, refusal] }\n",
        "refusl",
        "",
    ),
    (
        "contract",
        "kind_field",
        "name: p\ncontract:\n  kind_field: knd\n  may_emit: [a, b]\n  additional_fields: false\n  fields:\n    kind: { type: string }\n",
        "knd",
        "kind",
    ),
    (
        "contract",
        "fallback",
        "name: p\ncontract:\n  may_emit: [answer, refusal]\n  fallback: { kind: refusl }\n",
        "refusl",
        "",
    ),
    (
        "json_compare",
        "field_strategies",
        "name: p\ncontract:\n  additional_fields: false\n  fields:\n    answer: { type: string }\npipeline:\n  metrics:\n    - use: json_compare\n      with: { field_strategies: { answr: FUZZY } }\n",
        "answr",
        "answer",
    ),
    (
        "json_compare",
        "text_strategy",
        "name: p\npipeline:\n  metrics:\n    - use: json_compare\n      with: { text_strategy: fuzy }\n",
        "fuzy",
        "fuzzy",
    ),
    (
        "json_compare",
        "thresholds",
        "name: p\npipeline:\n  metrics:\n    - use: json_compare\n      with: { thresholds: { fuzy: 0.9 } }\n",
        "fuzy",
        "fuzzy",
    ),
    (
        "json_compare",
        "safety_metric",
        "name: p\npipeline:\n  metrics:\n    - use: json_emission\n      as: safety\n    - use: json_compare\n      with: { safety_metric: safty }\n",
        "safty",
        "safety",
    ),
    (
        "json_emission",
        "events",
        "name: p\ncontract:\n  kind_field: event\n  may_emit: [agent:status, message:send]\npipeline:\n  metrics:\n    - use: json_emission\n      with: { events: [agent:stats] }\n",
        "agent:stats",
        "agent:status",
    ),
    (
        "required_fields",
        "each",
        "name: p\ncontract:\n  additional_fields: false\n  fields:\n    answer: { type: string }\npipeline:\n  postprocessors:\n    - use: required_fields\n      with:\n        paths:\n          - path: \"{name}\"\n            each: [answr]\n",
        "answr",
        "answer",
    ),
    (
        "required_fields",
        "require",
        "name: p\ncontract:\n  additional_fields: false\n  fields:\n    order: { type: object, additional_fields: false, fields: { id: { type: string } } }\npipeline:\n  postprocessors:\n    - use: required_fields\n      with: { paths: [{ path: order, require: [idd] }] }\n",
        "idd",
        "id",
    ),
    (
        "tool_calls",
        "forbidden",
        "name: p\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        arguments: { refund: { amount: { type: number } } }\n        forbidden: [refnd]\n",
        "refnd",
        "refund",
    ),
    (
        "tool_calls",
        "argument_strategies",
        "name: p\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        allowed: [refund]\n        additional_arguments: false\n        arguments: { refund: { amount: { type: number } } }\n        argument_strategies: { refund.amout: IGNORE }\n",
        "refund.amout",
        "amount",
    ),
    (
        "tool_calls",
        "thresholds",
        "name: p\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        allowed: [refund]\n        thresholds: { fuzy: 0.9 }\n",
        "fuzy",
        "fuzzy",
    ),
];

/// The config keys of each built-in as `docs/builtins.md` documents them
/// (its table of rules, then each rule's `| key |` rows).
fn documented_keys() -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/builtins.md"))
            .unwrap();
    let mut keys = Vec::new();
    let mut builtin = None::<String>;
    for line in text.lines() {
        if let Some(id) = line
            .strip_prefix("<a id=\"")
            .and_then(|rest| rest.strip_suffix("\"></a>"))
        {
            builtin = Some(id.to_owned());
        } else if line.starts_with("## Issue codes") {
            break;
        } else if let (Some(builtin), Some(rest)) = (&builtin, line.strip_prefix("| `")) {
            let key: String = rest.chars().take_while(|c| *c != '`').collect();
            // (`arguments: contract` is a form of `arguments`.)
            let key = key.split(':').next().unwrap_or_default().to_owned();
            if !keys.contains(&(builtin.clone(), key.clone())) {
                keys.push((builtin.clone(), key));
            }
        }
    }
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas/pack.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for key in schema["$defs"]["ContractSpec"]["properties"]
        .as_object()
        .unwrap()
        .keys()
    {
        keys.push(("contract".to_owned(), key.clone()));
    }
    keys
}

#[test]
fn every_key_of_every_built_in_that_names_something_fails_closed() {
    let documented = documented_keys();
    assert!(documented.len() > 50, "{documented:?}");
    let builtins: std::collections::BTreeSet<&str> =
        documented.iter().map(|(b, _)| b.as_str()).collect();
    assert!(builtins.len() >= 7, "{builtins:?}");
    for (builtin, key) in &documented {
        assert!(
            KEYS.iter().any(|(b, k, _)| b == builtin && k == key),
            "`{builtin}.{key}` is documented but not classified in KEYS: say whether it names something, and add a misspelt case if it does"
        );
    }
    // The tool rules' own cases (`CASES`, against `allowed`) and the field
    // rules' (the test above) count for their keys.
    let covered_elsewhere = [
        ("tool_calls", "required"),
        ("tool_calls", "order"),
        ("tool_calls", "max_calls"),
        ("tool_calls", "arguments"),
        ("tool_calls", "after_output"),
        ("tool_calls", "values_from"),
        ("no_placeholders", "fields"),
        ("required_fields", "paths"),
        ("required_fields", "path"),
    ];
    for (builtin, key, names) in KEYS {
        assert!(
            documented.iter().any(|(b, k)| b == builtin && k == key),
            "KEYS has `{builtin}.{key}`, which is not documented"
        );
        if *names == Names::Nothing || covered_elsewhere.contains(&(builtin, key)) {
            continue;
        }
        assert!(
            MISSPELT.iter().any(|(b, k, ..)| b == builtin && k == key),
            "`{builtin}.{key}` names something and has no misspelt case in MISSPELT"
        );
    }
    for (builtin, key, yaml, wrong, meant) in MISSPELT {
        let (_dir, loaded) = load(yaml);
        let errors = loaded
            .err()
            .unwrap_or_else(|| panic!("{builtin}.{key}: loads:\n{yaml}"))
            .0;
        let error = &errors[0];
        // (`tool.argument` is said as its argument.)
        let said = wrong.rsplit('.').next().unwrap_or(wrong);
        assert!(error.message.contains(said), "{builtin}.{key}: {error}");
        if !meant.is_empty() {
            assert_eq!(
                error.help.as_deref(),
                Some(format!("did you mean `{meant}`?").as_str()),
                "{builtin}.{key}: {error}"
            );
        }
        // At the misspelt name's line.
        let line = yaml.lines().position(|l| l.contains(wrong)).map(|i| i + 1);
        assert_eq!(
            error.position.map(|(line, _)| line),
            line,
            "{builtin}.{key}: {error}\n{yaml}"
        );
        // Spelt right, it loads.
        if !meant.is_empty() {
            let right = yaml.replace(said, meant);
            let (_dir, loaded) = load(&right);
            assert!(
                loaded.is_ok(),
                "{builtin}.{key}:\n{right}\n{}",
                loaded.err().unwrap()
            );
        }
    }
}

/// `argument_strategies` keys: a tool name may hold dots (`math.hypot.x`),
/// and `"*"` names every argument not named; neither is taken for a
/// misspelt tool, and a misspelt dotted tool still is one.
#[test]
fn argument_strategies_take_dotted_tool_names_and_a_star() {
    let pack = |strategies: &str| {
        format!(
            "name: p\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        allowed: [math.hypot, search]\n        argument_strategies: {{ {strategies} }}\n"
        )
    };
    for fine in [
        "math.hypot.x: IGNORE",
        "\"*\": FUZZY",
        "\"*\": IGNORE, search.q: FUZZY",
    ] {
        let yaml = pack(fine);
        let (_dir, loaded) = load(&yaml);
        let loaded = loaded.unwrap_or_else(|e| panic!("{yaml}\n{e}"));
        assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());
    }
    let yaml = pack("math.hypt.x: IGNORE");
    let (_dir, loaded) = load(&yaml);
    let error = &loaded.expect_err("loads").0[0];
    assert!(error.message.contains("`math.hypt`"), "{error}");
    assert_eq!(error.help.as_deref(), Some("did you mean `math.hypot`?"));
    // `"*"` is the strategy of the arguments not named.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: p\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        allowed: [search]\n        argument_strategies: { \"*\": IGNORE, search.id: EXACT }\n",
    )
    .unwrap();
    let pack = Pack::load(dir.path()).unwrap();
    let messages = serde_json::json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"cats\", \"id\": 2}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "none"},
        {"role": "assistant", "content": "done"}
    ]);
    let input = |expected: serde_json::Value| {
        let mut input = tribunal::Input::from_messages(messages.clone());
        input.expected =
            serde_json::json!({"tool_calls": [{"name": "search", "arguments": expected}]}).into();
        input
    };
    let codes = |expected| -> Vec<String> {
        pack.evaluate(&input(expected))
            .issues
            .iter()
            .map(|i| i.code.to_string())
            .collect()
    };
    assert!(codes(serde_json::json!({"q": "dogs", "id": 2})).is_empty());
    assert_eq!(
        codes(serde_json::json!({"q": "dogs", "id": 3})),
        ["tool.argument-mismatch"]
    );
}

/// Under `arguments: contract`, the argument names of `argument_strategies`
/// are checked against the variant's arguments field: an error where the
/// field takes no other member, a warning where it may.
#[test]
fn argument_strategies_under_arguments_contract_check_the_variant_s_fields() {
    let pack = |closed: bool, strategies: &str| {
        format!(
            "name: p\ncontract:\n  kind_field: tool\n  variants:\n    search:\n      fields:\n        args:\n          type: object\n          additional_fields: {}\n          fields:\n            query: {{ type: string }}\n            page: {{ type: integer }}\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        arguments: contract\n        argument_strategies: {{ {strategies} }}\n",
            !closed
        )
    };
    for fine in ["search.query: FUZZY", "page: IGNORE", "\"*\": IGNORE"] {
        let yaml = pack(true, fine);
        let (_dir, loaded) = load(&yaml);
        let loaded = loaded.unwrap_or_else(|e| panic!("{yaml}\n{e}"));
        assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());
    }
    for misspelt in ["search.querry: FUZZY", "querry: FUZZY"] {
        let yaml = pack(true, misspelt);
        let (_dir, loaded) = load(&yaml);
        let error = &loaded.expect_err("a load error").0[0];
        assert!(error.message.contains("`querry`"), "{error}");
        assert_eq!(
            error.help.as_deref(),
            Some("did you mean `query`?"),
            "{error}"
        );
        let key = misspelt.split(':').next().unwrap();
        let (line, column) = place_of(&yaml, key, 1);
        assert_eq!(error.position, Some((line, column)), "{error}");
        // Where the field takes other members, a warning.
        let yaml = pack(false, misspelt);
        let (_dir, loaded) = load(&yaml);
        let loaded = loaded.unwrap_or_else(|e| panic!("{yaml}\n{e}"));
        let warnings = loaded.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("`querry`"), "{warnings:?}");
    }
}

/// An unknown type name is refused with every spelling that works, the
/// aliases included (`float`, `dict`), and the one meant.
#[test]
fn an_unknown_type_lists_the_aliases_that_work() {
    for (field, meant) in [
        ("{ type: flot }", "float"),
        ("{ type: [strng, \"null\"] }", "string"),
        ("{ type: array, items: dic }", "dict"),
    ] {
        let yaml = format!("name: p\ncontract:\n  fields:\n    n: {field}\n");
        let (_dir, loaded) = load(&yaml);
        let error = &loaded.expect_err("a load error").0[0];
        assert!(error.message.contains("`float`, `int`"), "{error}");
        assert!(error.message.contains("`dict`, `list`"), "{error}");
        assert_eq!(
            error.help.as_deref(),
            Some(format!("did you mean `{meant}`?").as_str()),
            "{error}"
        );
    }
}
