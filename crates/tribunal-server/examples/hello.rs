//! The floor of the server benchmark (scripts/bench-server): a bare server on
//! the same stack as `tribunal serve` (hyper's HTTP/1.1 on tokio, the same
//! connection settings and thread count), which reads each request's body
//! and answers a fixed small JSON object. What `tribunal serve` adds over it
//! is the cost of judging.
//!
//!     cargo run --release -p tribunal-server --example hello -- 127.0.0.1:8081 [--hop]
//!
//! With `--hop`, each answer is made on another thread, as `tribunal serve`
//! judges on its executor's threads and never on the connections' own: the
//! request is queued for a thread waiting on a condition variable, and the
//! answer comes back through a oneshot that wakes the connection's task.
//! What that costs is part of every check's cost, and is a floor too: of
//! the CPU a request costs at a rate that lets threads sleep between
//! requests, above all.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};

/// Work sent to the `--hop` threads.
type Job = Box<dyn FnOnce() + Send>;

/// The `--hop` threads' queue, and the condition variable they wait on.
type Hop = Arc<(Mutex<VecDeque<Job>>, Condvar)>;

async fn hello(
    request: Request<hyper::body::Incoming>,
    hop: Option<Hop>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map_or(0, |b| b.to_bytes().len());
    let answer = move || Bytes::from(format!("{{\"ok\":true,\"bytes\":{body}}}"));
    let answer = match hop {
        None => answer(),
        Some(hop) => {
            let (send, answered) = tokio::sync::oneshot::channel();
            let (queue, wake) = &*hop;
            queue
                .lock()
                .expect("the queue")
                .push_back(Box::new(move || {
                    let _ = send.send(answer());
                }));
            wake.notify_one();
            answered.await.expect("an answer")
        }
    };
    let mut response = Response::new(Full::new(answer));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

/// Starts `threads` threads that run the jobs queued on the hop, in turn.
fn hop_threads(threads: usize) -> Hop {
    let hop: Hop = Arc::default();
    for _ in 0..threads {
        let hop = Arc::clone(&hop);
        std::thread::spawn(move || {
            let (queue, wake) = &*hop;
            loop {
                let mut jobs = queue.lock().expect("the queue");
                let job = loop {
                    match jobs.pop_front() {
                        Some(job) => break job,
                        None => jobs = wake.wait(jobs).expect("the queue"),
                    }
                };
                drop(jobs);
                job();
            }
        });
    }
    hop
}

fn main() {
    let mut address = "127.0.0.1:8081".to_owned();
    let mut hop = false;
    for arg in std::env::args().skip(1) {
        if arg == "--hop" {
            hop = true;
        } else {
            address = arg;
        }
    }
    let threads = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let hop = hop.then(|| hop_threads(threads));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&address).await.expect("bind");
        eprintln!(
            "hello: listening on http://{}",
            listener.local_addr().expect("an address")
        );
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_secs(10))
            .keep_alive(true);
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let hop = hop.clone();
            let connection = builder.serve_connection(
                TokioIo::new(stream),
                service_fn(move |request| hello(request, hop.clone())),
            );
            tokio::spawn(connection);
        }
    });
}
