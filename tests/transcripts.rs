//! Agent transcripts as input: a record's `messages` in the OpenAI Chat, the
//! Anthropic Messages and the OpenAI Responses format give the same result
//! record (apart from paths), components read them as `ctx.turns`, and what
//! cannot be read is an issue at its path, never a lost record.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use tribunal::{Input, Pack};

/// A pack whose Rhai metric reads the turns: the calls, their arguments, and
/// whether the agent confirmed before it booked.
fn trajectory_pack(dir: &Path) -> Pack {
    std::fs::write(
        dir.join("pack.yaml"),
        "name: trajectory\ncomponents: [steps.yaml]\npipeline:\n  metrics:\n    - use: steps\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("steps.yaml"),
        "kind: metric\nname: steps\nversion: 1.0.0\nimplementation:\n  script: steps.rhai\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("steps.rhai"),
        r#"fn evaluate(ctx) {
    let issues = [];
    let calls = [];
    let results = 0;
    for turn in ctx.turns {
        for tc in turn.tool_calls {
            calls.push(tc.name);
            if tc.name == "book_flight" && (type_of(tc.arguments) != "map" || tc.arguments.flight == ()) {
                issues.push(#{ message: "booked without a flight", path: tc.path });
            }
        }
        if turn.role == "tool" { results += 1; }
    }
    #{
        score: if calls.contains("book_flight") { 1.0 } else { 0.0 },
        issues: issues,
        details: #{ calls: calls, results: results, turns: ctx.turns.len(), last: ctx.output },
    }
}
"#,
    )
    .unwrap();
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn booking() -> [Value; 3] {
    let chat = json!([
        {"role": "system", "content": "You book flights."},
        {"role": "user", "content": "Book me a flight to Oslo."},
        {"role": "assistant", "content": "Searching.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_flights", "arguments": "{\"to\": \"OSL\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "SK1"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "book_flight", "arguments": "{\"seat\": \"12A\"}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "booked"},
        {"role": "assistant", "content": "Booked."}
    ]);
    let anthropic = json!([
        {"role": "system", "content": "You book flights."},
        {"role": "user", "content": "Book me a flight to Oslo."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "c1", "name": "search_flights", "input": {"to": "OSL"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "SK1"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "book_flight", "input": {"seat": "12A"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2", "content": "booked"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Booked."}]}
    ]);
    let responses = json!([
        {"role": "developer", "content": "You book flights."},
        {"role": "user", "content": "Book me a flight to Oslo."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Searching."}]},
        {"type": "function_call", "call_id": "c1", "name": "search_flights", "arguments": "{\"to\": \"OSL\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "SK1"},
        {"type": "function_call", "call_id": "c2", "name": "book_flight", "arguments": "{\"seat\": \"12A\"}"},
        {"type": "function_call_output", "call_id": "c2", "output": "booked"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Booked."}]}
    ]);
    [chat, anthropic, responses]
}

/// The result record with the paths of its issues and turns left out.
fn without_paths(mut record: Value) -> Value {
    for issue in record["issues"].as_array_mut().unwrap() {
        issue.as_object_mut().unwrap().remove("path");
    }
    if let Some(turns) = record["turns"].as_array_mut() {
        for turn in turns {
            turn.as_object_mut().unwrap().remove("path");
            for issue in turn["issues"].as_array_mut().unwrap() {
                issue.as_object_mut().unwrap().remove("path");
            }
        }
    }
    record
}

/// A pack of `pack_yaml` (its `name:` first) with Rhai components, each
/// `(name, kind, script)`.
fn scripted_pack(dir: &Path, pack_yaml: &str, scripts: &[(&str, &str, &str)]) -> Pack {
    let names: Vec<String> = scripts
        .iter()
        .map(|(name, _, _)| format!("{name}.yaml"))
        .collect();
    std::fs::write(
        dir.join("pack.yaml"),
        format!(
            "name: scoped\ncomponents: [{}]\n{pack_yaml}",
            names.join(", ")
        ),
    )
    .unwrap();
    for (name, kind, script) in scripts {
        std::fs::write(
            dir.join(format!("{name}.yaml")),
            format!("kind: {kind}\nname: {name}\nimplementation:\n  script: {name}.rhai\n"),
        )
        .unwrap();
        std::fs::write(dir.join(format!("{name}.rhai")), script).unwrap();
    }
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// A metric that scores a turn that says nothing 0 (with a warning), any
/// other 1, and records which turn and text it saw.
const SAYS_SOMETHING: &str = r#"fn evaluate(ctx) {
    if ctx.output == "" {
        return #{ score: 0.0, issues: [#{ message: "said nothing", severity: "warning" }],
                  details: #{ turn: ctx.turn } };
    }
    #{ score: 1.0, details: #{ turn: ctx.turn, text: ctx.output } }
}
"#;

#[test]
fn a_metric_runs_on_each_assistant_turn_and_its_aggregate_is_the_score() {
    // The booking's assistant turns are 2 ("Searching."), 4 (calls only, no
    // text) and 6 ("Booked."): scores 1, 0, 1.
    for (aggregate, score) in [
        ("min", 0.0),
        ("mean", 2.0 / 3.0),
        ("all", 0.0),
        ("last", 1.0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pack = scripted_pack(
            dir.path(),
            &format!("pipeline:\n  metrics:\n    - use: says\n      scope: assistant_turns\n      aggregate: {aggregate}\n"),
            &[("says", "metric", SAYS_SOMETHING)],
        );
        let records: Vec<Value> = booking()
            .into_iter()
            .map(|messages| pack.evaluate(&Input::from_messages(messages)).to_value())
            .collect();
        let record = &records[0];
        assert_eq!(record["score"], json!(score), "{aggregate}: {record}");
        let metric = &record["metrics"]["says"];
        assert_eq!(metric["details"]["aggregate"], aggregate);
        assert_eq!(
            metric["details"]["turns"],
            json!([
                {"turn": 2, "score": 1.0, "details": {"turn": 2, "text": "Searching."}},
                {"turn": 4, "score": 0.0, "details": {"turn": 4}},
                {"turn": 6, "score": 1.0, "details": {"turn": 6, "text": "Booked."}}
            ])
        );
        // The warning is the record's, and its turn's.
        assert_eq!(record["issues"][0]["message"], "said nothing");
        assert_eq!(record["issues"][0]["turn"], 4);
        let turns = record["turns"].as_array().unwrap();
        let roles: Vec<&str> = turns.iter().map(|t| t["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            [
                "system",
                "user",
                "assistant",
                "tool",
                "assistant",
                "tool",
                "assistant"
            ]
        );
        assert_eq!(turns[4]["score"], 0.0);
        assert_eq!(turns[4]["status"], "PASS", "a warning only");
        assert_eq!(turns[4]["issues"][0]["message"], "said nothing");
        assert_eq!(turns[2]["score"], 1.0);
        assert_eq!(turns[0]["score"], Value::Null);
        assert_eq!(turns[0]["issues"], json!([]));
        // The same in every format (the paths apart).
        for other in &records[1..] {
            assert_eq!(without_paths(other.clone()), without_paths(record.clone()));
        }
    }
}

#[test]
fn a_step_with_scope_last_runs_once_on_the_last_assistant_turn() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  postprocessors:\n    - use: reference\n      scope: last\n  metrics:\n    - use: seen\n      scope: last\n",
        &[
            (
                "reference",
                "postprocessor",
                r#"fn evaluate(ctx) {
    if !ctx.output.contains("reference") { [#{ message: `no reference in "${ctx.output}"` }] } else { [] }
}
"#,
            ),
            ("seen", "metric", SAYS_SOMETHING),
        ],
    );
    for messages in booking() {
        let record = pack.evaluate(&Input::from_messages(messages)).to_value();
        assert_eq!(record["issues"].as_array().unwrap().len(), 1, "{record}");
        assert_eq!(
            record["issues"][0]["message"],
            "no reference in \"Booked.\""
        );
        assert_eq!(record["issues"][0]["turn"], 6);
        assert_eq!(record["issues"][0]["path"], Value::Null);
        assert_eq!(record["status"], "NEEDS_IMPROVEMENT");
        assert_eq!(record["turns"][6]["status"], "NEEDS_IMPROVEMENT");
        assert_eq!(record["turns"][6]["score"], 1.0);
        assert_eq!(record["turns"][2]["status"], "PASS");
        assert_eq!(
            record["metrics"]["seen"]["details"]["turns"],
            json!([{"turn": 6, "score": 1.0, "details": {"turn": 6, "text": "Booked."}}])
        );
    }
}

#[test]
fn the_contract_can_hold_every_assistant_turn_and_each_turn_is_extracted_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: replies\ncontract:\n  fields:\n    answer: { type: string, required: true }\npipeline:\n  postprocessors:\n    - use: contract\n      scope: assistant_turns\n",
    )
    .unwrap();
    let pack = Pack::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let messages = json!([
        {"role": "user", "content": "Two questions."},
        {"role": "assistant", "content": "{\"answer\": \"one\"}"},
        {"role": "user", "content": "And the second?"},
        {"role": "assistant", "content": "Sure: ```json\n{\"reply\": \"two\"}\n```"},
        {"role": "assistant", "content": "{\"answer\": \"three\"}"}
    ]);
    let record = pack.evaluate(&Input::from_messages(messages)).to_value();
    let issues = record["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{record}");
    assert_eq!(issues[0]["code"], "contract.missing-field");
    assert_eq!(issues[0]["turn"], 3);
    assert_eq!(issues[0]["path"], "/answer");
    assert_eq!(record["turns"][3]["status"], "NEEDS_IMPROVEMENT");
    assert_eq!(record["turns"][1]["status"], "PASS");
    assert_eq!(record["turns"][4]["status"], "PASS");
    // The record's own JSON is its output's: the last assistant turn's.
    assert_eq!(record["json"], json!({"answer": "three"}));
    // The re-ask text says which turn an issue is about.
    let feedback = record["feedback"].as_str().unwrap();
    assert!(
        feedback.starts_with(
            "Previous issues: ['assistant turn 2: missing required field `answer`']\n\nOUTPUT FORMAT"
        ),
        "{feedback}"
    );
}

#[test]
fn on_a_record_without_messages_every_scope_is_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  metrics:\n    - use: says\n      scope: assistant_turns\n      aggregate: min\n",
        &[("says", "metric", SAYS_SOMETHING)],
    );
    let record = pack.evaluate(&Input::new("plain")).to_value();
    assert_eq!(record["score"], 1.0);
    assert_eq!(
        record["metrics"]["says"]["details"],
        json!({"turn": null, "text": "plain"})
    );
    assert!(record.get("turns").is_none(), "{record}");
    // A transcript without an assistant turn has nothing for the metric.
    let record = pack
        .evaluate(&Input::from_messages(
            json!([{"role": "user", "content": "hi"}]),
        ))
        .to_value();
    assert_eq!(
        record["metrics"]["says"]["skipped"],
        "the transcript has no assistant turn"
    );
    assert_eq!(record["score"], Value::Null);
    assert_eq!(record["turns"][0]["role"], "user");
}

#[test]
fn a_script_places_its_issues_at_turns_and_a_turn_out_of_range_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  metrics: [calls]\n",
        &[(
            "calls",
            "metric",
            r#"fn evaluate(ctx) {
    let issues = [];
    for (turn, i) in ctx.turns ?? [] {
        for tc in turn.tool_calls { issues.push(#{ message: tc.name, path: tc.path, turn: i }); }
    }
    if ctx.meta != () && ctx.meta.bad == true { issues.push(#{ message: "nowhere", turn: 99 }); }
    #{ score: 1.0, issues: issues }
}
"#,
        )],
    );
    let [chat, ..] = booking();
    let record = pack
        .evaluate(&Input::from_messages(chat.clone()))
        .to_value();
    assert_eq!(
        record["turns"][2]["issues"][0]["message"], "search_flights",
        "{record}"
    );
    assert_eq!(record["turns"][4]["issues"][0]["message"], "book_flight");
    assert_eq!(record["turns"][4]["status"], "NEEDS_IMPROVEMENT");
    let bad = Input::from_messages(chat).with_meta(json!({"bad": true}));
    let record = pack.evaluate(&bad).to_value();
    assert_eq!(record["status"], "ERROR");
    let error = record["error"].as_str().unwrap();
    assert!(
        error.contains("`turn` is 99, but the record has 7 turns (0 to 6)"),
        "{error}"
    );
}

#[test]
fn scope_and_aggregate_are_checked_when_the_pack_loads() {
    for (step, expected) in [
        (
            "  postprocessors:\n    - use: says\n      aggregate: min\n",
            "only metrics are scored per turn",
        ),
        (
            "  metrics:\n    - use: says\n      scope: last\n      aggregate: min\n",
            "only a metric with `scope: assistant_turns` has (its scope is `last`)",
        ),
        (
            "  metrics:\n    - use: says\n      scope: assistant_turn\n",
            "assistant_turns",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pack.yaml"),
            format!("name: bad\ncomponents: [says.yaml]\npipeline:\n{step}"),
        )
        .unwrap();
        let kind = if step.contains("postprocessors") {
            "postprocessor"
        } else {
            "metric"
        };
        std::fs::write(
            dir.path().join("says.yaml"),
            format!("kind: {kind}\nname: says\nimplementation:\n  script: says.rhai\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("says.rhai"), SAYS_SOMETHING).unwrap();
        let err = Pack::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains(expected), "{step}: {err}");
        assert!(
            err.contains("pack.yaml:"),
            "{step}: the error names its place: {err}"
        );
    }
}

#[test]
fn the_same_conversation_in_three_formats_gives_the_same_record() {
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_pack(dir.path());
    let records: Vec<Value> = booking()
        .into_iter()
        .map(|messages| pack.evaluate(&Input::from_messages(messages)).to_value())
        .collect();
    let first = &records[0];
    assert_eq!(first["status"], "NEEDS_IMPROVEMENT", "{first}");
    assert_eq!(
        first["metrics"]["steps"]["details"],
        json!({"calls": ["search_flights", "book_flight"], "results": 2, "turns": 7, "last": "Booked."})
    );
    assert_eq!(first["issues"][0]["message"], "booked without a flight");
    assert_eq!(first["issues"][0]["path"], "/messages/4/tool_calls/0");
    assert_eq!(records[1]["issues"][0]["path"], "/messages/4/content/0");
    assert_eq!(records[2]["issues"][0]["path"], "/messages/5");
    for other in &records[1..] {
        assert_eq!(without_paths(other.clone()), without_paths(first.clone()));
    }
}

#[test]
fn a_transcript_record_is_read_from_jsonl_and_its_problems_are_issues() {
    let dir = tempfile::tempdir().unwrap();
    trajectory_pack(dir.path());
    let [chat, anthropic, responses] = booking();
    let broken = json!([
        {"content": "who am I"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c9", "function": {"name": "book_flight", "arguments": "{\"flight\": SK1"}}]},
        {"role": "tool", "tool_call_id": "nope", "content": "?"}
    ]);
    let lines = [
        json!({"id": "chat", "messages": chat}),
        json!({"id": "anthropic", "messages": anthropic}),
        json!({"id": "responses", "messages": responses}),
        json!({"id": "both", "output": "Done, see above.", "messages": chat}),
        json!({"id": "broken", "messages": broken}),
        json!({"id": "not a list", "messages": "hello"}),
        json!({"id": "neither"}),
    ];
    let data = dir.path().join("data.jsonl");
    std::fs::write(
        &data,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .args(["eval"])
        .arg(dir.path())
        .arg("--input")
        .arg(&data)
        .output()
        .unwrap();
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), lines.len(), "every record has a result");
    for record in &records[..3] {
        assert_eq!(record["status"], "NEEDS_IMPROVEMENT", "{record}");
        assert_eq!(record["metrics"]["steps"]["details"]["turns"], 7);
    }
    // With an output too, the output is what is judged; the turns still read.
    assert_eq!(
        records[3]["metrics"]["steps"]["details"]["last"],
        "Done, see above."
    );
    let codes: Vec<(&str, &str)> = records[4]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["code"].as_str().unwrap(),
                i["path"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("transcript.no-role", "/messages/0"),
            (
                "transcript.arguments-not-json",
                "/messages/1/tool_calls/0/function/arguments"
            ),
            ("transcript.orphan-result", "/messages/2"),
            ("steps", "/messages/1/tool_calls/0"),
        ],
        "{}",
        records[4]
    );
    assert_eq!(records[5]["issues"][0]["code"], "transcript.invalid");
    assert_eq!(records[6]["status"], "ERROR");
    assert_eq!(records[6]["error"], "line 7: record has no `output` field (nor `messages`, an agent's transcript judged on its last assistant turn)");
}

/// `text` with every JSON Pointer into the record (`/messages/…`) written as
/// `<path>`: the one thing a format changes in an issue's message.
fn paths_hidden(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/messages/") {
        out.push_str(&rest[..at]);
        out.push_str("<path>");
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || c == ')' || c == ',' || c == ';')
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The generated data set (`examples/data/generate_travel_agent.py`): at least
/// 200 records, each run in every format it can be written in; the formats of a
/// run get the same status, score, metrics and issues (their paths apart), and
/// the runs hold every kind of damage the generator makes.
#[test]
fn the_generated_runs_get_the_same_verdict_in_every_format() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack = Pack::load(repo.join("examples/packs/travel-agent")).unwrap();
    let text =
        std::fs::read_to_string(repo.join("examples/data/travel-agent-generated.jsonl")).unwrap();
    let mut runs: std::collections::BTreeMap<String, Vec<(String, Value)>> =
        std::collections::BTreeMap::new();
    let mut codes = std::collections::BTreeSet::new();
    let mut statuses = std::collections::BTreeSet::new();
    let mut records = 0;
    for (line, text) in text.lines().enumerate() {
        let (input, note) = tribunal::jsonl::read_line(text, line as u64 + 1).unwrap();
        assert!(note.is_none());
        let mut record = pack.evaluate(&input).to_value();
        for issue in record["issues"].as_array_mut().unwrap() {
            codes.insert(issue["code"].as_str().unwrap().to_owned());
            let message = paths_hidden(issue["message"].as_str().unwrap());
            issue["message"] = Value::String(message);
        }
        for turn in record["turns"].as_array_mut().unwrap() {
            for issue in turn["issues"].as_array_mut().unwrap() {
                let message = paths_hidden(issue["message"].as_str().unwrap());
                issue["message"] = Value::String(message);
            }
        }
        if let Some(feedback) = record["feedback"].as_str() {
            record["feedback"] = Value::String(paths_hidden(feedback));
        }
        statuses.insert(record["status"].as_str().unwrap().to_owned());
        let id = record["id"].as_str().unwrap().to_owned();
        let (run, format) = id.rsplit_once('-').unwrap();
        runs.entry(run.to_owned())
            .or_default()
            .push((format.to_owned(), without_paths(record)));
        records += 1;
    }
    assert!(records >= 200, "{records} records");
    for (run, formats) in &runs {
        assert!(formats.len() >= 2, "{run}: {formats:?}");
        let (first_format, first) = &formats[0];
        for (format, record) in &formats[1..] {
            let strip = |r: &Value| {
                let mut r = r.clone();
                r.as_object_mut().unwrap().remove("id");
                r
            };
            assert_eq!(
                strip(record),
                strip(first),
                "{run}: {format} and {first_format} differ"
            );
        }
    }
    for code in [
        "confirmed_first",
        "claims_confirmed",
        "contract.length",
        "tool.order",
        "tool.too-many",
        "tool.repeated",
        "tool.forbidden",
        "tool.not-allowed",
        "tool.missing",
        "transcript.arguments-not-json",
    ] {
        assert!(codes.contains(code), "no run has {code}: {codes:?}");
    }
    assert_eq!(
        statuses,
        ["FAIL", "NEEDS_IMPROVEMENT", "PASS"]
            .map(str::to_owned)
            .into()
    );
}

/// `eval --junit`: a transcript record's failure text names the turns that
/// did not pass, and each issue its turn.
#[test]
fn junit_names_the_failing_turns() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("runs.jsonl");
    let text =
        std::fs::read_to_string(repo.join("examples/data/travel-agent-generated.jsonl")).unwrap();
    let run: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with(r#"{"id": "gen-003-"#))
        .collect();
    let run = run.join("\n") + "\n";
    std::fs::write(&data, run).unwrap();
    let junit = dir.path().join("eval.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .arg("eval")
        .arg(repo.join("examples/packs/travel-agent"))
        .arg("--input")
        .arg(&data)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{out:?}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase").count(), 3, "{xml}");
    for (format, at) in [
        ("chat", "/messages/9"),
        ("anthropic", "/messages/9"),
        ("responses", "/messages/10"),
    ] {
        let case = xml
            .split("<testcase")
            .find(|case| case.contains(&format!("gen-003-{format}")))
            .unwrap();
        assert!(
            case.contains(&format!(
                "failing turns:\n  turn 9 (assistant) NEEDS_IMPROVEMENT, score 0 at {at}\n"
            )),
            "{case}"
        );
        assert!(
            case.contains("error claims_confirmed [claims_confirmed] (turn 9): told the user"),
            "{case}"
        );
    }
}

/// `ctx.turns` is converted once per record and shared by the steps run on it:
/// read-only, so a step cannot change what the next one reads (a copy, `let
/// turns = ctx.turns;`, can be changed).
#[test]
fn a_step_cannot_change_the_turns_the_next_step_reads() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  postprocessors:\n    - use: copy\n      scope: assistant_turns\n  metrics:\n    - use: read\n      scope: assistant_turns\n",
        &[
            (
                "copy",
                "postprocessor",
                r#"fn evaluate(ctx) {
    let turns = ctx.turns;
    turns[0].text = "changed";
    turns.push(#{ role: "user" });
    if ctx.meta != () && ctx.meta.write { ctx.turns[0].text = "changed"; }
    []
}
"#,
            ),
            (
                "read",
                "metric",
                "fn evaluate(ctx) { #{ score: 1.0, details: [ctx.turns[0].text, ctx.turns.len()] } }\n",
            ),
        ],
    );
    let [chat, ..] = booking();
    let record = pack
        .evaluate(&Input::from_messages(chat.clone()))
        .to_value();
    for turn in record["metrics"]["read"]["details"]["turns"]
        .as_array()
        .unwrap()
    {
        assert_eq!(turn["details"], json!(["You book flights.", 7]), "{record}");
    }
    let record = pack
        .evaluate(&Input::from_messages(chat).with_meta(json!({"write": true})))
        .to_value();
    assert_eq!(record["status"], "ERROR");
    let error = record["error"].as_str().unwrap();
    assert!(
        error.starts_with("postprocessor `copy` (turn 2): script `copy`")
            && error.contains("constant"),
        "{error}"
    );
}

/// A pack whose `tool_calls` compares the calls with `expected.tool_calls`,
/// with `with` (YAML lines under `with:`).
fn trajectory_check(dir: &Path, with: &str) -> Pack {
    std::fs::write(
        dir.join("pack.yaml"),
        format!("name: expected\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n{with}"),
    )
    .unwrap();
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// The (code, turn, path, message) of each issue of the booking judged
/// against `expected` in every format, the paths of the Chat one.
fn against(pack: &Pack, expected: &Value) -> Vec<(String, Value, Value, String)> {
    let records: Vec<Value> = booking()
        .into_iter()
        .map(|messages| {
            let input = Input::from_messages(messages).with_expected(expected.clone());
            pack.evaluate(&input).to_value()
        })
        .collect();
    for other in &records[1..] {
        assert_eq!(
            without_paths(other.clone()),
            without_paths(records[0].clone())
        );
    }
    assert_ne!(records[0]["status"], "ERROR", "{}", records[0]);
    records[0]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["code"].as_str().unwrap().to_owned(),
                i["turn"].clone(),
                i["path"].clone(),
                i["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_calls_are_compared_with_the_expected_trajectory_in_each_match_mode() {
    let search = json!({"name": "search_flights", "arguments": {"to": "OSL"}});
    let book = json!({"name": "book_flight", "arguments": {"seat": "12A"}});
    let dir = tempfile::tempdir().unwrap();
    // in_order (the default): the expected calls in their order, others allowed.
    let pack = trajectory_check(dir.path(), "        no_repeat: true\n");
    assert_eq!(against(&pack, &json!({"tool_calls": [search, book]})), []);
    assert_eq!(against(&pack, &json!({"tool_calls": [book]})), []);
    assert_eq!(
        against(&pack, &json!({"other": 1})),
        [],
        "no trajectory, no check"
    );
    let issues = against(&pack, &json!({"tool_calls": [book, search]}));
    assert_eq!(
        issues,
        [(
            "tool.expected-missing".to_owned(),
            Value::Null,
            json!("/messages"),
            "the expected call `search_flights` (expected.tool_calls/1) is not made in its order"
                .to_owned()
        )]
    );
    let seat = json!({"name": "book_flight", "arguments": {"seat": "14C", "meal": "veg"}});
    let issues = against(&pack, &json!({"tool_calls": [search, seat]}));
    assert_eq!(
        issues,
        [
            (
                "tool.argument-mismatch".to_owned(),
                json!(4),
                json!("/messages/4/tool_calls/0/function/arguments/seat"),
                r#"`book_flight`'s argument `seat` is "12A", expected "14C" (exact 0 < 1)"#
                    .to_owned()
            ),
            (
                "tool.argument-mismatch".to_owned(),
                json!(4),
                json!("/messages/4/tool_calls/0/function/arguments/meal"),
                r#"`book_flight` is called without the argument `meal`, expected "veg""#.to_owned()
            ),
        ]
    );
    // any_order: each expected call made, in any order.
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(dir.path(), "        match: any_order\n");
    assert_eq!(against(&pack, &json!({"tool_calls": [book, search]})), []);
    let twice = against(&pack, &json!({"tool_calls": [book, book]}));
    assert_eq!(twice.len(), 1, "{twice:?}");
    assert_eq!(twice[0].0, "tool.expected-missing");
    // exact: these calls, in this order, and no others.
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(dir.path(), "        match: exact\n");
    assert_eq!(against(&pack, &json!({"tool_calls": [search, book]})), []);
    let issues = against(&pack, &json!({"tool_calls": [search]}));
    assert_eq!(
        issues,
        [(
            "tool.unexpected".to_owned(),
            json!(4),
            json!("/messages/4/tool_calls/0"),
            "`book_flight` is call 1, past the 1 call of the expected trajectory".to_owned()
        )]
    );
    let issues = against(&pack, &json!({"tool_calls": [book, search]}));
    let codes: Vec<&str> = issues.iter().map(|i| i.0.as_str()).collect();
    assert_eq!(codes, ["tool.unexpected", "tool.unexpected"], "{issues:?}");
}

#[test]
fn each_argument_is_compared_by_its_strategy() {
    let expected = json!({"tool_calls": [
        {"name": "search_flights", "arguments": {"to": "OSLO"}},
        {"name": "book_flight", "arguments": {"seat": "99Z"}}
    ]});
    let dir = tempfile::tempdir().unwrap();
    // FUZZY at its default threshold: "OSL" is 0.75 like "OSLO".
    let pack = trajectory_check(
        dir.path(),
        "        argument_strategies: { to: FUZZY, book_flight.seat: IGNORE }\n",
    );
    let issues = against(&pack, &expected);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].3.ends_with("(fuzzy 0.75 < 0.85)"), "{issues:?}");
    // A lower threshold lets it match.
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(
        dir.path(),
        "        argument_strategies: { search_flights.to: fuzzy, seat: IGNORE }\n        thresholds: { FUZZY: 0.7 }\n",
    );
    assert_eq!(against(&pack, &expected), []);
    // Names are checked when the pack loads.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: bad\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        argument_strategies: { to: FUZY }\n",
    )
    .unwrap();
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("argument_strategies: argument `to`: unknown strategy `FUZY`")
            && err.contains("FUZZY"),
        "{err}"
    );
    // SEMANTIC arguments take the rule's own `model:` folder, as json_compare's
    // fields do: one that is not a model is a load error at `model`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: bad\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        argument_strategies: { note: SEMANTIC }\n        model: empty\n",
    )
    .unwrap();
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("tool_calls: `model`: "), "{err}");
    // With the default model it loads and compares by meaning; the model's
    // load on the first record is not the step's time (the step's limit is
    // 1 s, about what the load takes in a debug build).
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(
        dir.path(),
        "        argument_strategies: { to: SEMANTIC, seat: IGNORE }\n",
    );
    let same = json!({"tool_calls": [{"name": "search_flights", "arguments": {"to": "OSL"}}]});
    assert_eq!(against(&pack, &same), []);
    let far =
        json!({"tool_calls": [{"name": "search_flights", "arguments": {"to": "a red bicycle"}}]});
    let issues = against(&pack, &far);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].3.contains("(semantic "), "{issues:?}");
    // An expected trajectory that is not one is the record's input error.
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(dir.path(), "        match: exact\n");
    let [chat, ..] = booking();
    for (bad, says) in [
        (
            json!({"tool_calls": "search"}),
            "`expected.tool_calls` is a string",
        ),
        (
            json!({"tool_calls": [{"arguments": {}}]}),
            "`expected.tool_calls` 0 has no `name`",
        ),
        (
            json!({"tool_calls": [{"name": "x", "arguments": "{}"}]}),
            "`expected.tool_calls` 0's `arguments` is not an object",
        ),
    ] {
        let input = Input::from_messages(chat.clone()).with_expected(bad);
        let record = pack.evaluate(&input).to_value();
        assert_eq!(record["status"], "ERROR");
        assert_eq!(record["error_kind"], "input");
        assert!(record["error"].as_str().unwrap().contains(says), "{record}");
    }
}

#[test]
fn each_tool_s_arguments_are_held_to_their_rules() {
    let dir = tempfile::tempdir().unwrap();
    let pack = trajectory_check(
        dir.path(),
        "        additional_arguments: false\n        arguments:\n          search_flights:\n            to: { type: string, required: true, min_length: 3, max_length: 3 }\n            date: { type: string, required: true }\n          book_flight:\n            seat: { type: string, enum: [12A, 12B] }\n",
    );
    let issues = against(&pack, &Value::Null);
    assert_eq!(
        issues,
        [(
            "contract.missing-field".to_owned(),
            json!(2),
            json!("/messages/2/tool_calls/0/function/arguments/date"),
            "`search_flights` arguments: missing required field `date`".to_owned()
        )]
    );
    // The rules' own mistakes are load errors at their key.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: bad\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        arguments:\n          search_flights:\n            to: { type: strnig }\n",
    )
    .unwrap();
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("`arguments.search_flights`") && err.contains("strnig"),
        "{err}"
    );
    assert!(err.contains("pack.yaml:7:"), "the tool's line: {err}");
}

/// `tool_calls(ctx.turns)`: each call with its turn and the result that
/// answers it, for rules across turns such as "never repeat a failed call
/// unchanged".
#[test]
fn the_tool_calls_helper_pairs_each_call_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  metrics: [retries]\n",
        &[(
            "retries",
            "metric",
            r#"fn evaluate(ctx) {
    let issues = [];
    let failed = [];
    let seen = [];
    for tc in tool_calls(ctx.turns) {
        let key = tc.name + " " + to_json(tc.arguments);
        if failed.contains(key) {
            issues.push(#{ message: `repeated the failed call ${key} unchanged`, path: tc.path, turn: tc.turn });
        }
        if tc.is_error { failed.push(key); }
        seen.push([tc.turn, tc.name, tc.result]);
    }
    #{ score: if issues.is_empty() { 1.0 } else { 0.0 }, issues: issues, details: seen }
}
"#,
        )],
    );
    let search = |id: &str, to: &str| json!({"type": "tool_use", "id": id, "name": "search", "input": {"to": to}});
    let result = |id: &str, text: &str, error: bool| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]});
    let messages = json!([
        {"role": "user", "content": "Flights to Oslo?"},
        {"role": "assistant", "content": [search("a", "Oslo")]},
        result("a", "unknown airport", true),
        {"role": "assistant", "content": [search("b", "Oslo")]},
        result("b", "unknown airport", true),
        {"role": "assistant", "content": [search("c", "OSL")]},
        result("c", "SK1", false),
        {"role": "assistant", "content": [search("d", "OSL")]}
    ]);
    let record = pack.evaluate(&Input::from_messages(messages)).to_value();
    assert_eq!(
        record["metrics"]["retries"]["details"],
        json!([
            [1, "search", "unknown airport"],
            [3, "search", "unknown airport"],
            [5, "search", "SK1"],
            [7, "search", null]
        ])
    );
    let issues = record["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{record}");
    assert_eq!(issues[0]["turn"], 3);
    assert_eq!(issues[0]["path"], "/messages/3/content/0");
    assert_eq!(record["turns"][3]["status"], "NEEDS_IMPROVEMENT");
    // A record without a transcript has no calls.
    let record = pack.evaluate(&Input::new("text")).to_value();
    assert_eq!(record["metrics"]["retries"]["details"], json!([]));
}

/// `arguments: contract`: each call is held to the pack contract's variant
/// for its tool, the variant's `args` describing the arguments.
#[test]
fn the_arguments_can_be_held_to_the_contract_s_variants() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        r"name: variants
contract:
  kind_field: tool
  variants:
    search_flights:
      fields:
        args:
          type: object
          required: true
          additional_fields: false
          fields:
            to: { type: string, required: true, min_length: 3, max_length: 3 }
    ask_user:
pipeline:
  postprocessors:
    - use: tool_calls
      with:
        arguments: contract
",
    )
    .unwrap();
    let pack = Pack::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let search = |to: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": to, "type": "function",
            "function": {"name": "search_flights", "arguments": json!({"to": to, "day": 5}).to_string()}}]})
    };
    let messages = json!([{"role": "user", "content": "Oslo?"}, search("OSL"), search("Oslo")]);
    let record = pack.evaluate(&Input::from_messages(messages)).to_value();
    let mine: Vec<(String, String, Value)> = record["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["rule"] == "tool_calls")
        .map(|i| {
            (
                i["code"].as_str().unwrap().to_owned(),
                i["path"].as_str().unwrap().to_owned(),
                i["turn"].clone(),
            )
        })
        .collect();
    assert_eq!(
        mine,
        [
            (
                "contract.unexpected-field".to_owned(),
                "/messages/1/tool_calls/0/function/arguments/day".to_owned(),
                json!(1)
            ),
            (
                "contract.length".to_owned(),
                "/messages/2/tool_calls/0/function/arguments/to".to_owned(),
                json!(2)
            ),
            (
                "contract.unexpected-field".to_owned(),
                "/messages/2/tool_calls/0/function/arguments/day".to_owned(),
                json!(2)
            ),
        ],
        "{record}"
    );
    // Without a contract with variants, `arguments: contract` is a load error.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: bare\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        arguments: contract\n",
    )
    .unwrap();
    let err = Pack::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("the pack has no contract") && err.contains("pack.yaml:6:"),
        "{err}"
    );
}

/// A transcript of `n` user/assistant exchanges.
fn exchanges(n: usize) -> Value {
    let mut messages = Vec::new();
    for i in 0..n {
        messages.push(json!({"role": "user", "content": format!("question {i}")}));
        messages.push(json!({"role": "assistant", "content": format!("answer {i}")}));
    }
    Value::Array(messages)
}

/// A step run on each turn sees the issues of the steps before it on every
/// turn (its own turns' issues join them after its last turn), converted
/// once: a transcript of many turns with an issue on each costs linear time.
#[test]
fn each_turn_sees_the_issues_of_the_steps_before_and_its_own_join_after() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  metrics:\n    - use: flags\n      scope: assistant_turns\n    - use: counts\n      scope: assistant_turns\n",
        &[
            (
                "flags",
                "metric",
                "fn evaluate(ctx) {\n    #{ score: 0.5, issues: [`turn ${ctx.turn}`], details: #{ seen: ctx.issues.len() } }\n}\n",
            ),
            (
                "counts",
                "metric",
                "fn evaluate(ctx) {\n    #{ score: 1.0, details: #{ seen: ctx.issues.len() } }\n}\n",
            ),
        ],
    );
    let record = pack
        .evaluate(&Input::from_messages(exchanges(50)))
        .to_value();
    let turns = |step: &str| {
        record["metrics"][step]["details"]["turns"]
            .as_array()
            .unwrap()
            .clone()
    };
    assert_eq!(turns("flags").len(), 50);
    for turn in turns("flags") {
        assert_eq!(turn["details"]["seen"], 0, "{turn}");
    }
    for turn in turns("counts") {
        assert_eq!(turn["details"]["seen"], 50, "{turn}");
    }
    // Each issue names its turn.
    let issues = record["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 50);
    assert_eq!(issues[3]["turn"], 7);
}

/// `limits.timeout_ms` bounds a step, its runs on every turn together: a
/// step that takes a little on each turn of a long transcript is stopped
/// when the sum passes the limit (each run had the whole limit before).
#[test]
fn a_step_on_each_turn_has_one_time_limit_for_all_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "limits: { timeout_ms: 100 }\npipeline:\n  metrics:\n    - use: slow\n      scope: assistant_turns\n",
        &[(
            "slow",
            "metric",
            "fn evaluate(ctx) {\n    let n = 0;\n    for i in 0..20000 { n += i; }\n    1.0\n}\n",
        )],
    );
    let record = pack
        .evaluate(&Input::from_messages(exchanges(400)))
        .to_value();
    assert_eq!(record["status"], "ERROR", "{record}");
    let error = record["error"].as_str().unwrap();
    assert!(
        error.contains("metric `slow` (turn ") && error.contains("100 ms"),
        "{error}"
    );
    assert_eq!(record["error_kind"], "timeout");
}

/// A metric script's `prepare(ctx)` runs once per record, before the first
/// turn, and what it returns is `ctx.prepared` on every turn: an index built
/// once instead of a scan of the turns before each one. (Run on each of 100
/// turns, a `prepare` this slow would pass the time limit many times over.)
#[test]
fn prepare_runs_once_per_record_and_every_turn_reads_what_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  metrics:\n    - use: indexed\n      scope: assistant_turns\n",
        &[(
            "indexed",
            "metric",
            "fn prepare(ctx) {\n    let n = 0;\n    for i in 0..200000 { n += 1; }\n    let said = #{};\n    for (turn, i) in ctx.turns { if turn.role == \"user\" { said[turn.text] = i; } }\n    #{ said: said, has_turn: ctx.turn != (), has_output: ctx.output != () }\n}\n\nfn evaluate(ctx) {\n    let question = \"question \" + ctx.output.sub_string(7);\n    #{ score: if ctx.prepared.said[question] == ctx.turn - 1 { 1.0 } else { 0.0 }, details: #{ has_turn: ctx.prepared.has_turn, has_output: ctx.prepared.has_output } }\n}\n",
        )],
    );
    let record = pack
        .evaluate(&Input::from_messages(exchanges(100)))
        .to_value();
    assert_eq!(record["status"], "PASS", "{}", record["error"]);
    assert_eq!(record["score"], 1.0);
    let first = &record["metrics"]["indexed"]["details"]["turns"][0]["details"];
    assert_eq!(first["has_turn"], false);
    assert_eq!(first["has_output"], false);
    // On a single output, `prepare` runs before `evaluate` too.
    let single = scripted_pack(
        tempfile::tempdir().unwrap().path(),
        "pipeline:\n  metrics:\n    - use: once\n",
        &[(
            "once",
            "metric",
            "fn prepare(ctx) { ctx.output.len() }\nfn evaluate(ctx) { #{ score: 1.0, details: #{ length: ctx.prepared } } }\n",
        )],
    );
    let record = single.evaluate(&Input::new("four")).to_value();
    assert_eq!(
        record["metrics"]["once"]["details"]["length"], 4,
        "{record}"
    );
}

/// A proposal: the user asks, the assistant proposes `calls` (names).
fn proposal(calls: &[&str]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"id": format!("c{i}"), "type": "function", "function": {"name": name, "arguments": "{}"}}))
        .collect();
    json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": calls}])
}

/// A rule that scores the final answer is skipped on a proposal (a
/// `json_compare` without ground truth would otherwise be an ERROR that
/// denies every call), and a step that fails denies every call.
#[test]
fn a_proposal_skips_final_answer_rules_and_a_failed_step_denies_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        dir.path(),
        "pipeline:\n  postprocessors:\n    - use: tool_calls\n      with: { allowed: [search, book] }\n  metrics:\n    - use: json_compare\n    - use: sees\n",
        &[(
            "sees",
            "metric",
            "fn evaluate(ctx) {\n    if ctx.judging != \"proposal\" { throw \"not told\"; }\n    let calls = ctx.turns[ctx.turns.len() - 1].tool_calls;\n    if calls.len() > 1 { throw \"too many at once\"; }\n    1.0\n}\n",
        )],
    );
    let decided = pack
        .decide(&Input::from_messages(proposal(&["search"])))
        .to_value();
    assert_eq!(decided["error"], Value::Null, "{decided}");
    assert_eq!(decided["decisions"][0]["decision"], "allow");
    // A step that fails: every call denied, the error said.
    let decided = pack
        .decide(&Input::from_messages(proposal(&["search", "book"])))
        .to_value();
    assert!(
        decided["error"]
            .as_str()
            .unwrap()
            .contains("too many at once"),
        "{decided}"
    );
    let verdicts: Vec<&Value> = decided["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["decision"])
        .collect();
    assert_eq!(verdicts, ["deny", "deny"]);
    // Nothing proposed, and a step that failed: the record's failure, with
    // its own kind (a script's), not a generic `input` error.
    let broken = tempfile::tempdir().unwrap();
    let pack = scripted_pack(
        broken.path(),
        "pipeline:\n  metrics:\n    - use: broken\n",
        &[(
            "broken",
            "metric",
            "fn evaluate(ctx) { throw \"broken\"; }\n",
        )],
    );
    let mut messages = proposal(&["search"]);
    messages
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "and?"}));
    let decided = pack.decide(&Input::from_messages(messages)).to_value();
    assert!(
        decided["error"].as_str().unwrap().contains("broken"),
        "{decided}"
    );
    assert_eq!(decided["error_kind"], "script", "{decided}");
    assert_eq!(decided["decisions"], json!([]));
}

/// A conversation in OpenAI's Chat format (calls one per message) in
/// Anthropic's: `tool_use` blocks, and tool results as user messages.
fn to_anthropic(messages: &Value) -> Value {
    let out: Vec<Value> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| match m["role"].as_str().unwrap() {
                "assistant" if m["tool_calls"].is_array() => {
                    let blocks: Vec<Value> = m["tool_calls"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| {
                            let input: Value =
                                serde_json::from_str(c["function"]["arguments"].as_str().unwrap())
                                    .unwrap();
                            json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": input})
                        })
                        .collect();
                    json!({"role": "assistant", "content": blocks})
                }
                "assistant" => {
                    json!({"role": "assistant", "content": [{"type": "text", "text": m["content"]}]})
                }
                "tool" => json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]}),
                _ => m.clone(),
            })
            .collect();
    Value::Array(out)
}

/// The final answer is a turn: its contract issues name it, its status is
/// the record's verdict on it (a missing JSON fails it, as it fails the
/// record), and the re-ask text counts turns as the model saw them and shows
/// the OUTPUT FORMAT block only after an issue about the format.
#[test]
fn the_final_answer_is_a_turn_and_the_re_ask_counts_turns_as_the_model_saw_them() {
    let pack = Pack::load("examples/packs/support-agent").unwrap_or_else(|e| panic!("{e}"));
    let call = |id: &str, name: &str, arguments: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
    let conversation = |calls: Vec<Value>, answer: &str| {
        let mut messages = vec![
            json!({"role": "system", "content": "You are a support agent."}),
            json!({"role": "user", "content": "Refund QX7P2K please."}),
        ];
        for (i, c) in calls.into_iter().enumerate() {
            let id = c["id"].clone();
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [c]}));
            // (A lookup's total bounds the refund: the pack's data flow.)
            let output = format!("{{\"total\": 42.5, \"step\": {i}}}");
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
        }
        messages.push(json!({"role": "assistant", "content": answer}));
        Value::Array(messages)
    };
    let lookup = call("c1", "lookup_order", "{\"order_id\": \"QX7P2K\"}");
    let refund = call(
        "c2",
        "refund",
        "{\"order_id\": \"QX7P2K\", \"amount\": 42.5}",
    );
    for format in ["openai", "anthropic"] {
        let shaped = |messages: Value| match format {
            "openai" => messages,
            _ => to_anthropic(&messages),
        };
        // A final answer that breaks the contract: its issues are its turn's.
        let messages = shaped(conversation(
            vec![lookup.clone(), refund.clone()],
            "{\"refunded\": 42.5}",
        ));
        let record = pack.evaluate(&Input::from_messages(messages)).to_value();
        let turns = record["turns"].as_array().unwrap();
        let last = turns.len() - 1;
        assert_eq!(record["status"], "FAIL", "{record}");
        assert_eq!(turns[last]["status"], "FAIL", "{format}: {record}");
        let missing = &record["issues"][0];
        assert_eq!(missing["code"], "contract.missing-field");
        assert_eq!(missing["turn"], last, "{format}");
        assert_eq!(turns[last]["issues"][0]["code"], "contract.missing-field");
        let feedback = record["feedback"].as_str().unwrap();
        assert!(
            feedback.starts_with(
                "Previous issues: ['assistant turn 3: missing required field `answer`']\n\nOUTPUT FORMAT"
            ),
            "{format}: {feedback}"
        );
        // No JSON at all: the record fails, and so does its final turn.
        let messages = shaped(conversation(vec![lookup.clone()], "It shipped."));
        let record = pack.evaluate(&Input::from_messages(messages)).to_value();
        let turns = record["turns"].as_array().unwrap();
        assert_eq!(record["status"], "FAIL");
        assert_eq!(
            turns[turns.len() - 1]["status"],
            "FAIL",
            "{format}: {record}"
        );
        // Only a trajectory issue (a refund before the lookup): the re-ask
        // names the model's reply, and does not repeat the output format.
        let messages = shaped(conversation(
            vec![refund.clone(), lookup.clone()],
            "{\"answer\": \"Refunded 42.50 for QX7P2K.\", \"refunded\": 42.5}",
        ));
        let record = pack.evaluate(&Input::from_messages(messages)).to_value();
        assert_eq!(record["status"], "FAIL");
        let feedback = record["feedback"].as_str().unwrap();
        assert!(
            feedback.starts_with("Previous issues: ['assistant turn 1: `refund` is called before"),
            "{format}: {feedback}"
        );
        assert!(!feedback.contains("OUTPUT FORMAT"), "{format}: {feedback}");
        let turns = record["turns"].as_array().unwrap();
        assert_eq!(
            turns[turns.len() - 1]["status"],
            "PASS",
            "{format}: {record}"
        );
        assert_eq!(turns[2]["status"], "FAIL", "{format}: {record}");
    }
}
