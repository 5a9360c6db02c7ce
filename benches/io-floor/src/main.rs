//! The I/O floor of `scripts/bench`: reads a JSONL file, parses every line into
//! a `serde_json::Value` and writes `{"id":…,"ok":true}` per record, on one
//! thread. No engine is this fast on the same input; the benchmark reports
//! Tribunal's time as a multiple of this one.
//!
//! ```text
//! io-floor INPUT.jsonl OUTPUT.jsonl
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: io-floor INPUT.jsonl OUTPUT.jsonl");
        return ExitCode::from(2);
    };
    match run(input, output) {
        Ok(records) => {
            eprintln!("io-floor: {records} records");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("io-floor: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: &str, output: &str) -> std::io::Result<u64> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(input)?);
    let mut out = BufWriter::with_capacity(1 << 16, File::create(output)?);
    let mut line = String::new();
    let mut records = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&line)
            .map_err(|err| std::io::Error::other(format!("record {}: {err}", records + 1)))?;
        let id = value.get("id").unwrap_or(&serde_json::Value::Null);
        serde_json::to_writer(&mut out, &serde_json::json!({"id": id, "ok": true}))?;
        out.write_all(b"\n")?;
        records += 1;
    }
    out.flush()?;
    Ok(records)
}
