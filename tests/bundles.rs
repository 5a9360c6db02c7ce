//! Packs as signed bundles: `tribunal bundle` on the command line, a bundle
//! read wherever a pack is, and `tribunal serve --bundle` pulling one from a
//! bundle server on loopback (this test's own), one replica or a fleet: a
//! good bundle, a new revision under load, and every way a bundle can be bad
//! (altered, badly signed, by an unknown signer, huge, slow, an HTTP error,
//! unreachable), each leaving the last good bundle serving.
#![allow(clippy::too_many_lines)]

#[path = "support/files.rs"]
mod files;
#[path = "support/plugin_build.rs"]
mod plugin_build;
#[path = "support/server.rs"]
mod server_support;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use server_support::{read_response, wait_for, Asks, Server};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tribunal(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tribunal")
}

/// A copy of the shipped ksi-emission pack at `version`, in `dir/ksi`.
fn ksi_pack(dir: &Path, version: &str) -> PathBuf {
    let pack = dir.join("ksi");
    if !pack.exists() {
        files::copy_dir(&root().join("rules/ksi-emission"), &pack);
    }
    let manifest = std::fs::read_to_string(pack.join("pack.yaml")).unwrap();
    let manifest = manifest
        .lines()
        .map(|line| {
            if line.starts_with("version:") {
                format!("version: {version}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(pack.join("pack.yaml"), manifest + "\n").unwrap();
    pack
}

/// Keys and signed bundles, made with the command line.
struct Workshop {
    dir: tempfile::TempDir,
}

impl Workshop {
    fn new() -> Self {
        let workshop = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for name in ["team", "stranger"] {
            let out = tribunal(&["bundle", "keygen", "-o", name], workshop.path());
            assert!(out.status.success(), "{out:?}");
        }
        workshop
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self, name: &str) -> String {
        self.path().join(name).display().to_string()
    }

    /// The bundle of ksi-emission at `version`, signed by `key` (if any).
    fn bundle(&self, version: &str, key: Option<&str>) -> Vec<u8> {
        let pack = ksi_pack(self.path(), version);
        let out_file = self.path().join(format!("ksi-{version}.tar.gz"));
        let _ = std::fs::remove_file(&out_file);
        let out = tribunal(
            &[
                "bundle",
                "build",
                &pack.display().to_string(),
                "-o",
                &out_file.display().to_string(),
            ],
            self.path(),
        );
        assert!(out.status.success(), "{out:?}");
        if let Some(key) = key {
            let out = tribunal(
                &[
                    "bundle",
                    "sign",
                    &out_file.display().to_string(),
                    "--key",
                    &self.file(&format!("{key}.key")),
                ],
                self.path(),
            );
            assert!(out.status.success(), "{out:?}");
        }
        std::fs::read(out_file).unwrap()
    }

    /// `bundle` unpacked, changed by `change` (in the unpacked folder), and
    /// packed again with the system's tar.
    fn altered(&self, bundle: &[u8], change: impl FnOnce(&Path)) -> Vec<u8> {
        let work = tempfile::tempdir_in(self.path()).unwrap();
        let archive = work.path().join("in.tar.gz");
        std::fs::write(&archive, bundle).unwrap();
        let unpacked = work.path().join("x");
        std::fs::create_dir(&unpacked).unwrap();
        let status = Command::new("tar")
            .args(["-xzf", &archive.display().to_string(), "-C"])
            .arg(&unpacked)
            .status()
            .unwrap();
        assert!(status.success());
        change(&unpacked);
        let mut names: Vec<String> = std::fs::read_dir(&unpacked)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let out = work.path().join("out.tar.gz");
        let status = Command::new("tar")
            .arg("-czf")
            .arg(&out)
            .arg("-C")
            .arg(&unpacked)
            .args(&names)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(out).unwrap()
    }
}

/// What the bundle server answers.
#[derive(Clone)]
enum Mode {
    /// The bundle, with an entity tag; 304 to that tag.
    Serve(Arc<Vec<u8>>),
    /// This status, no bundle.
    Status(u16),
    /// Headers promising `n` bytes, which then come (zeros).
    Huge(usize),
    /// The bundle, one byte every 100 ms.
    Slow(Arc<Vec<u8>>),
}

/// This test's bundle server on loopback: one request per connection.
struct BundleServer {
    address: SocketAddr,
    mode: Arc<Mutex<Mode>>,
    requests: Arc<AtomicUsize>,
    not_modified: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl BundleServer {
    fn start(mode: Mode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = Self {
            address,
            mode: Arc::new(Mutex::new(mode)),
            requests: Arc::default(),
            not_modified: Arc::default(),
            stop: Arc::default(),
        };
        let (mode, requests, not_modified, stop) = (
            Arc::clone(&server.mode),
            Arc::clone(&server.requests),
            Arc::clone(&server.not_modified),
            Arc::clone(&server.stop),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                requests.fetch_add(1, Ordering::Relaxed);
                let mode = mode.lock().unwrap().clone();
                let not_modified = Arc::clone(&not_modified);
                std::thread::spawn(move || answer(stream, &mode, &not_modified));
            }
        });
        server
    }

    fn url(&self) -> String {
        format!("http://{}/bundles/ksi.tar.gz", self.address)
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// Stops taking connections: the bundle is unreachable.
    fn shut(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.address);
    }
}

fn etag(bytes: &[u8]) -> String {
    format!(
        "\"{}-{}\"",
        bytes.len(),
        bytes.iter().map(|b| u64::from(*b)).sum::<u64>()
    )
}

fn answer(mut stream: TcpStream, mode: &Mode, not_modified: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut if_none_match = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("if-none-match") {
                if_none_match = Some(value.trim().to_owned());
            }
        }
    }
    let _ = match mode {
        Mode::Serve(bytes) if if_none_match.as_deref() == Some(etag(bytes).as_str()) => {
            not_modified.fetch_add(1, Ordering::Relaxed);
            stream.write_all(b"HTTP/1.1 304 Not Modified\r\nconnection: close\r\n\r\n")
        }
        Mode::Serve(bytes) => stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\netag: {}\r\nconnection: close\r\n\r\n",
                    bytes.len(),
                    etag(bytes)
                )
                .as_bytes(),
            )
            .and_then(|()| stream.write_all(bytes)),
        Mode::Status(status) => stream.write_all(
            format!("HTTP/1.1 {status} Oops\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        ),
        Mode::Huge(size) => {
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n");
            let zeros = vec![0u8; 64 << 10];
            let mut result = stream.write_all(head.as_bytes());
            let mut sent = 0;
            while result.is_ok() && sent < *size {
                result = stream.write_all(&zeros);
                sent += zeros.len();
            }
            result
        }
        Mode::Slow(bytes) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                bytes.len()
            );
            let mut result = stream.write_all(head.as_bytes());
            for byte in bytes.iter() {
                if result.is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
                result = stream.write_all(&[*byte]);
            }
            result
        }
    };
}

/// The bundle a replica serves now, and the last fetch error (`/healthz`).
fn health(server: &Server) -> (Option<String>, Option<String>) {
    let body = server.get("/healthz").json();
    (
        body["bundle"]["revision"].as_str().map(str::to_owned),
        body["bundle"]["error"]["message"]
            .as_str()
            .map(str::to_owned),
    )
}

fn bundle_revision(bytes: &[u8]) -> String {
    tribunal::Bundle::read(bytes, u64::MAX)
        .unwrap()
        .revision()
        .to_owned()
}

fn replica(workshop: &Workshop, url: &str, extra: &[&str]) -> Server {
    let trust = workshop.file("team.pub");
    let mut args = vec![
        "--bundle",
        url,
        "--trust",
        &trust,
        "--poll-interval-ms",
        "300",
    ];
    args.extend_from_slice(extra);
    Server::start(&args)
}

fn ksi_check(server: &Server) -> (u16, Value) {
    let response = server.check(
        "ksi-emission",
        &json!({"output": "{\"event\": \"agent:status\", \"data\": {}}"}),
    );
    let body = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    (response.status, body)
}

/// Three replicas pulling one bundle serve its revision; a new revision
/// published while one of them is under load reaches all three within one
/// poll interval (and the time to fetch and load it), and no request fails.
#[test]
fn a_fleet_serves_one_revision_and_takes_a_new_one_with_none_failing() {
    let workshop = Workshop::new();
    let first = workshop.bundle("1.0.0", Some("team"));
    let second = workshop.bundle("1.1.0", Some("team"));
    let (r1, r2) = (bundle_revision(&first), bundle_revision(&second));
    assert_ne!(r1, r2);
    let source = BundleServer::start(Mode::Serve(Arc::new(first)));
    let fleet: Vec<Server> = (0..3)
        .map(|_| replica(&workshop, &source.url(), &[]))
        .collect();
    for server in &fleet {
        wait_for("the first bundle", || {
            (health(server).0.as_deref() == Some(&r1)).then_some(())
        });
    }
    // Unchanged bundles are asked for with their ETag, and not loaded again.
    wait_for("a 304", || {
        (source.not_modified.load(Ordering::Relaxed) >= 3).then_some(())
    });
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..3)
        .map(|_| {
            let (address, stop) = (fleet[0].address, Arc::clone(&stop));
            std::thread::spawn(move || {
                let body = json!({"output": "{\"event\": \"agent:status\", \"data\": {}}"}).to_string();
                let request = format!(
                    "POST /v1/packs/ksi-emission/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let mut stream = TcpStream::connect(address).unwrap();
                let mut answers = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    stream.write_all(request.as_bytes()).unwrap();
                    let response = read_response(&mut stream).unwrap();
                    let body: Value = serde_json::from_slice(&response.body).unwrap();
                    answers.push((response.status, body["bundle"].as_str().unwrap_or("").to_owned()));
                }
                answers
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let published = Instant::now();
    source.set(Mode::Serve(Arc::new(second)));
    let mut took = Vec::new();
    for server in &fleet {
        wait_for("the new bundle", || {
            (health(server).0.as_deref() == Some(&r2)).then_some(())
        });
        took.push(published.elapsed());
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let answers: Vec<(u16, String)> = load.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert!(answers.len() > 20, "{} answers", answers.len());
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "a request failed during the swap"
    );
    let seen: std::collections::BTreeSet<&str> = answers.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(
        seen,
        [r1.as_str(), r2.as_str()].into_iter().collect(),
        "answers carry the bundle revision"
    );
    // One poll interval (300 ms), and the time to fetch and load it (a
    // debug build on a loaded machine: up to 3 s).
    let slowest = took.iter().max().unwrap();
    eprintln!("the fleet took the new bundle after {took:?}");
    assert!(
        *slowest < Duration::from_millis(3300),
        "the fleet took {took:?}"
    );
    for server in fleet {
        let metrics = server.get("/metrics").text();
        assert!(
            metrics.contains(&format!("tribunal_bundle_info{{revision=\"{r2}\"}} 1")),
            "{metrics}"
        );
        assert!(
            metrics.contains("tribunal_bundle_fetches_total{result=\"installed\"} 2"),
            "{metrics}"
        );
        assert!(
            server
                .log()
                .contains(&format!("bundle revision {r2} installed")),
            "{}",
            server.log()
        );
    }
}

/// Every kind of bad bundle is refused whole, says why in `/healthz` and
/// `/metrics`, and leaves the last good bundle serving; a good one after it
/// is taken.
#[test]
fn a_bad_bundle_of_any_kind_keeps_the_last_good_one_serving() {
    let workshop = Workshop::new();
    let good = workshop.bundle("1.0.0", Some("team"));
    let r1 = bundle_revision(&good);
    let source = BundleServer::start(Mode::Serve(Arc::new(good.clone())));
    let server = replica(
        &workshop,
        &source.url(),
        &[
            "--bundle-max-bytes",
            "2000000",
            "--bundle-timeout-ms",
            "1500",
        ],
    );
    wait_for("the first bundle", || {
        (health(&server).0.as_deref() == Some(&r1)).then_some(())
    });
    let newer = workshop.bundle("2.0.0", Some("team"));
    let tampered = workshop.altered(&newer, |dir| {
        let yaml = dir.join("ksi-emission/pack.yaml");
        let text = std::fs::read_to_string(&yaml).unwrap();
        std::fs::write(yaml, text.replace("min_score: 0.7", "min_score: 0.0")).unwrap();
    });
    let badly_signed = workshop.altered(&newer, |dir| {
        let path = dir.join(".signatures.json");
        let mut signatures: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let signature = signatures["signatures"][0]["signature"]
            .as_str()
            .unwrap()
            .to_owned();
        let flipped = if signature.starts_with('A') { "B" } else { "A" };
        signatures["signatures"][0]["signature"] = format!("{flipped}{}", &signature[1..]).into();
        std::fs::write(&path, signatures.to_string()).unwrap();
    });
    let by_a_stranger = workshop.bundle("2.0.0", Some("stranger"));
    let unsigned = workshop.bundle("2.0.0", None);
    let cases: Vec<(&str, Mode, &str)> = vec![
        (
            "a file altered",
            Mode::Serve(Arc::new(tampered)),
            "does not match its digest",
        ),
        (
            "a bad signature",
            Mode::Serve(Arc::new(badly_signed)),
            "bad signature",
        ),
        (
            "an unknown signer",
            Mode::Serve(Arc::new(by_a_stranger)),
            "not signed by a trusted key",
        ),
        (
            "no signature",
            Mode::Serve(Arc::new(unsigned)),
            "not signed",
        ),
        (
            "not a bundle",
            Mode::Serve(Arc::new(b"<html>gateway</html>".to_vec())),
            "not gzip",
        ),
        (
            "a huge body",
            Mode::Huge(50 << 20),
            "larger than 2000000 bytes",
        ),
        (
            "a slow body",
            Mode::Slow(Arc::new(newer.clone())),
            "did not arrive within 1500 ms",
        ),
        ("an HTTP error", Mode::Status(500), "HTTP 500"),
    ];
    for (what, mode, says) in cases {
        source.set(mode);
        let error = wait_for(what, || health(&server).1.filter(|e| e.contains(says)));
        assert_eq!(
            health(&server).0.as_deref(),
            Some(r1.as_str()),
            "{what}: {error}"
        );
        let (status, body) = ksi_check(&server);
        assert_eq!(status, 200, "{what}: {body}");
        assert_eq!(body["bundle"], r1.as_str(), "{what}");
        assert_eq!(body["status"], "PASS", "{what}");
        // (The next case starts from a clean slate.)
        source.set(Mode::Serve(Arc::new(good.clone())));
        wait_for("a good fetch", || health(&server).1.is_none().then_some(()));
    }
    let metrics = server.get("/metrics").text();
    assert!(
        metrics.contains("tribunal_bundle_fetches_total{result=\"failed\"} 8"),
        "{metrics}"
    );
    assert!(metrics.contains("tribunal_bundle_failing 0"), "{metrics}");
    // A good new bundle after all that is taken.
    let r2 = bundle_revision(&newer);
    source.set(Mode::Serve(Arc::new(newer)));
    wait_for("the good new bundle", || {
        (health(&server).0.as_deref() == Some(&r2)).then_some(())
    });
    // Unreachable: the last good one serves on.
    source.shut();
    let error = wait_for("unreachable", || health(&server).1);
    assert!(error.contains("cannot connect"), "{error}");
    assert_eq!(ksi_check(&server).1["bundle"], r2.as_str());
    let log = server.log();
    assert!(log.contains("still serving"), "{log}");
}

/// Until the first good bundle, the pack routes answer 503 and the service
/// is not ready; the probes answer.
#[test]
fn until_the_first_good_bundle_the_pack_routes_answer_503() {
    let workshop = Workshop::new();
    let source = BundleServer::start(Mode::Status(500));
    let server = replica(&workshop, &source.url(), &[]);
    wait_for("a failed fetch", || health(&server).1);
    let (status, body) = ksi_check(&server);
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "bundle.not-loaded");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("HTTP 500"),
        "{body}"
    );
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 503);
    assert_eq!(ready.json()["status"], "waiting for a bundle");
    let good = workshop.bundle("1.0.0", Some("team"));
    let revision = bundle_revision(&good);
    source.set(Mode::Serve(Arc::new(good)));
    wait_for("ready", || {
        (server.get("/readyz").status == 200).then_some(())
    });
    let (status, body) = ksi_check(&server);
    assert_eq!(
        (status, body["bundle"].as_str()),
        (200, Some(revision.as_str()))
    );
}

/// The command line reads a bundle wherever it reads a pack: `eval` of a
/// bundle writes the records the pack's folder gives (same revision), `test`
/// runs the bundled packs' own cases, and `--trust` refuses a bundle not
/// signed by a trusted key.
#[test]
fn the_command_line_reads_bundles_as_packs() {
    let workshop = Workshop::new();
    let dir = workshop.path();
    let rules = root().join("rules");
    let bundle = dir.join("rules.tar.gz");
    let out = tribunal(
        &[
            "bundle",
            "build",
            &rules.join("ksi-emission").display().to_string(),
            &rules.join("json-eval").display().to_string(),
            "-o",
            &bundle.display().to_string(),
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
    // Reproducible: built again, the same bytes.
    let again = dir.join("again.tar.gz");
    let out = tribunal(
        &[
            "bundle",
            "build",
            &rules.join("ksi-emission").display().to_string(),
            &rules.join("json-eval").display().to_string(),
            "-o",
            &again.display().to_string(),
        ],
        dir,
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(&again).unwrap()
    );
    let data = root()
        .join("examples/data/ksi-emission.jsonl")
        .display()
        .to_string();
    let eval = |pack: &str, extra: &[&str]| {
        let mut args = vec!["eval", pack, "--input", &data];
        args.extend_from_slice(extra);
        tribunal(&args, dir)
    };
    let from_folder = eval(&rules.join("ksi-emission").display().to_string(), &[]);
    let named = format!("{}#ksi-emission", bundle.display());
    let from_bundle = eval(&named, &[]);
    assert!(
        from_bundle.status.code() == from_folder.status.code(),
        "{from_bundle:?}"
    );
    assert_eq!(
        String::from_utf8_lossy(&from_bundle.stdout),
        String::from_utf8_lossy(&from_folder.stdout)
    );
    // Two packs: one must be named.
    let out = eval(&bundle.display().to_string(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("name one, as"),
        "{out:?}"
    );
    // Not signed: refused when a key is trusted; verify says so.
    let trust = workshop.file("team.pub");
    let out = eval(&named, &["--trust", &trust]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not signed"),
        "{out:?}"
    );
    let verify = |args: &[&str]| tribunal(&[&["bundle", "verify"], args].concat(), dir);
    let shown = bundle.display().to_string();
    assert_eq!(verify(&[&shown, "--pub", &trust]).status.code(), Some(1));
    let out = tribunal(
        &[
            "bundle",
            "sign",
            &shown,
            "--key",
            &workshop.file("team.key"),
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(verify(&[&shown, "--pub", &trust]).status.code(), Some(0));
    assert_eq!(
        verify(&[&shown, "--pub", &workshop.file("stranger.pub")])
            .status
            .code(),
        Some(1)
    );
    assert!(eval(&named, &["--trust", &trust]).status.code() != Some(2));
    // `test` runs every bundled pack's cases.
    let out = tribunal(&["test", &shown, "--trust", &trust], dir);
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("#ksi-emission") && printed.contains("#json-eval"),
        "{printed}"
    );
    // The secret key is its owner's only.
    let mode = std::fs::metadata(dir.join("team.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // keygen never writes over a key.
    let out = tribunal(&["bundle", "keygen", "-o", "team"], dir);
    assert_eq!(out.status.code(), Some(2));
}

/// A bundle with plugin libraries: they load only from a bundle signed by a
/// trusted key, with consent to plugins; then the results are the pack
/// folder's, from the command line and from a server pulling the bundle.
#[test]
fn plugin_libraries_load_only_from_a_trusted_signed_bundle_with_consent() {
    let workshop = Workshop::new();
    let dir = workshop.path();
    let pack = dir.join("invoice");
    files::copy_dir(&root().join("examples/packs/invoice-summary"), &pack);
    for stem in ["tribunal_readability", "tribunal_tolerance"] {
        let library = plugin_build::library_path(stem);
        std::fs::copy(
            &library,
            pack.join("components").join(library.file_name().unwrap()),
        )
        .unwrap();
    }
    let bundle = dir.join("invoice.tar.gz").display().to_string();
    let out = tribunal(
        &[
            "bundle",
            "build",
            &pack.display().to_string(),
            "-o",
            &bundle,
            "--allow-plugins",
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("plugin libraries"),
        "{out:?}"
    );
    let data = root()
        .join("examples/data/invoice-summary.jsonl")
        .display()
        .to_string();
    let trust = workshop.file("team.pub");
    let eval = |extra: &[&str]| {
        let mut args = vec!["eval", &bundle, "--input", &data, "--quiet"];
        args.extend_from_slice(extra);
        tribunal(&args, dir)
    };
    // Unsigned: never, whatever the flags.
    for flags in [&["--allow-plugins"][..], &[]] {
        let out = eval(flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("plugin libraries"),
            "{out:?}"
        );
    }
    let out = tribunal(
        &[
            "bundle",
            "sign",
            &bundle,
            "--key",
            &workshop.file("team.key"),
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
    // Signed and trusted, without consent: no.
    let out = eval(&["--trust", &trust]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Signed, trusted, consented: the folder's results.
    let from_bundle = eval(&["--trust", &trust, "--allow-plugins"]);
    let plugins = plugin_build::plugin_dir().display().to_string();
    let pack_arg = pack.display().to_string();
    let from_folder = tribunal(
        &[
            "eval",
            &pack_arg,
            "--input",
            &data,
            "--quiet",
            "--allow-plugins",
            "--plugin-dir",
            &plugins,
        ],
        dir,
    );
    assert_eq!(
        from_bundle.status.code(),
        from_folder.status.code(),
        "{from_bundle:?}"
    );
    assert!(!from_bundle.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&from_bundle.stdout),
        String::from_utf8_lossy(&from_folder.stdout)
    );
    // A server pulling it, with consent: judged by the plugins.
    let server = Server::start(&["--bundle", &bundle, "--trust", &trust, "--allow-plugins"]);
    wait_for("the bundle", || health(&server).0);
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(&data)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let response = server.check("invoice-summary", &record);
    assert_eq!(response.status, 200, "{}", response.text());
    let answer = response.json();
    assert!(
        answer["metrics"]["summary_readability"]["score"].is_number(),
        "{answer}"
    );
    // Without consent, the server installs nothing.
    let refusing = Server::start(&["--bundle", &bundle, "--trust", &trust]);
    let error = wait_for("a refusal", || health(&refusing).1);
    assert!(error.contains("plugin libraries"), "{error}");
}

/// A server killed with SIGKILL cannot remove the folder it unpacked its
/// bundle in: the next Tribunal to unpack a bundle in the same temporary
/// folder removes it, and keeps those of the servers still running. (Each
/// crash of a server restarted in a loop would otherwise leave a copy.)
#[test]
fn a_killed_servers_unpacked_bundle_is_removed_by_the_next_one_to_unpack() {
    let workshop = Workshop::new();
    let temp = workshop.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let bundle = workshop.path().join("ksi.tar.gz");
    std::fs::write(&bundle, workshop.bundle("1.0.0", None)).unwrap();
    let bundle = bundle.display().to_string();
    let unpacked = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&temp)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with(".tribunal-bundle."))
            .collect();
        names.sort();
        names
    };
    // (A server listens before it has loaded its bundle.)
    let serve = || {
        let server = Server::try_start_with(&["--bundle", &bundle], &[("TMPDIR", &temp)])
            .unwrap_or_else(|log| panic!("the server did not start:\n{log}"));
        wait_for("the bundle", || (ksi_check(&server).0 == 200).then_some(()));
        server
    };
    let killed = [serve(), serve()];
    let stale = unpacked();
    assert_eq!(stale.len(), 2, "{stale:?}");
    for server in killed {
        server.kill();
    }
    assert_eq!(unpacked(), stale, "SIGKILL leaves them");
    let running = serve();
    let mine = unpacked();
    assert_eq!(
        mine.len(),
        1,
        "the killed servers' folders are gone: {mine:?}"
    );
    assert!(!stale.contains(&mine[0]));
    // The command line sweeps too, and leaves the running server's folder.
    let dead = serve();
    let dead_folder: Vec<String> = unpacked()
        .into_iter()
        .filter(|n| !mine.contains(n))
        .collect();
    dead.kill();
    let data = root().join("examples/data/ksi-emission.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_tribunal"))
        .args(["eval", &bundle, "--input", &data.display().to_string()])
        .env("TMPDIR", &temp)
        .current_dir(workshop.path())
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    assert_eq!(
        unpacked(),
        mine,
        "{dead_folder:?} removed, the running one kept"
    );
    assert_eq!(ksi_check(&running).0, 200);
    // Ended as users end it, the server removes its own.
    assert_eq!(running.stop(), Some(0));
    assert_eq!(unpacked(), Vec::<String>::new());
}
