//! `tribunal serve`, the command, on loopback: the records it answers with are
//! the CLI's, its flags (a token file, a public address), a crashing isolated
//! plugin (its helper is this binary) and SIGTERM under load. The service
//! itself, run in-process, is tested in the server crate
//! (crates/tribunal-server/tests/service.rs).
#![allow(clippy::too_many_lines)]

#[path = "support/plugin_build.rs"]
mod plugin_build;
#[path = "support/server.rs"]
mod server_support;

use std::fs;
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use server_support::{load, one_metric_pack, read_response, Asks, Server, PACKS};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn data(pack: &str) -> PathBuf {
    root().join(format!("examples/data/{pack}.jsonl"))
}

/// What `tribunal eval` writes for a data set.
fn eval_lines(pack: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .current_dir(root())
        .args(["eval", &format!("rules/{pack}"), "--input"])
        .arg(data(pack))
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn check_and_eval_answer_with_the_records_the_cli_writes() {
    let server = Server::start(&["rules/"]);
    for pack in PACKS {
        let expected = eval_lines(pack);
        // eval: the body streamed through, byte for byte the CLI's records.
        let body = fs::read(data(pack)).unwrap();
        let response = server.request(
            "POST",
            &format!("/v1/packs/{pack}/eval"),
            &[("content-type", "application/x-ndjson")],
            &body,
        );
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(
            response.header("content-type"),
            Some("application/x-ndjson")
        );
        let lines: Vec<String> = response.text().lines().map(str::to_owned).collect();
        assert_eq!(lines, expected, "{pack}: eval");
        // check: each record alone, the same record without `line`, with a
        // decision id.
        let text = String::from_utf8(body).unwrap();
        let mut ids = std::collections::HashSet::new();
        for (input, expected) in text.lines().filter(|l| !l.trim().is_empty()).zip(&expected) {
            let response = server.request(
                "POST",
                &format!("/v1/packs/{pack}/check"),
                &[("content-type", "application/json")],
                input.as_bytes(),
            );
            let mut expected: Value = serde_json::from_str(expected).unwrap();
            if expected["status"] == "ERROR" && response.status == 400 {
                // A record eval could not read is a 400 here.
                continue;
            }
            assert_eq!(response.status, 200, "{pack}: {}", response.text());
            let mut got = response.json();
            let id = got
                .as_object_mut()
                .unwrap()
                .shift_remove("decision_id")
                .expect("a decision id");
            assert_eq!(
                response.header("x-tribunal-decision-id"),
                id.as_str(),
                "the header names the decision"
            );
            assert!(ids.insert(id), "decision ids are unique");
            expected.as_object_mut().unwrap().shift_remove("line");
            assert_eq!(got, expected, "{pack}: check of {input}");
            // The key order too: the record is eval's line, `line` left out.
            let order = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(order(&got), order(&expected));
        }
    }
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn a_token_guards_everything_but_the_probes_and_a_public_address_needs_one() {
    let refused = Server::try_start(&["rules/", "--listen", "0.0.0.0:0"])
        .err()
        .expect("refused");
    assert!(refused.contains("--token-file"), "{refused}");

    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    fs::write(&token_file, "s3cret-token\n").unwrap();
    let token_arg = token_file.display().to_string();
    let server = Server::start(&["rules/", "--token-file", &token_arg]);
    let record = json!({"output": "x"}).to_string();
    let check = "/v1/packs/ksi-emission/check";
    let json_type = ("content-type", "application/json");
    let missing = server.request("POST", check, &[json_type], record.as_bytes());
    assert_eq!(
        (missing.status, missing.code().as_str()),
        (401, "auth.missing")
    );
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let wrong = server.request(
        "POST",
        check,
        &[json_type, ("authorization", "Bearer s3cret-tokem")],
        record.as_bytes(),
    );
    assert_eq!((wrong.status, wrong.code().as_str()), (401, "auth.invalid"));
    let right = server.request(
        "POST",
        check,
        &[json_type, ("authorization", "Bearer s3cret-token")],
        record.as_bytes(),
    );
    assert_eq!(right.status, 200);
    // The scheme's name in any case (RFC 9110); another scheme is no token.
    for (header, status) in [
        ("bearer s3cret-token", 200),
        ("BEARER   s3cret-token", 200),
        ("Basic s3cret-token", 401),
        ("Bearers3cret-token", 401),
    ] {
        let answer = server.request(
            "POST",
            check,
            &[json_type, ("authorization", header)],
            record.as_bytes(),
        );
        assert_eq!(answer.status, status, "{header}: {}", answer.text());
    }
    assert_eq!(server.get("/metrics").status, 401);
    assert_eq!(server.get("/v1/packs").status, 401);
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(server.get("/readyz").status, 200);
    // The public address starts with a token.
    let public = Server::start(&[
        "rules/",
        "--listen",
        "0.0.0.0:0",
        "--token-file",
        &token_arg,
    ]);
    assert_eq!(public.get("/healthz").status, 200);
    // examples/stream_client.py takes the token: from the file, or from
    // TRIBUNAL_TOKEN; without one it is refused.
    let url = format!(
        "http://{}/v1/packs/structured-output/stream",
        server.address
    );
    let text = "{\"kind\": \"agent.shout\", \"text\": \"Hi. I am done now.\"}";
    let client = |args: &[&str], env: Option<&str>| {
        let mut command = std::process::Command::new("python3");
        command
            .arg("examples/stream_client.py")
            .args(args)
            .env_remove("TRIBUNAL_TOKEN")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(token) = env {
            command.env("TRIBUNAL_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    for shown in [
        client(&[&url, "16", "--token-file", &token_arg], None),
        client(&[&url, "16"], Some("s3cret-token")),
    ] {
        assert!(
            shown.contains("at the end     : NEEDS_IMPROVEMENT"),
            "{shown}"
        );
    }
    assert!(client(&[&url], None).contains("401"));
}

#[test]
fn a_crashing_isolated_plugin_costs_its_request_only() {
    let dir = tempfile::tempdir().unwrap();
    let library = plugin_build::library_path("tribunal_fixture_sdk");
    let pack = one_metric_pack(
        dir.path(),
        "crashy",
        &format!(
            "plugin: {{ library: \"{}\", component: crashes, isolation: process, timeout_ms: 5000 }}",
            library.display()
        ),
        &[],
    );
    let pack_arg = pack.display().to_string();
    let plugins = plugin_build::plugin_dir().display().to_string();
    let server = Server::start(&[&pack_arg, "--allow-plugins", "--plugin-dir", &plugins]);
    for (output, status) in [
        ("ok", "PASS"),
        ("abort", "ERROR"),
        ("ok", "PASS"),
        ("segfault", "ERROR"),
        ("ok", "PASS"),
    ] {
        let response = server.check("crashy", &json!({"output": output}));
        assert_eq!(response.status, 200, "{}", response.text());
        let record = response.json();
        assert_eq!(record["status"], status, "{output}: {record}");
        if status == "ERROR" {
            assert_eq!(record["error_kind"], "plugin-crash", "{record}");
        }
    }
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn sigterm_under_load_finishes_the_requests_in_flight_and_exits_0() {
    let server = Server::start(&["rules/ksi-emission"]);
    // An eval stream in flight: its body is still coming when SIGTERM arrives.
    let mut stream = TcpStream::connect(server.address).unwrap();
    write!(
        stream,
        "POST /v1/packs/ksi-emission/eval HTTP/1.1\r\nhost: t\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    .unwrap();
    let line = "{\"output\": \"x\"}\n";
    write!(stream, "{:x}\r\n{line}\r\n", line.len()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let workers = load(server.address, 2, &stop);
    std::thread::sleep(Duration::from_millis(200));
    server.terminate();
    std::thread::sleep(Duration::from_millis(200));
    // Ready no more; no new connection is accepted.
    let refused = TcpStream::connect(server.address).map(|mut s| {
        let _ = s.write_all(b"GET /readyz HTTP/1.1\r\nhost: t\r\n\r\n");
        read_response(&mut s).ok()
    });
    assert!(
        matches!(refused, Err(_) | Ok(None)),
        "a new connection was served: {refused:?}"
    );
    // The stream in flight goes on to its end.
    for _ in 0..3 {
        write!(stream, "{:x}\r\n{line}\r\n", line.len()).unwrap();
    }
    write!(stream, "0\r\n\r\n").unwrap();
    let response = read_response(&mut stream).unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.text().lines().count(), 4, "{}", response.text());
    stop.store(true, Ordering::Relaxed);
    let answers: Vec<(u16, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(!answers.is_empty());
    assert!(answers.iter().all(|(status, _)| *status == 200));
    assert_eq!(server.stop(), Some(0));
}

/// The decisions on generated proposals (tests/fixtures/proposals.jsonl)
/// are the same from the library, the CLI (`check --proposed --json`) and
/// the server (`/decide`, which adds `decision_id`), and every call the
/// pack's rules flag is denied.
#[test]
fn decide_gives_the_same_decisions_from_the_library_the_cli_and_the_server() {
    let pack_dir = root().join("examples/packs/support-agent");
    let pack = tribunal::Pack::load(&pack_dir).unwrap();
    let server = Server::start(&["examples/packs/support-agent"]);
    let lines = fs::read_to_string(root().join("tests/fixtures/proposals.jsonl")).unwrap();
    let (mut allowed, mut denied, mut nothing) = (0, 0, 0);
    for line in lines.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let input = tribunal::Input::from_record(
            record["id"].clone().into(),
            tribunal::Json::Null,
            tribunal::Json::Null,
            tribunal::Json::Null,
            record["messages"].clone().into(),
        )
        .unwrap();
        let library = pack.decide(&input).to_value();
        let mut cli = Command::new(env!("CARGO_BIN_EXE_tribunal"))
            .args(["check"])
            .arg(&pack_dir)
            .args(["-", "--proposed", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        cli.stdin
            .take()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        let out = cli.wait_with_output().unwrap();
        let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(printed, library, "CLI, {line}");
        let answer = server.request(
            "POST",
            "/v1/packs/support-agent/decide",
            &[("content-type", "application/json")],
            line.as_bytes(),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        let mut served = answer.json();
        served.as_object_mut().unwrap().remove("decision_id");
        assert_eq!(served, library, "server, {line}");
        let decisions = library["decisions"].as_array().unwrap();
        if decisions.is_empty() {
            nothing += 1;
            assert_eq!(library["error_kind"], "input");
        }
        for decision in decisions {
            let errors = decision["issues"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["severity"] == "error");
            assert_eq!(decision["decision"] == "deny", errors, "{decision}");
            if errors {
                denied += 1;
            } else {
                allowed += 1;
            }
        }
    }
    // The generated set has every outcome.
    assert!(
        allowed > 20 && denied > 20 && nothing > 3,
        "{allowed} {denied} {nothing}"
    );
}

/// The server gives its own `OpenAPI` document (`GET /openapi.json`), the one
/// in docs/, which `serve --print-openapi` prints without serving anything.
#[test]
fn the_server_gives_its_openapi_document() {
    let doc: Value =
        serde_json::from_str(&fs::read_to_string(root().join("docs/openapi.json")).unwrap())
            .unwrap();
    let server = Server::start(&["rules/ksi-emission"]);
    let answer = server.get("/openapi.json");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.json(), doc);
    let printed = std::process::Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .args(["serve", "--print-openapi"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    let printed: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(printed, doc);
}
