//! One request, answered: routing, access, limits, and the handlers.
//!
//! Every error is JSON, `{"error": {"code": ..., "message": ...}}`, with a
//! stable code (docs/server.md lists them) and a message that says what and
//! where.

// A handler's early answer is its response, as `Err`: built once per request,
// never in a hot loop, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tribunal::jsonl;

use crate::body::{self, BodyError};
use crate::decision_log::{DecisionLog, Entry};
use crate::metrics::{Metrics, Route};
use crate::trace::Trace;
use crate::Limits;
use tribunal::{Engine, Served};

mod stream;
pub(crate) mod table;

/// The response body type of every route.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// What every request shares.
#[derive(Debug)]
pub struct State {
    /// The packs, and where checks run: the engine's executor, never the
    /// threads that serve connections.
    pub engine: Engine,
    pub metrics: Arc<Metrics>,
    pub log: Option<DecisionLog>,
    pub limits: Limits,
    pub token: Option<Vec<u8>>,
    pub permits: Arc<Semaphore>,
    pub shutting_down: AtomicBool,
    /// The bundle the packs come from, when they come from one.
    pub bundle: Option<Arc<crate::bundle_source::BundleStatus>>,
    /// Where spans go (`--otlp-endpoint`).
    pub otlp: Option<Arc<crate::otlp::Exporter>>,
}

impl State {
    pub fn new(
        engine: Engine,
        metrics: Arc<Metrics>,
        log: Option<DecisionLog>,
        limits: Limits,
        token: Option<Vec<u8>>,
    ) -> Self {
        Self {
            engine,
            metrics,
            log,
            permits: Arc::new(Semaphore::new(limits.max_concurrency)),
            limits,
            token,
            shutting_down: AtomicBool::new(false),
            bundle: None,
            otlp: None,
        }
    }
}

impl State {
    /// One decision (a check's, a stream's): counted, and logged when there
    /// is a decision log.
    fn decided(&self, entry: &Entry<'_>) {
        self.metrics.decision(entry.pack, entry.report);
        if let Some(span) = &entry.trace.span {
            span.decided(entry.pack, entry.decision_id, entry.report);
        }
        if let Some(log) = &self.log {
            log.log(entry);
        }
    }
}

impl State {
    /// The decisions on a proposal's calls: counted, and logged (one line,
    /// with each call's name, decision and issue codes) when there is a
    /// decision log.
    fn decided_calls(
        &self,
        pack: &tribunal::Pack,
        decisions: &tribunal::Decisions,
        decision_id: &str,
        latency: std::time::Duration,
        logged: &Logged,
    ) {
        self.metrics.calls(pack.name(), decisions);
        if let Some(span) = &logged.trace.span {
            span.decided_calls(pack.name(), decision_id, decisions);
        }
        if let Some(log) = &self.log {
            log.send(log.calls_line(
                decision_id,
                pack,
                decisions,
                latency,
                logged.tool_calls.as_ref(),
                &logged.trace,
            ));
        }
    }
}

/// Answers one request, and counts it.
pub async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let started = Instant::now();
    let mut trace = Trace::of(request.headers());
    if let Some(exporter) = &state.otlp {
        let span = crate::otlp::Span::start(exporter, trace.traceparent.as_deref());
        trace.span = Some(Arc::new(span));
    }
    let method = request.method().clone();
    let (route, mut response) = route(&state, request, started, &trace).await;
    trace.echo(response.headers_mut());
    if let Some(span) = &trace.span {
        span.answered(method.as_str(), route.label(), response.status().as_u16());
    }
    state
        .metrics
        .request(route, response.status().as_u16(), started.elapsed());
    Ok(response)
}

async fn route(
    state: &Arc<State>,
    request: Request<Incoming>,
    started: Instant,
    trace: &Trace,
) -> (Route, Response<ResponseBody>) {
    let path = request.uri().path().to_owned();
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let Some(def) = table::find(&segments) else {
        return (
            Route::Other,
            error(
                StatusCode::NOT_FOUND,
                "route.unknown",
                format!("no route {path}: see GET /v1/packs, POST /v1/packs/{{name}}/check and docs/server.md"),
            ),
        );
    };
    let (route, allowed) = (def.route, def.method.clone());
    // Probes need no token.
    if route.needs_token() {
        if let Some(denied) = authorize(state, &request) {
            return (route, denied);
        }
    }
    // HEAD is GET without the body (hyper leaves it out), as HTTP has it.
    let head_of_get = request.method() == Method::HEAD && allowed == Method::GET;
    if request.method() != allowed && !head_of_get {
        let (takes, allow) = if allowed == Method::GET {
            ("GET (or HEAD)", "GET, HEAD")
        } else {
            ("POST", "POST")
        };
        let mut response = error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method.not-allowed",
            format!("{} {path}: this route takes {takes}", request.method()),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        return (route, response);
    }
    let name = segments.get(2).copied().unwrap_or_default();
    let response = match route {
        Route::Healthz => {
            let mut health = json!({"status": "ok"});
            if let Some(bundle) = &state.bundle {
                health["bundle"] = bundle.describe(&state.engine);
            }
            json_response(StatusCode::OK, &health)
        }
        Route::Readyz => readiness(state),
        Route::Metrics => metrics(state),
        Route::OpenApi => openapi(),
        Route::Packs => json_response(
            StatusCode::OK,
            &json!({"packs": crate::packs::describe_all(&state.engine)}),
        ),
        _ => match bundle_not_loaded(state) {
            Some(response) => response,
            None => match find_pack(state, name) {
                Err(response) => response,
                Ok(served) => pack_route(state, route, request, served, started, trace).await,
            },
        },
    };
    (route, response)
}

/// Until the first good bundle (`--bundle`), no pack is served, nor said
/// unknown: the pack routes' 503.
fn bundle_not_loaded(state: &State) -> Option<Response<ResponseBody>> {
    let bundle = state.bundle.as_ref()?;
    if state.engine.bundle_revision().is_some() {
        return None;
    }
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "bundle.not-loaded",
        bundle.not_loaded(),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    Some(response)
}

/// A route of the pack `served`. (Every answer of a bundle's pack names
/// the bundle: an `eval` body's lines are `eval`'s own, without it.)
async fn pack_route(
    state: &Arc<State>,
    route: Route,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    let bundle = served
        .pack()
        .bundle_revision()
        .and_then(|revision| HeaderValue::from_str(revision).ok());
    let mut response = match route {
        Route::Pack => json_response(
            StatusCode::OK,
            &crate::packs::describe(&state.engine, &served),
        ),
        Route::Prompt => prompt(&served),
        Route::Schema => schema(&served),
        Route::Check => check(state, request, served, started, trace).await,
        Route::Decide => decide(state, request, served, started, trace).await,
        Route::Stream => stream::stream(state, request, &served, started, trace),
        _ => eval(state, request, served, started, trace),
    };
    if let Some(bundle) = bundle {
        response.headers_mut().insert("x-tribunal-bundle", bundle);
    }
    response
}

/// The service's `OpenAPI` document (generated from the route table; a test
/// holds it to what the server answers).
fn openapi() -> Response<ResponseBody> {
    let mut response = Response::new(full(crate::openapi::document()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `None` when the request may proceed; else its 401.
fn authorize(state: &State, request: &Request<Incoming>) -> Option<Response<ResponseBody>> {
    let token = state.token.as_deref()?;
    // (The scheme's name is case-insensitive, RFC 9110 §11.1: `bearer`
    // and `BEARER` are `Bearer`.)
    let given = request.headers().get(AUTHORIZATION).and_then(|value| {
        let value = value.as_bytes().trim_ascii_start();
        let space = value.iter().position(u8::is_ascii_whitespace)?;
        let (scheme, token) = value.split_at(space);
        scheme.eq_ignore_ascii_case(b"bearer").then_some(token)
    });
    let (code, message) = match given {
        None => (
            "auth.missing",
            "this service needs `Authorization: Bearer TOKEN` (the token of --token-file)",
        ),
        Some(given) if constant_time_eq(given.trim_ascii(), token) => return None,
        Some(_) => ("auth.invalid", "the bearer token is not this service's"),
    };
    let mut response = error(StatusCode::UNAUTHORIZED, code, message.to_owned());
    response
        .headers_mut()
        .insert("www-authenticate", HeaderValue::from_static("Bearer"));
    Some(response)
}

/// Equality whose time depends on the lengths only, not on where the bytes
/// first differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

fn readiness(state: &State) -> Response<ResponseBody> {
    if state.shutting_down.load(Ordering::Relaxed) {
        json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "shutting down"}),
        )
    } else if let Some(bundle) = &state.bundle {
        let ready = state.engine.bundle_revision().is_some();
        json_response(
            if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            },
            &json!({
                "status": if ready { "ready" } else { "waiting for a bundle" },
                "packs": state.engine.names(),
                "bundle": bundle.describe(&state.engine),
            }),
        )
    } else {
        json_response(
            StatusCode::OK,
            &json!({"status": "ready", "packs": state.engine.names()}),
        )
    }
}

fn metrics(state: &State) -> Response<ResponseBody> {
    let served = crate::packs::revisions(&state.engine);
    let mut text = state.metrics.render(
        state.engine.runtime().embedding_cache_report().as_ref(),
        &served,
    );
    if let Some(bundle) = &state.bundle {
        bundle.render(&state.engine, &mut text);
    }
    if let Some(otlp) = &state.otlp {
        crate::otlp::render(otlp, &mut text);
    }
    let mut response = Response::new(full(text));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

fn find_pack(state: &State, name: &str) -> Result<Arc<Served>, Response<ResponseBody>> {
    state.engine.find(name).map_err(|err| request_error(&err))
}

fn prompt(served: &Served) -> Response<ResponseBody> {
    match served.pack().prompt() {
        Some(text) => {
            let mut response = Response::new(full(text));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            response
        }
        None => no_contract(served),
    }
}

fn schema(served: &Served) -> Response<ResponseBody> {
    match served.pack().json_schema() {
        Some(schema) => json_response(StatusCode::OK, &schema),
        None => no_contract(served),
    }
}

fn no_contract(served: &Served) -> Response<ResponseBody> {
    error(
        StatusCode::NOT_FOUND,
        "pack.no-contract",
        format!(
            "pack `{}` has no contract, so no prompt block or JSON Schema",
            served.pack().name()
        ),
    )
}

/// `Ok` when the request's content type is one of `accepted` (its parameters
/// aside; a request without one is taken as the first), else its 415.
fn content_type_is(
    request: &Request<Incoming>,
    accepted: &[&str],
) -> Result<(), Response<ResponseBody>> {
    let Some(value) = request.headers().get(CONTENT_TYPE) else {
        return Ok(());
    };
    let given = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if accepted.contains(&given.as_str()) {
        return Ok(());
    }
    Err(error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "request.content-type",
        format!(
            "Content-Type `{}` is not accepted here: send {}",
            value.to_str().unwrap_or("(not text)"),
            accepted.join(" or ")
        ),
    ))
}

/// How long past its deadline a check's answer waits for the check to
/// stop and say where it was.
const JUDGED_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// A permit to judge, or the 503 that says to come back.
fn permit(state: &State) -> Result<tokio::sync::OwnedSemaphorePermit, Response<ResponseBody>> {
    Arc::clone(&state.permits).try_acquire_owned().map_err(|_| {
        let mut response = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server.busy",
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
struct InFlight(Arc<Metrics>);

impl InFlight {
    fn new(metrics: &Arc<Metrics>) -> Self {
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
struct JudgeRequest {
    body: Vec<u8>,
    permit: tokio::sync::OwnedSemaphorePermit,
    _in_flight: InFlight,
    deadline: Instant,
}

/// Reads a JSON body for a route that judges it on the executor.
async fn judge_request(
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
async fn on_executor(
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
            StatusCode::INTERNAL_SERVER_ERROR,
            "server.fault",
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
fn request_error(err: &tribunal::RequestError) -> Response<ResponseBody> {
    use tribunal::RequestErrorKind as Kind;
    let (status, message) = match err.kind() {
        Kind::UnknownPack => (StatusCode::NOT_FOUND, err.message().to_owned()),
        Kind::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body: {}", err.message()),
        ),
        Kind::Expired => (StatusCode::GATEWAY_TIMEOUT, err.message().to_owned()),
        _ => (
            StatusCode::BAD_REQUEST,
            format!("the body: {}", err.message()),
        ),
    };
    error(status, err.code(), message)
}

/// The 504 of a request judged past its deadline.
fn timed_out(state: &State, during: &str) -> Response<ResponseBody> {
    error(
        StatusCode::GATEWAY_TIMEOUT,
        "request.timeout",
        format!(
            "the check took longer than {} ms (--request-timeout-ms){during}",
            state.limits.request_timeout.as_millis()
        ),
    )
}

async fn check(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    let JudgeRequest {
        body,
        permit,
        _in_flight,
        deadline,
    } = match judge_request(state, request, started).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let request = tribunal::Request::check(served.pack().name(), body);
    let decision = match on_executor(state, permit, deadline, request).await {
        Ok(decision) => decision,
        Err(response) => return response,
    };
    if let tribunal::Judged::Report(report) = decision.judged() {
        let logged = Logged::of(state, decision.input(), trace);
        state.decided(&logged.entry(decision.id(), decision.pack(), report, started.elapsed()));
    }
    let id = decision.id().to_owned();
    json_bytes_response(decision.into_bytes(), &id)
}

/// A JSON answer (its bytes) naming its decision.
fn json_bytes_response(body: Vec<u8>, decision_id: &str) -> Response<ResponseBody> {
    let mut response = Response::new(full(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(value) = HeaderValue::from_str(decision_id) {
        headers.insert("x-tribunal-decision-id", value);
    }
    response
}

/// `decide`: the tool calls a transcript's last assistant message proposes,
/// allowed or denied before they run (`Pack::decide`). The body is a record
/// with `messages` (and `id`, `meta`, `expected` if need be), or the
/// messages themselves.
async fn decide(
    state: &Arc<State>,
    request: Request<Incoming>,
    served: Arc<Served>,
    started: Instant,
    trace: &Trace,
) -> Response<ResponseBody> {
    let JudgeRequest {
        body,
        permit,
        _in_flight,
        deadline,
    } = match judge_request(state, request, started).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let request = tribunal::Request::decide(served.pack().name(), body);
    let decision = match on_executor(state, permit, deadline, request).await {
        Ok(decision) => decision,
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
    let id = decision.id().to_owned();
    json_bytes_response(decision.into_bytes(), &id)
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

fn too_large(limit: usize) -> Response<ResponseBody> {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request.too-large",
        format!("the body is larger than {limit} bytes (--max-body-bytes)"),
    )
}

fn body_error(err: &BodyError, state: &State) -> Response<ResponseBody> {
    match err {
        BodyError::TooLarge { limit } => too_large(*limit),
        BodyError::Timeout { received } => error(
            StatusCode::REQUEST_TIMEOUT,
            "request.timeout",
            format!(
                "the body did not arrive in time ({received} bytes received; --read-timeout-ms {}, --request-timeout-ms {})",
                state.limits.read_timeout.as_millis(),
                state.limits.request_timeout.as_millis()
            ),
        ),
        BodyError::CutOff { received, why } => error(
            StatusCode::BAD_REQUEST,
            "request.cut-off",
            format!("the body was cut off after {received} bytes: {why}"),
        ),
    }
}

fn eval(
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
            crate::packs::log(&format!(
                "eval {request} on `{}` stopped: {err}",
                served.pack().name()
            ));
        }
    });
    ndjson_response(response_body, &request_id)
}

/// The decision log's lines of records whose results were handed to the
/// response (what `/eval` writes beside its results, after them).
struct DeliveredLog<'a>(&'a State);

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
fn ndjson_response(body: body::ChannelBody, decision_id: &str) -> Response<ResponseBody> {
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

fn full(body: impl Into<Bytes>) -> ResponseBody {
    Full::new(body.into()).boxed()
}

/// A JSON response.
pub fn json_response(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let mut text = serde_json::to_vec(value).unwrap_or_default();
    text.push(b'\n');
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An error response: `{"error": {"code", "message"}}`.
pub fn error(status: StatusCode, code: &str, message: String) -> Response<ResponseBody> {
    json_response(
        status,
        &json!({"error": {"code": code, "message": Value::String(message), "status": status.as_u16()}}),
    )
}
