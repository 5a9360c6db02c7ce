//! `eval`: a batch of records in an NDJSON body, judged as they arrive, the
//! results streamed back in input order.

use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};
use tokio::time::Instant;
use tribunal::jsonl;

use super::judge::{permit, InFlight, Logged};
use super::{content_type_is, ResponseBody, State};
use crate::body::{self};
use crate::trace::Trace;
use tribunal::Served;

pub(super) fn eval(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    const NDJSON: [&str; 5] = [
        "application/x-ndjson",
        "application/jsonl",
        "application/json-lines",
        "application/json",
        "text/plain",
    ];
    if let Err(response) = content_type_is(&request, &NDJSON) {
        return response;
    }
    let permit = match permit(state) {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    let in_flight = InFlight::new(&state.metrics);
    let reader = body::pump(request.into_body(), state.limits.read_timeout);
    let (mut sink, response_body) = body::result_channel(state.limits.send_timeout);
    let request_id = state.engine.next_decision_id();
    let id = request_id.clone();
    // Each record's decision is counted on the worker that judged it; its
    // log line (with the time from the request's headers to that decision)
    // is made there too, and logged once the record's result has been handed
    // to the response: the log holds no decision the client was not sent.
    let decided = {
        let state = Arc::clone(state);
        let served = Arc::clone(&served);
        let trace = trace.clone();
        move |report: &tribunal::Report, input: Option<&tribunal::Input>, out: &mut Vec<u8>| {
            state.metrics.decision(served.pack().name(), report);
            if trace.span.is_none() && state.log.is_none() {
                return;
            }
            let decision_id = format!("{id}-{}", report.line.unwrap_or(0));
            if let Some(span) = &trace.span {
                span.decided(served.pack().name(), &decision_id, report);
            }
            if let Some(log) = &state.log {
                // (A line that could not be read has no input: its trace alone.)
                let logged = Logged::of(&state, input, &trace);
                let latency = started.elapsed();
                out.extend_from_slice(
                    log.line(&logged.entry(&decision_id, served.pack(), report, latency))
                        .as_bytes(),
                );
            }
        }
    };
    let log_state = Arc::clone(state);
    let max_record_bytes = state.limits.max_record_bytes;
    let request = request_id.clone();
    let engine = state.engine.clone();
    state.engine.spawn(move || {
        let _held = (permit, in_flight);
        let mut options = jsonl::Options::default();
        options.max_record_bytes = max_record_bytes;
        let mut delivered = DeliveredLog(&log_state);
        let beside = jsonl::Beside {
            out: &mut delivered,
            write: &decided,
        };
        let mut progress = |_| {};
        let batch = tribunal::Batch::new(&options, &mut progress).beside(Some(beside));
        if let Err(err) = engine.run(&served, reader, &mut sink, batch) {
            log_state.messages.line(&format!(
                "eval {request} on `{}` stopped: {err}",
                served.pack().name()
            ));
        }
    });
    ndjson_response(response_body, &request_id)
}

/// The decision log's lines of records whose results were handed to the
/// response (what `/eval` writes beside its results, after them).
pub(super) struct DeliveredLog<'a>(&'a State);

impl std::io::Write for DeliveredLog<'_> {
    fn write(&mut self, lines: &[u8]) -> std::io::Result<usize> {
        if let Some(log) = &self.0.log {
            for line in lines.split_inclusive(|b| *b == b'\n') {
                log.send(String::from_utf8_lossy(line).into_owned());
            }
        }
        Ok(lines.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A streamed NDJSON answer, naming its decision.
pub(super) fn ndjson_response(
    body: body::ChannelBody,
    decision_id: &str,
) -> Response<ResponseBody> {
    let mut response = Response::new(body.boxed());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    if let Ok(value) = HeaderValue::from_str(decision_id) {
        headers.insert("x-tribunal-decision-id", value);
    }
    response
}
