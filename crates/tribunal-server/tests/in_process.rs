//! The service run in-process, as a program that embeds it runs it: started on
//! a free loopback port, asked over HTTP, and stopped through its `Stop`
//! handle (no signal).

mod support;

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::json;
use support::{root, Asks, Service};
use tribunal::{LoadOptions, Runtime};
use tribunal_server::{serve, Config, Stop};

#[test]
fn a_service_run_in_process_answers_and_stops_when_asked() {
    let service = Service::start(&["rules/ksi-emission"], |c| c.reload_every = None);
    let address = service.address;
    assert_eq!(service.get("/healthz").status, 200);
    let answer = service.check(
        "ksi-emission",
        &json!({"output": "{\"event\": \"agent:status\", \"data\": {\"ok\": true}}"}),
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    let record = answer.json();
    assert_eq!(record["status"], "PASS", "{record}");
    assert!(record["decision_id"].is_string(), "{record}");
    assert_eq!(service.stop(), Ok(()));
    assert!(
        TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_err(),
        "no longer listening"
    );
    // A stop asked before the service starts stops it as soon as it listens.
    let mut config = Config::new(
        vec![root().join("rules/ksi-emission")],
        Runtime::new(),
        LoadOptions::default(),
    );
    config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    config.reload_every = None;
    config.stop = Stop::default();
    config.stop.stop();
    assert!(serve(&config, |_| {}).is_ok());
}
