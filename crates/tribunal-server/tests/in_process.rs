//! The service run in-process, as a program that embeds it runs it: started on
//! a free loopback port, asked over HTTP, and stopped through its `Stop`
//! handle (no signal), with a request in flight finished first.

mod support;

use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use support::client::request;
use support::root;
use tribunal::{LoadOptions, Runtime};
use tribunal_server::{serve, Config, Stop};

/// The KSI pack served on a free loopback port, stopped by `stop`.
fn ksi_service(stop: &Stop) -> Config {
    let mut config = Config::new(
        vec![root().join("rules/ksi-emission")],
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
    assert_eq!(request(address, "GET", "/healthz", &[], b"").status, 200);
    let answer = request(
        address,
        "POST",
        "/v1/packs/ksi-emission/check",
        &[("content-type", "application/json")],
        br#"{"output": "{\"event\": \"agent:status\", \"data\": {\"ok\": true}}"}"#,
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    let record = answer.json();
    assert_eq!(record["status"], "PASS", "{record}");
    assert!(record["decision_id"].is_string(), "{record}");
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
