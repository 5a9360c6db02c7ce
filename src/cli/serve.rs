//! `tribunal serve`: the packs as a local HTTP decision service (the
//! `tribunal-server` crate; docs/server.md).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tribunal::LoadOptions;
use tribunal_server::{Auth, Config, DecisionLogConfig, Limits};

use super::{LoadFlags, EXIT_OK};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    tribunal serve rules/\n  \
    tribunal serve rules/ksi-emission --listen 127.0.0.1:9090 --decision-log decisions.ndjson\n  \
    tribunal serve rules/ --listen 0.0.0.0:8080 --token-file /run/secrets/tribunal-token\n\n\
    Then: curl -s localhost:8080/v1/packs/ksi-emission/check -H 'content-type: application/json' \
    -d '{\"output\": \"{\\\"event\\\": \\\"a:b\\\", \\\"data\\\": {}}\"}'\n\
    Stops on SIGTERM or Ctrl-C once the requests in flight are answered (docs/server.md).")]
pub(super) struct ServeArgs {
    /// Pack folders, or folders holding packs (every pack below is served, by name).
    #[arg(
        value_name = "PACK_OR_FOLDER",
        required_unless_present_any = ["print_openapi", "bundle"],
        conflicts_with = "bundle"
    )]
    sources: Vec<PathBuf>,
    /// Serve the packs of a bundle (`tribunal bundle build`) fetched from an
    /// http:// URL or a file, again every --poll-interval-ms, swapped in whole
    /// once verified (give --trust); until the first good one, pack routes answer 503.
    #[arg(long, value_name = "URL_OR_FILE")]
    bundle: Option<String>,
    /// Fetch the bundle again every this many ms (an unchanged one, by entity tag or bytes, is not loaded again).
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "bundle")]
    poll_interval_ms: u64,
    /// Largest bundle fetched, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, requires = "bundle")]
    bundle_max_bytes: usize,
    /// A bundle fetch is done within this many ms, or failed (the last good bundle keeps serving).
    #[arg(long, value_name = "MS", default_value_t = 30_000, requires = "bundle")]
    bundle_timeout_ms: u64,
    /// Print the service's `OpenAPI` document (what `GET /openapi.json` answers) and exit.
    #[arg(long)]
    print_openapi: bool,
    /// The address to listen on (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// A file holding the bearer token callers must send (`Authorization: Bearer TOKEN`).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Listen on a non-loopback address without a token (something in front checks callers).
    #[arg(long)]
    insecure_no_auth: bool,
    /// Override a component's config in every pack: component.key=value (value is YAML).
    #[arg(long = "set", value_name = "COMPONENT.KEY=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    load: LoadFlags,
    /// Log every decision as NDJSON to this file (rotated by size).
    #[arg(long, value_name = "FILE")]
    decision_log: Option<PathBuf>,
    /// Rotate the decision log once it would grow past this many bytes (0: never).
    #[arg(long, value_name = "BYTES", default_value_t = 100 * 1024 * 1024)]
    decision_log_max_bytes: u64,
    /// Rotated decision logs kept (FILE.1 .. FILE.N).
    #[arg(long, value_name = "N", default_value_t = 5)]
    decision_log_keep: usize,
    /// Log each checked output in the decision log too (left out by default).
    #[arg(long, requires = "decision_log")]
    log_outputs: bool,
    /// Largest check body, in bytes (413 above).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Largest record (line) of an eval body; a longer one is an ERROR record.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_record_bytes)]
    max_record_bytes: usize,
    /// A check is read and judged within this many ms, or answered 504 (408 if its body is late).
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    request_timeout_ms: u64,
    /// Cut off a client that sends nothing for this many ms (headers, body, idle keep-alive).
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    read_timeout_ms: u64,
    /// Cut off a client that reads nothing of its answer for this many ms (eval, stream), freeing its slot.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    send_timeout_ms: u64,
    /// Requests judged at once; more are answered 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_concurrency)]
    max_concurrency: usize,
    /// Connections open at once; more are closed as they come.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// On SIGTERM, wait this many ms for the requests in flight.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    shutdown_timeout_ms: u64,
    /// Look at the pack folders for changes every this many ms, and reload what changed.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 1_000,
        conflicts_with = "no_reload"
    )]
    reload_interval_ms: u64,
    /// Take a change only once the pack's files have stayed as they are (or its folder gone) for this many ms.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 3_000,
        conflicts_with = "no_reload"
    )]
    reload_settle_ms: u64,
    /// Never reload packs.
    #[arg(long)]
    no_reload: bool,
    /// Serve packs that a folder of packs links to outside itself (refused
    /// by default: whoever can write a link there could serve any folder).
    #[arg(long)]
    follow_links: bool,
    /// Threads that run checks (0: one per core); connections are served on
    /// two threads of their own, which never judge.
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
    #[allow(clippy::doc_markdown)] // clap's help text: no Markdown
    /// Export a span per request (each decision's gen_ai.evaluation.result event in it) to this OTLP/HTTP collector, e.g. http://127.0.0.1:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT).
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Worker threads of the engine for eval bodies (0: all cores).
    #[arg(long, short, value_name = "N", default_value_t = 0)]
    jobs: usize,
}

pub(super) fn serve(args: &ServeArgs) -> Result<u8, String> {
    if args.print_openapi {
        super::write_out(tribunal_server::openapi_document().trim_end());
        return Ok(super::EXIT_OK);
    }
    let (limits, overrides) = super::split_overrides(&args.set)?;
    let runtime = args.load.runtime_with_jobs(limits, args.jobs)?;
    let load = LoadOptions {
        overrides,
        ..args.load.options()?
    };
    let mut config = Config::new(args.sources.clone(), runtime, load);
    config.otlp_endpoint = args.otlp_endpoint.clone().or_else(|| {
        std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
            .ok()
            .filter(|endpoint| !endpoint.trim().is_empty())
    });
    if let Some(source) = &args.bundle {
        let mut bundle = tribunal_server::BundleConfig::new(source.clone());
        bundle.poll_every = Duration::from_millis(args.poll_interval_ms.max(1));
        bundle.max_bytes = args.bundle_max_bytes;
        bundle.timeout = Duration::from_millis(args.bundle_timeout_ms.max(1));
        config.bundle = Some(bundle);
    }
    config.listen = args.listen;
    config.insecure_no_auth = args.insecure_no_auth;
    if let Some(path) = &args.token_file {
        let token = tribunal_base::files::read_regular_text(path, 4096)
            .map_err(|e| format!("--token-file: {e}"))?;
        config.auth = Auth::Token(token);
    }
    let mut limits = Limits::default();
    limits.max_body_bytes = args.max_body_bytes;
    limits.max_record_bytes = args.max_record_bytes;
    limits.request_timeout = Duration::from_millis(args.request_timeout_ms);
    limits.read_timeout = Duration::from_millis(args.read_timeout_ms.max(1));
    limits.send_timeout = Duration::from_millis(args.send_timeout_ms.max(1));
    limits.max_concurrency = args.max_concurrency.max(1);
    limits.max_connections = args.max_connections.max(1);
    limits.shutdown_timeout = Duration::from_millis(args.shutdown_timeout_ms);
    config.limits = limits;
    config.reload_every =
        (!args.no_reload).then(|| Duration::from_millis(args.reload_interval_ms.max(10)));
    config.reload_settle = Duration::from_millis(args.reload_settle_ms);
    config.decision_log = args.decision_log.as_ref().map(|path| {
        let mut log = DecisionLogConfig::new(path.clone());
        log.max_bytes = args.decision_log_max_bytes;
        log.keep = args.decision_log_keep;
        log.log_outputs = args.log_outputs;
        log
    });
    config.threads = args.threads;
    config.follow_links = args.follow_links;
    tribunal_server::serve(&config, |_| {}).map_err(|e| e.to_string())?;
    Ok(EXIT_OK)
}
