//! Evaluating one record with a compiled pack: extraction ladder, then the
//! postprocessors in order (here), then the metrics; then score, status and
//! feedback (`verdict`). The record as given is `input`; its transcript and
//! the turns steps run on, `turns`.

use std::collections::BTreeMap;

use crate::json::Json;

use crate::codes;
use crate::component::{Context, EvalError, RecordMemo};
use crate::deadline::{Budget, Steps};
use crate::extract::{self, Document, Found, Tier, Written};
use crate::manifest::Scope;
use crate::pack::Pack;
use crate::report::{ErrorKind, ExtractionInfo, Issue, Report};
use crate::text::prefix_chars;

mod input;
mod turns;
mod verdict;

pub use input::{Input, MissingOutput};
use turns::{output_calls, proposed_calls, read_turns, targets};

/// Characters of the raw output quoted in the fallback warning.
const FALLBACK_QUOTE_CHARS: usize = 200;
/// Records [`Pack::evaluate_batch`] hands a worker (and metrics prepare for) at once.
const BATCH_RECORDS: usize = 32;

/// What the extraction makes of the document it finds.
#[derive(Debug, Clone, Copy)]
enum Make {
    /// Its value, for the steps and the report.
    Value,
    /// Only the text a result record writes for it (the report's `json` is then
    /// `null`): for a pack none of whose steps reads the value.
    Text,
    /// Its value, and that text too when it is the document's own text less
    /// whitespace (for a result record; dropped when a postprocessor replaces the
    /// value).
    Both,
}

/// A document a streaming session read whole, as the strict tier reads it
/// (see [`Pack::evaluate_within`]).
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The document's value.
    pub json: Json,
    /// Whether the contract's checks ran on it and found nothing.
    pub contract_clean: bool,
}

/// A record between the postprocessors and the metrics.
struct Staged {
    json: Json,
    /// The text a result record writes for `json`, when it was made (see
    /// [`Make`]).
    written: Option<Written>,
    extraction: ExtractionInfo,
    issues: Vec<Issue>,
    failure: Option<EvalError>,
    /// The record's transcript, read.
    turns: Option<Vec<crate::transcript::Turn>>,
    /// Without a transcript, an output that is a list of tool calls, as the
    /// one assistant turn that makes them (what steps see as the turns).
    output_calls: Option<Vec<crate::transcript::Turn>>,
    /// The assistant turns steps run on by themselves.
    runs: Vec<TurnRun>,
    /// What extensions build once for the record.
    memo: RecordMemo,
    /// What the record is judged as.
    judging: crate::component::Judging,
}

impl Staged {
    /// A record with its transcript read and nothing else done yet.
    fn begun(
        issues: Vec<Issue>,
        turns: Option<Vec<crate::transcript::Turn>>,
        runs: Vec<TurnRun>,
        memo: RecordMemo,
        judging: crate::component::Judging,
    ) -> Self {
        Staged {
            json: Json::Null,
            written: None,
            extraction: ExtractionInfo::none(),
            issues,
            failure: None,
            turns,
            output_calls: None,
            runs,
            memo,
            judging,
        }
    }
}

/// A record as the steps see it, apart from what they change: the input, its
/// turns, and what extensions build once for it.
#[derive(Clone, Copy)]
struct Record<'a> {
    input: &'a Input,
    turns: Option<&'a [crate::transcript::Turn]>,
    memo: &'a RecordMemo,
    /// What the record is judged as (the input's, or the caller's instead:
    /// `decide` judges a record as a proposal without copying it).
    judging: crate::component::Judging,
    /// The evaluation's time budget (its caller's deadline, the run's
    /// interrupt, the step running).
    budget: &'a Budget<'a>,
}

/// An assistant turn of a transcript record that steps run on by themselves
/// (`scope: assistant_turns` or `last`): its text extracted on its own, and
/// what those steps made of it.
struct TurnRun {
    /// Its index in the record's turns.
    turn: usize,
    json: Json,
    extraction: ExtractionInfo,
    /// The scores of the metrics run on it, each with its weight.
    scores: Vec<(f64, f64)>,
}

impl Pack {
    /// Evaluates one record. Never panics on bad output; a failing component
    /// makes the report `ERROR` with the reason.
    pub fn evaluate(&self, input: &Input) -> Report {
        self.evaluate_many(std::slice::from_ref(input))
            .pop()
            .expect("one report per input")
    }

    /// Decides, before they run, the tool calls the last assistant message of
    /// `input`'s transcript proposes: `allow` or `deny` for each, in order,
    /// with the issues about it (its errors deny it). The rules that judge
    /// a finished conversation are not applied (`tool_calls`' `required` and
    /// expected trajectory, the contract of the final answer); the others
    /// are, counting the proposed calls (`max_calls`, `order`, `forbidden`,
    /// `allowed`, `no_repeat`, arguments, scripts and plugins). Fails closed:
    /// when the proposal cannot be judged, every call is denied.
    pub fn decide(&self, input: &Input) -> crate::decision::Decisions {
        self.decide_within(input, None)
    }

    /// [`decide`](Self::decide) by the caller's `deadline` (a request's):
    /// the steps running then stop, the proposal cannot be judged, and every
    /// call is denied.
    pub fn decide_within(
        &self,
        input: &Input,
        deadline: Option<std::time::Instant>,
    ) -> crate::decision::Decisions {
        // The transcript is read once, by the evaluation; the record is
        // judged as a proposal as it is, not copied.
        let mut decided = None;
        let proposal = Some(crate::component::Judging::Proposal);
        self.evaluate_staged(
            &[input],
            Make::Value,
            None,
            proposal,
            deadline,
            |report, _, proposed| {
                decided = Some((report.take(), proposed));
            },
        );
        let (report, proposed) = decided.expect("one report per input");
        if proposed.is_empty() {
            let (why, kind) = if let Some(failed) = report.error() {
                // (Read by no step: the record's own failure says why, and
                // what kind of failure it was.)
                (failed, report.error_kind().unwrap_or(ErrorKind::Input))
            } else if input.messages.is_null() {
                ("the record has no `messages`: a decision is on the tool calls a transcript's last assistant message proposes", ErrorKind::Input)
            } else {
                ("the transcript's last message is not an assistant message proposing tool calls: there is nothing to decide", ErrorKind::Input)
            };
            return crate::decision::Decisions::none(
                input.id.clone(),
                (why.to_owned(), kind),
                self.label(),
                self.revision(),
            );
        }
        crate::decision::Decisions::of(report, &proposed)
    }

    /// Whether this pack's runtime was interrupted ([`Runtime::interrupt`](crate::Runtime::interrupt)).
    pub(crate) fn interrupted(&self) -> bool {
        self.runtime.interrupt().is_set()
    }

    /// Evaluates a batch of records, one report per input in order: extraction
    /// and postprocessors for every record, then each metric prepares its work
    /// for the whole batch at once (`SEMANTIC` embeds every text in one go),
    /// then the metrics record by record. Reports are the same as one
    /// [`evaluate`](Self::evaluate) each.
    pub fn evaluate_many(&self, inputs: &[Input]) -> Vec<Report> {
        let inputs: Vec<&Input> = inputs.iter().collect();
        let mut reports = Vec::with_capacity(inputs.len());
        self.evaluate_staged(&inputs, Make::Value, None, None, None, |report, _, _| {
            reports.push(report.take());
        });
        reports
    }

    /// [`evaluate`](Self::evaluate) by the caller's `deadline` (a
    /// request's: the steps running then stop, and the record is an error),
    /// of a record whose document a streaming session may have read
    /// (`prepared`): the report is the same, without reading the document
    /// again (nor, when they found nothing, running the contract's checks
    /// again).
    pub(crate) fn evaluate_within(
        &self,
        input: &Input,
        prepared: Option<Prepared>,
        deadline: Option<std::time::Instant>,
    ) -> Report {
        let mut report = None;
        self.evaluate_staged(
            &[input],
            Make::Value,
            prepared,
            None,
            deadline,
            |made, _, _| {
                report = Some(made.take());
            },
        );
        report.expect("one report per input")
    }

    /// [`evaluate_many`](Self::evaluate_many), for results written as records,
    /// handing each report to `each` in order, with the extracted JSON's text
    /// when it could be had without writing the value (see [`Make`]).
    pub(crate) fn evaluate_for_records(
        &self,
        inputs: &[&Input],
        deadline: Option<std::time::Instant>,
        mut each: impl FnMut(&mut Report, Option<Written>),
    ) {
        let make = if self.pipeline.json_unread {
            Make::Text
        } else {
            Make::Both
        };
        self.evaluate_staged(inputs, make, None, None, deadline, |report, written, _| {
            each(report, written);
        });
    }

    /// (`prepared`: the document of the first input, already read;
    /// `judging`: what every input is judged as instead of its own.)
    fn evaluate_staged(
        &self,
        inputs: &[&Input],
        make: Make,
        mut prepared: Option<Prepared>,
        judging: Option<crate::component::Judging>,
        deadline: Option<std::time::Instant>,
        mut each: impl FnMut(&mut Report, Option<Written>, Vec<crate::transcript::ToolCall>),
    ) {
        let judged = |input: &Input| judging.unwrap_or(input.judging);
        // One budget for the call: the caller's deadline covers every record,
        // and each step sets its own deadline in it while it runs.
        let budget = Budget::new(deadline, Some(self.runtime.interrupt()));
        let budget = &budget;
        // Extraction is the engine's own code, not a component's: a panic in
        // it (a bug) is caught for the batch, which is then staged record by
        // record, so that only the record it panics on fails. (Caught per
        // record, the staged records would be moved once more each.)
        let staged: Vec<Staged> = caught(|| {
            inputs
                .iter()
                .map(|i| self.stage(i, make, prepared.take(), judged(i), budget))
                .collect()
        })
        .unwrap_or_else(|_| {
            inputs
                .iter()
                .map(|i| self.stage_caught(i, make, judged(i), budget))
                .collect()
        });
        if !self.pipeline.metrics.is_empty() {
            let scores = BTreeMap::new();
            let contexts: Vec<Context<'_>> = inputs
                .iter()
                .zip(&staged)
                .filter(|(_, s)| s.failure.is_none())
                .map(|(input, s)| {
                    let record = Record {
                        input,
                        turns: s.turns.as_deref(),
                        memo: &s.memo,
                        judging: s.judging,
                        budget,
                    };
                    self.context(record, &s.extraction, &s.json, &s.issues, &scores)
                })
                .collect();
            if !contexts.is_empty() {
                // (A step run per turn prepares nothing: the records'
                // contexts are not what it runs on.)
                let whole = self
                    .pipeline
                    .metrics
                    .iter()
                    .filter(|step| step.scope == Scope::Conversation);
                for step in whole {
                    // Work done ahead for the batch, which the metric does
                    // again per record if it panics here (and fails there).
                    let _ = caught(|| step.run.prepare(&contexts));
                }
            }
        }
        for (input, mut staged) in inputs.iter().zip(staged) {
            let written = staged.written.take();
            // A proposal's calls, as the record's transcript was read.
            let proposed = if staged.judging == crate::component::Judging::Proposal {
                proposed_calls(staged.turns.as_deref().unwrap_or_default()).to_vec()
            } else {
                Vec::new()
            };
            // (Lent, not moved: a report is a few hundred bytes, and each
            // closure it passed through by value copied it: four copies a
            // record, 1.1% of a KSI record's instructions.)
            each(&mut self.finish(input, staged, budget), written, proposed);
        }
    }

    /// [`stage`](Self::stage), where a panic (a bug in the engine: the steps'
    /// own are caught in [`within_time`](Self::within_time)) is the record's
    /// failure.
    fn stage_caught(
        &self,
        input: &Input,
        make: Make,
        judging: crate::component::Judging,
        budget: &Budget<'_>,
    ) -> Staged {
        caught(|| self.stage(input, make, None, judging, budget)).unwrap_or_else(|err| Staged {
            failure: Some(err.within("extraction")),
            ..Staged::begun(Vec::new(), None, Vec::new(), RecordMemo::default(), judging)
        })
    }

    /// Extraction (or the `prepared` document), then the postprocessors in order.
    fn stage(
        &self,
        input: &Input,
        make: Make,
        prepared: Option<Prepared>,
        judging: crate::component::Judging,
        budget: &Budget<'_>,
    ) -> Staged {
        let mut issues: Vec<Issue> = Vec::new();
        let turns = read_turns(&input.messages, &mut issues);
        let memo = RecordMemo::default();
        let mut runs = match (&turns, self.pipeline.turn_scope()) {
            (Some(turns), Some(scope)) => self.turn_runs(turns, scope, &mut issues),
            _ => Vec::new(),
        };
        if matches!(make, Make::Text) {
            debug_assert!(
                self.pipeline.postprocessors.is_empty(),
                "only a pack without postprocessors"
            );
            let (written, extraction) = self.extract(&input.output, &mut issues);
            return Staged {
                written,
                extraction,
                ..Staged::begun(issues, turns, runs, memo, judging)
            };
        }
        // (A transcript's steps run on its turns, not on this document.)
        let prepared = prepared.filter(|_| turns.is_none());
        let (mut json, mut written, extraction) =
            self.document(input, make, prepared, &memo, &mut issues);
        let output_calls = output_calls(turns.is_none(), &json, &mut issues);
        let scores: BTreeMap<String, f64> = BTreeMap::new();
        let mut failure = None;
        let mut steps = Steps::new(self.pipeline.step_timeout);
        let record = Record {
            input,
            turns: turns.as_deref().or(output_calls.as_deref()),
            memo: &memo,
            judging,
            budget,
        };
        let proposal = judging == crate::component::Judging::Proposal;
        'steps: for step in &self.pipeline.postprocessors {
            if proposal && !step.run.on_proposal() {
                continue; // it judges the final answer
            }
            let Some(runs) = targets(step.scope, turns.is_some(), &mut runs) else {
                let ctx = self.context(record, &extraction, &json, &issues, &scores);
                match self.within_time(&mut steps, budget, || step.run.process(&ctx)) {
                    Ok(out) => {
                        placed(out.issues, &step.name, None, &mut issues);
                        if let Some(new_json) = out.json {
                            json = new_json;
                            written = None;
                        }
                    }
                    Err(e) => {
                        failure = Some(e.within(format_args!("postprocessor `{}`", step.name)));
                        break;
                    }
                }
                continue;
            };
            for run in runs {
                let ctx = self.turn_context(record, run, &issues, &scores);
                match self.within_time(&mut steps, budget, || step.run.process(&ctx)) {
                    Ok(out) => {
                        placed(out.issues, &step.name, Some(run.turn), &mut issues);
                        if let Some(new_json) = out.json {
                            run.json = new_json;
                        }
                    }
                    Err(e) => {
                        failure = Some(e.within(format_args!(
                            "postprocessor `{}` (turn {})",
                            step.name, run.turn
                        )));
                        break 'steps;
                    }
                }
            }
        }
        Staged {
            json,
            written,
            extraction,
            issues,
            failure,
            turns,
            output_calls,
            runs,
            memo,
            judging,
        }
    }

    /// The record's document, as `make` asks for it ([`Make::Value`] or
    /// [`Make::Both`]): the `prepared` one when given, else extracted from the
    /// output, with the text a result record writes for it when made.
    fn document(
        &self,
        input: &Input,
        make: Make,
        prepared: Option<Prepared>,
        memo: &RecordMemo,
        issues: &mut Vec<Issue>,
    ) -> (Json, Option<Written>, ExtractionInfo) {
        if matches!(make, Make::Both) {
            let (found, extraction) = self.extract::<Found>(&input.output, issues);
            let (json, written) = found.map_or((Json::Null, None), |f| (f.json, f.written));
            return (json, written, extraction);
        }
        let (json, extraction) = self.extract_value(input, prepared, memo, issues);
        (json.unwrap_or(Json::Null), None, extraction)
    }

    /// Evaluates many records on `jobs` threads (0 = all cores), handing each
    /// report to `sink` in input order. Records are evaluated in batches (see
    /// [`evaluate_many`](Self::evaluate_many)). Memory stays bounded whatever the
    /// input size. The calling thread is one of the `jobs` (give it
    /// [`STACK_SIZE`](crate::parallel::STACK_SIZE) when packs run scripts).
    pub fn evaluate_batch<I, F>(&self, inputs: I, jobs: usize, mut sink: F)
    where
        I: IntoIterator<Item = Input>,
        I::IntoIter: Send,
        F: FnMut(Report),
    {
        let mut inputs = inputs.into_iter();
        let batches = std::iter::from_fn(move || {
            let batch: Vec<Input> = inputs.by_ref().take(BATCH_RECORDS).collect();
            (!batch.is_empty()).then_some(batch)
        });
        self.runtime.ordered_map(
            batches,
            jobs,
            1,
            |batch| self.evaluate_many(&batch),
            |reports| reports.into_iter().for_each(&mut sink),
        );
    }

    /// Runs one step on one record within the pack's time limit (the next of
    /// `steps`, the record's postprocessors or its metrics); a step that ends
    /// after it is an error, whatever it returned (work that stops at the
    /// deadline returns early, with a result that must not be used).
    fn within_time<T>(
        &self,
        steps: &mut Steps,
        budget: &Budget<'_>,
        step: impl FnOnce() -> Result<T, EvalError>,
    ) -> Result<T, EvalError> {
        // A component that panics (a bug in it, or in the engine under it) is
        // its record's ERROR, naming the step, in every front end: the panic
        // stops here, on the thread that evaluates, never in a caller.
        let step = || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(step))
                .unwrap_or_else(|panic| Err(panicked(panic.as_ref())))
        };
        let late = |result: &Result<T, EvalError>| match result {
            _ if budget.interrupted() => Some(EvalError::new(
                ErrorKind::Timeout,
                crate::deadline::INTERRUPTED_MESSAGE,
            )),
            _ if budget.caller_passed() => Some(EvalError::new(
                ErrorKind::Timeout,
                "ran past the caller's deadline (a request's timeout)",
            )),
            // A step's own error (a script's, naming the limit it hit) stands.
            Err(_) => None,
            Ok(_) => Some(EvalError::new(
                ErrorKind::Timeout,
                format!(
                    "exceeded the {} ms time limit (limits.timeout_ms)",
                    self.pipeline.step_timeout.map_or(0, |t| t.as_millis())
                ),
            )),
        };
        match steps.within(budget, step) {
            Ok(result) if !budget.caller_passed() => result,
            Ok(result) | Err(result) => late(&result).map_or(result, Err),
        }
    }

    /// The context a component sees at this point of the pipeline.
    fn context<'a>(
        &'a self,
        record: Record<'a>,
        extraction: &'a ExtractionInfo,
        json: &'a Json,
        issues: &'a [Issue],
        scores: &'a BTreeMap<String, f64>,
    ) -> Context<'a> {
        Context {
            turns: record.turns,
            turn: None,
            output: &record.input.output,
            json,
            extraction,
            expected: &record.input.expected,
            meta: &record.input.meta,
            issues,
            scores,
            strategies: &self.pipeline.strategies,
            memo: Some(record.memo),
            judging: record.judging,
            budget: record.budget,
        }
    }

    /// The context a step run on one assistant turn (`run`) sees: the turn's
    /// text as the output, its JSON and extraction, and the record's issues
    /// and scores so far.
    fn turn_context<'a>(
        &'a self,
        record: Record<'a>,
        run: &'a TurnRun,
        issues: &'a [Issue],
        scores: &'a BTreeMap<String, f64>,
    ) -> Context<'a> {
        let output = record
            .turns
            .map_or("", |turns| turns[run.turn].text.as_str());
        Context {
            turn: Some(run.turn),
            output,
            ..self.context(record, &run.extraction, &run.json, issues, scores)
        }
    }

    /// The JSON the ladder finds (its value, or only its text), or the
    /// contract's fallback; `None` when there is neither.
    fn extract<D: Document>(
        &self,
        output: &str,
        issues: &mut Vec<Issue>,
    ) -> (Option<D>, ExtractionInfo) {
        let multiple = self
            .pipeline
            .contract
            .as_ref()
            .map(|contract| contract.multiple_values)
            .unwrap_or_default();
        let found = extract::extract_as::<D>(output, &self.pipeline.ladder, multiple);
        self.extracted(found, output, issues)
    }

    /// [`extract`](Self::extract) of the record's output, or the `prepared`
    /// document as the strict tier would have read it (then noting in `memo`
    /// when the contract's checks already found nothing in it).
    fn extract_value(
        &self,
        input: &Input,
        prepared: Option<Prepared>,
        memo: &RecordMemo,
        issues: &mut Vec<Issue>,
    ) -> (Option<Json>, ExtractionInfo) {
        let Some(prepared) = prepared else {
            return self.extract(&input.output, issues);
        };
        if prepared.contract_clean {
            memo.contract_judged();
        }
        let found = (prepared.json, Tier::Strict, Vec::new());
        self.extracted(Some(found), &input.output, issues)
    }

    /// What [`extract`](Self::extract) makes of what the ladder `found` in
    /// `output`.
    fn extracted<D: Document>(
        &self,
        found: Option<(D, Tier, Vec<extract::Repair>)>,
        output: &str,
        issues: &mut Vec<Issue>,
    ) -> (Option<D>, ExtractionInfo) {
        if let Some((mut document, tier, mut repairs)) = found {
            let mut schema_repairs = Vec::new();
            if let Some(contract) = self.pipeline.contract.as_ref() {
                if contract.repairs_schema() {
                    document.change(|json| {
                        schema_repairs = contract.conform(json);
                        !schema_repairs.is_empty()
                    });
                    repairs.extend(schema_repairs.iter().map(|change| change.repair));
                    repairs.sort_unstable();
                    repairs.dedup();
                }
            }
            let info = ExtractionInfo {
                tier: Some(tier),
                repairs,
                raw_fallback: false,
                schema_repairs,
            };
            return (Some(document), info);
        }
        // Said only when an issue names them: most outputs without JSON have none.
        let tried = || {
            let tried: Vec<&str> = self.pipeline.ladder.iter().map(|t| t.as_str()).collect();
            tried.join(", ")
        };
        if let Some(fallback) = self
            .pipeline
            .contract
            .as_ref()
            .and_then(|c| c.fallback_json(output))
        {
            // JSON that is there but broken: say where and why, for the re-ask.
            let found = match extract::parse_failure(output) {
                Some(why) => format!("the JSON in the output could not be read ({why})"),
                None => "no JSON found in the output".to_owned(),
            };
            issues.push(
                Issue::warning(
                    "extraction",
                    format!(
                        "{found} (tried: {}); used the fallback values. Raw output starts: {:?}",
                        tried(),
                        prefix_chars(output, FALLBACK_QUOTE_CHARS)
                    ),
                )
                .code(codes::EXTRACTION_FALLBACK),
            );
            let info = ExtractionInfo {
                tier: Some(Tier::Fallback),
                raw_fallback: true,
                ..ExtractionInfo::none()
            };
            return (Some(D::from_json(fallback)), info);
        }
        if let Some(why) = extract::hidden_failure(output) {
            issues.push(
                Issue::warning(
                    "extraction",
                    format!("no JSON could be extracted (tried: {}): {why}", tried()),
                )
                .code(codes::EXTRACTION_FAILED),
            );
        }
        (None, ExtractionInfo::none())
    }
}

/// `work`'s result, or its panic as an `internal` error with the panic's
/// message: the one place the engine stops a panic (see `docs/architecture.md`).
fn caught<T>(work: impl FnOnce() -> T) -> Result<T, EvalError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|panic| panicked(panic.as_ref()))
}

/// A panic as an `internal` error, with its message.
fn panicked(panic: &(dyn std::any::Any + Send)) -> EvalError {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    EvalError::new(ErrorKind::Internal, format!("panicked: {message}"))
}

/// A step's issues, named after it ([`named`]) and, for a step run on a
/// turn, placed at that turn, added to the record's.
fn placed(found: Vec<Issue>, step: &str, turn: Option<usize>, issues: &mut Vec<Issue>) {
    issues.extend(found.into_iter().map(|issue| {
        let mut issue = named(issue, step);
        if turn.is_some() {
            issue.turn = turn;
        }
        issue
    }));
}

fn named(mut issue: Issue, step: &str) -> Issue {
    if issue.rule.is_empty() {
        step.clone_into(&mut issue.rule);
    }
    // Every built-in gives its issues a code; any other issue's is its step's.
    if issue.code.is_empty() {
        issue.code = step.to_owned().into();
    }
    issue
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::component::{Metric, MetricOutput};
    use crate::pack::Step;
    use crate::report::Status;

    /// A metric with a bug: it panics on outputs that say so, and on every
    /// batch it prepares.
    #[derive(Debug)]
    struct Panics;

    impl Metric for Panics {
        fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
            assert!(
                !ctx.output.contains("panic"),
                "asked to by {:?}",
                ctx.output
            );
            Ok(MetricOutput::score(1.0))
        }

        fn prepare(&self, _records: &[Context<'_>]) {
            panic!("in prepare");
        }
    }

    fn panicking_pack() -> Pack {
        let root = crate::files::built_in_repository();
        let mut pack = Pack::load(root.join("rules/ksi-emission")).expect("the shipped pack loads");
        pack.pipeline.metrics.push(Step {
            name: "buggy".into(),
            run: Arc::new(Panics),
            weight: 0.0,
            scope: crate::manifest::Scope::Conversation,
            aggregate: crate::manifest::Aggregate::Mean,
        });
        pack
    }

    #[test]
    fn a_component_that_panics_makes_only_its_record_error_naming_it() {
        let pack = panicking_pack();
        let inputs = ["{\"event\": \"a:b\", \"data\": {}}", "please panic", "{}"].map(Input::new);
        let want = |report: &Report, panicked: bool| {
            if panicked {
                assert_eq!(report.status(), Status::Error, "{report:?}");
                assert_eq!(report.error_kind(), Some(ErrorKind::Internal));
                let error = report.error().unwrap_or_default();
                assert!(
                    error.starts_with("metric `buggy`: panicked: asked to by \"please panic\""),
                    "{error}"
                );
                assert!(!report.passed());
            } else {
                assert_ne!(report.status(), Status::Error, "{report:?}");
            }
        };
        // One at a time, as a batch, and on worker threads.
        for (input, panicked) in inputs.iter().zip([false, true, false]) {
            want(&pack.evaluate(input), panicked);
        }
        let reports = pack.evaluate_many(&inputs);
        for (report, panicked) in reports.iter().zip([false, true, false]) {
            want(report, panicked);
        }
        let mut reports = Vec::new();
        let many = (0..3000).map(|n| inputs[n % 3].clone());
        pack.evaluate_batch(many, 2, |report| reports.push(report));
        assert_eq!(reports.len(), 3000);
        for (n, report) in reports.iter().enumerate() {
            want(report, n % 3 == 1);
        }
    }
}
