//! Streaming batch evaluation: JSONL records in, one result record out per
//! input record, in input order, evaluated in parallel with flat memory.
//!
//! Every input line that is not blank yields a result: a line that is not UTF-8,
//! not JSON, not an object, has no `output`, or is above the size limit becomes
//! an `ERROR` record with the reason, and the run goes on.

use std::io::{self, BufRead, Write};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::pack::Pack;
use crate::pipeline::Input;
use crate::report::Report;
use crate::summary::Summary;

/// Default limit on one input record (one JSONL line): 4 MiB.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of an oversized line kept to recover its id for the error record.
const OVERSIZE_PREFIX: usize = 4096;

/// Names of the input fields (remappable with `--id-field` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames {
    pub id: String,
    pub output: String,
    pub expected: String,
    pub meta: String,
}

impl Default for FieldNames {
    fn default() -> Self {
        Self {
            id: "id".into(),
            output: "output".into(),
            expected: "expected".into(),
            meta: "meta".into(),
        }
    }
}

/// Options of a batch run.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    pub max_record_bytes: usize,
    pub fields: FieldNames,
}

impl Default for EvalOptions {
    fn default() -> Self {
        Self {
            jobs: 0,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            fields: FieldNames::default(),
        }
    }
}

/// One raw input line.
#[derive(Debug)]
pub struct RawRecord {
    /// 1-based line number.
    pub line: u64,
    pub body: RawBody,
}

#[derive(Debug)]
pub enum RawBody {
    Bytes(Vec<u8>),
    /// The line was longer than the limit; only its start is kept.
    TooLarge {
        size: usize,
        prefix: Vec<u8>,
    },
    /// Reading the input failed here.
    ReadError(String),
}

/// Splits a byte stream into lines without ever holding more than `max` bytes of
/// one line; skips blank lines.
#[derive(Debug)]
pub struct RecordReader<R> {
    reader: R,
    max: usize,
    line: u64,
    done: bool,
}

impl<R: BufRead> RecordReader<R> {
    pub fn new(reader: R, max: usize) -> Self {
        Self {
            reader,
            max,
            line: 0,
            done: false,
        }
    }

    fn read_line(&mut self) -> io::Result<Option<RawBody>> {
        let mut kept: Vec<u8> = Vec::new();
        let mut size = 0usize;
        let mut saw_any = false;
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match memchr_newline(buffer) {
                Some(pos) => (&buffer[..pos], true),
                None => (buffer, false),
            };
            let room = self.max.saturating_add(1).saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
            size += chunk.len();
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                break;
            }
        }
        if kept.last() == Some(&b'\r') && size <= self.max + 1 {
            kept.pop();
            size -= 1;
        }
        if size > self.max {
            kept.truncate(OVERSIZE_PREFIX);
            return Ok(Some(RawBody::TooLarge { size, prefix: kept }));
        }
        Ok(Some(RawBody::Bytes(kept)))
    }
}

fn memchr_newline(buffer: &[u8]) -> Option<usize> {
    buffer.iter().position(|b| *b == b'\n')
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = RawRecord;

    fn next(&mut self) -> Option<RawRecord> {
        while !self.done {
            self.line += 1;
            match self.read_line() {
                Ok(None) => self.done = true,
                Ok(Some(RawBody::Bytes(bytes))) if bytes.iter().all(u8::is_ascii_whitespace) => {}
                Ok(Some(body)) => {
                    return Some(RawRecord {
                        line: self.line,
                        body,
                    })
                }
                Err(err) => {
                    self.done = true;
                    return Some(RawRecord {
                        line: self.line,
                        body: RawBody::ReadError(err.to_string()),
                    });
                }
            }
        }
        None
    }
}

/// Turns one raw line into an `Input`, or the reason it cannot be evaluated
/// (with whatever id could be recovered).
pub fn parse_record(record: &RawRecord, options: &EvalOptions) -> Result<Input, (Value, String)> {
    let line = record.line;
    let bytes = match &record.body {
        RawBody::Bytes(bytes) => bytes,
        RawBody::TooLarge { size, prefix } => {
            return Err((
                recover_id(prefix, &options.fields.id),
                format!(
                    "line {line}: record is {size} bytes, above the limit of {} bytes (raise it with --max-record-bytes)",
                    options.max_record_bytes
                ),
            ))
        }
        RawBody::ReadError(err) => return Err((Value::Null, format!("line {line}: cannot read input: {err}"))),
    };
    let text = std::str::from_utf8(bytes).map_err(|err| {
        (
            recover_id(bytes, &options.fields.id),
            format!(
                "line {line}: not valid UTF-8 (at byte {})",
                err.valid_up_to() + 1
            ),
        )
    })?;
    let value: Value = serde_json::from_str(text).map_err(|err| {
        (
            recover_id(bytes, &options.fields.id),
            format!("line {line}: not valid JSON: {err}"),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            format!("line {line}: a record must be a JSON object"),
        ));
    };
    let id = object.remove(&options.fields.id).unwrap_or(Value::Null);
    let output = match object.remove(&options.fields.output) {
        Some(Value::String(text)) => text,
        None | Some(Value::Null) => {
            return Err((
                id,
                format!(
                    "line {line}: record has no `{}` field",
                    options.fields.output
                ),
            ))
        }
        // Data sets sometimes store the structured output itself: evaluate its JSON text.
        Some(other) => other.to_string(),
    };
    Ok(Input {
        id,
        output,
        expected: object
            .remove(&options.fields.expected)
            .unwrap_or(Value::Null),
        meta: object.remove(&options.fields.meta).unwrap_or(Value::Null),
    })
}

/// Finds `"id": "..."` or `"id": 123` at the start of a record that could not be parsed.
fn recover_id(bytes: &[u8], field: &str) -> Value {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(OVERSIZE_PREFIX)]);
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r#""((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)"#).expect("valid regex")
    });
    for caps in pattern.captures_iter(&text) {
        let key: Result<String, _> = serde_json::from_str(&format!("\"{}\"", &caps[1]));
        if key.is_ok_and(|k| k == field) {
            return serde_json::from_str(&caps[2]).unwrap_or(Value::Null);
        }
    }
    Value::Null
}

/// Evaluates one raw record into its result record.
pub fn evaluate_record(pack: &Pack, record: &RawRecord, options: &EvalOptions) -> Report {
    let mut report = match parse_record(record, options) {
        Ok(input) => pack.evaluate(&input),
        Err((id, reason)) => Report::errored(id, reason, pack.label(), &pack.revision),
    };
    report.line = Some(record.line);
    report
}

/// Streams `input` through the pack, writing one JSON line per record to `out`
/// in input order; `on_record` sees each report after it is written (progress).
pub fn run<R, W, P>(
    pack: &Pack,
    input: R,
    out: &mut W,
    options: &EvalOptions,
    mut on_record: P,
) -> io::Result<Summary>
where
    R: BufRead + Send,
    W: Write,
    P: FnMut(&Report),
{
    let mut summary = Summary::new(
        pack.metric_steps()
            .map(|(name, _)| name.to_owned())
            .collect(),
    );
    let mut write_error: Option<io::Error> = None;
    let records = RecordReader::new(input, options.max_record_bytes);
    crate::parallel::ordered_map(
        records,
        options.jobs,
        |record| {
            let report = evaluate_record(pack, &record, options);
            let line = report.to_json_line();
            (report, line)
        },
        |(report, line)| {
            if write_error.is_none() {
                if let Err(err) = writeln!(out, "{line}") {
                    write_error = Some(err);
                }
            }
            summary.add(&report);
            on_record(&report);
        },
    );
    if let Some(err) = write_error {
        return Err(err);
    }
    out.flush()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &str, max: usize) -> Vec<RawRecord> {
        RecordReader::new(input.as_bytes(), max).collect()
    }

    #[test]
    fn reader_skips_blank_lines_and_counts_them() {
        let records = lines("{\"a\":1}\n\n  \n{\"b\":2}\r\n", 100);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].line, 4);
        assert!(matches!(&records[1].body, RawBody::Bytes(b) if b == b"{\"b\":2}"));
    }

    #[test]
    fn reader_caps_long_lines() {
        let long = format!(
            "{{\"id\": \"big\", \"output\": \"{}\"}}\nnext\n",
            "x".repeat(10_000)
        );
        let records = lines(&long, 1000);
        assert_eq!(records.len(), 2);
        match &records[0].body {
            RawBody::TooLarge { size, prefix } => {
                assert_eq!(*size, long.find('\n').unwrap());
                assert!(prefix.len() <= OVERSIZE_PREFIX);
            }
            other => panic!("{other:?}"),
        }
        let err = parse_record(
            &records[0],
            &EvalOptions {
                max_record_bytes: 1000,
                ..EvalOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.0, Value::String("big".into()));
        assert!(err.1.contains("above the limit of 1000 bytes"), "{}", err.1);
    }

    #[test]
    fn records_without_output_or_with_bad_json_are_errors() {
        let opts = EvalOptions::default();
        let rec = |text: &str| RawRecord {
            line: 3,
            body: RawBody::Bytes(text.as_bytes().to_vec()),
        };
        let (id, reason) = parse_record(&rec(r#"{"id": 7}"#), &opts).unwrap_err();
        assert_eq!(
            (id, reason.as_str()),
            (Value::from(7), "line 3: record has no `output` field")
        );
        let (id, reason) = parse_record(&rec(r#"{"id": "q", "output": "#), &opts).unwrap_err();
        assert_eq!(id, Value::from("q"));
        assert!(reason.starts_with("line 3: not valid JSON"), "{reason}");
        let bad = RawRecord {
            line: 1,
            body: RawBody::Bytes(b"{\"id\": 1, \"output\": \"\xff\"}".to_vec()),
        };
        let (id, reason) = parse_record(&bad, &opts).unwrap_err();
        assert_eq!(id, Value::from(1));
        assert!(reason.contains("not valid UTF-8"), "{reason}");
    }

    #[test]
    fn structured_outputs_are_evaluated_as_json_text() {
        let rec = RawRecord {
            line: 1,
            body: RawBody::Bytes(br#"{"output": {"a": 1}}"#.to_vec()),
        };
        let input = parse_record(&rec, &EvalOptions::default()).unwrap();
        assert_eq!(input.output, r#"{"a":1}"#);
    }
}
