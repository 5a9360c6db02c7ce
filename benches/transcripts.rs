//! What a transcript costs: records of 1, 10, 100 and 1,000 turns (each an
//! assistant turn with a tool call and its result), in the three formats,
//! judged by the travel-agent example pack (`tool_calls` with every key, and a
//! Rhai rule over `ctx.turns`). Prints µs per record, the ratio to one turn
//! and ns per turn: linear means the per-turn cost stays flat.
//!
//! Then what a decision on proposed calls costs against a check of the same
//! transcript (examples/packs/support-agent, `Pack::decide` against
//! `Pack::evaluate`, each of 1, 10, 100 and 1,000 earlier calls and a
//! proposal of two): the ratio is the figure (at most 1 is the promise).
//!
//! Then what the gate's second round costs (issue 66): the support-agent pack
//! with its data flow, `pattern`, `no_secrets` and `no_hidden_unicode`
//! against the same pack before them (benches/support/, as it was), each
//! judging finished conversations of 1, 10 and 50 calls: the ratio (at most
//! 2 is the promise) and ns per call (flat is linear).
//!
//! Run with `cargo bench --bench transcripts`.

#[path = "support/timing.rs"]
mod timing;

use serde_json::{json, Value};
use timing::time;
use tribunal::{Input, Pack};

/// A run of `turns` searches and their results, written in `format`.
fn transcript(turns: usize, format: &str) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "Find me a flight."})];
    for i in 0..turns {
        let id = format!("c{i}");
        let args = json!({"to": "OSL", "page": i});
        match format {
            "chat" => {
                messages.push(json!({"role": "assistant", "content": "Searching.", "tool_calls": [
                    {"id": id, "type": "function", "function": {"name": "search_flights", "arguments": args.to_string()}}]}));
                messages.push(json!({"role": "tool", "tool_call_id": id, "content": "none"}));
            }
            "anthropic" => {
                messages.push(json!({"role": "assistant", "content": [
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": id, "name": "search_flights", "input": args}]}));
                messages.push(json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": id, "content": "none"}]}));
            }
            _ => {
                messages.push(json!({"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "Searching."}]}));
                messages.push(json!({"type": "function_call", "call_id": id, "name": "search_flights", "arguments": args.to_string()}));
                messages
                    .push(json!({"type": "function_call_output", "call_id": id, "output": "none"}));
            }
        }
    }
    messages.push(json!({"role": "assistant", "content": "Nothing found."}));
    Value::Array(messages)
}

/// A support agent's run: `earlier` lookups and their results, then a
/// proposal of a lookup and a refund.
fn proposal(earlier: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "Order QX7P2K arrived broken."})];
    let call = |id: String, name: &str, args: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    for i in 0..earlier {
        let id = format!("c{i}");
        let order = format!("Q{i:05}");
        messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
            call(id.clone(), "lookup_order", json!({"order_id": order}))]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": "{\"status\": \"delivered\", \"total\": 42.5}"}));
    }
    messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
        call("p1".into(), "lookup_order", json!({"order_id": "QX7P2K"})),
        call("p2".into(), "refund", json!({"order_id": "QX7P2K", "amount": 42.5})),
    ]}));
    Value::Array(messages)
}

fn decisions_against_checks(root: &std::path::Path) {
    let pack =
        Pack::load(root.join("examples/packs/support-agent")).expect("the example pack loads");
    println!("\nproposal after   check        decide       decide ÷ check");
    for earlier in [1usize, 10, 100, 1000] {
        let input = Input::from_messages(proposal(earlier));
        let n = (2000 / earlier).max(5);
        let check = time(5, n, || {
            std::hint::black_box(pack.evaluate(&input));
        });
        let decide = time(5, n, || {
            std::hint::black_box(pack.decide(&input));
        });
        println!(
            "{earlier:>7} calls {:>10.1} µs {:>10.1} µs {:>12.2}",
            check.as_secs_f64() * 1e6,
            decide.as_secs_f64() * 1e6,
            decide.as_secs_f64() / check.as_secs_f64()
        );
    }
}

/// A finished support conversation of `calls` calls (lookups, refunds and
/// emails in turn, with their results), then the final answer.
fn conversation(calls: usize) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are the support agent of a shop. Be brief."}),
        json!({"role": "user", "content": "Order QX7P2K arrived broken — please refund it and write to ana@example.com."}),
    ];
    let call = |id: &str, name: &str, args: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    for i in 0..calls {
        let id = format!("c{i}");
        let (made, result) = match i % 3 {
            0 => (
                call(&id, "lookup_order", json!({"order_id": "QX7P2K"})),
                "{\"status\": \"delivered\", \"total\": 42.5, \"items\": [\"lamp\", \"cable\"]}"
                    .to_owned(),
            ),
            1 => (
                call(&id, "refund", json!({"order_id": "QX7P2K", "amount": 42.5})),
                "refunded 42.50 €".to_owned(),
            ),
            _ => (
                call(
                    &id,
                    "send_email",
                    json!({"to": "ana@example.com", "body": format!("Your refund {i} of 42.50 € is on its way. Kind regards, the shop.")}),
                ),
                "sent".to_owned(),
            ),
        };
        messages.push(json!({"role": "assistant", "content": "", "tool_calls": [made]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
    }
    messages.push(json!({"role": "assistant", "content": "{\"answer\": \"Refunded 42.50 for order QX7P2K.\", \"order_id\": \"QX7P2K\", \"refunded\": 42.5}"}));
    Value::Array(messages)
}

fn gate_round_two(root: &std::path::Path) {
    let full =
        Pack::load(root.join("examples/packs/support-agent")).expect("the example pack loads");
    let dir = std::env::temp_dir().join(format!("tribunal-bench-gate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    std::fs::copy(
        root.join("benches/support/support-agent-before-gate-round-2.yaml"),
        dir.join("pack.yaml"),
    )
    .expect("the earlier pack");
    let before = Pack::load(&dir).expect("the earlier pack loads");
    println!("\nconversation     before       now          now ÷ before   now per call");
    for calls in [1usize, 10, 50] {
        let input = Input::from_messages(conversation(calls));
        let n = (2000 / calls).max(20);
        let old = time(5, n, || {
            std::hint::black_box(before.evaluate(&input));
        });
        let new = time(5, n, || {
            std::hint::black_box(full.evaluate(&input));
        });
        println!(
            "{calls:>7} calls {:>10.1} µs {:>10.1} µs {:>14.2} {:>11.0} ns",
            old.as_secs_f64() * 1e6,
            new.as_secs_f64() * 1e6,
            new.as_secs_f64() / old.as_secs_f64(),
            new.as_secs_f64() * 1e9 / calls as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack =
        Pack::load(root.join("examples/packs/travel-agent")).expect("the example pack loads");
    println!("format       turns   per record    ÷ 1 turn   per turn");
    for format in ["chat", "anthropic", "responses"] {
        let mut one = None;
        for turns in [1usize, 10, 100, 1000] {
            let input = Input::from_messages(transcript(turns, format));
            let n = (2000 / turns).max(5);
            let took = time(5, n, || {
                std::hint::black_box(pack.evaluate(&input));
            });
            let base = *one.get_or_insert(took);
            println!(
                "{format:<10} {turns:>7} {:>10.1} µs {:>9.1}× {:>7.0} ns",
                took.as_secs_f64() * 1e6,
                took.as_secs_f64() / base.as_secs_f64(),
                took.as_secs_f64() * 1e9 / turns as f64
            );
        }
    }
    decisions_against_checks(root);
    gate_round_two(root);
}
