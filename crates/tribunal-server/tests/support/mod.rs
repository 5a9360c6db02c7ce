//! The service run in-process for the tests, as a program that embeds it
//! runs it: on a free loopback port, its log lines kept, stopped through its
//! [`Stop`] handle when asked or dropped.
#![allow(dead_code)]

pub mod client;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tribunal::{LoadOptions, Runtime};
use tribunal_server::{serve, Config, Log, Stop};

#[allow(unused_imports)] // (each test file uses some)
pub use client::{read_response, wait_for, Asks, Response};

/// The repository's root: the shipped packs are under `rules/`.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A service running on a thread of the test's process.
pub struct Service {
    pub address: SocketAddr,
    log: Arc<Mutex<String>>,
    stop: Stop,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Service {
    /// Serves `sources` (relative to the repository's root, or absolute) with
    /// the configuration `configure` makes of the defaults, on a free
    /// loopback port, and waits until it listens.
    pub fn start(sources: &[&str], configure: impl FnOnce(&mut Config)) -> Self {
        Self::try_start(sources, configure)
            .unwrap_or_else(|why| panic!("the service did not start:\n{why}"))
    }

    /// As [`start`](Self::start); `Err` holds why it did not start.
    pub fn try_start(
        sources: &[&str],
        configure: impl FnOnce(&mut Config),
    ) -> Result<Self, String> {
        let sources = sources.iter().map(|source| root().join(source)).collect();
        let mut config = Config::new(sources, Runtime::new(), LoadOptions::default());
        config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
        configure(&mut config);
        let log = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&log);
        config.log = Log::new(move |line| {
            let mut log = sink.lock().unwrap();
            log.push_str(line);
            log.push('\n');
        });
        let stop = config.stop.clone();
        let (ready, listening) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            serve(&config, move |address| ready.send(address).unwrap()).map_err(|e| e.to_string())
        });
        match listening.recv_timeout(Duration::from_secs(120)) {
            Ok(address) => Ok(Self {
                address,
                log,
                stop,
                thread: Some(thread),
            }),
            Err(_) => Err(match thread.join() {
                Ok(Err(why)) => why,
                Ok(Ok(())) => "the service returned before it listened".to_owned(),
                Err(_) => "the service panicked".to_owned(),
            }),
        }
    }

    /// Its log lines so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Asks it to stop (as SIGTERM does), without waiting.
    pub fn terminate(&self) {
        self.stop.stop();
    }

    /// Stops it and waits until `serve` returns: what it returned.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop.stop();
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("the service panicked")
    }
}

impl Asks for Service {
    fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.stop.stop();
            let _ = thread.join();
        }
    }
}
