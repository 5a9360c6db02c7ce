//! `json_schema` (postprocessor): validates the extracted JSON against a JSON
//! Schema, compiled once at pack load. Each violation becomes an issue at the
//! JSON pointer of the offending value.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::Builtin;
use crate::build::BuildCtx;
use crate::component::{
    self, BuildError, Compiled, Context, EvalError, Kind, PostOutput, Postprocessor,
};
use std::borrow::Cow;

use crate::codes;
use crate::report::{Issue, Severity};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    schema: Value,
    #[serde(default = "default_max_issues")]
    max_issues: usize,
    #[serde(default)]
    severity: Severity,
}

fn default_max_issues() -> usize {
    20
}

#[derive(Debug)]
struct JsonSchema {
    validator: jsonschema::Validator,
    max_issues: usize,
    severity: Severity,
}

impl Postprocessor for JsonSchema {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let issue = |code: Cow<'static, str>, message: String, path: &str| Issue {
            rule: String::new(),
            code,
            severity: self.severity,
            message,
            path: Some(path.to_owned()),
            turn: None,
        };
        if ctx.json.is_null() {
            return Ok(PostOutput {
                issues: vec![issue(
                    codes::SCHEMA_NO_JSON.into(),
                    "the output contains no JSON to validate".into(),
                    "",
                )],
                json: None,
            });
        }
        // The validator takes `serde_json`'s value.
        let instance = ctx.json.to_serde();
        let issues = self
            .validator
            .iter_errors(&instance)
            .take(self.max_issues)
            .map(|error| {
                let path = error.instance_path().as_str().to_owned();
                let message = if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                };
                // The keyword that failed ends the schema path (`/properties/age/type`).
                let schema_path = error.schema_path().as_str();
                let keyword = schema_path.rsplit('/').next().unwrap_or_default();
                issue(codes::schema_keyword(keyword).into(), message, &path)
            })
            .collect();
        Ok(PostOutput { issues, json: None })
    }

    fn early(&self) -> crate::component::Early {
        crate::component::Early::AtFinish { keeps_json: true }
    }
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(ctx.name, config)?;
    // Whether errors may quote the schema: not when it came from outside the pack.
    let mut quotable = true;
    let schema = match &config.schema {
        Value::String(path) => {
            let file = ctx.resolve(path);
            let text = ctx.read_text(path).map_err(|err| {
                BuildError::new(format!("{}: cannot read schema: {err}", ctx.name)).at_key("schema")
            })?;
            quotable = text.inside_pack;
            crate::yaml::yaml_to_value(&text.text, &file).map_err(|err| {
                let err = crate::files::redact_quotes(&err.to_string(), text.inside_pack);
                BuildError::new(format!(
                    "{}: schema {} is not JSON or YAML: {err}",
                    ctx.name,
                    file.display()
                ))
                .at_key("schema")
            })?
        }
        Value::Object(_) | Value::Bool(_) => config.schema.clone(),
        other => {
            return Err(BuildError::new(format!(
                "{}: `schema` must be a file path or a schema object, got {other}",
                ctx.name
            ))
            .at_key("schema"))
        }
    };
    let validator = jsonschema::validator_for(&schema).map_err(|err| {
        let err = crate::files::redact_quotes(&err.to_string(), quotable);
        BuildError::new(format!("{}: invalid JSON Schema: {err}", ctx.name)).at_key("schema")
    })?;
    if config.max_issues == 0 {
        return Err(
            BuildError::new(format!("{}: `max_issues` must be at least 1", ctx.name))
                .at_key("max_issues"),
        );
    }
    Ok(Compiled::Postprocessor(Arc::new(JsonSchema {
        validator,
        max_issues: config.max_issues,
        severity: config.severity,
    })))
}

pub const BUILTIN: Builtin = Builtin {
    name: "json_schema",
    kind: Kind::Postprocessor,
    summary: "validates the extracted JSON against a JSON Schema file",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied: it judges the final answer",
    },
    docs: include_str!("../../../../docs/builtins/json_schema.md"),
    build,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_support::Fixture;
    use serde_json::json;

    fn post(config: &Value) -> Arc<dyn Postprocessor> {
        crate::builtins::test_support::postprocessor(build, "json_schema", config)
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["kind", "scores"],
            "properties": {
                "kind": {"enum": ["a", "b"]},
                "scores": {"type": "object", "additionalProperties": {"type": "number"}}
            }
        })
    }

    #[test]
    fn violations_become_issues_at_their_pointer() {
        let p = post(&json!({ "schema": schema() }));
        let fixture = Fixture::new(
            "",
            json!({"kind": "c", "scores": {"alice": "high"}}),
            Value::Null,
        );
        let out = p.process(&fixture.ctx()).unwrap();
        let mut paths: Vec<&str> = out
            .issues
            .iter()
            .map(|i| i.path.as_deref().unwrap())
            .collect();
        paths.sort_unstable();
        assert_eq!(paths, ["/kind", "/scores/alice"]);
        assert!(out.issues.iter().all(|i| i.severity == Severity::Error));
        let fixture = Fixture::new("", json!({"kind": "a", "scores": {}}), Value::Null);
        assert!(p.process(&fixture.ctx()).unwrap().issues.is_empty());
        let fixture = Fixture::new("", json!({"kind": "a"}), Value::Null);
        let out = p.process(&fixture.ctx()).unwrap();
        assert_eq!(out.issues.len(), 1);
        assert!(
            out.issues[0].message.contains("scores"),
            "{}",
            out.issues[0].message
        );
    }

    #[test]
    fn schema_files_are_read_at_build_and_bad_schemas_fail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), schema().to_string()).unwrap();
        let strategies = crate::builtins::test_support::strategies();
        let files = crate::files::PackFiles::new(dir.path(), &[]).unwrap();
        let ctx = BuildCtx {
            name: "json_schema",
            base_dir: dir.path(),
            strategies,
            contract: None,
            files: &files,
            models: crate::builtins::test_support::models(),
            warnings: None,
            metrics_before: None,
        };
        assert!(build(&json!({"schema": "s.json"}), &ctx).is_ok());
        let err = build(&json!({"schema": "missing.json"}), &ctx).unwrap_err();
        assert!(
            err.message.contains("cannot read schema"),
            "{}",
            err.message
        );
        let err = build(&json!({"schema": {"type": 12}}), &ctx).unwrap_err();
        assert!(
            err.message.contains("invalid JSON Schema"),
            "{}",
            err.message
        );
        assert!(build(&json!({}), &ctx).is_err());
    }

    #[test]
    fn no_json_is_one_issue_and_max_issues_caps() {
        let p = post(&json!({ "schema": {"items": {"type": "string"}}, "max_issues": 2 }));
        let fixture = Fixture::new("", json!([1, 2, 3, 4]), Value::Null);
        assert_eq!(p.process(&fixture.ctx()).unwrap().issues.len(), 2);
        let fixture = Fixture::new("", Value::Null, Value::Null);
        let out = p.process(&fixture.ctx()).unwrap();
        assert_eq!(
            out.issues[0].message,
            "the output contains no JSON to validate"
        );
    }
}
