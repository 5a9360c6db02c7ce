//! Resuming a run (`eval --resume`): the result records a previous run of the
//! same pack on the same input already wrote are read alongside the input's
//! first records, checked against them, and counted in the summary (and the
//! JUnit cases) as if evaluated now; evaluation goes on after the last one
//! (the engine's runner asks [`KeptResults`], a `tribunal::jsonl::Resume`).
//!
//! A run writing a result file also writes its *checks* beside the partial
//! results ([`CHECKS_HEADER`], then one [`CHECK_LINE`]-byte line per result
//! record, made by [`seal`]: a hash of the input line it was evaluated from,
//! with its line number, and a hash of the result line as written). Resuming
//! verifies each kept record against both, so a changed input, or a result
//! record edited after the run wrote it, is refused instead of being counted.
//! The hash (XXH3, 64 bits) is there to catch a change, not a forger: whoever
//! can rewrite both files can write the output file itself. The checks are
//! written, and on disk, before the records they are for: a run killed at any
//! point leaves a check for every whole record it wrote.

use std::io::{BufRead, Read};

use serde_json::{Map, Value};
use tribunal::jsonl::{RawBody, RawRecord, Resume};
use tribunal::{Field, Fields, Json, Report};
use twox_hash::XxHash3_64;

/// The first line of a checks file (its format's version).
pub const CHECKS_HEADER: &[u8] = b"tribunal resume checks 1\n";

/// The length of one check line: two 16-digit hex hashes, a space, a newline.
pub const CHECK_LINE: u64 = 34;

/// XXH3 (64 bits) of `bytes` with `seed`.
fn xxh3_64_with_seed(bytes: &[u8], seed: u64) -> u64 {
    XxHash3_64::oneshot_with_seed(seed, bytes)
}

/// The hash of an input record: its bytes (or what was kept of an oversized
/// line, and its size; or the read error), seeded with its line number.
fn input_hash(raw: &RawRecord<'_>) -> u64 {
    match raw.body {
        RawBody::Bytes(bytes) => xxh3_64_with_seed(bytes, raw.line),
        RawBody::TooLarge { size, prefix } => {
            xxh3_64_with_seed(prefix, raw.line) ^ (size as u64).rotate_left(32) ^ 0x7fff_0001
        }
        RawBody::ReadError(message) => xxh3_64_with_seed(message.as_bytes(), !raw.line),
    }
}

/// Appends the check line of the result line `result` (without its newline),
/// evaluated from `raw`, to `out` (the run's `tribunal::jsonl::SealFn`: it
/// runs on the worker threads, for every record a run writes to a file).
pub fn seal(raw: &RawRecord<'_>, result: &[u8], out: &mut Vec<u8>) {
    // Two digits a byte, most significant first, each pair from a table, in
    // one write (digit by digit it was a third of the check line's cost).
    fn hex(out: &mut Vec<u8>, value: u64) {
        static PAIRS: [[u8; 2]; 256] = {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            let mut pairs = [[0u8; 2]; 256];
            let mut byte = 0;
            while byte < 256 {
                pairs[byte] = [DIGITS[byte >> 4], DIGITS[byte & 0xf]];
                byte += 1;
            }
            pairs
        };
        let mut digits = [0u8; 16];
        for (at, byte) in value.to_be_bytes().into_iter().enumerate() {
            let [high, low] = PAIRS[usize::from(byte)];
            digits[2 * at] = high;
            digits[2 * at + 1] = low;
        }
        out.extend_from_slice(&digits);
    }
    hex(out, input_hash(raw));
    out.push(b' ');
    hex(out, xxh3_64_with_seed(result, 0));
    out.push(b'\n');
}

/// One check line read back: (input hash, result hash).
fn parse_check(line: &[u8]) -> Option<(u64, u64)> {
    let line = line.strip_suffix(b"\n")?;
    let text = std::str::from_utf8(line).ok()?;
    let (input, result) = text.split_once(' ')?;
    let hex = |s: &str| {
        (s.len() == 16)
            .then(|| u64::from_str_radix(s, 16).ok())
            .flatten()
    };
    Some((hex(input)?, hex(result)?))
}

/// The next check line, or why there is none.
fn next_check(checks: &mut dyn BufRead, first: bool) -> Result<(u64, u64), String> {
    let mut line = Vec::with_capacity(CHECK_LINE as usize);
    let unverifiable = "its input and its text cannot be verified (were the partial results \
                        written by an older Tribunal, or copied without their checks file?): \
                        evaluate the data set again without --resume";
    if first {
        let read = checks
            .read_until(b'\n', &mut line)
            .map_err(|err| format!("its checks cannot be read: {err}"))?;
        if read == 0 {
            return Err(format!("has no check: {unverifiable}"));
        }
        if line != CHECKS_HEADER {
            return Err(format!(
                "the checks file is not one this Tribunal writes: {unverifiable}"
            ));
        }
        line.clear();
    }
    (&mut *checks)
        .take(CHECK_LINE)
        .read_to_end(&mut line)
        .map_err(|err| format!("its check cannot be read: {err}"))?;
    if line.is_empty() {
        return Err(format!("has no check: {unverifiable}"));
    }
    parse_check(&line).ok_or_else(|| format!("its check is damaged: {unverifiable}"))
}

/// The kept results of an unfinished run and their checks, checked one by
/// one against the input's records at their positions: each must match its
/// check as kept and the input record's, and be this pack's result for that
/// record (the same `revision`, `line` and `id`).
pub struct KeptResults<'a> {
    /// The kept result lines.
    results: &'a mut dyn BufRead,
    /// Their checks file.
    checks: &'a mut dyn BufRead,
    /// The pack's revision, as loaded (with its `--set` overrides).
    revision: &'a str,
    /// The fields this run writes (`--fields`).
    fields: Fields,
    /// Kept records read so far.
    count: u64,
    /// The record [`Resume::next_kept`] read, and its input's check.
    next: Option<(Map<String, Value>, u64)>,
    /// The line read last (one buffer for every line).
    text: String,
}

impl<'a> KeptResults<'a> {
    pub fn new(
        results: &'a mut dyn BufRead,
        checks: &'a mut dyn BufRead,
        revision: &'a str,
        fields: Fields,
    ) -> Self {
        Self {
            results,
            checks,
            revision,
            fields,
            count: 0,
            next: None,
            text: String::new(),
        }
    }
}

impl Resume for KeptResults<'_> {
    fn next_kept(&mut self) -> Result<bool, String> {
        let text = &mut self.text;
        text.clear();
        match self.results.read_line(text) {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(err) => return Err(format!("cannot be read: {err}")),
        }
        self.count += 1;
        let (input_check, result_check) = next_check(self.checks, self.count == 1)?;
        let written = text.strip_suffix('\n').unwrap_or(text);
        if xxh3_64_with_seed(written.as_bytes(), 0) != result_check {
            return Err(
                "was changed after the run wrote it (it does not match its check): evaluate the data set again without --resume".to_owned(),
            );
        }
        let record: Map<String, Value> = serde_json::from_str(written)
            .map_err(|err| format!("is not a result record ({err})"))?;
        if self.count == 1 {
            check_fields(&record, self.fields)?;
        }
        self.next = Some((record, input_check));
        Ok(true)
    }

    fn check(&mut self, input: &RawRecord<'_>, id: &Json) -> Result<Report, String> {
        let (record, input_check) = self.next.take().expect("next_kept read a record");
        let line = input.line;
        check_record(&record, self.revision, line, id)?;
        if input_hash(input) != input_check {
            return Err(format!(
                "was evaluated from another record than the input's line {line} holds now (is it the same input, unchanged?)"
            ));
        }
        let mut report = Report::from_record(record);
        report.line = Some(line);
        report.id = id.clone();
        Ok(report)
    }
}

/// The kept records must have the fields this run writes (`--fields`), and
/// what resuming checks: `revision`, and `line` or `id`.
fn check_fields(record: &Map<String, Value>, fields: Fields) -> Result<(), String> {
    // `turns` is there only for a record with a transcript.
    let wanted: Vec<&str> = Field::ALL
        .iter()
        .filter(|f| fields.has(**f))
        .filter(|f| **f != Field::Turns || record.contains_key("turns"))
        .map(|f| f.as_str())
        .collect();
    let found: Vec<&str> = record.keys().map(String::as_str).collect();
    if wanted != found {
        return Err(format!(
            "has the fields {}, but this run writes {}: resume with the --fields the results were written with",
            found.join(","),
            wanted.join(",")
        ));
    }
    let has = |name: &str| record.contains_key(name);
    if !has("revision") || !has("status") || !(has("line") || has("id")) {
        return Err("lacks `revision`, `status`, or both `line` and `id`: resuming checks that each kept record is this pack's result for the same input record, and counts its status (with --fields, include revision, status and line)".to_owned());
    }
    Ok(())
}

/// One kept record against the input record at its position.
fn check_record(
    record: &Map<String, Value>,
    revision: &str,
    line: u64,
    id: &Json,
) -> Result<(), String> {
    match record.get("revision").and_then(Value::as_str) {
        Some(kept) if kept == revision => {}
        other => {
            return Err(format!(
                "was written by pack revision {}, not {revision} (this pack as loaded, with its --set overrides): evaluate the data set again without --resume",
                other.map_or_else(|| "(none)".to_owned(), ToOwned::to_owned),
            ))
        }
    }
    if let Some(kept) = record.get("line") {
        if kept.as_u64() != Some(line) {
            return Err(format!(
                "is for input line {kept}, but the input record at its position is on line {line} (is it the same input?)"
            ));
        }
    }
    if let Some(kept) = record.get("id") {
        if kept != id {
            return Err(format!(
                "has id {kept}, but the input record at its position (line {line}) has id {id} (is it the same input?)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_line_reads_back_as_written_and_sees_every_change() {
        let raw = |line, bytes: &'static [u8]| RawRecord {
            line,
            body: RawBody::Bytes(bytes),
        };
        let mut out = Vec::new();
        seal(
            &raw(7, b"{\"output\": \"x\"}"),
            b"{\"status\":\"PASS\"}",
            &mut out,
        );
        assert_eq!(out.len() as u64, CHECK_LINE);
        let (input, result) = parse_check(&out).unwrap();
        assert_eq!(input, input_hash(&raw(7, b"{\"output\": \"x\"}")));
        assert_eq!(result, xxh3_64_with_seed(b"{\"status\":\"PASS\"}", 0));
        assert_eq!(out, format!("{input:016x} {result:016x}\n").into_bytes());
        // The same bytes on another line, another record, an oversized or
        // unreadable line: each a different input.
        let hashes = [
            input_hash(&raw(8, b"{\"output\": \"x\"}")),
            input_hash(&raw(7, b"{\"output\": \"y\"}")),
            input_hash(&RawRecord {
                line: 7,
                body: RawBody::TooLarge {
                    size: 1 << 30,
                    prefix: b"{\"output\": \"x\"}",
                },
            }),
            input_hash(&RawRecord {
                line: 7,
                body: RawBody::ReadError("{\"output\": \"x\"}"),
            }),
        ];
        for (i, hash) in hashes.iter().enumerate() {
            assert_ne!(*hash, input, "{i}");
        }
        // A damaged line is not a check.
        for bad in [&out[..33], b"0123 4567\n", &[b'g'; 34][..]] {
            assert_eq!(parse_check(bad), None);
        }
    }
}
