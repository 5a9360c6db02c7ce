//! Decisions on proposed tool calls (`Pack::decide`): for each call a
//! transcript's last assistant message proposes, `allow` or `deny`, with the
//! issues at its path that decide it.

use serde::Serialize;
use serde_json::Value;

use crate::json::Json;
use crate::report::{ErrorKind, Issue, Report, Severity};

/// Whether a proposed tool call may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No error is about the call.
    Allow,
    /// An error is about the call, or the proposal could not be judged.
    Deny,
}

/// The decision on one proposed tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallDecision {
    /// Its place among the calls proposed (0-based).
    pub call: usize,
    /// The call's id (empty when it has none).
    pub id: String,
    /// The tool it calls.
    pub name: String,
    /// JSON pointer of the call in the record (`/messages/5/tool_calls/0`).
    pub path: String,
    /// `allow` or `deny`.
    pub decision: Verdict,
    /// The issues about the call (at its path or inside it): its errors deny
    /// it, its warnings and notes do not.
    pub issues: Vec<Issue>,
}

/// The decisions on the tool calls a transcript's last assistant message
/// proposes, before they run (`Pack::decide`): one per
/// call, in order. Fails closed: a proposal that could not be judged (a step
/// failed) denies every call, and says why in `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decisions {
    /// The record's id (`null` if it had none).
    pub id: Json,
    /// One per proposed call, in order.
    pub decisions: Vec<CallDecision>,
    /// The issues of the conversation before the proposal (its earlier
    /// turns and calls): the past, reported apart; they deny no call.
    pub history: Vec<Issue>,
    /// The issues of the proposal that are about no one call (they decide
    /// nothing: the transcript's own problems, the proposing turn's text).
    pub other_issues: Vec<Issue>,
    /// Why the proposal could not be judged (every call is then denied), or
    /// why there is nothing to decide (no proposed call).
    pub error: Option<String>,
    /// What kind of failure `error` was.
    pub error_kind: Option<ErrorKind>,
    /// `name@version` of the pack.
    pub pack: String,
    /// Content revision of the pack.
    pub revision: String,
}

impl Decisions {
    /// The decisions on `calls` (the proposed ones, in order) from the report
    /// of the proposal judged as `Judging::Proposal`.
    pub(crate) fn of(report: Report, calls: &[crate::transcript::ToolCall]) -> Self {
        let error = report.error().map(str::to_owned);
        let error_kind = report.error_kind();
        let failed = error.is_some();
        // The proposing turn: the last. Issues at an earlier turn are the past.
        let proposing = report
            .turns
            .as_ref()
            .map_or(0, |t| t.len().saturating_sub(1));
        let mut history = Vec::new();
        let mut other_issues = Vec::new();
        let mut by_call: Vec<Vec<Issue>> = vec![Vec::new(); calls.len()];
        for issue in report.issues {
            let at = issue.path.as_deref().and_then(|path| {
                calls.iter().position(|call| {
                    path == call.path
                        || path
                            .strip_prefix(call.path.as_str())
                            .is_some_and(|rest| rest.starts_with('/'))
                })
            });
            match at {
                Some(index) => by_call[index].push(issue),
                None if issue.turn.is_some_and(|turn| turn < proposing) => history.push(issue),
                None => other_issues.push(issue),
            }
        }
        let decisions = calls
            .iter()
            .zip(by_call)
            .enumerate()
            .map(|(index, (call, issues))| {
                let denied = failed || issues.iter().any(|i| i.severity == Severity::Error);
                CallDecision {
                    call: index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                    path: call.path.clone(),
                    decision: if denied {
                        Verdict::Deny
                    } else {
                        Verdict::Allow
                    },
                    issues,
                }
            })
            .collect();
        Self {
            id: report.id,
            decisions,
            history,
            other_issues,
            error,
            error_kind,
            pack: report.pack,
            revision: report.revision,
        }
    }

    /// Nothing to decide: `why` (no proposed call, no transcript).
    pub(crate) fn none(
        id: Json,
        (why, kind): (String, ErrorKind),
        pack: &str,
        revision: &str,
    ) -> Self {
        Self {
            id,
            decisions: Vec::new(),
            history: Vec::new(),
            other_issues: Vec::new(),
            error: Some(why),
            error_kind: Some(kind),
            pack: pack.to_owned(),
            revision: revision.to_owned(),
        }
    }

    /// Whether every proposed call is allowed (none is: false).
    pub fn all_allowed(&self) -> bool {
        !self.decisions.is_empty() && self.decisions.iter().all(|d| d.decision == Verdict::Allow)
    }

    /// As JSON: `{"id", "decisions": [{"call", "id", "name", "path",
    /// "decision", "issues"}], "history", "other_issues", "error",
    /// "error_kind", "pack", "revision"}`.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
