//! `tool_calls`' comparison with an expected trajectory: the record's
//! `expected.tool_calls`, each `{name, arguments}`, matched against the calls
//! the agent made (`exact`, `in_order` or `any_order`), each expected argument
//! compared by its strategy, as `json_compare` compares fields.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::matchers;
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
    /// `numbers: strict`: an expected integer is not met by `5.0` or `5e0`.
    strict: bool,
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
        strict: bool,
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
            strict,
        })
    }

    /// The issues of `calls` against the record's `expected.tool_calls`
    /// (none when it has none); each with the turn of the call it is about, a
    /// call not made at `calls_at` (the transcript, or the output).
    pub fn check(
        &self,
        calls: &[(usize, &ToolCall)],
        ctx: &Context<'_>,
        issue: &dyn Fn(&'static str, String, &str) -> Issue,
        calls_at: &str,
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
                calls_at,
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
                // The best pairing of expected calls with calls of their
                // tool: as many expected calls made as can be, then the
                // fewest mismatched arguments; the same whatever the order
                // of either list.
                let mut mismatches = vec![vec![None; calls.len()]; expected.len()];
                for (row, want) in expected.iter().enumerate() {
                    for (column, (_, call)) in calls.iter().enumerate() {
                        if call.name == want.name {
                            let agree = self.agreeing(want, call, ctx)?;
                            mismatches[row][column] = Some(want.argument_count() - agree);
                        }
                    }
                }
                for (index, (want, pair)) in
                    expected.iter().zip(best_pairing(&mismatches)).enumerate()
                {
                    match pair {
                        Some(at) => {
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

    /// The strategy of `tool`'s `argument`: by `tool.argument`, else by
    /// `argument`, else `"*"`'s, else EXACT.
    fn strategy(&self, tool: &str, argument: &str) -> &Resolved {
        self.named_strategy(tool, argument).unwrap_or(&self.exact)
    }

    /// The strategy `argument_strategies` names for `tool`'s `argument`: by
    /// `tool.argument`, else by `argument`, else `"*"`'s.
    pub(super) fn named_strategy(&self, tool: &str, argument: &str) -> Option<&Resolved> {
        self.strategies
            .get(&format!("{tool}.{argument}"))
            .or_else(|| self.strategies.get(argument))
            .or_else(|| self.strategies.get("*"))
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
            let actual = call.arguments.get(argument.as_str());
            if resolved.is_ignore()
                || self.score(resolved, value, actual, ctx)? >= resolved.threshold
            {
                count += 1;
            }
        }
        Ok(count)
    }

    /// How well the argument `actual` (`None`: not passed) matches `expected`
    /// (a value or a matcher) under `resolved`, and `numbers: strict`.
    fn score(
        &self,
        resolved: &Resolved,
        expected: &Json,
        actual: Option<&Json>,
        ctx: &Context<'_>,
    ) -> Result<f64, EvalError> {
        matchers::score(expected, actual, &mut |expected, actual| {
            if self.strict && crate::decimal::strict_mismatch(expected, actual) {
                return Ok(0.0);
            }
            resolved.similarity(expected, actual, ctx)
        })
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
            let actual = call.arguments.get(argument);
            let similarity = self.score(resolved, value, actual, ctx)?;
            if similarity >= resolved.threshold {
                continue;
            }
            let expected = matchers::describe(value);
            let message = match actual {
                None => format!(
                    "`{tool}` is called without the argument `{argument}`, expected {expected}"
                ),
                Some(actual) => {
                    let (shown, threshold) =
                        crate::text::short_numbers(similarity, resolved.threshold);
                    format!(
                        "`{tool}`'s argument `{argument}` is {actual}, expected {expected} ({} {shown} < {threshold})",
                        resolved.name,
                    )
                }
            };
            let at = format!("{}/{}", call.arguments_path, escape_pointer(argument));
            issues.push(issue(codes::TOOL_CALLS_ARGUMENT_MISMATCH, message, &at).in_turn(turn));
        }
        Ok(())
    }
}

impl Expected<'_> {
    /// How many arguments it expects.
    fn argument_count(&self) -> usize {
        self.arguments
            .and_then(Json::as_object)
            .map_or(0, crate::json::Object::len)
    }
}

/// The pairing of rows (expected calls) with columns (calls) that pairs the
/// most rows and, among those, has the fewest mismatches in all:
/// `mismatches[row][column]` is `None` where the two cannot pair (another
/// tool). A minimum-cost assignment (Hungarian method, rows to the columns
/// plus one "not made" column per row, O(rows² × (rows + columns))), so the
/// result does not depend on the order of either list.
fn best_pairing(mismatches: &[Vec<Option<usize>>]) -> Vec<Option<usize>> {
    let rows = mismatches.len();
    let Some(columns) = mismatches.first().map(Vec::len) else {
        return Vec::new();
    };
    // Leaving a row unpaired costs more than every mismatch there can be;
    // an impossible pair more than leaving every row unpaired.
    let most: i64 = mismatches
        .iter()
        .flatten()
        .flatten()
        .map(|&m| i64::try_from(m).unwrap_or(i64::MAX / 8))
        .max()
        .unwrap_or(0);
    let unpaired = (most + 1).saturating_mul(i64::try_from(rows).unwrap_or(1) + 1);
    let impossible = unpaired.saturating_mul(i64::try_from(rows).unwrap_or(1) + 1);
    let width = columns + rows;
    let cost = |row: usize, column: usize| -> i64 {
        if column < columns {
            mismatches[row][column].map_or(impossible, |m| i64::try_from(m).unwrap_or(impossible))
        } else if column - columns == row {
            unpaired
        } else {
            impossible
        }
    };
    // Potentials and the column each row is paired with, 1-based (0: none).
    let mut u = vec![0i64; rows + 1];
    let mut v = vec![0i64; width + 1];
    let mut row_of = vec![0usize; width + 1];
    let mut way = vec![0usize; width + 1];
    for row in 1..=rows {
        row_of[0] = row;
        let mut column = 0;
        let mut least = vec![i64::MAX; width + 1];
        let mut used = vec![false; width + 1];
        loop {
            used[column] = true;
            let current = row_of[column];
            let mut delta = i64::MAX;
            let mut next = 0;
            for j in 1..=width {
                if used[j] {
                    continue;
                }
                let reduced = cost(current - 1, j - 1) - u[current] - v[j];
                if reduced < least[j] {
                    least[j] = reduced;
                    way[j] = column;
                }
                if least[j] < delta {
                    delta = least[j];
                    next = j;
                }
            }
            for j in 0..=width {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    least[j] -= delta;
                }
            }
            column = next;
            if row_of[column] == 0 {
                break;
            }
        }
        loop {
            let previous = way[column];
            row_of[column] = row_of[previous];
            column = previous;
            if column == 0 {
                break;
            }
        }
    }
    let mut paired = vec![None; rows];
    for column in 1..=columns {
        let row = row_of[column];
        if row > 0 && mismatches[row - 1][column - 1].is_some() {
            paired[row - 1] = Some(column - 1);
        }
    }
    paired
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
            if let Some(arguments) = arguments {
                matchers::check(arguments, &format!("expected.tool_calls/{index}/arguments"))?;
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

#[cfg(test)]
mod tests {
    use super::best_pairing;

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// (rows paired, mismatches in all) of a pairing.
    fn value(mismatches: &[Vec<Option<usize>>], pairing: &[Option<usize>]) -> (usize, usize) {
        let mut used = std::collections::BTreeSet::new();
        let mut total = (0, 0);
        for (row, column) in pairing.iter().enumerate() {
            if let Some(column) = column {
                assert!(used.insert(*column), "a column paired twice: {pairing:?}");
                total.0 += 1;
                total.1 += mismatches[row][*column].expect("a possible pair");
            }
        }
        total
    }

    /// The best (most rows, then fewest mismatches) over every pairing.
    fn brute_force(mismatches: &[Vec<Option<usize>>]) -> (usize, usize) {
        fn go(
            row: usize,
            mismatches: &[Vec<Option<usize>>],
            used: &mut Vec<bool>,
            paired: usize,
            total: usize,
            best: &mut (usize, usize),
        ) {
            if row == mismatches.len() {
                if paired > best.0 || paired == best.0 && total < best.1 {
                    *best = (paired, total);
                }
                return;
            }
            go(row + 1, mismatches, used, paired, total, best);
            for column in 0..used.len() {
                if let (false, Some(m)) = (used[column], mismatches[row][column]) {
                    used[column] = true;
                    go(row + 1, mismatches, used, paired + 1, total + m, best);
                    used[column] = false;
                }
            }
        }
        let columns = mismatches.first().map_or(0, Vec::len);
        let mut best = (0, usize::MAX);
        go(0, mismatches, &mut vec![false; columns], 0, 0, &mut best);
        if best.0 == 0 {
            best.1 = 0;
        }
        best
    }

    #[test]
    fn the_pairing_is_the_best_whatever_the_order_of_either_list() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let rows = rng.below(5) as usize;
            let columns = rng.below(6) as usize;
            let mismatches: Vec<Vec<Option<usize>>> = (0..rows)
                .map(|_| {
                    (0..columns)
                        .map(|_| (rng.below(3) > 0).then(|| rng.below(4) as usize))
                        .collect()
                })
                .collect();
            let best = value(&mismatches, &best_pairing(&mismatches));
            assert_eq!(best, brute_force(&mismatches), "{mismatches:?}");
            // Both lists reversed: the same value.
            let mut permuted: Vec<Vec<Option<usize>>> = mismatches.iter().rev().cloned().collect();
            for row in &mut permuted {
                row.reverse();
            }
            assert_eq!(
                value(&permuted, &best_pairing(&permuted)),
                best,
                "{mismatches:?}"
            );
        }
    }
}
