//! Failing closed at load time: every tool a step's rules name (`max_calls`,
//! `required`, `forbidden`, orders, strategies' arguments) must be one the step
//! knows, and a rule that can never fire is an error.

use super::{Config, MaxCalls};
use crate::build::BuildCtx;
use crate::builtins::data_flow::Flow;
use crate::builtins::tool_arguments::ArgumentsSpec;
use crate::component::BuildError;

/// The tools a step knows, to check the names its rules give against: its
/// `allowed` list when it has one, else the tools its `arguments` describe
/// (by tool, or the pack contract's variants under `arguments: contract`).
pub(super) struct Known<'a> {
    pub(super) names: Vec<&'a str>,
    /// Where they come from, as the error says it.
    from: &'static str,
}

impl<'a> Known<'a> {
    pub(super) fn of(config: &'a Config, ctx: &'a BuildCtx<'_>) -> Self {
        if let Some(allowed) = &config.allowed {
            return Self {
                names: allowed.iter().map(String::as_str).collect(),
                from: "`allowed`",
            };
        }
        match &config.arguments {
            Some(ArgumentsSpec::ByTool(by_tool)) => Self {
                names: by_tool.keys().map(String::as_str).collect(),
                from: "the tools of `arguments`",
            },
            Some(ArgumentsSpec::Contract(_)) => Self {
                names: ctx
                    .contract
                    .map(|c| c.variants.iter().map(|v| v.kind.as_str()).collect())
                    .unwrap_or_default(),
                from: "the contract's variants (`arguments: contract`)",
            },
            None => Self {
                names: Vec::new(),
                from: "",
            },
        }
    }

    fn has(&self, tool: &str) -> bool {
        self.names.contains(&tool)
    }

    /// The error for `tool`, named by `rule` at the config key `key` (and at
    /// `value` under it, for a name in a list), when the step does not know it.
    fn unknown(
        &self,
        step: &str,
        rule: &str,
        tool: &str,
        key: &str,
        value: Option<&str>,
    ) -> BuildError {
        let error = BuildError::new(format!(
            "{step}: `{rule}` names `{tool}`, which is not a tool this step knows ({}: {}); a rule about a tool the agent cannot call would never fire",
            self.from,
            self.names.join(", ")
        ))
        .at_key(key)
        .suggest(crate::suggest::nearest(tool, &self.names));
        match value {
            Some(value) => error.at_value(value),
            None => error,
        }
    }
}

/// Rules that can never fire, or never be met: an `order` pair of one tool,
/// or with a forbidden one; a limit of 0 on a tool the step allows or
/// requires; no call at all with a required tool.
fn never_fires(
    config: &Config,
    order: &[(String, String)],
    by_tool: &[(&str, usize)],
    step: &str,
) -> Result<(), BuildError> {
    for (first, then) in order {
        if first == then {
            return Err(BuildError::new(format!(
                "{step}: the `order` pair [{first}, {then}] names one tool twice: it can never be met"
            ))
            .at_key("order")
            .at_value(first));
        }
        if let Some(tool) = [first, then]
            .into_iter()
            .find(|t| config.forbidden.contains(t))
        {
            return Err(BuildError::new(format!(
                "{step}: the `order` pair [{first}, {then}] names `{tool}`, which is forbidden: it can never be met"
            ))
            .at_key("order")
            .at_value(tool));
        }
    }
    for &(tool, limit) in by_tool {
        let allowed = config
            .allowed
            .as_ref()
            .is_some_and(|a| a.iter().any(|t| t == tool));
        if limit == 0 && (allowed || config.required.iter().any(|t| t == tool)) {
            let why = if allowed { "allowed" } else { "required" };
            return Err(BuildError::new(format!(
                "{step}: `max_calls` of `{tool}` is 0, and `{tool}` is {why}: no call of it can pass; forbid it instead"
            ))
            .at_key(format!("max_calls.{tool}")));
        }
    }
    let total_zero = match &config.max_calls {
        Some(MaxCalls::All(limit)) => *limit == 0,
        Some(MaxCalls::ByTool(limits)) => limits.get("*") == Some(&0),
        None => false,
    };
    if total_zero && !config.required.is_empty() {
        return Err(BuildError::new(format!(
            "{step}: `max_calls` allows no call at all, and `required` names `{}`: it can never be met",
            config.required[0]
        ))
        .at_key("max_calls"));
    }
    Ok(())
}

/// Fails closed at load: every tool a rule names is one the step knows
/// ([`Known`]), and no rule is one that can never fire (an `order` pair of
/// one tool, or with a forbidden one; a limit of 0 on a tool the step allows
/// or requires). A step that names tools but lists none to check them
/// against gets a warning.
pub(super) fn check_names(
    config: &Config,
    order: &[(String, String)],
    flow: &Flow,
    known: &Known<'_>,
    ctx: &BuildCtx<'_>,
) -> Result<(), BuildError> {
    let step = ctx.name;
    let by_tool: Vec<(&str, usize)> = match &config.max_calls {
        Some(MaxCalls::ByTool(limits)) => limits
            .iter()
            .filter(|(tool, _)| tool.as_str() != "*")
            .map(|(tool, limit)| (tool.as_str(), *limit))
            .collect(),
        _ => Vec::new(),
    };
    let argument_tools: Vec<&str> = match (&config.arguments, &config.allowed) {
        (Some(ArgumentsSpec::ByTool(tools)), Some(_)) => tools.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    // (`argument_strategies` keys `tool.argument` name a tool; a key with no
    // dot names an argument of any tool.)
    let strategy_tools: Vec<(&str, &str)> = config
        .argument_strategies
        .keys()
        .filter_map(|key| {
            split_strategy_key(key, &known.names).map(|(tool, _)| (tool, key.as_str()))
        })
        .collect();
    never_fires(config, order, &by_tool, step)?;
    // Every tool a rule names: the rule, the name, where an error points
    // (the key, and the value under it for a name in a list), and whether it
    // is checked (`forbidden` only without `allowed`, which refuses every
    // other tool anyway).
    let mut named: Vec<(&str, &str, String, Option<&str>, bool)> = Vec::new();
    for tool in &config.forbidden {
        let checked = config.allowed.is_none();
        named.push(("forbidden", tool, "forbidden".into(), Some(tool), checked));
    }
    for tool in &config.required {
        named.push(("required", tool, "required".into(), Some(tool), true));
    }
    for tool in order.iter().flat_map(|(first, then)| [first, then]) {
        named.push(("order", tool, "order".into(), Some(tool), true));
    }
    for &(tool, _) in &by_tool {
        named.push(("max_calls", tool, format!("max_calls.{tool}"), None, true));
    }
    for tool in argument_tools {
        named.push(("arguments", tool, format!("arguments.{tool}"), None, true));
    }
    for (tool, key) in strategy_tools {
        // (Located by the whole key: `tool.argument` is one YAML key.)
        let at = "argument_strategies".into();
        named.push(("argument_strategies", tool, at, Some(key), true));
    }
    for (rule, tool, key) in flow.named() {
        named.push((rule, tool, key, Some(tool), true));
    }
    if known.names.is_empty() {
        let mut rules: Vec<&str> = named.iter().map(|(rule, ..)| *rule).collect();
        rules.dedup();
        if let Some(first) = rules.first() {
            let listed: Vec<String> = rules.iter().map(|r| format!("`{r}`")).collect();
            ctx.warn(
                BuildError::new(format!(
                    "{step}: {} name tools, but the step lists none to check them against (`allowed`, or `arguments` by tool): a misspelt name would never match a call; list the tools the agent may call in `allowed`",
                    listed.join(", ")
                ))
                .at_key(*first),
            );
        }
        return Ok(());
    }
    for (rule, tool, key, value, checked) in named {
        if checked && !known.has(tool) {
            return Err(known.unknown(step, rule, tool, &key, value));
        }
    }
    check_strategy_arguments(config, known, ctx)
}

/// An `argument_strategies` key's tool and argument: `tool.argument`, where
/// the tool's name may hold dots itself (`math.hypot.x`: the longest tool
/// the step knows that the key starts with, else all before the last dot);
/// `None` for a key with no dot (an argument of any tool).
pub(super) fn split_strategy_key<'k>(key: &'k str, known: &[&str]) -> Option<(&'k str, &'k str)> {
    if !key.contains('.') {
        return None;
    }
    known
        .iter()
        .filter(|tool| {
            key.strip_prefix(**tool)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('.'))
        })
        .max_by_key(|tool| tool.len())
        .map(|tool| key.split_at(tool.len()))
        .map(|(tool, rest)| (tool, &rest[1..]))
        .or_else(|| key.rsplit_once('.'))
}

/// The arguments `argument_strategies` names (`tool.argument`, or an
/// `argument` of any tool), against what the step knows of each tool's
/// arguments (its `arguments` rules, or under `arguments: contract` the
/// contract variant's `arguments_field`): an argument none of them names is
/// an error where they take no other (`additional_arguments: false`, or the
/// field's `additional_fields: false`) and every tool it may belong to is
/// described, else a warning (a misspelt name would never be compared).
fn check_strategy_arguments(
    config: &Config,
    known: &Known<'_>,
    ctx: &BuildCtx<'_>,
) -> Result<(), BuildError> {
    // A tool's described arguments, and whether they are all it may have.
    let described = |tool: &str| -> Option<(Vec<&str>, bool)> {
        match config.arguments.as_ref()? {
            ArgumentsSpec::ByTool(rules) => {
                let names = rules.get(tool)?.as_object()?.keys().map(String::as_str);
                Some((names.collect(), !config.additional_arguments))
            }
            ArgumentsSpec::Contract(_) => {
                let variant = ctx.contract?.variants.iter().find(|v| v.kind == tool)?;
                let field = variant
                    .fields
                    .iter()
                    .find(|f| f.name == config.arguments_field)
                    .filter(|f| !f.children.is_empty())?;
                let names = field.children.iter().map(|c| c.name.as_str()).collect();
                Some((names, field.spec.additional_fields == Some(false)))
            }
        }
    };
    let step = ctx.name;
    // (`"*"` is every argument not named.)
    for key in config
        .argument_strategies
        .keys()
        .filter(|k| k.as_str() != "*")
    {
        let split = split_strategy_key(key, &known.names);
        let (tools, argument): (Vec<&str>, &str) = match split {
            Some((tool, argument)) => (vec![tool], argument),
            None => (known.names.clone(), key.as_str()),
        };
        let found: Vec<(Vec<&str>, bool)> = tools.iter().filter_map(|t| described(t)).collect();
        if found.is_empty() || found.iter().any(|(names, _)| names.contains(&argument)) {
            continue;
        }
        let names = found.iter().flat_map(|(names, _)| names.iter().copied());
        let closed = found.len() == tools.len() && found.iter().all(|(_, closed)| *closed);
        let whose = match split {
            Some((tool, _)) => format!("`{tool}`"),
            None => "any tool".to_owned(),
        };
        let problem = BuildError::new(if closed {
            format!(
                "{step}: `argument_strategies` names the argument `{argument}`, which {whose} cannot have: its `arguments` rules do not name it, and take no other (`additional_arguments: false`, or `additional_fields: false` under `arguments: contract`)"
            )
        } else {
            format!(
                "{step}: `argument_strategies` names the argument `{argument}`, which the `arguments` rules of {whose} do not describe: a misspelt name would never be compared (add it to the rules)"
            )
        })
        .at_key("argument_strategies")
        .at_value(key.as_str())
        .suggest(crate::suggest::nearest(argument, names));
        if closed {
            return Err(problem);
        }
        ctx.warn(problem);
    }
    Ok(())
}
