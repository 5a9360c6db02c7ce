//! The container image definition (`Dockerfile`). No image is built here:
//! this machine has no container runtime that can run, and no registry to pull
//! base images from. What is tested instead is what the runtime stage holds and
//! runs: a non-root user, the packs as a read-only volume, the health check on
//! `/healthz`, and its entry point and default arguments, which are run here
//! against a real `tribunal serve` (the paths moved to a temporary folder), the
//! health check's own command included.

#[path = "support/server.rs"]
mod server_support;

use std::path::Path;
use std::process::Command;

use server_support::{Asks, Server};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One instruction: its keyword and its arguments (continuation lines joined).
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(part) = line.strip_suffix('\\') {
            current.push_str(part);
            current.push(' ');
        } else {
            current.push_str(line);
            joined.push(std::mem::take(&mut current));
        }
    }
    joined
        .into_iter()
        .map(|line| {
            let (keyword, rest) = line.split_once(' ').unwrap_or((&line, ""));
            (keyword.to_ascii_uppercase(), rest.trim().to_owned())
        })
        .collect()
}

/// The arguments of an exec-form (JSON array) instruction.
fn exec_form(arguments: &str) -> Vec<String> {
    serde_json::from_str(arguments)
        .unwrap_or_else(|e| panic!("not an exec form ({e}): {arguments}"))
}

#[test]
fn the_runtime_stage_runs_the_service_unprivileged_with_a_health_check() {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let all = instructions(&text);
    let stages: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| k == "FROM")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(stages.len(), 2, "a build stage and a runtime stage");
    let (build, runtime) = (&all[stages[0]..stages[1]], &all[stages[1]..]);
    let get = |stage: &[(String, String)], keyword: &str| -> Vec<String> {
        stage
            .iter()
            .filter(|(k, _)| k == keyword)
            .map(|(_, a)| a.clone())
            .collect()
    };
    // The build: the workspace's Rust version, the lock file as it is.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let rust_version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        all.iter()
            .any(|(k, a)| k == "ARG" && a == &format!("RUST_VERSION={rust_version}")),
        "the build's Rust is the workspace's rust-version ({rust_version})"
    );
    assert!(get(build, "RUN")
        .iter()
        .any(|r| r.contains("cargo build --release --locked --bin tribunal")));
    // The runtime: no compiler, the binary copied from the build.
    assert!(runtime[0].1.starts_with("debian:") && runtime[0].1.ends_with("AS runtime"));
    assert_eq!(
        get(runtime, "COPY"),
        ["--from=build /out/tribunal /usr/local/bin/tribunal"]
    );
    // Unprivileged: a numeric user other than root.
    let user = get(runtime, "USER");
    assert_eq!(user.len(), 1);
    let uid: u32 = user[0]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .expect("a numeric user");
    assert_ne!(uid, 0);
    assert_eq!(get(runtime, "VOLUME"), [r#"["/packs"]"#]);
    assert_eq!(get(runtime, "EXPOSE"), ["8080"]);
    // The entry point and its default arguments, run here: the service
    // starts and the health check's command passes against it.
    let entrypoint = exec_form(&get(runtime, "ENTRYPOINT")[0]);
    let command = exec_form(&get(runtime, "CMD")[0]);
    assert_eq!(&entrypoint[..2], ["tribunal", "serve"]);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let packs = root().join("rules").display().to_string();
    let token_path = token.display().to_string();
    let args: Vec<String> = entrypoint[2..]
        .iter()
        .chain(&command)
        .map(|arg| match arg.as_str() {
            "0.0.0.0:8080" => "127.0.0.1:0".to_owned(),
            "/run/secrets/tribunal-token" => token_path.clone(),
            "/packs" => packs.clone(),
            other => other.to_owned(),
        })
        .collect();
    let arguments: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start(&arguments);
    let health = get(runtime, "HEALTHCHECK");
    assert_eq!(health.len(), 1);
    let probe = exec_form(health[0].split_once("CMD ").expect("an exec-form check").1);
    let probe: Vec<String> = probe
        .iter()
        .map(|arg| arg.replace("127.0.0.1:8080", &server.address.to_string()))
        .collect();
    assert!(probe.iter().any(|a| a.ends_with("/healthz")), "{probe:?}");
    let status = Command::new(&probe[0]).args(&probe[1..]).status().unwrap();
    assert!(status.success(), "the health check failed: {probe:?}");
    // The packs routes need the token: the address is not loopback inside a container.
    assert_eq!(server.get("/v1/packs").status, 401);
    // The build context leaves out what is built or fetched.
    let ignored = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    for entry in ["target/", ".git/", "models/"] {
        assert!(
            ignored.lines().any(|l| l == entry),
            "{entry} in .dockerignore"
        );
    }
}
