//! The routes that judge one record: `check` and `decide`, their bodies
//! read within the request's deadline, judged on the engine's executor,
//! and what the decision log keeps of them.

// A handler's early answer is its response, as `Err` (see routes.rs).
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Request, Response};
use serde_json::Value;
use tokio::time::Instant;

use super::{content_type_is, error, full, ResponseBody, State};
use crate::body::{self, BodyError};
use crate::decision_log::{DecisionLog, Entry};
use crate::failure::Failure;
use crate::metrics::Metrics;
use crate::trace::Trace;
use tribunal::Served;

/// How long past its deadline a check's answer waits for the check to
/// stop and say where it was.
pub(super) const JUDGED_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// A permit to judge, or the 503 that says to come back.
pub(super) fn permit(
    state: &State,
) -> Result<tokio::sync::OwnedSemaphorePermit, Response<ResponseBody>> {
    Arc::clone(&state.permits).try_acquire_owned().map_err(|_| {
        let mut response = error(
            Failure::Busy,
            format!(
                "{} requests are being judged (--max-concurrency): retry",
                state.limits.max_concurrency
            ),
        );
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        response
    })
}

/// Counts a request in flight while it lives.
pub(super) struct InFlight(Arc<Metrics>);

impl InFlight {
    pub(super) fn new(metrics: &Arc<Metrics>) -> Self {
        metrics.in_flight(1);
        Self(Arc::clone(metrics))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight(-1);
    }
}

/// A `check` or `decide` request's body, read within the request's
/// deadline, with the concurrency slot it holds.
pub(super) struct JudgeRequest {
    body: Vec<u8>,
    permit: tokio::sync::OwnedSemaphorePermit,
    _in_flight: InFlight,
    deadline: Instant,
}

/// Reads a JSON body for a route that judges it on the executor.
pub(super) async fn judge_request(
    state: &Arc<State>,
    request: Request<Incoming>,
    started: Instant,
) -> Result<JudgeRequest, Response<ResponseBody>> {
    content_type_is(&request, &["application/json"])?;
    let limit = state.limits.max_body_bytes;
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large(limit));
    }
    let permit = permit(state)?;
    let in_flight = InFlight::new(&state.metrics);
    // From the request's arrival: its head was read on a thread that never
    // runs checks.
    let deadline = started + state.limits.request_timeout;
    let body = body::read_limited(
        request.into_body(),
        limit,
        state.limits.read_timeout,
        deadline,
    )
    .await
    .map_err(|err| body_error(&err, state))?;
    Ok(JudgeRequest {
        body: body.to_vec(),
        permit,
        _in_flight: in_flight,
        deadline,
    })
}

/// Judges `request` on the engine's executor and waits for it until the
/// deadline (and a moment more, for a check stopping there to say where):
/// the slot is held until the judging ends, even when the answer has gone
/// out as a 504. `Err` is the answer when there is no decision, or when it
/// came past the deadline (a 504 saying in which step it stopped).
pub(super) async fn on_executor(
    state: &State,
    permit: tokio::sync::OwnedSemaphorePermit,
    deadline: Instant,
    request: tribunal::Request,
) -> Result<tribunal::Decision, Response<ResponseBody>> {
    let (judged, outcome) = tokio::sync::oneshot::channel();
    let request = request
        .deadline(deadline.into_std())
        .max_record_bytes(
            state
                .limits
                .max_record_bytes
                .max(state.limits.max_body_bytes),
        )
        .keep_input(state.log.as_ref().is_some_and(DecisionLog::logs_outputs));
    state.engine.submit(request, move |decision| {
        // The slot is free before the answer goes out: a client that sends
        // its next request on reading it finds the slot free.
        drop(permit);
        let _ = judged.send(decision);
    });
    let mut outcome = outcome;
    let judged = match tokio::time::timeout_at(deadline, &mut outcome).await {
        Ok(judged) => judged.ok(),
        // A check being judged stops at the deadline within moments, and
        // its report says in which step.
        Err(_) => tokio::time::timeout(JUDGED_GRACE, outcome)
            .await
            .ok()
            .and_then(Result::ok),
    };
    match judged {
        Some(Ok(decision)) if Instant::now() >= deadline => {
            let during = decision
                .judged()
                .error()
                .map_or_else(String::new, |why| format!(" ({why})"));
            Err(timed_out(state, &during))
        }
        Some(Ok(decision)) => Ok(decision),
        Some(Err(err)) if err.kind() != tribunal::RequestErrorKind::Expired => {
            Err(request_error(&err))
        }
        None if Instant::now() < deadline => Err(error(
            Failure::Fault,
            "the check ended without a result".to_owned(),
        )),
        _ => Err(timed_out(
            state,
            " (it waited that long for a free check thread)",
        )),
    }
}

/// The answer to a request the engine refused: its code, and an HTTP
/// status for it.
pub(super) fn request_error(err: &tribunal::RequestError) -> Response<ResponseBody> {
    let failure = Failure::of(err.kind());
    let message = match failure {
        Failure::UnknownPack | Failure::Timeout => err.message().to_owned(),
        _ => format!("the body: {}", err.message()),
    };
    error(failure, message)
}

/// The 504 of a request judged past its deadline.
pub(super) fn timed_out(state: &State, during: &str) -> Response<ResponseBody> {
    error(
        Failure::Timeout,
        format!(
            "the check took longer than {} ms (--request-timeout-ms){during}",
            state.limits.request_timeout.as_millis()
        ),
    )
}

pub(super) async fn check(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    let name = served.pack().name();
    let ask = |body| tribunal::Request::check(name, body);
    let (decision, _in_flight) = match judged(state, request, started, ask).await {
        Ok(judged) => judged,
        Err(response) => return response,
    };
    if let tribunal::Judged::Report(report) = decision.judged() {
        let logged = Logged::of(state, decision.input(), trace);
        state.decided(&logged.entry(decision.id(), decision.pack(), report, started.elapsed()));
    }
    json_bytes_response(decision)
}

/// A `check` or `decide` request judged: its body read within the request's
/// deadline, the request `ask` makes of it judged on the engine's executor.
/// The decision, and what counts the request in flight (until the answer is
/// made); or the answer that says why there is none.
async fn judged(
    state: &Arc<State>,
    request: Request<Incoming>,
    started: Instant,
    ask: impl FnOnce(Vec<u8>) -> tribunal::Request,
) -> Result<(tribunal::Decision, InFlight), Response<ResponseBody>> {
    let JudgeRequest {
        body,
        permit,
        _in_flight: in_flight,
        deadline,
    } = judge_request(state, request, started).await?;
    let decision = on_executor(state, permit, deadline, ask(body)).await?;
    Ok((decision, in_flight))
}

/// The JSON answer of `decision` (its bytes), naming it.
fn json_bytes_response(decision: tribunal::Decision) -> Response<ResponseBody> {
    let id = HeaderValue::from_str(decision.id());
    let mut response = Response::new(full(decision.into_bytes()));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(value) = id {
        headers.insert("x-tribunal-decision-id", value);
    }
    response
}

/// `decide`: the tool calls a transcript's last assistant message proposes,
/// allowed or denied before they run (`Pack::decide`). The body is a record
/// with `messages` (and `id`, `meta`, `expected` if need be), or the
/// messages themselves.
pub(super) async fn decide(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    let name = served.pack().name();
    let ask = |body| tribunal::Request::decide(name, body);
    let (decision, _in_flight) = match judged(state, request, started, ask).await {
        Ok(judged) => judged,
        Err(response) => return response,
    };
    if let tribunal::Judged::Calls(decisions) = decision.judged() {
        let logged = Logged::of(state, decision.input(), trace);
        state.decided_calls(
            decision.pack(),
            decisions,
            decision.id(),
            started.elapsed(),
            &logged,
        );
    }
    json_bytes_response(decision)
}

/// What the decision log keeps of a request beside its result: its trace,
/// and, when the log takes outputs, the output and a transcript's tool calls.
#[derive(Debug, Default)]
pub(crate) struct Logged {
    pub(crate) output: Option<String>,
    pub(crate) tool_calls: Option<Value>,
    pub(crate) trace: Trace,
}

impl Logged {
    /// What is logged of `input` (taken before it is judged).
    /// (No input: the request did not keep it, as the log takes no outputs.)
    pub(crate) fn of(state: &State, input: Option<&tribunal::Input>, trace: &Trace) -> Self {
        let Some(input) = input else {
            return Self {
                trace: trace.clone(),
                ..Self::default()
            };
        };
        let mut logged = Self::of_text(state, &input.output, trace);
        if logged.output.is_some() {
            logged.tool_calls = crate::decision_log::tool_calls(&input.messages);
        }
        logged
    }

    /// What is logged of an output alone (a stream's text).
    pub(crate) fn of_text(state: &State, output: &str, trace: &Trace) -> Self {
        let outputs = state.log.as_ref().is_some_and(DecisionLog::logs_outputs);
        Self {
            output: outputs.then(|| output.to_owned()),
            tool_calls: None,
            trace: trace.clone(),
        }
    }

    /// The decision's log entry.
    pub(crate) fn entry<'a>(
        &'a self,
        decision_id: &'a str,
        pack: &'a tribunal::Pack,
        report: &'a tribunal::Report,
        latency: std::time::Duration,
    ) -> Entry<'a> {
        Entry {
            decision_id,
            pack: pack.name(),
            bundle: pack.bundle_revision(),
            report,
            latency,
            output: self.output.as_deref(),
            tool_calls: self.tool_calls.as_ref(),
            judging: None,
            trace: &self.trace,
        }
    }
}

pub(super) fn too_large(limit: usize) -> Response<ResponseBody> {
    error(
        Failure::TooLarge,
        format!("the body is larger than {limit} bytes (--max-body-bytes)"),
    )
}

pub(super) fn body_error(err: &BodyError, state: &State) -> Response<ResponseBody> {
    match err {
        BodyError::TooLarge { limit } => too_large(*limit),
        BodyError::Timeout { received } => error(
            Failure::ReadTimeout,
            format!(
                "the body did not arrive in time ({received} bytes received; --read-timeout-ms {}, --request-timeout-ms {})",
                state.limits.read_timeout.as_millis(),
                state.limits.request_timeout.as_millis()
            ),
        ),
        BodyError::CutOff { received, why } => error(
            Failure::CutOff,
            format!("the body was cut off after {received} bytes: {why}"),
        ),
    }
}
