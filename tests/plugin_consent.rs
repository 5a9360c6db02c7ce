//! A pack never opens native code without the user's consent, through the real
//! binary. The probe is a tiny shared library, compiled here with `cc`, whose
//! initialiser (`__attribute__((constructor))`) creates a marker file the moment
//! anything opens it: no marker, nothing opened. Skipped (with a note) where
//! there is no C compiler.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

const PREFIX: &str = std::env::consts::DLL_PREFIX;
const SUFFIX: &str = std::env::consts::DLL_SUFFIX;

/// Compiles the probe to `library`: opening it creates `marker`. `None` (after
/// a note) when `cc` is not available.
fn compile_probe(library: &Path, marker: &Path) -> Option<()> {
    let source = library.with_extension("c");
    let marker = marker
        .to_str()
        .unwrap()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    fs::write(
        &source,
        format!(
            "#include <stdio.h>\n\
             __attribute__((constructor)) static void tribunal_probe(void) {{\n\
             \x20   FILE *f = fopen(\"{marker}\", \"w\");\n\
             \x20   if (f) {{ fputs(\"opened\\n\", f); fclose(f); }}\n\
             }}\n"
        ),
    )
    .unwrap();
    let compiled = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(library)
        .arg(&source)
        .output();
    match compiled {
        Ok(out) if out.status.success() => Some(()),
        Ok(out) => panic!(
            "cc could not compile the probe:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(err) => {
            eprintln!("note: skipped, no C compiler to build the probe library (cc: {err})");
            None
        }
    }
}

/// A pack in `dir` with one plugin metric `probe` whose `library:` is `library`
/// (on line 5 of components/probe.yaml, its value at column 15, after the quote), a contract
/// (for `prompt`) and a test case (for `test`).
fn write_pack(dir: &Path, library: &str) {
    write_pack_with(dir, library, "");
}

/// [`write_pack`], with `extra` lines under `plugin:` (after `component:`).
fn write_pack_with(dir: &Path, library: &str, extra: &str) {
    fs::create_dir_all(dir.join("components")).unwrap();
    fs::create_dir_all(dir.join("tests")).unwrap();
    fs::write(
        dir.join("pack.yaml"),
        "name: probe-pack\nversion: 1.0.0\ncomponents: [components/*.yaml]\n\
         contract:\n  fields:\n    answer: { type: string, required: true }\n\
         pipeline:\n  metrics: [probe]\ntests: [tests/*.yaml]\n",
    )
    .unwrap();
    fs::write(
        dir.join("components/probe.yaml"),
        format!(
            "kind: metric\nname: probe\nimplementation:\n  plugin:\n    library: \"{library}\"\n    component: probe\n{extra}"
        ),
    )
    .unwrap();
    fs::write(
        dir.join("tests/cases.yaml"),
        "cases:\n  - name: any\n    output: '{\"answer\": \"x\"}'\n    expect: { status: PASS }\n",
    )
    .unwrap();
}

/// `tribunal ARGS` with `pack` and an input for the commands that need one,
/// with the consent variable unset unless `env_consent` gives its value.
fn run(command: &str, pack: &Path, extra: &[&str], env_consent: Option<&str>) -> Output {
    let dir = pack.parent().unwrap();
    let data = dir.join("data.jsonl");
    let reply = dir.join("reply.txt");
    fs::write(
        &data,
        "{\"id\": 1, \"output\": \"{\\\"answer\\\": \\\"x\\\"}\"}\n",
    )
    .unwrap();
    fs::write(&reply, "{\"answer\": \"x\"}").unwrap();
    let mut cmd = Command::cargo_bin("tribunal").unwrap();
    cmd.env_remove("TRIBUNAL_ALLOW_PLUGINS")
        .env_remove("TRIBUNAL_PLUGIN_PATH")
        .current_dir(dir);
    if let Some(value) = env_consent {
        cmd.env("TRIBUNAL_ALLOW_PLUGINS", value);
    }
    match command {
        "explain" => cmd.args(["explain", "probe"]).arg(pack),
        "check" => cmd.arg("check").arg(pack).arg(&reply),
        "eval" => cmd.arg("eval").arg(pack).arg("--input").arg(&data),
        other => cmd.arg(other).arg(pack),
    };
    cmd.args(extra).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const SHOWING: [&str; 4] = ["lint", "list", "explain", "prompt"];
const RUNNING: [&str; 3] = ["check", "eval", "test"];

/// The folder of a test: `pack/` (its probe in `pack/components/`), `outside/`,
/// and where the marker goes.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (pack, outside) = (base.join("pack"), base.join("outside"));
    fs::create_dir_all(&outside).unwrap();
    let marker = base.join("opened.marker");
    (dir, pack, outside, marker)
}

#[test]
fn without_consent_no_command_opens_a_plugin_library() {
    let (_dir, pack, _outside, marker) = layout();
    write_pack(&pack, "probe");
    let library = pack.join(format!("components/{PREFIX}probe{SUFFIX}"));
    if compile_probe(&library, &marker).is_none() {
        return;
    }
    let note =
        "plugin component `probe` (library `probe`) not loaded: pass --allow-plugins to load it";
    // `0`, `no` or an empty value are not consent.
    for env_consent in [None, Some("0"), Some("no"), Some("")] {
        for command in SHOWING {
            let out = run(command, &pack, &[], env_consent);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{command}: {err}");
            assert!(err.contains(note), "{command}: {err}");
            assert!(
                err.contains("components/probe.yaml:5:15: "),
                "{command}: {err}"
            );
            assert!(!marker.exists(), "{command} opened the library");
        }
        for command in RUNNING {
            let out = run(command, &pack, &[], env_consent);
            let err = stderr(&out);
            let all = format!("{err}{}", String::from_utf8_lossy(&out.stdout));
            // A load error: 2 for check and eval; `test` reports a pack that
            // does not load as a failed case (1) and goes on to the next pack.
            let code = if command == "test" { 1 } else { 2 };
            assert_eq!(out.status.code(), Some(code), "{command}: {all}");
            assert!(
                all.contains(&format!("components/probe.yaml:5:15: {note}")),
                "{command}: {all}"
            );
            assert!(!marker.exists(), "{command} opened the library");
        }
    }
    // The probe does work: with consent the same pack opens it (and then
    // refuses it, as it is no tribunal plugin).
    let out = run("lint", &pack, &["--allow-plugins"], None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a tribunal plugin"),
        "{}",
        stderr(&out)
    );
    assert!(marker.exists(), "with --allow-plugins the probe is opened");
    fs::remove_file(&marker).unwrap();
    for value in ["1", "true", "yes"] {
        run("check", &pack, &[], Some(value));
        assert!(marker.exists(), "TRIBUNAL_ALLOW_PLUGINS={value} is consent");
        fs::remove_file(&marker).unwrap();
    }
}

#[test]
fn a_library_outside_the_pack_is_refused_even_with_consent() {
    let (_dir, pack, outside, marker) = layout();
    let target = outside.join(format!("{PREFIX}probe{SUFFIX}"));
    let absolute = target.to_str().unwrap().to_owned();
    for library in [absolute.as_str(), "../../outside/probe"] {
        write_pack(&pack, library);
        let refused = format!(
            "components/probe.yaml:5:15: plugin library `{library}` refused: a pack's plugin library must be inside the pack folder"
        );
        let mut messages = Vec::new();
        // Missing, a folder, then the probe itself: the same refusal each time.
        for state in ["missing", "folder", "probe"] {
            match state {
                "folder" => fs::create_dir(&target).unwrap(),
                "probe" => {
                    fs::remove_dir(&target).unwrap();
                    if compile_probe(&target, &marker).is_none() {
                        return;
                    }
                }
                _ => {}
            }
            for command in ["lint", "check", "eval"] {
                let out = run(command, &pack, &["--allow-plugins"], None);
                let err = stderr(&out);
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{library} {state} {command}: {err}"
                );
                assert!(err.contains(&refused), "{library} {state} {command}: {err}");
                assert!(!marker.exists(), "{library} {state}: {command} opened it");
                if command == "lint" {
                    messages.push(err);
                }
            }
        }
        assert!(
            messages.windows(2).all(|pair| pair[0] == pair[1]),
            "{messages:#?}"
        );
        fs::remove_file(&target).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_pack_is_refused_even_with_consent() {
    let (_dir, pack, outside, marker) = layout();
    write_pack(&pack, "probe");
    let target = outside.join(format!("{PREFIX}probe{SUFFIX}"));
    std::os::unix::fs::symlink(
        &target,
        pack.join(format!("components/{PREFIX}probe{SUFFIX}")),
    )
    .unwrap();
    let mut messages = Vec::new();
    for exists in [false, true] {
        if exists && compile_probe(&target, &marker).is_none() {
            return;
        }
        let out = run("check", &pack, &["--allow-plugins"], None);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("plugin library `probe` refused"), "{err}");
        assert!(!marker.exists(), "the link was followed out of the pack");
        messages.push(err);
    }
    assert_eq!(messages[0], messages[1]);
    // The same library is opened when the user allows its folder.
    let allowed = outside.to_str().unwrap();
    let out = run(
        "lint",
        &pack,
        &["--allow-plugins", "--allow-path", allowed],
        None,
    );
    assert!(
        stderr(&out).contains("is not a tribunal plugin"),
        "{}",
        stderr(&out)
    );
    assert!(marker.exists());
}

#[test]
fn without_consent_no_helper_process_opens_an_isolated_plugin() {
    let (_dir, pack, _outside, marker) = layout();
    write_pack_with(&pack, "probe", "    isolation: process\n");
    let library = pack.join(format!("components/{PREFIX}probe{SUFFIX}"));
    if compile_probe(&library, &marker).is_none() {
        return;
    }
    for command in RUNNING {
        let out = run(command, &pack, &[], None);
        let all = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
        assert!(all.contains("pass --allow-plugins"), "{command}: {all}");
        assert!(!marker.exists(), "{command} opened the library");
    }
}

/// Consent pinned by digest (as `tribunal serve --allow-plugins` pins the
/// libraries present at start): once sealed, a library that appeared later,
/// or whose bytes changed, is refused before anything opens it; the libraries
/// pinned, unchanged, still load.
#[test]
fn pinned_consent_refuses_a_library_that_appeared_or_changed_later() {
    let (_dir, pack, _, marker) = layout();
    let library = pack.join(format!("components/{PREFIX}probe{SUFFIX}"));
    fs::create_dir_all(pack.join("components")).unwrap();
    if compile_probe(&library, &marker).is_none() {
        return;
    }
    write_pack(&pack, &format!("{PREFIX}probe{SUFFIX}"));
    let pins = tribunal::PluginPins::new();
    let options = tribunal::LoadOptions {
        allow_plugins: true,
        plugin_pins: Some(pins.clone()),
        ..tribunal::LoadOptions::default()
    };
    // At start: consented, opened (the probe is no plugin: its load fails
    // after opening, which is what consent allows).
    let _ = tribunal::Pack::load_with(&pack, &options);
    assert!(marker.exists(), "the pinned library was not opened");
    assert_eq!(pins.len(), 1);
    pins.seal();
    // A second pack, with a library dropped in after the seal.
    let later = pack.parent().unwrap().join("later");
    let later_marker = pack.parent().unwrap().join("later.marker");
    fs::create_dir_all(later.join("components")).unwrap();
    compile_probe(
        &later.join(format!("components/{PREFIX}probe{SUFFIX}")),
        &later_marker,
    )
    .unwrap();
    write_pack(&later, &format!("{PREFIX}probe{SUFFIX}"));
    let refused = tribunal::Pack::load_with(&later, &options)
        .expect_err("a new library loads")
        .to_string();
    assert!(
        refused.contains("it appeared since the server started"),
        "{refused}"
    );
    assert!(!later_marker.exists(), "the new library was opened");
    // The pinned one, changed in place.
    fs::remove_file(&marker).unwrap();
    // (Written aside and renamed over it: the opened library's pages, still
    // mapped in this process, must not change under it.)
    let mut bytes = fs::read(&library).unwrap();
    bytes.extend_from_slice(b"\0changed");
    let staged = library.with_extension("new");
    fs::write(&staged, bytes).unwrap();
    fs::rename(&staged, &library).unwrap();
    let refused = tribunal::Pack::load_with(&pack, &options)
        .expect_err("a changed library loads")
        .to_string();
    assert!(
        refused.contains("it changed since the server started"),
        "{refused}"
    );
    assert!(!marker.exists(), "the changed library was opened");
}
