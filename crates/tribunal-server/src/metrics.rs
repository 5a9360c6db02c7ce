//! What `/metrics` reports, in the Prometheus text format (version 0.0.4):
//! requests by route and status code, a latency histogram per route, decisions
//! by pack and status, issues by pack and code, reloads, connections, requests
//! in flight, the embedding cache and the decision log; the build's version
//! and each served pack's revision as info series.
//!
//! Request counters and histograms are atomics; the per-pack counts take one
//! short lock per decision.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tribunal::{Report, Status};

/// The routes, as the `route` label names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Check,
    Decide,
    Eval,
    Stream,
    Packs,
    Pack,
    Prompt,
    Schema,
    Healthz,
    Readyz,
    Metrics,
    OpenApi,
    /// No route matched.
    Other,
}

impl Route {
    pub(crate) const ALL: [Route; 13] = [
        Route::Check,
        Route::Decide,
        Route::Eval,
        Route::Stream,
        Route::Packs,
        Route::Pack,
        Route::Prompt,
        Route::Schema,
        Route::Healthz,
        Route::Readyz,
        Route::Metrics,
        Route::OpenApi,
        Route::Other,
    ];

    /// Whether a `--token-file` token is asked for (all but the probes).
    pub(crate) fn needs_token(self) -> bool {
        !matches!(self, Route::Healthz | Route::Readyz)
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Route::Check => "/v1/packs/{name}/check",
            Route::Decide => "/v1/packs/{name}/decide",
            Route::Eval => "/v1/packs/{name}/eval",
            Route::Stream => "/v1/packs/{name}/stream",
            Route::Packs => "/v1/packs",
            Route::Pack => "/v1/packs/{name}",
            Route::Prompt => "/v1/packs/{name}/prompt",
            Route::Schema => "/v1/packs/{name}/schema",
            Route::Healthz => "/healthz",
            Route::Readyz => "/readyz",
            Route::Metrics => "/metrics",
            Route::OpenApi => "/openapi.json",
            Route::Other => "other",
        }
    }
}

/// The status codes the service answers with, counted each on its own.
const CODES: [u16; 13] = [
    200, 400, 401, 404, 405, 408, 411, 413, 415, 500, 503, 504, 0,
];

fn code_index(code: u16) -> usize {
    CODES
        .iter()
        .position(|&known| known == code)
        .unwrap_or(CODES.len() - 1)
}

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 10.0,
];

#[derive(Debug, Default)]
struct Histogram {
    /// Per bucket (not cumulative), and one past the last bound.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_ns: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(BUCKETS.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }
}

/// Decisions and issues of one pack.
#[derive(Debug, Default)]
struct PackCounts {
    statuses: [u64; 4],
    codes: BTreeMap<String, u64>,
    /// Proposed tool calls decided: allowed, denied.
    calls: [u64; 2],
}

/// The service's counters.
#[derive(Debug)]
pub struct Metrics {
    started: Instant,
    requests: [[AtomicU64; CODES.len()]; Route::ALL.len()],
    latency: [Histogram; Route::ALL.len()],
    packs: Mutex<BTreeMap<String, PackCounts>>,
    reloads: AtomicU64,
    reload_failures: AtomicU64,
    connections: AtomicI64,
    connections_refused: AtomicU64,
    in_flight: AtomicI64,
    log_written: AtomicU64,
    log_dropped: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            requests: Default::default(),
            latency: Default::default(),
            packs: Mutex::default(),
            reloads: AtomicU64::new(0),
            reload_failures: AtomicU64::new(0),
            connections: AtomicI64::new(0),
            connections_refused: AtomicU64::new(0),
            in_flight: AtomicI64::new(0),
            log_written: AtomicU64::new(0),
            log_dropped: AtomicU64::new(0),
        }
    }
}

fn index(route: Route) -> usize {
    Route::ALL
        .iter()
        .position(|&r| r == route)
        .expect("every route is listed")
}

fn status_index(status: Status) -> usize {
    Status::ALL
        .iter()
        .position(|&s| s == status)
        .expect("every status is listed")
}

impl Metrics {
    /// A request answered with `code` after `elapsed`.
    pub fn request(&self, route: Route, code: u16, elapsed: Duration) {
        self.requests[index(route)][code_index(code)].fetch_add(1, Ordering::Relaxed);
        self.latency[index(route)].observe(elapsed);
    }

    /// A decision of `pack`: its status and its issues' codes.
    pub fn decision(&self, pack: &str, report: &Report) {
        let mut packs = self
            .packs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let counts = match packs.get_mut(pack) {
            Some(counts) => counts,
            None => packs.entry(pack.to_owned()).or_default(),
        };
        counts.statuses[status_index(report.status())] += 1;
        for code in report.issues.iter().map(code_of) {
            match counts.codes.get_mut(code) {
                Some(count) => *count += 1,
                None => {
                    counts.codes.insert(code.to_owned(), 1);
                }
            }
        }
    }

    /// The decisions on a proposal's tool calls (`decide`): each call
    /// counted as allowed or denied, and the issues by code.
    pub fn calls(&self, pack: &str, decisions: &tribunal::Decisions) {
        let mut packs = self
            .packs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let counts = packs.entry(pack.to_owned()).or_default();
        for call in &decisions.decisions {
            let denied = call.decision == tribunal::Verdict::Deny;
            counts.calls[usize::from(denied)] += 1;
            for code in call.issues.iter().map(code_of) {
                *counts.codes.entry(code.to_owned()).or_default() += 1;
            }
        }
    }

    /// A reload of a changed pack, which loaded or did not.
    pub fn reload(&self, loaded: bool) {
        if loaded {
            self.reloads.fetch_add(1, Ordering::Relaxed);
        } else {
            self.reload_failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A connection opened (`1`) or closed (`-1`).
    pub fn connections(&self, change: i64) {
        self.connections.fetch_add(change, Ordering::Relaxed);
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        usize::try_from(self.connections.load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// A connection closed at once: too many were open.
    pub fn connection_refused(&self) {
        self.connections_refused.fetch_add(1, Ordering::Relaxed);
    }

    /// A request started (`1`) or ended (`-1`) being judged.
    pub fn in_flight(&self, change: i64) {
        self.in_flight.fetch_add(change, Ordering::Relaxed);
    }

    /// A decision log entry written, or dropped (the writer fell behind).
    pub fn logged(&self, written: bool) {
        if written {
            self.log_written.fetch_add(1, Ordering::Relaxed);
        } else {
            self.log_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The text `/metrics` answers with; `served` is each pack served now,
    /// with its revision (`tribunal_pack_info`).
    pub fn render(
        &self,
        cache: Option<&tribunal::EmbeddingCacheReport>,
        served: &[(String, String)],
    ) -> String {
        let mut out = String::with_capacity(8192);
        let _ = write!(
            out,
            "# HELP tribunal_build_info The running build (always 1): its version.\n\
             # TYPE tribunal_build_info gauge\n\
             tribunal_build_info{{version=\"{}\"}} 1\n\
             # HELP tribunal_pack_info Each pack served (always 1), with the revision it serves: join on `pack` to label other series with it.\n\
             # TYPE tribunal_pack_info gauge\n",
            escape(env!("CARGO_PKG_VERSION"))
        );
        for (pack, revision) in served {
            let _ = writeln!(
                out,
                "tribunal_pack_info{{pack=\"{}\",revision=\"{}\"}} 1",
                escape(pack),
                escape(revision)
            );
        }
        self.render_requests(&mut out);
        self.render_latency(&mut out);
        self.render_packs(&mut out);
        self.render_scalars(&mut out, cache);
        out
    }

    /// The series of one value each: the counters and gauges of reloads,
    /// connections, requests in flight, the decision log, the embedding cache
    /// and uptime.
    fn render_scalars(&self, out: &mut String, cache: Option<&tribunal::EmbeddingCacheReport>) {
        let counter = |out: &mut String, name: &str, help: &str, value: u64| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"
            );
        };
        let gauge = |out: &mut String, name: &str, help: &str, value: f64| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            );
        };
        let load = |value: &AtomicU64| value.load(Ordering::Relaxed);
        counter(
            out,
            "tribunal_reloads_total",
            "Changed packs loaded again and swapped in.",
            load(&self.reloads),
        );
        counter(
            out,
            "tribunal_reload_failures_total",
            "Changed packs that failed to load (the old revision kept serving).",
            load(&self.reload_failures),
        );
        gauge(
            out,
            "tribunal_connections",
            "Connections open.",
            self.connections.load(Ordering::Relaxed) as f64,
        );
        counter(
            out,
            "tribunal_connections_refused_total",
            "Connections closed as they came: too many were open.",
            load(&self.connections_refused),
        );
        gauge(
            out,
            "tribunal_requests_in_flight",
            "Check and eval requests being judged.",
            self.in_flight.load(Ordering::Relaxed) as f64,
        );
        counter(
            out,
            "tribunal_decision_log_entries_total",
            "Decisions written to the decision log.",
            load(&self.log_written),
        );
        counter(
            out,
            "tribunal_decision_log_dropped_total",
            "Decisions left out of the decision log: its writer fell behind.",
            load(&self.log_dropped),
        );
        let (hits, misses) = cache.map_or((0, 0), |c| (c.hits, c.misses));
        counter(
            out,
            "tribunal_embedding_cache_hits_total",
            "SEMANTIC embeddings read from the disk cache.",
            hits,
        );
        counter(
            out,
            "tribunal_embedding_cache_misses_total",
            "SEMANTIC embeddings computed by the model.",
            misses,
        );
        gauge(
            out,
            "tribunal_uptime_seconds",
            "Seconds since the service started.",
            self.started.elapsed().as_secs_f64().floor(),
        );
    }

    fn render_requests(&self, out: &mut String) {
        out.push_str(
            "# HELP tribunal_http_requests_total HTTP requests answered, by route and status code.\n\
             # TYPE tribunal_http_requests_total counter\n",
        );
        for route in Route::ALL {
            for (code, count) in CODES.iter().zip(&self.requests[index(route)]) {
                let count = count.load(Ordering::Relaxed);
                if count > 0 {
                    let code = if *code == 0 {
                        "other".to_owned()
                    } else {
                        code.to_string()
                    };
                    let _ = writeln!(
                        out,
                        "tribunal_http_requests_total{{route=\"{}\",code=\"{code}\"}} {count}",
                        route.label()
                    );
                }
            }
        }
    }

    fn render_latency(&self, out: &mut String) {
        out.push_str(
            "# HELP tribunal_http_request_duration_seconds Time from a request's headers to its answer's start (for eval: before its results stream).\n\
             # TYPE tribunal_http_request_duration_seconds histogram\n",
        );
        for route in Route::ALL {
            let histogram = &self.latency[index(route)];
            let counts: Vec<u64> = histogram
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect();
            let total: u64 = counts.iter().sum();
            if total == 0 {
                continue;
            }
            let label = route.label();
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(&counts) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "tribunal_http_request_duration_seconds_bucket{{route=\"{label}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let sum = histogram.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
            let _ = write!(
                out,
                "tribunal_http_request_duration_seconds_bucket{{route=\"{label}\",le=\"+Inf\"}} {total}\n\
                 tribunal_http_request_duration_seconds_sum{{route=\"{label}\"}} {sum}\n\
                 tribunal_http_request_duration_seconds_count{{route=\"{label}\"}} {total}\n"
            );
        }
    }

    fn render_packs(&self, out: &mut String) {
        let packs = self
            .packs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.push_str(
            "# HELP tribunal_decisions_total Records judged, by pack and status.\n\
             # TYPE tribunal_decisions_total counter\n",
        );
        for (pack, counts) in packs.iter() {
            for (status, count) in Status::ALL.iter().zip(counts.statuses) {
                let _ = writeln!(
                    out,
                    "tribunal_decisions_total{{pack=\"{}\",status=\"{}\"}} {count}",
                    escape(pack),
                    status.as_str()
                );
            }
        }
        out.push_str(
            "# HELP tribunal_call_decisions_total Proposed tool calls decided (decide), by pack and decision.\n\
             # TYPE tribunal_call_decisions_total counter\n",
        );
        for (pack, counts) in packs.iter() {
            for (decision, count) in ["allow", "deny"].iter().zip(counts.calls) {
                let _ = writeln!(
                    out,
                    "tribunal_call_decisions_total{{pack=\"{}\",decision=\"{decision}\"}} {count}",
                    escape(pack),
                );
            }
        }
        out.push_str(
            "# HELP tribunal_issues_total Issues raised, by pack and issue code.\n\
             # TYPE tribunal_issues_total counter\n",
        );
        for (pack, counts) in packs.iter() {
            for (code, count) in &counts.codes {
                let _ = writeln!(
                    out,
                    "tribunal_issues_total{{pack=\"{}\",code=\"{}\"}} {count}",
                    escape(pack),
                    escape(code)
                );
            }
        }
    }
}

/// An issue's code, or its rule's name for an issue without one: what
/// `/metrics` counts and the decision log lists.
pub fn code_of(issue: &tribunal::Issue) -> &str {
    if issue.code.is_empty() {
        &issue.rule
    } else {
        &issue.code
    }
}

/// A label value as the text format writes it: backslash, quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
