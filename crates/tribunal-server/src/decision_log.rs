//! The decision log (`--decision-log FILE`): one NDJSON line per judged
//! record, with its decision id, time, pack, revision, status, score, issue
//! codes and their paths, latency (and a stream's judging time), and the
//! caller's `X-Request-Id` and `traceparent`; the output and a transcript's
//! tool calls only with `--log-outputs`.
//!
//! Lines are written by a thread of their own, so a slow disk never holds up a
//! request: requests hand lines over through a bounded queue, and a line that
//! finds it full is dropped and counted (`tribunal_decision_log_dropped_total`).
//! When the file would grow past its size limit it is rotated: `FILE` becomes
//! `FILE.1`, `FILE.1` becomes `FILE.2`, and so on, the oldest beyond `keep`
//! removed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::json;
use tribunal::Report;

use crate::metrics::Metrics;

/// Where and how decisions are logged.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecisionLogConfig {
    /// The file (created, or appended to).
    pub path: PathBuf,
    /// Rotate once the file would grow past this many bytes (0: never).
    pub max_bytes: u64,
    /// Rotated files kept (`FILE.1` .. `FILE.keep`).
    pub keep: usize,
    /// Log each record's output too (left out by default: outputs may hold
    /// what users typed).
    pub log_outputs: bool,
}

impl DecisionLogConfig {
    /// Logs to `path`, rotated at 100 MiB, five rotated files kept, no outputs.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            max_bytes: 100 * 1024 * 1024,
            keep: 5,
            log_outputs: false,
        }
    }
}

/// Lines waiting to be written, at most.
const QUEUE: usize = 65_536;

/// The sending side of the decision log.
#[derive(Debug)]
pub struct DecisionLog {
    sender: Option<SyncSender<String>>,
    writer: Option<JoinHandle<()>>,
    log_outputs: bool,
    metrics: Arc<Metrics>,
}

/// One decision, as the log writes it.
#[derive(Debug)]
pub struct Entry<'a> {
    pub decision_id: &'a str,
    pub pack: &'a str,
    /// The revision of the bundle the pack came from, if it did.
    pub bundle: Option<&'a str>,
    pub report: &'a Report,
    /// Time from the request's headers to the decision (for an `eval`
    /// record, to that record's).
    pub latency: std::time::Duration,
    /// The output judged (logged only with `log_outputs`; `None` for a line
    /// that could not be read).
    pub output: Option<&'a str>,
    /// A transcript's tool calls (logged only with `log_outputs`), as
    /// [`tool_calls`] lists them.
    pub tool_calls: Option<&'a serde_json::Value>,
    /// A stream's time spent judging (its chunks and its whole text), apart
    /// from `latency`, the stream's duration.
    pub judging: Option<std::time::Duration>,
    /// The request's `X-Request-Id` and `traceparent`.
    pub trace: &'a crate::trace::Trace,
}

/// A transcript's tool calls as the log holds them: each call's `name`, `id`,
/// `arguments` (`null` when they are not JSON) and `path`; `None` for a
/// record without messages.
pub fn tool_calls(messages: &tribunal::Json) -> Option<serde_json::Value> {
    if messages.is_null() {
        return None;
    }
    let transcript = tribunal::Transcript::from_messages(messages);
    let calls = transcript
        .turns
        .iter()
        .flat_map(|turn| &turn.tool_calls)
        .map(|call| {
            json!({
                "name": call.name,
                "id": call.id,
                "arguments": call.arguments.to_serde(),
                "path": call.path,
            })
        })
        .collect();
    Some(serde_json::Value::Array(calls))
}

fn micros(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

impl DecisionLog {
    /// Opens (or creates) the log file and starts its writer.
    pub fn open(
        config: &DecisionLogConfig,
        metrics: Arc<Metrics>,
        messages: crate::Log,
    ) -> io::Result<Self> {
        let file = open_append(&config.path)?;
        let size = file.metadata().map_or(0, |m| m.len());
        let (sender, receiver) = mpsc::sync_channel(QUEUE);
        let mut writer = Writer {
            path: config.path.clone(),
            max_bytes: config.max_bytes,
            keep: config.keep,
            out: BufWriter::with_capacity(64 * 1024, file),
            size,
            messages,
        };
        let writer = std::thread::Builder::new()
            .name("tribunal-decision-log".into())
            .spawn(move || writer.run(&receiver))?;
        Ok(Self {
            sender: Some(sender),
            writer: Some(writer),
            log_outputs: config.log_outputs,
            metrics,
        })
    }

    /// Logs a decision (never waits: a full queue drops it, counted).
    pub fn log(&self, entry: &Entry<'_>) {
        if self.sender.is_some() {
            self.send(self.line(entry));
        }
    }

    /// A decision's line, as [`log`](Self::log) writes it (for a caller that
    /// logs it later: once its answer is delivered).
    pub fn line(&self, entry: &Entry<'_>) -> String {
        let report = entry.report;
        let codes: Vec<&str> = report.issues.iter().map(crate::metrics::code_of).collect();
        let paths: Vec<Option<&str>> = report.issues.iter().map(|i| i.path.as_deref()).collect();
        let mut line = json!({
            "decision_id": entry.decision_id,
            "time": crate::time::now(),
            "pack": entry.pack,
            "revision": report.revision,
            "id": report.id,
            "status": report.status().as_str(),
            "score": report.score,
            "codes": codes,
            "paths": paths,
            "error_kind": report.error_kind().map(tribunal::ErrorKind::as_str),
            "latency_us": micros(entry.latency),
        });
        if let Some(fields) = line.as_object_mut() {
            if let Some(bundle) = entry.bundle {
                fields.insert("bundle".into(), bundle.into());
            }
            if let Some(judging) = entry.judging {
                fields.insert("judging_us".into(), micros(judging).into());
            }
            entry.trace.log_into(fields);
            if self.log_outputs {
                if let Some(output) = entry.output {
                    fields.insert("output".into(), output.into());
                }
                if let Some(calls) = entry.tool_calls {
                    fields.insert("tool_calls".into(), calls.clone());
                }
            }
        }
        let mut text = line.to_string();
        text.push('\n');
        text
    }

    /// A `decide` request's line: its decision id, time, pack, revision,
    /// the record's id, each proposed call (`name`, `decision`, the codes
    /// and paths of its issues), the latency and the request's trace; with
    /// `log_outputs`, each call's `arguments` too (from `tool_calls`, the
    /// transcript's calls as [`tool_calls`] lists them).
    pub fn calls_line(
        &self,
        decision_id: &str,
        pack: &tribunal::Pack,
        decisions: &tribunal::Decisions,
        latency: std::time::Duration,
        tool_calls: Option<&serde_json::Value>,
        trace: &crate::trace::Trace,
    ) -> String {
        let arguments = |path: &str| {
            tool_calls?
                .as_array()?
                .iter()
                .find(|c| c["path"] == path)
                .map(|c| c["arguments"].clone())
        };
        let calls: Vec<serde_json::Value> = decisions
            .decisions
            .iter()
            .map(|call| {
                let mut logged = json!({
                    "call": call.call,
                    "id": call.id,
                    "name": call.name,
                    "decision": call.decision,
                    "codes": call.issues.iter().map(crate::metrics::code_of).collect::<Vec<_>>(),
                    "paths": call.issues.iter().map(|i| i.path.as_deref()).collect::<Vec<_>>(),
                });
                if let (true, Some(fields)) = (self.log_outputs, logged.as_object_mut()) {
                    fields.insert(
                        "arguments".into(),
                        arguments(&call.path).unwrap_or(serde_json::Value::Null),
                    );
                }
                logged
            })
            .collect();
        let mut line = json!({
            "decision_id": decision_id,
            "time": crate::time::now(),
            "pack": pack.name(),
            "revision": decisions.revision,
            "id": decisions.id,
            "calls": calls,
            "error_kind": decisions.error_kind.map(tribunal::ErrorKind::as_str),
            "latency_us": micros(latency),
        });
        if let Some(fields) = line.as_object_mut() {
            if let Some(bundle) = pack.bundle_revision() {
                fields.insert("bundle".into(), bundle.into());
            }
            trace.log_into(fields);
        }
        let mut text = line.to_string();
        text.push('\n');
        text
    }

    /// Logs lines made by [`line`](Self::line) (one or more, each ending in
    /// a newline); never waits, as `log`.
    pub fn send(&self, text: String) {
        let Some(sender) = &self.sender else { return };
        let written = match sender.try_send(text) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        };
        self.metrics.logged(written);
    }

    /// Whether outputs are logged.
    pub fn logs_outputs(&self) -> bool {
        self.log_outputs
    }
}

impl Drop for DecisionLog {
    /// Writes what is queued, then stops the writer.
    fn drop(&mut self) {
        self.sender = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

struct Writer {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    out: BufWriter<File>,
    size: u64,
    messages: crate::Log,
}

impl Writer {
    fn run(&mut self, lines: &Receiver<String>) {
        while let Ok(line) = lines.recv() {
            self.write(&line);
            // Flush once the queue is empty: bursts are written together.
            while let Ok(line) = lines.try_recv() {
                self.write(&line);
            }
            if let Err(err) = self.out.flush() {
                self.failed("write", &err);
            }
        }
        let _ = self.out.flush();
    }

    fn write(&mut self, line: &str) {
        let length = line.len() as u64;
        if self.max_bytes > 0 && self.size > 0 && self.size + length > self.max_bytes {
            if let Err(err) = self.rotate() {
                self.failed("rotate", &err);
            }
        }
        if let Err(err) = self.out.write_all(line.as_bytes()) {
            self.failed("write", &err);
        }
        self.size += length;
    }

    /// Says on the service's log that the file could not be written or
    /// rotated (`what`).
    fn failed(&self, what: &str, err: &io::Error) {
        self.messages.line(&format!(
            "cannot {what} the decision log {}: {err}",
            self.path.display()
        ));
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.out.flush()?;
        let numbered = |n: usize| {
            let mut name = self.path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        if self.keep == 0 {
            fs::remove_file(&self.path)?;
        } else {
            let _ = fs::remove_file(numbered(self.keep));
            for n in (1..self.keep).rev() {
                let from = numbered(n);
                if from.exists() {
                    fs::rename(&from, numbered(n + 1))?;
                }
            }
            fs::rename(&self.path, numbered(1))?;
        }
        self.out = BufWriter::with_capacity(64 * 1024, open_append(&self.path)?);
        self.size = 0;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}
