//! The engine's one request API: `Engine::decide` and `Engine::submit` give,
//! for every record of the shipped data sets, the bytes the batch runner
//! writes for it, ending with the decision id; every body that is not a
//! request says what kind it is, with a stable code.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tribunal::{jsonl, Engine, ErrorKind, Judged, Request, RequestErrorKind};

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn engine() -> Engine {
    Engine::builder()
        .source(repository().join("rules"))
        .source(repository().join("examples/packs/support-agent"))
        .threads(2)
        .build()
        .expect("the shipped packs load")
}

/// Every shipped data set of a shipped pack, each line judged through the
/// engine and through the batch runner's own record reader and writer.
#[test]
fn each_record_gets_the_batch_runner_s_bytes_and_its_decision_id() {
    let engine = engine();
    let mut ids = BTreeSet::new();
    for (pack, data) in [
        ("ksi-emission", "examples/data/ksi-emission.jsonl"),
        ("json-eval", "examples/data/json-eval.jsonl"),
        ("context-agent", "examples/data/context-agent.jsonl"),
        ("agent-response", "examples/data/agent-response.jsonl"),
        ("structured-output", "examples/data/structured-output.jsonl"),
        ("scripted-fields", "examples/data/scripted-fields.jsonl"),
    ] {
        let text = std::fs::read_to_string(repository().join(data)).unwrap();
        let loaded = engine.pack(pack).expect("served");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (input, note) =
                jsonl::read_record(line.as_bytes(), 1, &jsonl::Options::default()).unwrap();
            let mut expected = Vec::new();
            jsonl::evaluate_record_into(loaded.pack(), input, note, None, &mut expected);
            let decision = engine
                .decide(Request::check(pack, line.as_bytes().to_vec()))
                .unwrap();
            let id = decision.id().to_owned();
            assert_eq!(id.len(), 32, "{id}");
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
            assert!(ids.insert(id.clone()), "decision id {id} given twice");
            expected.pop(); // its `}`
            expected.extend_from_slice(format!(",\"decision_id\":\"{id}\"}}").as_bytes());
            assert_eq!(
                String::from_utf8_lossy(decision.bytes()),
                String::from_utf8_lossy(&expected),
                "{pack}: {line}"
            );
            assert!(matches!(decision.judged(), Judged::Report(_)));
            assert_eq!(decision.pack().revision(), loaded.pack().revision());
        }
    }
}

/// A body that is not a request of its kind is refused, saying what it is;
/// the codes are the ones docs/server.md lists.
#[test]
fn each_kind_of_bad_request_has_its_code() {
    let engine = engine();
    let refused = |request: Request| {
        let what = format!("{request:?}");
        engine
            .decide(request)
            .map(|d| String::from_utf8_lossy(d.bytes()).into_owned())
            .expect_err(&what)
    };
    let cases: Vec<(Request, RequestErrorKind, &str)> = vec![
        (
            Request::check("ksi-emision", b"{\"output\": \"x\"}".to_vec()),
            RequestErrorKind::UnknownPack,
            "did you mean `ksi-emission`?",
        ),
        (
            Request::check("ksi-emission", b"{\"output\": \"\xff\"}".to_vec()),
            RequestErrorKind::NotUtf8,
            "byte",
        ),
        (
            Request::check("ksi-emission", b"{\"output\": ".to_vec()),
            RequestErrorKind::BadJson,
            "line 1 column",
        ),
        (
            Request::check("ksi-emission", b"[1, 2]".to_vec()),
            RequestErrorKind::InvalidRecord,
            "",
        ),
        (
            Request::check("ksi-emission", b"{\"id\": 1}".to_vec()),
            RequestErrorKind::InvalidRecord,
            "output",
        ),
        (
            Request::check("ksi-emission", b"\"just text\"".to_vec()),
            RequestErrorKind::InvalidRecord,
            "",
        ),
        (
            Request::decide("support-agent", b"{\"output\": \"hi\"}".to_vec()),
            RequestErrorKind::NoMessages,
            "messages",
        ),
        (
            Request::check("ksi-emission", b"{\"output\": \"x\"}".to_vec()).max_record_bytes(4),
            RequestErrorKind::TooLarge,
            "15 bytes, above the limit of 4 bytes",
        ),
    ];
    for (request, kind, says) in cases {
        let what = format!("{request:?}");
        let err = refused(request);
        assert_eq!(err.kind(), kind, "{what}: {err}");
        assert_eq!(err.code(), kind.code());
        assert!(
            !err.message().starts_with("line 1: "),
            "{what}: {err} (a request has no lines)"
        );
        assert!(err.message().contains(says), "{what}: {err}");
    }
    let codes: BTreeSet<&str> = [
        RequestErrorKind::UnknownPack,
        RequestErrorKind::NotUtf8,
        RequestErrorKind::BadJson,
        RequestErrorKind::InvalidRecord,
        RequestErrorKind::NoMessages,
        RequestErrorKind::TooLarge,
        RequestErrorKind::Expired,
    ]
    .iter()
    .map(|kind| kind.code())
    .collect();
    let documented = std::fs::read_to_string(repository().join("docs/server.md")).unwrap();
    for code in codes {
        assert!(
            documented.contains(&format!("`{code}`")),
            "{code} undocumented"
        );
    }
}

/// `submit` judges on the executor's threads, never the caller's; a request
/// whose deadline passed while it waited is not judged.
#[test]
fn submitted_requests_are_judged_on_the_executor_and_expire_unjudged() {
    let engine = engine();
    let (sent, received) = mpsc::channel();
    let record = br#"{"output": "{\"ksi\": 4}"}"#.to_vec();
    for _ in 0..4 {
        let sent = sent.clone();
        engine.submit(
            Request::check("ksi-emission", record.clone()),
            move |decision| {
                let thread = std::thread::current().name().map(str::to_owned);
                sent.send((decision.map(|d| d.id().to_owned()), thread))
                    .unwrap();
            },
        );
    }
    let past = Instant::now()
        .checked_sub(Duration::from_millis(1))
        .unwrap();
    let sent_expired = sent.clone();
    engine.submit(
        Request::check("ksi-emission", record).deadline(past),
        move |decision| {
            sent_expired
                .send((decision.map(|d| d.id().to_owned()), None))
                .unwrap();
        },
    );
    let mut judged = 0;
    for _ in 0..5 {
        let (decision, thread) = received.recv_timeout(Duration::from_secs(60)).unwrap();
        match decision {
            Ok(_) => {
                judged += 1;
                assert_eq!(thread.as_deref(), Some("tribunal-worker"));
            }
            Err(err) => assert_eq!(err.kind(), RequestErrorKind::Expired),
        }
    }
    assert_eq!(judged, 4);
    assert_eq!(engine.threads(), 2);
}

/// A proposal sent as its list of messages is decided as the record holding
/// them; the answer is one JSON line ending with its decision id.
#[test]
fn a_list_of_messages_is_the_record_of_those_messages() {
    let engine = engine();
    let record =
        std::fs::read_to_string(repository().join("examples/data/support-proposal.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&record).unwrap();
    let messages = serde_json::to_vec(&value["messages"]).unwrap();
    let answers: Vec<serde_json::Value> = [serde_json::to_vec(&value).unwrap(), messages]
        .into_iter()
        .map(|body| {
            let decision = engine
                .decide(Request::decide("support-agent", body))
                .unwrap();
            assert!(decision.bytes().ends_with(b"\n"));
            let mut answer: serde_json::Value = serde_json::from_slice(decision.bytes()).unwrap();
            assert_eq!(answer["decision_id"], decision.id());
            answer.as_object_mut().unwrap().remove("decision_id");
            answer.as_object_mut().unwrap().remove("id");
            answer
        })
        .collect();
    assert_eq!(answers[0], answers[1]);
    assert!(!answers[0]["decisions"].as_array().unwrap().is_empty());
}

/// A library binding's calls (`answer_unreadable`): a record that cannot be
/// read gets its `ERROR` result, with the reason a server's request is refused
/// for and the id as far as it could be read; what is not a record's fault
/// (an unknown pack, a proposal without messages) is still refused.
#[test]
fn an_unreadable_record_is_answered_with_its_error_result_when_asked() {
    let engine = engine();
    let served = engine.pack("ksi-emission").expect("served");
    let bodies: [&[u8]; 6] = [
        b"{\"id\": 7, \"output\": ",
        b"{\"id\": 8, \"output\": \"\xff\"}",
        b"[1, 2]",
        b"{\"id\": \"no output\"}",
        b"\"just text\"",
        b"{\"id\": 9, \"output\": \"0123456789\"}",
    ];
    for body in bodies {
        let request = || Request::check("ksi-emission", body.to_vec()).max_record_bytes(30);
        let refused = engine.decide(request()).expect_err("not a record");
        let answered = engine
            .decide(request().anonymous().answer_unreadable())
            .expect("answered");
        let report = answered.judged().clone().into_report().expect("a report");
        assert_eq!(report.error(), Some(refused.message()), "{body:?}");
        assert_eq!(report.error_kind(), Some(ErrorKind::Input));
        let expected =
            served
                .pack()
                .errored(report.id.clone(), ErrorKind::Input, refused.message());
        assert_eq!(
            String::from_utf8_lossy(answered.bytes()),
            expected.to_json_line()
        );
    }
    let ids: Vec<String> = bodies
        .iter()
        .map(|body| {
            let request = Request::check("ksi-emission", body.to_vec()).answer_unreadable();
            let decision = engine.decide(request.max_record_bytes(30)).unwrap();
            decision
                .judged()
                .clone()
                .into_report()
                .unwrap()
                .id
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["7", "8", "null", "\"no output\"", "null", "null"]);
    let record = b"{\"output\": \"x\"}".to_vec();
    let unknown = Request::check("ksi-emision", record.clone()).answer_unreadable();
    assert_eq!(
        engine.decide(unknown).unwrap_err().kind(),
        RequestErrorKind::UnknownPack
    );
    let no_messages = Request::decide("support-agent", record).answer_unreadable();
    assert_eq!(
        engine.decide(no_messages).unwrap_err().kind(),
        RequestErrorKind::NoMessages
    );
}

/// A record the front end read itself, with the warning reading it gave
/// (`note`), is judged as the same bytes are; `unwritten` leaves the answer
/// unwritten; an engine made for one loaded pack serves it, and its
/// streams start their issues with the note too.
#[test]
fn a_record_read_by_the_front_end_keeps_its_note() {
    let pack = tribunal::Pack::load(repository().join("rules/ksi-emission")).unwrap();
    let (engine, served) = Engine::with_pack(pack);
    assert_eq!(engine.names(), ["ksi-emission"]);
    let line =
        br#"{"id": 1, "output": "{\"ksi\": 4, \"x\": \"\ud800\"}", "meta": {"k": "\udfff"}}"#;
    let (input, note) = jsonl::read_call_record(line).unwrap();
    assert!(note.is_some(), "lone surrogates are noted");
    let from_bytes = engine
        .decide(Request::check("ksi-emission", line.to_vec()).anonymous())
        .unwrap();
    let from_record = engine
        .decide(
            Request::check_record("ksi-emission", input.clone())
                .note(note.clone())
                .anonymous(),
        )
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(from_record.bytes()),
        String::from_utf8_lossy(from_bytes.bytes())
    );
    let report = from_record.into_judged().into_report().unwrap();
    assert_eq!(report.issues.first(), note.as_ref());
    let unwritten = engine
        .decide(
            Request::check_record("ksi-emission", input.clone())
                .note(note.clone())
                .unwritten(),
        )
        .unwrap();
    assert!(unwritten.bytes().is_empty());
    assert_eq!(
        unwritten.into_judged().into_report().unwrap().issues,
        report.issues
    );
    let mut session = engine
        .stream(&served, input.clone())
        .with_note(note.clone());
    session.push("");
    let streamed = engine.finish(session, None, None);
    assert_eq!(
        String::from_utf8_lossy(streamed.bytes()),
        String::from_utf8_lossy(from_bytes.bytes())
    );
}
