//! `tool_calls`' `arguments`: each tool's arguments described with the
//! contract's field rules (types, required, ranges, lengths, allowed values,
//! nested objects and arrays), compiled once per tool and checked on every
//! call of that tool, each issue at its path in the record.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::component::BuildError;
use crate::contract::{Contract, ContractSpec};
use crate::json::{Json, Object};
use crate::report::Issue;
use crate::transcript::ToolCall;

/// The argument rules of each tool that has them.
#[derive(Debug, Default)]
pub struct Arguments {
    by_tool: BTreeMap<String, Contract>,
}

impl Arguments {
    /// Compiles `arguments` (tool → its fields, as a contract's `fields:`),
    /// with `additional` saying whether arguments no rule names are allowed.
    pub fn build(
        arguments: &BTreeMap<String, Value>,
        additional: bool,
        name: &str,
    ) -> Result<Self, BuildError> {
        let mut by_tool = BTreeMap::new();
        for (tool, fields) in arguments {
            let at = format!("arguments.{tool}");
            let spec = json!({"fields": fields, "additional_fields": additional});
            let spec: ContractSpec = serde_json::from_value(spec)
                .map_err(|err| BuildError::new(format!("{name}: `{at}`: {err}")).at_key(&at))?;
            let contract = Contract::compile(&spec).map_err(|err| {
                let key = err.key.as_deref().map_or_else(
                    || at.clone(),
                    |key| format!("{at}.{}", key.strip_prefix("fields.").unwrap_or(key)),
                );
                BuildError {
                    message: format!("{name}: `{at}`: {}", err.message),
                    key: Some(key),
                    suggestion: err.suggestion,
                }
            })?;
            by_tool.insert(tool.clone(), contract);
        }
        Ok(Self { by_tool })
    }

    /// The issues of `call`'s arguments under its tool's rules (none for a
    /// tool without rules, or arguments that are not JSON: the transcript
    /// says so already), each at its path into the record.
    pub fn check(&self, call: &ToolCall, unreadable: bool) -> Vec<Issue> {
        let Some(contract) = self.by_tool.get(&call.name) else {
            return Vec::new();
        };
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
        let (issues, _) = contract.validate(arguments, "");
        issues
            .into_iter()
            .map(|mut issue| {
                let inner = issue.path.take().unwrap_or_default();
                issue.path = Some(format!("{}{inner}", call.arguments_path));
                issue.message = format!("`{}` arguments: {}", call.name, issue.message);
                issue
            })
            .collect()
    }
}
