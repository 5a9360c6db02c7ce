//! A record's turns: its transcript read, an output that is a list of tool
//! calls taken as the one assistant turn that makes them, the calls a proposal
//! makes, and the assistant turns steps run on by themselves.

use super::TurnRun;
use crate::json::Json;
use crate::manifest::Scope;
use crate::pack::Pack;
use crate::report::Issue;

impl Pack {
    /// The assistant turns of `turns` that steps of `scope` run on, each
    /// extracted on its own (what the extraction finds is an issue of the
    /// turn's).
    pub(super) fn turn_runs(
        &self,
        turns: &[crate::transcript::Turn],
        scope: Scope,
        issues: &mut Vec<Issue>,
    ) -> Vec<TurnRun> {
        let mut assistant = turns
            .iter()
            .enumerate()
            .filter(|(_, turn)| turn.role == crate::transcript::Role::Assistant);
        let chosen: Vec<(usize, &crate::transcript::Turn)> = match scope {
            Scope::Last => assistant.next_back().into_iter().collect(),
            _ => assistant.collect(),
        };
        chosen
            .into_iter()
            .map(|(index, turn)| {
                let mut found = Vec::new();
                let (json, extraction) = self.extract::<Json>(&turn.text, &mut found);
                issues.extend(found.into_iter().map(|issue| issue.in_turn(index)));
                TurnRun {
                    turn: index,
                    json: json.unwrap_or(Json::Null),
                    extraction,
                    scores: Vec::new(),
                }
            })
            .collect()
    }
}

/// The tool calls the last turn proposes: those of a last assistant turn.
pub(super) fn proposed_calls(turns: &[crate::transcript::Turn]) -> &[crate::transcript::ToolCall] {
    turns
        .last()
        .filter(|turn| turn.role == crate::transcript::Role::Assistant)
        .map(|turn| turn.tool_calls.as_slice())
        .unwrap_or_default()
}

/// Without a transcript (`none`), an output `json` that is a list of tool
/// calls, as the one assistant turn that makes them; what could not be read
/// is an issue.
pub(super) fn output_calls(
    none: bool,
    json: &Json,
    issues: &mut Vec<Issue>,
) -> Option<Vec<crate::transcript::Turn>> {
    let (turn, found) = crate::transcript::output_calls(json).filter(|_| none)?;
    issues.extend(found);
    Some(vec![turn])
}

/// A record's transcript, read (`None` without `messages`); what could not
/// be read is an issue, the record's first.
pub(super) fn read_turns(
    messages: &Json,
    issues: &mut Vec<Issue>,
) -> Option<Vec<crate::transcript::Turn>> {
    (!messages.is_null()).then(|| {
        let (transcript, found) = crate::transcript::read(messages, "/messages");
        issues.extend(found);
        transcript.turns
    })
}

/// The turns a step of `scope` runs on: `None` when it runs on the record (a
/// conversation step, or any step on a record without a transcript).
pub(super) fn targets(
    scope: Scope,
    transcript: bool,
    runs: &mut [TurnRun],
) -> Option<&mut [TurnRun]> {
    match scope {
        _ if !transcript => None,
        Scope::Conversation => None,
        Scope::AssistantTurns => Some(runs),
        Scope::Last => {
            let last = runs.len().saturating_sub(1);
            Some(&mut runs[last..])
        }
    }
}
