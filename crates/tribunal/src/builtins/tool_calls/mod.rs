//! `tool_calls` (postprocessor): the trajectory rules of an agent's
//! transcript: which tools it may, must and must not call, in which order, how
//! often, never the same call twice, and the calls of an expected trajectory.

mod known;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, Early, EvalError, Kind, PostOutput, Postprocessor,
};
use crate::report::{Issue, Severity};
use crate::transcript::ToolCall;
use known::{check_names, split_strategy_key, Known};

use super::data_flow::{take_output_bounds, AfterOutputSpec, Flow, FlowState, ValuesFromSpec};
use super::strategy_names::{NormalizeSpec, Resolver};
use super::tool_arguments::{Arguments, ArgumentsSpec};
use super::trajectory::{Match, Trajectory};
use crate::contract::{EnumEquality, Numbers};
use crate::strategy::Normalized;

pub const BUILTIN: Builtin = Builtin {
    name: "tool_calls",
    kind: Kind::Postprocessor,
    summary: "An agent's tool calls in its transcript: allowed, forbidden and required tools, order, limits, no repeated call",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "every rule",
        single_output: "no turns, so no calls: `required` and the expected trajectory are not applied; but an output that is a list of calls is one assistant turn making them, judged by every rule",
        proposal: "every rule but `required` and the expected trajectory, counting the proposed calls (`max_calls`, `order`, `no_repeat`); each proposed call gets every rule it breaks itself, even one an earlier call broke first; each issue decides the call at its path, and the earlier calls' issues are `history`",
    },
    docs: include_str!("../../../../../docs/builtins/tool_calls.md"),
    build,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    allowed: Option<Vec<String>>,
    forbidden: Vec<String>,
    required: Vec<String>,
    order: Vec<Vec<String>>,
    max_calls: Option<MaxCalls>,
    no_repeat: bool,
    severity: Severity,
    /// How the calls must match `expected.tool_calls`.
    #[serde(rename = "match")]
    matching: Match,
    /// Strategies of arguments, by `argument` or `tool.argument`.
    argument_strategies: BTreeMap<String, String>,
    /// Thresholds of strategies, by name.
    thresholds: BTreeMap<String, f64>,
    /// The sentence-embedding model folder of `SEMANTIC` arguments.
    model: Option<String>,
    /// Each tool's arguments, as a contract's `fields:`, or `contract`.
    arguments: Option<ArgumentsSpec>,
    /// With `arguments: contract`: the member of each variant that holds the
    /// arguments.
    arguments_field: String,
    /// Whether arguments `arguments` does not name are allowed.
    additional_arguments: bool,
    /// Tools forbidden once an output matched a pattern.
    after_output: Vec<AfterOutputSpec>,
    /// Argument values that must come from the messages of a role, by
    /// `tool.argument`.
    values_from: BTreeMap<String, ValuesFromSpec>,
    /// `strict`: a number written with a fraction or an exponent is not an
    /// integer, nor equal to an expected integer.
    numbers: Numbers,
    /// The characters `NORMALIZED` removes besides whitespace.
    normalize: Option<NormalizeSpec>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            allowed: None,
            forbidden: Vec::new(),
            required: Vec::new(),
            order: Vec::new(),
            max_calls: None,
            no_repeat: false,
            severity: Severity::Error,
            matching: Match::default(),
            argument_strategies: BTreeMap::new(),
            thresholds: BTreeMap::new(),
            model: None,
            arguments: None,
            arguments_field: "args".to_owned(),
            additional_arguments: true,
            after_output: Vec::new(),
            values_from: BTreeMap::new(),
            numbers: Numbers::default(),
            normalize: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MaxCalls {
    All(usize),
    ByTool(BTreeMap<String, usize>),
}

#[derive(Debug)]
struct ToolCalls {
    allowed: Option<Vec<String>>,
    forbidden: Vec<String>,
    required: Vec<String>,
    order: Vec<(String, String)>,
    /// The limit of all calls, and by tool.
    max_all: Option<usize>,
    max_by_tool: BTreeMap<String, usize>,
    no_repeat: bool,
    severity: Severity,
    trajectory: Trajectory,
    arguments: Arguments,
    flow: Flow,
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let mut config: Config = component::parse_config(ctx.name, config)?;
    let name = ctx.name;
    // Bounds read from tool outputs are the data flow's: the rest of the
    // argument rules compile as a contract's fields.
    let bounds = match &mut config.arguments {
        Some(ArgumentsSpec::ByTool(by_tool)) => take_output_bounds(by_tool, name)?,
        _ => Vec::new(),
    };
    let mut order = Vec::new();
    for pair in &config.order {
        match <[String; 2]>::try_from(pair.clone()) {
            Ok([first, then]) => order.push((first, then)),
            Err(pair) => {
                return Err(BuildError::new(format!(
                    "{name}: `order` takes pairs of tools `[first, then]`, got {pair:?}"
                ))
                .at_key("order"))
            }
        }
    }
    if let Some(allowed) = &config.allowed {
        if let Some(both) = config.forbidden.iter().find(|tool| allowed.contains(tool)) {
            return Err(
                BuildError::new(format!("{name}: `{both}` is both allowed and forbidden"))
                    .at_key("forbidden"),
            );
        }
    }
    if let Some(both) = config
        .required
        .iter()
        .find(|tool| config.forbidden.contains(tool))
    {
        return Err(
            BuildError::new(format!("{name}: `{both}` is both required and forbidden"))
                .at_key("required"),
        );
    }
    let after_output = std::mem::take(&mut config.after_output);
    let values_from = std::mem::take(&mut config.values_from);
    let known = Known::of(&config, ctx);
    let flow = Flow::build(
        bounds,
        after_output,
        values_from,
        |key| {
            split_strategy_key(key, &known.names)
                .map(|(tool, argument)| (tool.to_owned(), argument.to_owned()))
        },
        name,
    )?;
    check_names(&config, &order, &flow, &known, ctx)?;
    let (max_all, max_by_tool) = match config.max_calls {
        None => (None, BTreeMap::new()),
        Some(MaxCalls::All(limit)) => (Some(limit), BTreeMap::new()),
        Some(MaxCalls::ByTool(mut limits)) => (limits.remove("*"), limits),
    };
    let resolver = Resolver::new(ctx, name, config.model.as_deref())?
        .with_thresholds(&config.thresholds, &[])?
        .with_normalize(config.normalize.as_ref());
    // (The pack contract's `numbers:` holds for the arguments too.)
    let numbers = config
        .numbers
        .with(ctx.contract.map_or(Numbers::default(), |c| c.numbers));
    let trajectory = Trajectory::build(
        config.matching,
        &config.argument_strategies,
        &resolver,
        numbers.strict,
    )?;
    let arguments = Arguments::build(
        config.arguments.as_ref(),
        (config.additional_arguments, numbers),
        &config.arguments_field,
        ctx,
        &|tool, argument| enum_equality(&trajectory, config.normalize.as_ref(), tool, argument),
    )?;
    Ok(Compiled::Postprocessor(Arc::new(ToolCalls {
        allowed: config.allowed,
        forbidden: config.forbidden,
        required: config.required,
        order,
        max_all,
        max_by_tool,
        no_repeat: config.no_repeat,
        severity: config.severity,
        trajectory,
        arguments,
        flow,
    })))
}

/// How the `enum` of `tool`'s `argument` compares: as its named strategy
/// does when that is EXACT or NORMALIZED (with the step's `normalize`), else
/// by value.
fn enum_equality(
    trajectory: &Trajectory,
    normalize: Option<&NormalizeSpec>,
    tool: &str,
    argument: &str,
) -> EnumEquality {
    match trajectory
        .named_strategy(tool, argument)
        .map(|r| r.name.as_str())
    {
        Some("exact") => EnumEquality::Exact,
        Some("normalized") => EnumEquality::Normalized(Normalized::stripping(
            normalize.map_or(crate::strategy::DEFAULT_NORMALIZE_STRIP, |spec| {
                spec.strip.as_str()
            }),
        )),
        _ => EnumEquality::Value,
    }
}

impl ToolCalls {
    fn issue(&self, code: &'static str, message: String, path: &str) -> Issue {
        let mut issue = Issue::error("", message).at(path).code(code);
        issue.severity = self.severity;
        issue
    }

    /// The issues of one call (the `index`th), given the calls before it
    /// (`seen`): constant work per call, so a transcript of any length is
    /// judged in linear time.
    ///
    /// A `proposed` call (one a proposal asks to make) gets each of its own
    /// issues even where an earlier call already broke the same rule: a
    /// second refund past `max_calls`, another call before its `order`'s
    /// first tool. (Judging a whole conversation, a broken order or limit is
    /// said once, at the first call that breaks it.)
    fn check_call<'c>(
        &self,
        index: usize,
        call: &'c ToolCall,
        proposed: bool,
        seen: &mut Seen<'c>,
        issues: &mut Vec<Issue>,
    ) {
        let name = call.name.as_str();
        if self.forbidden.iter().any(|tool| tool == name) {
            issues.push(self.issue(
                codes::TOOL_CALLS_FORBIDDEN,
                format!("`{name}` is a forbidden tool"),
                &call.path,
            ));
        } else if let Some(allowed) = &self.allowed {
            if !allowed.iter().any(|tool| tool == name) {
                let hint = crate::suggest::nearest(name, allowed)
                    .map_or_else(String::new, |near| {
                        format!("; {}", crate::suggest::did_you_mean(&near))
                    });
                issues.push(self.issue(
                    codes::TOOL_CALLS_NOT_ALLOWED,
                    format!(
                        "`{name}` is not an allowed tool (allowed: {}){hint}",
                        allowed.join(", ")
                    ),
                    &call.path,
                ));
            }
        }
        let first_of_its_name = !seen.counts.contains_key(name);
        for (first, then) in &self.order {
            if then == name
                && (first_of_its_name || proposed)
                && !seen.counts.contains_key(first.as_str())
            {
                issues.push(self.issue(
                    codes::TOOL_CALLS_ORDER,
                    format!("`{name}` is called before `{first}`, which must come first"),
                    &call.path,
                ));
            }
        }
        let count = seen.counts.entry(name).or_default();
        *count += 1;
        if let Some(limit) = self.max_by_tool.get(name) {
            if *count == limit + 1 || (proposed && *count > limit + 1) {
                issues.push(self.issue(
                    codes::TOOL_CALLS_TOO_MANY,
                    match limit {
                        0 => format!("`{name}` may not be called (`max_calls: 0`)"),
                        1 => format!("`{name}` is called more than once (`max_calls: 1`)"),
                        _ => format!(
                            "`{name}` is called more than {limit} times (`max_calls: {limit}`)"
                        ),
                    },
                    &call.path,
                ));
            }
        }
        if let Some(limit) = self
            .max_all
            .filter(|limit| index == *limit || (proposed && index > *limit))
        {
            issues.push(self.issue(
                codes::TOOL_CALLS_TOO_MANY,
                match limit {
                    0 => "a tool call where none may be made (`max_calls: 0`)".to_owned(),
                    1 => "more than one tool call (`max_calls: 1`)".to_owned(),
                    _ => format!("more than {limit} tool calls (`max_calls: {limit}`)"),
                },
                &call.path,
            ));
        }
        if self.no_repeat {
            let key = crate::decimal::value_key(&call.arguments);
            match seen.calls.entry((name, key)) {
                Entry::Occupied(first) => issues.push(self.issue(
                    codes::TOOL_CALLS_REPEATED,
                    format!(
                        "`{name}` is called again with the same arguments (first at {})",
                        first.get()
                    ),
                    &call.path,
                )),
                Entry::Vacant(slot) => {
                    slot.insert(&call.path);
                }
            }
        }
    }
}

/// What the calls so far were: how many of each tool, and where each
/// distinct call (tool and arguments) was first made.
#[derive(Default)]
struct Seen<'c> {
    counts: HashMap<&'c str, usize>,
    calls: HashMap<(&'c str, Vec<u8>), &'c str>,
}

impl Postprocessor for ToolCalls {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let calls: Vec<(usize, &ToolCall)> = ctx
            .turns
            .unwrap_or_default()
            .iter()
            .enumerate()
            .flat_map(|(turn, t)| t.tool_calls.iter().map(move |call| (turn, call)))
            .collect();
        let mut issues = Vec::new();
        let mut seen = Seen::default();
        let mut flow = FlowState::default();
        let turns = ctx.turns.unwrap_or_default();
        let mut walked = 0;
        let issue = |code, message, path: &str| self.issue(code, message, path);
        // A proposal's calls are its last turn's.
        let proposing = (ctx.judging == crate::component::Judging::Proposal)
            .then(|| turns.len().saturating_sub(1));
        for (index, &(turn, call)) in calls.iter().enumerate() {
            // What came before this call's turn: its outputs and messages.
            if !self.flow.is_empty() {
                while walked <= turn {
                    self.flow.turn(&turns[walked], &mut flow);
                    walked += 1;
                }
            }
            let before = issues.len();
            let proposed = proposing == Some(turn);
            self.check_call(index, call, proposed, &mut seen, &mut issues);
            self.flow.check_call(call, &flow, &issue, &mut issues);
            let unreadable = ctx.issues.iter().any(|issue| {
                issue.code == codes::TRANSCRIPT_ARGUMENTS_NOT_JSON
                    && issue.path.as_deref() == Some(call.arguments_path.as_str())
            });
            issues.extend(self.arguments.check(call, unreadable));
            // Each of a call's issues is about the turn that makes it.
            for issue in &mut issues[before..] {
                issue.turn = Some(turn);
            }
        }
        // `required` and the expected trajectory judge a finished
        // conversation: not a proposal, nor a single output or a stream
        // (no turns), which could never meet them.
        let finished = ctx.turns.is_some() && ctx.judging == crate::component::Judging::Whole;
        // Where a call that is not made is missing: the transcript, or an
        // output that is a list of calls (its one turn has the output's path).
        let calls_at = match turns {
            [only] if only.path.is_empty() => "",
            _ => "/messages",
        };
        for tool in self.required.iter().filter(|_| finished) {
            if !seen.counts.contains_key(tool.as_str()) {
                issues.push(self.issue(
                    codes::TOOL_CALLS_MISSING,
                    format!("`{tool}` is required, and never called"),
                    calls_at,
                ));
            }
        }
        if ctx.judging == crate::component::Judging::Whole {
            issues.extend(self.trajectory.check(&calls, ctx, &issue, calls_at)?);
        }
        Ok(PostOutput { issues, json: None })
    }

    fn early(&self) -> Early {
        Early::AtFinish { keeps_json: true }
    }

    /// Its `allowed` tools (else those its `arguments` describe), each with
    /// the schema of its argument rules (an open object without rules).
    fn tools(&self) -> Vec<component::ToolDefinition> {
        let names: Vec<&str> = match &self.allowed {
            Some(allowed) => allowed.iter().map(String::as_str).collect(),
            None => self.arguments.tools(),
        };
        names
            .into_iter()
            .filter(|name| !self.forbidden.iter().any(|f| f == name))
            .map(|name| {
                let (parameters, description) = self.arguments.schema(name).unwrap_or_else(|| {
                    (
                        serde_json::json!({"type": "object", "properties": {}}),
                        None,
                    )
                });
                component::ToolDefinition {
                    name: name.to_owned(),
                    description,
                    parameters,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_support::build_ctx;
    use serde_json::json;

    fn compile(config: &Value) -> Arc<dyn Postprocessor> {
        crate::builtins::test_support::postprocessor(build, "tool_calls", config)
    }

    /// `any_order` pairs the expected calls with the calls made at best:
    /// the same verdict whatever the order of either list (a less specific
    /// expected call no longer takes the call a later one needs).
    #[test]
    fn any_order_gives_one_verdict_whatever_the_order_of_the_calls_and_the_expected_ones() {
        let config = json!({"match": "any_order"});
        let made = [
            ("a", json!({"x": 1, "y": 2})),
            ("a", json!({"x": 1, "y": 3})),
            ("b", json!({"z": "q"})),
        ];
        let expected = [
            json!({"name": "a", "arguments": {"x": 1}}),
            json!({"name": "a", "arguments": {"x": 1, "y": 3}}),
            json!({"name": "b", "arguments": {"z": "q"}}),
        ];
        let verdict = |made: &[(&str, Value)], expected: &[Value]| -> Vec<String> {
            let messages = calls(made);
            let (transcript, _) =
                crate::transcript::read(&crate::json::Json::from(messages), "/messages");
            let fixture = crate::builtins::test_support::Fixture::new(
                "",
                Value::Null,
                json!({"tool_calls": expected}),
            );
            let mut ctx = fixture.ctx();
            ctx.turns = Some(&transcript.turns);
            let mut codes: Vec<String> = compile(&config)
                .process(&ctx)
                .unwrap()
                .issues
                .into_iter()
                .map(|i| i.code.to_string())
                .collect();
            codes.sort();
            codes
        };
        let orders = [[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]];
        for made_order in orders {
            for expected_order in orders {
                let made: Vec<_> = made_order.iter().map(|&i| made[i].clone()).collect();
                let expected: Vec<_> = expected_order
                    .iter()
                    .map(|&i| expected[i].clone())
                    .collect();
                assert_eq!(
                    verdict(&made, &expected),
                    Vec::<String>::new(),
                    "{made:?} {expected:?}"
                );
            }
        }
        // Two expected calls of one tool, one call of it: one is missing,
        // whichever order.
        let one = [("a", json!({"x": 1, "y": 3}))];
        for expected in [
            [expected[0].clone(), expected[1].clone()],
            [expected[1].clone(), expected[0].clone()],
        ] {
            assert_eq!(verdict(&one, &expected), ["tool.expected-missing"]);
        }
    }

    fn run(config: &Value, messages: &Value) -> Vec<(String, String, String)> {
        let (transcript, _) =
            crate::transcript::read(&crate::json::Json::from(messages.clone()), "/messages");
        let fixture = crate::builtins::test_support::Fixture::new("", Value::Null, Value::Null);
        let mut ctx = fixture.ctx();
        ctx.turns = Some(&transcript.turns);
        compile(config)
            .process(&ctx)
            .unwrap()
            .issues
            .into_iter()
            .map(|i| (i.code.to_string(), i.path.unwrap_or_default(), i.message))
            .collect()
    }

    fn calls(names_and_args: &[(&str, Value)]) -> Value {
        let calls: Vec<Value> = names_and_args
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                json!({"id": format!("c{i}"), "type": "function",
                       "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": calls}])
    }

    #[test]
    fn every_key_finds_what_it_names_at_the_call() {
        let trip = calls(&[
            ("book_flight", json!({"f": 1})),
            ("search_flights", json!({"to": "OSL"})),
            ("search_flights", json!({"to": "OSL"})),
            ("serch_hotels", json!({})),
            ("delete_booking", json!({"id": 1})),
            ("search_flights", json!({"to": "BER"})),
        ]);
        let config = json!({
            "allowed": ["search_flights", "book_flight", "search_hotels", "send_email"],
            "forbidden": ["delete_booking"],
            "required": ["book_flight", "send_email"],
            "order": [["search_flights", "book_flight"]],
            "max_calls": {"*": 5, "search_flights": 2},
            "no_repeat": true
        });
        let found = run(&config, &trip);
        let at = |i: usize| format!("/messages/1/tool_calls/{i}");
        let summary: Vec<(&str, &str)> = found
            .iter()
            .map(|(c, p, _)| (c.as_str(), p.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("tool.order", at(0).as_str()),
                ("tool.repeated", at(2).as_str()),
                ("tool.not-allowed", at(3).as_str()),
                ("tool.forbidden", at(4).as_str()),
                ("tool.too-many", at(5).as_str()),
                ("tool.too-many", at(5).as_str()),
                ("tool.missing", "/messages"),
            ],
            "{found:#?}"
        );
        assert!(
            found[2].2.contains("did you mean `search_hotels`?"),
            "{}",
            found[2].2
        );
        assert_eq!(found[1].2, "`search_flights` is called again with the same arguments (first at /messages/1/tool_calls/1)");
        // Nothing to say about a trajectory that keeps the rules.
        let fine = calls(&[
            ("search_flights", json!({"to": "OSL"})),
            ("book_flight", json!({"f": 1})),
        ]);
        assert!(run(&config.clone(), &fine)
            .iter()
            .all(|(c, ..)| c == "tool.missing"));
        // A record without a transcript (a single output, a stream) has no
        // calls, and could never meet `required`: it is not applied.
        let fixture = crate::builtins::test_support::Fixture::new("", Value::Null, Value::Null);
        let issues = compile(&json!({"required": ["x"]}))
            .process(&fixture.ctx())
            .unwrap()
            .issues;
        assert!(issues.is_empty(), "{issues:?}");
    }

    #[test]
    fn a_repeat_is_the_same_arguments_whatever_their_member_order_and_ten_thousand_calls_are_read()
    {
        let config = json!({"no_repeat": true, "order": [["a", "b"]], "max_calls": {"b": 9_000}});
        let found = run(
            &config,
            &calls(&[
                ("a", json!({"x": 1, "y": [1, {"p": "q", "r": null}]})),
                ("a", json!({"y": [1, {"r": null, "p": "q"}], "x": 1})),
                ("a", json!({"y": [{"r": null, "p": "q"}, 1], "x": 1})),
            ]),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1, "/messages/1/tool_calls/1");
        let many: Vec<(&str, Value)> = (0..10_000).map(|i| ("b", json!({"i": i}))).collect();
        // `b` before any `a`, and the 9,001st `b`.
        let found = run(&config, &calls(&many));
        assert_eq!(found.len(), 2, "{:?}", &found[..2.min(found.len())]);
    }

    #[test]
    fn bad_configs_are_build_errors() {
        let ctx = build_ctx("tool_calls");
        for bad in [
            json!({"order": [["a"]]}),
            json!({"allowed": ["a"], "forbidden": ["a"]}),
            json!({"required": ["a"], "forbidden": ["a"]}),
            json!({"max_calls": -1}),
            json!({"no_repet": true}),
        ] {
            assert!(build(&bad, &ctx).is_err(), "{bad}");
        }
        let err = build(&json!({"no_repet": true}), &ctx).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("no_repeat"));
    }

    /// Every key that names a tool, with a misspelt name, against each list
    /// a step may know its tools from: a build error at that key (and the
    /// name, in a list), with the name it meant.
    #[test]
    fn a_misspelt_tool_in_any_rule_is_a_build_error_that_names_it() {
        let ctx = build_ctx("tool_calls");
        let knowns = [
            json!({"allowed": ["lookup_order", "refund"]}),
            json!({"arguments": {"lookup_order": {}, "refund": {"amount": {"type": "number"}}}}),
        ];
        // (key, the misspelt rule, where the error points: key and value)
        let rules = [
            ("required", json!(["refnd"]), "required", Some("refnd")),
            (
                "order",
                json!([["lookup_order", "refnd"]]),
                "order",
                Some("refnd"),
            ),
            (
                "order",
                json!([["lookup_ordr", "refund"]]),
                "order",
                Some("lookup_ordr"),
            ),
            ("max_calls", json!({"refnd": 1}), "max_calls.refnd", None),
            (
                "max_calls",
                json!({"*": 3, "refnd": 1}),
                "max_calls.refnd",
                None,
            ),
            (
                "argument_strategies",
                json!({"refnd.amount": "IGNORE"}),
                "argument_strategies",
                Some("refnd.amount"),
            ),
        ];
        for known in &knowns {
            for (key, rule, at, value) in &rules {
                let mut config = known.clone();
                config[*key] = rule.clone();
                let Err(err) = build(&config, &ctx) else {
                    panic!("{config} builds");
                };
                assert!(
                    err.message.contains("which is not a tool this step knows"),
                    "{err:?}"
                );
                assert_eq!(err.key.as_deref(), Some(*at), "{config}");
                assert_eq!(err.value.as_deref(), *value, "{config}");
                let meant = if err.message.contains("lookup_ordr") {
                    "lookup_order"
                } else {
                    "refund"
                };
                assert_eq!(err.suggestion.as_deref(), Some(meant), "{config}");
                // Spelt right, it builds.
                let right = config
                    .to_string()
                    .replace("refnd", "refund")
                    .replace("lookup_ordr", "lookup_order");
                let right: Value = serde_json::from_str(&right).unwrap();
                assert!(build(&right, &ctx).is_ok(), "{right}");
            }
        }
        // With `allowed`, the tools `arguments` describes are allowed ones.
        let config = json!({"allowed": ["refund"], "arguments": {"refnd": {}}});
        let err = build(&config, &ctx).expect_err("builds");
        assert_eq!(err.key.as_deref(), Some("arguments.refnd"));
        // Without `allowed`, `forbidden` names tools `arguments` knows.
        let config = json!({"arguments": {"refund": {}}, "forbidden": ["refnd"]});
        let err = build(&config, &ctx).expect_err("builds");
        assert_eq!(err.value.as_deref(), Some("refnd"));
        // With `allowed`, a forbidden tool is one it leaves out (refused as
        // forbidden, a more exact code, rather than not allowed).
        let config = json!({"allowed": ["refund"], "forbidden": ["delete_order"]});
        assert!(build(&config, &ctx).is_ok());
    }

    /// Rules that can never fire, or never be met, are build errors; a step
    /// that names tools but lists none to check them against warns.
    #[test]
    fn rules_that_can_never_fire_are_build_errors_and_unchecked_names_warn() {
        let ctx = build_ctx("tool_calls");
        for (bad, says) in [
            (
                json!({"allowed": ["a"], "order": [["a", "a"]]}),
                "names one tool twice",
            ),
            (
                json!({"allowed": ["a"], "forbidden": ["b"], "order": [["a", "b"]]}),
                "which is forbidden",
            ),
            (
                json!({"allowed": ["a", "b"], "max_calls": {"a": 0}}),
                "`a` is allowed",
            ),
            (
                json!({"arguments": {"a": {}}, "required": ["a"], "max_calls": {"a": 0}}),
                "`a` is required",
            ),
            (
                json!({"allowed": ["a"], "required": ["a"], "max_calls": 0}),
                "allows no call at all",
            ),
            (
                json!({"allowed": ["a"], "required": ["a"], "max_calls": {"*": 0}}),
                "allows no call at all",
            ),
        ] {
            let err = build(&bad, &ctx)
                .err()
                .unwrap_or_else(|| panic!("{bad} builds"));
            assert!(err.message.contains(says), "{bad}: {}", err.message);
        }
        let warnings = std::cell::RefCell::new(Vec::new());
        let mut ctx = build_ctx("tool_calls");
        ctx.warnings = Some(&warnings);
        build(
            &json!({"max_calls": {"refnd": 1}, "forbidden": ["x"]}),
            &ctx,
        )
        .unwrap();
        let said = warnings.take();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0]
                .message
                .contains("`forbidden`, `max_calls` name tools"),
            "{said:?}"
        );
        // A step that names no tool has nothing to warn about.
        build(&json!({"no_repeat": true, "max_calls": 9}), &ctx).unwrap();
        assert!(warnings.take().is_empty());
    }

    /// `no_repeat` compares numbers by value, however written.
    #[test]
    fn a_repeat_is_the_same_numbers_however_written() {
        let config = json!({"no_repeat": true});
        let mut arguments = Vec::new();
        for amount in ["25", "25.0", "2.5e1", "250e-1", "25.000000000000000000001"] {
            let value: Value = serde_json::from_str(&format!("{{\"amount\": {amount}}}")).unwrap();
            arguments.push(("refund", value));
        }
        let found = run(&config, &calls(&arguments));
        let repeats: Vec<&str> = found.iter().map(|(_, p, _)| p.as_str()).collect();
        assert_eq!(
            repeats,
            [
                "/messages/1/tool_calls/1",
                "/messages/1/tool_calls/2",
                "/messages/1/tool_calls/3"
            ],
            "{found:?}"
        );
    }
}
