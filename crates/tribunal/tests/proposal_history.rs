//! A decision is about the proposed call: on generated conversations whose
//! past breaks the support-agent pack's rules in every way, each proposed
//! call is allowed or denied exactly as an independent reading of the rules
//! says for that call alone (its tool, its arguments, its place in `order`,
//! its count, its repetition), and the past's issues come back as
//! `history`, denying nothing.

use serde_json::{json, Value};
use tribunal::{Input, Pack, Verdict};

#[path = "../../../tests/support/rng.rs"]
mod rng;
use rng::Rng;

/// One call: its tool, its arguments' text, and whether those arguments
/// break the tool's argument rules.
#[derive(Clone)]
struct Call {
    name: &'static str,
    arguments: String,
    bad_arguments: bool,
    /// The refund's amount, when it is a number.
    amount: Option<f64>,
    /// What the tool answered (for a call of the past).
    output: String,
}

fn random_call(rng: &mut Rng) -> Call {
    let name = [
        "lookup_order",
        "refund",
        "send_email",
        "delete_account",
        "lookup",
    ][rng.below(5)];
    // Few distinct argument values, so that repeats happen.
    let order = ["QX7P2K", "AB12CD", "QX7P"][rng.below(3)];
    let (arguments, bad) = match name {
        "lookup_order" => (format!("{{\"order_id\": \"{order}\"}}"), order.len() != 6),
        "refund" => {
            // One amount written three ways, one too large, one not a number.
            let amount = ["10", "10.0", "1e1", "900", "\"ten\""][rng.below(5)];
            let bad = order.len() != 6 || amount.starts_with('"');
            (
                format!("{{\"order_id\": \"{order}\", \"amount\": {amount}}}"),
                bad,
            )
        }
        "send_email" => {
            if rng.below(4) == 0 {
                ("{\"to\": \"a@b.c\"}".to_owned(), true)
            } else {
                ("{\"body\": \"done\", \"to\": \"a@b.c\"}".to_owned(), false)
            }
        }
        _ => ("{}".to_owned(), false),
    };
    let amount = if name == "refund" && !arguments.contains("ten") {
        Some(if arguments.contains("900") {
            900.0
        } else {
            10.0
        })
    } else {
        None
    };
    // Outputs: a lookup's total (or none), a refund that failed or not.
    let output = match name {
        "lookup_order" => [
            "{\"total\": 5}",
            "{\"total\": 50}",
            "{\"total\": 1000}",
            "not found",
        ][rng.below(4)],
        "refund" => ["ok", "Error: card declined"][rng.below(2)],
        _ => "ok",
    };
    Call {
        name,
        arguments,
        bad_arguments: bad,
        amount,
        output: output.to_owned(),
    }
}

/// The total the latest lookup answered before call `k` gave (`None`: none,
/// or no total). Only the past's calls (`answered` of them) have answers.
fn latest_total(calls: &[Call], k: usize, answered: usize) -> Option<f64> {
    let last = calls[..k.min(answered)]
        .iter()
        .rev()
        .find(|c| c.name == "lookup_order")?;
    let output: Value = serde_json::from_str(&last.output).ok()?;
    output["total"].as_f64()
}

/// Whether call `k` of `calls`, made after the ones before it, breaks a
/// rule of the pack by itself (as a proposed call is judged).
fn breaks(calls: &[Call], k: usize, user_gave_the_address: bool, answered: usize) -> bool {
    let call = &calls[k];
    let before = &calls[..k];
    let same_value = |a: &str, b: &str| {
        let (a, b): (Value, Value) = (
            serde_json::from_str(a).unwrap(),
            serde_json::from_str(b).unwrap(),
        );
        // (Numbers by value: 10, 10.0 and 1e1 are one amount.)
        let norm = |v: Value| -> Value {
            match v {
                Value::Object(map) => Value::Object(
                    map.into_iter()
                        .map(|(k, v)| (k, v.as_f64().map_or(v.clone(), |f| json!(f))))
                        .collect(),
                ),
                other => other,
            }
        };
        norm(a) == norm(b)
    };
    call.name == "delete_account"
        || !["lookup_order", "refund", "send_email"].contains(&call.name)
        || (call.name == "refund" && !before.iter().any(|c| c.name == "lookup_order"))
        || (call.name == "refund" && before.iter().filter(|c| c.name == "refund").count() >= 1)
        || k >= 8
        || before
            .iter()
            .any(|c| c.name == call.name && same_value(&c.arguments, &call.arguments))
        || call.bad_arguments
        // The data flow: the amount at most the latest lookup's total (none:
        // closed), no refund after one that failed, an address the user gave.
        || call
            .amount
            .is_some_and(|amount| {
                latest_total(calls, k, answered).is_none_or(|total| amount > total)
            })
        || (call.name == "refund"
            && before[..k.min(answered)]
                .iter()
                .any(|c| c.name == "refund" && c.output.contains("Error")))
        || (call.name == "send_email" && !user_gave_the_address)
}

fn transcript(past: &[Call], proposed: &[Call], user_gave_the_address: bool) -> Value {
    let as_call = |(i, c): (usize, &Call)| {
        json!({"id": format!("c{i}"), "type": "function",
            "function": {"name": c.name, "arguments": c.arguments}})
    };
    let user = if user_gave_the_address {
        "Sort out order QX7P2K, and write to a@b.c."
    } else {
        "Sort out order QX7P2K."
    };
    let mut messages = vec![json!({"role": "user", "content": user})];
    for (i, call) in past.iter().enumerate() {
        messages
            .push(json!({"role": "assistant", "content": "", "tool_calls": [as_call((i, call))]}));
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": call.output}));
    }
    let calls: Vec<Value> = proposed
        .iter()
        .enumerate()
        .map(|(i, c)| as_call((past.len() + i, c)))
        .collect();
    messages.push(json!({"role": "assistant", "content": "", "tool_calls": calls}));
    Value::Array(messages)
}

#[test]
fn each_proposed_call_is_decided_by_its_own_issues_and_the_past_is_history() {
    let pack = Pack::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/packs/support-agent"
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut denied, mut allowed_after_a_bad_past, mut past_over_limit) = (0, 0, 0);
    for case in 0..600 {
        let past: Vec<Call> = (0..rng.below(9)).map(|_| random_call(&mut rng)).collect();
        let proposed: Vec<Call> = (0..=rng.below(3)).map(|_| random_call(&mut rng)).collect();
        let all: Vec<Call> = past.iter().chain(&proposed).cloned().collect();
        let address = rng.below(2) == 0;
        let messages = transcript(&past, &proposed, address);
        let decided = pack.decide(&Input::from_messages(messages.clone()));
        let context = format!("case {case}: {messages}\n{}", decided.to_value());
        assert_eq!(decided.error, None, "{context}");
        assert_eq!(decided.decisions.len(), proposed.len(), "{context}");
        let bad_past = (0..past.len()).any(|k| breaks(&all, k, address, past.len()));
        for (i, decision) in decided.decisions.iter().enumerate() {
            let k = past.len() + i;
            let expected = if breaks(&all, k, address, past.len()) {
                Verdict::Deny
            } else {
                Verdict::Allow
            };
            assert_eq!(decision.decision, expected, "call {i}: {context}");
            // Every issue of a decision is at the call itself.
            assert!(
                decision.issues.iter().all(|issue| issue
                    .path
                    .as_deref()
                    .is_some_and(|p| p.starts_with(&decision.path))),
                "{context}"
            );
            denied += usize::from(expected == Verdict::Deny);
            allowed_after_a_bad_past += usize::from(expected == Verdict::Allow && bad_past);
            if decision.name == "refund" && past.iter().filter(|c| c.name == "refund").count() >= 2
            {
                past_over_limit += 1;
            }
        }
        // The past's issues are history, apart; nothing else is left over.
        assert_eq!(decided.history.is_empty(), !bad_past, "{context}");
        assert!(
            decided
                .history
                .iter()
                .all(|issue| issue.turn.is_some_and(|t| t < past.len() * 2 + 1)),
            "{context}"
        );
        assert!(decided.other_issues.is_empty(), "{context}");
    }
    // The class is covered: denials, allowances despite a broken past, and
    // refunds proposed when the past was already over the limit.
    assert!(denied > 200, "{denied}");
    assert!(allowed_after_a_bad_past > 50, "{allowed_after_a_bad_past}");
    assert!(past_over_limit > 10, "{past_over_limit}");
}
