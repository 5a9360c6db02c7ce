//! `tool_calls`' comparison with an expected trajectory: the record's
//! `expected.tool_calls`, each `{name, arguments}`, matched against the calls
//! the agent made (`exact`, `in_order` or `any_order`), each expected argument
//! compared by its strategy, as `json_compare` compares fields.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::strategy_names::{Resolved, Resolver};
use crate::codes;
use crate::component::{BuildError, Context, EvalError};
use crate::json::{escape_pointer, Json};
use crate::report::{ErrorKind, Issue};
use crate::strategy::Exact;
use crate::transcript::ToolCall;

/// How the calls must match the expected ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Match {
    /// The same calls, in the same order, and no others.
    Exact,
    /// The expected calls in their order, other calls between them allowed.
    #[default]
    InOrder,
    /// Each expected call made, in any order, other calls allowed.
    AnyOrder,
}

/// The expected trajectory's rules, compiled.
#[derive(Debug)]
pub struct Trajectory {
    mode: Match,
    /// By `tool.argument` or `argument`.
    strategies: BTreeMap<String, Resolved>,
    exact: Resolved,
}

/// One call of `expected.tool_calls`.
struct Expected<'e> {
    name: &'e str,
    arguments: Option<&'e Json>,
}

impl Trajectory {
    /// Resolves `argument_strategies` (by `argument` or `tool.argument`)
    /// with the component's strategy resolver (its `thresholds` and `model:`).
    pub fn build(
        mode: Match,
        argument_strategies: &BTreeMap<String, String>,
        resolver: &Resolver<'_>,
    ) -> Result<Self, BuildError> {
        let mut strategies = BTreeMap::new();
        for (argument, strategy) in argument_strategies {
            let key = format!("argument_strategies.{argument}");
            let place = format!("argument_strategies: argument `{argument}`");
            strategies.insert(
                argument.clone(),
                resolver.named(strategy, (&place, &key), true)?,
            );
        }
        Ok(Self {
            mode,
            strategies,
            exact: resolver.builtin("exact", Arc::new(Exact)),
        })
    }

    /// The issues of `calls` against the record's `expected.tool_calls`
    /// (none when it has none); each with the turn of the call it is about.
    pub fn check(
        &self,
        calls: &[(usize, &ToolCall)],
        ctx: &Context<'_>,
        issue: &dyn Fn(&'static str, String, &str) -> Issue,
    ) -> Result<Vec<Issue>, EvalError> {
        let Some(list) = ctx.expected.get("tool_calls") else {
            return Ok(Vec::new());
        };
        let expected = read_expected(list)?;
        let mut issues = Vec::new();
        let missing = |index: usize, call: &Expected<'_>, how: &str| {
            issue(
                codes::TOOL_CALLS_EXPECTED_MISSING,
                format!(
                    "the expected call `{}` (expected.tool_calls/{index}) is not made{how}",
                    call.name
                ),
                "/messages",
            )
        };
        match self.mode {
            Match::Exact => {
                for index in 0..expected.len().max(calls.len()) {
                    match (expected.get(index), calls.get(index)) {
                        (Some(want), Some(&(turn, call))) if want.name == call.name => {
                            self.arguments(want, call, turn, ctx, issue, &mut issues)?;
                        }
                        (Some(want), Some(&(turn, call))) => {
                            issues.push(
                                issue(
                                    codes::TOOL_CALLS_UNEXPECTED,
                                    format!(
                                    "`{}` is call {index}, where the expected trajectory has `{}`",
                                    call.name, want.name
                                ),
                                    &call.path,
                                )
                                .in_turn(turn),
                            );
                        }
                        (None, Some(&(turn, call))) => {
                            issues.push(
                                issue(
                                    codes::TOOL_CALLS_UNEXPECTED,
                                    format!(
                                    "`{}` is call {index}, past the {} of the expected trajectory",
                                    call.name,
                                    plural(expected.len(), "call")
                                ),
                                    &call.path,
                                )
                                .in_turn(turn),
                            );
                        }
                        (Some(want), None) => issues.push(missing(index, want, "")),
                        (None, None) => {}
                    }
                }
            }
            Match::InOrder => {
                let mut next = 0;
                for (index, want) in expected.iter().enumerate() {
                    match calls[next..].iter().position(|(_, c)| c.name == want.name) {
                        Some(at) => {
                            let (turn, call) = calls[next + at];
                            self.arguments(want, call, turn, ctx, issue, &mut issues)?;
                            next += at + 1;
                        }
                        None => issues.push(missing(index, want, " in its order")),
                    }
                }
            }
            Match::AnyOrder => {
                let mut used = vec![false; calls.len()];
                for (index, want) in expected.iter().enumerate() {
                    let mut best: Option<(usize, usize)> = None;
                    for (at, (_, call)) in calls.iter().enumerate() {
                        if used[at] || call.name != want.name {
                            continue;
                        }
                        let agree = self.agreeing(want, call, ctx)?;
                        if best.is_none_or(|(_, most)| agree > most) {
                            best = Some((at, agree));
                        }
                    }
                    match best {
                        Some((at, _)) => {
                            used[at] = true;
                            let (turn, call) = calls[at];
                            self.arguments(want, call, turn, ctx, issue, &mut issues)?;
                        }
                        None => issues.push(missing(index, want, "")),
                    }
                }
            }
        }
        Ok(issues)
    }

    /// The strategy of `tool`'s `argument`.
    fn strategy(&self, tool: &str, argument: &str) -> &Resolved {
        self.strategies
            .get(&format!("{tool}.{argument}"))
            .or_else(|| self.strategies.get(argument))
            .unwrap_or(&self.exact)
    }

    /// How many of `want`'s arguments `call` matches (to pick among calls of
    /// one tool, `any_order`).
    fn agreeing(
        &self,
        want: &Expected<'_>,
        call: &ToolCall,
        ctx: &Context<'_>,
    ) -> Result<usize, EvalError> {
        let mut count = 0;
        for (argument, value) in want
            .arguments
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            let resolved = self.strategy(&call.name, argument.as_str());
            let actual = call.arguments.get(argument.as_str()).unwrap_or(&Json::Null);
            if resolved.is_ignore()
                || resolved.similarity(value, actual, ctx)? >= resolved.threshold
            {
                count += 1;
            }
        }
        Ok(count)
    }

    /// An issue for each of `want`'s arguments that `call` (of `turn`) does not match.
    fn arguments(
        &self,
        want: &Expected<'_>,
        call: &ToolCall,
        turn: usize,
        ctx: &Context<'_>,
        issue: &dyn Fn(&'static str, String, &str) -> Issue,
        issues: &mut Vec<Issue>,
    ) -> Result<(), EvalError> {
        let Some(arguments) = want.arguments.and_then(Json::as_object) else {
            return Ok(());
        };
        let tool = call.name.as_str();
        for (argument, value) in arguments.iter() {
            let argument = argument.as_str();
            let resolved = self.strategy(tool, argument);
            if resolved.is_ignore() {
                continue;
            }
            let at = format!("{}/{}", call.arguments_path, escape_pointer(argument));
            let message = match call.arguments.get(argument) {
                None | Some(Json::Null) if !value.is_null() => {
                    format!(
                        "`{tool}` is called without the argument `{argument}`, expected {value}"
                    )
                }
                actual => {
                    let actual = actual.unwrap_or(&Json::Null);
                    let similarity = resolved.similarity(value, actual, ctx)?;
                    if similarity >= resolved.threshold {
                        continue;
                    }
                    format!(
                        "`{tool}`'s argument `{argument}` is {actual}, expected {value} ({} {} < {})",
                        resolved.name,
                        crate::text::short_number(similarity, resolved.threshold),
                        crate::text::short_number(resolved.threshold, similarity),
                    )
                }
            };
            issues.push(issue(codes::TOOL_CALLS_ARGUMENT_MISMATCH, message, &at).in_turn(turn));
        }
        Ok(())
    }
}

/// `expected.tool_calls`: a list of `{name, arguments}` (`arguments` an
/// object, or absent); anything else is the record's input error.
fn read_expected(list: &Json) -> Result<Vec<Expected<'_>>, EvalError> {
    let bad = |what: String| {
        EvalError::new(
            ErrorKind::Input,
            format!("`expected.tool_calls` {what}: it is a list of {{\"name\", \"arguments\"}}"),
        )
    };
    let Some(items) = list.as_array() else {
        return Err(bad(format!("is {}", crate::text::json_type_name(list))));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let Some(name) = item.get("name").and_then(Json::as_str) else {
                return Err(bad(format!("{index} has no `name`")));
            };
            let arguments = item.get("arguments").filter(|a| !a.is_null());
            if arguments.is_some_and(|a| a.as_object().is_none()) {
                return Err(bad(format!("{index}'s `arguments` is not an object")));
            }
            Ok(Expected { name, arguments })
        })
        .collect()
}

fn plural(count: usize, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}
