//! `tool_calls`' data flow, with no script: an argument bounded by an earlier
//! tool's output (exactly, and closed when there is no such output), tools
//! forbidden once an output matched a pattern, and argument values that must
//! come from the messages of a role; each judged on a proposed call by what
//! came before it.

use serde_json::{json, Value};
use tribunal::{Input, Pack, Verdict};

const PACK: &str = r#"name: flow
pipeline:
  postprocessors:
    - use: tool_calls
      with:
        allowed: [lookup_order, refund, send_email]
        arguments:
          refund:
            amount: { type: number, required: true, min: 0.01, max: { output_of: lookup_order, pointer: /total } }
        after_output: [{ tool: refund, matches: "(?i)error", forbid: [refund] }]
        values_from: { send_email.to: { role: user } }
"#;

fn pack() -> (tempfile::TempDir, Pack) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pack.yaml"), PACK).unwrap();
    let pack = Pack::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    (dir, pack)
}

/// A conversation: the user's words, then `(tool, arguments, output)` steps,
/// then the proposed call.
fn proposal(user: &str, steps: &[(&str, Value, &str)], proposed: &(&str, Value)) -> Value {
    let mut messages = vec![json!({"role": "user", "content": user})];
    for (i, (tool, arguments, output)) in steps.iter().enumerate() {
        let id = format!("c{i}");
        messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
    }
    messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
        {"id": "p", "type": "function", "function": {"name": proposed.0, "arguments": proposed.1.to_string()}}]}));
    Value::Array(messages)
}

fn decide(pack: &Pack, messages: Value) -> (Verdict, Vec<String>) {
    let decided = pack.decide(&Input::from_messages(messages));
    assert_eq!(decided.error, None, "{}", decided.to_value());
    let call = &decided.decisions[0];
    (
        call.decision,
        call.issues.iter().map(|i| i.code.to_string()).collect(),
    )
}

#[test]
fn a_bound_from_an_earlier_output_holds_exactly_and_fails_closed() {
    let (_dir, pack) = pack();
    let lookup = |total: &str| {
        (
            "lookup_order",
            json!({"order_id": "QX7P2K"}),
            format!("{{\"status\": \"delivered\", \"total\": {total}}}"),
        )
    };
    let refund = |amount: &str| {
        (
            "refund",
            serde_json::from_str::<Value>(&format!("{{\"amount\": {amount}}}")).unwrap(),
        )
    };
    let bound = |total: &str, amount: &str| {
        let (tool, arguments, output) = lookup(total);
        decide(
            &pack,
            proposal(
                "Refund QX7P2K",
                &[(tool, arguments, &output)],
                &refund(amount),
            ),
        )
    };
    let allow = (Verdict::Allow, vec![]);
    let past = (Verdict::Deny, vec!["tool.output-bound".to_owned()]);
    assert_eq!(bound("42.5", "42.5"), allow);
    assert_eq!(bound("42.5", "42.50"), allow);
    assert_eq!(bound("42.5", "4.25e1"), allow);
    assert_eq!(bound("42.5", "42.51"), past);
    assert_eq!(bound("42.5", "42.5000000000000000001"), past);
    assert_eq!(bound("42.5", "1e400"), past);
    assert_eq!(bound("1e400", "1e399"), allow);
    // The latest output counts.
    let (t, a, first) = lookup("10");
    let (_, _, second) = lookup("50");
    let steps = [(t, a.clone(), first.as_str()), (t, a, second.as_str())];
    assert_eq!(
        decide(&pack, proposal("Refund", &steps, &refund("40"))),
        allow
    );
    // Fails closed: no output to bound it, or no number where the pointer points.
    assert_eq!(decide(&pack, proposal("Refund", &[], &refund("1"))), past);
    for output in ["not json", "{\"total\": \"42.5\"}", "{\"sum\": 42.5}"] {
        let steps = [("lookup_order", json!({"order_id": "QX7P2K"}), output)];
        assert_eq!(
            decide(&pack, proposal("Refund", &steps, &refund("1"))),
            past,
            "{output}"
        );
    }
}

#[test]
fn a_failed_output_forbids_what_after_output_lists() {
    let (_dir, pack) = pack();
    let lookup = ("lookup_order", json!({"order_id": "Q"}), "{\"total\": 100}");
    let refund = json!({"amount": 5});
    for (output, expected) in [
        (
            "ERROR: card declined",
            (Verdict::Deny, vec!["tool.after-output".to_owned()]),
        ),
        ("refunded", (Verdict::Allow, vec![])),
    ] {
        let steps = [lookup.clone(), ("refund", refund.clone(), output)];
        assert_eq!(
            decide(
                &pack,
                proposal("Refund", &steps, &("refund", json!({"amount": 6})))
            ),
            expected,
            "{output}"
        );
    }
    // The whole conversation is judged the same way, at the second refund.
    let mut messages = proposal(
        "Refund",
        &[lookup, ("refund", refund, "Error: timeout")],
        &("refund", json!({"amount": 6})),
    );
    messages
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "p", "content": "ok"}));
    let report = pack.evaluate(&Input::from_messages(messages));
    let after: Vec<_> = report
        .issues
        .iter()
        .filter(|i| i.code == "tool.after-output")
        .map(|i| i.path.clone().unwrap_or_default())
        .collect();
    assert_eq!(after, ["/messages/5/tool_calls/0"]);
}

#[test]
fn a_value_must_come_from_the_messages_of_its_role() {
    let (_dir, pack) = pack();
    let email = |to: &str| ("send_email", json!({"to": to, "body": "done"}));
    let user = "Refund QX7P2K and write to ana@example.com please.";
    assert_eq!(
        decide(&pack, proposal(user, &[], &email("ana@example.com"))),
        (Verdict::Allow, vec![])
    );
    assert_eq!(
        decide(&pack, proposal(user, &[], &email("eve@evil.test"))),
        (Verdict::Deny, vec!["tool.value-not-from".to_owned()])
    );
    // A tool's output is not the user's words.
    let steps = [(
        "lookup_order",
        json!({"order_id": "Q"}),
        "{\"total\": 1, \"contact\": \"eve@evil.test\"}",
    )];
    assert_eq!(
        decide(&pack, proposal("Refund Q", &steps, &email("eve@evil.test"))).0,
        Verdict::Deny
    );
}
