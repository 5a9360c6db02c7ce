//! `isolation: process`: a plugin component run in helper processes of its own,
//! so that a plugin that crashes, aborts, exits or hangs costs the record it
//! was given, not the run.
//!
//! The helper is the `tribunal` binary in a hidden mode (`tribunal
//! __plugin-host LIBRARY`, [`serve`]): it opens the library, instantiates the
//! one component it is asked for, and answers evaluation requests. Host and
//! helper exchange frames (a 4-byte little-endian length, then the bytes) on
//! the helper's stdin and stdout; the plugin's own output to stdout goes to
//! stderr, so it cannot break a frame. A request is an operation byte (`I`
//! instantiate, `E` evaluate) and the JSON the in-process call would pass; a
//! reply is `{"ok": ...}` or `{"error": "..."}`, what the in-process call's
//! reply is read into, so both modes give the same results.
//!
//! The host keeps a pool of idle helpers per component (one per thread that
//! needs one at a time). A helper that dies or does not answer within the
//! call timeout, or before the deadline of the pipeline step the call is part
//! of if that comes first, is the record's `ERROR` (with the signal or exit
//! code) and is replaced by a new one for the next call.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::envelope;
use crate::report::ErrorKind;

/// The hidden command line of the helper mode.
pub const HELPER_COMMAND: &str = "__plugin-host";

/// Environment variable naming the `tribunal` binary to run helpers with
/// (when the running program is not `tribunal` itself: a library user, Python).
pub const HELPER_ENV: &str = "TRIBUNAL_PLUGIN_HOST";

const INSTANTIATE: u8 = b'I';
const EVALUATE: u8 = b'E';

/// The binary that runs helpers: `TRIBUNAL_PLUGIN_HOST`, else this program if
/// it is `tribunal`, else `tribunal` found on `PATH`.
pub(crate) fn helper_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(HELPER_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    if let Ok(me) = std::env::current_exe() {
        let stem = me.file_stem().map(|s| s.to_string_lossy().into_owned());
        if stem.as_deref() == Some("tribunal") {
            return Ok(me);
        }
    }
    let name = format!("tribunal{}", std::env::consts::EXE_SUFFIX);
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(&name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            format!("`isolation: process` runs the plugin in a `tribunal` helper process, and no tribunal binary was found: put it on PATH or name it in {HELPER_ENV}")
        })
}

fn write_frame(out: &mut impl Write, op: Option<u8>, body: &[u8]) -> io::Result<()> {
    let length = body.len() + usize::from(op.is_some());
    let length = u32::try_from(length)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a frame over 4 GiB"))?;
    out.write_all(&length.to_le_bytes())?;
    if let Some(op) = op {
        out.write_all(&[op])?;
    }
    out.write_all(body)?;
    out.flush()
}

/// The next frame, `None` at the end of the stream.
fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(err) => return Err(err),
    }
    let length = u32::from_le_bytes(length) as usize;
    let mut body = vec![0u8; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// `{"ok": value}` or `{"error": message}`, as a reply frame's body.
fn reply_body(result: Result<Value, String>) -> Vec<u8> {
    let reply = match result {
        Ok(value) => serde_json::json!({ "ok": value }),
        Err(message) => serde_json::json!({ "error": message }),
    };
    serde_json::to_vec(&reply).unwrap_or_else(|_| b"{\"error\": \"unencodable reply\"}".to_vec())
}

/// The helper mode: serves the component of `library` that the first request
/// instantiates, until stdin ends. Returns the process exit code.
pub fn serve(library: &Path) -> i32 {
    let mut replies = match super::ffi::protocol_output() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("tribunal plugin host: cannot set up its output: {err}");
            return 2;
        }
    };
    let mut requests = io::stdin().lock();
    // The helper process opens one library, for its own life.
    let libraries = super::Libraries::default();
    let library = super::load(&libraries, &super::Approved::named_by_the_engine(library))
        .map_err(|err| err.to_string());
    let mut handle = None;
    loop {
        let frame = match read_frame(&mut requests) {
            Ok(Some(frame)) if !frame.is_empty() => frame,
            Ok(_) => break,
            Err(err) => {
                eprintln!("tribunal plugin host: cannot read a request: {err}");
                return 2;
            }
        };
        let (op, body) = (frame[0], &frame[1..]);
        let result = match (&library, op, handle) {
            (Err(err), _, _) => Err(err.clone()),
            (Ok(library), INSTANTIATE, None) => library
                .raw
                .instantiate(body, |bytes, made| envelope(bytes).map(|_| made))
                .and_then(|made| {
                    made.ok_or_else(|| {
                        "instantiate reported success but returned no instance handle".to_owned()
                    })
                })
                .map(|made| {
                    handle = Some(made);
                    Value::Null
                }),
            (Ok(library), EVALUATE, Some(handle)) => library.raw.evaluate(handle, body, envelope),
            _ => Err(format!(
                "plugin host: unexpected request `{}`",
                char::from(op)
            )),
        };
        if let Err(err) = write_frame(&mut replies, None, &reply_body(result)) {
            eprintln!("tribunal plugin host: cannot write a reply: {err}");
            return 2;
        }
    }
    if let (Ok(library), Some(handle)) = (&library, handle) {
        library.raw.release(handle);
    }
    0
}

/// What went wrong with a helper during a call.
enum Failure {
    /// It ended (crashed, aborted, exited): how.
    Ended(String),
    /// It did not answer in time (it was stopped).
    TimedOut,
    /// It could not be started or spoken to.
    Io(String),
}

/// One running helper, its component instantiated.
struct Helper {
    child: Child,
    /// `None` once closed (the helper then releases its instance and ends).
    stdin: Option<ChildStdin>,
    replies: Receiver<io::Result<Option<Vec<u8>>>>,
}

impl Helper {
    fn start(binary: &Path, library: &Path) -> Result<Self, Failure> {
        let mut command = Command::new(binary);
        command
            .arg(HELPER_COMMAND)
            .arg(library)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // A process group of its own: Ctrl-C in the terminal stops the run
        // cleanly (the engine finishes the records being evaluated), and must
        // not kill the helpers evaluating them. A helper ends when its stdin does.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|err| {
            Failure::Io(format!(
                "cannot start the helper process {}: {err}",
                binary.display()
            ))
        })?;
        let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(Failure::Io("the helper process has no pipes".into()));
        };
        let (send, replies) = mpsc::channel();
        let reader = thread::Builder::new()
            .name("plugin-host-reader".into())
            .spawn(move || loop {
                let frame = read_frame(&mut stdout);
                let last = !matches!(frame, Ok(Some(_)));
                if send.send(frame).is_err() || last {
                    break;
                }
            });
        if let Err(err) = reader {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::Io(format!("cannot start a reader thread: {err}")));
        }
        Ok(Self {
            child,
            stdin: Some(stdin),
            replies,
        })
    }

    /// Sends one request and waits up to `timeout` for its reply.
    fn request(&mut self, op: u8, body: &[u8], timeout: Duration) -> Result<Vec<u8>, Failure> {
        let written = match &mut self.stdin {
            Some(stdin) => write_frame(stdin, Some(op), body),
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        };
        if written.is_err() {
            return Err(self.ended());
        }
        match self.replies.recv_timeout(timeout) {
            Ok(Ok(Some(reply))) => Ok(reply),
            Ok(Ok(None) | Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(self.ended()),
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(Failure::TimedOut)
            }
        }
    }

    /// How the helper ended (waiting for it: its pipe is closed).
    fn ended(&mut self) -> Failure {
        match self.child.wait() {
            Ok(status) => Failure::Ended(describe(status)),
            Err(err) => Failure::Io(format!("the helper process is gone: {err}")),
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Helper {
    /// Closes the helper's stdin so that it releases its instance (the
    /// plugin's `release` runs) and ends; one that has not ended within a
    /// second is killed.
    fn drop(&mut self) {
        self.stdin = None;
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        self.stop();
    }
}

/// "was killed by signal 6 (SIGABRT)", "exited with code 3".
fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => format!("ended ({status})"),
    }
}

/// A plugin component run in helper processes.
pub(super) struct Isolated {
    binary: PathBuf,
    library: PathBuf,
    /// The instantiate request every new helper gets (component, kind, config).
    instantiate: Vec<u8>,
    timeout: Duration,
    /// Where `timeout` comes from: `timeout_ms`, or `limits.plugin_timeout_ms`.
    timeout_key: &'static str,
    idle: Mutex<Vec<Helper>>,
}

impl Isolated {
    /// Starts a first helper and instantiates the component in it: a config the
    /// plugin refuses is a load error, as in-process.
    pub(super) fn start(
        library: &Path,
        instantiate: Vec<u8>,
        (timeout, timeout_key): (Duration, &'static str),
    ) -> Result<Self, String> {
        let isolated = Self {
            binary: helper_binary()?,
            library: library.to_path_buf(),
            instantiate,
            timeout,
            timeout_key,
            idle: Mutex::new(Vec::new()),
        };
        let helper = isolated
            .new_helper(timeout)
            .map_err(|failure| isolated.explain(failure))?;
        isolated.give_back(helper);
        Ok(isolated)
    }

    /// A new helper, its component instantiated within `wait`.
    fn new_helper(&self, wait: Duration) -> Result<Helper, Failure> {
        let mut helper = Helper::start(&self.binary, &self.library)?;
        let reply = helper.request(INSTANTIATE, &self.instantiate, wait)?;
        envelope(Some(&reply)).map_err(Failure::Io)?;
        Ok(helper)
    }

    fn give_back(&self, helper: Helper) {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(helper);
    }

    fn explain(&self, failure: Failure) -> String {
        match failure {
            Failure::Ended(how) => {
                format!("its helper process {how}; a new one takes the next call")
            }
            Failure::TimedOut => format!(
                "did not answer within {} ms ({}): its helper process was stopped",
                self.timeout.as_millis(),
                self.timeout_key
            ),
            Failure::Io(message) => message,
        }
    }

    /// One evaluation: the plugin's reply, read as in-process. The helper gets
    /// the component's `timeout_ms` (to start a new helper if none is idle, and
    /// to answer), but never past the deadline of the step the call is part of
    /// (the pack's `limits.timeout_ms`, which only the user lifts) or of its
    /// caller, as `budget` has them: a record already out of time is not made
    /// to wait for it.
    pub(super) fn call(
        &self,
        input: &[u8],
        budget: &crate::deadline::Budget<'_>,
    ) -> Result<Value, (ErrorKind, String)> {
        let started = std::time::Instant::now();
        let wait = budget
            .remaining()
            .map_or(self.timeout, |left| left.min(self.timeout));
        if wait.is_zero() {
            return Err((
                ErrorKind::Timeout,
                "not called: the step's time limit (limits.timeout_ms) had passed".to_owned(),
            ));
        }
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let helper = match idle {
            Some(helper) => Ok(helper),
            None => self.new_helper(wait),
        };
        let reply = helper.and_then(|mut helper| {
            let reply = helper.request(EVALUATE, input, wait.saturating_sub(started.elapsed()))?;
            self.give_back(helper);
            Ok(reply)
        });
        match reply {
            Ok(reply) => {
                envelope(Some(&reply)).map_err(|message| (ErrorKind::PluginReply, message))
            }
            // Stopped at the step's deadline, before its own timeout.
            Err(Failure::TimedOut) if wait < self.timeout => Err((
                ErrorKind::Timeout,
                format!(
                    "did not answer before the step's time limit (limits.timeout_ms) passed, \
                     {} ms into the call: its helper process was stopped",
                    started.elapsed().as_millis()
                ),
            )),
            Err(failure) => {
                let kind = match failure {
                    Failure::TimedOut => ErrorKind::Timeout,
                    Failure::Ended(_) | Failure::Io(_) => ErrorKind::PluginCrash,
                };
                Err((kind, self.explain(failure)))
            }
        }
    }
}
