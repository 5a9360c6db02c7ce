//! `--set` overrides: parsing them, merging them into a component's config, the
//! pack's `limits:` with the run's, and blaming an override for the config error
//! it causes (so the error points at the command line, not at the pack).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

pub use crate::overrides::{Override, OverrideError};

use super::{LoadOptions, LoadedComponent, PackLoader};
use crate::component::BuildError;
use crate::manifest::PackManifest;
use crate::suggest::nearest;
use crate::yaml::LoadError;

impl PackLoader {
    /// The pack's `limits:` with the run's `--set limits.key=value` overrides.
    pub(super) fn script_limits(&mut self, manifest: &PackManifest) -> crate::script::ScriptLimits {
        // The run's `--set limits.*` are the host's word: any value, over the
        // pack's. The pack's own may only tighten the defaults.
        let overrides: Vec<Override> = self
            .overrides
            .iter()
            .filter(|o| o.component == "limits")
            .cloned()
            .collect();
        let host_set: Vec<&str> = overrides.iter().map(|o| o.key.as_str()).collect();
        let mut limits = manifest.limits;
        let checked = limits
            .check()
            .and_then(|()| limits.within_defaults(&host_set));
        if let Err(err) = checked {
            self.error_at(&["limits", &err.key], None, err.message);
            limits = crate::script::ScriptLimits::default();
        }
        for o in overrides {
            if let Err(message) = limits.set(&o.key, &o.value) {
                let path = self.source.path.clone();
                // A suggestion only for a key that is not a limit (not for a bad value).
                let suggestion = nearest(&o.key, crate::script::ScriptLimits::KEYS.iter().copied())
                    .filter(|key| *key != o.key);
                self.errors.push(
                    LoadError::whole_file(&path, format!("--set {}: {message}", o.raw))
                        .suggest(suggestion),
                );
            }
        }
        limits
    }

    pub(super) fn check_overrides(
        &mut self,
        manifest: &PackManifest,
        components: &[LoadedComponent],
        options: &LoadOptions,
    ) {
        let steps: BTreeSet<&str> = manifest
            .pipeline
            .postprocessors
            .iter()
            .chain(&manifest.pipeline.metrics)
            .flat_map(|u| [u.component.as_str(), u.step_name()])
            .chain(components.iter().map(|c| c.manifest.name.as_str()))
            .collect();
        for o in &options.overrides {
            if o.component != "contract"
                && o.component != "limits"
                && !steps.contains(o.component.as_str())
            {
                let path = self.source.path.clone();
                self.errors.push(
                    LoadError::whole_file(
                        &path,
                        format!(
                            "--set {}: the pack has no component or step `{}`",
                            o.raw, o.component
                        ),
                    )
                    .suggest(nearest(&o.component, steps.iter().copied())),
                );
            }
        }
    }

    /// The `--set` override a config error on `key` of this component/step comes from.
    pub(super) fn blamed_override(&self, names: &[&str], key: Option<&str>) -> Option<&Override> {
        let first = |k: &str| k.split('.').next().unwrap_or(k).to_owned();
        let key = key.map(first)?;
        self.overrides
            .iter()
            .find(|o| names.contains(&o.component.as_str()) && first(&o.key) == key)
    }

    /// Reports a config error caused by a `--set` override, if it was one.
    pub(super) fn push_override_error(&mut self, names: &[&str], err: &BuildError) -> bool {
        let Some(o) = self.blamed_override(names, err.key.as_deref()) else {
            return false;
        };
        let raw = o.raw.clone();
        self.push_set_error(&raw, err);
        true
    }

    /// The `--set` overrides that changed this component's config, for a help line
    /// when an error cannot be pinned to one key.
    pub(super) fn overrides_note(&self, names: &[&str]) -> Option<String> {
        let raws: Vec<&str> = self
            .overrides
            .iter()
            .filter(|o| names.contains(&o.component.as_str()))
            .map(|o| o.raw.as_str())
            .collect();
        (!raws.is_empty())
            .then(|| format!("this config was changed by --set {}", raws.join(", --set ")))
    }

    pub(super) fn push_set_error(&mut self, raw: &str, err: &BuildError) {
        let message = format!("--set {raw}: {}", err.message);
        let help = err.help();
        let path = self.source.path.clone();
        self.errors
            .push(LoadError::whole_file(&path, message).with_help(help));
    }
}

/// Manifest defaults, then the pipeline's `with:`, then `--set` overrides for
/// this component or step. Top-level keys replace; `--set a.b.c` sets nested keys.
pub(super) fn merged_config(
    defaults: Option<&Value>,
    with: Option<&Value>,
    component: &str,
    step: &str,
    options: &LoadOptions,
) -> Value {
    let mut config = Map::new();
    for layer in [defaults, with].into_iter().flatten() {
        if let Value::Object(map) = layer {
            for (k, v) in map {
                config.insert(k.clone(), v.clone());
            }
        }
    }
    let mut config = Value::Object(config);
    // `--set contract.*` overrides the pack's contract itself (see `contract_spec`).
    let targets = |o: &&Override| {
        o.component != "contract" && (o.component == component || o.component == step)
    };
    for o in options.overrides.iter().filter(targets) {
        set_dotted(&mut config, &o.key, o.value.clone());
    }
    config
}

/// Sets `a.b.c` inside `target`, making objects along the way.
pub(super) fn set_dotted(target: &mut Value, key: &str, value: Value) {
    let mut target = target;
    for part in key.split('.') {
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        target = target
            .as_object_mut()
            .expect("just made an object")
            .entry(part.to_owned())
            .or_insert(Value::Null);
    }
    *target = value;
}
