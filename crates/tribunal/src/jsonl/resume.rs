//! Resuming a run (`eval --resume`): the result records a previous run of the
//! same pack on the same input already wrote are read alongside the input's
//! first records, checked against them, and counted in the summary (and the
//! JUnit cases) as if evaluated now; evaluation goes on after the last one.
//!
//! A run writing a result file also writes its *checks* beside the partial
//! results ([`CHECKS_HEADER`], then one [`CHECK_LINE`]-byte line per result
//! record: a hash of the input line it was evaluated from, with its line number,
//! and a hash of the result line as written). Resuming verifies each kept record
//! against both, so a changed input, or a result record edited after the run
//! wrote it, is refused instead of being counted. The hash (XXH3, 64 bits) is
//! there to catch a change, not a forger: whoever can rewrite both files can
//! write the output file itself. The checks are written, and on disk, before
//! the records they are for: a run killed at any point leaves a check for every
//! whole record it wrote.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

use serde_json::{Map, Value};

use twox_hash::XxHash3_64;

use super::record::parse_record;
use super::{Batch, Beside, Options, RawBody, RawRecord, RecordReader};
use crate::json::Json;
use crate::pack::Pack;
use crate::report::{ErrorKind, Field, Issue, MetricResult, Report, Status};
use crate::summary::Summary;

/// Why the kept results cannot be resumed from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("result record {record}: {message}")]
pub struct KeptError {
    /// 1-based position of the result record in the kept results.
    pub record: u64,
    /// What does not match.
    pub message: String,
}

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
/// evaluated from `raw`, to `out`.
pub(crate) fn push_check(out: &mut Vec<u8>, raw: &RawRecord<'_>, result: &[u8]) {
    // Two digits a byte, most significant first, in one write (this runs
    // for every record a run writes to a file).
    fn hex(out: &mut Vec<u8>, value: u64) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [0u8; 16];
        for (pair, byte) in digits.chunks_exact_mut(2).zip(value.to_be_bytes()) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
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

/// The kept results of an unfinished run, and the checks written with them.
#[allow(missing_debug_implementations)]
pub struct Kept<'a> {
    /// The kept result lines.
    pub results: &'a mut dyn BufRead,
    /// Their checks file.
    pub checks: &'a mut dyn BufRead,
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

/// What [`skip_kept`] leaves to evaluate: the rest of the batch the last kept
/// record was in.
pub(super) struct Skipped {
    pub leftover: Option<Batch>,
    pub kept: u64,
}

/// Reads the kept result records one by one with the input's records, checks
/// that each is this pack's result for that input record (its check matches
/// the record as kept and the input record at its position; same `revision`,
/// same `line` and `id`), and adds it to `summary` (and writes what `beside`
/// makes of it).
pub(super) fn skip_kept<R: BufRead>(
    pack: &Pack,
    batches: &mut RecordReader<R>,
    kept: &mut Kept<'_>,
    summary: &mut Summary,
    mut beside: Option<&mut Beside<'_>>,
    options: &Options,
) -> Result<Skipped, KeptError> {
    let mut current: Option<(Batch, usize)> = None;
    let mut count = 0u64;
    let mut text = String::new();
    loop {
        text.clear();
        match kept.results.read_line(&mut text) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                return Err(KeptError {
                    record: count + 1,
                    message: format!("cannot be read: {err}"),
                })
            }
        }
        count += 1;
        let fail = |message: String| KeptError {
            record: count,
            message,
        };
        let (input_check, result_check) = next_check(kept.checks, count == 1).map_err(fail)?;
        let written = text.strip_suffix('\n').unwrap_or(&text);
        if xxh3_64_with_seed(written.as_bytes(), 0) != result_check {
            return Err(fail(
                "was changed after the run wrote it (it does not match its check): evaluate the data set again without --resume".to_owned(),
            ));
        }
        let record: Map<String, Value> = serde_json::from_str(written)
            .map_err(|err| fail(format!("is not a result record ({err})")))?;
        if count == 1 {
            check_fields(&record, options).map_err(fail)?;
        }
        // The input record at the same position.
        let (line, id, input) = loop {
            if let Some((batch, index)) = &mut current {
                if let Some(raw) = batch.records().nth(*index) {
                    *index += 1;
                    let id = match parse_record(&raw, options) {
                        Ok((input, _)) => input.id,
                        Err(err) => err.id,
                    };
                    break (raw.line, id, input_hash(&raw));
                }
            }
            match batches.next() {
                Some(batch) => current = Some((batch, 0)),
                None if batches.stopped => {
                    return Err(fail(
                        "checking stopped: the run was interrupted before it got here".to_owned(),
                    ))
                }
                None => {
                    return Err(fail(
                        "the input has no record here: the results hold more records than the input (is it the same input?)".to_owned(),
                    ))
                }
            }
        };
        check_record(&record, pack, line, &id).map_err(fail)?;
        if input != input_check {
            return Err(fail(format!(
                "was evaluated from another record than the input's line {line} holds now (is it the same input, unchanged?)"
            )));
        }
        let report = report_of(record, line, id);
        summary.add(&report);
        if let Some(beside) = beside.as_deref_mut() {
            let mut case = Vec::new();
            (beside.write)(&report, None, &mut case);
            beside.out.write_all(&case).map_err(|err| KeptError {
                record: count,
                message: format!("cannot write what goes beside it: {err}"),
            })?;
        }
    }
    let leftover = current.and_then(|(mut batch, index)| {
        batch.skip(index);
        (!batch.is_empty()).then_some(batch)
    });
    Ok(Skipped {
        leftover,
        kept: count,
    })
}

/// The kept records must have the fields this run writes (`--fields`), and
/// what resuming checks: `revision`, and `line` or `id`.
fn check_fields(record: &Map<String, Value>, options: &Options) -> Result<(), String> {
    // `turns` is there only for a record with a transcript.
    let wanted: Vec<&str> = Field::ALL
        .iter()
        .filter(|f| options.result_fields.has(**f))
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
    pack: &Pack,
    line: u64,
    id: &Json,
) -> Result<(), String> {
    match record.get("revision").and_then(Value::as_str) {
        Some(revision) if revision == pack.info.revision => {}
        other => {
            return Err(format!(
                "was written by pack revision {}, not {} (this pack as loaded, with its --set overrides): evaluate the data set again without --resume",
                other.map_or_else(|| "(none)".to_owned(), ToOwned::to_owned),
                pack.info.revision
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

/// The report a kept record holds (fields it does not have are left empty).
fn report_of(mut record: Map<String, Value>, line: u64, id: Json) -> Report {
    let mut take = |name: &str| record.remove(name).unwrap_or(Value::Null);
    let status: Status = serde_json::from_value(take("status")).unwrap_or(Status::Error);
    let text = |value: Value| match value {
        Value::String(s) => Some(s),
        _ => None,
    };
    let mut report = Report::evaluated(
        id,
        serde_json::from_value(take("extraction")).unwrap_or_default(),
        take("json").into(),
        &text(take("pack")).unwrap_or_default(),
        &text(take("revision")).unwrap_or_default(),
    );
    report.line = Some(line);
    report.score = take("score").as_f64();
    report.metrics = serde_json::from_value::<BTreeMap<String, MetricResult>>(take("metrics"))
        .unwrap_or_default();
    report.issues = serde_json::from_value::<Vec<Issue>>(take("issues")).unwrap_or_default();
    report.turns = serde_json::from_value(take("turns")).unwrap_or_default();
    report.feedback = text(take("feedback"));
    if status == Status::Error {
        let kind = serde_json::from_value(take("error_kind")).unwrap_or(ErrorKind::Internal);
        report.set_failed(kind, text(take("error")).unwrap_or_default());
    } else {
        report.set_verdict(status);
    }
    report
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
        push_check(
            &mut out,
            &raw(7, b"{\"output\": \"x\"}"),
            b"{\"status\":\"PASS\"}",
        );
        assert_eq!(out.len() as u64, CHECK_LINE);
        let (input, result) = parse_check(&out).unwrap();
        assert_eq!(input, input_hash(&raw(7, b"{\"output\": \"x\"}")));
        assert_eq!(result, xxh3_64_with_seed(b"{\"status\":\"PASS\"}", 0));
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
