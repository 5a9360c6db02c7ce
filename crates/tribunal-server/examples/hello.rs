//! The floor of the server benchmark (scripts/bench-server): a bare server on
//! the same stack as `tribunal serve` (hyper's HTTP/1.1 on tokio, the same
//! connection settings and thread count), which reads each request's body
//! and answers a fixed small JSON object. What `tribunal serve` adds over it
//! is the cost of judging.
//!
//!     cargo run --release -p tribunal-server --example hello -- 127.0.0.1:8081

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};

async fn hello(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map_or(0, |b| b.to_bytes().len());
    let mut response = Response::new(Full::new(Bytes::from(format!(
        "{{\"ok\":true,\"bytes\":{body}}}"
    ))));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

fn main() {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    let threads = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
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
            let connection = builder.serve_connection(TokioIo::new(stream), service_fn(hello));
            tokio::spawn(connection);
        }
    });
}
