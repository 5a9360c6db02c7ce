//! `messages` (postprocessor): rules on the text of a transcript's messages,
//! by role: text each must contain, a regular expression each must match, one
//! none may match. A single output is the assistant's message.

use std::sync::Arc;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, Early, EvalError, Kind, PostOutput, Postprocessor,
};
use crate::report::{Issue, Severity};
use crate::transcript::Role;

pub const BUILTIN: Builtin = Builtin {
    name: "messages",
    kind: Kind::Postprocessor,
    summary: "Rules on the text of messages by role: text each must contain, a pattern each must match, one none may match",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "applied: each message of the roles it names",
        single_output: "applied: the output, as the assistant's message",
        proposal: "applied: the proposing message's findings decide no call; the earlier messages' are `history`",
    },
    docs: include_str!("../../../../docs/builtins/messages.md"),
    build,
};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleSpec {
    #[serde(default)]
    contains: Option<Texts>,
    #[serde(default)]
    matches: Option<String>,
    #[serde(default)]
    not_matches: Option<String>,
}

/// A text, or a list of texts.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Texts {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    system: Option<RoleSpec>,
    #[serde(default)]
    user: Option<RoleSpec>,
    #[serde(default)]
    assistant: Option<RoleSpec>,
    #[serde(default)]
    tool: Option<RoleSpec>,
    #[serde(default = "error_severity")]
    severity: Severity,
}

fn error_severity() -> Severity {
    Severity::Error
}

/// One role's rules, compiled.
#[derive(Debug)]
struct Rules {
    role: Role,
    contains: Vec<String>,
    matches: Option<Regex>,
    not_matches: Option<Regex>,
}

#[derive(Debug)]
struct Messages {
    rules: Vec<Rules>,
    severity: Severity,
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let name = ctx.name;
    let config: Config = component::parse_config(name, config)?;
    let mut rules = Vec::new();
    for (role, key, spec) in [
        (Role::System, "system", config.system),
        (Role::User, "user", config.user),
        (Role::Assistant, "assistant", config.assistant),
        (Role::Tool, "tool", config.tool),
    ] {
        let Some(spec) = spec else { continue };
        let regex = |which: &str, source: Option<String>| -> Result<Option<Regex>, BuildError> {
            source
                .map(|source| {
                    crate::text::regex(&source).map_err(|err| {
                        BuildError::new(format!(
                            "{name}: `{key}.{which}` is not a valid regular expression: {err}"
                        ))
                        .at_key(format!("{key}.{which}"))
                    })
                })
                .transpose()
        };
        let contains = match spec.contains {
            None => Vec::new(),
            Some(Texts::One(text)) => vec![text],
            Some(Texts::Many(texts)) => texts,
        };
        if contains.iter().any(String::is_empty) {
            return Err(BuildError::new(format!(
                "{name}: `{key}.contains` has an empty text, which every message contains"
            ))
            .at_key(format!("{key}.contains")));
        }
        let rules_of_role = Rules {
            role,
            contains,
            matches: regex("matches", spec.matches)?,
            not_matches: regex("not_matches", spec.not_matches)?,
        };
        if rules_of_role.contains.is_empty()
            && rules_of_role.matches.is_none()
            && rules_of_role.not_matches.is_none()
        {
            return Err(BuildError::new(format!(
                "{name}: `{key}` has no rule (`contains`, `matches` or `not_matches`): it would check nothing"
            ))
            .at_key(key));
        }
        rules.push(rules_of_role);
    }
    if rules.is_empty() {
        return Err(BuildError::new(format!(
            "{name}: no role is named (`system`, `user`, `assistant`, `tool`): the step would check nothing"
        )));
    }
    Ok(Compiled::Postprocessor(Arc::new(Messages {
        rules,
        severity: config.severity,
    })))
}

impl Messages {
    fn check(
        &self,
        rules: &Rules,
        text: &str,
        path: Option<&str>,
        turn: Option<usize>,
        out: &mut Vec<Issue>,
    ) {
        let mut push = |code: &'static str, message: String| {
            out.push(super::text_issue(code, self.severity, message, path, turn));
        };
        let role = rules.role.as_str();
        if let Some(pattern) = &rules.not_matches {
            if let Some(found) = pattern.find(text) {
                let shown: String = found.as_str().chars().take(60).collect();
                push(
                    codes::MESSAGE_FORBIDDEN_MATCH,
                    format!(
                        "the {role} message matches `{}`, which no {role} message may (\"{shown}\")",
                        pattern.as_str()
                    ),
                );
            }
        }
        if text.is_empty() {
            return; // nothing to hold to `contains` or `matches`
        }
        for wanted in rules.contains.iter().filter(|w| !text.contains(w.as_str())) {
            push(
                codes::MESSAGE_MISSING_TEXT,
                format!("the {role} message does not contain \"{wanted}\""),
            );
        }
        if let Some(pattern) = rules.matches.as_ref().filter(|p| !p.is_match(text)) {
            push(
                codes::MESSAGE_NO_MATCH,
                format!("the {role} message does not match `{}`", pattern.as_str()),
            );
        }
    }
}

impl Postprocessor for Messages {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let mut issues = Vec::new();
        match ctx.turns {
            None => {
                for rules in self.rules.iter().filter(|r| r.role == Role::Assistant) {
                    self.check(rules, ctx.output, None, None, &mut issues);
                }
            }
            Some(turns) => {
                for (index, turn) in turns.iter().enumerate() {
                    for rules in self.rules.iter().filter(|r| r.role == turn.role) {
                        self.check(
                            rules,
                            &turn.text,
                            Some(&turn.path),
                            Some(index),
                            &mut issues,
                        );
                    }
                }
            }
        }
        Ok(PostOutput { issues, json: None })
    }

    fn on_proposal(&self) -> bool {
        true
    }

    fn early(&self) -> Early {
        Early::AtFinish { keeps_json: true }
    }
}
