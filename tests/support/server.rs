//! A running `tribunal serve` for the command line's integration tests, asked
//! through the server crate's test client (its tests run the service
//! in-process; these run the command and its flags).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../../crates/tribunal-server/tests/support/client.rs"]
mod client;
#[allow(unused_imports)] // (each test file uses some)
pub use client::{
    load, ndjson, one_metric_pack, passing_check, read_response, wait_for, Asks, Response, PACKS,
};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A running `tribunal serve`, stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Server {
    pub child: Child,
    pub address: SocketAddr,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `tribunal serve ARGS --listen 127.0.0.1:0` and waits until it listens.
    pub fn start(args: &[&str]) -> Self {
        Self::try_start(args).unwrap_or_else(|log| panic!("the server did not start:\n{log}"))
    }

    /// As [`start`](Self::start); `Err` holds what it printed when it exited instead.
    pub fn try_start(args: &[&str]) -> Result<Self, String> {
        Self::try_start_with(args, &[])
    }

    /// As [`try_start`](Self::try_start), with `env` set for the server.
    pub fn try_start_with(args: &[&str], env: &[(&str, &Path)]) -> Result<Self, String> {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tribunal"));
        command
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .current_dir(root())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if !args.contains(&"--listen") {
            command.args(["--listen", "127.0.0.1:0"]);
        }
        let mut child = command.spawn().expect("start tribunal serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let mut address = None;
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            let mut log = log.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
            if let Some(rest) = line.split("listening on http://").nth(1) {
                address = rest.split_whitespace().next().map(|a| a.parse().unwrap());
                break;
            }
        }
        let Some(address) = address else {
            let _ = child.wait();
            return Err(log.lock().unwrap().clone());
        };
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut sink = sink.lock().unwrap();
                sink.push_str(&line);
                sink.push('\n');
            }
        });
        Ok(Self {
            child,
            address,
            log,
        })
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn terminate(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
    }

    /// Ends it with SIGKILL, which no process can clean up after (the OOM
    /// killer's, a container runtime's after its grace period).
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the exit code.
    pub fn stop(mut self) -> Option<i32> {
        self.terminated_within(Duration::from_secs(30))
            .expect("the server did not stop on SIGTERM")
            .code()
    }

    /// Sends SIGTERM and waits up to `grace` for it to exit: how it exited,
    /// or `None` if it still runs.
    fn terminated_within(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.terminate();
        let deadline = Instant::now() + grace;
        loop {
            if let Some(status) = self.child.try_wait().ok().flatten() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Asks for Server {
    fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for Server {
    /// Ends the server as its users do, with SIGTERM (it removes what it
    /// made, an unpacked bundle's folder), and kills it after a grace period.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        if self.terminated_within(Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
