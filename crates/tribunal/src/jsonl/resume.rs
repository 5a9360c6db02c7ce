//! Resuming a run: the kept results of an unfinished run are checked against
//! the input's first records (by the front end's [`Resume`]), counted in the
//! summary (and written beside) as if judged now; judging goes on after the
//! last one.

use std::io::BufRead;

use super::record::parse_record;
use super::{Beside, Lines, Options, RecordReader, Resume};
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

/// What [`skip_kept`] leaves to judge: the rest of the lines the last kept
/// record was in.
pub(super) struct Skipped {
    pub leftover: Option<Lines>,
    pub kept: u64,
}

/// Hands `resume` the input's records one by one, as long as it has kept
/// results, adding the report of each to `summary` (and writing what `beside`
/// makes of it).
pub(super) fn skip_kept<R: BufRead>(
    batches: &mut RecordReader<R>,
    resume: &mut dyn Resume,
    summary: &mut Summary,
    mut beside: Option<&mut Beside<'_>>,
    options: &Options,
) -> Result<Skipped, KeptError> {
    let mut current: Option<(Lines, usize)> = None;
    let mut count = 0u64;
    loop {
        let fail = |message: String| KeptError {
            record: count + 1,
            message,
        };
        if !resume.next_kept().map_err(fail)? {
            break;
        }
        // The input record at the same position.
        let report = loop {
            if let Some((lines, index)) = &mut current {
                if let Some(raw) = lines.record(*index) {
                    *index += 1;
                    let id = match parse_record(&raw, options) {
                        Ok((input, _)) => input.id,
                        Err(err) => err.id,
                    };
                    break resume.check(&raw, &id).map_err(fail)?;
                }
            }
            match batches.next() {
                Some(lines) => current = Some((lines, 0)),
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
        count += 1;
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
    let leftover = current.and_then(|(mut lines, index)| {
        lines.skip(index);
        (!lines.is_empty()).then_some(lines)
    });
    Ok(Skipped {
        leftover,
        kept: count,
    })
}
