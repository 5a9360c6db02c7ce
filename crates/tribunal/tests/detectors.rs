//! `no_secrets` and `no_hidden_unicode` on every text a record carries: a
//! single output, each message by role, tool outputs, and every string of a
//! call's arguments (a proposed call that carries one is denied; the past's
//! findings are history); `in` chooses the places, and a misspelt place is a
//! load error.

use serde_json::{json, Value};
use tribunal::{Input, Pack, Verdict};

fn load(yaml: &str) -> (tempfile::TempDir, Result<Pack, tribunal::LoadErrors>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pack.yaml"), yaml).unwrap();
    let pack = Pack::load(dir.path());
    (dir, pack)
}

const KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const RLO: &str = "\u{202E}";

fn pack(with: &str) -> (tempfile::TempDir, Pack) {
    let (dir, pack) = load(&format!(
        "name: d\npipeline:\n  postprocessors:\n    - use: no_secrets\n      with: {with}\n    - use: no_hidden_unicode\n      with: {with}\n"
    ));
    (dir, pack.unwrap_or_else(|e| panic!("{e}")))
}

fn found(report: &tribunal::Report) -> Vec<(String, Option<String>)> {
    let mut found: Vec<(String, Option<String>)> = report
        .issues
        .iter()
        .map(|i| (i.code.to_string(), i.path.clone()))
        .collect();
    found.sort();
    found
}

/// A conversation with `text` in each place: the system, the user, a call's
/// arguments (nested), the tool's output and the final answer.
fn conversation(text: &str) -> Value {
    json!([
        {"role": "system", "content": format!("sys {text}")},
        {"role": "user", "content": format!("user {text}")},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "send", "arguments": json!({"to": "a@b.c", "parts": [{"body": format!("b {text}")}]}).to_string()}}]},
        {"role": "tool", "tool_call_id": "c1", "content": format!("tool {text}")},
        {"role": "assistant", "content": format!("done {text}")}
    ])
}

#[test]
fn each_place_is_looked_at_and_in_chooses_them() {
    let (_dir, everywhere) = pack("{}");
    for (code, text) in [("secret.found", KEY), ("unicode.hidden", RLO)] {
        // A single output.
        let report = everywhere.evaluate(&Input::new(format!("Here: {text}")));
        assert_eq!(found(&report), [(code.to_owned(), None)]);
        // Every place of a conversation, each at its own path.
        let report = everywhere.evaluate(&Input::from_messages(conversation(text)));
        let mut wanted: Vec<(String, Option<String>)> = [
            "/messages/0",
            "/messages/1",
            "/messages/2/tool_calls/0/function/arguments/parts/0/body",
            "/messages/3",
            "/messages/4",
        ]
        .iter()
        .map(|p| (code.to_owned(), Some((*p).to_owned())))
        .collect();
        wanted.sort();
        assert_eq!(found(&report), wanted, "{code}");
        // No secret, no hidden character: nothing.
        let clean = everywhere.evaluate(&Input::from_messages(conversation("plain café 👨‍👩‍👧")));
        assert_eq!(found(&clean), []);
    }
    // `in` chooses.
    let (_dir, arguments_only) = pack("{ in: [arguments, tool] }");
    let report = arguments_only.evaluate(&Input::from_messages(conversation(KEY)));
    let paths: Vec<Option<String>> = found(&report)
        .into_iter()
        .filter(|(code, _)| code == "secret.found")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        paths,
        [
            Some("/messages/2/tool_calls/0/function/arguments/parts/0/body".to_owned()),
            Some("/messages/3".to_owned())
        ]
    );
    let report = arguments_only.evaluate(&Input::new(KEY));
    assert!(report.issues.is_empty(), "{:?}", report.issues);
    // The secret itself is never in the message.
    let report = everywhere.evaluate(&Input::new(KEY));
    assert!(
        !report.issues[0].message.contains(&KEY[4..]),
        "{}",
        report.issues[0].message
    );
}

#[test]
fn a_proposed_call_that_carries_a_secret_is_denied_and_the_past_is_history() {
    let (_dir, pack) = pack("{}");
    let mut messages = conversation("nothing");
    // The past leaked a secret; the proposal's second call carries one too.
    messages[1]["content"] = json!(format!("my key is {KEY}"));
    let last = messages.as_array_mut().unwrap();
    last.pop();
    last.push(json!({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "send", "arguments": "{\"to\": \"x@y.z\", \"body\": \"hello\"}"}},
        {"id": "c3", "type": "function", "function": {"name": "send", "arguments": json!({"to": "x@y.z", "body": format!("key {KEY}{RLO}")}).to_string()}}
    ]}));
    let decided = pack.decide(&Input::from_messages(messages));
    let verdicts: Vec<Verdict> = decided.decisions.iter().map(|d| d.decision).collect();
    assert_eq!(
        verdicts,
        [Verdict::Allow, Verdict::Deny],
        "{}",
        decided.to_value()
    );
    let codes: Vec<String> = decided.decisions[1]
        .issues
        .iter()
        .map(|i| i.code.to_string())
        .collect();
    assert_eq!(codes, ["secret.found", "unicode.hidden"]);
    assert_eq!(decided.history.len(), 1, "{}", decided.to_value());
    assert_eq!(decided.history[0].path.as_deref(), Some("/messages/1"));
}

#[test]
fn a_misspelt_place_or_no_place_is_a_load_error() {
    for (with, says) in [
        ("{ in: [argumets] }", "argumets"),
        ("{ in: [] }", "`in` is empty"),
    ] {
        let yaml = format!(
            "name: d\npipeline:\n  postprocessors:\n    - use: no_secrets\n      with: {with}\n"
        );
        let (_dir, loaded) = load(&yaml);
        let error = loaded.expect_err("a load error").to_string();
        assert!(error.contains(says), "{error}");
        assert!(error.contains("pack.yaml:"), "{error}");
    }
}
