//! The service: load the packs, listen, accept connections within the caps,
//! and shut down gracefully on SIGTERM or SIGINT (stop accepting, finish the
//! requests in flight, exit).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::decision_log::DecisionLog;
use crate::metrics::Metrics;
use crate::routes::{handle, State};
use crate::{Auth, Config, ServeError};

/// Runs the service until SIGTERM or SIGINT, or [`Config::stop`]. `on_ready` is called with the
/// address listened on (a port of 0 picks a free one) once requests are
/// accepted. Packs that do not load, or a public address without a token
/// (unless [`Config::insecure_no_auth`]), are refused before anything listens.
pub fn serve(config: &Config, on_ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    let token = checked(config)?;
    let metrics = Arc::new(Metrics::default());
    // Consent to plugins covers the libraries present now, by digest: pinned
    // as the packs load, then sealed, so a reload opens no library dropped
    // in or changed later.
    let mut load = config.load.clone();
    let pins = load.allow_plugins.then(tribunal::PluginPins::new);
    load.plugin_pins.clone_from(&pins);
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
    } else {
        config.threads
    };
    // Checks run on the engine's executor; connections on a few threads of
    // their own, which therefore always answer (`/healthz`, `/metrics`, a 503).
    let engine = {
        let metrics = Arc::clone(&metrics);
        let log = config.log.clone();
        let mut builder = tribunal::Engine::builder()
            .runtime(config.runtime.clone())
            .load_options(load)
            .follow_links(config.follow_links)
            .settle(config.reload_settle)
            .threads(threads)
            .on_pack_event(move |event| crate::packs::on_pack_event(&metrics, &log, event));
        for source in &config.sources {
            builder = builder.source(source);
        }
        builder.build().map_err(|err| match err {
            tribunal::EngineError::Packs(_) => ServeError::Load(err.to_string()),
            _ => ServeError::Io(err.to_string()),
        })?
    };
    if let Some(pins) = &pins {
        pins.seal();
    }
    let decision_log = match &config.decision_log {
        Some(settings) => Some(
            DecisionLog::open(settings, Arc::clone(&metrics), config.log.clone()).map_err(|e| {
                ServeError::Io(format!(
                    "cannot open the decision log {}: {e}",
                    settings.path.display()
                ))
            })?,
        ),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(HTTP_THREADS)
        .thread_name("tribunal-http")
        // A `/stream` chunk's early checks run as it arrives, here: the
        // engine's deep stack.
        .thread_stack_size(tribunal::STACK_SIZE)
        .enable_all()
        .build()
        .map_err(|e| ServeError::Io(format!("cannot start the service's threads: {e}")))?;
    let mut state = State::new(
        engine.clone(),
        metrics,
        decision_log,
        config.limits.clone(),
        token,
        config.log.clone(),
    );
    if let Some(endpoint) = &config.otlp_endpoint {
        state.otlp = Some(crate::otlp::Exporter::start(endpoint).map_err(ServeError::Config)?);
    }
    state.bundle = config
        .bundle
        .clone()
        .map(|bundle| Arc::new(crate::bundle_source::BundleStatus::new(bundle)));
    let state = Arc::new(state);
    let stop_watching = Arc::new(AtomicBool::new(false));
    if let Some(bundle) = &state.bundle {
        runtime.spawn(crate::bundle_source::poll(
            state.engine.clone(),
            config.log.clone(),
            Arc::clone(bundle),
        ));
    } else if let Some(every) = config.reload_every {
        engine.watch(every, Arc::clone(&stop_watching));
    }
    let result = runtime.block_on(run(config, Arc::clone(&state), on_ready));
    stop_watching.store(true, Ordering::Relaxed);
    // Requests still running after the shutdown's wait are abandoned.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // The decision log writes what is queued as the state goes.
    drop(state);
    result
}

/// The configuration checked before anything starts: the callers' token
/// (`None`: anyone who reaches the port may call), or why it is refused.
fn checked(config: &Config) -> Result<Option<Vec<u8>>, ServeError> {
    let token = match &config.auth {
        Auth::Token(token) => Some(token.trim().as_bytes().to_vec()),
        Auth::None if !config.listen.ip().is_loopback() && !config.insecure_no_auth => {
            return Err(ServeError::Config(format!(
                "--listen {} is not a loopback address: anyone who reaches it could call the service; \
                 give --token-file FILE (callers send `Authorization: Bearer TOKEN`), or --insecure-no-auth \
                 if something in front of it already checks callers",
                config.listen
            )))
        }
        Auth::None => None,
    };
    if token.as_ref().is_some_and(Vec::is_empty) {
        return Err(ServeError::Config("the token file is empty".to_owned()));
    }
    if config.bundle.is_some() && !config.sources.is_empty() {
        return Err(ServeError::Config(
            "give pack folders or --bundle, not both: a bundle holds every pack served".to_owned(),
        ));
    }
    Ok(token)
}

/// Threads that serve connections: they read requests, write answers and
/// wait, and never judge.
const HTTP_THREADS: usize = 2;

async fn run(
    config: &Config,
    state: Arc<State>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| ServeError::Io(format!("cannot listen on {}: {e}", config.listen)))?;
    let address = listener
        .local_addr()
        .map_err(|e| ServeError::Io(e.to_string()))?;
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.limits.read_timeout)
        .keep_alive(true)
        // (A client that sends its request and then shuts down its side of
        // the connection still gets its answer.)
        .half_close(true);
    let mut shutdown = std::pin::pin!(shutdown_signal(&config.stop));
    let log = &config.log;
    log.line(&match &config.bundle {
        Some(bundle) => format!(
            "listening on http://{address} with the packs of the bundle {} (fetched every {} ms)",
            bundle.source,
            bundle.poll_every.as_millis()
        ),
        None => format!(
            "listening on http://{address} with {} pack(s): {}",
            state.engine.names().len(),
            state.engine.names().join(", ")
        ),
    });
    on_ready(address);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, say: wait a little, go on.
                    log.line(&format!("accept failed: {err}"));
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            signal = &mut shutdown => {
                log.line(&format!("{signal}: no new connections; finishing the requests in flight"));
                break;
            }
        };
        if state.metrics.open_connections() >= config.limits.max_connections {
            state.metrics.connection_refused();
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let service_state = Arc::clone(&state);
        let connection = builder.serve_connection(
            TokioIo::new(stream),
            service_fn(move |request| handle(Arc::clone(&service_state), request)),
        );
        let connection = graceful.watch(connection);
        // Counted from here, so a burst of accepts sees the ones before it.
        let metrics = Arc::clone(&state.metrics);
        metrics.connections(1);
        tokio::spawn(async move {
            let _ = connection.await;
            metrics.connections(-1);
        });
    }
    state.shutting_down.store(true, Ordering::Relaxed);
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => log.line("every request in flight finished; stopped"),
        () = tokio::time::sleep(config.limits.shutdown_timeout) => log.line(&format!(
            "stopped with requests still in flight after {} ms (--shutdown-timeout-ms)",
            config.limits.shutdown_timeout.as_millis()
        )),
    }
    Ok(())
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C), or when `stop` is asked, naming
/// which.
async fn shutdown_signal(stop: &crate::Stop) -> &'static str {
    tokio::select! {
        signal = os_signal() => signal,
        () = stop.asked() => "stopped by the program that runs the service",
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C), naming it.
async fn os_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
