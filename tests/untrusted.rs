//! Packs and inputs are untrusted: the probes of the hostile-input review, through
//! the real binary. A pack reads only its own folder (unless `--allow-path` says
//! more), only regular files under a size cap; errors never print a file that is
//! not the pack's; `eval` never writes over its input or a previous result it has
//! not replaced yet.

#![allow(clippy::too_many_lines)] // a test reads top to bottom; the 100-line limit is for code

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::Duration;

use assert_cmd::Command;

/// Long enough for any of these loads; a hang (a FIFO, a link loop) fails the test.
const TIMEOUT: Duration = Duration::from_secs(120);

/// A secret that must never reach a log: longer than any excerpt an error may quote.
const SECRET: &str = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nSECRET-SECRET-SECRET-SECRET-SECRET-SECRET-SECRET-SECRET-SECRET\n-----END PRIVATE KEY-----\n";

fn tribunal() -> Command {
    let mut cmd = Command::cargo_bin("tribunal").expect("binary builds");
    cmd.timeout(TIMEOUT);
    cmd
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A pack that loads: one metric, no contract.
fn plain_pack(dir: &Path) {
    write(
        dir,
        "pack.yaml",
        "name: plain\nversion: 1.0.0\npipeline:\n  metrics: [json_emission]\n",
    );
}

/// Runs `args`, expecting exit 2; returns stderr.
fn fails_to_load(args: &[&str]) -> String {
    let out = tribunal().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

/// Runs `eval --pack PACK --input INPUT EXTRA...` in `dir`: the result records, and
/// stderr.
fn eval_results(
    dir: &Path,
    pack: &str,
    input: &str,
    extra: &[&str],
) -> (Vec<serde_json::Value>, String) {
    let out = tribunal()
        .current_dir(dir)
        .args(["eval", "--pack", pack, "--input", input])
        .args(extra)
        .output()
        .unwrap();
    let results = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (results, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Writes `pack/pack.yaml` under `dir` and lints it, expecting a load error: stderr.
fn lint_error(dir: &Path, pack_yaml: &str) -> String {
    write(dir, "pack/pack.yaml", pack_yaml);
    fails_to_load(&["lint", &pack_arg(dir)])
}

/// Nothing past the first 40 characters of the secret: what an error may quote of a
/// file inside the pack.
fn assert_no_secret(text: &str) {
    assert!(!text.contains("SECRET"), "a secret was printed:\n{text}");
    assert!(
        !text.contains("AAoIBAQC7VJTUt9Us8cKj"),
        "a secret was printed:\n{text}"
    );
}

/// Nothing at all of a file outside the pack.
fn assert_nothing_of(text: &str) {
    assert_no_secret(text);
    assert!(
        !text.contains("BEGIN PRIVATE"),
        "a secret was printed:\n{text}"
    );
}

// ---- 1. data loss -------------------------------------------------------------------

#[test]
fn eval_refuses_to_write_over_its_input_by_any_name() {
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    let data = dir.path().join("d.jsonl");
    let records = "{\"id\": 1, \"output\": \"{}\"}\n";
    fs::write(&data, records).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&data, dir.path().join("link.jsonl")).unwrap();
    for output in ["d.jsonl", "./d.jsonl", "link.jsonl"] {
        if !dir.path().join(output).exists() {
            continue;
        }
        let out = tribunal()
            .current_dir(dir.path())
            .args([
                "eval", "--pack", "pack", "--input", "d.jsonl", "--output", output,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{output}: {stderr}");
        assert!(stderr.contains("are the same file"), "{stderr}");
        assert!(stderr.contains("--input d.jsonl"), "{stderr}");
        assert_eq!(fs::read_to_string(&data).unwrap(), records);
    }
}

/// One rule for every file a command writes: no output is an input or another
/// output, whatever names them (a path, a link, a hard link, `/proc/self/fd`, a
/// standard stream redirected from or to the file). Exit 2, naming both
/// options, and nothing changes.
#[cfg(unix)]
#[test]
fn no_output_is_an_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    let records = "{\"id\": 1, \"output\": \"{}\"}\n";
    let result = "{\"id\": 1, \"status\": \"PASS\", \"score\": 1.0}\n";
    let reset = || {
        for (name, text) in [
            ("d.jsonl", records),
            ("r.jsonl", result),
            ("base.jsonl", result),
            ("out.jsonl", "old\n"),
            ("limit.yaml", "500\n"),
        ] {
            fs::write(dir.path().join(name), text).unwrap();
        }
    };
    reset();
    fs::hard_link(dir.path().join("d.jsonl"), dir.path().join("hard.jsonl")).unwrap();
    std::os::unix::fs::symlink("out.jsonl", dir.path().join("out-link.jsonl")).unwrap();
    let eval = ["eval", "--pack", "pack", "--input"];
    let cases: Vec<(Vec<&str>, Option<&str>, [&str; 2])> = vec![
        // (arguments, standard input from, the two options named)
        (
            [&eval[..], &["-", "--output", "d.jsonl"]].concat(),
            Some("d.jsonl"),
            ["--output d.jsonl", "--input - (standard input)"],
        ),
        (
            [&eval[..], &["d.jsonl", "--output", "hard.jsonl"]].concat(),
            None,
            ["--output hard.jsonl", "--input d.jsonl"],
        ),
        (
            [&eval[..], &["d.jsonl", "--summary-json", "d.jsonl"]].concat(),
            None,
            ["--summary-json d.jsonl", "--input d.jsonl"],
        ),
        (
            [
                &eval[..],
                &[
                    "d.jsonl",
                    "--output",
                    "out.jsonl",
                    "--summary-json",
                    "out-link.jsonl",
                ],
            ]
            .concat(),
            None,
            ["--summary-json out-link.jsonl", "--output out.jsonl"],
        ),
        (
            [
                &eval[..],
                &["d.jsonl", "--output", "out.jsonl", "--junit", "./out.jsonl"],
            ]
            .concat(),
            None,
            ["--junit ./out.jsonl", "--output out.jsonl"],
        ),
        (
            [
                &eval[..],
                &["d.jsonl", "--output", "new.jsonl", "--junit", "new.jsonl"],
            ]
            .concat(),
            None,
            ["--junit new.jsonl", "--output new.jsonl"],
        ),
        (
            [&eval[..], &["d.jsonl", "--output", "pack/pack.yaml"]].concat(),
            None,
            ["--output pack/pack.yaml", "the pack's file"],
        ),
        (
            [
                &eval[..],
                &[
                    "d.jsonl",
                    "--set",
                    "limits.timeout_ms=@limit.yaml",
                    "--output",
                    "limit.yaml",
                ],
            ]
            .concat(),
            None,
            ["--output limit.yaml", "the --set file"],
        ),
        (
            vec!["test", "pack", "--junit", "pack/pack.yaml"],
            None,
            ["--junit pack/pack.yaml", "the pack's file"],
        ),
        (
            vec!["report", "r.jsonl", "-o", "r.jsonl"],
            None,
            ["-o r.jsonl", "the results r.jsonl"],
        ),
        (
            vec![
                "report",
                "r.jsonl",
                "--baseline",
                "base.jsonl",
                "-o",
                "base.jsonl",
            ],
            None,
            ["-o base.jsonl", "--baseline base.jsonl"],
        ),
        (
            vec![
                "report",
                "r.jsonl",
                "--input",
                "d.jsonl",
                "-o",
                "/proc/self/cwd/d.jsonl",
            ],
            None,
            ["-o /proc/self/cwd/d.jsonl", "--input d.jsonl"],
        ),
    ];
    for (args, stdin, named) in cases {
        reset();
        let pack_yaml = fs::read_to_string(dir.path().join("pack/pack.yaml")).unwrap();
        // Standard input is the file itself (a shell's `< file`), not a pipe.
        let mut cmd = StdCommand::new(assert_cmd::cargo::cargo_bin("tribunal"));
        cmd.current_dir(dir.path()).args(&args);
        if let Some(file) = stdin {
            cmd.stdin(fs::File::open(dir.path().join(file)).unwrap());
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("are the same file"), "{args:?}: {stderr}");
        for option in named {
            assert!(
                stderr.contains(option),
                "{args:?} should name {option}: {stderr}"
            );
        }
        assert_eq!(
            fs::read_to_string(dir.path().join("d.jsonl")).unwrap(),
            records
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("r.jsonl")).unwrap(),
            result
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("base.jsonl")).unwrap(),
            result
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
            "old\n"
        );
        assert!(!dir.path().join("new.jsonl").exists());
        assert_eq!(
            fs::read_to_string(dir.path().join("pack/pack.yaml")).unwrap(),
            pack_yaml
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("limit.yaml")).unwrap(),
            "500\n"
        );
    }
    // Standard output redirected to the file another output names.
    reset();
    let junit = fs::File::create(dir.path().join("j.xml")).unwrap();
    let out = StdCommand::new(assert_cmd::cargo::cargo_bin("tribunal"))
        .current_dir(dir.path())
        .args([
            "eval", "--pack", "pack", "--input", "d.jsonl", "--junit", "j.xml",
        ])
        .stdout(junit)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--junit j.xml and the results (standard output)"),
        "{stderr}"
    );
}

/// `man --out-dir` writes each page in a folder of its own and renames it into
/// place: a link planted at a page's name is replaced, its target untouched.
#[cfg(unix)]
#[test]
fn man_pages_replace_links_instead_of_writing_through_them() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, "precious").unwrap();
    let pages = dir.path().join("man");
    fs::create_dir(&pages).unwrap();
    std::os::unix::fs::symlink(&victim, pages.join("tribunal.1")).unwrap();
    tribunal()
        .args(["man", "--out-dir"])
        .arg(&pages)
        .assert()
        .success();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    let page = fs::symlink_metadata(pages.join("tribunal.1")).unwrap();
    assert!(page.is_file(), "the page replaced the link");
    assert!(pages.join("tribunal-eval.1").is_file());
    let names: Vec<_> = fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "left behind: {names:?}");
}

#[test]
fn eval_replaces_its_output_only_when_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    let results = dir.path().join("results.jsonl");
    fs::write(&results, "the previous run\n").unwrap();
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("tribunal"))
        .current_dir(dir.path())
        .args([
            "eval",
            "--pack",
            "pack",
            "--input",
            "-",
            "--output",
            "results.jsonl",
        ])
        .args(["--jobs", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..2000 {
        writeln!(stdin, "{{\"id\": {i}, \"output\": \"{{}}\"}}").unwrap();
    }
    stdin.flush().unwrap();
    // Mid-run (the input is still open): the previous results are intact.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(fs::read_to_string(&results).unwrap(), "the previous run\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&results).unwrap().lines().count(), 2000);
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".partial")),
        "a temporary file was left: {names:?}"
    );
}

#[test]
fn a_run_that_cannot_start_leaves_the_previous_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    fs::write(dir.path().join("results.jsonl"), "kept\n").unwrap();
    fails_to_load(&[
        "eval",
        "--pack",
        dir.path().join("pack").to_str().unwrap(),
        "--input",
        dir.path().join("missing.jsonl").to_str().unwrap(),
        "--output",
        dir.path().join("results.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(
        fs::read_to_string(dir.path().join("results.jsonl")).unwrap(),
        "kept\n"
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[cfg(unix)]
#[test]
fn eval_writes_to_dev_null_directly() {
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    write(dir.path(), "d.jsonl", "{\"output\": \"{}\"}\n");
    tribunal()
        .current_dir(dir.path())
        .args([
            "eval",
            "--pack",
            "pack",
            "--input",
            "d.jsonl",
            "--output",
            "/dev/null",
        ])
        .assert()
        .code(0);
    assert!(!fs::metadata("/dev/null").unwrap().is_file());
}

// ---- 2. a pack reads only its own files ---------------------------------------------

/// A folder holding `secret/` (files the pack must not read) and `pack/`.
fn with_secret() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "secret/key.yaml", SECRET);
    write(dir.path(), "secret/key.json", SECRET);
    write(dir.path(), "secret/key.rhai", SECRET);
    write(
        dir.path(),
        "secret/strategies.json",
        "{\"SECRET-SECRET-SECRET-SECRET-SECRET-SECRET\": \"SECRET-SECRET-SECRET-SECRET-SECRET-SECRET\"}",
    );
    dir
}

fn pack_arg(dir: &Path) -> String {
    dir.join("pack").display().to_string()
}

#[test]
fn component_and_test_globs_outside_the_pack_are_refused() {
    let dir = with_secret();
    let secret_dir = dir.path().join("secret").display().to_string();
    for (key, pattern) in [
        ("components", "../secret/*.yaml".to_owned()),
        ("components", "../secret/key.yaml".to_owned()),
        ("components", format!("{secret_dir}/key.yaml")),
        ("components", "../**/*.yaml".to_owned()),
        ("tests", "../secret/key.yaml".to_owned()),
    ] {
        write(
            dir.path(),
            "pack/pack.yaml",
            &format!("name: p\n{key}: [\"{pattern}\"]\npipeline:\n  metrics: [json_emission]\n"),
        );
        let out = tribunal()
            .args(["lint", &pack_arg(dir.path())])
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_nothing_of(&all);
        if pattern == "../**/*.yaml" {
            // Rooted above the pack, it reaches only the pack's own files.
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{pattern}: {all}");
        assert!(all.contains("outside the pack folder"), "{pattern}: {all}");
    }
}

#[cfg(unix)]
#[test]
fn a_link_inside_the_pack_to_a_file_outside_is_refused_unless_allowed() {
    let dir = with_secret();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: p\ncomponents: [components/*.yaml]\npipeline:\n  metrics: [json_emission]\n",
    );
    fs::create_dir_all(dir.path().join("pack/components")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("secret/key.yaml"),
        dir.path().join("pack/components/key.yaml"),
    )
    .unwrap();
    let stderr = fails_to_load(&["lint", &pack_arg(dir.path())]);
    assert_nothing_of(&stderr);
    // Allowed, the file is read; it is not a manifest, and the error quotes none of it.
    let secret_dir = dir.path().join("secret").display().to_string();
    let stderr = fails_to_load(&["lint", &pack_arg(dir.path()), "--allow-path", &secret_dir]);
    assert!(stderr.contains("invalid type"), "{stderr}");
    assert_nothing_of(&stderr);
}

#[test]
fn a_non_manifest_inside_the_pack_is_quoted_only_as_a_short_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: p\ncomponents: [components/*.yaml]\npipeline:\n  metrics: [json_emission]\n",
    );
    write(dir.path(), "pack/components/key.yaml", SECRET);
    let stderr = fails_to_load(&["lint", &pack_arg(dir.path())]);
    assert!(stderr.contains("-----BEGIN PRIVATE KEY"), "{stderr}");
    assert_no_secret(&stderr);
}

#[test]
fn config_files_outside_the_pack_are_refused_and_never_printed() {
    let dir = with_secret();
    let secret_dir = dir.path().join("secret").display().to_string();
    let cases = [
        (
            "kind: postprocessor\nname: c\nimplementation: { builtin: json_schema }\nconfig: { schema: ../../secret/key.json }\n",
            "postprocessors",
        ),
        (
            "kind: metric\nname: c\nimplementation: { builtin: json_compare }\nconfig: { field_strategies: ../../secret/strategies.json }\n",
            "metrics",
        ),
        (
            "kind: metric\nname: c\nimplementation: { script: ../../secret/key.rhai }\n",
            "metrics",
        ),
    ];
    for (manifest, section) in cases {
        write(
            dir.path(),
            "pack/pack.yaml",
            &format!("name: p\ncomponents: [components/*.yaml]\npipeline:\n  {section}: [c]\n"),
        );
        write(dir.path(), "pack/components/c.yaml", manifest);
        let stderr = fails_to_load(&["lint", &pack_arg(dir.path())]);
        assert!(stderr.contains("outside the pack folder"), "{stderr}");
        assert!(stderr.contains("--allow-path"), "{stderr}");
        assert_nothing_of(&stderr);
        // Allowed, each is read and fails as what it is, still without printing it.
        let stderr = fails_to_load(&["lint", &pack_arg(dir.path()), "--allow-path", &secret_dir]);
        assert!(!stderr.contains("outside the pack folder"), "{stderr}");
        assert_nothing_of(&stderr);
    }
}

#[test]
fn files_read_from_an_allowed_path_are_part_of_the_revision() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: p\ncomponents: [components/*.yaml]\npipeline:\n  metrics: [m]\n",
    );
    write(
        dir.path(),
        "pack/components/m.yaml",
        "kind: metric\nname: m\nimplementation: { script: ../../shared/m.rhai }\n",
    );
    let shared = dir.path().join("shared");
    let revision = |script: &str| {
        write(&shared, "m.rhai", script);
        let out = tribunal()
            .args(["list", &pack_arg(dir.path())])
            .args(["--allow-path", shared.to_str().unwrap()])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout.lines().next().unwrap().to_owned()
    };
    let first = revision("fn evaluate(ctx) { 1.0 }\n");
    let second = revision("fn evaluate(ctx) { 0.5 }\n");
    assert!(first.contains("revision"), "{first}");
    assert_ne!(
        first, second,
        "an outside script changed without changing the revision"
    );
}

// ---- 3. the revision walk ------------------------------------------------------------

#[cfg(unix)]
#[test]
fn links_loops_devices_and_fifos_in_a_pack_folder_cost_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    plain_pack(&pack);
    fs::create_dir_all(pack.join("a/b")).unwrap();
    std::os::unix::fs::symlink("/", pack.join("root")).unwrap();
    std::os::unix::fs::symlink("..", pack.join("a/up")).unwrap();
    std::os::unix::fs::symlink("../..", pack.join("a/b/up")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", pack.join("zero")).unwrap();
    let fifo = StdCommand::new("mkfifo")
        .arg(pack.join("fifo"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let plain = tempfile::tempdir().unwrap();
    plain_pack(plain.path());
    let revision_of = |path: &Path| {
        let out = tribunal()
            .args(["list", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        stdout.lines().next().unwrap().to_owned()
    };
    // Only regular files count: the links and the FIFO change nothing.
    assert_eq!(revision_of(&pack), revision_of(plain.path()));
    tribunal()
        .args(["lint", pack.to_str().unwrap()])
        .assert()
        .code(0);
}

/// A 4 GiB sparse file left in a pack folder (which no pack may read: pack files
/// are capped at 8 MiB) counts in the revision by its name, length and ends, not
/// by reading 4 GiB (17 s of `lint` before): a change at either end or of its
/// length still changes the revision.
#[test]
fn a_big_unread_file_in_a_pack_folder_is_not_read_whole() {
    use std::io::{Seek as _, SeekFrom, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    plain_pack(&pack);
    let big = pack.join("data.bin");
    let file = fs::File::create(&big).unwrap();
    file.set_len(4 << 30).unwrap();
    drop(file);
    let revision = || {
        let started = std::time::Instant::now();
        let out = tribunal()
            .args(["list", pack.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let first = revision();
    let mut file = fs::OpenOptions::new().write(true).open(&big).unwrap();
    file.seek(SeekFrom::End(-3)).unwrap();
    file.write_all(b"end").unwrap();
    drop(file);
    let second = revision();
    assert_ne!(first, second, "a change at the end counts");
    fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len((4 << 30) + 1)
        .unwrap();
    assert_ne!(second, revision(), "a change of length counts");
}

// ---- 4. bounded reads ----------------------------------------------------------------

#[cfg(unix)]
#[test]
fn devices_and_fifos_named_as_files_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    plain_pack(&pack);
    let pack_arg = pack.display().to_string();
    let stderr = fails_to_load(&[
        "check",
        "--pack",
        &pack_arg,
        "--set",
        "json_emission.events=@/dev/zero",
    ]);
    assert!(stderr.contains("a device, not a regular file"), "{stderr}");

    write(dir.path(), "out.txt", "{}");
    let out_file = dir.path().join("out.txt").display().to_string();
    let stderr = fails_to_load(&[
        "check",
        "--pack",
        &pack_arg,
        &out_file,
        "--expected",
        "/dev/zero",
    ]);
    assert!(stderr.contains("a device, not a regular file"), "{stderr}");

    let fifo = dir.path().join("fifo");
    assert!(StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo_arg = fifo.display().to_string();
    let stderr = fails_to_load(&[
        "check",
        "--pack",
        &pack_arg,
        &out_file,
        "--expected",
        &fifo_arg,
    ]);
    assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");

    // In the pack: a schema and a script that are a FIFO, and a link to /dev/zero.
    let fifo_in_pack = pack.join("components/schema.json");
    fs::create_dir_all(pack.join("components")).unwrap();
    assert!(StdCommand::new("mkfifo")
        .arg(&fifo_in_pack)
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink("/dev/zero", pack.join("components/zero.rhai")).unwrap();
    write(
        &pack,
        "pack.yaml",
        "name: p\ncomponents: [components/*.yaml]\npipeline:\n  postprocessors: [s]\n  metrics: [z]\n",
    );
    write(
        &pack,
        "components/s.yaml",
        "kind: postprocessor\nname: s\nimplementation: { builtin: json_schema }\nconfig: { schema: schema.json }\n",
    );
    write(
        &pack,
        "components/z.yaml",
        "kind: metric\nname: z\nimplementation: { script: zero.rhai }\n",
    );
    let stderr = fails_to_load(&["lint", &pack_arg]);
    assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");
    assert!(stderr.contains("outside the pack folder"), "{stderr}");
    let stderr = fails_to_load(&["lint", &pack_arg, "--allow-path", "/dev"]);
    assert!(stderr.contains("a device, not a regular file"), "{stderr}");
}

#[test]
fn a_pack_file_above_the_size_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    write(
        &pack,
        "pack.yaml",
        "name: p\ncomponents: [components/*.yaml]\npipeline:\n  metrics: [m]\n",
    );
    write(
        &pack,
        "components/m.yaml",
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    );
    let big = format!(
        "// {}\nfn evaluate(ctx) {{ 1.0 }}\n",
        "x".repeat(9 * 1024 * 1024)
    );
    write(&pack, "components/m.rhai", &big);
    let stderr = fails_to_load(&["lint", pack.to_str().unwrap()]);
    assert!(
        stderr.contains("above the limit of 8388608 bytes"),
        "{stderr}"
    );
}

// ---- 5. YAML that expands without bound, duplicate keys ------------------------------

#[test]
fn a_yaml_alias_bomb_is_refused_at_its_position() {
    // 3,000 aliases of a 3,000-item list: a 15 KB file standing for 9 million nodes.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("name: bomb\nversion: 1.0.0\nlist: &l [");
    text.push_str(&vec!["1"; 3000].join(","));
    text.push_str("]\nmore: [");
    text.push_str(&vec!["*l"; 3000].join(","));
    text.push_str("]\npipeline:\n  metrics: [json_emission]\n");
    let stderr = lint_error(dir.path(), &text);
    assert!(stderr.contains("pack.yaml:4:"), "{stderr}");
    assert!(
        stderr.contains("expands to more than 1000000 nodes"),
        "{stderr}"
    );
}

#[test]
fn a_huge_yaml_value_is_refused_before_it_is_loaded() {
    // 1.2 million small integers (5 MB): a `--set` value, capped like a pack file.
    let dir = tempfile::tempdir().unwrap();
    plain_pack(&dir.path().join("pack"));
    write(dir.path(), "big.yaml", &"- 1\n".repeat(1_200_000));
    let set = format!(
        "json_emission.threshold=@{}",
        dir.path().join("big.yaml").display()
    );
    let stderr = fails_to_load(&["prompt", "--pack", &pack_arg(dir.path()), "--set", &set]);
    assert!(
        stderr.contains("expands to more than 1000000 nodes"),
        "{stderr}"
    );
    // The list is node 1: its 1,000,000th item is one too many.
    assert!(stderr.contains("big.yaml:1000000:3:"), "{stderr}");
}

#[test]
fn a_duplicate_key_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = lint_error(
        dir.path(),
        "name: dup\nversion: 1.0.0\ncontract:\n  fields:\n    a: {type: string}\n    b: {type: string}\n    a: {type: number}\npipeline:\n  metrics: [json_emission]\n",
    );
    assert!(
        stderr.contains("pack.yaml:7:5: duplicate key `a` (first written at line 5)"),
        "{stderr}"
    );
    // A duplicate struct field too, at its own line rather than 1:1.
    let stderr = lint_error(
        dir.path(),
        "name: dup\nversion: 1.0.0\npipeline:\n  metrics: [json_emission]\nname: again\n",
    );
    assert!(
        stderr.contains("pack.yaml:5:1: duplicate key `name`"),
        "{stderr}"
    );
}

// ---- 11. config values that are not what they seem -----------------------------------

#[test]
fn a_list_for_a_struct_and_non_finite_numbers_are_refused() {
    let pack = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/json-eval");
    let stderr = fails_to_load(&[
        "prompt",
        "--pack",
        pack,
        "--set",
        "json_compare.weights=[1,2]",
    ]);
    assert!(stderr.contains("expected a map of named keys"), "{stderr}");
    for value in [".nan", ".inf", "-.inf"] {
        let set = format!("json_compare.fuzzy_threshold={value}");
        let stderr = fails_to_load(&["prompt", "--pack", pack, "--set", &set]);
        assert!(
            stderr.contains(&format!("`{value}` is not a number JSON can hold")),
            "{stderr}"
        );
    }
    // In a pack file too, at its position.
    let dir = tempfile::tempdir().unwrap();
    let stderr = lint_error(dir.path(), "name: nan\nversion: 1.0.0\npipeline:\n  metrics:\n    - use: json_compare\n      with: {fuzzy_threshold: .nan}\n");
    assert!(
        stderr.contains("pack.yaml:6:31: `.nan` is not a number JSON can hold"),
        "{stderr}"
    );
}

// ---- 10. terminal control characters in human-readable output ------------------------

#[test]
fn control_characters_are_escaped_in_human_readable_output() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: \"evil\\e[2Jpack\"\nversion: 1.0.0\ndescription: \"a \\e]0;title\\a b\"\ncontract:\n  fields:\n    a: {type: string}\n  additional_fields: false\npipeline:\n  metrics: [json_emission]\n",
    );
    write(
        dir.path(),
        "out.txt",
        "{\"a\": \"x\", \"\\u001b]0;pwned\\u0007\": 1, \"\\u001b[2J\\u009b2J\": 2}",
    );
    let pack = pack_arg(dir.path());
    let out_file = dir.path().join("out.txt").display().to_string();
    let check = tribunal()
        .args(["check", "--pack", &pack, &out_file])
        .output()
        .unwrap();
    let check = String::from_utf8(check.stdout).unwrap();
    assert!(
        check.contains("unexpected field `\\u{1b}]0;pwned\\u{7}`"),
        "{check}"
    );
    assert!(check.contains("/\\u{1b}[2J\\u{9b}2J"), "{check}");
    assert!(check.contains("(evil\\u{1b}[2Jpack@1.0.0)"), "{check}");
    for args in [
        vec!["lint", pack.as_str()],
        vec!["list", pack.as_str()],
        vec!["check", "--pack", &pack, "--feedback", &out_file],
    ] {
        let out = tribunal().args(&args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "{args:?} printed a control character: {text:?}"
        );
        assert!(
            text.contains("\\u{1b}") || text.contains("\\x1b"),
            "{args:?}: {text}"
        );
    }
    // JSON output stays JSON.
    let json = tribunal()
        .args(["check", "--pack", &pack, "--json", &out_file])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["json"]["\u{1b}]0;pwned\u{7}"], 1);
}

// ---- 9. unusual but valid input -------------------------------------------------------

#[test]
fn a_byte_order_mark_lone_surrogates_and_huge_numbers_are_handled() {
    let dir = tempfile::tempdir().unwrap();
    let pack = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/structured-output");
    write(
        dir.path(),
        "in.jsonl",
        concat!(
            "\u{feff}{\"id\": 1, \"output\": \"{\\\"a\\\": 1}\"}\n",
            "{\"id\": 2, \"output\": \"x\\ud800y\"}\n",
            "{\"id\": 3, \"output\": \"{\\\"a\\\": 1e400}\"}\n",
        ),
    );
    let (results, _) = eval_results(dir.path(), pack, "in.jsonl", &[]);
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["extraction"]["tier"], "strict", "{}", results[0]);
    assert_ne!(results[1]["status"], "ERROR", "{}", results[1]);
    assert_eq!(results[1]["issues"][0]["rule"], "input", "{}", results[1]);
    assert!(results[1]["json"]["text"]
        .as_str()
        .is_some_and(|t| t.contains('\u{fffd}')));
    // A number beyond a 64-bit float is read, and echoed, as written (with the
    // exponent's sign spelled out).
    assert_eq!(results[2]["extraction"]["tier"], "strict", "{}", results[2]);
    assert_eq!(results[2]["json"]["a"].to_string(), "1e+400");

    // `check` reads a file that starts with a byte-order mark as its text.
    write(
        dir.path(),
        "out.txt",
        "\u{feff}{\"kind\": \"world.observed\", \"text\": \"x\"}",
    );
    let report = tribunal()
        .current_dir(dir.path())
        .args(["check", "--pack", pack, "--json", "out.txt"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(report["extraction"]["tier"], "strict", "{report}");
}

// ---- 7. built-ins: many tokens, and the same deadline as scripts -------------------------

#[test]
fn many_placeholder_tokens_are_matched_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let tokens: Vec<String> = (0..20_000).map(|i| format!("\"TOKEN-{i:05}\"")).collect();
    write(
        dir.path(),
        "pack/pack.yaml",
        &format!(
            "name: tokens\nversion: 1.0.0\npipeline:\n  postprocessors:\n    - use: no_placeholders\n      with: {{tokens: [{}]}}\n  metrics: [json_emission]\n",
            tokens.join(", ")
        ),
    );
    tribunal()
        .args(["lint", &pack_arg(dir.path())])
        .assert()
        .code(0);
    // Two records of 1 MB each, one holding the last token.
    let text = "lorem ipsum ".repeat(90_000);
    let records = format!(
        "{}\n{}\n",
        serde_json::json!({"id": 1, "output": serde_json::json!({"a": text}).to_string()}),
        serde_json::json!({"id": 2, "output": serde_json::json!({"a": format!("{text}TOKEN-19999")}).to_string()}),
    );
    write(dir.path(), "in.jsonl", &records);
    let (results, _) = eval_results(dir.path(), "pack", "in.jsonl", &[]);
    assert_eq!(results[0]["status"], "PASS", "{}", results[0]["error"]);
    assert_ne!(results[1]["status"], "PASS", "{}", results[1]["error"]);
    assert!(results[1]["issues"][0]["message"]
        .as_str()
        .unwrap()
        .contains("TOKEN-19999"));
}

#[test]
fn a_built_in_past_the_time_limit_fails_its_record_only() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: slow\nversion: 1.0.0\npipeline:\n  metrics:\n    - use: json_compare\n      with: {field_strategies: {a: fuzzy}}\n",
    );
    // Long enough that comparing them takes far past 20 ms; the short record
    // stays far within, whatever the clock's resolution (the coarse clock
    // moves in timer ticks of up to 10 ms) or a preemption.
    let long_a = "ab".repeat(25_000);
    let long_b = "ba".repeat(25_000);
    let records = format!(
        "{}\n{}\n",
        serde_json::json!({"id": 1, "output": serde_json::json!({"a": long_a}).to_string(), "expected": {"a": long_b}}),
        serde_json::json!({"id": 2, "output": "{\"a\": \"x\"}", "expected": {"a": "x"}}),
    );
    write(dir.path(), "in.jsonl", &records);
    let (results, _) = eval_results(
        dir.path(),
        "pack",
        "in.jsonl",
        &["--set", "limits.timeout_ms=20"],
    );
    assert_eq!(results[0]["status"], "ERROR", "{}", results[0]);
    assert!(results[0]["error"]
        .as_str()
        .unwrap()
        .contains("exceeded the 20 ms time limit (limits.timeout_ms)"));
    assert_eq!(results[1]["status"], "PASS", "{}", results[1]);
}

// ---- 6. scripts: helpers within the limits, capped output, host ceilings ----------------

/// A pack with one metric script `m` (the text of `m.rhai`); `extra` is appended to
/// pack.yaml.
fn script_pack(dir: &Path, script: &str, extra: &str) -> String {
    write(dir, "pack/m.rhai", script);
    write(
        dir,
        "pack/m.yaml",
        "kind: metric\nname: m\nimplementation: { script: m.rhai }\n",
    );
    write(
        dir,
        "pack/pack.yaml",
        &format!(
            "name: s\nversion: 1.0.0\ncomponents: [m.yaml]\npipeline:\n  metrics: [m]\n{extra}"
        ),
    );
    pack_arg(dir)
}

/// Evaluates one record per output with the pack; the results and stderr.
fn eval_outputs(pack: &str, outputs: &[&str], extra: &[&str]) -> (Vec<serde_json::Value>, String) {
    let input: String = outputs
        .iter()
        .map(|o| serde_json::json!({ "output": o }).to_string() + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "in.jsonl", &input);
    eval_results(dir.path(), pack, "in.jsonl", extra)
}

#[test]
fn helpers_that_build_large_results_stop_at_the_limits() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        r#"fn evaluate(ctx) {
               let s = "x";
               while s.len() < 16000000 { s += s; }
               if ctx.output == "split" { s.split(""); }
               if ctx.output == "chars" { s.to_chars(); }
               if ctx.output == "find" { regex_find_all(s, "."); }
               1
           }"#,
        "",
    );
    let (results, _) = eval_outputs(&pack, &["split", "chars", "find", "fine"], &[]);
    for (result, helper) in results.iter().zip(["split", "to_chars", "regex_find_all"]) {
        assert_eq!(result["status"], "ERROR", "{result}");
        let error = result["error"].as_str().unwrap();
        assert!(
            error.contains("would have more than 100000 items (limits.max_array_size)"),
            "{helper}: {error}"
        );
    }
    assert_eq!(results[3]["status"], "PASS", "{}", results[3]);
}

#[test]
fn script_output_is_capped_per_call_and_echoed_inputs_are_short() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        r#"fn evaluate(ctx) {
               if ctx.output == "print" {
                   let s = "\x1b[2J"; while s.len() < 1000000 { s += s; }
                   for i in 0..50 { print(s); }
                   return 1;
               }
               let p = "("; while p.len() < 1000000 { p += p; }
               regex_test("x", p)
           }"#,
        "",
    );
    let (results, stderr) = eval_outputs(&pack, &["print", "print", "pattern"], &[]);
    assert_eq!(results[0]["status"], "PASS", "{}", results[0]);
    // Two calls, 64 KiB each at most (escaped, so a little more), and no raw escape.
    assert!(
        stderr.len() < 2 * 80 * 1024,
        "{} bytes printed",
        stderr.len()
    );
    assert!(stderr.contains("dropped"), "{}", &stderr[..200]);
    assert!(!stderr.contains('\u{1b}'));
    let error = results[2]["error"].as_str().unwrap();
    assert!(
        error.contains("regex_test(): the pattern `(((((("),
        "{error}"
    );
    assert!(error.contains("patterns may be at most 65536"), "{error}");
    assert!(error.len() < 600, "{} bytes of error", error.len());
}

#[test]
fn a_pack_may_tighten_its_limits_but_only_the_user_can_lift_them() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        "fn evaluate(ctx) { 1 }",
        "limits:\n  timeout_ms: 250\n  max_operations: 0\n",
    );
    let stderr = fails_to_load(&["lint", &pack]);
    assert!(
        stderr.contains(
            "pack.yaml:8:3: limits.max_operations: 0 (unlimited) is above the ceiling of 1000000"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--set limits.max_operations=0"), "{stderr}");
    // The user's word lifts it.
    let (results, stderr) = eval_outputs(&pack, &["x"], &["--set", "limits.max_operations=0"]);
    assert_eq!(results[0]["status"], "PASS", "{stderr}");
    // Tightening needs no consent.
    script_pack(
        dir.path(),
        "fn evaluate(ctx) { 1 }",
        "limits:\n  timeout_ms: 250\n",
    );
    tribunal().args(["lint", &pack]).assert().code(0);
}

#[test]
fn a_helper_result_past_the_deadline_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let pack = script_pack(
        dir.path(),
        r#"fn evaluate(ctx) {
               let a = ""; let b = "";
               for i in 0..3000 { a += `w${i} `; b += `v${i} `; }
               token_set_ratio(a, b)
           }"#,
        "",
    );
    let (results, _) = eval_outputs(&pack, &["x"], &["--set", "limits.timeout_ms=1"]);
    assert_eq!(results[0]["status"], "ERROR", "{}", results[0]);
    assert!(results[0]["error"]
        .as_str()
        .unwrap()
        .contains("time limit (limits.timeout_ms)"));
}

// ---- 8. exact numbers ---------------------------------------------------------------------

#[test]
fn big_integers_compare_exactly_and_every_number_is_echoed_as_written() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pack/pack.yaml",
        "name: exact\nversion: 1.0.0\npipeline:\n  metrics:\n    - use: json_compare\n      with: {field_strategies: {n: exact, d: exact}}\n",
    );
    let big = "123456789012345678901234567890";
    let record = |output: &str| {
        format!(
            "{{\"output\": {}, \"expected\": {{\"n\": {big}, \"d\": 0.1}}}}\n",
            serde_json::Value::String(output.to_owned())
        )
    };
    let data = [
        record(&format!("{{\"n\": {big}, \"d\": 0.10, \"z\": -0}}")),
        record("{\"n\": 123456789012345678901234567891, \"d\": 0.1}"),
        record("{\"n\": 1.2345678901234568e29, \"d\": 0.1}"),
    ]
    .concat();
    write(dir.path(), "in.jsonl", &data);
    let out = tribunal()
        .current_dir(dir.path())
        .args(["eval", "--pack", "pack", "--input", "in.jsonl"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    // Echoed as written: no rounding, `-0` stays `-0`, `0.10` stays `0.10`.
    assert!(
        lines[0].contains(&format!("\"json\":{{\"n\":{big},\"d\":0.10,\"z\":-0}}")),
        "{}",
        lines[0]
    );
    let field = |line: &str| -> serde_json::Value {
        let result: serde_json::Value = serde_json::from_str(line).unwrap();
        result["metrics"]["json_compare"]["details"]["fields"]["n"]["matched"].clone()
    };
    assert_eq!(field(lines[0]), true, "{}", lines[0]);
    assert_eq!(
        field(lines[1]),
        false,
        "the last digit differs: {}",
        lines[1]
    );
    assert_eq!(
        field(lines[2]),
        false,
        "a rounded float is not the integer: {}",
        lines[2]
    );
}
