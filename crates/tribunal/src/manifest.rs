//! Manifest types: what users write in `pack.yaml` and component manifests.
//!
//! These are plain data, deserialised strictly (unknown keys are errors). The
//! pack loader turns them into compiled components once; nothing here runs.

use std::fmt;

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::component::Kind;
use crate::contract::ContractSpec;

/// A component manifest (`.yaml`, or Markdown front matter).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(transform = kind_or_alias_required)]
#[serde(deny_unknown_fields)]
pub struct ComponentManifest {
    /// `metric`, `postprocessor` or `strategy` (seed aliases: `component_type`,
    /// `type`; `evaluation` means `metric`).
    #[serde(alias = "component_type", alias = "type")]
    #[schemars(schema_with = "kind_schema")]
    pub kind: Kind,
    /// The component's name, unique in the pack; pipelines and `--set` use it.
    pub name: String,
    /// The component's own version, for its readers.
    #[serde(default)]
    #[allow(dead_code)] // for its readers, as `owner` below
    pub version: Option<String>,
    /// One line: what the component checks (`tribunal list` shows it).
    #[serde(default)]
    pub description: Option<String>,
    /// Other components (in the pack, or built-ins) this one needs.
    #[serde(default)]
    pub dependencies: Vec<String>,
    // `capabilities`, `inputs`, `outputs` and `owner` document the component
    // for its readers (the seeds' manifest format); they are read, checked for
    // type, and not used.
    /// Free-form tags, for the component's readers.
    #[serde(default)]
    #[allow(dead_code)]
    pub capabilities: Vec<String>,
    /// Free-form documentation of the component's inputs and outputs.
    #[serde(default)]
    #[allow(dead_code)]
    pub inputs: Option<Value>,
    /// Free-form documentation of the component's outputs.
    #[serde(default)]
    #[allow(dead_code)]
    pub outputs: Option<Value>,
    /// Who maintains the component (free-form).
    #[serde(default)]
    #[allow(dead_code)]
    pub owner: Option<Value>,
    /// Where the code comes from: exactly one of `builtin`, `script`, `inline`, `plugin`.
    #[serde(default)]
    pub implementation: Option<ImplementationSpec>,
    /// Default config; a pack may override it per use with `with:`. For a
    /// script, its keys are the config the script takes, each of its default's type.
    #[serde(default)]
    pub config: Option<Value>,
    /// A script's config as a JSON Schema, checked instead of the defaults'
    /// keys and types (for constraints types cannot say: ranges, patterns, enums).
    #[serde(default)]
    pub config_schema: Option<Value>,
}

/// Where a component's code comes from: exactly one of the four keys.
#[derive(Debug, Clone, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct ImplementationSpec {
    /// A built-in rule, by name (`tribunal explain NAME` documents each).
    #[serde(default)]
    pub builtin: Option<String>,
    /// A Rhai file next to the manifest.
    #[serde(default)]
    pub script: Option<String>,
    /// Rhai source inline.
    #[serde(default)]
    pub inline: Option<String>,
    /// A component of a native plugin library.
    #[serde(default)]
    pub plugin: Option<PluginRef>,
}

pub use crate::plugin::PluginRef;

/// The implementation source, once checked to be exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Implementation {
    /// `builtin: NAME`.
    Builtin(String),
    /// `script: FILE`.
    Script(String),
    /// `inline: CODE`.
    Inline(String),
    /// `plugin: {library, component, ...}`.
    Plugin(PluginRef),
}

impl ImplementationSpec {
    /// The one source given, or an error message when none or several are.
    pub fn resolve(&self) -> Result<Implementation, ImplementationError> {
        let mut found = Vec::new();
        if let Some(name) = &self.builtin {
            found.push(Implementation::Builtin(name.clone()));
        }
        if let Some(path) = &self.script {
            found.push(Implementation::Script(path.clone()));
        }
        if let Some(source) = &self.inline {
            found.push(Implementation::Inline(source.clone()));
        }
        if let Some(plugin) = &self.plugin {
            found.push(Implementation::Plugin(plugin.clone()));
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(ImplementationError::Missing),
            _ => Err(ImplementationError::Several),
        }
    }
}

/// Why a manifest's `implementation:` names no code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ImplementationError {
    #[error("`implementation` needs one of `builtin`, `script`, `inline` or `plugin`")]
    Missing,
    #[error("`implementation` must have exactly one of `builtin`, `script`, `inline` or `plugin`")]
    Several,
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Implementation::Builtin(name) => write!(f, "builtin {name}"),
            Implementation::Script(path) => write!(f, "script {path}"),
            Implementation::Inline(_) => f.write_str("inline script"),
            Implementation::Plugin(p) => write!(f, "plugin {}::{}", p.library, p.component),
        }
    }
}

/// `pack.yaml`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    /// The pack's name (results carry `name@version`).
    pub name: String,
    /// The pack's version.
    #[serde(default)]
    pub version: Option<String>,
    /// What the pack checks, in a sentence or two.
    #[serde(default)]
    pub description: Option<String>,
    /// Globs of component manifests, relative to the pack folder.
    #[serde(default)]
    pub components: Vec<String>,
    /// The shape the model was asked to emit: extraction, fields, `may_emit`, fallback.
    #[serde(default)]
    pub contract: Option<ContractSpec>,
    /// Postprocessors in order, then metrics.
    #[serde(default)]
    pub pipeline: PipelineSpec,
    /// How the status follows from error-severity issues and the score.
    #[serde(default)]
    pub scoring: ScoringSpec,
    /// Globs of test files, relative to the pack folder.
    #[serde(default)]
    pub tests: Vec<String>,
    /// What one call of one of the pack's Rhai scripts may use.
    #[serde(default)]
    pub limits: crate::script::ScriptLimits,
}

/// `pipeline:`.
#[derive(Debug, Clone, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    /// Run in order on every record; each returns issues and may normalise the JSON.
    #[serde(default)]
    pub postprocessors: Vec<UseSpec>,
    /// Scored after the postprocessors; the score is their weighted mean.
    #[serde(default)]
    pub metrics: Vec<UseSpec>,
}

/// How a status is derived from error-severity issues and the score.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoringSpec {
    /// Error-severity issues allowed for PASS.
    #[serde(default)]
    pub pass_max_issues: usize,
    /// Error-severity issues allowed for `NEEDS_IMPROVEMENT`; above this: FAIL.
    #[serde(default = "default_needs_improvement_max")]
    pub needs_improvement_max_issues: usize,
    /// A score below this is FAIL.
    #[serde(default)]
    pub min_score: Option<f64>,
    /// A pack with a contract, on an output where no JSON was found (and no
    /// fallback applies): `fail` (the default) makes the record FAIL whatever
    /// the issue count; `issues` counts the contract's error like any other.
    #[serde(default)]
    pub no_json: NoJson,
}

/// `scoring.no_json`: the status of a record whose output held no JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoJson {
    /// FAIL, whatever the issue count.
    #[default]
    Fail,
    /// The contract's error counts like any other issue.
    Issues,
}

fn default_needs_improvement_max() -> usize {
    2
}

impl Default for ScoringSpec {
    fn default() -> Self {
        Self {
            pass_max_issues: 0,
            needs_improvement_max_issues: default_needs_improvement_max(),
            min_score: None,
            no_json: NoJson::default(),
        }
    }
}

/// Where a pipeline step runs on a transcript record (a record with
/// `messages`); on a record with `output` alone every scope is the record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Once, on the record: its output (the last assistant turn's text when it
    /// has no `output`) and every turn.
    #[default]
    Conversation,
    /// Once per assistant turn, on that turn's text (extracted on its own).
    AssistantTurns,
    /// Once, on the last assistant turn's text.
    Last,
}

impl Scope {
    /// `conversation`, `assistant_turns` or `last`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conversation => "conversation",
            Self::AssistantTurns => "assistant_turns",
            Self::Last => "last",
        }
    }
}

/// How a metric run per assistant turn makes its one score from the turns'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// The worst turn's score.
    Min,
    /// The turns' mean score.
    #[default]
    Mean,
    /// 1 when every turn scores 1, else 0.
    All,
    /// The last turn's score.
    Last,
}

impl Aggregate {
    /// `min`, `mean`, `all` or `last`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Min => "min",
            Self::Mean => "mean",
            Self::All => "all",
            Self::Last => "last",
        }
    }

    /// The one score of the turns' `scores` (in turn order; not empty).
    pub fn of(self, scores: &[f64]) -> f64 {
        match self {
            Self::Min => scores.iter().copied().fold(f64::INFINITY, f64::min),
            Self::Mean => scores.iter().sum::<f64>() / scores.len() as f64,
            Self::All => {
                if scores.iter().all(|&s| s >= 1.0) {
                    1.0
                } else {
                    0.0
                }
            }
            Self::Last => scores.last().copied().unwrap_or(0.0),
        }
    }
}

/// One pipeline step: `name`, or `{ use: name, weight: 0.5, with: {...}, as: alias }`.
#[derive(Debug, Clone, PartialEq)]
pub struct UseSpec {
    pub component: String,
    /// Only metrics have weights (default 1.0).
    pub weight: Option<f64>,
    pub with: Option<Value>,
    /// The name the step's results are reported under (default: the component name).
    pub alias: Option<String>,
    /// Where the step runs on a transcript record (default: the conversation).
    pub scope: Option<Scope>,
    /// How a metric run per assistant turn scores (default: the mean).
    pub aggregate: Option<Aggregate>,
}

impl UseSpec {
    /// A metric's weight in the pack score (default 1.0).
    pub fn weight(&self) -> f64 {
        self.weight.unwrap_or(1.0)
    }

    pub fn step_name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.component)
    }
}

/// The map form of a pipeline step.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UseMap {
    /// A component of the pack, or a built-in rule.
    #[serde(rename = "use")]
    component: String,
    /// A metric's weight in the score (default 1).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    weight: Option<f64>,
    /// Config for this use, over the component's own `config:`.
    #[serde(default)]
    with: Option<Value>,
    /// The name results are reported under (to use one component twice).
    #[serde(default, rename = "as")]
    alias: Option<String>,
    /// On a transcript record: run once on the conversation (the default), on
    /// each assistant turn, or on the last one.
    #[serde(default)]
    scope: Option<Scope>,
    /// A metric with `scope: assistant_turns`: its score from the turns'
    /// (default `mean`).
    #[serde(default)]
    aggregate: Option<Aggregate>,
}

/// A step is a component name, or the map [`UseMap`].
impl JsonSchema for UseSpec {
    fn schema_name() -> Cow<'static, str> {
        "UseSpec".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let map = generator.subschema_for::<UseMap>();
        json_schema!({
            "description": "A pipeline step: a component name, or `{use, weight, with, as, scope, aggregate}`.",
            "anyOf": [{ "type": "string" }, map]
        })
    }
}

/// `kind:` (or its seed spellings `component_type:` / `type:`): the names `Kind`
/// deserialises from.
fn kind_schema(_: &mut SchemaGenerator) -> Schema {
    let mut names: Vec<&str> = [Kind::Metric, Kind::Postprocessor, Kind::Strategy]
        .iter()
        .map(|k| k.as_str())
        .collect();
    names.push("evaluation");
    json_schema!({
        "description": "metric, postprocessor or strategy (`evaluation` means metric)",
        "enum": names
    })
}

/// `kind` may be spelt `component_type` or `type` (serde aliases): the schema lists
/// the three properties and requires exactly one of them.
fn kind_or_alias_required(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(required) = object.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name != "kind");
    }
    if let Some(kind) = object
        .get("properties")
        .and_then(|p| p.get("kind"))
        .cloned()
    {
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            for alias in ["component_type", "type"] {
                properties.insert(alias.to_owned(), kind.clone());
            }
        }
    }
    object.insert(
        "oneOf".to_owned(),
        serde_json::json!([
            { "required": ["kind"] },
            { "required": ["component_type"] },
            { "required": ["type"] }
        ]),
    );
}

impl<'de> Deserialize<'de> for UseSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UseVisitor;
        impl<'de> Visitor<'de> for UseVisitor {
            type Value = UseSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a component name or a map with `use`, `weight`, `with`, `as`, `scope`, `aggregate`",
                )
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<UseSpec, E> {
                Ok(UseSpec {
                    component: name.to_owned(),
                    weight: None,
                    with: None,
                    alias: None,
                    scope: None,
                    aggregate: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<UseSpec, A::Error> {
                let spec = UseMap::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(UseSpec {
                    component: spec.component,
                    weight: spec.weight,
                    with: spec.with,
                    alias: spec.alias,
                    scope: spec.scope,
                    aggregate: spec.aggregate,
                })
            }
        }
        deserializer.deserialize_any(UseVisitor)
    }
}

/// The JSON Schemas (draft 2020-12) of the two files a pack author writes, by name:
/// `pack` (`pack.yaml`) and `component` (a component manifest, or the front matter
/// of a Markdown one). They are derived from the types above, which parse those
/// files, so they cannot drift from them; `docs/schemas/NAME.schema.json` holds
/// each, and `tribunal schema NAME` prints it.
pub fn schema(name: &str) -> Option<Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let (schema, title, file) = match name {
        "pack" => (
            generator.into_root_schema_for::<PackManifest>(),
            "Tribunal pack.yaml",
            "pack.schema.json",
        ),
        "component" => (
            generator.into_root_schema_for::<ComponentManifest>(),
            "Tribunal component manifest",
            "component.schema.json",
        ),
        _ => return None,
    };
    // `$schema`, our title and a pointer to the shipped file, then the rest as generated.
    let mut object = serde_json::Map::new();
    let generated = schema.to_value();
    let mut generated = generated.as_object().cloned().unwrap_or_default();
    if let Some(dialect) = generated.remove("$schema") {
        object.insert("$schema".to_owned(), dialect);
    }
    generated.remove("title");
    object.insert("title".to_owned(), Value::from(title));
    object.insert(
        "$comment".to_owned(),
        Value::from(format!(
            "Generated by `tribunal schema {name}` (shipped as docs/schemas/{file}); do not edit."
        )),
    );
    object.extend(generated);
    Some(Value::Object(object))
}

/// The names [`schema`] knows.
pub const SCHEMA_NAMES: [&str; 2] = ["pack", "component"];
