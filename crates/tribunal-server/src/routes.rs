//! One request, answered: routing, access, limits, and the handlers.
//!
//! Every error is JSON, `{"error": {"code": ..., "message": ...}}`, with a
//! stable code (a `Failure`: docs/server.md's table is generated from them)
//! and a message that says what and where.

// A handler's early answer is its response, as `Err`: built once per request,
// never in a hot loop, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::decision_log::{DecisionLog, Entry};
use crate::failure::Failure;
use crate::metrics::{Metrics, Route};
use crate::trace::Trace;
use crate::Limits;
use tribunal::{Engine, Served};

mod eval;
mod judge;
mod stream;

use eval::{eval, ndjson_response};
use judge::{check, decide, permit, request_error, InFlight, Logged};
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
    /// Where the service's log lines go.
    pub messages: crate::Log,
}

impl State {
    pub fn new(
        engine: Engine,
        metrics: Arc<Metrics>,
        log: Option<DecisionLog>,
        limits: Limits,
        token: Option<Vec<u8>>,
        messages: crate::Log,
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
            messages,
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
                Failure::UnknownRoute,
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
            Failure::MethodNotAllowed,
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
    let mut response = error(Failure::BundleNotLoaded, bundle.not_loaded());
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
    let (failure, message) = match given {
        None => (
            Failure::AuthMissing,
            "this service needs `Authorization: Bearer TOKEN` (the token of --token-file)",
        ),
        Some(given) if constant_time_eq(given.trim_ascii(), token) => return None,
        Some(_) => (
            Failure::AuthInvalid,
            "the bearer token is not this service's",
        ),
    };
    let mut response = error(failure, message.to_owned());
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
        Failure::NoContract,
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
        Failure::ContentType,
        format!(
            "Content-Type `{}` is not accepted here: send {}",
            value.to_str().unwrap_or("(not text)"),
            accepted.join(" or ")
        ),
    ))
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
pub fn error(failure: Failure, message: String) -> Response<ResponseBody> {
    let status = failure.status();
    json_response(
        status,
        &json!({"error": {"code": failure.code(), "message": Value::String(message), "status": status.as_u16()}}),
    )
}
