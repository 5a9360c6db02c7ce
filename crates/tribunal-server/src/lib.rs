//! `tribunal serve`: rule packs as a local HTTP decision service.
//!
//! A front end over the engine, like the command line and the Python binding:
//! every pack loads once on one engine [`Runtime`] (one worker pool, one
//! embedding model per model folder, kept warm), and each request is judged by
//! the engine's own code, so a check's answer is the result record `tribunal
//! eval` writes for the same record, with a `decision_id` added.
//!
//! HTTP/1.1 on hyper and tokio. What it serves (docs/server.md, and the
//! `OpenAPI` document docs/openapi.json):
//!
//! | route | what |
//! |---|---|
//! | `POST /v1/packs/{name}/check` | one record (`{"output", "expected", "meta", "id", "messages"}`) in, its result record out |
//! | `POST /v1/packs/{name}/eval` | NDJSON records in, NDJSON result records out, streamed, in input order |
//! | `GET /v1/packs`, `/v1/packs/{name}` | the packs: name, version, revision, metrics, reload state |
//! | `GET /v1/packs/{name}/prompt`, `/schema` | the contract's prompt block and JSON Schema |
//! | `GET /healthz`, `/readyz` | liveness, readiness |
//! | `GET /metrics` | Prometheus text format |
//!
//! In a Rust program, the service runs on a thread of its own, its log lines
//! go where the program says, and a [`Stop`] handle stops it as SIGTERM does:
//!
//! ```no_run
//! use std::sync::mpsc;
//! use tribunal::{LoadOptions, Runtime};
//! use tribunal_server::{serve, Config, Log, Stop};
//!
//! let mut config = Config::new(vec!["rules/".into()], Runtime::new(), LoadOptions::default());
//! config.listen = ([127, 0, 0, 1], 0).into(); // a free port
//! config.log = Log::new(|line| println!("service: {line}"));
//! let stop: Stop = config.stop.clone();
//! let (ready, listening) = mpsc::channel();
//! let service = std::thread::spawn(move || serve(&config, |address| ready.send(address).unwrap()));
//! let address = listening.recv().unwrap(); // it listens: ask http://{address}/v1/...
//! stop.stop(); // no new connections; the requests in flight are answered
//! service.join().unwrap().unwrap();
//! # let _ = address;
//! ```
//!
//! Layers: the engine's [`Engine`](tribunal::Engine) holds the packs, reloads
//! them and judges every check on its executor; [`packs`] shows them and
//! logs what reloads did; [`routes`] answers one request; [`server`] accepts connections, applies the limits and shuts
//! down; [`metrics`] and [`decision_log`] record what was decided.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tribunal::{LoadOptions, Runtime};

mod body;
mod bundle_source;
mod decision_log;
mod failure;
mod metrics;
mod openapi;
mod otlp;
mod packs;
mod routes;
mod server;
mod time;
mod trace;

pub use bundle_source::BundleConfig;
pub use decision_log::DecisionLogConfig;
pub use server::serve;

/// An `http://` URL's parts after the scheme (`rest`): its authority (host
/// and port as written), the address to connect to (`default_port` when it
/// names none), and its path (`""` when it has none). `None`: no host.
pub(crate) fn http_url(rest: &str, default_port: u16) -> Option<(&str, String, &str)> {
    let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    if authority.is_empty() {
        return None;
    }
    let address = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:{default_port}")
    };
    Some((authority, address, path))
}

/// The service's `OpenAPI` document (`GET /openapi.json`, `tribunal serve
/// --print-openapi`), generated from the route table; docs/openapi.json is a
/// copy a test keeps equal, and another holds it to what the server answers.
pub use openapi::document as openapi_document;

/// Everything `tribunal serve` is started with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Pack folders, or folders holding packs (each pack folder below one).
    pub sources: Vec<PathBuf>,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The engine runtime every pack loads on.
    pub runtime: Runtime,
    /// How packs load (`--set`, `--allow-plugins`, `--allow-path`, ...).
    pub load: LoadOptions,
    /// Who may call: a bearer token, or anyone who reaches the port.
    pub auth: Auth,
    /// Listen on a public address without a token (something in front of the
    /// service checks callers).
    pub insecure_no_auth: bool,
    /// Sizes, deadlines and caps.
    pub limits: Limits,
    /// How often pack folders are looked at for changes (`None`: never).
    pub reload_every: Option<Duration>,
    /// How long a pack's files must stay unchanged, or its folder gone,
    /// before a reload takes the change.
    pub reload_settle: Duration,
    /// Where decisions are logged, if anywhere.
    pub decision_log: Option<DecisionLogConfig>,
    /// Serve packs that a folder of packs links to outside itself (else
    /// such a link is refused: at start an error, on reload said once).
    pub follow_links: bool,
    /// Threads that run checks (0: one per core); connections are served
    /// on two threads of their own, which never judge.
    pub threads: usize,
    /// Serve the packs of a bundle fetched from a URL or a file, polled
    /// (`--bundle`), instead of pack folders: verified against the load
    /// options' trusted keys.
    pub bundle: Option<BundleConfig>,
    /// Export a span per request, with each decision's evaluation event, to
    /// this OTLP/HTTP collector (`http://HOST:4318`; `--otlp-endpoint`).
    pub otlp_endpoint: Option<String>,
    /// Stops the service as SIGTERM does, from the program that runs it
    /// ([`Stop::stop`]): a program that embeds the server, or a test.
    pub stop: Stop,
    /// Where the service's log lines go (listening, reloads, stops, a
    /// decision log that cannot be written): stderr unless a program that
    /// embeds the server takes them ([`Log::new`]).
    pub log: Log,
}

/// Where the service's log lines go: stderr, each line after the time and
/// `tribunal serve:` ([`Log::stderr`], the default), or a function of the
/// program that runs the service, given each message with its control
/// characters made printable.
#[derive(Clone)]
pub struct Log(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl Log {
    /// Each message to `line`, from whichever thread says it.
    pub fn new(line: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(line))
    }

    /// Each message on stderr, after the time and `tribunal serve:`.
    #[must_use]
    pub fn stderr() -> Self {
        Self::new(|message| eprintln!("{} tribunal serve: {message}", time::now()))
    }

    /// Says `message` (its control characters made printable).
    pub(crate) fn line(&self, message: &str) {
        (self.0)(&tribunal_base::text::printable(message));
    }
}

impl Default for Log {
    fn default() -> Self {
        Self::stderr()
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Log(..)")
    }
}

/// Stops a running [`serve`] as SIGTERM does: no new connections, the
/// requests in flight finished (within the shutdown timeout), then `serve`
/// returns. Clones stop the same service; stopping before the service has
/// started stops it as soon as it listens.
#[derive(Debug, Clone, Default)]
pub struct Stop(std::sync::Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    asked: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

impl Stop {
    /// Asks the service to stop.
    pub fn stop(&self) {
        self.0
            .asked
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Resolves once [`stop`](Self::stop) was called.
    pub(crate) async fn asked(&self) {
        loop {
            let notified = self.0.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // (Waiting before looking: a stop between the look and the wait
            // is not missed.)
            notified.as_mut().enable();
            if self.0.asked.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

impl Config {
    /// A configuration with the defaults: loopback port 8080, no token, the
    /// limits of [`Limits::default`], folders looked at every second.
    pub fn new(sources: Vec<PathBuf>, runtime: Runtime, load: LoadOptions) -> Self {
        Self {
            sources,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            runtime,
            load,
            auth: Auth::None,
            insecure_no_auth: false,
            limits: Limits::default(),
            reload_every: Some(Duration::from_secs(1)),
            reload_settle: Duration::from_secs(3),
            decision_log: None,
            follow_links: false,
            threads: 0,
            bundle: None,
            otlp_endpoint: None,
            stop: Stop::default(),
            log: Log::stderr(),
        }
    }
}

/// Who may call the service.
#[derive(Clone)]
pub enum Auth {
    /// Anyone who can reach the port.
    None,
    /// Requests carry `Authorization: Bearer TOKEN` (`/healthz` and `/readyz`
    /// excepted, for probes); the token's surrounding whitespace (a token
    /// file's newline) is not part of it.
    Token(String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.write_str(match self {
            Self::None => "Auth::None",
            Self::Token(_) => "Auth::Token(..)",
        })
    }
}

/// The service's limits.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Limits {
    /// Largest `check` body, in bytes (413 above).
    pub max_body_bytes: usize,
    /// Largest record (one line) of an `eval` body; a longer one is an `ERROR`
    /// record, as in `tribunal eval`.
    pub max_record_bytes: usize,
    /// A `check` must be read and judged within this (504 past it).
    pub request_timeout: Duration,
    /// A client that sends nothing for this long (headers, or the body of a
    /// request in progress), or stays idle between requests, is cut off.
    pub read_timeout: Duration,
    /// A client that reads nothing of its answer for this long (an `eval`'s
    /// or a stream's) is cut off, and its slot freed.
    pub send_timeout: Duration,
    /// Requests judged at once; more are answered 503 with `Retry-After`.
    pub max_concurrency: usize,
    /// Connections open at once; more are closed as they come.
    pub max_connections: usize,
    /// How long a shutdown waits for the requests in flight.
    pub shutdown_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: tribunal::jsonl::DEFAULT_MAX_RECORD_BYTES,
            max_record_bytes: tribunal::jsonl::DEFAULT_MAX_RECORD_BYTES,
            request_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(10),
            send_timeout: Duration::from_secs(10),
            max_concurrency: 1024,
            max_connections: 10_000,
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

/// Why the service could not start (it stops only by a signal).
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// A pack did not load: the engine's errors, each with file, line and column.
    Load(String),
    /// The configuration is refused (a public address without a token, ...).
    Config(String),
    /// The address could not be bound, or the runtime not started.
    Io(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Load(message) | Self::Config(message) | Self::Io(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ServeError {}
