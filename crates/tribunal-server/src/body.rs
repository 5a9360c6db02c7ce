//! Request and response bodies: a bounded read with deadlines, and the
//! channels that stream an `eval` body through the engine's JSONL runner
//! (blocking readers and writers on one side, async HTTP on the other), with
//! a few chunks in flight at most, so memory stays flat for any body size.

use std::convert::Infallible;
use std::io::{self, BufRead, Read};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Why a body could not be read whole.
#[derive(Debug)]
pub enum BodyError {
    /// It is longer than the limit.
    TooLarge { limit: usize },
    /// Nothing came for the read timeout, or the deadline passed.
    Timeout { received: usize },
    /// The connection ended (or broke) before the body did.
    CutOff { received: usize, why: String },
}

/// Reads `body` whole: at most `limit` bytes, each chunk within `idle` of the
/// one before, all before `deadline`.
pub async fn read_limited(
    mut body: Incoming,
    limit: usize,
    idle: Duration,
    deadline: Instant,
) -> Result<Bytes, BodyError> {
    let mut data = BytesMut::new();
    loop {
        let wait = idle.min(deadline.saturating_duration_since(Instant::now()));
        let frame = match tokio::time::timeout(wait, body.frame()).await {
            Err(_) => {
                return Err(BodyError::Timeout {
                    received: data.len(),
                })
            }
            Ok(None) => return Ok(data.freeze()),
            Ok(Some(Err(err))) => {
                return Err(BodyError::CutOff {
                    received: data.len(),
                    why: err.to_string(),
                })
            }
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(chunk) = frame.into_data() {
            if data.len() + chunk.len() > limit {
                return Err(BodyError::TooLarge { limit });
            }
            data.extend_from_slice(&chunk);
        }
    }
}

/// Chunks of a request body in flight to the reader, at most.
const IN_FLIGHT: usize = 16;

/// Feeds `body` to a [`ChannelReader`], each chunk within `idle` of the one
/// before; a timeout or a broken connection reaches the reader as an error.
pub fn pump(mut body: Incoming, idle: Duration) -> ChannelReader {
    let (sender, receiver) = mpsc::channel(IN_FLIGHT);
    tokio::spawn(async move {
        loop {
            let next = match tokio::time::timeout(idle, body.frame()).await {
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the request body stopped: nothing came for {} ms (--read-timeout-ms)",
                        idle.as_millis()
                    ),
                )),
                Ok(None) => break,
                Ok(Some(Err(err))) => Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the request body was cut off: {err}"),
                )),
                Ok(Some(Ok(frame))) => match frame.into_data() {
                    Ok(chunk) => Ok(chunk),
                    Err(_) => continue,
                },
            };
            let failed = next.is_err();
            if sender.send(next).await.is_err() || failed {
                break;
            }
        }
    });
    ChannelReader {
        receiver,
        chunk: Bytes::new(),
        done: false,
        runtime: tokio::runtime::Handle::current(),
    }
}

/// How long a body's reader waits for more before the records read so far
/// are judged and answered (`/eval`: each result goes out once decided, a
/// body that trickles in is answered as it comes).
const COALESCE: std::time::Duration = std::time::Duration::from_millis(10);

/// A blocking reader over the chunks [`pump`] sends (for a thread outside the
/// async runtime).
#[derive(Debug)]
pub struct ChannelReader {
    receiver: mpsc::Receiver<io::Result<Bytes>>,
    chunk: Bytes,
    done: bool,
    /// The runtime the body arrives on.
    runtime: tokio::runtime::Handle,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ChannelReader {
    /// Says `WouldBlock` each time nothing arrives for [`COALESCE`]: the
    /// records read before are then judged and answered, and what other
    /// threads judged meanwhile is written, while the body is idle.
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.chunk.is_empty() && !self.done {
            let next = match self.receiver.try_recv() {
                Ok(next) => Some(next),
                Err(mpsc::error::TryRecvError::Disconnected) => None,
                Err(mpsc::error::TryRecvError::Empty) => {
                    // (The timer is made on the runtime: this may be one
                    // of the engine's threads.)
                    let receiver = &mut self.receiver;
                    let waited = self
                        .runtime
                        .block_on(async { tokio::time::timeout(COALESCE, receiver.recv()).await });
                    match waited {
                        Ok(next) => next,
                        Err(_) => return Err(io::ErrorKind::WouldBlock.into()),
                    }
                }
            };
            match next {
                Some(Ok(chunk)) => self.chunk = chunk,
                Some(Err(err)) => {
                    self.done = true;
                    return Err(err);
                }
                None => self.done = true,
            }
        }
        Ok(&self.chunk)
    }

    fn consume(&mut self, amount: usize) {
        self.chunk.advance(amount);
    }
}

/// Result chunks in flight to the client, at most.
const OUT_IN_FLIGHT: usize = 4;

/// A response body fed by a [`ResultSender`].
#[derive(Debug)]
pub struct ChannelBody {
    receiver: mpsc::Receiver<Bytes>,
}

/// The blocking side of a [`ChannelBody`]: the engine's result sink.
#[derive(Debug)]
pub struct ResultSender {
    sender: mpsc::Sender<Bytes>,
    /// How long a chunk may wait for the client to read (`--send-timeout-ms`).
    timeout: std::time::Duration,
    /// The runtime the response is sent on.
    runtime: tokio::runtime::Handle,
}

/// A streamed response body and what writes into it, from a blocking thread
/// of the current runtime: a chunk the client has not taken within `timeout`
/// (it stopped reading) ends the run, and so frees its slot.
pub fn result_channel(timeout: std::time::Duration) -> (ResultSender, ChannelBody) {
    let (sender, receiver) = mpsc::channel(OUT_IN_FLIGHT);
    let runtime = tokio::runtime::Handle::current();
    let sender = ResultSender {
        sender,
        timeout,
        runtime,
    };
    (sender, ChannelBody { receiver })
}

/// A streamed response body and its async sender (at most a few chunks in
/// flight: a client that reads slowly slows the sender down).
pub fn event_channel() -> (mpsc::Sender<Bytes>, ChannelBody) {
    let (sender, receiver) = mpsc::channel(OUT_IN_FLIGHT);
    (sender, ChannelBody { receiver })
}

impl tribunal::jsonl::ResultSink for ResultSender {
    fn write_results(&mut self, lines: &[u8], _checks: &[u8]) -> io::Result<()> {
        let send = self
            .sender
            .send_timeout(Bytes::copy_from_slice(lines), self.timeout);
        match self.runtime.block_on(send) {
            Ok(()) => Ok(()),
            Err(mpsc::error::SendTimeoutError::Timeout(_)) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing for {} ms (--send-timeout-ms)",
                    self.timeout.as_millis()
                ),
            )),
            Err(mpsc::error::SendTimeoutError::Closed(_)) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client went away",
            )),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.receiver
            .poll_recv(cx)
            .map(|chunk| chunk.map(|chunk| Ok(Frame::data(chunk))))
    }
}
