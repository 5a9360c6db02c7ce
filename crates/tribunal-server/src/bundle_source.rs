//! `serve --bundle URL_OR_FILE`: the packs come from a bundle the service
//! fetches (at start, then every poll interval) and the engine installs:
//! checked, verified against `--trust`, loaded aside and swapped in at once.
//! Over HTTP it asks with `If-None-Match` (the last `ETag`), reads at most
//! `--bundle-max-bytes` within `--bundle-timeout-ms`; a bundle that fails
//! (unreachable, an HTTP error, too large, too slow, altered, badly signed,
//! by a signer not trusted, a pack that does not load) keeps the last good
//! one serving, and shows in `/healthz`, `/readyz` and `/metrics`. Until the
//! first good bundle, the pack routes answer 503 `bundle.not-loaded`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Empty;
use hyper::header::{ETAG, HOST, IF_NONE_MATCH, USER_AGENT};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::body::{self, BodyError};
use crate::Log;
use tribunal::Engine;

/// Where the bundle comes from and how it is fetched.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BundleConfig {
    /// `http://HOST[:PORT]/PATH`, or a file.
    pub source: String,
    /// How often it is fetched again (`--poll-interval-ms`).
    pub poll_every: Duration,
    /// The largest bundle read (`--bundle-max-bytes`).
    pub max_bytes: usize,
    /// How long one fetch may take (`--bundle-timeout-ms`).
    pub timeout: Duration,
}

impl BundleConfig {
    /// Fetch `source` every 10 s, at most 64 MiB within 30 s.
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            poll_every: Duration::from_secs(10),
            max_bytes: 64 << 20,
            timeout: Duration::from_secs(30),
        }
    }
}

/// What the fetches did.
#[derive(Debug)]
pub struct BundleStatus {
    config: BundleConfig,
    last: Mutex<Last>,
    installed: AtomicU64,
    unchanged: AtomicU64,
    failed: AtomicU64,
}

#[derive(Debug, Default)]
struct Last {
    etag: Option<String>,
    /// The SHA-256 of the bytes installed last.
    digest: Option<[u8; 32]>,
    fetched_at: Option<SystemTime>,
    error: Option<(String, SystemTime)>,
}

/// One fetch's outcome.
enum Fetched {
    NotModified,
    Body {
        bytes: Vec<u8>,
        etag: Option<String>,
    },
}

impl BundleStatus {
    pub fn new(config: BundleConfig) -> Self {
        Self {
            config,
            last: Mutex::default(),
            installed: AtomicU64::new(0),
            unchanged: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }
    }

    fn last(&self) -> std::sync::MutexGuard<'_, Last> {
        self.last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What `/healthz` and `/readyz` say of the bundle.
    pub fn describe(&self, engine: &tribunal::Engine) -> Value {
        let last = self.last();
        json!({
            "source": self.config.source,
            "revision": engine.bundle_revision(),
            "last_fetch": last.fetched_at.map(crate::time::rfc3339),
            "error": last.error.as_ref().map(|(message, at)| json!({
                "message": message,
                "at": crate::time::rfc3339(*at),
            })),
        })
    }

    /// Why the pack routes cannot answer yet.
    pub fn not_loaded(&self) -> String {
        let last = self.last();
        format!(
            "no bundle installed yet from {}{}",
            self.config.source,
            last.error
                .as_ref()
                .map_or_else(|| " (fetching)".to_owned(), |(why, _)| format!(": {why}"))
        )
    }

    /// The bundle's series for `/metrics`.
    pub fn render(&self, engine: &tribunal::Engine, out: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "# HELP tribunal_bundle_info The bundle served (always 1): its revision.\n# TYPE tribunal_bundle_info gauge"
        );
        if let Some(revision) = engine.bundle_revision() {
            let _ = writeln!(out, "tribunal_bundle_info{{revision=\"{revision}\"}} 1");
        }
        let _ = writeln!(
            out,
            "# HELP tribunal_bundle_fetches_total Bundle fetches, by result: installed, unchanged (304 or the same bytes), failed (the last good bundle kept serving).\n# TYPE tribunal_bundle_fetches_total counter"
        );
        for (result, count) in [
            ("installed", &self.installed),
            ("unchanged", &self.unchanged),
            ("failed", &self.failed),
        ] {
            let _ = writeln!(
                out,
                "tribunal_bundle_fetches_total{{result=\"{result}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP tribunal_bundle_failing Whether the last fetch failed (1) or not (0).\n# TYPE tribunal_bundle_failing gauge\ntribunal_bundle_failing {}",
            u8::from(self.last().error.is_some())
        );
    }
}

/// Fetches and installs the bundle now, then every poll interval, until the
/// runtime ends.
pub async fn poll(engine: Engine, log: Log, status: Arc<BundleStatus>) {
    loop {
        fetch_once(&engine, &log, &status).await;
        tokio::time::sleep(status.config.poll_every).await;
    }
}

/// One fetch, and the install of what changed.
pub async fn fetch_once(engine: &Engine, log: &Log, status: &Arc<BundleStatus>) {
    let etag = status.last().etag.clone();
    let fetched = tokio::time::timeout(status.config.timeout, fetch(&status.config, etag))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "the bundle did not arrive within {} ms (--bundle-timeout-ms)",
                status.config.timeout.as_millis()
            ))
        });
    let now = SystemTime::now();
    let outcome = match fetched {
        Ok(Fetched::NotModified) => Ok(None),
        Ok(Fetched::Body { bytes, etag }) => {
            let digest: [u8; 32] = Sha256::digest(&bytes).into();
            if status.last().digest == Some(digest) {
                status.last().etag = etag;
                Ok(None)
            } else {
                install(engine, bytes).await.map(|revision| {
                    let mut last = status.last();
                    last.digest = Some(digest);
                    last.etag = etag;
                    Some(revision)
                })
            }
        }
        Err(message) => {
            log.line(&format!(
                "bundle fetch from {} failed: {message}",
                status.config.source
            ));
            Err(message)
        }
    };
    let mut last = status.last();
    last.fetched_at = Some(now);
    match outcome {
        Ok(Some(_)) => {
            status.installed.fetch_add(1, Ordering::Relaxed);
            last.error = None;
        }
        Ok(None) => {
            status.unchanged.fetch_add(1, Ordering::Relaxed);
            last.error = None;
        }
        Err(message) => {
            status.failed.fetch_add(1, Ordering::Relaxed);
            last.error = Some((message, now));
        }
    }
}

/// Installs `bytes` on the engine, on its threads (the engine logs how it
/// went).
async fn install(engine: &Engine, bytes: Vec<u8>) -> Result<String, String> {
    let (sent, installed) = tokio::sync::oneshot::channel();
    let installing = engine.clone();
    engine.spawn(move || {
        let _ = sent.send(
            installing
                .install_bundle(&bytes)
                .map_err(|err| err.to_string()),
        );
    });
    installed
        .await
        .unwrap_or_else(|_| Err("the install ended without a result".to_owned()))
}

/// The bundle's bytes (or that they did not change).
async fn fetch(config: &BundleConfig, etag: Option<String>) -> Result<Fetched, String> {
    if let Some(rest) = config.source.strip_prefix("http://") {
        return fetch_http(config, rest, etag).await;
    }
    if config.source.contains("://") {
        return Err(format!(
            "{}: only http:// URLs and files are fetched (a signed bundle needs no TLS to be trusted: give --trust)",
            config.source
        ));
    }
    let path = std::path::Path::new(&config.source);
    let size = std::fs::metadata(path)
        .map_err(|err| format!("{}: {err}", config.source))?
        .len();
    if size > config.max_bytes as u64 {
        return Err(too_large(config.max_bytes));
    }
    let bytes = std::fs::read(path).map_err(|err| format!("{}: {err}", config.source))?;
    Ok(Fetched::Body { bytes, etag: None })
}

fn too_large(limit: usize) -> String {
    format!("the bundle is larger than {limit} bytes (--bundle-max-bytes)")
}

/// `GET http://{rest}`.
async fn fetch_http(
    config: &BundleConfig,
    rest: &str,
    etag: Option<String>,
) -> Result<Fetched, String> {
    let url = &config.source;
    let (authority, address, path) =
        crate::http_url(rest, 80).ok_or_else(|| format!("{url}: no host"))?;
    let path = if path.is_empty() { "/" } else { path };
    let stream = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|err| format!("{url}: cannot connect: {err}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|err| format!("{url}: {err}"))?;
    tokio::spawn(connection);
    let mut request = Request::get(path)
        .header(HOST, authority)
        .header(USER_AGENT, concat!("tribunal/", env!("CARGO_PKG_VERSION")));
    if let Some(etag) = etag {
        request = request.header(IF_NONE_MATCH, etag);
    }
    let request = request
        .body(Empty::<Bytes>::new())
        .map_err(|err| format!("{url}: {err}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|err| format!("{url}: {err}"))?;
    match response.status() {
        StatusCode::NOT_MODIFIED => return Ok(Fetched::NotModified),
        StatusCode::OK => {}
        status => return Err(format!("{url} answered HTTP {status}")),
    }
    let etag = response
        .headers()
        .get(ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let deadline = tokio::time::Instant::now() + config.timeout;
    let bytes = body::read_limited(response.into_body(), config.max_bytes, config.timeout, deadline)
        .await
        .map_err(|err| match err {
            BodyError::TooLarge { limit } => too_large(limit),
            BodyError::Timeout { received } => format!(
                "the bundle did not arrive within {} ms ({received} bytes received; --bundle-timeout-ms)",
                config.timeout.as_millis()
            ),
            BodyError::CutOff { received, why } => {
                format!("the bundle was cut off after {received} bytes: {why}")
            }
        })?;
    Ok(Fetched::Body {
        bytes: bytes.to_vec(),
        etag,
    })
}
