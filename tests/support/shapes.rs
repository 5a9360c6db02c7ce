//! The shapes a hostile model output can take (deep nesting, wide arrays, long
//! strings, many keys, repeated keys, unique items), generated at any size, and
//! the peak memory of a `tribunal check` run on one: shared by
//! `tests/stream_memory.rs` and `benches/stream_memory.rs`.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

/// A pack whose contract has a rule for every kind of early check: a closed
/// top-level object, strings, numbers, a closed nested object and a unique
/// array.
pub const PACK: &str = "name: bounded
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
pub const SHAPES: [&str; 13] = [
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

/// The text of shape `i` of [`SHAPES`], `size` bytes long or a few less.
pub fn shape(i: usize, size: usize) -> String {
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

/// Runs `BIN check PACK - [args]` on `input` and returns its peak
/// resident memory in KiB and its exit status.
pub fn peak_kib(bin: &Path, pack: &Path, input: &Path, out: &Path, args: &[&str]) -> (u64, i32) {
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
