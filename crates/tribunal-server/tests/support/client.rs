//! What the service's tests and the command line's tests of `tribunal serve`
//! share: a small HTTP/1.1 client (a request on a new connection, a response
//! read whole: a content length, or chunked), a load of checks from a few
//! threads, and the packs they make.
#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The shipped packs with their example data sets (`examples/data/PACK.jsonl`).
pub const PACKS: [&str; 6] = [
    "agent-response",
    "context-agent",
    "json-eval",
    "ksi-emission",
    "scripted-fields",
    "structured-output",
];

/// What the tests ask a running service of (run in-process, or `tribunal
/// serve`): each request on a new connection.
pub trait Asks {
    /// Where it listens.
    fn address(&self) -> SocketAddr;

    fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    fn check(&self, pack: &str, record: &Value) -> Response {
        self.request(
            "POST",
            &format!("/v1/packs/{pack}/check"),
            &[("content-type", "application/json")],
            record.to_string().as_bytes(),
        )
    }

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
        request(self.address(), method, path, headers, body)
    }
}

/// Sends one request on a new connection (closed after it) and reads the answer.
pub fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_response(&mut stream).expect("a response")
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// The error code of an error response.
    pub fn code(&self) -> String {
        serde_json::from_slice::<Value>(&self.body)
            .ok()
            .and_then(|body| body["error"]["code"].as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// Reads one HTTP/1.1 response (a content length, or chunked) from `stream`.
pub fn read_response(stream: &mut TcpStream) -> std::io::Result<Response> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':').unwrap();
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v): &(String, String)| v.clone())
    };
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = find("content-length") {
        body.resize(length.parse().unwrap(), 0);
        reader.read_exact(&mut body)?;
    } else {
        reader.read_to_end(&mut body)?;
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// What `probe` finds, once it finds something (within 30 s; `what` names it
/// when it never does).
pub fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A pack `name` in `dir/name` whose one metric `m` is `implementation` (a
/// manifest's `implementation:` value), with `files` beside its manifest.
pub fn one_metric_pack(
    dir: &Path,
    name: &str,
    implementation: &str,
    files: &[(&str, &str)],
) -> PathBuf {
    let pack = dir.join(name);
    fs::create_dir_all(pack.join("components")).unwrap();
    fs::write(
        pack.join("pack.yaml"),
        format!("name: {name}\nversion: 1.0.0\ncomponents: [components/*.yaml]\npipeline:\n  metrics: [m]\n"),
    )
    .unwrap();
    fs::write(
        pack.join("components/m.yaml"),
        format!("kind: metric\nname: m\nimplementation:\n  {implementation}\n"),
    )
    .unwrap();
    for (file, text) in files {
        fs::write(pack.join("components").join(file), text).unwrap();
    }
    pack
}

/// A keep-alive check of a KSI record that passes, as raw HTTP/1.1.
pub fn passing_check() -> String {
    let body = json!({"output": "{\"event\": \"a:b\", \"data\": {}}"}).to_string();
    format!(
        "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Fires checks at `address` from `threads` threads until `stop`: each
/// answer's status and revision.
pub fn load(
    address: SocketAddr,
    threads: usize,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<Vec<(u16, String)>>> {
    (0..threads)
        .map(|_| {
            let stop = Arc::clone(stop);
            std::thread::spawn(move || {
                let request = passing_check();
                let mut answers = Vec::new();
                let mut stream = TcpStream::connect(address).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    if stream.write_all(request.as_bytes()).is_err() {
                        break;
                    }
                    match read_response(&mut stream) {
                        Ok(response) => answers.push((
                            response.status,
                            response.json()["revision"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        )),
                        Err(_) => break,
                    }
                }
                answers
            })
        })
        .collect()
}

/// The JSON values of an NDJSON text's lines.
pub fn ndjson(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
