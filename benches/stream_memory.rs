//! A streaming session's peak memory and time against checking the whole
//! text, for every shape a hostile output can take (deep nesting, wide arrays,
//! long strings, many keys, repeated keys, unique items), at 1, 2 and 4 MiB:
//! the stream's peak stays near the whole check's, and its time grows linearly
//! with the size (the 4 MiB column about twice the 2 MiB one).
//!
//! Run with `cargo bench --bench stream_memory` (it runs the release binary,
//! `tribunal check PACK - [--stream]`, once per shape, size and mode, and reads
//! each run's peak resident memory from `wait4`). The same shapes at 4 MiB are
//! the test `tests/stream_memory.rs`.

#[path = "../tests/support/shapes.rs"]
mod shapes;

use std::time::Instant;

use shapes::{peak_kib, shape, PACK, SHAPES};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(pack.join("pack.yaml"), PACK).unwrap();
    let input = dir.path().join("input.txt");
    let out = dir.path().join("out");
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_tribunal"));
    println!(
        "{:32} {:>5}  {:>10} {:>10} {:>6}  {:>9} {:>9}",
        "shape", "MiB", "whole KiB", "stream KiB", "ratio", "whole s", "stream s"
    );
    for (i, name) in SHAPES.iter().enumerate() {
        for mib in [1, 2, 4] {
            let text = shape(i, mib * 1024 * 1024 - 64);
            std::fs::write(&input, &text).unwrap();
            drop(text);
            let started = Instant::now();
            let (whole, _) = peak_kib(&bin, &pack, &input, &out, &["--json"]);
            let whole_s = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let (stream, _) = peak_kib(&bin, &pack, &input, &out, &["--json", "--stream"]);
            let stream_s = started.elapsed().as_secs_f64();
            println!(
                "{name:32} {mib:>5}  {whole:>10} {stream:>10} {:>5.2}x  {whole_s:>9.3} {stream_s:>9.3}",
                stream as f64 / whole as f64
            );
        }
    }
}
