//! The fuzz targets' bodies. The `fuzz/` crate (cargo-fuzz, nightly) calls
//! them with libFuzzer's inputs, and `tests/fuzz_corpus.rs` replays every
//! committed corpus and crash file through them on stable Rust. Each feeds
//! untrusted bytes to one entry point of the engine and panics only when a
//! property every input must keep is broken (a crash, a hang past libFuzzer's
//! timeout, or an assertion below).
//!
//! Not part of the library's API: hidden, and free to change with the targets.

mod promises;

pub use promises::{
    damage, is_inner_value, lists_its_repairs, no_inner_value, same_json, BrokenPromise, DAMAGES,
};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::contract::{Contract, ContractSpec};
use crate::extract::{self, Tier};
use crate::json::Json;
use crate::manifest::{ComponentManifest, PackManifest};
use crate::pack::Pack;
use crate::pipeline::Input;
use crate::yaml::Source;

/// The input as text, the way the engine sees a model output it was given as
/// bytes (invalid UTF-8 replaced).
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// `data` split at its first NUL byte (the second part empty if there is none).
fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[]),
    }
}

/// The extraction ladder, tier by tier: whatever a tier returns is an object or
/// an array that JSON can print and read back unchanged; only `repair` lists
/// repairs; `strict` finds exactly what `serde_json` reads from the whole text
/// (without the whitespace around it); the text a tier writes without building
/// the value, or while building it, is the value's; the default ladder returns
/// the first tier's success. The failure explanations never panic. Also, as an
/// input line, the record reader's fast path reads the text as `serde_json`
/// does, whenever it reads it.
pub fn extraction(data: &[u8]) {
    let text = text(data);
    let mut first = None;
    for tier in [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair] {
        // What a pack that never reads the JSON makes: only its text.
        let written =
            extract::extract_as::<extract::Written>(&text, &[tier], extract::MultipleValues::First);
        // What a pack that reads it makes: its value, and its text when the
        // reading could write it.
        let both =
            extract::extract_as::<extract::Found>(&text, &[tier], extract::MultipleValues::First);
        let Some(found) = extract::extract(&text, &[tier]) else {
            assert!(written.is_none(), "{tier:?} wrote what it did not find");
            continue;
        };
        assert_eq!(found.tier, tier);
        assert!(
            found.value.is_object() || found.value.is_array(),
            "{tier:?} returned {}",
            found.value
        );
        // Printed by our writer and by serde_json's: the same text, which reads
        // back as the same value.
        let printed = found.value.to_string();
        assert_eq!(
            printed,
            serde_json::to_string(&found.value).expect("a printable value")
        );
        let (written, _, _) = written.expect("the text of what the tier found");
        assert_eq!(
            std::str::from_utf8(&written.0).expect("UTF-8"),
            printed,
            "{tier:?}: its text is not its value's"
        );
        let (both, _, _) = both.expect("the value and text of what the tier found");
        assert_eq!(
            both.json, found.value,
            "{tier:?}: another value with its text"
        );
        if let Some(text) = both.written {
            assert_eq!(
                std::str::from_utf8(&text.0).expect("UTF-8"),
                printed,
                "{tier:?}: the text read with its value is not the value's"
            );
        }
        let read: Value = serde_json::from_str(&printed).expect("printed JSON reads back");
        assert_eq!(
            read, found.value,
            "{tier:?}: the value changed through JSON"
        );
        if tier != Tier::Repair {
            assert!(found.repairs.is_empty(), "{tier:?} listed repairs");
        }
        first.get_or_insert(found);
    }
    // `strict` is `serde_json` on the text without the whitespace (and the
    // byte-order mark) around it, for an object or an array.
    let strict = extract::extract(&text, &[Tier::Strict]).map(|found| found.value);
    let body = text
        .trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .trim_end();
    let serde = serde_json::from_str::<Value>(body)
        .ok()
        .filter(|value| value.is_object() || value.is_array());
    assert_eq!(
        strict.as_ref().map(ToString::to_string),
        serde.map(|value| value.to_string()),
        "strict and serde_json disagree"
    );
    // The same text as an input line: what the record reader's fast path reads,
    // it reads as `serde_json` does.
    crate::jsonl::check_fast_record_reader(&text);
    let ladder = extract::extract(
        &text,
        &[Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair],
    );
    assert_eq!(ladder, first);
    let _ = extract::parse_failure(&text);
    let _ = extract::hidden_failure(&text);
    // A document the input holds whole, damaged once in every way
    // [`damage`] knows, at places the input's bytes pick: no tier finds one
    // of its inner values in what no longer parses.
    if let Some(whole) = strict.as_ref().map(Json::to_serde) {
        let seed = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        for (kind, name) in DAMAGES.iter().enumerate() {
            let at = (seed >> (kind * 7)) as usize;
            let Some(damaged) = damage(&text, kind, at, seed as usize) else {
                continue;
            };
            if serde_json::from_str::<Value>(&damaged).is_err() {
                if let Err(why) = no_inner_value(&whole, &damaged) {
                    panic!("{name}: {why}");
                }
            }
        }
    }
}

/// The ladder's answer for the repair corpus (`tests/repair_corpus.rs`): the value
/// the `tiers` find in `text`, `multiple` choosing among several documents, with the
/// tier and the repairs listed.
pub fn ladder(
    text: &str,
    tiers: &[Tier],
    multiple: extract::MultipleValues,
) -> Option<(Value, Tier, Vec<crate::extract::Repair>)> {
    extract::extract_with(text, tiers, multiple)
        .map(|found| (found.value.to_serde(), found.tier, found.repairs))
}

/// A scratch folder, removed when dropped (also when a target panics).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` in a new, empty scratch folder, removed afterwards.
fn in_scratch(f: impl FnOnce(&Path)) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = Scratch(std::env::temp_dir().join(format!(
        "tribunal-fuzz-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )));
    if std::fs::create_dir_all(&dir.0).is_ok() {
        f(&dir.0);
    }
}

/// The pack loader: the input's first part is `pack.yaml`, its second (after a
/// NUL) a component manifest, read both as YAML (`c.yaml`) and as Markdown with
/// front matter (`c.md`). Parsing and loading never panic; a pack that loads
/// evaluates a record and lists its metrics.
pub fn pack_loader(data: &[u8]) {
    let (pack, component) = split(data);
    let (pack, component) = (text(pack), text(component));
    for (name, text) in [
        ("pack.yaml", &pack),
        ("c.yaml", &component),
        ("c.md", &component),
    ] {
        if let Ok(source) = Source::from_text(Path::new(name), text.clone()) {
            if name == "pack.yaml" {
                let _ = source.parse::<PackManifest>();
            } else {
                let _ = source.parse::<ComponentManifest>();
            }
        }
    }
    // A plugin reference would load whatever library the input names (plugins
    // are trusted code, out of this target's reach): such packs are only parsed.
    if pack.contains("plugin") || component.contains("plugin") {
        return;
    }
    in_scratch(|dir| {
        let components = dir.join("components");
        if std::fs::create_dir_all(&components).is_err()
            || std::fs::write(dir.join("pack.yaml"), &pack).is_err()
            || std::fs::write(components.join("c.yaml"), &component).is_err()
        {
            return;
        }
        if let Ok(pack) = Pack::load(dir) {
            let _ = pack.metric_names().count();
            let _ = pack.prompt();
            let _ = pack.evaluate(&Input::new(r#"{"kind": "note", "text": "Hi."}"#));
        }
    });
}

/// Contract validation: the input's first part is a `contract:` section (YAML),
/// its second the model's output. A contract that compiles validates the
/// extracted JSON (or the output's text as a JSON string when none is found),
/// prints its prompt block, and exports a JSON Schema that a validator accepts.
pub fn contract(data: &[u8]) {
    let (spec, output) = split(data);
    let Ok(source) = Source::from_text(Path::new("contract.yaml"), text(spec)) else {
        return;
    };
    let Ok(spec) = source.parse::<ContractSpec>() else {
        return;
    };
    let Ok(contract) = Contract::compile(&spec) else {
        return;
    };
    let output = text(output);
    let json = extract::extract_with(&output, &contract.ladder, contract.multiple_values)
        .map_or_else(|| Json::from(output.as_str()), |found| found.value);
    let (_issues, coerced) = contract.validate(&json, &output);
    if let Some(coerced) = coerced {
        let _ = contract.validate(&coerced, &output);
    }
    let _ = contract.validate(&Json::Null, &output);
    conform_once(&contract, &json);
    let _ = contract.format_block();
    let _ = contract.fallback_json(&output);
    let schema = contract.json_schema("fuzz");
    if let Err(err) = jsonschema::validator_for(&schema) {
        panic!("the contract's JSON Schema does not compile: {err}\n{schema}");
    }
}

/// `repair: schema` on `json`: every change but a drop is at a path that
/// holds a value afterwards (a drop's path holds none), and a second pass
/// changes nothing.
fn conform_once(contract: &Contract, json: &Json) {
    let mut contract = contract.clone();
    contract.repair = crate::contract::RepairMode::Schema;
    let mut conformed = json.clone();
    let changes = contract.conform(&mut conformed);
    for change in &changes {
        let dropped = change.repair == crate::extract::Repair::DroppedUnexpectedField;
        assert_eq!(
            conformed.pointer(&change.path).is_none(),
            dropped,
            "{change:?} in {conformed:?}, from {json:?}"
        );
    }
    let mut again = conformed.clone();
    let more = contract.conform(&mut again);
    assert!(
        more.is_empty() && again == conformed,
        "a second pass changed {more:?}: {conformed:?} from {json:?}"
    );
}

/// The Rhai host: the input (after its first byte, which picks the kind) is a
/// script file of a metric or a postprocessor, run under the default limits on
/// two records. Loading and evaluating never panic: a bad script is a load
/// error, a failing one an ERROR record.
pub fn script(data: &[u8]) {
    let Some((&kind, script)) = data.split_first() else {
        return;
    };
    let (kind, section) = if kind % 2 == 0 {
        ("metric", "metrics")
    } else {
        ("postprocessor", "postprocessors")
    };
    let script = text(script);
    in_scratch(|dir| {
        let manifest = format!("kind: {kind}\nname: s\nimplementation: {{ script: s.rhai }}\n");
        let pack = format!("name: fuzz\ncomponents: [s.yaml]\npipeline:\n  {section}: [s]\n");
        if std::fs::write(dir.join("s.rhai"), &script).is_err()
            || std::fs::write(dir.join("s.yaml"), manifest).is_err()
            || std::fs::write(dir.join("pack.yaml"), pack).is_err()
        {
            return;
        }
        if let Ok(pack) = Pack::load(dir) {
            for output in [r#"{"a": 1, "b": [true, null, "x"]}"#, "no JSON here"] {
                let _ = pack.evaluate(&Input::new(output));
            }
        }
    });
}

/// A pack for [`stream`]: a contract with variants, nested objects, items
/// with fields, counts, enums and lengths, and placeholder checks of listed
/// fields and of every string after it (loaded once).
fn stream_pack() -> &'static Pack {
    static PACK: std::sync::OnceLock<Pack> = std::sync::OnceLock::new();
    PACK.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tribunal-fuzz-stream-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        std::fs::write(
            dir.join("pack.yaml"),
            "name: fuzz\ncontract:\n  kind_field: action\n  additional_fields: false\n  fields:\n    \
             action: { type: string, required: true }\n    \
             why: { type: string, required: true, sentences: [1, 2], max_length: 40 }\n    \
             tags: { type: array, items: string, unique_items: true, max_items: 3 }\n  variants:\n    \
             call:\n      fields:\n        tool: { type: string, required: true, enum: [search, fetch] }\n        \
             args:\n          type: object\n          additional_fields: false\n          fields:\n            \
             q: { type: string, required: true }\n            limit: { type: integer, min: 1, max: 50 }\n    \
             answer:\n      fields:\n        text: { type: [string, \"null\"], required: true }\n        \
             citations:\n          type: array\n          min_items: 1\n          items:\n            \
             type: object\n            additional_fields: false\n            kind_field: kind\n            \
             fields:\n              doc: { type: string, required: true }\n            \
             variants:\n              page: { fields: { n: { type: integer } } }\n              url:\n\
             pipeline:\n  postprocessors:\n    - use: contract\n    - use: no_placeholders\n      \
             with: { fields: [why, tags, /args/q], case_sensitive: false }\n    \
             - use: no_placeholders\n      as: anywhere\n      with: { tokens: [TODO, '<'] }\n",
        )
        .expect("the fuzz pack is written");
        let pack = Pack::load(&dir).expect("the fuzz pack loads");
        // (Loaded, it needs its files no more: none is left in the temp folder.)
        let _ = std::fs::remove_dir_all(&dir);
        pack
    })
}

/// Streaming sessions: the input (after its first byte, which picks the chunk
/// sizes) is a model's output, pushed in chunks. `finish()` is byte for byte
/// `evaluate()`; when the document the session read whole is the one
/// extracted (`Stream::document` is the report's tier), every violation it
/// reported early is in the report, as worded there; no
/// violation starts inside a prefix it released; nothing panics.
pub fn stream(data: &[u8]) {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let output = text(rest);
    let pack = stream_pack();
    let whole = pack.evaluate(&Input::new(output.clone()));
    let report = whole.to_value();
    let mut session = pack.stream().with_release();
    let (mut at, mut step, mut released) = (0, usize::from(seed % 16) + 1, 0);
    let mut events = Vec::new();
    let mut stopped = false;
    while at < output.len() {
        let mut end = (at + step).min(output.len());
        while !output.is_char_boundary(end) {
            end += 1;
        }
        for event in session.push(&output[at..end]) {
            match &event {
                crate::stream::StreamEvent::Release { up_to } => {
                    assert!(
                        *up_to > released && *up_to <= end,
                        "release {up_to} after {released}"
                    );
                    released = *up_to;
                }
                crate::stream::StreamEvent::Stopped { at, .. } => {
                    assert!(!stopped, "a second stop at {at}");
                    assert!(*at < end, "stopped at {at} after {end} bytes");
                    stopped = true;
                }
                crate::stream::StreamEvent::Violation(v) => {
                    assert!(!stopped, "{v:?} after the session stopped");
                    assert!(
                        v.start >= released,
                        "{v:?} inside the released {released} bytes"
                    );
                    assert!(
                        v.start < v.offset && v.offset <= end,
                        "{v:?} after {end} bytes"
                    );
                }
            }
            events.push(event);
        }
        at = end;
        // Chunk sizes vary with the seed: 1 to 16 bytes, growing and shrinking.
        step = (step * 5 + usize::from(seed)) % 17 + 1;
    }
    let document = session.document().map(Tier::as_str);
    assert_eq!(
        session.finish().to_json_line(),
        whole.to_json_line(),
        "finish() is not evaluate()"
    );
    if document.is_some() && report["extraction"]["tier"].as_str() == document {
        let issues = report["issues"].as_array().cloned().unwrap_or_default();
        for event in events {
            if let crate::stream::StreamEvent::Violation(v) = event {
                let in_report = issues.iter().any(|i| {
                    i["code"] == v.code.as_str()
                        && i["message"] == v.message.as_str()
                        && i["path"].as_str() == v.path.as_deref()
                });
                assert!(
                    in_report,
                    "{v:?} is not in the report: {}",
                    report["issues"]
                );
            }
        }
    }
}

/// The plugin reply parser: the input is what a plugin returned. Reading the
/// envelope and checking it as a metric's, a postprocessor's and a strategy's
/// result never panics.
pub fn plugin_reply(data: &[u8]) {
    let Some(value) = crate::plugin::read_reply(Some(data)) else {
        return;
    };
    let _ = crate::wire::metric_output("fuzz", "fuzz", value.clone());
    let _ = crate::wire::post_output("fuzz", "fuzz", value.clone());
    let _ = crate::wire::similarity("fuzz", &value);
}

/// The pack [`transcript`] judges each input with, loaded once.
static TRAVEL_AGENT: std::sync::OnceLock<Pack> = std::sync::OnceLock::new();

/// Transcripts: the input, read as JSON, is a record's `messages`. Reading it
/// never panics; every issue, turn and call has a path that points into the
/// value (an issue at its member or message, a call at its block or item, its
/// arguments where they are written), and reading is deterministic.
pub fn transcript(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let messages = Json::from(value);
    let (transcript, issues) = crate::transcript::read(&messages, "/messages");
    let resolves = |path: &str| {
        let inner = path
            .strip_prefix("/messages")
            .unwrap_or_else(|| panic!("{path} is not under /messages"));
        assert!(
            messages.pointer(inner).is_some(),
            "{path} is not in {messages:?}"
        );
    };
    for issue in &issues {
        let path = issue
            .path
            .as_deref()
            .expect("a transcript issue has a path");
        resolves(path);
        // An issue placed at a turn is inside that turn's message or a call of it.
        if let Some(turn) = issue.turn {
            let turn = &transcript.turns[turn];
            let under = |prefix: &str| {
                path == prefix || path.starts_with(prefix) && path[prefix.len()..].starts_with('/')
            };
            assert!(
                under(&turn.path) || turn.tool_calls.iter().any(|c| under(&c.path)),
                "{path} is not in its turn {turn:?}"
            );
        }
    }
    for turn in &transcript.turns {
        resolves(&turn.path);
        for call in &turn.tool_calls {
            resolves(&call.path);
            if !call.arguments.is_null() {
                resolves(&call.arguments_path);
            }
        }
    }
    assert_eq!(
        crate::transcript::read(&messages, "/messages"),
        (transcript.clone(), issues),
        "reading is deterministic"
    );
    let input = Input::from_messages(messages);
    assert_eq!(
        input.output,
        transcript.last_assistant_text().unwrap_or_default()
    );
    // `null` is no transcript at all: the record has no turns.
    let is_transcript = !input.messages.is_null();
    // Judged by the travel-agent pack (tool_calls with every key and argument
    // rules, a cross-turn script, a metric per assistant turn): a result, with
    // one entry per turn, each issue's turn one of them.
    let pack = TRAVEL_AGENT.get_or_init(|| {
        let dir = crate::files::built_in_repository().join("examples/packs/travel-agent");
        Pack::load(dir).expect("the example pack loads")
    });
    let report = pack.evaluate(&input);
    let Some(turns) = report.turns.as_ref() else {
        assert!(!is_transcript, "a transcript record has turns");
        return;
    };
    assert!(is_transcript, "a record without messages has no turns");
    assert_eq!(turns.len(), transcript.turns.len());
    for issue in &report.issues {
        if let Some(turn) = issue.turn {
            assert!(turn < turns.len(), "{issue:?}");
            assert!(
                turns[turn].issues.contains(issue),
                "{issue:?} is in its turn"
            );
        }
    }
}
