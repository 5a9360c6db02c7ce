//! A streaming session's memory is bounded by the text, not by its shape: for
//! every shape a hostile output can take (nesting, width, long strings, many
//! members, repeated items), `tribunal check --stream` peaks at no more than a
//! small factor over `tribunal check` of the same text, measured as the peak
//! resident memory of the child process (`wait4`'s `ru_maxrss`). Each text is
//! as large as the default `--max-record-bytes` allows.

#![cfg(target_os = "linux")]

#[path = "support/shapes.rs"]
mod shapes;

use shapes::{peak_kib, shape, PACK, SHAPES};
use tribunal::jsonl::DEFAULT_MAX_RECORD_BYTES;

/// The binary measured: this build's, or `TRIBUNAL_TEST_BIN` (another build,
/// such as one from before a change).
fn test_binary() -> std::path::PathBuf {
    std::env::var_os("TRIBUNAL_TEST_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_tribunal").into(),
        std::path::PathBuf::from,
    )
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
        let text = shape(i, DEFAULT_MAX_RECORD_BYTES - 64);
        assert!(text.len() <= DEFAULT_MAX_RECORD_BYTES, "{name}");
        std::fs::write(&input, &text).unwrap();
        drop(text);
        let whole_out = dir.path().join(format!("{i}.whole"));
        let stream_out = dir.path().join(format!("{i}.stream"));
        let bin = test_binary();
        let whole = peak_kib(&bin, &pack, &input, &whole_out, &["--json"]);
        let stream = peak_kib(&bin, &pack, &input, &stream_out, &["--json", "--stream"]);
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
