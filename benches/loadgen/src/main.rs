//! Open-loop HTTP/1.1 load: `--rate` requests per second over `--connections`
//! keep-alive connections for `--seconds`, each request's latency measured from
//! the moment it was due (not from when it could be sent), so a stall counts for
//! every request it delays. Bodies are the lines of `--bodies`, in turn.
//!
//!     loadgen --url http://127.0.0.1:8080/v1/packs/ksi-emission/check \
//!         --bodies records.ndjson --rate 5000 --seconds 20 [--connections 50]
//!
//! Prints one JSON object: requests, non-200 answers, errors, the rate
//! achieved, and latency percentiles in microseconds.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Options {
    host: String,
    path: String,
    bodies: Vec<Vec<u8>>,
    rate: f64,
    seconds: f64,
    connections: usize,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let (mut url, mut bodies, mut rate, mut seconds, mut connections) =
        (None, None, 1000.0, 10.0, 50);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => url = Some(value()?),
            "--bodies" => bodies = Some(value()?),
            "--rate" => rate = value()?.parse().map_err(|e| format!("--rate: {e}"))?,
            "--seconds" => seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--connections" => {
                connections = value()?
                    .parse()
                    .map_err(|e| format!("--connections: {e}"))?;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let rest = url
        .strip_prefix("http://")
        .ok_or("--url must start with http://")?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let bodies = std::fs::read_to_string(bodies.ok_or("--bodies is required")?)
        .map_err(|e| format!("--bodies: {e}"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect::<Vec<_>>();
    if bodies.is_empty() {
        return Err("--bodies holds no line".to_owned());
    }
    Ok(Options {
        host: host.to_owned(),
        path: format!("/{path}"),
        bodies,
        rate,
        seconds,
        connections: connections.max(1),
    })
}

/// Per connection: latencies in µs, non-200 answers, broken requests.
type Outcome = (Vec<u32>, u64, u64);

fn connect(host: &str) -> std::io::Result<BufReader<TcpStream>> {
    let stream = TcpStream::connect(host)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    Ok(BufReader::new(stream))
}

/// Reads one response; returns its status.
fn read_response(reader: &mut BufReader<TcpStream>, line: &mut String) -> std::io::Result<u16> {
    line.clear();
    reader.read_line(line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(line)? == 0 {
            return Err(std::io::Error::other("closed"));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(status)
}

fn run_connection(options: &Options, index: usize, start: Instant) -> Outcome {
    let interval = options.connections as f64 / options.rate;
    let total = (options.seconds * options.rate / options.connections as f64) as usize;
    let mut latencies = Vec::with_capacity(total);
    let (mut non_200, mut errors) = (0, 0);
    let mut reader = connect(&options.host).ok();
    let mut line = String::new();
    let mut request = Vec::new();
    // Connections start spread over one interval.
    let offset = interval * index as f64 / options.connections as f64;
    for k in 0..total {
        let due = start + Duration::from_secs_f64(offset + interval * k as f64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let body = &options.bodies[(k * options.connections + index) % options.bodies.len()];
        // The request in one write, as a client sends it: written in two, its
        // head and body went out as two packets (`nodelay`), and the server
        // woke for each.
        request.clear();
        let _ = write!(
            request,
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            options.path,
            options.host,
            body.len()
        );
        request.extend_from_slice(body);
        if reader.is_none() {
            reader = connect(&options.host).ok();
        }
        let Some(connection) = reader.as_mut() else {
            errors += 1;
            continue;
        };
        let sent = connection.get_mut().write_all(&request);
        if let Ok(status) = sent.and_then(|()| read_response(connection, &mut line)) {
            let micros = due.elapsed().as_micros();
            latencies.push(u32::try_from(micros).unwrap_or(u32::MAX));
            if status != 200 {
                non_200 += 1;
            }
        } else {
            errors += 1;
            reader = None;
        }
    }
    (latencies, non_200, errors)
}

fn main() {
    let options = match options() {
        Ok(options) => Arc::new(options),
        Err(message) => {
            eprintln!("loadgen: {message}");
            std::process::exit(2);
        }
    };
    let start = Instant::now() + Duration::from_millis(100);
    let threads: Vec<_> = (0..options.connections)
        .map(|index| {
            let options = Arc::clone(&options);
            std::thread::spawn(move || run_connection(&options, index, start))
        })
        .collect();
    let mut latencies = Vec::new();
    let (mut non_200, mut errors) = (0, 0);
    for thread in threads {
        let (l, n, e) = thread.join().expect("a connection thread");
        latencies.extend(l);
        non_200 += n;
        errors += e;
    }
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| {
        if latencies.is_empty() {
            0
        } else {
            latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)]
        }
    };
    println!(
        "{{\"requests\":{},\"non_200\":{non_200},\"errors\":{errors},\"rate\":{:.1},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{}}}",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        latencies.last().copied().unwrap_or(0)
    );
}
