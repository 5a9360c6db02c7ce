//! A record's verdict, after its extraction and postprocessors
//! ([`Pack::finish`]): the metrics in order (on the record, or on each of its
//! assistant turns), the weighted score, the status by the pack's scoring, each
//! turn's own result, and the re-ask feedback.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{placed, targets, Input, Record, Staged, TurnRun};
use crate::codes;
use crate::component::EvalError;
use crate::deadline::{Budget, Steps};
use crate::json::{Json, Object};
use crate::manifest::NoJson;
use crate::pack::{Pack, Step};
use crate::report::{ErrorKind, Issue, MetricResult, Report, Severity, Status};
use crate::text::{short_numbers, write_python_repr_list};

impl Pack {
    /// The metrics in order, then score, status and feedback.
    pub(super) fn finish(&self, input: &Input, staged: Staged, budget: &Budget<'_>) -> Report {
        let Staged {
            json,
            extraction,
            mut issues,
            failure,
            turns,
            output_calls,
            mut runs,
            memo,
            judging,
            ..
        } = staged;
        let mut scores: BTreeMap<String, f64> = BTreeMap::new();
        let mut metrics: BTreeMap<String, MetricResult> = BTreeMap::new();
        let record = Record {
            input,
            turns: turns.as_deref().or(output_calls.as_deref()),
            memo: &memo,
            judging,
            budget,
        };

        let failure = failure.map_or_else(
            || -> Result<(), EvalError> {
                let mut steps = Steps::new(self.pipeline.step_timeout);
                let proposal = judging == crate::component::Judging::Proposal;
                for (index, step) in self.pipeline.metrics.iter().enumerate() {
                    let result = match targets(step.scope, turns.is_some(), &mut runs) {
                        // It scores the final answer, which a proposal has not.
                        _ if proposal && !step.run.on_proposal() => not_on_proposal(step.weight),
                        None => {
                            let ctx = self.context(record, &extraction, &json, &issues, &scores);
                            let out = self
                                .within_time(&mut steps, budget, || step.run.evaluate(&ctx))
                                .map_err(|e| e.within(format_args!("metric `{}`", step.name)))?;
                            in_range(&step.name, None, &out)?;
                            placed(out.issues, &step.name, None, &mut issues);
                            MetricResult {
                                score: if out.skipped.is_some() {
                                    0.0
                                } else {
                                    out.score
                                },
                                weight: step.weight,
                                details: out.details,
                                skipped: out.skipped,
                            }
                        }
                        Some(runs) => {
                            self.per_turn(step, runs, record, &scores, &mut steps, &mut issues)?
                        }
                    };
                    // Later metrics read the scores so far; after the last
                    // one, nothing does.
                    // ... a skipped metric has no score for them to read.
                    if index + 1 < self.pipeline.metrics.len() && result.skipped.is_none() {
                        scores.insert(step.name.clone(), result.score);
                    }
                    metrics.insert(step.name.clone(), result);
                }
                Ok(())
            },
            Err,
        );

        // The contract asked for JSON and there is none: not a near miss.
        let no_json = extraction.tier.is_none()
            && self.pipeline.contract.is_some()
            && self.pipeline.scoring.no_json == NoJson::Fail;
        let mut report = Report::evaluated(
            input.id.clone(),
            Some(extraction),
            json,
            &self.info.label,
            &self.info.revision,
        );
        report.metrics = metrics;
        let answer = turns
            .as_deref()
            .and_then(|turns| place_at_answer(turns, &input.output, &mut issues));
        if output_calls.is_some() {
            without_turns(&mut issues);
        }
        report.turns = turns
            .map(|turns| self.turn_results(&turns, &runs, &issues, answer.filter(|_| no_json)));
        report.issues = issues;
        if let Err(err) = failure {
            report.set_failed(err.kind, err.message);
            return report;
        }
        report.score = self.weighted_score(&report.metrics);
        let status = if no_json {
            Status::Fail
        } else {
            let status = self.status(report.error_count(), report.score);
            // A record failed by its score alone, with no issue to say why, gets one.
            let unexplained = report.issues.iter().all(|i| i.severity == Severity::Info);
            if status == Status::Fail && unexplained {
                report.issues.extend(self.below_min_score(report.score));
            }
            status
        };
        report.set_verdict(status);
        report.feedback = self.feedback(&report.issues, report.turns.as_deref());
        report
    }

    /// A metric run on each of `runs` (the turns its scope takes): each
    /// turn's score (kept for the turn's own), and the step's result, the
    /// turns' scores made one by its `aggregate`, with each turn's in its
    /// details. Skipped on every turn (or with no assistant turn), it is
    /// skipped.
    fn per_turn(
        &self,
        step: &Step<dyn crate::component::Metric>,
        runs: &mut [TurnRun],
        record: Record<'_>,
        scores: &BTreeMap<String, f64>,
        steps: &mut Steps,
        issues: &mut Vec<Issue>,
    ) -> Result<MetricResult, EvalError> {
        // Every turn sees the issues of the steps before this one (its own
        // turns' issues join them after the last turn), and the runs share
        // one `limits.timeout_ms`: a step costs the same budget and linear
        // time whatever the transcript's length and the number of issues.
        let before: &[Issue] = issues;
        let failed_on = std::cell::Cell::new(None);
        let outs = self.within_time(steps, record.budget, || {
            let mut outs = Vec::with_capacity(runs.len());
            for run in runs.iter() {
                failed_on.set(Some(run.turn));
                let ctx = self.turn_context(record, run, before, scores);
                let out = step.run.evaluate(&ctx)?;
                in_range(&step.name, Some(run.turn), &out)?;
                outs.push(out);
                if record.budget.passed() {
                    break; // `within_time` says which limit
                }
            }
            failed_on.set(None);
            Ok(outs)
        });
        let outs = outs.map_err(|e| match failed_on.get() {
            Some(turn) => e.within(format_args!("metric `{}` (turn {turn})", step.name)),
            None => e.within(format_args!(
                "metric `{}` (its runs on each turn)",
                step.name
            )),
        })?;
        let mut scored = Vec::with_capacity(runs.len());
        let mut each = Vec::with_capacity(runs.len());
        let mut skipped = None;
        let mut found = Vec::new();
        for (run, out) in runs.iter_mut().zip(outs) {
            placed(out.issues, &step.name, Some(run.turn), &mut found);
            let mut entry = Object::with_capacity(4);
            entry.push_new("turn", run.turn.into());
            if let Some(reason) = &out.skipped {
                entry.push_new("score", Json::Null);
                entry.push_new("skipped", reason.as_str().into());
                skipped.get_or_insert_with(|| reason.clone());
            } else {
                entry.push_new("score", out.score.into());
                scored.push(out.score);
                run.scores.push((out.score, step.weight));
            }
            if !out.details.is_null() {
                entry.push_new("details", out.details.to_json());
            }
            each.push(Json::Object(entry));
        }
        issues.append(&mut found);
        let mut details = Object::with_capacity(3);
        details.push_new("scope", step.scope.as_str().into());
        details.push_new("aggregate", step.aggregate.as_str().into());
        details.push_new("turns", Json::Array(each));
        let details = Json::Object(details);
        if scored.is_empty() {
            let reason =
                skipped.unwrap_or_else(|| "the transcript has no assistant turn".to_owned());
            return Ok(MetricResult {
                score: 0.0,
                weight: step.weight,
                details: details.into(),
                skipped: Some(reason),
            });
        }
        Ok(MetricResult {
            score: step.aggregate.of(&scored),
            weight: step.weight,
            details: details.into(),
            skipped: None,
        })
    }

    /// The record's `turns`: for each turn, the issues about it, its score
    /// (the weighted mean of the metrics run on it) and its verdict by the
    /// pack's scoring, as the record's (`no_json`: the final answer's turn,
    /// when it has no JSON and the contract's `no_json` fails it).
    fn turn_results(
        &self,
        turns: &[crate::transcript::Turn],
        runs: &[TurnRun],
        issues: &[Issue],
        no_json: Option<usize>,
    ) -> Vec<crate::report::TurnResult> {
        let mut results: Vec<crate::report::TurnResult> = turns
            .iter()
            .map(|turn| crate::report::TurnResult {
                role: turn.role,
                path: turn.path.clone(),
                status: Status::Pass,
                score: None,
                issues: Vec::new(),
            })
            .collect();
        for issue in issues {
            if let Some(result) = issue.turn.and_then(|turn| results.get_mut(turn)) {
                result.issues.push(issue.clone());
            }
        }
        for run in runs {
            let weights: f64 = run.scores.iter().map(|(_, w)| w).sum();
            if !run.scores.is_empty() && weights > 0.0 {
                let total: f64 = run.scores.iter().map(|(s, w)| s * w).sum();
                results[run.turn].score = Some((total / weights).clamp(0.0, 1.0));
            }
        }
        for (index, result) in results.iter_mut().enumerate() {
            let errors = result
                .issues
                .iter()
                .filter(|i| i.severity == Severity::Error)
                .count();
            // As the record's: a final answer without the JSON the contract
            // asks for fails, whatever else.
            result.status = if no_json == Some(index) {
                Status::Fail
            } else {
                self.status(errors, result.score)
            };
        }
        results
    }

    fn weighted_score(&self, metrics: &BTreeMap<String, MetricResult>) -> Option<f64> {
        if self.pipeline.metrics.is_empty() {
            return None;
        }
        let (mut total, mut weights) = (0.0, 0.0);
        for step in &self.pipeline.metrics {
            // A skipped metric's weight leaves the score; with every metric
            // skipped there is none.
            if let Some(score) = metrics.get(&step.name)?.value() {
                total += score * step.weight;
                weights += step.weight;
            }
        }
        (weights > 0.0).then(|| (total / weights).clamp(0.0, 1.0))
    }

    /// Error-severity issues → `PASS` / `NEEDS_IMPROVEMENT` / `FAIL` by the two limits,
    /// then FAIL when `min_score` is set and not reached.
    fn status(&self, errors: usize, score: Option<f64>) -> Status {
        let scoring = &self.pipeline.scoring;
        let by_issues = if errors <= scoring.pass_max_issues {
            Status::Pass
        } else if errors <= scoring.needs_improvement_max_issues {
            Status::NeedsImprovement
        } else {
            Status::Fail
        };
        match (scoring.min_score, score) {
            (Some(min), Some(score)) if score < min => Status::Fail,
            _ => by_issues,
        }
    }

    /// The issue of a record whose score is under `min_score`
    /// (`score.below-min`), if it is.
    fn below_min_score(&self, score: Option<f64>) -> Option<Issue> {
        let (min, score) = (self.pipeline.scoring.min_score?, score?);
        (score < min).then(|| {
            let (shown, min) = short_numbers(score, min);
            // (Joined, not `format!`: a fifth of some packs' records get it.)
            let message = ["score ", &shown, " is below min_score ", &min].concat();
            Issue::error("scoring", message)
                .at("")
                .code(codes::SCORE_BELOW_MIN)
        })
    }

    /// Re-ask text: the issues (each message once) in the seeds' `Previous issues: [...]` form, then
    /// the contract's OUTPUT FORMAT block. `None` when there is nothing to fix.
    /// An issue about one turn of a transcript says which, as the model saw
    /// it (`assistant turn 2: ...`).
    fn feedback(
        &self,
        issues: &[Issue],
        turns: Option<&[crate::report::TurnResult]>,
    ) -> Option<String> {
        // (Named only once an issue is about a turn: most records have none.)
        let mut places: Option<Vec<String>> = None;
        let mut messages: Vec<Cow<'_, str>> = Vec::new();
        // Each message once: looked for in the list while it is short (most
        // records), in a set of them from `FEEDBACK_INDEXED` on, so that a
        // record with many issues is worded in time linear in their number.
        let mut said: Option<std::collections::HashSet<Cow<'_, str>>> = None;
        for issue in issues.iter().filter(|i| i.severity != Severity::Info) {
            let place = issue.turn.and_then(|turn| {
                places
                    .get_or_insert_with(|| turns.map(turn_places).unwrap_or_default())
                    .get(turn)
            });
            let message = match place {
                Some(place) => Cow::Owned(format!("{place}: {}", issue.message)),
                None => Cow::Borrowed(issue.message.as_str()),
            };
            let new = match &mut said {
                Some(said) => said.insert(message.clone()),
                None => !messages.contains(&message),
            };
            if new {
                messages.push(message);
                if said.is_none() && messages.len() == FEEDBACK_INDEXED {
                    said = Some(messages.iter().cloned().collect());
                }
            }
        }
        if messages.is_empty() {
            return None;
        }
        let mut text = String::with_capacity(128);
        text.push_str("Previous issues: ");
        write_python_repr_list(&mut text, messages.iter().map(AsRef::as_ref));
        // A transcript's re-ask shows the output format only when a reply
        // broke it (a tool call's issue is not about the format).
        let about_format = turns.is_none()
            || issues
                .iter()
                .any(|issue| issue.severity != Severity::Info && codes::about_format(&issue.code));
        if let Some(contract) = self.pipeline.contract.as_ref().filter(|_| about_format) {
            text.push_str("\n\n");
            text.push_str(contract.format_block());
        }
        Some(text)
    }
}

/// The final answer is a turn too: the turn a transcript record's output is
/// (its last assistant turn, when the output is that turn's text; a record
/// may give its own `output`). Each issue found in the output (no turn yet,
/// and no path into `messages`) is placed at it.
fn place_at_answer(
    turns: &[crate::transcript::Turn],
    output: &str,
    issues: &mut [Issue],
) -> Option<usize> {
    let answer = turns
        .iter()
        .rposition(|turn| turn.role == crate::transcript::Role::Assistant)
        .filter(|&at| turns[at].text == output)?;
    for issue in issues.iter_mut().filter(|i| i.turn.is_none()) {
        if !issue
            .path
            .as_deref()
            .is_some_and(|p| p.starts_with("/messages"))
        {
            issue.turn = Some(answer);
        }
    }
    Some(answer)
}

/// A metric that scores the final answer, on a proposal, which has none.
fn not_on_proposal(weight: f64) -> MetricResult {
    MetricResult {
        score: 0.0,
        weight,
        details: crate::report::Details::default(),
        skipped: Some("not applied to a proposal (it scores the final answer)".to_owned()),
    }
}

/// The issues of a record whose output was a list of calls: that list was a
/// turn to the steps, not to the result, which has no turns to name.
fn without_turns(issues: &mut [Issue]) {
    for issue in issues {
        issue.turn = None;
    }
}

/// How the re-ask text names each turn, as the model saw the conversation:
/// by its role and its place among the turns of that role, counted from 1
/// (`assistant turn 2` is the model's second reply; `tool result 1`,
/// `user message 3`, `system message 1`), the same in every message format.
fn turn_places(turns: &[crate::report::TurnResult]) -> Vec<String> {
    let mut counts = [0usize; 4];
    turns
        .iter()
        .map(|turn| {
            let (slot, name) = match turn.role {
                crate::transcript::Role::Assistant => (0, "assistant turn"),
                crate::transcript::Role::Tool => (1, "tool result"),
                crate::transcript::Role::User => (2, "user message"),
                crate::transcript::Role::System => (3, "system message"),
            };
            counts[slot] += 1;
            format!("{name} {}", counts[slot])
        })
        .collect()
}

/// From this many distinct messages on, the re-ask text finds repeats in a set.
const FEEDBACK_INDEXED: usize = 16;

/// Fails unless a metric's score (on `turn`, for a metric run per turn) is
/// in [0, 1] (or the metric skipped the record).
fn in_range(
    step: &str,
    turn: Option<usize>,
    out: &crate::component::MetricOutput,
) -> Result<(), EvalError> {
    if out.skipped.is_none() && !(0.0..=1.0).contains(&out.score) {
        let on = turn.map_or_else(String::new, |turn| format!(" on turn {turn}"));
        return Err(EvalError::new(
            ErrorKind::Internal,
            format!(
                "metric `{step}` returned a score of {}{on}, outside [0, 1]",
                out.score
            ),
        ));
    }
    Ok(())
}
