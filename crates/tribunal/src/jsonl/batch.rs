//! What a batch ([`run_into`](super::run_into), `Engine::run`) does besides
//! judging each record, as a front end sets it: what it writes beside each
//! result, what it keeps of each result written, the results an unfinished
//! run kept, and who is told of progress.

use super::{Options, RawRecord};
use crate::json::Json;
use crate::pipeline::Input;
use crate::report::Report;

/// What a batch does besides judging each record: its options, what a front
/// end writes beside each result, what it keeps of each result written, the
/// results kept from an earlier run to resume, and who is told of progress.
#[non_exhaustive]
pub struct Batch<'a> {
    /// The run's options (jobs, field names, the record size limit, ...).
    pub options: &'a Options,
    /// What is written beside each result (a JUnit case, a log line).
    pub beside: Option<Beside<'a>>,
    /// What is kept of each result written, handed to the sink with the
    /// results (the command line's resume checks).
    pub seal: Option<&'a SealFn>,
    /// The results an unfinished run kept, checked instead of judged again.
    pub resume: Option<&'a mut dyn Resume>,
    /// Told after each batch of records how many were written.
    pub on_records: &'a mut dyn FnMut(u64),
}

impl std::fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("options", self.options)
            .finish_non_exhaustive()
    }
}

impl<'a> Batch<'a> {
    /// A batch with `options` and nothing beside.
    pub fn new(options: &'a Options, on_records: &'a mut dyn FnMut(u64)) -> Self {
        Self {
            options,
            beside: None,
            seal: None,
            resume: None,
            on_records,
        }
    }

    /// Writes what `beside` makes of each record beside its result.
    #[must_use]
    pub fn beside(mut self, beside: Option<Beside<'a>>) -> Self {
        self.beside = beside;
        self
    }

    /// Keeps what `seal` makes of each result written (see [`SealFn`]).
    #[must_use]
    pub fn seal(mut self, seal: Option<&'a SealFn>) -> Self {
        self.seal = seal;
        self
    }

    /// Resumes after the results `resume` kept (see [`Resume`]).
    #[must_use]
    pub fn resume(mut self, resume: Option<&'a mut dyn Resume>) -> Self {
        self.resume = resume;
        self
    }
}

/// What a front end writes for each result record beside the results (the
/// CLI's JUnit test cases, a server's decision log): made by `write` on the
/// worker threads from the report and the record's input (`None` for a line
/// that could not be read, and for the kept records of a resumed run, which
/// get theirs too), written to `out` in input order.
pub struct Beside<'a> {
    /// Where it goes.
    pub out: &'a mut dyn std::io::Write,
    /// What it is for one record.
    pub write: &'a BesideFn,
}

impl std::fmt::Debug for Beside<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Beside")
    }
}

/// Appends what is written beside one result record.
pub type BesideFn = dyn Fn(&Report, Option<&Input>, &mut Vec<u8>) + Sync;

/// Appends what a front end keeps of one result written: made on the worker
/// threads from the input line it was judged from and the result line as
/// written (without its newline), and handed to the sink with the batch's
/// result lines ([`ResultSink::write_results`](super::ResultSink::write_results)).
/// The command line keeps a hash of both, which a resumed run checks.
pub type SealFn = dyn Fn(&RawRecord<'_>, &[u8], &mut Vec<u8>) + Sync;

/// The results an unfinished run kept (`eval --resume`), checked instead of
/// judged again. Before judging anything, the runner asks for the next kept
/// result and hands it the input record at its position, until none is left;
/// it judges the input from the first record without one. Each kept result
/// counts in the summary, and gets what [`Beside`] writes, as if judged now.
pub trait Resume {
    /// Whether a kept result is left (read here); an error when the kept
    /// results cannot be read.
    fn next_kept(&mut self) -> Result<bool, String>;

    /// The kept result [`next_kept`](Self::next_kept) read is for `input`,
    /// whose id is `id` (as its result record would have it): its report; an
    /// error when it is not this pack's result for that record.
    fn check(&mut self, input: &RawRecord<'_>, id: &Json) -> Result<Report, String>;
}
