//! Resuming a run (`eval --resume`): the result records a previous run of the
//! same pack on the same input already wrote are read alongside the input's
//! first records, checked against them, and counted in the summary (and the
//! JUnit cases) as if evaluated now; evaluation goes on after the last one.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use super::record::parse_record;
use super::{Batch, Options, RecordReader};
use crate::json::Json;
use crate::pack::Pack;
use crate::report::{ExtractionInfo, Field, Issue, MetricResult, Report, Status};
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

/// What [`skip_kept`] leaves to evaluate: the rest of the batch the last kept
/// record was in.
pub(super) struct Skipped {
    pub leftover: Option<Batch>,
    pub kept: u64,
}

/// Reads the kept result records one by one with the input's records, checks
/// that each is this pack's result for that input record (same `revision`,
/// same `line` and `id`), and adds it to `summary` (and its case to `junit`).
pub(super) fn skip_kept<R: BufRead>(
    pack: &Pack,
    batches: &mut RecordReader<R>,
    kept: &mut dyn BufRead,
    summary: &mut Summary,
    mut junit: Option<&mut (dyn Write + '_)>,
    options: &Options,
) -> Result<Skipped, KeptError> {
    let mut current: Option<(Batch, usize)> = None;
    let mut count = 0u64;
    let mut text = String::new();
    loop {
        text.clear();
        match kept.read_line(&mut text) {
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
        let record: Map<String, Value> = serde_json::from_str(text.trim_end())
            .map_err(|err| fail(format!("is not a result record ({err})")))?;
        if count == 1 {
            check_fields(&record, options).map_err(fail)?;
        }
        // The input record at the same position.
        let (line, id) = loop {
            if let Some((batch, index)) = &mut current {
                if let Some(raw) = batch.records().nth(*index) {
                    *index += 1;
                    let id = match parse_record(&raw, options) {
                        Ok((input, _)) => input.id,
                        Err(err) => err.id,
                    };
                    break (raw.line, id);
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
        let report = report_of(record, line, id);
        summary.add(&report);
        if let Some(junit) = junit.as_deref_mut() {
            let mut case = Vec::new();
            crate::junit::write_report_case(&mut case, &report, pack.label());
            junit.write_all(&case).map_err(|err| KeptError {
                record: count,
                message: format!("cannot write its JUnit case: {err}"),
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
    let wanted: Vec<&str> = Field::ALL
        .iter()
        .filter(|f| options.result_fields.has(**f))
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
        Some(revision) if revision == pack.revision => {}
        other => {
            return Err(format!(
                "was written by pack revision {}, not {} (this pack as loaded, with its --set overrides): evaluate the data set again without --resume",
                other.map_or_else(|| "(none)".to_owned(), ToOwned::to_owned),
                pack.revision
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
    Report {
        id,
        line: Some(line),
        status,
        passed: status == Status::Pass,
        score: take("score").as_f64(),
        metrics: serde_json::from_value::<BTreeMap<String, MetricResult>>(take("metrics"))
            .unwrap_or_default(),
        issues: serde_json::from_value::<Vec<Issue>>(take("issues")).unwrap_or_default(),
        extraction: serde_json::from_value::<Option<ExtractionInfo>>(take("extraction"))
            .unwrap_or_default(),
        json: take("json").into(),
        feedback: text(take("feedback")),
        error: text(take("error")),
        pack: text(take("pack")).unwrap_or_default(),
        revision: text(take("revision")).unwrap_or_default(),
    }
}
