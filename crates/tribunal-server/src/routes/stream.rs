//! `POST /v1/packs/{name}/stream`: an output judged while it is being written.
//!
//! The request body is the model's output itself, sent as it is generated
//! (chunked). The record's other fields come in the query: `id` (a string),
//! `expected` and `meta` (JSON), and `release=true` for release events. The
//! response starts at once and is NDJSON: each event as the engine's session
//! reports it (`{"event": "violation", ...}`, `{"event": "release", ...}`),
//! written as soon as the chunk that made it certain has arrived, and, when
//! the body ends, the result record `check` answers for the whole text, with
//! its `decision_id`. A stream that cannot be judged (a body too large, not
//! UTF-8, idle past the read timeout, a judgement past the request timeout)
//! ends with an error line instead, `{"error": {"code", "message", "status"}}`,
//! the status being the one `check` would have answered with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tribunal::{Input, Served, ServedPack, Stream};
use tribunal_base::text::Utf8Chunks;

use super::{error, ndjson_response, permit, InFlight, Logged, ResponseBody, State};
use crate::body;
use crate::failure::Failure;

/// What the query asks for: the record without its output, and whether to
/// report releases.
fn from_query(query: &str) -> Result<(Input, bool), String> {
    let mut input = Input::default();
    let mut release = false;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = percent_decoded(name)?;
        let value = percent_decoded(value)?;
        let json = |what: &str| {
            serde_json::from_str::<Value>(&value).map_err(|err| {
                format!("the query's `{what}` is not JSON: {err} (URL-encode a JSON value)")
            })
        };
        match name.as_str() {
            "id" => input.id = value.clone().into(),
            "expected" => input.expected = json("expected")?.into(),
            "meta" => input.meta = json("meta")?.into(),
            "release" => {
                release = match value.as_str() {
                    "" | "true" | "1" => true,
                    "false" | "0" => false,
                    other => {
                        return Err(format!(
                            "the query's `release` is `{other}`: use true or false"
                        ))
                    }
                }
            }
            other => {
                let known = ["id", "expected", "meta", "release"];
                let hint = tribunal_base::suggest::nearest(other, &known)
                    .map_or_else(String::new, |near| {
                        format!(": {}", tribunal_base::suggest::did_you_mean(&near))
                    });
                return Err(format!(
                    "the query has an unknown parameter `{other}`{hint} (known: {})",
                    known.join(", ")
                ));
            }
        }
    }
    Ok((input, release))
}

/// A query component with its `%XX` escapes and `+` decoded.
fn percent_decoded(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(at + 1..at + 3)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    .ok_or_else(|| format!("the query has a bad escape at `{}`", &text[at..]))?;
                out.push(hex);
                at += 2;
            }
            byte => out.push(byte),
        }
        at += 1;
    }
    String::from_utf8(out).map_err(|_| "the query is not UTF-8 once decoded".to_owned())
}

/// Opens the stream: its answer starts at once, its events follow the body.
pub fn stream(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: &Arc<Served>,
    started: Instant,
    trace: &crate::trace::Trace,
) -> Response<ResponseBody> {
    let (input, release) = match from_query(request.uri().query().unwrap_or_default()) {
        Ok(query) => query,
        Err(message) => return error(Failure::BadQuery, message),
    };
    let permit = match permit(state) {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    let in_flight = InFlight::new(&state.metrics);
    let (sender, response_body) = body::event_channel();
    let decision_id = state.engine.next_decision_id();
    // (The session holds the revision it starts with, whatever reloads.)
    let mut session = state.engine.stream(served, input);
    if release {
        session = session.with_release();
    }
    let job = Judged {
        state: Arc::clone(state),
        decision_id: decision_id.clone(),
        sender,
        started,
        judging_ns: AtomicU64::new(0),
        trace: trace.clone(),
    };
    tokio::spawn(async move {
        let _held = (permit, in_flight);
        job.run(session, request.into_body()).await;
    });
    ndjson_response(response_body, &decision_id)
}

/// One stream being judged.
struct Judged {
    state: Arc<State>,
    decision_id: String,
    sender: mpsc::Sender<Bytes>,
    started: Instant,
    /// Time spent judging so far (its chunks, then the whole text), apart
    /// from the time spent waiting for them.
    judging_ns: AtomicU64,
    trace: crate::trace::Trace,
}

/// Why a stream ends without a record: its error line.
struct Stopped {
    failure: Failure,
    message: String,
}

impl Judged {
    async fn run(self, mut session: Stream<ServedPack>, body: Incoming) {
        let last = match self.read(&mut session, body).await {
            Ok(()) => self.judge(session).await,
            Err(None) => return, // the client went away
            Err(Some(stopped)) => Err(stopped),
        };
        let line = match last {
            Ok(record) => record,
            Err(stopped) => {
                let mut line = serde_json::to_vec(&json!({"error": {
                    "code": stopped.failure.code(), "message": stopped.message,
                    "status": stopped.failure.status().as_u16(),
                }}))
                .unwrap_or_default();
                line.push(b'\n');
                line
            }
        };
        self.send(line).await;
    }

    /// Counts time spent judging.
    fn judged_for(&self, elapsed: std::time::Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.judging_ns.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Sends lines of the answer; `false` when the client is gone, or has
    /// read nothing for the send timeout (a client that stops reading does
    /// not hold its slot for ever).
    async fn send(&self, lines: Vec<u8>) -> bool {
        let sent = self.sender.send(Bytes::from(lines));
        matches!(
            tokio::time::timeout(self.state.limits.send_timeout, sent).await,
            Ok(Ok(()))
        )
    }

    /// Pushes the body's chunks through the session, sending the events of
    /// each before the next is read. `Err(None)`: the client is gone.
    async fn read(
        &self,
        session: &mut Stream<ServedPack>,
        mut body: Incoming,
    ) -> Result<(), Option<Stopped>> {
        let limits = &self.state.limits;
        let mut text = Utf8Chunks::default();
        let mut received = 0usize;
        loop {
            let frame = match tokio::time::timeout(limits.read_timeout, body.frame()).await {
                Err(_) => {
                    return Err(Some(Stopped {
                        failure: Failure::ReadTimeout,
                        message: format!(
                            "the output stopped: nothing came for {} ms ({received} bytes received; --read-timeout-ms)",
                            limits.read_timeout.as_millis()
                        ),
                    }))
                }
                Ok(None) => break,
                Ok(Some(Err(_))) => return Err(None),
                Ok(Some(Ok(frame))) => frame,
            };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            received += chunk.len();
            if received > limits.max_body_bytes {
                return Err(Some(Stopped {
                    failure: Failure::TooLarge,
                    message: format!(
                        "the output is longer than {} bytes (--max-body-bytes)",
                        limits.max_body_bytes
                    ),
                }));
            }
            let chunk = text.push(&chunk).map_err(|at| Some(not_utf8(at)))?;
            let mut lines = Vec::new();
            let judging = std::time::Instant::now();
            for event in session.push(chunk) {
                serde_json::to_writer(&mut lines, &event.to_json()).unwrap_or_default();
                lines.push(b'\n');
            }
            self.judged_for(judging.elapsed());
            if !lines.is_empty() && !self.send(lines).await {
                return Err(None);
            }
        }
        text.finish().map_err(|at| Some(not_utf8(at)))
    }

    /// The whole text's result record, with its decision id, as `check`
    /// answers it; counted and logged.
    async fn judge(&self, session: Stream<ServedPack>) -> Result<Vec<u8>, Stopped> {
        let timeout = self.state.limits.request_timeout;
        let deadline = Instant::now() + timeout;
        let logged = Logged::of_text(&self.state, session.text(), &self.trace);
        // On the engine's threads (one of its own while it runs, as the
        // stream's earlier checks were paid for as the text came).
        let (sent, judged) = tokio::sync::oneshot::channel();
        let engine = self.state.engine.clone();
        let decision_id = self.decision_id.clone();
        self.state.engine.spawn(move || {
            let judging = std::time::Instant::now();
            let decision = engine.finish(session, Some(deadline.into_std()), Some(decision_id));
            let _ = sent.send((decision, judging.elapsed()));
        });
        let judged = judged.await;
        let Ok((decision, finishing)) = judged else {
            return Err(Stopped {
                failure: Failure::Fault,
                message: "the judgement of the stream failed".to_owned(),
            });
        };
        let tribunal::Judged::Report(report) = decision.judged() else {
            unreachable!("a stream's decision is a report");
        };
        if Instant::now() >= deadline {
            let during = report
                .error()
                .map_or_else(String::new, |why| format!(" ({why})"));
            return Err(Stopped {
                failure: Failure::Timeout,
                message: format!(
                    "the judgement of the whole output took longer than {} ms (--request-timeout-ms){during}",
                    timeout.as_millis()
                ),
            });
        }
        self.judged_for(finishing);
        let mut entry = logged.entry(
            &self.decision_id,
            decision.pack(),
            report,
            self.started.elapsed(),
        );
        entry.judging = Some(std::time::Duration::from_nanos(
            self.judging_ns.load(Ordering::Relaxed),
        ));
        self.state.decided(&entry);
        let mut record = decision.into_bytes();
        record.push(b'\n');
        Ok(record)
    }
}

fn not_utf8(at: usize) -> Stopped {
    Stopped {
        failure: Failure::NotUtf8,
        message: format!("the output is not valid UTF-8 (at byte {})", at + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_gives_the_record_and_says_what_is_wrong() {
        let (input, release) =
            from_query("id=r%201&expected=%7B%22a%22%3A1%7D&meta=%7B%7D&release").unwrap();
        assert_eq!(input.id.to_serde(), json!("r 1"));
        assert!(release);
        assert_eq!(
            serde_json::to_string(&input.expected.to_serde()).unwrap(),
            r#"{"a":1}"#
        );
        assert!(!from_query("release=0").unwrap().1);
        assert!(from_query("expected=%7B")
            .unwrap_err()
            .contains("`expected` is not JSON"));
        assert!(from_query("relase=1").unwrap_err().contains("release"));
        assert!(from_query("id=%zz").unwrap_err().contains("bad escape"));
        assert!(from_query("release=maybe")
            .unwrap_err()
            .contains("true or false"));
    }
}
