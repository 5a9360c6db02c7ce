//! `tool_calls`' `arguments`: each tool's arguments described with the
//! contract's field rules (types, required, ranges, lengths, allowed values,
//! nested objects and arrays), by tool or by the pack contract's `variants:`,
//! compiled once and checked on every call of that tool, each issue at its
//! path in the record.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::build::BuildCtx;
use crate::component::BuildError;
use crate::contract::{Contract, ContractSpec, EnumEquality, Numbers};
use crate::json::{Json, Object, Seg};
use crate::report::Issue;
use crate::transcript::ToolCall;

/// Where the argument rules come from: each tool's own, or the variants of
/// the pack's contract.
#[derive(Debug, Default)]
pub enum Arguments {
    /// No rules.
    #[default]
    None,
    /// Rules of each tool that has them.
    ByTool(BTreeMap<String, Contract>),
    /// The pack contract's variant of each tool (its kind): the rule of its
    /// member `field` describes the arguments.
    FromContract {
        contract: Arc<Contract>,
        field: String,
    },
}

/// `arguments:` as written: `contract`, or rules by tool.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ArgumentsSpec {
    Contract(String),
    ByTool(BTreeMap<String, Value>),
}

impl Arguments {
    /// Compiles `arguments`: `contract` (the pack contract's `variants:`, the
    /// arguments under each variant's `field`), or rules by tool (each a
    /// contract's `fields:`, under `numbers`), `additional` saying whether
    /// arguments no rule names are allowed; `enum_equality` gives how the
    /// `enum` of a tool's argument compares (its strategy's way).
    pub fn build(
        arguments: Option<&ArgumentsSpec>,
        (additional, numbers): (bool, Numbers),
        field: &str,
        ctx: &BuildCtx<'_>,
        enum_equality: &dyn Fn(&str, &str) -> EnumEquality,
    ) -> Result<Self, BuildError> {
        let name = ctx.name;
        match arguments {
            None => Ok(Self::None),
            Some(ArgumentsSpec::Contract(word)) if word == "contract" => {
                let Some(contract) = ctx.contract.filter(|c| !c.variants.is_empty()) else {
                    return Err(BuildError::new(format!(
                        "{name}: `arguments: contract` checks each call against the pack contract's `variants:` (one per tool), and the pack has {}",
                        if ctx.contract.is_some() { "a contract without variants" } else { "no contract" }
                    ))
                    .at_key("arguments"));
                };
                if let Some(variant) = contract
                    .variants
                    .iter()
                    .find(|v| !v.fields.is_empty() && !v.fields.iter().any(|f| f.name == field))
                {
                    return Err(BuildError::new(format!(
                        "{name}: the contract's variant `{}` has no field `{field}` for the arguments (`arguments_field`)",
                        variant.kind
                    ))
                    .at_key("arguments_field"));
                }
                Ok(Self::FromContract {
                    contract: Arc::clone(contract),
                    field: field.to_owned(),
                })
            }
            Some(ArgumentsSpec::Contract(other)) => Err(BuildError::new(format!(
                "{name}: `arguments` is `contract` or the rules of each tool, got `{other}`"
            ))
            .at_key("arguments")),
            Some(ArgumentsSpec::ByTool(by_tool)) => {
                let mut compiled = BTreeMap::new();
                for (tool, fields) in by_tool {
                    let mut contract = compile(tool, fields, additional, numbers, name)?;
                    for argument in &mut contract.fields {
                        let equality = enum_equality(tool, &argument.name);
                        argument.set_enum_equality(&equality);
                    }
                    compiled.insert(tool.clone(), contract);
                }
                Ok(Self::ByTool(compiled))
            }
        }
    }

    /// The issues of `call`'s arguments under its tool's rules (none for a
    /// tool without rules, or arguments that are not JSON: the transcript
    /// says so already), each at its path into the record.
    pub fn check(&self, call: &ToolCall, unreadable: bool) -> Vec<Issue> {
        if unreadable {
            return Vec::new();
        }
        // A call without arguments is judged as one with none.
        let none = Json::Object(Object::new());
        let arguments = if call.arguments.is_null() {
            &none
        } else {
            &call.arguments
        };
        let (issues, inside) = match self {
            Self::None => return Vec::new(),
            Self::ByTool(by_tool) => match by_tool.get(&call.name) {
                Some(contract) => (contract.validate(arguments, "").0, String::new()),
                None => return Vec::new(),
            },
            Self::FromContract { contract, field } => {
                let rule = contract
                    .variants
                    .iter()
                    .find(|v| v.kind == call.name)
                    .and_then(|v| v.fields.iter().find(|f| f.name == *field));
                let Some(rule) = rule else {
                    return Vec::new();
                };
                let at = [Seg::Member(field.clone())];
                let prefix = format!("/{}", crate::json::escape_pointer(field));
                (contract.check_value_at(rule, arguments, &at, None), prefix)
            }
        };
        issues
            .into_iter()
            .map(|mut issue| {
                let path = issue.path.take().unwrap_or_default();
                let inner = path.strip_prefix(&inside).unwrap_or(&path);
                issue.path = Some(format!("{}{inner}", call.arguments_path));
                issue.message = format!("`{}` arguments: {}", call.name, issue.message);
                issue
            })
            .collect()
    }
}

impl Arguments {
    /// The JSON Schema of `tool`'s arguments as its rules describe them, with
    /// its variant's description under `arguments: contract`; `None` when no
    /// rule describes them.
    pub fn schema(&self, tool: &str) -> Option<(Value, Option<String>)> {
        match self {
            Self::None => None,
            Self::ByTool(by_tool) => by_tool.get(tool).map(|c| (c.arguments_schema(), None)),
            Self::FromContract { contract, field } => {
                let variant = contract.variants.iter().find(|v| v.kind == tool)?;
                let rule = variant.fields.iter().find(|f| f.name == *field)?;
                Some((contract.rule_schema(rule), variant.description.clone()))
            }
        }
    }

    /// The tools the rules describe, in order.
    pub fn tools(&self) -> Vec<&str> {
        match self {
            Self::None => Vec::new(),
            Self::ByTool(by_tool) => by_tool.keys().map(String::as_str).collect(),
            Self::FromContract { contract, .. } => {
                contract.variants.iter().map(|v| v.kind.as_str()).collect()
            }
        }
    }
}

/// One tool's rules (a contract's `fields:`), compiled.
fn compile(
    tool: &str,
    fields: &Value,
    additional: bool,
    numbers: Numbers,
    name: &str,
) -> Result<Contract, BuildError> {
    let at = format!("arguments.{tool}");
    let spec =
        json!({"fields": fields, "additional_fields": additional, "numbers": numbers.words()});
    let spec: ContractSpec = serde_json::from_value(spec)
        .map_err(|err| BuildError::new(format!("{name}: `{at}`: {err}")).at_key(&at))?;
    Contract::compile(&spec).map_err(|err| {
        let key = err.key.as_deref().map_or_else(
            || at.clone(),
            |key| format!("{at}.{}", key.strip_prefix("fields.").unwrap_or(key)),
        );
        BuildError {
            message: format!("{name}: `{at}`: {}", err.message),
            key: Some(key),
            value: err.value,
            suggestion: err.suggestion,
        }
    })
}
