//! The service run in-process, as a program that embeds it runs it (the
//! command line's flags are tested through `tribunal serve` in the root
//! crate's tests/server.rs): the answers of every route, and bad input and
//! faults (malformed and cut-off bodies, wrong content types, oversized
//! bodies, unknown packs, a thousand connections, a slowloris client, the
//! caps, reloads under load, a stream that cannot be judged) cost only the
//! request they are in.
#![allow(clippy::too_many_lines)]

#[path = "../../../tests/support/files.rs"]
mod files;
mod support;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::client::{load, ndjson, one_metric_pack, passing_check, PACKS};
use support::{read_response, root, wait_for, Asks, Service};
use tribunal::{Override, Runtime};
use tribunal_server::DecisionLogConfig;

/// A runtime that lifts every pack's own limits (`--set limits.timeout_ms=0
/// --set limits.max_operations=0`): only a request's deadline stops a script.
fn unlimited() -> Runtime {
    let mut runtime = Runtime::builder();
    for limit in ["limits.timeout_ms=0", "limits.max_operations=0"] {
        runtime = runtime
            .limit(Override::parse(limit, &root()).unwrap())
            .unwrap();
    }
    runtime.build()
}

/// A decision log at `path` that holds each record's output (`--log-outputs`).
fn logging_outputs(path: &Path) -> DecisionLogConfig {
    let mut settings = DecisionLogConfig::new(path.to_path_buf());
    settings.log_outputs = true;
    settings
}

#[test]
fn packs_prompt_schema_health_and_metrics() {
    let server = Service::start(&["rules/ksi-emission", "rules/structured-output"], |_| {});
    let packs = server.get("/v1/packs").json();
    let names: Vec<&str> = packs["packs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ksi-emission", "structured-output"]);
    let pack = &packs["packs"][0];
    assert_eq!(pack["version"], "1.0.0");
    assert_eq!(pack["revision"].as_str().unwrap().len(), 16);
    assert_eq!(pack["metrics"][0]["name"], "validate_json_emission");
    assert_eq!(pack["reload_error"], Value::Null);
    assert_eq!(
        server.get("/v1/packs/ksi-emission").json(),
        packs["packs"][0]
    );

    let prompt = server.get("/v1/packs/structured-output/prompt");
    assert_eq!(prompt.status, 200);
    assert!(prompt
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let expected = tribunal::Pack::load(root().join("rules/structured-output"))
        .unwrap()
        .prompt()
        .unwrap();
    assert_eq!(prompt.text().trim_end(), expected.trim_end());
    let schema = server.get("/v1/packs/structured-output/schema");
    assert_eq!(schema.status, 200);
    assert_eq!(schema.json()["type"], "object");
    let none = server.get("/v1/packs/ksi-emission/schema");
    assert_eq!(
        (none.status, none.code().as_str()),
        (404, "pack.no-contract")
    );

    assert_eq!(server.get("/healthz").json(), json!({"status": "ok"}));
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["status"], "ready");

    server.check("ksi-emission", &json!({"output": "I would emit an event."}));
    let metrics = server.get("/metrics");
    assert!(metrics
        .header("content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = metrics.text();
    for series in [
        "tribunal_http_requests_total{route=\"/v1/packs/{name}/check\",code=\"200\"} 1",
        "tribunal_http_request_duration_seconds_count{route=\"/v1/packs/{name}/check\"} 1",
        "tribunal_decisions_total{pack=\"ksi-emission\",status=\"FAIL\"} 1",
        "tribunal_issues_total{pack=\"ksi-emission\",code=\"emission.described-not-emitted\"} 1",
        "tribunal_reloads_total 0",
        "tribunal_embedding_cache_hits_total 0",
    ] {
        assert!(text.contains(series), "no `{series}` in\n{text}");
    }
    // Every line is a comment or `name{labels} value`.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
}

#[test]
fn bad_requests_get_a_json_error_that_says_what_and_where() {
    let server = Service::start(&["rules/"], |c| c.limits.max_body_bytes = 1000);
    let check = "/v1/packs/ksi-emission/check";
    let json_type = [("content-type", "application/json")];

    let bad = server.request(
        "POST",
        check,
        &json_type,
        b"{\"output\": \"x\",\n \"id\": }",
    );
    assert_eq!((bad.status, bad.code().as_str()), (400, "request.bad-json"));
    assert!(
        bad.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line 2 column 8"),
        "{}",
        bad.text()
    );

    for (body, says) in [
        (&b"[1, 2]"[..], "must be a JSON object"),
        (b"{\"id\": 1}", "no `output` field"),
    ] {
        let response = server.request("POST", check, &json_type, body);
        assert_eq!(
            (response.status, response.code().as_str()),
            (400, "request.invalid-record")
        );
        assert!(response.text().contains(says), "{}", response.text());
    }
    let not_utf8 = server.request("POST", check, &json_type, b"{\"output\": \"\xff\"}");
    assert_eq!(
        (not_utf8.status, not_utf8.code().as_str()),
        (400, "request.not-utf8")
    );

    let form = server.request(
        "POST",
        check,
        &[("content-type", "application/x-www-form-urlencoded")],
        b"{\"output\": \"x\"}",
    );
    assert_eq!(
        (form.status, form.code().as_str()),
        (415, "request.content-type")
    );
    assert!(form.text().contains("application/json"));

    let big = json!({"output": "x".repeat(2000)}).to_string();
    let large = server.request("POST", check, &json_type, big.as_bytes());
    assert_eq!(
        (large.status, large.code().as_str()),
        (413, "request.too-large")
    );
    assert!(large.text().contains("1000 bytes"));
    // Chunked, so without a length up front: still cut at the limit.
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST {check} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    )
    .unwrap();
    let chunked = read_response(&mut stream).unwrap();
    assert_eq!(
        (chunked.status, chunked.code().as_str()),
        (413, "request.too-large")
    );

    let unknown = server.check("ksi-emision", &json!({"output": "x"}));
    assert_eq!(
        (unknown.status, unknown.code().as_str()),
        (404, "pack.unknown")
    );
    assert!(
        unknown.text().contains("did you mean `ksi-emission`?"),
        "{}",
        unknown.text()
    );
    let route = server.get("/v2/packs");
    assert_eq!(
        (route.status, route.code().as_str()),
        (404, "route.unknown")
    );
    let method = server.get(check);
    assert_eq!(
        (method.status, method.code().as_str()),
        (405, "method.not-allowed")
    );
    assert_eq!(method.header("allow"), Some("POST"));
    // HEAD is GET without its body; DELETE is neither.
    let mut head = TcpStream::connect(server.address).unwrap();
    head.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        head,
        "HEAD /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    head.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("\r\n\r\n"), "no body: {answer:?}");
    let delete = server.request("DELETE", "/v1/packs", &[], b"");
    assert_eq!(delete.status, 405);
    assert_eq!(delete.header("allow"), Some("GET, HEAD"));

    // A body cut off: the length promised, a part sent, the connection half closed.
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST {check} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"output\": \"x"
    )
    .unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    let cut = read_response(&mut stream).unwrap();
    assert_eq!(
        (cut.status, cut.code().as_str()),
        (400, "request.cut-off"),
        "{}",
        cut.text()
    );

    // The server is unharmed.
    let fine = server.check(
        "ksi-emission",
        &json!({"output": "{\"event\": \"a:b\", \"data\": {}}"}),
    );
    assert_eq!(fine.status, 200);
    assert_eq!(fine.json()["status"], "PASS");
}

#[test]
fn an_eval_body_of_bad_lines_gets_an_error_record_for_each_and_a_cut_body_ends_with_one() {
    let server = Service::start(&["rules/ksi-emission"], |_| {});
    let body = "{\"id\": 1, \"output\": \"{\\\"event\\\": \\\"a:b\\\", \\\"data\\\": {}}\"}\nnot json\n\n{\"id\": 3}\n";
    let response = server.request(
        "POST",
        "/v1/packs/ksi-emission/eval",
        &[("content-type", "application/x-ndjson")],
        body.as_bytes(),
    );
    let records: Vec<Value> = ndjson(&response.text());
    let statuses: Vec<&str> = records
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["PASS", "ERROR", "ERROR"]);
    assert_eq!(records[1]["line"], 2);
    assert_eq!(records[2]["line"], 4);

    // Chunked, then the connection closes mid-record: the records before are
    // answered, then an ERROR record says why the rest is missing.
    let mut stream = TcpStream::connect(server.address).unwrap();
    let first = "{\"id\": 1, \"output\": \"x\"}\n{\"id\": 2, \"out";
    write!(
        stream,
        "POST /v1/packs/ksi-emission/eval HTTP/1.1\r\nhost: t\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n",
        first.len()
    )
    .unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    let response = read_response(&mut stream).unwrap();
    let lines: Vec<Value> = ndjson(&response.text());
    assert_eq!(lines.len(), 2, "{}", response.text());
    assert_eq!(lines[0]["status"], "FAIL");
    assert_eq!(lines[1]["status"], "ERROR");
    assert!(
        lines[1]["error"].as_str().unwrap().contains("cut off"),
        "{}",
        lines[1]
    );
}

#[test]
fn a_thousand_connections_at_once_are_all_answered() {
    let server = Service::start(&["rules/ksi-emission"], |_| {});
    let request = passing_check();
    // Open them all first, then send on each, then read each answer.
    let mut streams: Vec<TcpStream> = (0..1000)
        .map(|_| TcpStream::connect(server.address).expect("connect"))
        .collect();
    for stream in &mut streams {
        stream.write_all(request.as_bytes()).unwrap();
    }
    for stream in &mut streams {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let response = read_response(stream).unwrap();
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(response.json()["status"], "PASS");
    }
    drop(streams);
    assert_eq!(server.stop(), Ok(()));
}

#[test]
fn a_slowloris_client_is_cut_off_and_others_are_served_meanwhile() {
    let server = Service::start(&["rules/ksi-emission"], |c| {
        c.limits.read_timeout = Duration::from_millis(500);
    });
    let mut slow = TcpStream::connect(server.address).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut cut_off = false;
    // A header byte every 200 ms: never a whole head within the timeout.
    for byte in b"POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: slow\r\nx-padding: " {
        if slow.write_all(&[*byte]).is_err() {
            cut_off = true;
            break;
        }
        let fine = server.check("ksi-emission", &json!({"output": "x"}));
        assert_eq!(fine.status, 200);
        std::thread::sleep(Duration::from_millis(200));
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
    }
    if !cut_off {
        // The server closed its side: reading gives the end, or a 408.
        let mut rest = Vec::new();
        let _ = slow.read_to_end(&mut rest);
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the slow client was not cut off"
    );
    // A slow body, too: a 408 once nothing comes for the read timeout.
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{{\"out"
    )
    .unwrap();
    let response = read_response(&mut stream).unwrap();
    assert_eq!(
        (response.status, response.code().as_str()),
        (408, "request.timeout")
    );
}

#[test]
fn past_the_concurrency_cap_a_request_is_told_to_retry() {
    let server = Service::start(&["rules/ksi-emission"], |c| c.limits.max_concurrency = 1);
    // One request holds the only slot while its body is on its way.
    let mut holder = TcpStream::connect(server.address).unwrap();
    write!(
        holder,
        "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{{\"output\""
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let busy = server.check("ksi-emission", &json!({"output": "x"}));
    assert_eq!((busy.status, busy.code().as_str()), (503, "server.busy"));
    assert_eq!(busy.header("retry-after"), Some("1"));
    write!(holder, ": \"x\"}}").unwrap();
    let held = read_response(&mut holder).unwrap();
    assert_eq!(held.status, 200, "{}", held.text());
    assert_eq!(
        server.check("ksi-emission", &json!({"output": "x"})).status,
        200
    );
}

/// An `eval` client that sends records and never reads the results holds its
/// slot only until `--send-timeout-ms`: then the run stops and the slot is
/// freed (it was held until the client disconnected).
#[test]
fn an_eval_client_that_stops_reading_frees_its_slot_after_the_send_timeout() {
    let server = Service::start(&["rules/ksi-emission"], |c| {
        c.limits.max_concurrency = 1;
        c.limits.send_timeout = Duration::from_millis(1500);
    });
    // Results of ~100 KB each, far more than the socket buffers hold.
    let record =
        json!({"output": json!({"kind": "agent.spoke", "text": "a".repeat(100_000)}).to_string()});
    let mut line = record.to_string();
    line.push('\n');
    let records = 400;
    let mut stalled = TcpStream::connect(server.address).unwrap();
    write!(
        stalled,
        "POST /v1/packs/ksi-emission/eval HTTP/1.1\r\nhost: t\r\ncontent-type: application/x-ndjson\r\ncontent-length: {}\r\n\r\n",
        line.len() * records
    )
    .unwrap();
    let mut writer = stalled.try_clone().unwrap();
    // (The body goes out on its own thread: once the server stops reading
    // it, this write blocks, and fails when the server gives up.)
    std::thread::spawn(move || {
        for _ in 0..records {
            if writer.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    // While the stalled run holds the only slot, others are told to retry;
    // once its results have waited the send timeout, the slot is free.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut busy_seen = false;
    loop {
        let answer = server.check("ksi-emission", &json!({"output": "x"}));
        if answer.status == 200 {
            break;
        }
        assert_eq!(answer.status, 503, "{}", answer.text());
        busy_seen = true;
        assert!(
            Instant::now() < deadline,
            "the stalled client still holds the slot:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(busy_seen, "the stalled client never held the slot");
    assert!(
        server.log().contains("--send-timeout-ms"),
        "the log does not say why the run stopped:\n{}",
        server.log()
    );
    drop(stalled);
}

#[test]
fn a_reload_under_load_fails_no_request_and_a_broken_pack_keeps_the_old_revision() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("ksi");
    files::copy_dir(&root().join("rules/ksi-emission"), &pack);
    let log = dir.path().join("decisions.ndjson");
    let server = Service::start(&[pack.to_str().unwrap()], |c| {
        c.reload_every = Some(Duration::from_millis(50));
        c.reload_settle = Duration::from_millis(150);
        c.decision_log = Some(DecisionLogConfig::new(log.clone()));
    });
    let before = server.get("/v1/packs/ksi-emission").json()["revision"].clone();
    let stop = Arc::new(AtomicBool::new(false));
    let workers = load(server.address, 4, &stop);
    std::thread::sleep(Duration::from_millis(300));
    // Each edit replaces the file whole, as an editor saves it: a poll never
    // reads it half written (which would be one more failed reload).
    let save = |text: String| {
        let staged = dir.path().join("pack.yaml.new");
        fs::write(&staged, text).unwrap();
        fs::rename(&staged, pack.join("pack.yaml")).unwrap();
    };
    // A broken edit: the old revision goes on serving, the error is shown.
    let manifest = fs::read_to_string(pack.join("pack.yaml")).unwrap();
    save(format!("{manifest}\nunknown_key: 1\n"));
    let shown = wait_for("the broken edit's error", || {
        let pack = server.get("/v1/packs/ksi-emission").json();
        (pack["reload_error"] != Value::Null).then_some(pack)
    });
    assert_eq!(shown["revision"], before);
    let message = shown["reload_error"]["message"].as_str().unwrap();
    assert!(
        message.contains("pack.yaml:") && message.contains("unknown_key"),
        "{message}"
    );
    // A good edit: swapped in, the error gone.
    save(manifest.replace("version: 1.0.0", "version: 1.0.1"));
    let after = wait_for("the good edit", || {
        let pack = server.get("/v1/packs/ksi-emission").json();
        (pack["version"] == "1.0.1").then_some(pack)
    });
    assert_ne!(after["revision"], before);
    assert_eq!(after["reload_error"], Value::Null);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let answers: Vec<(u16, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(answers.len() > 20, "{} answers", answers.len());
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "a request failed during the reload"
    );
    let revisions: std::collections::BTreeSet<&str> =
        answers.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(revisions.len(), 2, "both revisions answered: {revisions:?}");
    let metrics = server.get("/metrics").text();
    assert!(metrics.contains("tribunal_reloads_total 1"), "{metrics}");
    assert!(
        metrics.contains("tribunal_reload_failures_total 1"),
        "{metrics}"
    );
    assert!(server.log().contains("still serving"), "{}", server.log());
    assert_eq!(server.stop(), Ok(()));
    // Every decision was logged, with what the log promises and no output.
    let entries: Vec<Value> = ndjson(&fs::read_to_string(&log).unwrap());
    assert_eq!(entries.len(), answers.len());
    for entry in &entries {
        for key in [
            "decision_id",
            "time",
            "pack",
            "revision",
            "status",
            "score",
            "codes",
            "latency_us",
        ] {
            assert!(entry.get(key).is_some(), "no {key} in {entry}");
        }
        assert!(entry.get("output").is_none());
    }
}

/// A client that sends its whole request and then shuts down its side of the
/// connection (half-close) still gets its answer; a request framed two ways
/// closes its connection.
#[test]
fn a_client_that_half_closes_after_its_request_gets_its_answer() {
    let server = Service::start(&["rules/ksi-emission"], |_| {});
    let body = json!({"output": "x"}).to_string();
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let answer = read_response(&mut stream).unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["status"], "FAIL");
    // A body framed both ways is read by its chunks, and the connection
    // closed after the answer (RFC 9112 §6.1: no request smuggled behind it).
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let answer = read_response(&mut stream).unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("connection"), Some("close"));
}

/// A removed pack is dropped once gone for the settle time, the last one
/// too (`pack.unknown`), and the problem is logged once, not at every look.
#[test]
fn a_removed_pack_is_dropped_and_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("packs");
    files::copy_dir(&root().join("rules/ksi-emission"), &served.join("ksi"));
    let server = Service::start(&[served.to_str().unwrap()], |c| {
        c.reload_every = Some(Duration::from_millis(30));
        c.reload_settle = Duration::from_millis(300);
    });
    let record = json!({"output": "x"});
    assert_eq!(server.check("ksi-emission", &record).status, 200);
    let removed = Instant::now();
    fs::remove_dir_all(served.join("ksi")).unwrap();
    wait_for("the pack dropped", || {
        let answer = server.check("ksi-emission", &record);
        (answer.status == 404).then(|| assert_eq!(answer.code(), "pack.unknown"))
    });
    assert!(
        removed.elapsed() >= Duration::from_millis(300),
        "dropped before the settle time"
    );
    // Many looks later, the empty folder was said once.
    std::thread::sleep(Duration::from_millis(600));
    let log = server.log();
    assert_eq!(log.matches("reload: ").count(), 1, "{log}");
    assert_eq!(
        log.matches("pack `ksi-emission` removed").count(),
        1,
        "{log}"
    );
}

#[test]
fn the_decision_log_rotates_by_size_and_logs_outputs_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("d.ndjson");
    let server = Service::start(&["rules/ksi-emission"], |c| {
        let mut settings = logging_outputs(&log);
        settings.max_bytes = 2000;
        settings.keep = 2;
        c.decision_log = Some(settings);
    });
    for i in 0..40 {
        let response = server.check(
            "ksi-emission",
            &json!({"id": i, "output": format!("output {i}")}),
        );
        assert_eq!(response.status, 200);
    }
    assert_eq!(server.stop(), Ok(()));
    let read = |path: &Path| ndjson(&fs::read_to_string(path).unwrap_or_default());
    let current = read(&log);
    let first = read(&dir.path().join("d.ndjson.1"));
    let second = read(&dir.path().join("d.ndjson.2"));
    assert!(
        !dir.path().join("d.ndjson.3").exists(),
        "only two rotated files kept"
    );
    for file in [&log, &dir.path().join("d.ndjson.1")] {
        assert!(fs::metadata(file).unwrap().len() <= 2000);
    }
    assert!(!second.is_empty() && !first.is_empty() && !current.is_empty());
    // The newest are in the file, in order, each with its output.
    let last = current.last().unwrap();
    assert_eq!(last["id"], 39);
    assert_eq!(last["output"], "output 39");
    let ids: Vec<i64> = second
        .iter()
        .chain(&first)
        .chain(&current)
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
}

/// A pack `slow` whose metric spins while the output is `spin`; else it
/// scores 1.
fn spinning_pack(dir: &Path) -> PathBuf {
    one_metric_pack(
        dir,
        "slow",
        "script: spin.rhai",
        &[(
            "spin.rhai",
            "fn evaluate(ctx) {\n    if ctx.output == \"spin\" { loop { } }\n    1.0\n}\n",
        )],
    )
}

#[test]
fn a_check_past_the_request_deadline_is_stopped_and_answered_504() {
    let dir = tempfile::tempdir().unwrap();
    let pack = spinning_pack(dir.path());
    // The pack's own limits lifted: only the request's deadline stops the spin.
    let server = Service::start(&[pack.to_str().unwrap()], |c| {
        c.runtime = unlimited();
        c.limits.request_timeout = Duration::from_millis(300);
    });
    let started = Instant::now();
    let late = server.check("slow", &json!({"output": "spin"}));
    let took = started.elapsed();
    assert_eq!(
        (late.status, late.code().as_str()),
        (504, "request.timeout"),
        "{}",
        late.text()
    );
    assert!(
        late.text().contains("300 ms") && late.text().contains("caller's deadline"),
        "{}",
        late.text()
    );
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    let fine = server.check("slow", &json!({"output": "done"}));
    assert_eq!(fine.status, 200, "{}", fine.text());
    assert_eq!(fine.json()["score"], 1.0);
}

/// Checks run on threads of their own: while every one of them spins,
/// `/healthz` and `/metrics` answer at once, and each waiting check's
/// deadline counts from its arrival, not from when a thread freed up.
#[test]
fn probes_answer_while_every_check_thread_is_busy_and_deadlines_count_from_arrival() {
    let dir = tempfile::tempdir().unwrap();
    let pack = spinning_pack(dir.path());
    let server = Arc::new(Service::start(&[pack.to_str().unwrap()], |c| {
        c.runtime = unlimited();
        c.threads = 1;
        c.limits.request_timeout = Duration::from_secs(2);
    }));
    let started = Instant::now();
    let spinning: Vec<_> = (0..3)
        .map(|_| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                let answer = server.check("slow", &json!({"output": "spin"}));
                (answer.status, answer.code(), started.elapsed())
            })
        })
        .collect();
    // All three have arrived; one spins on the only check thread.
    std::thread::sleep(Duration::from_millis(300));
    for path in ["/healthz", "/metrics", "/v1/packs"] {
        let asked = Instant::now();
        let answer = server.get(path);
        let took = asked.elapsed();
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        // (Before: the probe waited for the spinning check, about 2 s.)
        assert!(took < Duration::from_secs(1), "{path} took {took:?}");
    }
    for spin in spinning {
        let (status, code, after) = spin.join().unwrap();
        assert_eq!((status, code.as_str()), (504, "request.timeout"));
        // Each from its own arrival (before: 2 s, 4 s and 6 s).
        assert!(
            after < Duration::from_millis(3500),
            "answered after {after:?}"
        );
    }
    let fine = server.check("slow", &json!({"output": "done"}));
    assert_eq!(fine.status, 200, "{}", fine.text());
}

/// An `/eval` body that trickles in is answered as it comes: each record's
/// result arrives before the next record is sent (they waited for 256
/// records or the body's end), and each decision is logged once its result
/// is handed to the response.
#[test]
fn a_trickling_eval_gets_each_result_as_it_is_decided_and_the_log_holds_what_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.jsonl");
    let server = Service::start(&["rules/ksi-emission"], |c| {
        c.decision_log = Some(DecisionLogConfig::new(log.clone()));
    });
    let mut client = TcpStream::connect(server.address).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        client,
        "POST /v1/packs/ksi-emission/eval HTTP/1.1\r\nhost: t\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    .unwrap();
    let mut received = String::new();
    let mut buffer = vec![0u8; 65_536];
    for i in 0..3 {
        let line = format!(
            "{}\n",
            json!({"id": format!("r{i}"), "output": "{\"event\": \"agent:status\", \"data\": {}}"})
        );
        write!(client, "{:x}\r\n{line}\r\n", line.len()).unwrap();
        client.flush().unwrap();
        // Its result comes before the next record is sent.
        while !received.contains(&format!("\"id\":\"r{i}\"")) {
            let n = client.read(&mut buffer).unwrap_or_else(|e| {
                panic!("no result for record {i} while the body is open ({e}):\n{received}")
            });
            assert!(n > 0, "the connection closed:\n{received}");
            received.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
        // Logged once sent.
        let logged = wait_for("the decision logged", || {
            let text = fs::read_to_string(&log).unwrap_or_default();
            (text.lines().count() > i).then_some(text)
        });
        assert!(logged.contains(&format!("\"id\":\"r{i}\"")), "{logged}");
    }
    write!(client, "0\r\n\r\n").unwrap();
    drop(client);
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 3);
}

/// A folder of packs that links to a pack elsewhere does not serve it, at
/// start (an error naming the link and the option) nor on reload (said once,
/// the other packs served); `--follow-links` serves it.
#[cfg(unix)]
#[test]
fn a_link_to_a_pack_outside_the_served_folder_is_refused_unless_asked() {
    let served = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let write_pack = |dir: &Path, name: &str| {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("pack.yaml"), format!("name: {name}\n")).unwrap();
    };
    write_pack(&served.path().join("inside"), "inside");
    write_pack(&elsewhere.path().join("outside"), "outside");
    let link = served.path().join("linked");
    std::os::unix::fs::symlink(elsewhere.path().join("outside"), &link).unwrap();
    let folder = served.path().to_str().unwrap();
    let refused = Service::try_start(&[folder], |_| {})
        .err()
        .expect("started");
    assert!(
        refused.contains("linked") && refused.contains("--follow-links"),
        "{refused}"
    );
    let following = Service::start(&[folder], |c| c.follow_links = true);
    assert_eq!(following.get("/v1/packs/outside").status, 200);
    drop(following);
    // Without the link at start, one made later is refused on reload.
    fs::remove_file(&link).unwrap();
    let server = Service::start(&[folder], |c| {
        c.reload_every = Some(Duration::from_millis(100));
        c.reload_settle = Duration::from_millis(200);
    });
    std::os::unix::fs::symlink(elsewhere.path().join("outside"), &link).unwrap();
    wait_for("the refused link logged", || {
        server.log().contains("--follow-links").then_some(())
    });
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(server.get("/v1/packs/outside").status, 404);
    assert_eq!(server.get("/v1/packs/inside").status, 200);
    assert_eq!(
        server.log().matches("--follow-links").count(),
        1,
        "{}",
        server.log()
    );
}

/// A request of the `OpenAPI` test: the route as documented, the method, the
/// path, the headers and the body.
type Probe<'a> = (&'a str, &'a str, String, &'a [(&'a str, &'a str)], Vec<u8>);

/// The `OpenAPI` document (docs/openapi.json) against the running server: every
/// route documented is served and every route served is documented; every
/// answer's status is one the document lists for its route, and its JSON body
/// fits the schema listed.
#[test]
fn the_openapi_document_describes_the_running_server() {
    let doc: Value =
        serde_json::from_str(&fs::read_to_string(root().join("docs/openapi.json")).unwrap())
            .unwrap();
    let server = Service::start(&["rules/ksi-emission", "rules/structured-output"], |_| {});
    let json_type = [("content-type", "application/json")];
    let record = json!({"id": 1, "output": "{\"event\": \"a:b\", \"data\": {}}"}).to_string();
    // A transcript: its result has `turns`, and an issue its `turn`.
    let transcript = json!({"id": 2, "messages": [
        {"role": "user", "content": "Report."},
        {"role": "assistant", "content": "{\"event\": \"a:b\", \"data\": {}}"},
        {"role": "tool", "tool_call_id": "none", "content": "?"}
    ]})
    .to_string();
    // A proposal: the last assistant message calls a tool.
    let proposal = json!({"id": 3, "messages": [
        {"role": "user", "content": "Report."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "report", "arguments": "{}"}}
        ]}
    ]})
    .to_string();
    // (route as documented, method, path, headers, body)
    let requests: Vec<Probe> = vec![
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/ksi-emission/check".into(),
            &json_type,
            record.clone().into_bytes(),
        ),
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/ksi-emission/check".into(),
            &json_type,
            transcript.into_bytes(),
        ),
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/ksi-emission/check".into(),
            &json_type,
            b"{\"output\": ".to_vec(),
        ),
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/ksi-emission/check".into(),
            &json_type,
            b"{\"id\": 1}".to_vec(),
        ),
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/ksi-emission/check".into(),
            &[("content-type", "text/html")],
            record.clone().into_bytes(),
        ),
        (
            "/v1/packs/{name}/check",
            "post",
            "/v1/packs/nope/check".into(),
            &json_type,
            record.clone().into_bytes(),
        ),
        (
            "/v1/packs/{name}/check",
            "get",
            "/v1/packs/ksi-emission/check".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/eval",
            "post",
            "/v1/packs/ksi-emission/eval".into(),
            &[("content-type", "application/x-ndjson")],
            format!("{record}\nnot json\n").into_bytes(),
        ),
        (
            "/v1/packs/{name}/stream",
            "post",
            "/v1/packs/structured-output/stream?id=s1&release=true".into(),
            &[("content-type", "text/plain")],
            br#"{"kind": "agent.shout", "text": "Hi."}"#.to_vec(),
        ),
        (
            "/v1/packs/{name}/stream",
            "post",
            "/v1/packs/structured-output/stream?expected=%7B".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/stream",
            "get",
            "/v1/packs/structured-output/stream".into(),
            &[],
            Vec::new(),
        ),
        ("/v1/packs", "get", "/v1/packs".into(), &[], Vec::new()),
        (
            "/v1/packs/{name}",
            "get",
            "/v1/packs/ksi-emission".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/prompt",
            "get",
            "/v1/packs/structured-output/prompt".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/prompt",
            "get",
            "/v1/packs/ksi-emission/prompt".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/schema",
            "get",
            "/v1/packs/structured-output/schema".into(),
            &[],
            Vec::new(),
        ),
        (
            "/v1/packs/{name}/decide",
            "post",
            "/v1/packs/ksi-emission/decide".into(),
            &json_type,
            proposal.clone().into_bytes(),
        ),
        (
            "/v1/packs/{name}/decide",
            "post",
            "/v1/packs/ksi-emission/decide".into(),
            &json_type,
            serde_json::from_str::<Value>(&proposal).unwrap()["messages"]
                .to_string()
                .into_bytes(),
        ),
        (
            "/v1/packs/{name}/decide",
            "post",
            "/v1/packs/ksi-emission/decide".into(),
            &json_type,
            record.clone().into_bytes(),
        ),
        ("/healthz", "get", "/healthz".into(), &[], Vec::new()),
        ("/readyz", "get", "/readyz".into(), &[], Vec::new()),
        ("/metrics", "get", "/metrics".into(), &[], Vec::new()),
        (
            "/openapi.json",
            "get",
            "/openapi.json".into(),
            &[],
            Vec::new(),
        ),
    ];
    let documented: std::collections::BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, methods)| {
            methods
                .as_object()
                .unwrap()
                .keys()
                .map(move |method| (path.clone(), method.clone()))
        })
        .collect();
    let exercised: std::collections::BTreeSet<(String, String)> = requests
        .iter()
        .map(|(route, method, ..)| ((*route).to_owned(), (*method).to_owned()))
        .filter(|key| documented.contains(key))
        .collect();
    assert_eq!(
        exercised, documented,
        "every documented route is exercised here"
    );
    let schema_of = |reference: &str| {
        let mut schema = json!({"components": doc["components"].clone()});
        schema["$ref"] = json!(reference);
        jsonschema::validator_for(&schema).unwrap()
    };
    for (route, method, path, headers, body) in &requests {
        let response = server.request(&method.to_uppercase(), path, headers, body);
        assert_ne!(response.code(), "route.unknown", "{path} is not served");
        let status = response.status.to_string();
        let Some(documented) = doc["paths"][route][method]["responses"].get(&status) else {
            // A method the route does not take: the 405 is the server's, for every route.
            assert_eq!(
                response.status, 405,
                "{method} {path}: {status} is not documented"
            );
            continue;
        };
        let content_type = response.header("content-type").unwrap_or_default();
        let media = content_type.split(';').next().unwrap();
        let Some(content) = documented["content"].get(media) else {
            panic!("{method} {path} {status}: {content_type} is not documented");
        };
        if media == "application/json" {
            let schema = &content["schema"];
            let validator = match schema.get("$ref").and_then(Value::as_str) {
                Some(reference) => schema_of(reference),
                None => jsonschema::validator_for(schema).unwrap(),
            };
            let body = response.json();
            let errors: Vec<String> = validator
                .iter_errors(&body)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{method} {path} {status}: {errors:?}\n{body}"
            );
        }
        if media == "application/x-ndjson" {
            let reference = content["itemSchema"]["$ref"].as_str().unwrap_or_else(|| {
                panic!("{method} {path} {status}: the lines' itemSchema is not documented")
            });
            let validator = schema_of(reference);
            for line in response.text().lines() {
                let record: Value = serde_json::from_str(line).unwrap();
                assert!(validator.is_valid(&record), "{line}");
            }
        }
    }
}

#[test]
fn eval_records_are_logged_with_their_outputs_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("d.ndjson");
    let server = Service::start(&["rules/ksi-emission"], |c| {
        c.decision_log = Some(logging_outputs(&log));
    });
    let body = "{\"id\": \"a\", \"output\": \"I would emit an event.\"}\nnot json\n";
    let response = server.request(
        "POST",
        "/v1/packs/ksi-emission/eval",
        &[("content-type", "application/x-ndjson")],
        body.as_bytes(),
    );
    assert_eq!(response.status, 200);
    let request_id = response
        .header("x-tribunal-decision-id")
        .unwrap()
        .to_owned();
    assert_eq!(server.stop(), Ok(()));
    let entries: Vec<Value> = ndjson(&fs::read_to_string(&log).unwrap());
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["decision_id"], format!("{request_id}-1"));
    assert_eq!(entries[0]["output"], "I would emit an event.");
    assert_eq!(
        entries[0]["codes"],
        json!(["emission.described-not-emitted"])
    );
    assert_eq!(entries[1]["decision_id"], format!("{request_id}-2"));
    assert_eq!(entries[1]["status"], "ERROR");
    assert_eq!(entries[1]["error_kind"], "input");
    // Each record's latency, from the request's headers to its decision.
    for entry in &entries {
        assert!(entry["latency_us"].as_u64().is_some(), "{entry}");
    }
    assert!(
        entries[1].get("output").is_none(),
        "an unread line has no output"
    );
}

#[test]
fn past_the_connection_cap_a_connection_is_closed_as_it_comes() {
    let server = Service::start(&["rules/ksi-emission"], |c| c.limits.max_connections = 3);
    let held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(server.address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut extra = TcpStream::connect(server.address).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = extra.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n");
    assert!(
        read_response(&mut extra).is_err(),
        "a fourth connection was served"
    );
    drop(held);
    // Once the server has seen them close, connections are taken again.
    let metrics = wait_for("a connection taken again", || {
        let mut stream = TcpStream::connect(server.address).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
            .ok()?;
        let response = read_response(&mut stream).ok()?;
        (response.status == 200).then(|| response.text())
    });
    // The fourth, and any probe above that came before the three were seen closed.
    let refused: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("tribunal_connections_refused_total "))
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(refused >= 1, "{metrics}");
}

/// A stream request on loopback: its head, then the body as HTTP/1.1 chunks
/// sent one at a time; the answer's chunks are read as they come.
struct Streaming {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    /// What came of the answer's body so far, not yet a whole line.
    partial: Vec<u8>,
}

impl Streaming {
    fn open(server: &Service, path_and_query: &str) -> Self {
        let mut stream = TcpStream::connect(server.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "POST {path_and_query} HTTP/1.1\r\nhost: t\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
        }
        Self {
            stream,
            reader,
            partial: Vec::new(),
        }
    }

    fn send(&mut self, chunk: &[u8]) {
        write!(self.stream, "{:x}\r\n", chunk.len()).unwrap();
        self.stream.write_all(chunk).unwrap();
        self.stream.write_all(b"\r\n").unwrap();
        self.stream.flush().unwrap();
    }

    fn end(&mut self) {
        self.stream.write_all(b"0\r\n\r\n").unwrap();
    }

    /// The next whole line of the answer (waiting for it); `None` at its end.
    fn line(&mut self) -> Option<Value> {
        self.raw_line()
            .map(|line| serde_json::from_str(&line).unwrap())
    }

    /// The next line as sent, without its newline.
    fn raw_line(&mut self) -> Option<String> {
        loop {
            if let Some(at) = self.partial.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.partial.drain(..=at).collect();
                return Some(String::from_utf8(line[..at].to_vec()).unwrap());
            }
            let mut size = String::new();
            self.reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                return None;
            }
            self.partial.extend_from_slice(&chunk[..size]);
        }
    }
}

#[test]
fn a_stream_gets_its_violations_before_its_last_chunk_and_then_the_checks_record() {
    use std::fmt::Write as _;
    let server = Service::start(&["rules/"], |c| {
        c.limits.read_timeout = Duration::from_secs(2);
    });
    let output = r#"{"kind": "agent.shout", "text": "Hé. I am not done yet."}"#;
    let mut stream = Streaming::open(
        &server,
        "/v1/packs/structured-output/stream?id=s%201&release=true",
    );
    // The kind is complete in the second chunk: its violation comes before
    // the client sends the third, and nothing is released past the kind.
    stream.send(&output.as_bytes()[..12]);
    stream.send(&output.as_bytes()[12..23]);
    let mut released = 0;
    let violation = loop {
        let event = stream.line().expect("an event");
        match event["event"].as_str() {
            Some("release") => released = event["up_to"].as_u64().unwrap(),
            Some("violation") => break event,
            _ => panic!("{event}"),
        }
    };
    assert_eq!(violation["code"], "contract.kind-replaced");
    assert_eq!(violation["path"], "/kind");
    assert_eq!(violation["offset"], 22);
    assert!(released <= 9, "released {released}");
    // A character cut between two chunks waits for its other bytes.
    stream.send(&output.as_bytes()[23..35]);
    stream.send(&output.as_bytes()[35..]);
    stream.end();
    let mut last = String::new();
    while let Some(line) = stream.raw_line() {
        last = line;
    }
    // The last line is `check`'s record of the whole text, byte for byte, but
    // for its own decision id (the record's last member, which both have).
    let unlogged = |record: &str| {
        let (before, id) = record
            .rsplit_once(",\"decision_id\":")
            .unwrap_or_else(|| panic!("no decision id in {record}"));
        assert!(id.starts_with('"') && id.ends_with("\"}"), "{record}");
        format!("{before}}}")
    };
    let checked = server.check("structured-output", &json!({"id": "s 1", "output": output}));
    assert_eq!(unlogged(&last), unlogged(checked.text().trim_end()));

    // Every shipped example record, streamed in 7-byte chunks: the last line
    // is its `check` record, byte for byte but for the decision id.
    for pack in PACKS {
        let text = fs::read_to_string(root().join(format!("examples/data/{pack}.jsonl"))).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(6) {
            let record: Value = serde_json::from_str(line).unwrap();
            let Some(output) = record["output"].as_str() else {
                continue;
            };
            let mut query = String::new();
            for field in ["expected", "meta"] {
                if !record[field].is_null() {
                    let text = record[field].to_string();
                    let mut encoded = String::new();
                    for byte in text.bytes() {
                        write!(encoded, "%{byte:02X}").unwrap();
                    }
                    write!(query, "&{field}={encoded}").unwrap();
                }
            }
            let mut stream =
                Streaming::open(&server, &format!("/v1/packs/{pack}/stream?id=x{query}"));
            for chunk in output.as_bytes().chunks(7) {
                stream.send(chunk);
            }
            stream.end();
            let mut last = String::new();
            while let Some(line) = stream.raw_line() {
                last = line;
            }
            let mut alone = record.clone();
            alone["id"] = json!("x");
            let checked = server.check(pack, &alone);
            assert_eq!(checked.status, 200, "{}", checked.text());
            assert_eq!(
                unlogged(&last),
                unlogged(checked.text().trim_end()),
                "{pack}: {line}"
            );
        }
    }
    assert_eq!(server.stop(), Ok(()));
}

#[test]
fn a_stream_that_cannot_be_judged_ends_with_an_error_line() {
    let server = Service::start(&["rules/structured-output"], |c| {
        c.limits.read_timeout = Duration::from_millis(400);
        c.limits.max_body_bytes = 64;
    });
    let last_line = |mut stream: Streaming| {
        let mut last = Value::Null;
        while let Some(line) = stream.line() {
            last = line;
        }
        last
    };
    let mut too_long = Streaming::open(&server, "/v1/packs/structured-output/stream");
    too_long.send(&[b' '; 40]);
    too_long.send(&[b' '; 40]);
    let error = last_line(too_long);
    assert_eq!(error["error"]["code"], "request.too-large", "{error}");
    assert_eq!(error["error"]["status"], 413);

    let mut not_text = Streaming::open(&server, "/v1/packs/structured-output/stream");
    not_text.send(b"{\"text\": \"\xff");
    let error = last_line(not_text);
    assert_eq!(error["error"]["code"], "request.not-utf8", "{error}");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at byte 11"));

    let mut idle = Streaming::open(&server, "/v1/packs/structured-output/stream");
    idle.send(b"{\"text\": ");
    let error = last_line(idle);
    assert_eq!(error["error"]["code"], "request.timeout", "{error}");

    let bad = server.request(
        "POST",
        "/v1/packs/structured-output/stream?relase=true",
        &[],
        b"",
    );
    assert_eq!(
        (bad.status, bad.code().as_str()),
        (400, "request.bad-query")
    );
    assert!(
        bad.text().contains("did you mean `release`"),
        "{}",
        bad.text()
    );
}

/// What an operator audits: each logged code with its path; with
/// `--log-outputs`, a transcript's tool calls and a proposal's arguments; the
/// caller's `X-Request-Id` and `traceparent` in the log and echoed on every
/// answer (only when well formed); a stream's judging time apart from its
/// duration; and `/metrics`' build and pack-revision info series.
#[test]
fn the_audit_trail_holds_calls_paths_traces_and_a_stream_s_judging_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("d.ndjson");
    let server = Service::start(
        &["examples/packs/support-agent", "rules/structured-output"],
        |c| c.decision_log = Some(logging_outputs(&log)),
    );
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let traced = [
        ("content-type", "application/json"),
        ("x-request-id", "req-1"),
        ("traceparent", parent),
    ];
    // A finished conversation: its calls are logged, each code with its path.
    let proposal: Value = serde_json::from_str(
        &fs::read_to_string(root().join("examples/data/support-proposal.json")).unwrap(),
    )
    .unwrap();
    let mut finished = proposal["messages"].as_array().unwrap().clone();
    finished.push(json!({"role": "assistant", "content": "{\"answer\": \"TODO\"}"}));
    let record = json!({"id": "t1", "messages": finished}).to_string();
    let check = server.request(
        "POST",
        "/v1/packs/support-agent/check",
        &traced,
        record.as_bytes(),
    );
    assert_eq!(check.status, 200, "{}", check.text());
    assert_eq!(check.header("x-request-id"), Some("req-1"));
    assert_eq!(check.header("traceparent"), Some(parent));
    // A proposal: each decided call's arguments are logged.
    let decide = server.request(
        "POST",
        "/v1/packs/support-agent/decide",
        &[("x-request-id", "req-2")],
        proposal.to_string().as_bytes(),
    );
    assert_eq!(decide.status, 200, "{}", decide.text());
    assert_eq!(decide.header("x-request-id"), Some("req-2"));
    assert_eq!(decide.header("traceparent"), None);
    // Malformed tracing headers are neither echoed nor logged; an error
    // answer echoes a good one too.
    let bad = server.request(
        "POST",
        "/v1/packs/nope/check",
        &[
            ("x-request-id", "req-3"),
            (
                "traceparent",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            ),
        ],
        b"{}",
    );
    assert_eq!(bad.status, 404);
    assert_eq!(bad.header("x-request-id"), Some("req-3"));
    assert_eq!(bad.header("traceparent"), None);
    let spaced = server.request(
        "POST",
        "/v1/packs/structured-output/check",
        &[
            ("content-type", "application/json"),
            ("x-request-id", "has space"),
        ],
        json!({"output": "{}"}).to_string().as_bytes(),
    );
    assert_eq!(spaced.header("x-request-id"), None);
    // A stream that takes its time: judging is a small part of its duration.
    let mut stream = Streaming::open(&server, "/v1/packs/structured-output/stream?id=s1");
    let output = br#"{"kind": "world.observed", "text": "A booth opens."}"#;
    for chunk in output.chunks(10) {
        stream.send(chunk);
        std::thread::sleep(Duration::from_millis(100));
    }
    stream.end();
    while stream.raw_line().is_some() {}
    // /metrics: the build, and each pack with the revision it serves.
    let metrics = server.get("/metrics").text();
    assert!(
        metrics.contains(&format!(
            "tribunal_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )),
        "{metrics}"
    );
    let revision = server.get("/v1/packs/support-agent").json()["revision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        metrics.contains(&format!(
            "tribunal_pack_info{{pack=\"support-agent\",revision=\"{revision}\"}} 1"
        )),
        "{metrics}"
    );
    assert_eq!(server.stop(), Ok(()));
    let entries: Vec<Value> = ndjson(&fs::read_to_string(&log).unwrap());
    let by_id = |id: &str| {
        entries
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no entry {id}: {entries:?}"))
    };
    let checked = by_id("t1");
    assert_eq!(checked["request_id"], "req-1");
    assert_eq!(checked["traceparent"], parent);
    assert_eq!(checked["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    let codes = checked["codes"].as_array().unwrap();
    let paths = checked["paths"].as_array().unwrap();
    assert!(!codes.is_empty());
    assert_eq!(codes.len(), paths.len(), "{checked}");
    for (code, path) in codes.iter().zip(paths) {
        if code == "tool.forbidden" {
            assert_eq!(path, "/messages/3/tool_calls/1", "{checked}");
        }
    }
    let calls = checked["tool_calls"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["lookup_order", "refund", "delete_account"]);
    assert_eq!(
        calls[1]["arguments"],
        json!({"order_id": "QX7P2K", "amount": 42.5})
    );
    assert_eq!(calls[1]["path"], "/messages/3/tool_calls/0");
    let decided = by_id("ticket-4121");
    assert_eq!(decided["request_id"], "req-2");
    assert!(decided.get("traceparent").is_none(), "{decided}");
    let decisions = decided["calls"].as_array().unwrap();
    assert_eq!(
        decisions[0]["arguments"],
        json!({"order_id": "QX7P2K", "amount": 42.5})
    );
    assert_eq!(decisions[1]["decision"], "deny");
    assert_eq!(decisions[1]["arguments"], json!({}));
    let unspaced = entries
        .iter()
        .find(|e| e["pack"] == "structured-output" && e["id"].is_null())
        .unwrap();
    assert!(unspaced.get("request_id").is_none(), "{unspaced}");
    let streamed = by_id("s1");
    let (judging, lasting) = (
        streamed["judging_us"].as_u64().unwrap(),
        streamed["latency_us"].as_u64().unwrap(),
    );
    assert!(lasting >= 400_000, "{streamed}");
    assert!(judging < lasting / 4, "{streamed}");
    assert!(checked.get("judging_us").is_none());
}
