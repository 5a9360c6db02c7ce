//! The JSONL batch runner (`tribunal eval`): JSONL records in, one result
//! record out per input record, in input order, evaluated in parallel with flat
//! memory.
//!
//! Every input line that is not blank yields a result: a line that is not UTF-8,
//! not JSON, not an object, has no `output`, or is above the size limit becomes
//! an `ERROR` record with the reason, and the run goes on.
//!
//! ```
//! # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
//! use tribunal::{jsonl, Pack, Status};
//!
//! let pack = Pack::load("rules/ksi-emission")?;
//! let input = concat!(
//!     r#"{"id": 1, "output": "{\"event\": \"agent:status\", \"data\": {}}"}"#, "\n",
//!     "not json\n",
//! );
//! let mut results = Vec::new();
//! let summary = jsonl::run(&pack, input.as_bytes(), &mut results, &jsonl::Options::default(), |_| {})?;
//! assert_eq!(summary.records, 2);
//! assert_eq!(summary.count(Status::Pass), 1);
//! assert_eq!(summary.count(Status::Error), 1);
//! let lines: Vec<&str> = std::str::from_utf8(&results).unwrap().lines().collect();
//! assert!(lines[1].contains("line 2: not valid JSON"));
//! # Ok::<(), tribunal::Error>(())
//! ```

use std::io::{self, BufRead, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::extract::Written;
use crate::pack::Pack;
use crate::pipeline::Input;
use crate::report::{Fields, Issue, Report, Status};
use crate::summary::{BatchIssues, Digest};

mod batch;
mod reader;
mod record;
#[cfg(feature = "fuzzing")]
pub(crate) use record::check_fast_record_reader;
mod resume;
pub use crate::summary::{IssueCounts, ScoreStats, Summary};
pub use batch::{Batch, Beside, BesideFn, Resume, SealFn};
pub(crate) use reader::{Lines, RecordReader};
pub use reader::{RawBody, RawRecord};
use record::parse_record;
pub use resume::KeptError;

/// Where a run's result records go: any writer, or a result file that also
/// keeps what the batch's [`SealFn`] makes of each (the command line's resume
/// checks).
pub trait ResultSink {
    /// Writes a batch's result lines, and what the batch's seal made of them
    /// (empty without one).
    fn write_results(&mut self, lines: &[u8], sealed: &[u8]) -> io::Result<()>;
    /// The first `records` results were kept from an unfinished run (checked
    /// by the batch's [`Resume`]), before any line is written.
    fn kept(&mut self, _records: u64) -> io::Result<()> {
        Ok(())
    }
    /// Flushes what was written.
    fn flush(&mut self) -> io::Result<()>;
}

/// A writer as a [`ResultSink`] without checks (an API call's results: the
/// engine's batch `run` into a buffer).
#[derive(Debug)]
pub struct Plain<'a, W>(pub &'a mut W);

impl<W: Write> ResultSink for Plain<'_, W> {
    fn write_results(&mut self, lines: &[u8], _sealed: &[u8]) -> io::Result<()> {
        self.0.write_all(lines)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Default limit on one input record (one JSONL line): 4 MiB.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of an oversized line kept to recover its id for the error record.
const OVERSIZE_PREFIX: usize = 4096;

/// Names of the input fields (remappable with `--id-field` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames {
    /// The record's id, echoed in its result (`--id-field`; default `id`).
    pub id: String,
    /// The model output to evaluate (`--output-field`; default `output`).
    pub output: String,
    /// The ground truth, if any (`--expected-field`; default `expected`).
    pub expected: String,
    /// Anything else the components may read (`--meta-field`; default `meta`).
    pub meta: String,
    /// An agent's transcript (`--messages-field`; default `messages`): judged
    /// with `output`, or instead of it (then on its last assistant turn).
    pub messages: String,
}

impl FieldNames {
    /// The names, in the order a record's members are read.
    pub(crate) fn all(&self) -> [&str; 5] {
        [
            &self.id,
            &self.output,
            &self.expected,
            &self.meta,
            &self.messages,
        ]
    }
}

impl Default for FieldNames {
    fn default() -> Self {
        Self {
            id: "id".into(),
            output: "output".into(),
            expected: "expected".into(),
            meta: "meta".into(),
            messages: "messages".into(),
        }
    }
}

/// Options of a batch run. Start from `Options::default()` and set fields
/// (non-exhaustive: options may be added without breaking callers).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    /// A longer input line becomes an `ERROR` record (`--max-record-bytes`).
    pub max_record_bytes: usize,
    /// Where in an input record its fields are.
    pub fields: FieldNames,
    /// Which fields of each result record to write (`--fields`; default all).
    pub result_fields: Fields,
    /// When set (by a signal handler, say), no more input is read: the records
    /// read so far are evaluated and written, and the run ends early with
    /// [`Summary::interrupted`] set.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            jobs: 0,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            fields: FieldNames::default(),
            result_fields: Fields::ALL,
            stop: None,
        }
    }
}

/// A line that cannot be evaluated: why, and the id recovered from it (`null`
/// when none could be), for its `ERROR` result.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// The record's id, as far as it could be read.
    pub id: crate::json::Json,
    /// Why, starting with `line N:`, as the `eval` result's `error` says it.
    pub message: String,
}

impl LineError {
    pub(crate) fn new(id: crate::json::Json, message: String) -> Self {
        Self { id, message }
    }
}

/// One input line (without its newline) as the record `eval` reads from it,
/// with the default field names and record size limit: the same `Input`, the
/// same warning (e.g. lone surrogate escapes read as U+FFFD, to add first to
/// the result's issues), the same error. `line` is its 1-based number, for
/// messages.
pub fn read_line(text: &str, line: u64) -> ReadRecord {
    static DEFAULT: std::sync::OnceLock<Options> = std::sync::OnceLock::new();
    read_record(text.as_bytes(), line, DEFAULT.get_or_init(Options::default))
}

/// [`read_line`] with the field names and the record size limit of `options`,
/// from bytes (a line that is not UTF-8 is an error saying where, as in
/// `eval`).
pub fn read_record(bytes: &[u8], line: u64, options: &Options) -> ReadRecord {
    let body = if bytes.len() > options.max_record_bytes {
        RawBody::TooLarge {
            size: bytes.len(),
            prefix: &bytes[..OVERSIZE_PREFIX.min(bytes.len())],
        }
    } else {
        RawBody::Bytes(bytes)
    };
    parse_record(&RawRecord { line, body }, options)
}

/// A record given to an API call rather than read from a file (a request's
/// body, a binding's argument): [`read_record`] with the default field names
/// and no size limit of its own (the caller limits what it takes), its
/// errors without the `line 1: ` a file's line numbers put first. The one
/// place that prefix is left out, for every front end.
pub fn read_call_record(bytes: &[u8]) -> ReadRecord {
    // (Made once: the field names are five strings.)
    static UNLIMITED: std::sync::OnceLock<Options> = std::sync::OnceLock::new();
    let options = UNLIMITED.get_or_init(|| Options {
        max_record_bytes: usize::MAX,
        ..Options::default()
    });
    read_record(bytes, 1, options).map_err(|mut err| {
        if let Some(rest) = err.message.strip_prefix("line 1: ") {
            err.message = rest.to_owned();
        }
        err
    })
}

/// A record read for evaluation: its `Input` and a warning about how it was
/// read, to put first in its result's issues; or why it cannot be evaluated.
pub type ReadRecord = Result<(Input, Option<Issue>), LineError>;

/// One result as `eval` writes it: the result record, and the members of it a
/// caller reads most, without parsing it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Evaluated {
    /// The result record, every field ([`Fields::ALL`]): one line of JSON
    /// without its newline, byte for byte the line `eval` writes.
    pub record: String,
    /// The record's `status`.
    pub status: Status,
    /// The record's `passed`.
    pub passed: bool,
    /// The record's `score`.
    pub score: Option<f64>,
    /// The record's `line`.
    pub line: Option<u64>,
    /// The record's `feedback`.
    pub feedback: Option<String>,
    /// The record's `error`.
    pub error: Option<String>,
    /// The record's `error_kind`.
    pub error_kind: Option<crate::report::ErrorKind>,
}

/// Evaluates `records` as one batch, as `eval` evaluates a batch of lines (see
/// [`Pack::evaluate_many`]), into their result records, in order. A record
/// that could not be read is its `ERROR` result. The `n`th record (from 0) is
/// numbered `first_line + n` in its result; `None` leaves `line` out.
///
/// Faster than writing each [`Report`] of [`Pack::evaluate_many`]: when none
/// of the pack's steps reads the extracted JSON, it is never built as a value
/// (its text is written into the record).
///
pub(crate) fn evaluate_records(
    pack: &Pack,
    records: &[ReadRecord],
    first_line: Option<u64>,
) -> Vec<Evaluated> {
    let lines = (0..).map(|n| first_line.map(|first| first.saturating_add(n)));
    let mut evaluated = Vec::with_capacity(records.len());
    // Each record is written here, then copied to a string of its size.
    let mut buffer = Vec::new();
    reports(pack, records, lines, None, |report, written| {
        evaluated.push(Evaluated::of(report, written.as_ref(), &mut buffer));
    });
    evaluated
}

/// One record read by [`read_record`], judged as `eval` judges a line (see
/// [`evaluate_records`]; its note first in its issues), by the caller's
/// `deadline` too when there is one (a server's request deadline: a step still
/// running when it passes stops there, and the record is `ERROR`, of kind
/// `timeout`, saying the caller's deadline passed): its report,
/// and its result record, every field, without `line` (the bytes of the line
/// `eval` writes, less that member), appended to `out`. A report whose
/// extracted JSON was only written (see [`evaluate_records`]) has `json`
/// `null`; the record has it.
pub fn evaluate_record_into(
    pack: &Pack,
    input: Input,
    note: Option<Issue>,
    deadline: Option<std::time::Instant>,
    out: &mut Vec<u8>,
) -> Report {
    judge_record(pack, input, note, deadline, out, &[])
}

/// [`evaluate_record_into`], the record ending with the string members
/// `tail` (the engine's answer to a request: `bundle`, `decision_id`).
pub(crate) fn judge_record(
    pack: &Pack,
    input: Input,
    note: Option<Issue>,
    deadline: Option<std::time::Instant>,
    out: &mut Vec<u8>,
    tail: &[(&'static str, &str)],
) -> Report {
    let records = [Ok((input, note))];
    let mut judged = None;
    reports(
        pack,
        &records,
        std::iter::once(None),
        deadline,
        |report, written| {
            report.write_record(out, Fields::ALL, written.as_ref(), tail);
            judged = Some(report.take());
        },
    );
    judged.expect("one report per record")
}

impl Evaluated {
    /// The report's result, its record written through `buffer` (with
    /// `written` as the `json` field's text, when the report left it out).
    fn of(report: &mut Report, written: Option<&Written>, buffer: &mut Vec<u8>) -> Self {
        buffer.clear();
        report.write_fields_with(buffer, Fields::ALL, written);
        Self {
            record: std::str::from_utf8(buffer)
                .expect("the writer writes UTF-8")
                .to_owned(),
            status: report.status(),
            passed: report.passed(),
            score: report.score,
            line: report.line,
            error: report.error().map(str::to_owned),
            error_kind: report.error_kind(),
            feedback: report.feedback.take(),
        }
    }
}

impl From<Report> for Evaluated {
    /// The report's result, its record written.
    fn from(mut report: Report) -> Self {
        Self::of(&mut report, None, &mut Vec::new())
    }
}

/// Hands `each` the report of each record in order, numbered by `lines`, with
/// the text of its extracted JSON when the report leaves the value out (see
/// `Pack::evaluate_for_records`). A note on how a record was read comes first
/// in its issues; a record that could not be read is its `ERROR` report.
fn reports(
    pack: &Pack,
    records: &[ReadRecord],
    mut lines: impl Iterator<Item = Option<u64>>,
    deadline: Option<std::time::Instant>,
    mut each: impl FnMut(&mut Report, Option<Written>),
) {
    let inputs: Vec<&Input> = records
        .iter()
        .filter_map(|record| record.as_ref().ok().map(|(input, _)| input))
        .collect();
    let mut records = records.iter();
    // The reports of the records that could not be read, up to the next one
    // that was read: its note and line.
    let mut unread = |each: &mut dyn FnMut(&mut Report, Option<Written>)| {
        for record in records.by_ref() {
            let line = lines.next().flatten();
            match record {
                Ok((_, note)) => return Some((note.clone(), line)),
                Err(err) => {
                    let mut report = pack.errored(
                        err.id.clone(),
                        crate::report::ErrorKind::Input,
                        err.message.clone(),
                    );
                    report.line = line;
                    each(&mut report, None);
                }
            }
        }
        None
    };
    pack.evaluate_for_records(&inputs, deadline, |report, written| {
        let (note, line) = unread(&mut each).expect("one read record per report");
        report.note_first(note);
        report.line = line;
        each(report, written);
    });
    let rest = unread(&mut each);
    debug_assert!(rest.is_none(), "one report per read record");
}

/// What the thread that writes gets for a batch: the result lines, ready to
/// write, and the few figures the summary needs.
struct BatchResult {
    lines: Vec<u8>,
    /// What the batch's seal made of each result written.
    sealed: Vec<u8>,
    /// What the front end writes beside each record (see [`Beside`]).
    beside: Vec<u8>,
    digests: Vec<Digest>,
    /// Metric scores, `metric_count` per record, in pipeline order.
    metric_scores: Vec<Option<f64>>,
    /// The batch's issues per rule.
    issues: BatchIssues,
    /// A record of the batch was stopped by its runtime's interrupt:
    /// it and the records after it are left out (not judged: a `--resume`
    /// evaluates them).
    cut: bool,
}

/// Evaluates a batch into its result lines (and what `beside` makes of each).
fn evaluate_batch(
    pack: &Pack,
    batch: &Lines,
    options: &Options,
    metric_count: usize,
    beside: Option<&BesideFn>,
    seal: Option<&SealFn>,
) -> BatchResult {
    let mut result = BatchResult {
        lines: Vec::with_capacity(batch.data.len() * 2 + 256 * batch.len()),
        sealed: Vec::with_capacity(if seal.is_some() { batch.len() * 40 } else { 0 }),
        beside: Vec::new(),
        digests: Vec::with_capacity(batch.len()),
        metric_scores: Vec::with_capacity(batch.len() * metric_count),
        issues: BatchIssues::default(),
        cut: false,
    };
    // Parse every record first so the pack can evaluate the batch as one
    // (metrics prepare their work for all its records at once).
    let records: Vec<RawRecord<'_>> = batch.records().collect();
    let read: Vec<ReadRecord> = records
        .iter()
        .map(|record| parse_record(record, options))
        .collect();
    let lines = records.iter().map(|record| Some(record.line));
    let mut raw = records.iter();
    let mut inputs = read
        .iter()
        .map(|record| record.as_ref().ok().map(|(input, _)| input));
    reports(pack, &read, lines, None, |report, written| {
        let input = inputs.next().flatten();
        if result.cut || pack.interrupted() && was_interrupted(report) {
            result.cut = true;
            return;
        }
        // Straight into the batch's buffer: no string per record.
        let start = result.lines.len();
        report.write_fields_with(&mut result.lines, options.result_fields, written.as_ref());
        if let (Some(seal), Some(raw)) = (seal, raw.next()) {
            seal(raw, &result.lines[start..], &mut result.sealed);
        }
        result.lines.push(b'\n');
        if let Some(beside) = beside {
            beside(report, input, &mut result.beside);
        }
        result.digests.push(Digest::of(report));
        result.issues.add(report);
        result.metric_scores.extend(pack.metric_names().map(|name| {
            report
                .metrics
                .get(name)
                .and_then(crate::report::MetricResult::value)
        }));
    });
    result
}

/// Whether the record was stopped by an interrupt rather than judged.
fn was_interrupted(report: &Report) -> bool {
    report.error_kind() == Some(crate::report::ErrorKind::Timeout)
}

/// Streams `input` through the pack, writing one result record (a JSON line) per
/// input record to `out`, in input order, on `options.jobs` threads (the calling
/// thread is one of them, and the only one that writes to `out`); `on_records`
/// is told after each batch how many records were written (progress). Returns
/// the run's [`Summary`]; fails only when reading or writing fails.
pub fn run<R, W, P>(
    pack: &Pack,
    input: R,
    out: &mut W,
    options: &Options,
    on_records: P,
) -> io::Result<Summary>
where
    R: BufRead + Send,
    W: Write,
    P: FnMut(u64),
{
    let mut on_records = on_records;
    run_into(
        pack,
        input,
        &mut Plain(out),
        Batch::new(options, &mut on_records),
    )
    .map_err(|err| match err {
        RunError::Io(err) => err,
        // Only a resumed run reads kept results.
        RunError::Kept(err) => io::Error::new(io::ErrorKind::InvalidData, err.to_string()),
    })
}

/// Why a run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The results (or JUnit cases) could not be written, or the input read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The kept results of a resumed run do not match the pack or the input.
    #[error("cannot resume: {0}")]
    Kept(#[from] KeptError),
}

/// [`run`] with what `batch` adds: what its `beside` makes of each record,
/// written in input order; what its `seal` makes of each result, handed to
/// `out` with the results; and with its `resume` (the results a previous,
/// unfinished run kept), the input's first records are not judged again:
/// each is checked against its kept result, which counts in the summary as
/// if judged now, and `out` gets only the results after them.
pub fn run_into<R, W>(
    pack: &Pack,
    input: R,
    out: &mut W,
    batch: Batch<'_>,
) -> Result<Summary, RunError>
where
    R: BufRead + Send,
    W: ResultSink + ?Sized,
{
    let Batch {
        options,
        mut beside,
        seal,
        resume,
        on_records,
    } = batch;
    let names: Vec<String> = pack.metric_names().map(str::to_owned).collect();
    let metric_count = names.len();
    let mut summary = Summary::new(names);
    let mut write_error: Option<io::Error> = None;
    let mut batches =
        RecordReader::new(input, options.max_record_bytes).stopping_on(options.stop.clone());
    let mut leftover = None;
    if let Some(resume) = resume {
        let skipped =
            resume::skip_kept(&mut batches, resume, &mut summary, beside.as_mut(), options)?;
        out.kept(skipped.kept)?;
        summary.resumed = skipped.kept;
        on_records(skipped.kept);
        leftover = skipped.leftover;
    }
    let write_beside = beside.as_ref().map(|b| b.write);
    let mut cut = false;
    {
        let mut rest = leftover.into_iter().chain(batches.by_ref());
        pack.runtime.ordered_map(
            &mut rest,
            options.jobs,
            1,
            |batch| evaluate_batch(pack, &batch, options, metric_count, write_beside, seal),
            |result| {
                // Past a record stopped by an interrupt, nothing is written:
                // the results stay a prefix of the input, for `--resume`.
                if cut || result.digests.is_empty() && !result.cut {
                    return; // (an empty batch: the input paused)
                }
                cut = result.cut;
                if write_error.is_none() {
                    if let Err(err) = out.write_results(&result.lines, &result.sealed) {
                        write_error = Some(err);
                    }
                }
                if let (None, Some(beside)) = (&write_error, beside.as_mut()) {
                    if let Err(err) = beside.out.write_all(&result.beside) {
                        write_error = Some(err);
                    }
                }
                for (i, digest) in result.digests.iter().enumerate() {
                    let scores = &result.metric_scores[i * metric_count..(i + 1) * metric_count];
                    summary.add_digest(digest, scores);
                }
                on_records(result.digests.len() as u64);
                summary.add_issues(result.issues);
            },
        );
    }
    summary.interrupted = batches.stopped || cut;
    if let Some(err) = write_error {
        return Err(err.into());
    }
    out.flush()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::reader::BATCH_RECORDS;
    use super::*;
    use std::fmt::Write as _;
    use std::io::Read;

    fn owned(input: &str, max: usize) -> Vec<(u64, String)> {
        records_of(RecordReader::new(input.as_bytes(), max))
    }

    #[test]
    fn reader_skips_blank_lines_and_counts_them() {
        let records = owned("{\"a\":1}\n\n  \n{\"b\":2}\r\n", 100);
        assert_eq!(
            records,
            [(1, "{\"a\":1}".to_owned()), (4, "{\"b\":2}".to_owned())]
        );
    }

    #[test]
    fn reader_batches_many_lines_in_order() {
        let text = (0..1000).fold(String::new(), |mut text, i| {
            let _ = writeln!(text, "{{\"i\": {i}}}");
            text
        });
        let batches: Vec<Lines> = RecordReader::new(text.as_bytes(), 100).collect();
        assert!(batches.len() > 1);
        let lines: Vec<u64> = batches
            .iter()
            .flat_map(|b| b.records().map(|r| r.line).collect::<Vec<_>>())
            .collect();
        assert_eq!(lines, (1..=1000).collect::<Vec<u64>>());
    }

    const BOM: &[u8] = b"\xEF\xBB\xBF";

    /// Gives its bytes a few at a time (1 to 13 a read), or fails after
    /// `fail_at` bytes.
    struct Trickle<'a> {
        bytes: &'a [u8],
        at: usize,
        step: usize,
        fail_at: Option<usize>,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.fail_at.is_some_and(|fail| self.at >= fail) {
                return Err(io::Error::other("the disk went away"));
            }
            self.step = self.step % 13 + 1;
            let n = self.step.min(buf.len()).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// What the reader must make of `input`, written the plain way: split at
    /// newlines, a last line without one, `\r` before a newline dropped (when
    /// the line is within the limit), blank lines skipped but counted, a line
    /// above `max` kept as its size and first bytes, a first line's byte order
    /// mark dropped.
    fn expected(input: &[u8], max: usize) -> Vec<(u64, String)> {
        let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let mut out = Vec::new();
        for (i, line) in lines.into_iter().enumerate() {
            let mut line = line;
            if line.len() <= max + 1 && line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let size = line.len();
            let kept = if size > max {
                &line[..size.min(max + 1).min(OVERSIZE_PREFIX)]
            } else {
                line
            };
            if size <= max && kept.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let kept = if i == 0 {
                kept.strip_prefix(BOM).unwrap_or(kept)
            } else {
                kept
            };
            let text = String::from_utf8_lossy(kept).into_owned();
            out.push((
                i as u64 + 1,
                if size > max {
                    format!("TOO LARGE {size} {}", kept.len())
                } else {
                    text
                },
            ));
        }
        out
    }

    fn records_of(batches: impl Iterator<Item = Lines>) -> Vec<(u64, String)> {
        batches
            .flat_map(|batch| {
                assert!(batch.len() <= BATCH_RECORDS);
                batch
                    .records()
                    .map(|r| {
                        let text = match r.body {
                            RawBody::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                            RawBody::TooLarge { size, prefix } => {
                                format!("TOO LARGE {size} {}", prefix.len())
                            }
                            RawBody::ReadError(e) => format!("READ ERROR {e}"),
                        };
                        (r.line, text)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn reader_agrees_with_plain_splitting_whatever_the_reads() {
        // Generated inputs: lines of every length around the limit, blank
        // lines, CRLF, a byte order mark, with and without a last newline,
        // read whole and a few bytes at a time.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..300 {
            let max = [5, 40, 100, 5000][round % 4];
            let mut input = Vec::new();
            if next() % 4 == 0 {
                input.extend_from_slice(BOM);
            }
            for _ in 0..next() % 700 {
                let len = match next() % 10 {
                    0 => max + (next() % 3) as usize,
                    1 => max * 3 + (next() % 9000) as usize,
                    2 => 0,
                    _ => (next() % 60) as usize,
                };
                input.extend((0..len).map(|i| b"{\"a\": 1}  \t\r xyz"[(i + len) % 16]));
                if next() % 5 == 0 {
                    input.push(b'\r');
                }
                input.push(b'\n');
            }
            if next() % 2 == 0 {
                input.extend_from_slice(b"{\"last\": true}");
            }
            let want = expected(&input, max);
            assert_eq!(
                records_of(RecordReader::new(&input[..], max)),
                want,
                "round {round}"
            );
            let trickle = Trickle {
                bytes: &input,
                at: 0,
                step: round,
                fail_at: None,
            };
            assert_eq!(
                records_of(RecordReader::new(
                    io::BufReader::with_capacity(7, trickle),
                    max
                )),
                want,
                "round {round}, a few bytes a read"
            );
        }
    }

    #[test]
    fn a_read_error_ends_the_input_with_an_error_record() {
        let text = (1..=600).fold(String::new(), |mut text, i| {
            let _ = writeln!(text, "{{\"i\": {i}}}");
            text
        });
        let fail_at = text.find("{\"i\": 451}").unwrap() + 3;
        let trickle = Trickle {
            bytes: text.as_bytes(),
            at: 0,
            step: 0,
            fail_at: Some(fail_at),
        };
        let records = records_of(RecordReader::new(
            io::BufReader::with_capacity(7, trickle),
            100,
        ));
        assert_eq!(records.len(), 451);
        assert_eq!(records[449], (450, "{\"i\": 450}".to_owned()));
        assert_eq!(
            records[450],
            (451, "READ ERROR the disk went away".to_owned())
        );
        // Within a line above the limit, read past at the time.
        let text = format!("{{\"a\": 1}}\n{}\n{{\"b\": 2}}\n", "x".repeat(50_000));
        let trickle = Trickle {
            bytes: text.as_bytes(),
            at: 0,
            step: 0,
            fail_at: Some(30_000),
        };
        assert_eq!(
            records_of(RecordReader::new(
                io::BufReader::with_capacity(7, trickle),
                100
            )),
            [
                (1, "{\"a\": 1}".to_owned()),
                (2, "READ ERROR the disk went away".to_owned())
            ]
        );
    }

    #[test]
    fn reader_caps_long_lines() {
        let long = format!(
            "{{\"id\": \"big\", \"output\": \"{}\"}}\nnext\n",
            "x".repeat(10_000)
        );
        let size = long.find('\n').unwrap();
        let records = owned(&long, 1000);
        assert_eq!(records[0], (1, format!("TOO LARGE {size} 1001")));
        assert_eq!(records[1], (2, "next".to_owned()));
        let batch = RecordReader::new(long.as_bytes(), 1000).next().unwrap();
        let record = batch.records().next().unwrap();
        let options = Options {
            max_record_bytes: 1000,
            ..Options::default()
        };
        let err = parse_record(&record, &options).unwrap_err();
        assert_eq!(err.id, crate::json::Json::from("big"));
        assert!(
            err.message.contains("above the limit of 1000 bytes"),
            "{}",
            err.message
        );
    }

    fn rec(text: &[u8]) -> RawRecord<'_> {
        RawRecord {
            line: 3,
            body: RawBody::Bytes(text),
        }
    }

    #[test]
    fn records_without_output_or_with_bad_json_are_errors() {
        let opts = Options::default();
        let LineError {
            id,
            message: reason,
        } = parse_record(&rec(br#"{"id": 7}"#), &opts).unwrap_err();
        assert_eq!(
            (id, reason.as_str()),
            (
                crate::json::Json::from(7),
                "line 3: record has no `output` field (nor `messages`, an agent's transcript judged on its last assistant turn)"
            )
        );
        let LineError {
            id,
            message: reason,
        } = parse_record(&rec(br#"{"id": "q", "output": "#), &opts).unwrap_err();
        assert_eq!(id, crate::json::Json::from("q"));
        assert!(reason.starts_with("line 3: not valid JSON"), "{reason}");
        let LineError {
            id,
            message: reason,
        } = parse_record(&rec(b"{\"id\": 1, \"output\": \"\xff\"}"), &opts).unwrap_err();
        assert_eq!(id, crate::json::Json::from(1));
        assert!(reason.contains("not valid UTF-8"), "{reason}");
    }

    #[test]
    fn structured_outputs_are_evaluated_as_json_text() {
        let (input, note) =
            parse_record(&rec(br#"{"output": {"a": 1}}"#), &Options::default()).unwrap();
        assert_eq!(input.output, r#"{"a":1}"#);
        assert_eq!(note, None);
    }

    #[test]
    fn lone_surrogates_are_read_as_replacement_characters_with_a_warning() {
        let (input, note) = parse_record(
            &rec(br#"{"id": 1, "output": "x\ud800y\udc00"}"#.as_slice()),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(input.output, "x\u{fffd}y\u{fffd}");
        let note = note.expect("a warning");
        assert_eq!(note.rule, "input");
        assert!(
            note.message.starts_with("line 3: lone UTF-16 surrogate"),
            "{note:?}"
        );
    }

    /// A pack whose steps never read the extracted JSON (ksi-emission) writes
    /// only its text: the records are those of its reports, whatever tier
    /// found the JSON and however it was written (escapes, exponents, a name
    /// given twice, a repaired document).
    #[test]
    fn records_of_a_pack_that_never_reads_the_json_are_its_reports() {
        let pack =
            Pack::load(crate::files::built_in_repository().join("rules/ksi-emission")).unwrap();
        assert!(pack.pipeline.json_unread);
        let outputs = [
            r#"{"event": "agent:status", "data": {"id": "e\u00e9", "n": 1E5, "x": -0.5e-3}}"#,
            r#"  {"event": "a", "event": "agent:spawn", "data": {"k": [1, {"k": 2, "k": 3}]}} "#,
            "Here it is:\n```json\n{\"event\": \"message:send\", \"data\": {\"t\": \"a\\\"b\\n\"}}\n```",
            r#"I emit {"event": "agent:status", "data": {"ok": true, "none": null}} now"#,
            r#"{"event": "agent:status", "data": {"open": [1, 2"#,
            "I would emit an agent:status event.",
            r#"[{"event": "x"}, {"event": "y"}]"#,
        ];
        let mut input = String::new();
        for (i, output) in outputs.iter().enumerate() {
            let line = serde_json::json!({"id": i, "output": output});
            writeln!(input, "{line}").unwrap();
        }
        // The same lines as `evaluate_records` takes them, and lines it reads
        // with a note or cannot read, in between: each is the line `eval`
        // writes for it.
        let extra = [
            r#"{"id": "s", "output": "x\ud800 {\"event\": \"a:b\", \"data\": {}}"}"#,
            "not json",
            r#"{"id": 9}"#,
        ];
        let lines: Vec<&str> = input.lines().chain(extra).collect();
        let records: Vec<ReadRecord> = (1..)
            .zip(&lines)
            .map(|(n, line)| read_line(line, n))
            .collect();
        let mut from_run = Vec::new();
        run(
            &pack,
            lines.join("\n").as_bytes(),
            &mut from_run,
            &Options::default(),
            |_| {},
        )
        .unwrap();
        let from_run = String::from_utf8(from_run).unwrap();
        let evaluated = evaluate_records(&pack, &records, Some(1));
        assert_eq!(evaluated.len(), lines.len());
        for (result, line) in evaluated.iter().zip(from_run.lines()) {
            assert_eq!(result.record, line);
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(result.status.as_str(), value["status"]);
            assert_eq!(result.score, value["score"].as_f64());
            assert_eq!(result.error.as_deref(), value["error"].as_str());
        }
        assert!(evaluated[outputs.len()]
            .record
            .contains("lone UTF-16 surrogate"));
        assert_eq!(evaluated[outputs.len() + 1].status, Status::Error);
        let unnumbered = evaluate_records(&pack, &records[..1], None);
        assert!(!unnumbered[0].record.contains("\"line\""));
        assert_records_are_reports(&pack, &outputs, "");
    }

    /// A pack whose steps read the extracted JSON copies the document's own
    /// text (less whitespace) into the record where it can: the records are
    /// still those of its reports, however the JSON was written, and when a
    /// postprocessor replaces it (scripted-fields normalises numbers).
    #[test]
    fn records_of_a_pack_that_reads_the_json_are_its_reports() {
        let documents = [
            r##"{"readme": "# a\n\nb \"c\" \\ d\t\r\b\f", "type_examples": {}, "check_logic": {}}"##,
            r#"{"readme": "slash \/ and \u00e9 and \u001f", "n": [1E5, 1e5, 1e+5, -0.5e-3, 0]}"#,
            r#"{"readme": "a", "readme": "b", "x": {"k": 1, "k": [2]}}"#,
            "{\n  \"readme\": \"x\",\n  \"type_examples\": {\"type1\": {\"yaml\": \"y\", \"behavior\": \"PASS: ok\"}}\n}",
            "Here:\n```json\n{\"readme\": \"a\\nb\", \"e\": \"\u{e9}\"}\n```",
            r#"I wrote {"readme": "in prose", "t": true, "f": false, "z": null} here"#,
            r#"{"readme": "cut short", "open": [1, 2"#,
            r#"["top", "level", {"array": []}]"#,
            "no JSON at all",
        ];
        for pack in ["rules/context-agent", "rules/json-eval"] {
            let pack = Pack::load(crate::files::built_in_repository().join(pack)).unwrap();
            assert!(!pack.pipeline.json_unread);
            assert_records_are_reports(&pack, &documents, "");
        }
        let pack =
            Pack::load(crate::files::built_in_repository().join("rules/scripted-fields")).unwrap();
        let outputs = [
            r#"{"sku": "C-1", "name": "Chair", "price": "1,299.00", "weight_kg": "14", "description": "A \"chair\".", "vendor": {"name": "SitWell"}}"#,
            r#"{"sku": "C-2", "name": "Chair", "price": 3, "weight_kg": 1E1, "description": "A\nchair.", "vendor": {"name": "SitWell"}}"#,
        ];
        let expected = r#", "expected": {"sku": "C-1", "name": "Chair", "price": 1299, "weight_kg": 14, "description": "A chair.", "vendor": {"name": "SitWell"}}"#;
        assert_records_are_reports(&pack, &outputs, expected);
    }

    /// The records `run` writes for `outputs` (each line's members after its
    /// output given by `more`) are those of `Pack::evaluate`'s reports, which
    /// write the JSON from its value.
    fn assert_records_are_reports(pack: &Pack, outputs: &[&str], more: &str) {
        let mut input = String::new();
        let mut expected = Vec::new();
        for (i, output) in outputs.iter().enumerate() {
            let line = format!(
                "{{\"id\": {i}, \"output\": {}{more}}}",
                serde_json::Value::from(*output)
            );
            let (read, _) = read_line(&line, i as u64 + 1).unwrap();
            let mut report = pack.evaluate(&read);
            report.line = Some(i as u64 + 1);
            report.write_json_line(&mut expected);
            writeln!(input, "{line}").unwrap();
        }
        let mut written = Vec::new();
        run(
            pack,
            input.as_bytes(),
            &mut written,
            &Options::default(),
            |_| {},
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(written).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_first_record_is_dropped() {
        let text = "\u{feff}{\"output\": \"a\"}\n\u{feff}{\"output\": \"b\"}\n";
        let batch = RecordReader::new(text.as_bytes(), 1 << 20).next().unwrap();
        let records: Vec<RawRecord<'_>> = batch.records().collect();
        let first = parse_record(&records[0], &Options::default());
        assert_eq!(first.unwrap().0.output, "a");
        // Only at the start of the input: further on it is an error, as any stray byte.
        assert!(parse_record(&records[1], &Options::default()).is_err());
    }
}
