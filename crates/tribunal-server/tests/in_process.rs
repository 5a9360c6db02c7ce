//! The service run in-process, as a program that embeds it runs it: started on
//! a free loopback port, asked over HTTP, and stopped through its `Stop`
//! handle (no signal), with a request in flight finished first.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use tribunal::{LoadOptions, Runtime};
use tribunal_server::{serve, Config, Stop};

fn rules(pack: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../rules")
        .join(pack)
}

/// One HTTP/1.1 request on a new connection; the status and the body.
fn request(address: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_owned();
    (status, body)
}

/// The KSI pack served on a free loopback port, stopped by `stop`.
fn ksi_service(stop: &Stop) -> Config {
    let mut config = Config::new(
        vec![rules("ksi-emission")],
        Runtime::new(),
        LoadOptions::default(),
    );
    config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    config.reload_every = None;
    config.stop = stop.clone();
    config
}

#[test]
fn a_service_run_in_process_answers_and_stops_when_asked() {
    let stop = Stop::default();
    let config = ksi_service(&stop);
    let (ready, listening) = mpsc::channel();
    let service =
        std::thread::spawn(move || serve(&config, |address| ready.send(address).unwrap()));
    let address = listening
        .recv_timeout(Duration::from_secs(60))
        .expect("the service listens");
    assert_eq!(request(address, "GET", "/healthz", "").0, 200);
    let (status, body) = request(
        address,
        "POST",
        "/v1/packs/ksi-emission/check",
        r#"{"output": "{\"event\": \"agent:status\", \"data\": {\"ok\": true}}"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let record: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(record["status"], "PASS", "{body}");
    assert!(record["decision_id"].is_string(), "{body}");
    stop.stop();
    let result = service.join().expect("serve returns");
    assert!(result.is_ok(), "{result:?}");
    assert!(
        TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_err(),
        "no longer listening"
    );
    // A stop asked before the service starts stops it as soon as it listens.
    let early = Stop::default();
    early.stop();
    assert!(serve(&ksi_service(&early), |_| {}).is_ok());
}
