//! Bounds hold for every number, exactly: `min`, `max` and `enum` compare the
//! number as written, at any size and precision, in a contract's fields, in
//! array items, in `tool_calls`' argument rules and while streaming; no finite
//! JSON number escapes a bound by being beyond a double (`1e400`) or by being
//! rounded to one (`1.0000000000000000000001`). The numbers are generated
//! around each bound by decimal construction, so each one's side of the bound
//! is known exactly; `numbers: finite` refuses what a double cannot hold.

use serde_json::json;
use std::cmp::Ordering;
use std::fmt::Write as _;
use tribunal::{Input, Pack};

/// A bound as a pack writes it, and its decimal digits split at the point.
struct Bound {
    yaml: &'static str,
    negative: bool,
    int: &'static str,
    frac: &'static str,
}

const BOUNDS: [Bound; 5] = [
    Bound {
        yaml: "500",
        negative: false,
        int: "500",
        frac: "",
    },
    Bound {
        yaml: "0.1",
        negative: false,
        int: "0",
        frac: "1",
    },
    Bound {
        yaml: "1",
        negative: false,
        int: "1",
        frac: "",
    },
    Bound {
        yaml: "-2.5",
        negative: true,
        int: "2",
        frac: "5",
    },
    Bound {
        yaml: "0",
        negative: false,
        int: "0",
        frac: "",
    },
];

/// Numbers around `bound`, each with how it compares with it: the bound
/// rewritten (equal), a digit more far to the right (above or below by
/// 10^-k, for k up to 60), and magnitudes far beyond a double.
fn around(bound: &Bound) -> Vec<(String, Ordering)> {
    let sign = if bound.negative { "-" } else { "" };
    // Moving away from zero is "above" for a positive bound.
    let away = if bound.negative {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    let mut out = Vec::new();
    let digits = format!("{}{}", bound.int, bound.frac);
    let zero = digits.bytes().all(|b| b == b'0');
    // Rewritings of the bound itself.
    out.push((
        format!("{sign}{}.{}0", bound.int, bound.frac),
        Ordering::Equal,
    ));
    out.push((
        format!("{sign}{}.{}000", bound.int, bound.frac),
        Ordering::Equal,
    ));
    let significant = digits.trim_start_matches('0');
    let shifted = if significant.is_empty() {
        "0e5".to_owned()
    } else {
        format!("{sign}{significant}0e-{}", bound.frac.len() + 1)
    };
    out.push((shifted, Ordering::Equal));
    out.push((
        format!("{sign}0.{digits}e{}", bound.int.len()),
        Ordering::Equal,
    ));
    for k in [1, 5, 15, 16, 17, 18, 22, 30, 60] {
        let frac = if bound.frac.is_empty() {
            String::new()
        } else {
            bound.frac.to_owned()
        };
        let pad = "0".repeat(k);
        // |bound| + 10^-(len+k+1): further from zero.
        out.push((
            format!("{sign}{}.{frac}{pad}1", bound.int),
            if zero { Ordering::Greater } else { away },
        ));
        if zero {
            out.push((format!("-0.{pad}1"), Ordering::Less));
        }
    }
    // Beyond a double, and integers longer than any double's digits.
    for huge in [
        "1e400",
        "1e309",
        "1E+309",
        "17976931348623157e292",
        &format!("1{}", "0".repeat(300)),
    ] {
        out.push((huge.to_owned(), Ordering::Greater));
        out.push((format!("-{huge}"), Ordering::Less));
    }
    // Tiny magnitudes: between zero and the bound (or past it, for zero).
    for tiny in ["1e-400", "1e-330"] {
        let ordering = if zero || bound.negative {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        out.push((tiny.to_owned(), ordering));
    }
    out
}

fn load(yaml: &str) -> (tempfile::TempDir, Pack) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pack.yaml"), yaml).unwrap();
    let pack = Pack::load(dir.path()).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    (dir, pack)
}

fn codes_at(report: &tribunal::Report, path: &str) -> Vec<String> {
    report
        .issues
        .iter()
        .filter(|i| i.path.as_deref() == Some(path))
        .map(|i| i.code.to_string())
        .collect()
}

#[test]
fn bounds_and_allowed_values_compare_every_number_exactly_everywhere() {
    for bound in &BOUNDS {
        let b = bound.yaml;
        let (_dir, pack) = load(&format!(
            "name: bounds\ncontract:\n  fields:\n    lo: {{ type: number, min: {b} }}\n    hi: {{ type: number, max: {b} }}\n    one: {{ type: number, enum: [{b}] }}\n    items: {{ type: array, items: {{ type: number, max: {b} }} }}\npipeline:\n  postprocessors:\n    - contract\n    - use: tool_calls\n      with:\n        allowed: [refund]\n        arguments:\n          refund:\n            amount: {{ type: number, max: {b} }}\n"
        ));
        for (number, ordering) in around(bound) {
            let output = format!(
                "{{\"lo\": {number}, \"hi\": {number}, \"one\": {number}, \"items\": [{number}]}}"
            );
            let report = pack.evaluate(&Input::new(output.clone()));
            let context = format!("{number} against {b} ({ordering:?})");
            let range = |path| codes_at(&report, path) == ["contract.range"];
            assert_eq!(range("/lo"), ordering == Ordering::Less, "min: {context}");
            assert_eq!(
                range("/hi"),
                ordering == Ordering::Greater,
                "max: {context}"
            );
            assert_eq!(
                range("/items/0"),
                ordering == Ordering::Greater,
                "items: {context}"
            );
            let one = codes_at(&report, "/one");
            assert_eq!(
                one.is_empty(),
                ordering == Ordering::Equal,
                "enum: {context}: {one:?}"
            );
            // Streamed, the same verdicts, as the value completes.
            let mut session = pack.stream();
            let mut flagged = Vec::new();
            for chunk in output.as_bytes().chunks(7) {
                for event in session.push(std::str::from_utf8(chunk).unwrap()) {
                    if let tribunal::StreamEvent::Violation(v) = event {
                        flagged.push(v.path.unwrap_or_default());
                    }
                }
            }
            assert_eq!(session.finish(), report, "{context}");
            let early = |path: &str| flagged.iter().any(|p| p == path);
            assert_eq!(
                early("/hi"),
                ordering == Ordering::Greater,
                "streamed max: {context}"
            );
            assert_eq!(
                early("/lo"),
                ordering == Ordering::Less,
                "streamed min: {context}"
            );
            // An argument rule of a tool call.
            let arguments = format!("{{\"amount\": {number}}}");
            let messages = json!([
                {"role": "user", "content": "refund it"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": arguments}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "assistant", "content": "{\"lo\": 500, \"hi\": -3, \"one\": -2.5, \"items\": []}"}
            ]);
            let report = pack.evaluate(&Input::from_messages(messages));
            let argument = report.issues.iter().any(|i| {
                i.path.as_deref() == Some("/messages/1/tool_calls/0/function/arguments/amount")
            });
            assert_eq!(
                argument,
                ordering == Ordering::Greater,
                "argument: {context}: {:?}",
                report.issues
            );
        }
    }
}

#[test]
fn integers_are_exact_and_numbers_finite_refuses_what_a_double_cannot_hold() {
    let (_dir, pack) = load(
        "name: ints\ncontract:\n  numbers: finite\n  fields:\n    n: { type: integer }\n    x: { type: number }\n",
    );
    for (n, integer) in [
        ("5", true),
        ("5.0", true),
        ("2.5e1", true),
        ("1.0000000000000000000001", false),
        ("5.5", false),
        ("1e-400", false),
        ("123456789012345678901234567890", true),
    ] {
        let report = pack.evaluate(&Input::new(format!("{{\"n\": {n}, \"x\": 1}}")));
        assert_eq!(
            codes_at(&report, "/n").is_empty(),
            integer,
            "{n}: {:?}",
            report.issues
        );
    }
    for (x, finite) in [
        ("1e308", true),
        ("1e309", false),
        ("-1e400", false),
        ("2e-400", true),
    ] {
        let report = pack.evaluate(&Input::new(format!("{{\"n\": 1, \"x\": {x}}}")));
        assert_eq!(
            codes_at(&report, "/x").is_empty(),
            finite,
            "{x}: {:?}",
            report.issues
        );
        let message = report
            .issues
            .first()
            .map(|i| i.message.clone())
            .unwrap_or_default();
        assert!(finite || message.contains("`numbers: finite`"), "{message}");
    }
    // Without `numbers: finite`, an unbounded number is any JSON number.
    let (_dir, any) = load("name: any\ncontract:\n  fields:\n    x: { type: number }\n");
    assert!(any.evaluate(&Input::new("{\"x\": 1e400}")).passed());
}

#[test]
fn a_number_past_a_bound_is_shown_as_written() {
    let (_dir, pack) = load("name: shown\ncontract:\n  fields:\n    c: { type: number, max: 1 }\n");
    for (written, shown) in [
        // (As the engine keeps it: the exponent's sign written out.)
        ("1e400", "got 1e+400"),
        ("1.0000000000000000000001", "got 1.0000000000000000000001"),
        ("1.50", "got 1.5"),
    ] {
        let report = pack.evaluate(&Input::new(format!("{{\"c\": {written}}}")));
        assert!(
            report.issues[0].message.ends_with(shown),
            "{}",
            report.issues[0].message
        );
    }
}

/// Each rule that compares two values (`enum`, `unique_items`, `no_repeat`,
/// expected tool-call arguments, `json_compare`'s `exact`, pack tests'
/// `expect`) agrees with the one equality on every number around each bound:
/// equal exactly when the number is a rewriting of the bound, nested in
/// arrays and objects whose members come in another order.
#[test]
fn every_rule_that_compares_values_uses_the_one_equality() {
    let (_dir, pack) = load(
        "name: equality\ncontract:\n  fields:\n    pair: { type: array }\n    set: { type: array, unique_items: true }\npipeline:\n  postprocessors:\n    - contract\n    - use: tool_calls\n      with:\n        no_repeat: true\n        match: any_order\n  metrics:\n    - use: json_compare\n      with:\n        field_strategies: { pair: EXACT, set: IGNORE }\n",
    );
    let bin = env!("CARGO_BIN_EXE_tribunal");
    let tests_dir = tempfile::tempdir().unwrap();
    let mut cases = String::from("cases:\n");
    let mut expected_outcomes = Vec::new();
    for bound in &BOUNDS {
        let b = bound.yaml;
        for (number, ordering) in around(bound) {
            let same = ordering == Ordering::Equal;
            let context = format!("{number} against {b}");
            // Nested, members in another order.
            let value = |n: &str| format!("[{{\"x\": [{n}], \"y\": null}}, {n}]");
            let swapped = |n: &str| format!("[{{\"y\": null, \"x\": [{n}]}}, {n}]");
            // unique_items, and json_compare's exact against `expected`.
            let output = format!(
                "{{\"pair\": {}, \"set\": [{}, {}]}}",
                swapped(&number),
                value(b),
                swapped(&number)
            );
            let expected: serde_json::Value =
                serde_json::from_str(&format!("{{\"pair\": {}, \"set\": []}}", value(b))).unwrap();
            let report = pack.evaluate(&Input::new(output).with_expected(expected));
            assert_eq!(
                codes_at(&report, "/set/1") == ["contract.unique-items"],
                same,
                "unique_items: {context}: {:?}",
                report.issues
            );
            let metric = serde_json::to_value(&report.metrics["json_compare"]).unwrap();
            let matched = &metric["details"]["fields"]["pair"]["matched"];
            assert_eq!(matched == true, same, "exact: {context}: {metric}");
            // no_repeat, and the expected trajectory's arguments.
            let call = |id: &str, n: &str| {
                json!({"id": id, "type": "function", "function": {"name": "refund",
                    "arguments": format!("{{\"amount\": {n}, \"lines\": {}}}", value(n))}})
            };
            let messages = json!([
                {"role": "user", "content": "refund it"},
                {"role": "assistant", "content": null, "tool_calls": [call("c1", b), call("c2", &number)]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "tool", "tool_call_id": "c2", "content": "ok"},
                {"role": "assistant", "content": "{\"pair\": [], \"set\": []}"}
            ]);
            let trajectory: serde_json::Value = serde_json::from_str(&format!(
                "{{\"tool_calls\": [{{\"name\": \"refund\", \"arguments\": {{\"lines\": {}, \"amount\": {number}}}}}, {{\"name\": \"refund\", \"arguments\": {{\"amount\": {b}, \"lines\": {}}}}}]}}",
                swapped(&number),
                swapped(b)
            ))
            .unwrap();
            let mut input = Input::from_messages(messages);
            input.expected = trajectory.into();
            let report = pack.evaluate(&input);
            let repeated = report.issues.iter().any(|i| i.code == "tool.repeated");
            assert_eq!(repeated, same, "no_repeat: {context}: {:?}", report.issues);
            let unmatched: Vec<_> = report
                .issues
                .iter()
                .filter(|i| i.code.starts_with("tool.") && i.code != "tool.repeated")
                .collect();
            assert!(
                unmatched.is_empty(),
                "expected arguments: {context}: {unmatched:?}"
            );
            // A pack test's `expect` (quoted where YAML could not hold the number).
            let yaml_number = if number.len() > 15 || number.contains(['e', 'E']) {
                None
            } else {
                Some(number.clone())
            };
            if let Some(n) = yaml_number {
                let _ = write!(
                    cases,
                    "  - name: \"{n} vs {b}\"\n    output: '{{\"pair\": [{b}], \"set\": []}}'\n    expect: {{ json: {{ pair: [{n}] }} }}\n"
                );
                expected_outcomes.push((format!("{n} vs {b}"), same));
            }
        }
    }
    // The pack tests, through the CLI.
    let pack_dir = tests_dir.path().join("equality");
    std::fs::create_dir_all(pack_dir.join("tests")).unwrap();
    std::fs::write(
        pack_dir.join("pack.yaml"),
        "name: equality\ntests: [tests/*.yaml]\ncontract:\n  fields:\n    pair: { type: array }\n    set: { type: array }\n",
    )
    .unwrap();
    std::fs::write(pack_dir.join("tests/cases.yaml"), &cases).unwrap();
    let out = std::process::Command::new(bin)
        .args(["test", pack_dir.to_str().unwrap(), "--verbose"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(expected_outcomes.len() > 20, "{}", expected_outcomes.len());
    for (name, same) in &expected_outcomes {
        let line = stdout
            .lines()
            .find(|l| l.ends_with(name.as_str()))
            .unwrap_or_else(|| panic!("no line for {name}:\n{stdout}"));
        assert_eq!(!line.contains("FAIL"), *same, "expect: {line}\n{stdout}");
    }
}

/// A YAML number that a double would change (`max: 1.0000000000000000000001`
/// read as `max: 1`) is a load error at its line and column, in a pack and in
/// a pack test's `expect`, not a bound or an expectation silently moved.
#[test]
fn a_yaml_number_a_double_would_change_is_a_load_error_at_its_place() {
    for number in [
        "1.0000000000000000000001",
        "0.30000000000000000001",
        "123456789012345678901234567890123456789012",
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pack.yaml"),
            format!(
                "name: rounded\ncontract:\n  fields:\n    c: {{ type: number, max: {number} }}\n"
            ),
        )
        .unwrap();
        let err = Pack::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("pack.yaml:4:29"), "{err}");
        assert!(err.contains(&format!("`{}", &number[..20])), "{err}");
        assert!(err.contains("would be read as"), "{err}");
        // Quoted, it is the text (and `max` then wants a number).
        std::fs::write(
            dir.path().join("pack.yaml"),
            "name: rounded\ncontract:\n  fields:\n    c: { type: number, max: 1 }\ntests: [t.yaml]\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("t.yaml"),
            format!("cases:\n  - name: n\n    output: '{{\"c\": 1}}'\n    expect: {{ json: {{ c: {number} }} }}\n"),
        )
        .unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tribunal"))
            .args(["test", dir.path().to_str().unwrap()])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{text}");
        assert!(text.contains("t.yaml:4:26"), "{text}");
    }
}
