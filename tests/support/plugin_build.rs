//! Builds the workspace's plugin libraries (the examples and the test fixtures)
//! once per test or bench process, with the same cargo, target folder and
//! profile as the running binary, so `cargo test` needs no manual step. The
//! libraries are taken from where cargo reports it wrote them (a `build.target`
//! or `CARGO_BUILD_TARGET` adds a folder level), never from a guessed folder that
//! may hold stale ones.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every plugin crate of the workspace.
pub const PLUGIN_CRATES: [&str; 6] = [
    "tribunal-readability",
    "tribunal-tolerance",
    "tribunal-fixture-sdk",
    "tribunal-fixture-raw",
    "tribunal-fixture-wrong-abi",
    "tribunal-fixture-not-a-plugin",
];

/// The folder holding the built plugin libraries (e.g. `target/debug`).
pub fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(build)
}

/// The file of a plugin library, e.g. `library_path("tribunal_readability")`.
#[allow(dead_code)] // not every user of this module needs it
pub fn library_path(stem: &str) -> PathBuf {
    plugin_dir().join(format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

fn build() -> PathBuf {
    // The running binary is TARGET/PROFILE/deps/NAME-HASH.
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in TARGET/PROFILE/deps")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("TARGET").to_path_buf();
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a profile folder name");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet", "--message-format=json", "--target-dir"])
        .arg(&target_dir);
    match profile {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    for name in PLUGIN_CRATES {
        command.args(["-p", name]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "building the plugin libraries failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    library_dir(&String::from_utf8_lossy(&output.stdout))
}

/// The one folder holding every plugin library, from cargo's JSON messages.
fn library_dir(messages: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut built = 0;
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_cdylib = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if message["reason"] != "compiler-artifact" || !is_cdylib {
            continue;
        }
        built += 1;
        let suffix = std::env::consts::DLL_SUFFIX;
        for file in message["filenames"].as_array().into_iter().flatten() {
            let file = Path::new(file.as_str().expect("a file name"));
            if file.to_string_lossy().ends_with(suffix) {
                let dir = file.parent().expect("a folder").to_path_buf();
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
    }
    assert_eq!(
        built,
        PLUGIN_CRATES.len(),
        "cargo reported {built} plugin libraries, expected {}",
        PLUGIN_CRATES.len()
    );
    assert_eq!(
        dirs.len(),
        1,
        "plugin libraries in several folders: {dirs:?}"
    );
    dirs.remove(0)
}
