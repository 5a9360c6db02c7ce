//! A streaming session's memory is bounded by the text, not by its shape: for
//! every shape a hostile output can take (nesting, width, long strings, many
//! members, repeated items), `tribunal check --stream` peaks at no more than a
//! small factor over `tribunal check` of the same text, measured as the peak
//! resident memory of the child process (`wait4`'s `ru_maxrss`). Each text is
//! as large as the default `--max-record-bytes` allows.

#![cfg(target_os = "linux")]

use std::fmt::Write as _;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

use tribunal::jsonl::DEFAULT_MAX_RECORD_BYTES;

/// A pack whose contract has a rule for every kind of early check: a closed
/// top-level object, strings, numbers, a closed nested object and a unique
/// array.
const PACK: &str = "name: bounded
contract:
  fields:
    text: { type: string, required: false }
    n: { type: integer, min: 0, required: false }
    nested:
      type: object
      required: false
      additional_fields: false
      fields:
        a: { type: string, required: false }
    items: { type: array, items: integer, unique_items: true, required: false }
    tags: { type: array, items: string, required: false }
pipeline:
  postprocessors: [contract, no_placeholders]
";

/// The shapes a hostile output can take.
const SHAPES: [&str; 13] = [
    "arrays nested",
    "arrays nested, closed",
    "objects nested",
    "objects nested under a field",
    "a wide array",
    "a wide top-level array",
    "a long string",
    "a long string of escapes",
    "many keys",
    "many keys in a field",
    "many keys in a free object",
    "repeated keys",
    "a unique array",
];

/// The text of shape `i` of [`SHAPES`], as long as the record limit allows
/// (a few bytes under).
fn shape(i: usize) -> String {
    let size = DEFAULT_MAX_RECORD_BYTES - 64;
    let fill = |head: &str, unit: &str, tail: &str| {
        let n = (size - head.len() - tail.len()) / unit.len();
        format!("{head}{}{tail}", unit.repeat(n))
    };
    let keys = |head: &str, tail: &str| {
        let mut text = head.to_owned();
        let mut i = 0;
        while text.len() + tail.len() + 24 < size {
            let _ = write!(text, "\"k{i}\": {i}, ");
            i += 1;
        }
        text.push_str("\"end\": 0");
        text.push_str(tail);
        text
    };
    match i {
        0 => "[".repeat(size),
        1 => format!("{}{}", "[".repeat(size / 2), "]".repeat(size / 2)),
        2 => fill("", "{\"a\": ", ""),
        3 => fill("{\"nested\": ", "{\"a\": ", ""),
        4 => fill("{\"tags\": [", "\"x\", ", "\"x\"]}"),
        5 => fill("[", "1, ", "1]"),
        6 => fill("{\"text\": \"", "a", "\"}"),
        7 => fill("{\"text\": \"", "\\n", "\"}"),
        8 => keys("{", "}"),
        9 => keys("{\"nested\": {", "}}"),
        10 => keys("{\"free\": {", "}}"),
        11 => fill("{", "\"n\": 1, ", "\"n\": 1}"),
        _ => {
            let mut unique = String::from("{\"items\": [");
            let mut n = 0u64;
            while unique.len() + 32 < size {
                let _ = write!(unique, "{n}, ");
                n += 1;
            }
            unique.push_str("0]}");
            unique
        }
    }
}

/// Runs `tribunal check PACK - [args]` on `input` and returns its peak
/// resident memory in KiB and its exit status.
fn peak_kib(pack: &Path, input: &Path, out: &Path, args: &[&str]) -> (u64, i32) {
    // (TRIBUNAL_TEST_BIN measures another build, such as one from before a change.)
    let bin = std::env::var_os("TRIBUNAL_TEST_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_tribunal").into(),
        std::path::PathBuf::from,
    );
    // (Waited for with wait4 below, which reports the peak.)
    #[allow(clippy::zombie_processes)]
    let child = Command::new(bin)
        .arg("check")
        .arg(pack)
        .arg("-")
        // (An unoptimised build may take more than a record's default second.)
        .args(["--set", "limits.timeout_ms=600000"])
        .args(args)
        .stdin(File::open(input).unwrap())
        .stdout(File::create(out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `usage` is a plain C struct that wait4 fills; the child is ours
    // and not waited for elsewhere (`Child` does not wait when dropped).
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::wait4(pid, &raw mut status, 0, &raw mut usage), pid);
        usage
    };
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (u64::try_from(usage.ru_maxrss).unwrap(), code)
}

#[test]
fn streaming_peaks_within_a_small_factor_of_the_whole_check_for_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(pack.join("pack.yaml"), PACK).unwrap();
    let input = dir.path().join("input.txt");
    // First the measures, while this process holds nothing large: a child's
    // peak starts from its parent's size at the fork.
    let mut peaks = Vec::new();
    for (i, name) in SHAPES.iter().enumerate() {
        let text = shape(i);
        assert!(text.len() <= DEFAULT_MAX_RECORD_BYTES, "{name}");
        std::fs::write(&input, &text).unwrap();
        drop(text);
        let whole_out = dir.path().join(format!("{i}.whole"));
        let stream_out = dir.path().join(format!("{i}.stream"));
        let whole = peak_kib(&pack, &input, &whole_out, &["--json"]);
        let stream = peak_kib(&pack, &input, &stream_out, &["--json", "--stream"]);
        peaks.push((whole, stream));
    }
    let mut failures = Vec::new();
    for (i, (shape, ((whole, whole_code), (stream, stream_code)))) in
        SHAPES.iter().zip(peaks).enumerate()
    {
        // The same result record, last line of the stream's output.
        let whole_out = std::fs::read_to_string(dir.path().join(format!("{i}.whole"))).unwrap();
        let whole_record: serde_json::Value = serde_json::from_str(&whole_out).unwrap();
        let streamed = std::fs::read_to_string(dir.path().join(format!("{i}.stream"))).unwrap();
        let last = streamed.lines().last().unwrap_or_default();
        let stream_record: serde_json::Value = serde_json::from_str(last).unwrap();
        // (Compared whole, reported in brief: the records hold the text.)
        assert!(
            stream_record == whole_record,
            "{shape}: the results differ: stream {} {} ({} issues), whole {} {} ({} issues)",
            stream_record["status"],
            stream_record["error"],
            stream_record["issues"].as_array().map_or(0, Vec::len),
            whole_record["status"],
            whole_record["error"],
            whole_record["issues"].as_array().map_or(0, Vec::len),
        );
        assert_eq!(stream_code, whole_code, "{shape}");
        // At most one `stopped` event, and only for a text nested too deep.
        let stops = streamed
            .lines()
            .filter(|l| l.contains("\"event\":\"stopped\""))
            .count();
        assert_eq!(stops, usize::from(shape.contains("nested")), "{shape}");
        eprintln!("{shape:32} whole {whole:>8} KiB  stream {stream:>8} KiB");
        // A small factor, and a little room for the session's own buffers.
        if stream > 2 * whole + 16 * 1024 {
            failures.push(format!("{shape}: stream {stream} KiB, whole {whole} KiB"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
