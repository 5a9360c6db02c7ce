//! Compiling a resolved pack: the strategies, the contract and every pipeline
//! step, each built once with its merged config; errors placed at the line that
//! caused them (the manifest's config, the pipeline's `with:`, a `--set`).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::overrides::merged_config;
use super::revision::revision;
use super::{
    ComponentInfo, LoadOptions, LoadedComponent, Pack, PackInfo, PackLoader, Pipeline, Step,
};
use crate::build::BuildCtx;
use crate::builtins;
use crate::component::{BuildError, Compiled, Kind, Metric, Postprocessor};
use crate::contract::{Contract, DEFAULT_LADDER};
use crate::manifest::{Aggregate, PackManifest, Scope, UseSpec};
use crate::plugin::{PluginAccess, PluginPlaces};
use crate::source::{Resolved, Sources};
use crate::strategy::StrategyRegistry;
use crate::suggest::{did_you_mean, nearest};
use crate::yaml::{LoadError, LoadErrors};

impl PackLoader {
    pub(super) fn load(
        mut self,
        manifest: &PackManifest,
        options: &LoadOptions,
    ) -> Result<Pack, LoadErrors> {
        // Checked first, in every pack (with scripts or not), so a typo in
        // `--set limits.*` is always an error.
        let limits = self.script_limits(manifest);
        let plugins = if options.allow_plugins {
            PluginAccess::Consented(
                PluginPlaces::new(self.files.root(), &self.plugin_dirs, self.files.allowed())
                    .with_pins(options.plugin_pins.clone()),
            )
        } else {
            PluginAccess::NotConsented
        };
        let sources = Sources::new(plugins, self.inspect_only, limits, self.runtime.clone());
        let components = self.load_components(manifest, &sources);
        self.check_dependencies(&components);
        let contract = self.compile_contract(manifest, options);
        self.check_overrides(manifest, &components, options);
        let strategies = Arc::new(self.build_strategies(&components, options));

        let uses = postprocessor_uses(manifest, contract.is_some());
        let steps = Steps {
            components: &components,
            strategies: &strategies,
            contract: contract.as_ref(),
            contract_failed: manifest.contract.is_some() && contract.is_none(),
            options,
        };
        let mut seen = BTreeSet::new();
        let postprocessors = self.build_postprocessors(&uses, &mut seen, &steps);
        let metrics = self.build_metrics(&manifest.pipeline.metrics, &mut seen, &steps);
        self.check_scoring(manifest);
        let tests = self.expand_globs(&manifest.tests, "tests");
        if !self.errors.is_empty() {
            return Err(LoadErrors(self.errors));
        }
        self.warn_unused(&components, uses.iter().chain(&manifest.pipeline.metrics));
        self.warnings.extend(
            components
                .iter()
                .filter_map(|c| c.implementation.as_ref())
                .flat_map(|resolved| resolved.code.warnings()),
        );

        let revision = revision(&self.dir, &self.files, options);
        let version = manifest
            .version
            .clone()
            .unwrap_or_else(|| "0.0.0".to_owned());
        let timeout_ms = limits.timeout_ms;
        let not_loaded = components
            .iter()
            .filter_map(|c| c.implementation.as_ref()?.not_loaded.clone())
            .collect();
        // The manifest is read before the pack's files are set up.
        let mut files_read = self.files.used();
        files_read.extend(std::fs::canonicalize(&self.source.path));
        let pipeline = Pipeline {
            step_timeout: (timeout_ms > 0).then(|| std::time::Duration::from_millis(timeout_ms)),
            ladder: contract
                .as_ref()
                .map_or_else(|| DEFAULT_LADDER.to_vec(), |c| c.ladder.clone()),
            contract,
            scoring: manifest.scoring,
            json_unread: postprocessors.is_empty() && metrics.iter().all(|m| !m.run.reads_json()),
            postprocessors,
            metrics,
            strategies,
        };
        let info = PackInfo {
            files_read,
            set_files: self
                .overrides
                .iter()
                .filter_map(|o| o.file.clone())
                .collect(),
            not_loaded,
            label: format!("{}@{version}", manifest.name),
            name: manifest.name.clone(),
            version,
            description: manifest.description.clone(),
            dir: self.dir,
            revision,
            components: components.into_iter().filter_map(component_info).collect(),
            tests,
            test_patterns: manifest.tests.clone(),
            warnings: self.warnings,
            bundle: None,
        };
        Ok(Pack {
            info,
            pipeline,
            runtime: self.runtime,
        })
    }

    /// The contract as written, with `--set contract.*`, compiled; `None` (and an
    /// error) when it does not compile.
    fn compile_contract(
        &mut self,
        manifest: &PackManifest,
        options: &LoadOptions,
    ) -> Option<Arc<Contract>> {
        match Contract::compile(&self.contract_spec(manifest, options)?) {
            Ok(contract) => {
                if let Some(problem) = contract.example_problem() {
                    let keys: Vec<&str> = std::iter::once("contract")
                        .chain(problem.key.iter().flat_map(|key| key.split('.')))
                        .collect();
                    let at = self.source.locate(&keys, problem.value.as_deref());
                    self.warnings.push(LoadError::new(
                        &self.source.path,
                        at,
                        format!("contract: {}", problem.message),
                    ));
                }
                Some(Arc::new(contract))
            }
            Err(err) => {
                // A dotted key (`variants.search.fields.date`) is located key by key.
                let keys: Vec<&str> = std::iter::once("contract")
                    .chain(err.key.iter().flat_map(|key| key.split('.')))
                    .collect();
                let help = err.suggestion.as_deref().map(did_you_mean);
                self.error_at(
                    &keys,
                    err.value.as_deref(),
                    format!("contract: {}", err.message),
                )
                .help = help;
                None
            }
        }
    }

    fn build_postprocessors(
        &mut self,
        uses: &[UseSpec],
        seen: &mut BTreeSet<String>,
        steps: &Steps<'_>,
    ) -> Vec<Step<dyn Postprocessor>> {
        let mut built = Vec::new();
        for spec in uses {
            self.check_unique_step(seen, spec, "postprocessors");
            if spec.weight.is_some() {
                self.error_at(
                    &["pipeline", "postprocessors", &spec.component, "weight"],
                    None,
                    format!(
                        "postprocessor `{}` has a `weight`, but only metrics are weighted",
                        spec.step_name()
                    ),
                );
            }
            if spec.aggregate.is_some() {
                self.error_at(
                    &["pipeline", "postprocessors", &spec.component, "aggregate"],
                    None,
                    format!(
                        "postprocessor `{}` has an `aggregate`, but only metrics are scored per turn",
                        spec.step_name()
                    ),
                );
            }
            if spec.component == "contract" && steps.contract_failed {
                continue; // the contract's own error is already reported
            }
            if let Some(Compiled::Postprocessor(run)) =
                self.build_step(spec, "postprocessors", Kind::Postprocessor, steps, &[])
            {
                built.push(Step {
                    name: spec.step_name().to_owned(),
                    run,
                    weight: 1.0,
                    scope: spec.scope.unwrap_or_default(),
                    aggregate: Aggregate::default(),
                });
            }
        }
        built
    }

    fn build_metrics(
        &mut self,
        uses: &[UseSpec],
        seen: &mut BTreeSet<String>,
        steps: &Steps<'_>,
    ) -> Vec<Step<dyn Metric>> {
        let mut built = Vec::new();
        let mut before: Vec<String> = Vec::new();
        for spec in uses {
            self.check_unique_step(seen, spec, "metrics");
            if !(spec.weight().is_finite() && spec.weight() >= 0.0) {
                self.error_at(
                    &["pipeline", "metrics", &spec.component, "weight"],
                    None,
                    format!(
                        "metric `{}`: weight must be a number ≥ 0, got {}",
                        spec.step_name(),
                        spec.weight()
                    ),
                );
            }
            let scope = spec.scope.unwrap_or_default();
            if spec.aggregate.is_some() && scope != Scope::AssistantTurns {
                self.error_at(
                    &["pipeline", "metrics", &spec.component, "aggregate"],
                    None,
                    format!(
                        "metric `{}` has an `aggregate`, which only a metric with `scope: assistant_turns` has (its scope is `{}`)",
                        spec.step_name(),
                        scope.as_str()
                    ),
                );
            }
            if let Some(Compiled::Metric(run)) =
                self.build_step(spec, "metrics", Kind::Metric, steps, &before)
            {
                built.push(Step {
                    name: spec.step_name().to_owned(),
                    run,
                    weight: spec.weight(),
                    scope,
                    aggregate: spec.aggregate.unwrap_or_default(),
                });
            }
            before.push(spec.step_name().to_owned());
        }
        built
    }

    /// A warning for each component no step, and no other component, uses.
    fn warn_unused<'a>(
        &mut self,
        components: &'a [LoadedComponent],
        uses: impl Iterator<Item = &'a UseSpec>,
    ) {
        let used: BTreeSet<&str> = uses
            .map(|u| u.component.as_str())
            .chain(
                components
                    .iter()
                    .flat_map(|c| c.manifest.dependencies.iter().map(String::as_str)),
            )
            .collect();
        for component in components {
            if component.manifest.kind != Kind::Strategy
                && !used.contains(component.manifest.name.as_str())
            {
                let at = component
                    .source
                    .locate(&["name"], Some(&component.manifest.name));
                self.warnings.push(LoadError::new(
                    &component.source.path,
                    at,
                    format!(
                        "component `{}` is not used by the pipeline",
                        component.manifest.name
                    ),
                ));
            }
        }
    }

    pub(super) fn build_strategies(
        &mut self,
        components: &[LoadedComponent],
        options: &LoadOptions,
    ) -> StrategyRegistry {
        let models = self.runtime.models();
        let mut registry = StrategyRegistry::with_builtins(models);
        let plain = Arc::new(StrategyRegistry::with_builtins(models));
        for component in components
            .iter()
            .filter(|c| c.manifest.kind == Kind::Strategy && c.implementation.is_some())
        {
            let config = merged_config(
                component.manifest.config.as_ref(),
                None,
                &component.manifest.name,
                &component.manifest.name,
                options,
            );
            let dir = component.dir();
            let ctx = BuildCtx {
                name: &component.manifest.name,
                base_dir: &dir,
                strategies: &plain,
                contract: None,
                files: &self.files,
                models: self.runtime.models(),
                warnings: None,
                metrics_before: None,
            };
            match Self::build_implementation(component, &config, &ctx) {
                Ok(Compiled::Strategy(strategy)) => {
                    registry.insert(&component.manifest.name, strategy);
                }
                Ok(_) => {}
                Err(err) => self.push_build_error(component, None, &err),
            }
        }
        registry
    }

    pub(super) fn build_implementation(
        component: &LoadedComponent,
        config: &Value,
        ctx: &BuildCtx<'_>,
    ) -> Result<Compiled, BuildError> {
        match &component.implementation {
            Some(implementation) => implementation.code.build(config, ctx),
            None => Err(BuildError::new("no implementation")),
        }
    }

    /// Builds one pipeline step: a component of the pack, or a built-in named directly.
    fn build_step(
        &mut self,
        spec: &UseSpec,
        section: &str,
        expected: Kind,
        steps: &Steps<'_>,
        metrics_before: &[String],
    ) -> Option<Compiled> {
        let Some(component) = steps
            .components
            .iter()
            .find(|c| c.manifest.name == spec.component)
        else {
            return self.build_builtin_step(spec, section, expected, steps, metrics_before);
        };
        if component.manifest.kind != expected {
            self.error_at(
                &["pipeline", section],
                Some(&spec.component),
                format!(
                    "`{}` is a {}, not a {expected}; list it under {}",
                    spec.component,
                    component.manifest.kind,
                    section_for(component.manifest.kind)
                ),
            );
            return None;
        }
        // An unusable implementation was reported with the manifest.
        component.implementation.as_ref()?;
        let step = spec.step_name();
        let config = merged_config(
            component.manifest.config.as_ref(),
            spec.with.as_ref(),
            &spec.component,
            step,
            steps.options,
        );
        let dir = component.dir();
        let warnings = std::cell::RefCell::new(Vec::new());
        let ctx = BuildCtx {
            name: step,
            base_dir: &dir,
            strategies: steps.strategies,
            contract: steps.contract,
            files: &self.files,
            models: self.runtime.models(),
            warnings: Some(&warnings),
            metrics_before: Some(metrics_before),
        };
        let built = Self::build_implementation(component, &config, &ctx);
        for warning in warnings.into_inner() {
            let warning = self.component_problem(component, Some((spec, section)), &warning);
            self.warnings.push(warning);
        }
        match built {
            Ok(compiled) => Some(compiled),
            Err(err) => {
                self.push_build_error(component, Some((spec, section)), &err);
                None
            }
        }
    }

    /// Builds a step that names a built-in rule directly (no manifest in the pack).
    fn build_builtin_step(
        &mut self,
        spec: &UseSpec,
        section: &str,
        expected: Kind,
        steps: &Steps<'_>,
        metrics_before: &[String],
    ) -> Option<Compiled> {
        let step = spec.step_name();
        let Some(builtin) = builtins::find(&spec.component) else {
            if self.manifests_failed {
                // A manifest that did not parse may define this name; its own
                // error is already reported.
                return None;
            }
            let candidates: Vec<&str> = steps
                .components
                .iter()
                .map(|c| c.manifest.name.as_str())
                .chain(builtins::names().map(|n| -> &str { n }))
                .collect();
            self.error_at(
                &["pipeline", section],
                Some(&spec.component),
                format!(
                    "unknown component `{}`: not in this pack and not a built-in",
                    spec.component
                ),
            )
            .help = nearest(&spec.component, candidates).map(|s| did_you_mean(&s));
            return None;
        };
        if builtin.kind != expected {
            self.error_at(
                &["pipeline", section],
                Some(&spec.component),
                format!(
                    "built-in `{}` is a {}, not a {expected}; list it under {}",
                    spec.component,
                    builtin.kind,
                    section_for(builtin.kind)
                ),
            );
            return None;
        }
        let config = merged_config(
            None,
            spec.with.as_ref(),
            &spec.component,
            step,
            steps.options,
        );
        let warnings = std::cell::RefCell::new(Vec::new());
        let ctx = BuildCtx {
            name: step,
            base_dir: &self.dir,
            strategies: steps.strategies,
            contract: steps.contract,
            files: &self.files,
            models: self.runtime.models(),
            warnings: Some(&warnings),
            metrics_before: Some(metrics_before),
        };
        let built = (builtin.build)(&config, &ctx);
        for warning in warnings.into_inner() {
            let warning = self.step_problem(spec, section, &warning);
            self.warnings.push(warning);
        }
        match built {
            Ok(compiled) => Some(compiled),
            Err(err) if self.push_override_error(&[&spec.component, step], &err) => None,
            Err(err) => {
                let help = err
                    .help()
                    .or_else(|| self.overrides_note(&[&spec.component, step]));
                let error = self.step_problem(spec, section, &err);
                self.errors.push(error.with_help(help));
                None
            }
        }
    }

    /// An error or warning of a built-in step, at the key (and the name under
    /// it) it is about in the pack's `pipeline:`.
    fn step_problem(&self, spec: &UseSpec, section: &str, err: &BuildError) -> LoadError {
        let key = err.key.clone().unwrap_or_default();
        // A dotted key (`arguments.search_flights.to`) is found one level at
        // a time.
        let mut keys = vec!["pipeline", section, spec.component.as_str()];
        if !key.is_empty() {
            keys.push("with");
            keys.extend(key.split('.'));
        }
        let value = match &err.value {
            Some(value) => Some(value.as_str()),
            None if key.is_empty() => Some(spec.component.as_str()),
            None => None,
        };
        let at = self.source.locate(&keys, value);
        LoadError::new(&self.source.path, at, err.message.clone()).with_help(err.help())
    }

    pub(super) fn push_build_error(
        &mut self,
        component: &LoadedComponent,
        spec: Option<(&UseSpec, &str)>,
        err: &BuildError,
    ) {
        let step = spec.map_or(component.manifest.name.as_str(), |(s, _)| s.step_name());
        if self.push_override_error(&[&component.manifest.name, step], err) {
            return;
        }
        let help = err
            .help()
            .or_else(|| self.overrides_note(&[&component.manifest.name, step]));
        let error = self.component_problem(component, spec, err);
        self.errors.push(error.with_help(help));
    }

    /// An error or warning of a component built from its manifest: at the
    /// key it is about in the step's `with:` when set there, else in the
    /// manifest's `config:` (or at its `implementation`).
    fn component_problem(
        &self,
        component: &LoadedComponent,
        spec: Option<(&UseSpec, &str)>,
        err: &BuildError,
    ) -> LoadError {
        // A dotted key (`arguments.refund.amount`) is found one level at a time.
        let keys: Vec<&str> = err.key.iter().flat_map(|key| key.split('.')).collect();
        let value = err.value.as_deref();
        let in_with = spec
            .and_then(|(s, _)| s.with.as_ref())
            .zip(keys.first())
            .is_some_and(|(with, key)| with.get(*key).is_some());
        let error = if in_with {
            let (spec, section) = spec.expect("checked above");
            let mut path = vec!["pipeline", section, spec.component.as_str(), "with"];
            path.extend(&keys);
            let at = self.source.locate(&path, value);
            LoadError::new(&self.source.path, at, err.message.clone())
        } else {
            let at = if keys.is_empty() {
                component.source.locate(&["implementation"], None)
            } else {
                let mut path = vec!["config"];
                path.extend(&keys);
                component.source.locate(&path, value)
            };
            LoadError::new(&component.source.path, at, err.message.clone())
        };
        error.with_help(err.help())
    }
}

/// What building a pipeline step may use: the pack's components, strategies and contract.
struct Steps<'a> {
    components: &'a [LoadedComponent],
    strategies: &'a Arc<StrategyRegistry>,
    contract: Option<&'a Arc<Contract>>,
    /// The pack declares a contract that did not compile (its error is reported).
    contract_failed: bool,
    options: &'a LoadOptions,
}

/// The postprocessor steps: the pipeline's, after the contract's own step when the
/// pack has a contract and does not place that step itself.
fn postprocessor_uses(manifest: &PackManifest, has_contract: bool) -> Vec<UseSpec> {
    let mut uses = manifest.pipeline.postprocessors.clone();
    if has_contract && !uses.iter().any(|u| u.component == "contract") {
        uses.insert(
            0,
            UseSpec {
                component: "contract".into(),
                weight: None,
                with: None,
                alias: None,
                scope: None,
                aggregate: None,
            },
        );
    }
    uses
}

/// What `list` and `explain` show about a component that resolved.
fn component_info(c: LoadedComponent) -> Option<ComponentInfo> {
    let Resolved { spec, code, .. } = c.implementation?;
    Some(ComponentInfo {
        implementation: spec,
        name: c.manifest.name,
        kind: c.manifest.kind,
        description: c.manifest.description,
        docs: c.source.body.or_else(|| code.description()),
        config: c.manifest.config,
        code,
    })
}

/// Where a component of this kind belongs, for "list it under ..." messages.
pub(super) fn section_for(kind: Kind) -> &'static str {
    match kind {
        Kind::Metric => "`pipeline.metrics`",
        Kind::Postprocessor => "`pipeline.postprocessors`",
        Kind::Strategy => {
            "`components` and name it in a `field_strategies` map (strategies are looked up by name, not run as steps)"
        }
    }
}
