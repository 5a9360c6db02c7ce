//! OpenTelemetry traces (`--otlp-endpoint URL`, or `OTEL_EXPORTER_OTLP_ENDPOINT`):
//! a span per request, a child of the caller's `traceparent` when it sends
//! one, holding per decision the `GenAI` semantic conventions' evaluation event
//! (`gen_ai.evaluation.result`: the pack as its name, the score, the status as
//! its label, the first issue as its explanation), exported over OTLP/HTTP
//! (JSON encoding, `POST {endpoint}/v1/traces`) in batches by a thread of its
//! own. A request never waits for it: a span goes into a bounded queue, or is
//! dropped and counted when the queue is full (the collector down or slow).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// Spans waiting for export, at most (then new ones are dropped).
const QUEUE: usize = 4096;
/// Spans per export request, at most.
const BATCH: usize = 512;
/// How long a span waits for its batch to fill.
const LINGER: Duration = Duration::from_millis(500);
/// Events one span holds, at most (an `eval` of many records).
const MAX_EVENTS: usize = 128;
/// A collector's time to connect, and to take a batch and answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The exporter: the queue, and what became of the spans.
#[derive(Debug)]
pub struct Exporter {
    queue: SyncSender<Finished>,
    counts: Arc<Counts>,
}

/// What became of the spans.
#[derive(Debug, Default)]
pub struct Counts {
    pub exported: AtomicU64,
    pub dropped: AtomicU64,
    pub failed_exports: AtomicU64,
}

/// A span ended, as exported.
#[derive(Debug)]
struct Finished(Value);

impl Exporter {
    /// Starts the export thread for the collector at `endpoint`
    /// (`http://HOST:PORT[/PATH]`: spans go to `PATH/v1/traces`).
    pub(crate) fn start(endpoint: &str) -> Result<Arc<Self>, String> {
        let target = Target::parse(endpoint)?;
        let (queue, spans) = mpsc::sync_channel(QUEUE);
        let counts = Arc::new(Counts::default());
        let exporting = Arc::clone(&counts);
        std::thread::Builder::new()
            .name("tribunal-otlp".into())
            .spawn(move || export(&target, &spans, &exporting))
            .map_err(|err| format!("cannot start the OTLP exporter: {err}"))?;
        Ok(Arc::new(Self { queue, counts }))
    }

    /// What became of the spans so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    fn send(&self, span: Value) {
        match self.queue.try_send(Finished(span)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// One request's span while it lasts; exported when the last holder drops it
/// (an `eval`'s workers hold it until its last record is judged).
#[derive(Debug)]
pub struct Span {
    exporter: Arc<Exporter>,
    trace_id: String,
    id: String,
    parent: Option<String>,
    start: SystemTime,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    name: String,
    attributes: Vec<Value>,
    events: Vec<Value>,
    events_dropped: u64,
    error: bool,
}

impl Span {
    /// A span for a request whose `traceparent` is `parent` (a new trace
    /// without one).
    pub fn start(exporter: &Arc<Exporter>, parent: Option<&str>) -> Self {
        let (trace_id, parent) = match parent {
            Some(header) => (header[3..35].to_owned(), Some(header[36..52].to_owned())),
            None => (random_hex(16), None),
        };
        Self {
            exporter: Arc::clone(exporter),
            trace_id,
            id: random_hex(8),
            parent,
            start: SystemTime::now(),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The request's route and method, and the answer's status.
    pub fn answered(&self, method: &str, route: &str, status: u16) {
        let mut inner = self.inner();
        inner.name = format!("{method} {route}");
        inner.attributes.extend([
            attribute("http.request.method", json!({"stringValue": method})),
            attribute("http.route", json!({"stringValue": route})),
            attribute(
                "http.response.status_code",
                json!({"intValue": status.to_string()}),
            ),
        ]);
        inner.error = status >= 500;
    }

    /// One decision: its evaluation event.
    pub fn decided(&self, pack: &str, decision_id: &str, report: &tribunal::Report) {
        let mut attributes = vec![
            attribute("gen_ai.evaluation.name", json!({"stringValue": pack})),
            attribute(
                "gen_ai.evaluation.score.label",
                json!({"stringValue": report.status().as_str()}),
            ),
            attribute("tribunal.decision_id", json!({"stringValue": decision_id})),
            attribute("tribunal.revision", json!({"stringValue": report.revision})),
        ];
        if let Some(score) = report.score {
            attributes.push(attribute(
                "gen_ai.evaluation.score.value",
                json!({"doubleValue": score}),
            ));
        }
        if let Some(issue) = report.issues.first() {
            attributes.push(attribute(
                "gen_ai.evaluation.explanation",
                json!({"stringValue": format!("{} ({})", issue.message, issue.code)}),
            ));
        }
        self.event(attributes);
    }

    /// The decisions on a proposal's calls: one event, `deny` when any
    /// call is denied.
    pub fn decided_calls(&self, pack: &str, decision_id: &str, decisions: &tribunal::Decisions) {
        let denied = decisions
            .decisions
            .iter()
            .filter(|d| d.decision == tribunal::Verdict::Deny)
            .count();
        let mut attributes = vec![
            attribute("gen_ai.evaluation.name", json!({"stringValue": pack})),
            attribute(
                "gen_ai.evaluation.score.label",
                json!({"stringValue": if denied > 0 || decisions.error.is_some() { "deny" } else { "allow" }}),
            ),
            attribute("tribunal.decision_id", json!({"stringValue": decision_id})),
            attribute(
                "tribunal.calls_denied",
                json!({"intValue": denied.to_string()}),
            ),
        ];
        let why = decisions.error.clone().or_else(|| {
            decisions
                .decisions
                .iter()
                .flat_map(|d| &d.issues)
                .next()
                .map(|i| format!("{} ({})", i.message, i.code))
        });
        if let Some(why) = why {
            attributes.push(attribute(
                "gen_ai.evaluation.explanation",
                json!({"stringValue": why}),
            ));
        }
        self.event(attributes);
    }

    fn event(&self, attributes: Vec<Value>) {
        let mut inner = self.inner();
        if inner.events.len() >= MAX_EVENTS {
            inner.events_dropped += 1;
            return;
        }
        inner.events.push(json!({
            "timeUnixNano": nanos(SystemTime::now()),
            "name": "gen_ai.evaluation.result",
            "attributes": Value::Array(attributes),
        }));
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        let inner = std::mem::take(&mut *self.inner());
        let mut span = json!({
            "traceId": self.trace_id,
            "spanId": self.id,
            "name": if inner.name.is_empty() { "request".to_owned() } else { inner.name },
            "kind": 2,
            "startTimeUnixNano": nanos(self.start),
            "endTimeUnixNano": nanos(SystemTime::now()),
            "attributes": inner.attributes,
            "events": inner.events,
            "droppedEventsCount": inner.events_dropped,
            "status": {"code": if inner.error { 2 } else { 1 }},
        });
        if let (Some(parent), Some(fields)) = (&self.parent, span.as_object_mut()) {
            fields.insert("parentSpanId".into(), parent.as_str().into());
        }
        self.exporter.send(span);
    }
}

fn attribute(key: &str, value: Value) -> Value {
    let mut attribute = serde_json::Map::with_capacity(2);
    attribute.insert("key".into(), key.into());
    attribute.insert("value".into(), value);
    Value::Object(attribute)
}

fn nanos(time: SystemTime) -> String {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_string()
}

/// `bytes` random bytes as lowercase hex (never all zeros).
fn random_hex(bytes: usize) -> String {
    use std::fmt::Write as _;
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let mut out = String::with_capacity(bytes * 2);
    while out.len() < bytes * 2 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(nanos_now());
        let _ = write!(out, "{:016x}", hasher.finish() | 1);
    }
    out.truncate(bytes * 2);
    out
}

fn nanos_now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// Where spans go.
struct Target {
    host: String,
    address: String,
    path: String,
}

impl Target {
    fn parse(endpoint: &str) -> Result<Self, String> {
        let rest = endpoint.strip_prefix("http://").ok_or_else(|| {
            format!("--otlp-endpoint {endpoint}: an http:// URL of an OTLP/HTTP collector (http://HOST:4318)")
        })?;
        let (authority, address, base) = crate::http_url(rest, 4318)
            .ok_or_else(|| format!("--otlp-endpoint {endpoint}: no host"))?;
        Ok(Self {
            host: authority.to_owned(),
            address,
            path: format!("{}/v1/traces", base.trim_end_matches('/')),
        })
    }
}

/// The export thread: batches of spans, posted one after the other.
fn export(target: &Target, spans: &Receiver<Finished>, counts: &Counts) {
    loop {
        let Ok(first) = spans.recv() else { return };
        let mut batch = vec![first.0];
        let until = Instant::now() + LINGER;
        while batch.len() < BATCH {
            match spans.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(span) => batch.push(span.0),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        let count = batch.len() as u64;
        let body = json!({"resourceSpans": [{
            "resource": {"attributes": [
                attribute("service.name", json!({"stringValue": "tribunal"})),
                attribute("service.version", json!({"stringValue": env!("CARGO_PKG_VERSION")})),
            ]},
            "scopeSpans": [{
                "scope": {"name": "tribunal-server", "version": env!("CARGO_PKG_VERSION")},
                "spans": batch,
            }],
        }]});
        if post(target, body.to_string().as_bytes()).is_ok() {
            counts.exported.fetch_add(count, Ordering::Relaxed);
        } else {
            counts.failed_exports.fetch_add(1, Ordering::Relaxed);
            counts.dropped.fetch_add(count, Ordering::Relaxed);
        }
    }
}

/// One `POST` of `body`; `Ok` when the collector answers 2xx.
fn post(target: &Target, body: &[u8]) -> std::io::Result<()> {
    let address = target
        .address
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let mut stream = TcpStream::connect_timeout(&address, CONNECT_TIMEOUT)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        target.path,
        target.host,
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut status = [0u8; 12];
    stream.read_exact(&mut status)?;
    if status.starts_with(b"HTTP/1.") && status[9] == b'2' {
        Ok(())
    } else {
        Err(std::io::Error::other("the collector refused the batch"))
    }
}

/// The exporter's series for `/metrics`.
pub fn render(exporter: &Exporter, out: &mut String) {
    use std::fmt::Write as _;
    let counts = exporter.counts();
    for (name, help, value) in [
        (
            "tribunal_otlp_spans_exported_total",
            "Spans the OTLP collector took.",
            &counts.exported,
        ),
        (
            "tribunal_otlp_spans_dropped_total",
            "Spans dropped: the queue was full, or the collector was down, slow or refused them.",
            &counts.dropped,
        ),
        (
            "tribunal_otlp_export_failures_total",
            "Batches of spans that could not be exported.",
            &counts.failed_exports,
        ),
    ] {
        let _ = write!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
            value.load(Ordering::Relaxed)
        );
    }
}
