//! OpenTelemetry from the service (`tribunal serve --otlp-endpoint`, here
//! `Config::otlp_endpoint`, run in-process): against a collector
//! this test starts on loopback (an OTLP/HTTP receiver of the JSON encoding),
//! a request's span is a child of the caller's `traceparent` and holds each
//! decision's `gen_ai.evaluation.result` event; with the collector down or
//! slow, requests are answered as fast as without one and the spans dropped
//! are counted.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{root, wait_for, Asks, Service};

/// A collector: every batch of spans it was sent, decoded.
struct Collector {
    address: SocketAddr,
    batches: Arc<Mutex<Vec<Value>>>,
}

impl Collector {
    /// Answers each batch after `delay`.
    fn start(delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let batches = Arc::new(Mutex::new(Vec::new()));
        let received = Arc::clone(&batches);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let received = Arc::clone(&received);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let (mut line, mut length, mut path) = (String::new(), 0, String::new());
                    reader.read_line(&mut line).unwrap();
                    path.push_str(line.split_whitespace().nth(1).unwrap_or(""));
                    loop {
                        line.clear();
                        reader.read_line(&mut line).unwrap();
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap();
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    std::thread::sleep(delay);
                    let batch: Value = serde_json::from_slice(&body).unwrap();
                    received
                        .lock()
                        .unwrap()
                        .push(json!({"path": path, "batch": batch}));
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
                });
            }
        });
        Self { address, batches }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every span received so far.
    fn spans(&self) -> Vec<Value> {
        self.batches
            .lock()
            .unwrap()
            .iter()
            .flat_map(|b| {
                assert_eq!(b["path"], "/v1/traces");
                b["batch"]["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    }
}

fn attribute<'a>(attributes: &'a Value, key: &str) -> &'a Value {
    attributes
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == key)
        .map_or(&Value::Null, |a| &a["value"])
}

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn check(server: &Service, output: &str) -> u16 {
    let body = json!({"output": output}).to_string();
    server
        .request(
            "POST",
            "/v1/packs/ksi-emission/check",
            &[
                ("content-type", "application/json"),
                ("traceparent", PARENT),
            ],
            body.as_bytes(),
        )
        .status
}

#[test]
fn a_request_s_span_is_the_caller_s_child_and_holds_each_decision() {
    let collector = Collector::start(Duration::ZERO);
    let endpoint = collector.endpoint();
    let server = Service::start(&["rules/"], |c| c.otlp_endpoint = Some(endpoint));
    assert_eq!(check(&server, "I would emit an agent:status event."), 200);
    let spans = wait_for("the span", || {
        let spans = collector.spans();
        (!spans.is_empty()).then_some(spans)
    });
    let span = &spans[0];
    assert_eq!(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(span["name"], "POST /v1/packs/{name}/check");
    assert_eq!(span["kind"], 2);
    assert_eq!(
        attribute(&span["attributes"], "http.response.status_code")["intValue"],
        "200"
    );
    let event = &span["events"][0];
    assert_eq!(event["name"], "gen_ai.evaluation.result");
    let attributes = &event["attributes"];
    assert_eq!(
        attribute(attributes, "gen_ai.evaluation.name")["stringValue"],
        "ksi-emission"
    );
    assert_eq!(
        attribute(attributes, "gen_ai.evaluation.score.label")["stringValue"],
        "FAIL"
    );
    assert_eq!(
        attribute(attributes, "gen_ai.evaluation.score.value")["doubleValue"],
        0.0
    );
    let explanation = attribute(attributes, "gen_ai.evaluation.explanation")["stringValue"]
        .as_str()
        .unwrap();
    assert!(
        explanation.contains("emission.described-not-emitted"),
        "{explanation}"
    );
    // Without a traceparent: a trace of its own; an eval's records are its
    // span's events, one each, once the last record is judged.
    let data = std::fs::read(root().join("examples/data/ksi-emission.jsonl")).unwrap();
    let answer = server.request(
        "POST",
        "/v1/packs/ksi-emission/eval",
        &[("content-type", "application/x-ndjson")],
        &data,
    );
    assert_eq!(answer.status, 200);
    let eval = wait_for("the eval's span", || {
        collector
            .spans()
            .into_iter()
            .find(|s| s["name"] == "POST /v1/packs/{name}/eval")
    });
    assert!(eval.get("parentSpanId").is_none());
    assert_eq!(eval["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(eval["events"].as_array().unwrap().len(), 40);
    let metrics = server.get("/metrics").text();
    assert!(
        metrics.contains("tribunal_otlp_spans_dropped_total 0"),
        "{metrics}"
    );
}

/// With the collector down, or slow to take a batch, requests are answered
/// at once; spans are dropped (and counted) rather than held up or piled up.
#[test]
fn a_collector_down_or_slow_never_slows_a_request() {
    let down = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let slow = Collector::start(Duration::from_secs(20));
    for endpoint in [format!("http://{down}"), slow.endpoint()] {
        let server = Service::start(&["rules/"], |c| c.otlp_endpoint = Some(endpoint.clone()));
        let started = Instant::now();
        for _ in 0..200 {
            assert_eq!(
                check(&server, r#"{"event": "agent:status", "data": {}}"#),
                200
            );
        }
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(20),
            "{endpoint}: 200 checks took {took:?}"
        );
        if endpoint.contains(&down.to_string()) {
            let dropped = wait_for("dropped spans", || {
                let metrics = server.get("/metrics").text();
                let dropped: u64 = metrics
                    .lines()
                    .find_map(|l| l.strip_prefix("tribunal_otlp_spans_dropped_total "))?
                    .parse()
                    .ok()?;
                (dropped >= 200).then_some(metrics)
            });
            assert!(
                dropped.contains("tribunal_otlp_export_failures_total "),
                "{dropped}"
            );
        }
        assert_eq!(server.stop(), Ok(()), "{endpoint}: the service stops");
    }
}
