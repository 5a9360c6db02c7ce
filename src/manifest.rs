//! Manifest types: what users write in `pack.yaml` and component manifests.
//!
//! These are plain data, deserialised strictly (unknown keys are errors). The
//! pack loader turns them into compiled components once; nothing here runs.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::component::Kind;
use crate::contract::ContractSpec;

/// A component manifest (`.yaml`, or Markdown front matter).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentManifest {
    /// `metric`, `postprocessor` or `strategy` (seed aliases: `component_type`,
    /// `type`; `evaluation` means `metric`).
    #[serde(alias = "component_type", alias = "type")]
    pub kind: Kind,
    pub name: String,
    #[serde(default)]
    #[allow(dead_code)] // for its readers, as `owner` below
    pub version: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Other components (in the pack, or built-ins) this one needs.
    #[serde(default)]
    pub dependencies: Vec<String>,
    // `capabilities`, `inputs`, `outputs` and `owner` document the component
    // for its readers (the seeds' manifest format); they are read, checked for
    // type, and not used.
    #[serde(default)]
    #[allow(dead_code)]
    pub capabilities: Vec<String>,
    /// Free-form documentation of the component's inputs and outputs.
    #[serde(default)]
    #[allow(dead_code)]
    pub inputs: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    pub outputs: Option<Value>,
    #[serde(default)]
    #[allow(dead_code)]
    pub owner: Option<Value>,
    #[serde(default)]
    pub implementation: Option<ImplementationSpec>,
    /// Default config; a pack may override it per use with `with:`.
    #[serde(default)]
    pub config: Option<Value>,
}

/// Where a component's code comes from: exactly one of the four keys.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ImplementationSpec {
    #[serde(default)]
    pub builtin: Option<String>,
    /// A Rhai file next to the manifest.
    #[serde(default)]
    pub script: Option<String>,
    /// Rhai source inline.
    #[serde(default)]
    pub inline: Option<String>,
    #[serde(default)]
    pub plugin: Option<PluginRef>,
}

pub use crate::plugin::PluginRef;

/// The implementation source, once checked to be exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Implementation {
    Builtin(String),
    Script(String),
    Inline(String),
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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Globs of component manifests, relative to the pack folder.
    #[serde(default)]
    pub components: Vec<String>,
    #[serde(default)]
    pub contract: Option<ContractSpec>,
    #[serde(default)]
    pub pipeline: PipelineSpec,
    #[serde(default)]
    pub scoring: ScoringSpec,
    /// Globs of test files, relative to the pack folder.
    #[serde(default)]
    pub tests: Vec<String>,
    /// What one call of one of the pack's Rhai scripts may use.
    #[serde(default)]
    pub limits: crate::script::ScriptLimits,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    #[serde(default)]
    pub postprocessors: Vec<UseSpec>,
    #[serde(default)]
    pub metrics: Vec<UseSpec>,
}

/// How a status is derived from error-severity issues and the score.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UseMap {
    #[serde(rename = "use")]
    component: String,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    with: Option<Value>,
    #[serde(default, rename = "as")]
    alias: Option<String>,
}

impl<'de> Deserialize<'de> for UseSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UseVisitor;
        impl<'de> Visitor<'de> for UseVisitor {
            type Value = UseSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a component name or a map with `use`, `weight`, `with`, `as`")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<UseSpec, E> {
                Ok(UseSpec {
                    component: name.to_owned(),
                    weight: None,
                    with: None,
                    alias: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<UseSpec, A::Error> {
                let spec = UseMap::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(UseSpec {
                    component: spec.component,
                    weight: spec.weight,
                    with: spec.with,
                    alias: spec.alias,
                })
            }
        }
        deserializer.deserialize_any(UseVisitor)
    }
}
