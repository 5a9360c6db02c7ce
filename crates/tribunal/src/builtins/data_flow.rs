//! `tool_calls`' data flow, with no script: an argument bound taken from an
//! earlier tool's output (`max: { output_of: lookup_order, pointer: /total }`),
//! tools forbidden once an output matched a pattern (`after_output`), and
//! argument values that must come from the messages of a role
//! (`values_from`). Each is checked per call as the transcript is walked, so
//! a proposed call is judged by what came before it, in linear time.

use std::collections::{BTreeMap, HashMap};

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::codes;
use crate::component::BuildError;
use crate::json::{Json, Seg};
use crate::report::Issue;
use crate::transcript::{Role, ToolCall, Turn};

/// An argument bound by an earlier tool output.
#[derive(Debug, Clone)]
pub struct OutputBound {
    tool: String,
    /// The argument's name as messages say it (`amount`, `order.total`).
    label: String,
    /// Its JSON pointer inside the arguments (`/amount`, `/order/total`).
    pointer_in_arguments: String,
    max: bool,
    output_of: String,
    pointer: String,
}

/// `{ output_of: TOOL, pointer: /json/pointer }` in place of a number.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputRef {
    output_of: String,
    pointer: String,
}

/// `after_output:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterOutputSpec {
    tool: String,
    matches: String,
    forbid: Vec<String>,
}

/// `values_from:` as written, by `tool.argument`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValuesFromSpec {
    role: RoleName,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RoleName {
    System,
    User,
    Assistant,
    Tool,
}

impl RoleName {
    fn role(self) -> Role {
        match self {
            Self::System => Role::System,
            Self::User => Role::User,
            Self::Assistant => Role::Assistant,
            Self::Tool => Role::Tool,
        }
    }
}

#[derive(Debug)]
struct AfterOutput {
    tool: String,
    matches: Regex,
    forbid: Vec<String>,
}

#[derive(Debug)]
struct ValueFrom {
    tool: String,
    argument: String,
    role: Role,
}

/// The data-flow rules of a `tool_calls` step, compiled.
#[derive(Debug, Default)]
pub struct Flow {
    bounds: Vec<OutputBound>,
    after: Vec<AfterOutput>,
    values_from: Vec<ValueFrom>,
}

/// Takes the bounds that name a tool output out of argument rules by tool
/// (so that the rest compiles as a contract's fields), at any depth of
/// `fields`.
pub fn take_output_bounds(
    by_tool: &mut BTreeMap<String, Value>,
    step: &str,
) -> Result<Vec<OutputBound>, BuildError> {
    fn walk(
        fields: &mut serde_json::Map<String, Value>,
        tool: &str,
        path: &mut Vec<String>,
        step: &str,
        out: &mut Vec<OutputBound>,
    ) -> Result<(), BuildError> {
        for (name, spec) in fields.iter_mut() {
            let Some(spec) = spec.as_object_mut() else {
                continue;
            };
            path.push(name.clone());
            for (key, max) in [("min", false), ("max", true)] {
                if !spec.get(key).is_some_and(Value::is_object) {
                    continue;
                }
                let at = format!("arguments.{tool}.{}.{key}", path.join(".fields."));
                let bound: OutputRef = serde_json::from_value(spec.remove(key).unwrap_or_default())
                    .map_err(|err| {
                        BuildError::new(format!(
                            "{step}: `{key}` of `{tool}.{}` is a number, or `{{output_of: TOOL, pointer: /json/pointer}}`: {err}",
                            path.join(".")
                        ))
                        .at_key(at.clone())
                    })?;
                if !(bound.pointer.is_empty() || bound.pointer.starts_with('/')) {
                    return Err(BuildError::new(format!(
                        "{step}: `pointer` of `{tool}.{}` must be a JSON pointer (`/total`), got `{}`",
                        path.join("."),
                        bound.pointer
                    ))
                    .at_key(at));
                }
                out.push(OutputBound {
                    tool: tool.to_owned(),
                    label: path.join("."),
                    pointer_in_arguments: crate::contract::pointer_of(
                        &path.iter().cloned().map(Seg::Member).collect::<Vec<_>>(),
                    ),
                    max,
                    output_of: bound.output_of,
                    pointer: bound.pointer,
                });
            }
            if let Some(Value::Object(nested)) = spec.get_mut("fields") {
                walk(nested, tool, path, step, out)?;
            }
            path.pop();
        }
        Ok(())
    }
    let mut out = Vec::new();
    for (tool, fields) in by_tool.iter_mut() {
        if let Some(fields) = fields.as_object_mut() {
            walk(fields, tool, &mut Vec::new(), step, &mut out)?;
        }
    }
    Ok(out)
}

impl Flow {
    /// Compiles the data-flow rules (`split` reads a `values_from` key's tool
    /// and argument).
    pub fn build(
        bounds: Vec<OutputBound>,
        after: Vec<AfterOutputSpec>,
        values_from: BTreeMap<String, ValuesFromSpec>,
        split: impl Fn(&str) -> Option<(String, String)>,
        step: &str,
    ) -> Result<Self, BuildError> {
        let after = after
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                let matches = crate::text::regex(&spec.matches).map_err(|err| {
                    BuildError::new(format!(
                        "{step}: `after_output` {}: `matches` is not a valid regular expression: {err}",
                        i + 1
                    ))
                    .at_key("after_output")
                })?;
                if spec.forbid.is_empty() {
                    return Err(BuildError::new(format!(
                        "{step}: `after_output` {}: `forbid` lists no tool: the rule would never fire",
                        i + 1
                    ))
                    .at_key("after_output"));
                }
                Ok(AfterOutput {
                    tool: spec.tool,
                    matches,
                    forbid: spec.forbid,
                })
            })
            .collect::<Result<_, BuildError>>()?;
        let values_from = values_from
            .into_iter()
            .map(|(key, spec)| {
                let (tool, argument) = split(&key).ok_or_else(|| {
                    BuildError::new(format!(
                        "{step}: a `values_from` key is `tool.argument`, got `{key}`"
                    ))
                    .at_key("values_from")
                    .at_value(key.clone())
                })?;
                Ok(ValueFrom {
                    tool,
                    argument,
                    role: spec.role.role(),
                })
            })
            .collect::<Result<_, BuildError>>()?;
        Ok(Self {
            bounds,
            after,
            values_from,
        })
    }

    /// Whether there is anything to check.
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty() && self.after.is_empty() && self.values_from.is_empty()
    }

    /// Every tool the rules name: the rule, the tool, the config key.
    pub fn named(&self) -> Vec<(&'static str, &str, String)> {
        let mut named = Vec::new();
        for bound in &self.bounds {
            let key = format!("arguments.{}", bound.tool);
            named.push(("output_of", bound.output_of.as_str(), key));
        }
        for rule in &self.after {
            named.push((
                "after_output",
                rule.tool.as_str(),
                "after_output".to_owned(),
            ));
            for tool in &rule.forbid {
                named.push(("after_output", tool.as_str(), "after_output".to_owned()));
            }
        }
        for rule in &self.values_from {
            named.push(("values_from", rule.tool.as_str(), "values_from".to_owned()));
        }
        named
    }

    /// Takes in a turn that is not an assistant's calls: a tool's output
    /// (the latest of its tool, and what `after_output` forbids from now),
    /// or a message whose text `values_from` may read.
    pub fn turn<'t>(&self, turn: &'t Turn, state: &mut FlowState<'t>) {
        if !self.values_from.is_empty() {
            state.texts[role_index(turn.role)].push(&turn.text);
        }
        for call in &turn.tool_calls {
            if !call.id.is_empty() {
                state.ids.insert(&call.id, &call.name);
            }
        }
        if turn.role != Role::Tool {
            return;
        }
        let Some(tool) = turn
            .tool_call_id
            .as_deref()
            .and_then(|id| state.ids.get(id).copied())
        else {
            return;
        };
        if self.bounds.iter().any(|b| b.output_of == tool) {
            let read = crate::json_read::parse(&turn.text);
            state.latest.insert(tool, read);
        }
        for (index, rule) in self.after.iter().enumerate() {
            if rule.tool == tool && rule.matches.is_match(&turn.text) {
                for forbidden in &rule.forbid {
                    state
                        .forbidden
                        .entry(forbidden.clone())
                        .or_insert((tool, index, &turn.path));
                }
            }
        }
    }

    /// The issues of `call` given what came before it, each made by `issue`
    /// (code, message, path: the step's own, with its severity).
    pub fn check_call(
        &self,
        call: &ToolCall,
        state: &FlowState<'_>,
        issue: &dyn Fn(&'static str, String, &str) -> Issue,
        out: &mut Vec<Issue>,
    ) {
        let name = call.name.as_str();
        if let Some(&(tool, rule, at)) = state.forbidden.get(name) {
            let pattern = self.after[rule].matches.as_str();
            out.push(issue(
                codes::TOOL_CALLS_AFTER_OUTPUT,
                format!(
                    "`{name}` may not be called once an output of `{tool}` matched `{pattern}` (at {at}; `after_output`)"
                ),
                &call.path,
            ));
        }
        for bound in self.bounds.iter().filter(|b| b.tool == name) {
            if let Some(message) = bound_problem(bound, call, state) {
                let path = format!("{}{}", call.arguments_path, bound.pointer_in_arguments);
                out.push(issue(codes::TOOL_CALLS_OUTPUT_BOUND, message, &path));
            }
        }
        for rule in self.values_from.iter().filter(|r| r.tool == name) {
            if let Some(message) = value_problem(rule, call, state) {
                let path = format!(
                    "{}/{}",
                    call.arguments_path,
                    crate::json::escape_pointer(&rule.argument)
                );
                out.push(issue(codes::TOOL_CALLS_VALUE_NOT_FROM, message, &path));
            }
        }
    }
}

/// What is wrong with `call` under an argument bound read from an output.
fn bound_problem(bound: &OutputBound, call: &ToolCall, state: &FlowState<'_>) -> Option<String> {
    let name = call.name.as_str();
    let Some(Json::Number(value)) = call.arguments.pointer(&bound.pointer_in_arguments) else {
        return None; // missing or not a number: the argument rules say so
    };
    let label = &bound.label;
    let key = if bound.max { "max" } else { "min" };
    let limit = match state.latest.get(bound.output_of.as_str()) {
        None => Err(format!(
            "`{name}` argument `{label}` is bounded by the output of `{}` (`{key}`), and no output of it comes before this call",
            bound.output_of
        )),
        Some(output) => match output.as_ref().and_then(|o| o.pointer(&bound.pointer)) {
            Some(Json::Number(limit)) => Ok(limit),
            _ => Err(format!(
                "`{name}` argument `{label}` is bounded by the number at `{}` of the output of `{}` (`{key}`), and the latest output has none there",
                bound.pointer, bound.output_of
            )),
        },
    };
    match limit {
        Err(message) => Some(message),
        Ok(limit) => {
            let order = crate::decimal::compare(value.as_str(), limit.as_str());
            let past = if bound.max {
                order == std::cmp::Ordering::Greater
            } else {
                order == std::cmp::Ordering::Less
            };
            past.then(|| {
                format!(
                    "`{name}` argument `{label}` must be at {} {} (`{}` of the output of `{}`), got {}",
                    if bound.max { "most" } else { "least" },
                    limit.as_str(),
                    bound.pointer,
                    bound.output_of,
                    value.as_str()
                )
            })
        }
    }
}

/// What is wrong with `call` under a `values_from` rule: its value in no
/// message of the role before it.
fn value_problem(rule: &ValueFrom, call: &ToolCall, state: &FlowState<'_>) -> Option<String> {
    let value = call
        .arguments
        .as_object()
        .and_then(|o| o.get(rule.argument.as_str()))?;
    let text = match value {
        Json::String(s) => s.to_string(),
        Json::Null => return None,
        other => other.to_string(),
    };
    let texts = &state.texts[role_index(rule.role)];
    if texts.iter().any(|t| t.contains(text.as_str())) {
        return None;
    }
    Some(format!(
        "`{}` argument `{}` is {}, which no {} message before it holds (`values_from`)",
        call.name,
        rule.argument,
        Json::from(crate::files::excerpt(&text)),
        rule.role.as_str()
    ))
}

fn role_index(role: Role) -> usize {
    match role {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
        Role::Tool => 3,
    }
}

/// What the walk of a transcript has seen so far.
#[derive(Debug, Default)]
pub struct FlowState<'t> {
    /// The tool each call id names.
    ids: HashMap<&'t str, &'t str>,
    /// The latest output of each tool a bound reads (`None`: not JSON).
    latest: HashMap<&'t str, Option<Json>>,
    /// Tools forbidden from now: by the output of which tool, under which
    /// `after_output` rule, at which message.
    forbidden: HashMap<String, (&'t str, usize, &'t str)>,
    /// The texts of each role so far (by [`role_index`]), when a
    /// `values_from` rule reads them.
    texts: [Vec<&'t str>; 4],
}
