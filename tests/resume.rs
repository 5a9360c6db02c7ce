//! Long runs that stop halfway (issue: reliability): `eval` stopped by a signal
//! keeps what it wrote, `eval --resume` finishes the file exactly as an
//! uninterrupted run writes it (checking the kept results against the pack and
//! the input), and an output that cannot be written stops the run cleanly.
//! Also the input forms a data set may come in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("tribunal")
}

/// The example tool-call pack: contract variants, two Rhai scripts, a metric.
fn pack() -> String {
    root()
        .join("examples/packs/tool-calls")
        .display()
        .to_string()
}

/// `n` records, every third one prose (no JSON), ids `r0`, `r1`, ...
fn data_set(dir: &Path, n: usize) -> PathBuf {
    let call = serde_json::json!({"tool": "cancel_booking", "args": {"booking_id": "QX7P2K"}, "reason": "Cancel it."}).to_string();
    let mut text = String::new();
    for i in 0..n {
        let output = if i % 3 == 0 { "no call here" } else { &call };
        let record = serde_json::json!({"id": format!("r{i}"), "output": output});
        text.push_str(&record.to_string());
        text.push('\n');
    }
    let path = dir.join("data.jsonl");
    fs::write(&path, text).unwrap();
    path
}

/// Runs `tribunal eval --pack PACK --input INPUT --output OUTPUT EXTRA...` in `dir`.
fn eval(dir: &Path, input: &Path, output: &str, extra: &[&str]) -> Output {
    StdCommand::new(binary())
        .current_dir(dir)
        .args(["eval", "--pack", &pack(), "--input"])
        .arg(input)
        .args(["--output", output])
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first `n` lines of `text`, each with its newline.
fn first_lines(text: &str, n: usize) -> String {
    text.split_inclusive('\n').take(n).collect()
}

/// Leaves `results` as the partial results of an unfinished run writing
/// `output` from `input` (one record per line, no blank lines), with the
/// checks such a run writes beside them: the format `--resume` reads (a
/// header, then per result line the XXH3 of its input line seeded with the
/// line number, and the XXH3 of the result line, in hex).
fn plant_partial(dir: &Path, output: &str, results: &str, input: &Path) {
    use std::fmt::Write as _;
    use xxhash_rust::xxh3::xxh3_64_with_seed;
    let inputs = fs::read_to_string(input).unwrap();
    let mut checks = String::from("tribunal resume checks 1\n");
    for (i, (result, record)) in results.lines().zip(inputs.lines()).enumerate() {
        let line = i as u64 + 1;
        let _ = writeln!(
            checks,
            "{:016x} {:016x}",
            xxh3_64_with_seed(record.as_bytes(), line),
            xxh3_64_with_seed(result.as_bytes(), 0)
        );
    }
    fs::write(dir.join(format!(".{output}.partial")), results).unwrap();
    fs::write(dir.join(format!(".{output}.partial.check")), checks).unwrap();
}

/// The summary JSON of a run, without its timing.
fn summary(dir: &Path, name: &str) -> Value {
    let mut value: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(name)).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("seconds");
    value
}

#[test]
fn resume_finishes_a_torn_partial_file_as_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 1500);
    let full = eval(
        dir.path(),
        &input,
        "full.jsonl",
        &["--summary-json", "full.json", "--junit", "full.xml"],
    );
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    let whole = fs::read(dir.path().join("full.jsonl")).unwrap();
    // A run killed mid-write: its partial results end inside a record.
    let cut = whole.len() / 3 + 17;
    assert_ne!(whole[cut - 1], b'\n');
    plant_partial(
        dir.path(),
        "out.jsonl",
        std::str::from_utf8(&whole[..cut]).unwrap(),
        &input,
    );
    let kept = whole[..cut].iter().filter(|b| **b == b'\n').count();
    let out = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &[
            "--resume",
            "--summary-json",
            "out.json",
            "--junit",
            "out.xml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "resumed: {kept} records kept from .out.jsonl.partial (a torn last line of "
        )) && stderr(&out).contains(&format!("{} evaluated now", 1500 - kept)),
        "{}",
        stderr(&out)
    );
    assert!(
        fs::read(dir.path().join("out.jsonl")).unwrap() == whole,
        "the resumed file differs"
    );
    assert!(!dir.path().join(".out.jsonl.partial").exists());
    assert!(!dir.path().join(".out.jsonl.partial.check").exists());
    // The summary and the JUnit cases count the kept records too.
    assert_eq!(
        summary(dir.path(), "out.json"),
        summary(dir.path(), "full.json")
    );
    let cases = |name: &str| {
        let text = fs::read_to_string(dir.path().join(name)).unwrap();
        text.matches("<testcase ").count()
    };
    assert_eq!(cases("out.xml"), 1500);
    assert_eq!(cases("full.xml"), 1500);
    // Without partial results there is nothing to keep: --resume evaluates
    // every record (a finished output is never taken as kept results: it may
    // be of another data set with the same ids).
    let again = eval(dir.path(), &input, "out.jsonl", &["--resume"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("resumed: no results to keep (no unfinished run left any in .out.jsonl.partial); every record evaluated now"),
        "{}",
        stderr(&again)
    );
    assert!(fs::read(dir.path().join("out.jsonl")).unwrap() == whole);
    // Kept results count in the summary only as far as their fields go: a
    // summary with fewer fields is refused.
    plant_partial(
        dir.path(),
        "out.jsonl",
        std::str::from_utf8(&whole[..cut]).unwrap(),
        &input,
    );
    let narrow = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &[
            "--resume",
            "--summary",
            "--fields",
            "id,line,status,revision",
        ],
    );
    assert_eq!(narrow.status.code(), Some(2), "{}", stderr(&narrow));
    assert!(
        stderr(&narrow).contains("--resume with --summary, --summary-json, a gate or --junit needs the kept results' score, metrics, issues, extraction (not in --fields)"),
        "{}",
        stderr(&narrow)
    );
}

#[test]
fn resume_refuses_results_of_another_pack_revision_or_input_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 300);
    let first = eval(dir.path(), &input, "full.jsonl", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let whole = fs::read_to_string(dir.path().join("full.jsonl")).unwrap();
    let partial = first_lines(&whole, 40);
    let partial_path = dir.path().join(".out.jsonl.partial");

    // Another revision: the same pack with an override.
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    let out = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &["--resume", "--set", "tool_args.today=2027-01-01"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("error: cannot resume: result record 1: was written by pack revision ")
            && stderr(&out).contains("evaluate the data set again without --resume"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(&partial_path).unwrap(),
        partial,
        "the kept results changed"
    );
    assert!(!dir.path().join("out.jsonl").exists());

    // Another input: the 12th record's id differs.
    let other = dir.path().join("other.jsonl");
    let changed: String = fs::read_to_string(&input)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 11 { l.replace("\"r11\"", "\"x11\"") } else { l.to_owned() } + "\n")
        .collect();
    fs::write(&other, changed).unwrap();
    let out = eval(dir.path(), &other, "out.jsonl", &["--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot resume: result record 12: has id \"r11\", but the input record at its position (line 12) has id \"x11\""),
        "{}",
        stderr(&out)
    );
    // A shorter input than the results.
    let short = dir.path().join("short.jsonl");
    let head = first_lines(&fs::read_to_string(&input).unwrap(), 10);
    fs::write(&short, head).unwrap();
    let out = eval(dir.path(), &short, "out.jsonl", &["--resume"]);
    assert!(
        stderr(&out).contains("result record 11: the input has no record here"),
        "{}",
        stderr(&out)
    );
    // Other --fields than the results were written with.
    let out = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &["--resume", "--fields", "id,line,status,revision"],
    );
    assert!(
        stderr(&out).contains("result record 1: has the fields id,line,status,passed,"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read_to_string(&partial_path).unwrap(), partial);
    // The right input resumes.
    let out = eval(dir.path(), &input, "out.jsonl", &["--resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        whole
    );
}

/// Each kept record is verified against its check: a record whose input line
/// changed (same id, same line) or that was edited after the run wrote it is
/// refused, and so are kept results without their checks; the kept files stay
/// as they were.
#[test]
fn resume_verifies_each_kept_record_against_its_input_line_and_its_check() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 90);
    let first = eval(dir.path(), &input, "full.jsonl", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let whole = fs::read_to_string(dir.path().join("full.jsonl")).unwrap();
    let partial = first_lines(&whole, 50);
    let partial_path = dir.path().join(".out.jsonl.partial");
    let refused = |input: &Path, expected: &str| {
        let before = fs::read(&partial_path).unwrap();
        let out = eval(dir.path(), input, "out.jsonl", &["--resume"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert_eq!(fs::read(&partial_path).unwrap(), before);
        assert!(!dir.path().join("out.jsonl").exists());
    };

    // The 31st record's output changed, its id and line did not: the FAIL kept
    // for it would be counted for a record that now passes, or the reverse.
    let changed = dir.path().join("changed.jsonl");
    let text: String = fs::read_to_string(&input)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 30 { l.replace("no call here", "no call there") } else { l.to_owned() } + "\n")
        .collect();
    fs::write(&changed, text).unwrap();
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    refused(
        &changed,
        "cannot resume: result record 31: was evaluated from another record than the input's line 31 holds now (is it the same input, unchanged?)",
    );

    // A kept FAIL edited into a PASS after the run wrote it.
    let failed = partial
        .lines()
        .position(|l| l.contains("\"status\":\"FAIL\""))
        .expect("a FAIL among the kept records");
    let edited: String = partial
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            if i == failed {
                l.replace("\"status\":\"FAIL\"", "\"status\":\"PASS\"")
            } else {
                l.to_owned()
            }
        })
        .collect();
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    fs::write(&partial_path, &edited).unwrap();
    refused(
        &input,
        &format!(
            "cannot resume: result record {}: was changed after the run wrote it (it does not match its check)",
            failed + 1
        ),
    );

    // Kept results without checks (copied alone, or from an older version).
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    fs::remove_file(dir.path().join(".out.jsonl.partial.check")).unwrap();
    refused(
        &input,
        "cannot resume: result record 1: has no check: its input and its text cannot be verified",
    );
    // Checks that stop early: the records after them cannot be verified.
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    let checks = dir.path().join(".out.jsonl.partial.check");
    let text = fs::read_to_string(&checks).unwrap();
    fs::write(&checks, first_lines(&text, 21)).unwrap();
    refused(&input, "cannot resume: result record 21: has no check");

    // The checks as the run wrote them resume, and go once the output is in place.
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    let out = eval(dir.path(), &input, "out.jsonl", &["--resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("resumed: 50 records kept"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        whole
    );
    assert!(!checks.exists() && !partial_path.exists());
}

/// A link or FIFO planted at the checks file's name is refused like one at the
/// partial results file's name: nothing is written through it.
#[cfg(unix)]
#[test]
fn a_planted_checks_file_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 6);
    let victim = dir.path().join("victim.txt");
    let checks = dir.path().join(".out.jsonl.partial.check");
    for resume in [false, true] {
        fs::write(&victim, "precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, &checks).unwrap();
        let extra: &[&str] = if resume { &["--resume"] } else { &[] };
        let out = eval(dir.path(), &input, "out.jsonl", extra);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out)
                .contains(".out.jsonl.partial.check is a symbolic link, not a regular file"),
            "{}",
            stderr(&out)
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
        fs::remove_file(&checks).unwrap();
    }
}

#[test]
fn resume_works_with_chosen_fields_that_allow_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 600);
    let fields = ["--fields", "id,line,status,score,revision"];
    eval(dir.path(), &input, "full.jsonl", &fields);
    let whole = fs::read_to_string(dir.path().join("full.jsonl")).unwrap();
    let partial = first_lines(&whole, 257);
    plant_partial(dir.path(), "out.jsonl", &partial, &input);
    let out = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &[&["--resume"][..], &fields[..]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        whole
    );
    // Without `revision`, the kept results cannot be checked: refused.
    let fields = ["--fields", "id,status"];
    eval(dir.path(), &input, "bare.jsonl", &fields);
    let bare = fs::read_to_string(dir.path().join("bare.jsonl")).unwrap();
    plant_partial(dir.path(), "bare2.jsonl", &bare, &input);
    let out = eval(
        dir.path(),
        &input,
        "bare2.jsonl",
        &[&["--resume"][..], &fields[..]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("lacks `revision`, `status`, or both `line` and `id`"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_signal_stops_the_run_cleanly_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 30_000);
    let child = StdCommand::new(binary())
        .current_dir(dir.path())
        .args(["eval", "--pack", &pack(), "--input"])
        .arg(&input)
        .args(["--output", "out.jsonl", "--jobs", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once results are being written, SIGINT (as Ctrl-C sends it).
    let partial = dir.path().join(".out.jsonl.partial");
    let started = Instant::now();
    while fs::metadata(&partial).map_or(0, |m| m.len()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no results written"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{message}");
    assert!(
        message.contains("stopping: finishing the records being evaluated")
            && message.contains("results kept in .out.jsonl.partial (the output file is unchanged); run the same command with --resume to finish"),
        "{message}"
    );
    assert!(!dir.path().join("out.jsonl").exists());
    let kept = fs::read_to_string(&partial).unwrap();
    assert!(
        kept.ends_with('\n') && kept.lines().count() < 30_000,
        "{}",
        kept.lines().count()
    );
    // A check for every kept record (the header, then one line each).
    let checks = fs::read_to_string(dir.path().join(".out.jsonl.partial.check")).unwrap();
    assert!(checks.lines().count() > kept.lines().count(), "{checks}");
    let resumed = eval(
        dir.path(),
        &input,
        "out.jsonl",
        &["--resume", "--jobs", "2"],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let full = eval(dir.path(), &input, "full.jsonl", &["--jobs", "1"]);
    assert_eq!(full.status.code(), Some(0));
    assert!(
        fs::read(dir.path().join("out.jsonl")).unwrap()
            == fs::read(dir.path().join("full.jsonl")).unwrap(),
        "the stopped and resumed run differs from an uninterrupted one"
    );
}

#[cfg(unix)]
#[test]
fn an_output_that_cannot_be_written_stops_the_run_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 3000);
    // A full disk.
    let out = eval(dir.path(), &input, "/dev/full", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: cannot write results: No space left on device"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"));
    // A file size limit (as a quota would impose): the shell ignores SIGXFSZ so
    // the write fails with EFBIG instead of the signal ending the process.
    let limited = StdCommand::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 256; exec '{}' eval --pack '{}' --input '{}' --output out.jsonl",
            binary().display(),
            pack(),
            input.display()
        ))
        .output()
        .unwrap();
    let message = stderr(&limited);
    assert_eq!(limited.status.code(), Some(3), "{message}");
    assert!(
        message.contains("error: cannot write results: File too large")
            && message.contains("the results written so far are kept in .out.jsonl.partial: once the cause is fixed, run the same command with --resume"),
        "{message}"
    );
    assert!(!dir.path().join("out.jsonl").exists());
    // Space again: resume finishes the file as an uninterrupted run writes it.
    let resumed = eval(dir.path(), &input, "out.jsonl", &["--resume"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    eval(dir.path(), &input, "full.jsonl", &[]);
    assert!(
        fs::read(dir.path().join("out.jsonl")).unwrap()
            == fs::read(dir.path().join("full.jsonl")).unwrap()
    );
}

#[test]
fn two_runs_never_write_one_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 10);
    let partial = fs::File::create(dir.path().join(".out.jsonl.partial")).unwrap();
    partial.lock().unwrap();
    let out = eval(dir.path(), &input, "out.jsonl", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "another run is writing out.jsonl (its partial results .out.jsonl.partial are locked)"
        ),
        "{}",
        stderr(&out)
    );
    drop(partial);
    // The partial results of a killed run are never thrown away by a run
    // that forgot --resume.
    let stale = "{\"id\": \"old\"}\n";
    fs::write(dir.path().join(".out.jsonl.partial"), stale).unwrap();
    let out = eval(dir.path(), &input, "out.jsonl", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("an unfinished run left 14 bytes of results for out.jsonl in .out.jsonl.partial: continue them with --resume, or remove that file to start over"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join(".out.jsonl.partial")).unwrap(),
        stale
    );
    // An empty one (a run stopped before writing anything) is simply reused.
    fs::write(dir.path().join(".out.jsonl.partial"), "").unwrap();
    let out = eval(dir.path(), &input, "out.jsonl", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl"))
            .unwrap()
            .lines()
            .count(),
        10
    );
}

/// CRLF line endings, a byte-order mark, blank lines, a line that is not UTF-8,
/// a line over the size limit and a last line without a newline: every record
/// yields its result, in order, the bad ones as ERROR naming their line.
#[test]
fn every_input_form_yields_one_result_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let call = r#"{\"tool\": \"cancel_booking\", \"args\": {\"booking_id\": \"QX7P2K\"}, \"reason\": \"Cancel it.\"}"#;
    let record = |id: &str| format!("{{\"id\": \"{id}\", \"output\": \"{call}\"}}");
    let mut data: Vec<u8> = Vec::new();
    data.extend_from_slice(b"\xEF\xBB\xBF");
    data.extend_from_slice(format!("{}\r\n", record("bom-crlf")).as_bytes());
    data.extend_from_slice(b"\r\n   \n\n");
    data.extend_from_slice(b"{\"id\": \"latin1\", \"output\": \"caf\xE9\"}\n");
    let big = format!(
        "{{\"id\": \"big\", \"output\": \"{}\"}}\n",
        "x".repeat(5 << 20)
    );
    data.extend_from_slice(big.as_bytes());
    data.extend_from_slice(format!("{}\n", record("after")).as_bytes());
    data.extend_from_slice(record("no-newline").as_bytes());
    let input = dir.path().join("forms.jsonl");
    fs::write(&input, &data).unwrap();
    let out = eval(dir.path(), &input, "out.jsonl", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let results: Vec<Value> = fs::read_to_string(dir.path().join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(String, u64, String)> = results
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or("-").to_owned(),
                r["line"].as_u64().unwrap(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("bom-crlf", 1, "PASS"),
        ("latin1", 5, "ERROR"),
        ("big", 6, "ERROR"),
        ("after", 7, "PASS"),
        ("no-newline", 8, "PASS"),
    ];
    let expected: Vec<(String, u64, String)> = expected
        .iter()
        .map(|(id, line, status)| ((*id).to_owned(), *line, (*status).to_owned()))
        .collect();
    assert_eq!(seen, expected);
    assert!(
        results[1]["error"].as_str().unwrap().contains("line 5"),
        "{}",
        results[1]["error"]
    );
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("above the limit"),
        "{}",
        results[2]["error"]
    );
}

/// A 100 MB line is skipped without being held in memory: its ERROR result says
/// so, and the peak memory stays far below the line's size.
#[cfg(target_os = "linux")]
#[test]
fn a_100_mb_line_is_an_error_record_read_in_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("huge.jsonl");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(fs::File::create(&input).unwrap());
        file.write_all(b"{\"id\": \"huge\", \"output\": \"")
            .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"\"}\n{\"id\": \"next\", \"output\": \"{}\"}\n")
            .unwrap();
    }
    let out = StdCommand::new("/usr/bin/time")
        .args(["-f", "maxrss_kb=%M"])
        .arg(binary())
        .args(["eval", "--pack", &pack(), "--input"])
        .arg(&input)
        .args(["--output", dir.path().join("out.jsonl").to_str().unwrap()])
        .output();
    let Ok(out) = out else {
        // No GNU time on this machine: the result records are still checked.
        return;
    };
    let message = stderr(&out);
    let results = fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let lines: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{message}");
    assert_eq!(lines[0]["status"], "ERROR");
    assert!(
        lines[0]["error"]
            .as_str()
            .unwrap()
            .contains("record is 104857628 bytes, above the limit"),
        "{}",
        lines[0]["error"]
    );
    assert_eq!(lines[1]["id"], "next");
    if let Some(kb) = message
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kb="))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
    {
        assert!(kb < 60_000, "peak memory {kb} KB for a 100 MB line");
    }
}

/// Whatever is planted at the partial results file's path (a link to a file, a
/// link to `/dev/null`, a FIFO, a folder) is refused at once with a clear error:
/// nothing is written through it, the link's target is untouched, nothing
/// hangs, and the output is not replaced.
#[cfg(unix)]
#[test]
fn a_planted_partial_file_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 6);
    let victim = dir.path().join("victim.txt");
    let partial = dir.path().join(".out.jsonl.partial");
    let plants: [(&str, &dyn Fn()); 4] = [
        ("a symbolic link", &|| {
            std::os::unix::fs::symlink(&victim, &partial).unwrap();
        }),
        ("a symbolic link", &|| {
            std::os::unix::fs::symlink("/dev/null", &partial).unwrap();
        }),
        ("a FIFO", &|| {
            assert!(StdCommand::new("mkfifo")
                .arg(&partial)
                .status()
                .unwrap()
                .success());
        }),
        ("a folder", &|| fs::create_dir(&partial).unwrap()),
    ];
    for (what, plant) in plants {
        for resume in [false, true] {
            fs::write(&victim, "precious\n").unwrap();
            fs::write(dir.path().join("out.jsonl"), "old results\n").unwrap();
            plant();
            let started = Instant::now();
            let extra: &[&str] = if resume { &["--resume"] } else { &[] };
            let out = eval(dir.path(), &input, "out.jsonl", extra);
            assert!(started.elapsed() < Duration::from_secs(30), "{what}: hung");
            assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!("is {what}, not a regular file")),
                "{what}: {}",
                stderr(&out)
            );
            assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
            assert_eq!(
                fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
                "old results\n"
            );
            assert!(fs::symlink_metadata(&partial).is_ok(), "{what}: removed");
            if fs::symlink_metadata(&partial).unwrap().is_dir() {
                fs::remove_dir(&partial).unwrap();
            } else {
                fs::remove_file(&partial).unwrap();
            }
        }
    }
}

/// The JUnit cases file is created new under a name no one can guess: a link
/// planted at the name an earlier version used is not followed.
#[cfg(unix)]
#[test]
fn the_junit_cases_file_is_new_and_unpredictable() {
    let dir = tempfile::tempdir().unwrap();
    let input = data_set(dir.path(), 6);
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, "precious\n").unwrap();
    // The name an earlier version used, for the next few process ids.
    for pid in 0..64u32 {
        let name = format!(".junit.xml.cases.{}.tmp", std::process::id() + pid);
        std::os::unix::fs::symlink(&victim, dir.path().join(name)).unwrap();
    }
    let out = eval(dir.path(), &input, "out.jsonl", &["--junit", "junit.xml"]);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase").count(), 6);
    // The cases file is removed once the document is written (the planted
    // links stay, untouched).
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(Result::unwrap)
        .filter(|entry| entry.file_type().unwrap().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".cases."))
        .collect();
    assert!(left.is_empty(), "cases files left: {left:?}");
}

/// A data set of transcripts, with plain outputs among them: the kept records
/// with `turns` and those without both resume, and the JUnit cases of the kept
/// ones name their failing turns as a whole run's do.
#[test]
fn resume_keeps_transcript_records_and_their_turns() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let data =
        fs::read_to_string(root().join("examples/data/travel-agent-generated.jsonl")).unwrap();
    for (i, line) in data.lines().take(60).enumerate() {
        text.push_str(line);
        text.push('\n');
        if i % 7 == 0 {
            text.push_str(
                &serde_json::json!({"id": format!("plain-{i}"), "output": "Booked."}).to_string(),
            );
            text.push('\n');
        }
    }
    let input = dir.path().join("runs.jsonl");
    fs::write(&input, &text).unwrap();
    let pack = root().join("examples/packs/travel-agent");
    let run = |output: &str, extra: &[&str]| {
        StdCommand::new(binary())
            .current_dir(dir.path())
            .arg("eval")
            .arg(&pack)
            .arg("--input")
            .arg(&input)
            .args(["--output", output])
            .args(extra)
            .output()
            .unwrap()
    };
    let full = run("full.jsonl", &["--junit", "full.xml"]);
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    let whole = fs::read_to_string(dir.path().join("full.jsonl")).unwrap();
    assert!(whole.lines().any(|l| !l.contains("\"turns\":")));
    let kept = first_lines(&whole, 30);
    plant_partial(dir.path(), "out.jsonl", &kept, &input);
    let out = run("out.jsonl", &["--resume", "--junit", "out.xml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("resumed: 30 records kept"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        whole
    );
    let junit = |name: &str| {
        let text = fs::read_to_string(dir.path().join(name)).unwrap();
        // The suite's time differs between the runs; the cases do not.
        text.split("<testcase")
            .skip(1)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let cases = junit("out.xml");
    assert_eq!(cases, junit("full.xml"));
    assert!(cases.iter().take(30).any(|c| c.contains("failing turns:")));
}

/// A record that would run for ever (its pack's limits lifted) does not hold
/// a stopped run: SIGTERM ends it within seconds, the results judged before
/// it are kept, and the record in flight and those after it are left for
/// `--resume`.
#[cfg(unix)]
#[test]
fn sigterm_stops_a_record_in_flight_and_keeps_every_result_judged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    fs::create_dir_all(&pack).unwrap();
    fs::write(
        pack.join("pack.yaml"),
        "name: spins\ncomponents: [spin.yaml]\npipeline:\n  metrics:\n    - use: spin\n      scope: assistant_turns\n",
    )
    .unwrap();
    fs::write(
        pack.join("spin.yaml"),
        "kind: metric\nname: spin\nimplementation:\n  script: spin.rhai\n",
    )
    .unwrap();
    fs::write(
        pack.join("spin.rhai"),
        "fn evaluate(ctx) {\n    if ctx.output == \"spin\" { loop { } }\n    1.0\n}\n",
    )
    .unwrap();
    let mut input = String::new();
    for i in 0..6 {
        let text = if i == 3 { "spin" } else { "fine" };
        let record = serde_json::json!({"id": format!("r{i}"), "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": text},
        ]});
        input.push_str(&record.to_string());
        input.push('\n');
    }
    fs::write(dir.path().join("in.jsonl"), &input).unwrap();
    let pack_arg = pack.display().to_string();
    let run = |extra: &[&str]| {
        let mut command = StdCommand::new(binary());
        command
            .current_dir(dir.path())
            .args([
                "eval",
                &pack_arg,
                "--input",
                "in.jsonl",
                "--output",
                "out.jsonl",
                "--jobs",
                "1",
            ])
            .args(extra);
        command
    };
    let child = run(&[
        "--set",
        "limits.timeout_ms=0",
        "--set",
        "limits.max_operations=0",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = Instant::now();
    let killed = StdCommand::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let took = signalled.elapsed();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{message}");
    // (Before: it ran until killed.)
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");
    let kept = fs::read_to_string(dir.path().join(".out.jsonl.partial")).unwrap();
    let ids: Vec<String> = kept
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, ["r0", "r1", "r2"], "{message}");
    assert!(message.contains("3 results kept"), "{message}");
    // Each kept record has its check, for `--resume` (the header, then one
    // line each).
    let checks = fs::read_to_string(dir.path().join(".out.jsonl.partial.check")).unwrap();
    assert_eq!(checks.lines().count(), 4, "{checks}");
}
