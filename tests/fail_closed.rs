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
fn lint_deny_warnings_fails_on_rules_that_name_tools_nothing_checks() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = PACK.replace(
        "{RULES}",
        "    - use: tool_calls\n      with:\n        max_calls: { refnd: 1 }\n",
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
