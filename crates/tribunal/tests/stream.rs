//! Streaming sessions (`Pack::stream`): the report at `finish()` is byte for
//! byte `evaluate()`'s on the whole text, whatever the chunking (every shipped
//! example data set, and generated records); violations come no later than
//! the chunk that completes the offending value; a released prefix never
//! holds bytes a later event flags.

use std::path::Path;

use serde_json::{json, Value};
use tribunal::{Input, Pack};
use tribunal::{StreamEvent, Violation};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A small deterministic generator (xorshift), so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

/// `text` cut into chunks: whole, 1 byte, 4 bytes, 64 bytes, and random
/// sizes (1 to 40 bytes), never inside a character.
fn chunkings(text: &str, rng: &mut Rng) -> Vec<Vec<String>> {
    let cut = |sizes: &mut dyn FnMut() -> usize| {
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + sizes().max(1)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            chunks.push(text[at..end].to_owned());
            at = end;
        }
        chunks
    };
    vec![
        vec![text.to_owned()],
        cut(&mut || 1),
        cut(&mut || 4),
        cut(&mut || 64),
        cut(&mut || 1 + rng.below(40)),
    ]
}

/// What streaming a record gave: every event, with the number of bytes pushed
/// when it came; the final report's line; its result record as a server
/// writes it (`finish_into`); the tier of the document the session read whole.
type Streamed = (
    Vec<(StreamEvent, usize)>,
    String,
    Vec<u8>,
    Option<&'static str>,
);

/// Streams `record` in `chunks`.
fn stream(pack: &Pack, record: &Input, chunks: &[String]) -> Streamed {
    let mut session = pack
        .stream_for(Input {
            output: String::new(),
            ..record.clone()
        })
        .with_release();
    let mut events = Vec::new();
    let mut pushed = 0;
    for chunk in chunks {
        pushed += chunk.len();
        events.extend(session.push(chunk).into_iter().map(|e| (e, pushed)));
    }
    assert_eq!(session.text(), record.output);
    let document = session.document().map(tribunal::Tier::as_str);
    let mut written = Vec::new();
    let report = session.finish_into(None, &mut written);
    (events, report.to_json_line(), written, document)
}

/// The properties every streamed record has, whatever its chunking.
fn check_stream(pack: &Pack, record: &Input, rng: &mut Rng) {
    let expected = pack.evaluate(record);
    let whole = expected.to_json_line();
    let issues = expected.to_value()["issues"].clone();
    let tier = expected.to_value()["extraction"]["tier"].clone();
    let mut checked = Vec::new();
    tribunal::jsonl::evaluate_record_into(pack, record.clone(), None, None, &mut checked);
    for chunks in chunkings(&record.output, rng) {
        let (events, report, written, document) = stream(pack, record, &chunks);
        assert_eq!(
            report, whole,
            "finish() differs from evaluate() for {chunks:?}"
        );
        assert!(
            written == checked,
            "finish_into() wrote {} where a check writes {} for {chunks:?}",
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&checked)
        );
        let mut released = 0;
        for (event, pushed) in &events {
            match event {
                StreamEvent::Release { up_to } => {
                    assert!(*up_to > released && *up_to <= *pushed, "{event:?}");
                    released = *up_to;
                }
                StreamEvent::Violation(v) => {
                    assert!(
                        v.offset <= *pushed && v.start < v.offset,
                        "{v:?} after {pushed} bytes"
                    );
                    assert!(
                        v.start >= released,
                        "a released prefix ({released} bytes) holds a later violation {v:?} in {:?}",
                        record.output
                    );
                    // When the document the session read whole is the one
                    // extracted, every early violation is in the report, as
                    // worded there.
                    if document.is_some() && tier.as_str() == document {
                        assert!(
                            in_report(v, &issues),
                            "{v:?} is not in the report's issues {issues} ({:?})",
                            record.output
                        );
                    }
                }
                StreamEvent::Stopped { at, .. } => {
                    assert!(*at < *pushed, "{event:?}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

fn in_report(v: &Violation, issues: &Value) -> bool {
    issues.as_array().unwrap().iter().any(|i| {
        i["code"] == v.code.as_str()
            && i["message"] == v.message.as_str()
            && i["path"].as_str() == v.path.as_deref()
            && i["rule"] == v.rule.as_str()
    })
}

/// Every record of a JSONL data set.
fn records(data: &Path) -> Vec<Input> {
    std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .zip(1..)
        .map(|(line, number)| {
            let (input, _) = tribunal::jsonl::read_line(line, number).unwrap();
            input
        })
        .collect()
}

#[test]
fn finish_is_evaluate_on_every_example_data_set_whatever_the_chunking() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (pack, data) in [
        ("rules/ksi-emission", "ksi-emission"),
        ("rules/structured-output", "structured-output"),
        ("rules/json-eval", "json-eval"),
        ("rules/context-agent", "context-agent"),
        ("rules/agent-response", "agent-response"),
        ("rules/scripted-fields", "scripted-fields"),
        ("examples/packs/tool-calls", "tool-calls"),
        ("examples/packs/rag-citations", "rag-citations"),
        ("examples/packs/travel-agent", "travel-agent"),
    ] {
        let pack = Pack::load(root().join(pack)).unwrap_or_else(|e| panic!("{e}"));
        for record in records(&root().join(format!("examples/data/{data}.jsonl"))) {
            check_stream(&pack, &record, &mut rng);
        }
    }
}

/// A pack whose contract has a bit of everything the scanner checks early.
fn plan_pack(dir: &Path) -> Pack {
    std::fs::write(
        dir.join("pack.yaml"),
        r"name: plan
contract:
  kind_field: action
  additional_fields: false
  fields:
    action: { type: string, required: true }
    why: { type: string, required: true, sentences: [1, 2], max_length: 80 }
    tags: { type: array, items: string, unique_items: true, max_items: 3 }
  variants:
    call:
      fields:
        tool: { type: string, required: true, enum: [search, fetch] }
        args:
          type: object
          additional_fields: false
          fields:
            q: { type: string, required: true }
            limit: { type: integer, min: 1, max: 50 }
    answer:
      fields:
        text: { type: string, required: true }
        citations:
          type: array
          items:
            type: object
            additional_fields: false
            fields:
              doc: { type: string, required: true }
              page: { type: integer }
",
    )
    .unwrap();
    Pack::load(dir).unwrap()
}

/// Generated outputs: a valid call or answer, then one damage each, written
/// as JSON alone, in a fence after prose, or with prose after it.
fn generated(rng: &mut Rng) -> Vec<String> {
    let valid = [
        json!({"action": "call", "why": "The user asked for it.", "tool": "search", "args": {"q": "flights to Oslo", "limit": 5}, "tags": ["a", "b"]}),
        json!({"action": "answer", "why": "Found in the docs.", "text": "Two years. Zoë says \"hi\" {not a brace}", "citations": [{"doc": "d1", "page": 3}, {"doc": "d2"}]}),
    ];
    let damages: [&dyn Fn(&mut Value); 12] = [
        &|v| v["why"] = json!(7),
        &|v| v["action"] = json!("shout"),
        &|v| v["extra"] = json!({"deep": [1, 2]}),
        &|v| v["tags"] = json!(["a", "a", "b"]),
        &|v| v["tags"] = json!(["a", "b", "c", "d"]),
        &|v| {
            v.as_object_mut().unwrap().remove("why");
        },
        &|v| v["why"] = json!("x".repeat(100)),
        &|v| v["tool"] = json!("delete"),
        &|v| v["args"] = json!({"q": 3, "limit": 99, "sort": "asc"}),
        &|v| {
            v["citations"] = json!([{"doc": "d1", "page": "three"}, {"doc": 2, "note": "n"}, "d3"]);
        },
        &|v| v["text"] = json!(["not", "text"]),
        &|_| {},
    ];
    let mut out = Vec::new();
    for base in &valid {
        for damage in damages {
            let mut value = base.clone();
            damage(&mut value);
            let text = if rng.below(2) == 0 {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                value.to_string()
            };
            out.push(text.clone());
            // A raw control byte in a string (the strict reader refuses it),
            // and a name and a value written with escapes.
            out.push(text.replacen("asked for", "asked\tfor", 1).replacen(
                "Found in",
                "Found\nin",
                1,
            ));
            out.push(text.replacen("\"tags\"", "\"t\\u0061gs\"", 1).replacen(
                "d1",
                "\\u0064\\/1",
                1,
            ));
            out.push(format!("Here is the plan:\n```json\n{text}\n```\nDone."));
            out.push(format!("{text}\n\nThat is all."));
        }
    }
    out
}

#[test]
fn generated_records_stream_with_violations_in_the_report_and_never_released() {
    let dir = tempfile::tempdir().unwrap();
    let pack = plan_pack(dir.path());
    let mut rng = Rng(42);
    let texts = generated(&mut rng);
    assert!(texts.len() >= 70);
    let mut violations = 0;
    for text in texts {
        let record = Input::new(text);
        check_stream(&pack, &record, &mut rng);
        let (events, _, _, _) = stream(&pack, &record, std::slice::from_ref(&record.output));
        violations += events
            .iter()
            .filter(|(e, _)| matches!(e, StreamEvent::Violation(_)))
            .count();
    }
    // The damages are seen early: not a run in which nothing is ever reported.
    assert!(violations > 40, "{violations} violations");
}

#[test]
fn a_long_array_of_unique_items_streams_its_repeats_as_evaluate_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: many\ncontract:\n  fields:\n    items: { type: array, unique_items: true }\n",
    )
    .unwrap();
    let pack = Pack::load(dir.path()).unwrap();
    let mut rng = Rng(7);
    // Hundreds of items (past the short arrays compared one by one): objects
    // whose members come in either order, numbers written two ways, strings.
    let items: Vec<String> = (0..400)
        .map(|_| match rng.below(4) {
            0 => format!(r#"{{"a": {}, "b": "x"}}"#, rng.below(30)),
            1 => format!(r#"{{"b": "x", "a": {}}}"#, rng.below(30)),
            2 => format!("{}.0", rng.below(30)),
            _ => format!(r#""s{}""#, rng.below(200)),
        })
        .collect();
    let record = Input::new(format!(r#"{{"items": [{}]}}"#, items.join(", ")));
    let report = pack.evaluate(&record).to_value();
    let repeats = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["code"] == "contract.unique-items")
        .count();
    assert!(repeats > 100, "{repeats} repeats in {report}");
    check_stream(&pack, &record, &mut rng);
    // Every repeat is reported while streaming, with the item that repeats.
    let (events, _, _, document) = stream(&pack, &record, std::slice::from_ref(&record.output));
    assert_eq!(document, Some("strict"));
    let violations = events
        .iter()
        .filter(|(e, _)| matches!(e, StreamEvent::Violation(_)))
        .count();
    assert_eq!(violations, repeats);
}

/// The offset just past the first occurrence of `needle` in `text`.
fn end_of(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap() + needle.len()
}

/// Streams `text` byte by byte; each violation with the number of bytes
/// pushed when it came.
fn byte_by_byte(pack: &Pack, text: &str) -> Vec<(Violation, usize)> {
    let mut session = pack.stream();
    let mut out = Vec::new();
    for (at, c) in text.char_indices() {
        for event in session.push(&text[at..at + c.len_utf8()]) {
            if let StreamEvent::Violation(v) = event {
                out.push((v, at + c.len_utf8()));
            }
        }
    }
    out
}

#[test]
fn each_early_rule_reports_no_later_than_the_byte_that_completes_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let pack = plan_pack(dir.path());
    let text = r#"{"action": "shout", "why": 7, "tags": ["a", "a"], "extra": 1, "args": {"q": 3}, "tool": "delete", "#;
    let events = byte_by_byte(&pack, text);
    let when = |code: &str, path: &str| {
        events
            .iter()
            .find(|(v, _)| v.code == code && v.path.as_deref() == Some(path))
            .map_or_else(
                || panic!("no {code} at {path} in {events:#?}"),
                |(_, at)| *at,
            )
    };
    // A kind outside the variants: when its string closes.
    assert_eq!(
        when("contract.kind-not-allowed", "/action"),
        end_of(text, r#""shout""#)
    );
    // A wrong type: when the value is complete (a number ends at its delimiter).
    assert_eq!(when("contract.type", "/why"), end_of(text, r#""why": 7,"#));
    // A repeated item: when the repeat closes.
    assert_eq!(
        when("contract.unique-items", "/tags/1"),
        end_of(text, r#"["a", "a""#)
    );
    // An unknown member: as soon as its key is complete.
    assert_eq!(
        when("contract.unexpected-field", "/extra"),
        end_of(text, r#""extra""#)
    );
    // Nothing is reported for what is not certain yet: `args` and `tool`
    // belong to a variant, and the kind read was none of them.
    assert!(
        events
            .iter()
            .all(|(v, _)| v.path.as_deref() != Some("/args/q")),
        "{events:#?}"
    );

    // With a known kind, members of its variant are checked as they complete,
    // at any depth; an object missing a required member, when it closes.
    let text = r#"{"action": "call", "why": "Asked.", "tool": "delete", "args": {"limit": 99}, "#;
    let events = byte_by_byte(&pack, text);
    let at = |code: &str, path: &str| {
        events
            .iter()
            .find(|(v, _)| v.code == code && v.path.as_deref() == Some(path))
            .map(|(_, at)| *at)
    };
    assert_eq!(
        at("contract.one-of", "/tool"),
        Some(end_of(text, r#""delete""#))
    );
    assert_eq!(
        at("contract.range", "/args/limit"),
        Some(end_of(text, "99")).map(|e| e + 1)
    );
    assert_eq!(
        at("contract.missing-field", "/args/q"),
        Some(end_of(text, "99}"))
    );
    // The top-level object is not complete: its missing members are not known.
    assert_eq!(at("contract.missing-field", "/text"), None);
    // In a fence after prose, the same.
    let fenced = format!("Sure:\n```json\n{text}");
    let events = byte_by_byte(&pack, &fenced);
    assert!(
        events.iter().any(|(v, _)| v.code == "contract.one-of"),
        "{events:#?}"
    );
}

#[test]
fn a_released_prefix_never_holds_a_token_split_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let pack = plan_pack(dir.path());
    let mut session = pack.stream().with_release();
    let mut released = 0;
    let mut pushed = String::new();
    for chunk in [
        r#"{"action": "call", "why": "Ask"#,
        r#"ed.", "too"#,
        r#"l": "dele"#,
        r#"te", "ar"#,
    ] {
        pushed.push_str(chunk);
        for event in session.push(chunk) {
            match event {
                StreamEvent::Release { up_to } => released = up_to,
                StreamEvent::Violation(v) => {
                    assert!(
                        v.start >= released,
                        "{v:?} inside the released {released} bytes"
                    );
                    assert_eq!(&pushed[v.start..v.offset], r#""delete""#);
                }
                other => panic!("{other:?}"),
            }
        }
        // The value being written is never released.
        if pushed.ends_with("dele") {
            assert!(released <= pushed.rfind('"').unwrap(), "{released}");
        }
    }
    // The key being written (`"ar`) is held: an unknown member would be flagged.
    assert!(released <= pushed.rfind('"').unwrap());
    // The text ends cut off: the repair tier closes it, and the report has
    // the violation the stream reported.
    let report = session.finish().to_value();
    assert_eq!(report["extraction"]["tier"], "repair");
    assert!(
        report["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"] == "/tool"),
        "{report}"
    );
}

#[test]
fn a_kind_outside_may_emit_is_reported_when_its_string_closes() {
    let pack = Pack::load(root().join("rules/structured-output")).unwrap();
    let text = r#"{"kind": "agent.shout", "text": "Hi."}"#;
    let events = byte_by_byte(&pack, text);
    let (v, at) = &events[0];
    assert_eq!(v.code, "contract.kind-replaced");
    assert_eq!(*at, end_of(text, r#""agent.shout""#));
    assert_eq!(&text[v.start..v.offset], r#""agent.shout""#);
}

/// Packs whose `no_placeholders` judges each string as it closes, in every
/// configuration, and whose steps before it leave the document as written
/// (or, in the last, rewrite it: nothing is judged early after that).
fn placeholder_packs(root_dir: &Path) -> Vec<(&'static str, Pack, bool)> {
    let contract = r"contract:
  kind_field: kind
  may_emit: [note, plan]
  fallback: { kind: note, text: '{raw}' }
  fields:
    kind: { type: string, required: true }
    text: { type: string }
";
    let configs: [(&str, String, bool); 6] = [
        ("whole document", "    - use: no_placeholders\n".to_owned(), true),
        (
            "fields, their leaves, case folded",
            "    - use: no_placeholders\n      with: { fields: [text, steps, /meta/owner, kind], case_sensitive: false, tokens: [TODO, XXX, '<'] }\n".to_owned(),
            true,
        ),
        (
            "fields as Python reads them",
            "    - use: no_placeholders\n      with: { fields: [text, steps], containers: python }\n".to_owned(),
            true,
        ),
        (
            "before the contract, and after it, renamed",
            "    - use: no_placeholders\n      as: early_pass\n    - use: contract\n    - use: no_placeholders\n      as: late_pass\n      with: { tokens: [note, TBD] }\n".to_owned(),
            true,
        ),
        (
            "after a check that keeps the document",
            "    - use: required_fields\n      with: { paths: [kind] }\n    - use: no_placeholders\n".to_owned(),
            true,
        ),
        (
            "after a script that rewrites the document",
            "    - use: rewrite\n    - use: no_placeholders\n".to_owned(),
            false,
        ),
    ];
    configs
        .into_iter()
        .enumerate()
        .map(|(i, (name, steps, early))| {
            let dir = root_dir.join(format!("p{i}"));
            std::fs::create_dir_all(dir.join("components")).unwrap();
            std::fs::write(
                dir.join("components/rewrite.yaml"),
                "kind: postprocessor\nname: rewrite\nversion: 1.0.0\nimplementation:\n  script: rewrite.rhai\n",
            )
            .unwrap();
            std::fs::write(
                dir.join("components/rewrite.rhai"),
                "fn evaluate(ctx) {\n    let json = ctx.json;\n    if type_of(json) == \"map\" { json.text = \"fine\"; }\n    #{ issues: [], json: json }\n}\n",
            )
            .unwrap();
            std::fs::write(
                dir.join("pack.yaml"),
                format!("name: p{i}\ncomponents: [components/*.yaml]\n{contract}pipeline:\n  postprocessors:\n{steps}"),
            )
            .unwrap();
            let pack = Pack::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, pack, early)
        })
        .collect()
}

/// Documents with placeholders in strings at every depth: values, keys,
/// items, a kind the contract replaces, escapes that spell a token.
fn placeholder_texts(rng: &mut Rng) -> Vec<String> {
    let values = [
        json!({"kind": "note", "text": "All done.", "steps": ["a", "b"], "meta": {"owner": "me"}}),
        json!({"kind": "plan", "text": "Write TODO later", "steps": ["TODO", "fix <name>"], "meta": {"owner": "XXX"}}),
        json!({"kind": "TODO", "text": "ok", "steps": [["todo"], {"TBD": "x"}], "meta": {"owner": "tbd <b>"}}),
        json!({"kind": "note", "text": "T\u{4f}DO via an escape", "steps": [], "meta": {"TODO": 1}}),
        json!({"kind": "shout", "text": "FIXME: Zoë", "steps": "TBD and TODO", "meta": {"owner": ["XXX", "TODO"]}}),
        json!({"kind": "plan", "text": "note the TBD", "steps": [{"deep": ["<x>", "fine"]}], "meta": null}),
    ];
    let mut out = Vec::new();
    for value in values {
        let compact = value.to_string().replace("TODO via", "T\\u004fDO via");
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        out.push(compact.clone());
        out.push(pretty);
        out.push(format!("Here:\n```json\n{compact}\n```\n"));
        if rng.below(2) == 0 {
            out.push(format!("{compact} and then some TODO prose"));
        }
    }
    out
}

#[test]
fn placeholders_are_reported_as_their_strings_close_and_only_when_certain() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(7);
    let texts = placeholder_texts(&mut rng);
    for (name, pack, early) in placeholder_packs(dir.path()) {
        let mut seen = 0;
        for text in &texts {
            let record = Input::new(text.clone());
            check_stream(&pack, &record, &mut rng);
            for (v, at) in byte_by_byte(&pack, text) {
                if v.code != "placeholder.found" {
                    continue;
                }
                seen += 1;
                // Reported with the byte that closes the string, which is the one
                // the report names (or inside the field it names).
                assert_eq!(&text[at - 1..at], "\"", "{name}: {v:?} in {text}");
                assert_eq!(at, v.offset, "{name}");
            }
        }
        if early {
            assert!(seen >= 10, "{name}: only {seen} placeholders seen early");
        } else {
            assert_eq!(seen, 0, "{name}: judged early after a rewrite");
        }
    }
}
