//! Resolving what a pack names: its component manifests (globs, duplicate names,
//! their implementation through `source`), dependencies, the scoring thresholds
//! and the contract as written (with `--set contract.*`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::overrides::set_dotted;
use super::{LoadOptions, LoadedComponent, Override, PackLoader};
use crate::builtins;
use crate::contract::ContractSpec;
use crate::manifest::{ComponentManifest, PackManifest, UseSpec};
use crate::source::Sources;
use crate::strategy::StrategyRegistry;
use crate::suggest::nearest;
use crate::yaml::{LoadError, Source};

impl PackLoader {
    pub(super) fn load_components(
        &mut self,
        manifest: &PackManifest,
        sources: &Sources,
    ) -> Vec<LoadedComponent> {
        let files = self.expand_globs(&manifest.components, "components");
        let mut loaded: Vec<LoadedComponent> = Vec::new();
        for file in files {
            if file.file_name().is_some_and(|n| n == "pack.yaml") {
                continue;
            }
            let source = match Source::read_in_pack(&self.files, &file) {
                Ok(source) => source,
                Err(err) => {
                    self.errors.push(err);
                    self.manifests_failed = true;
                    continue;
                }
            };
            let component: ComponentManifest = match source.parse() {
                Ok(component) => component,
                Err(err) => {
                    self.errors.push(err);
                    self.manifests_failed = true;
                    continue;
                }
            };
            if let Some(first) = loaded.iter().find(|c| c.manifest.name == component.name) {
                let at = source.locate(&["name"], Some(&component.name));
                self.errors.push(LoadError::new(
                    &source.path,
                    at,
                    format!(
                        "duplicate component name `{}` (also defined in {})",
                        component.name,
                        first.source.path.display()
                    ),
                ));
                continue;
            }
            let implementation = match sources.resolve(&component, &source, &self.files) {
                Ok(implementation) => Some(implementation),
                Err(err) => {
                    // Reported once, here: later steps skip a component without one.
                    self.errors.push(err);
                    None
                }
            };
            loaded.push(LoadedComponent {
                manifest: component,
                source,
                implementation,
            });
        }
        loaded
    }

    pub(super) fn expand_globs(&mut self, patterns: &[String], section: &str) -> Vec<PathBuf> {
        let mut files = BTreeSet::new();
        for pattern in patterns {
            let is_glob = pattern.contains(['*', '?', '[']);
            let full = self.dir.join(pattern);
            if full.to_str().is_none() {
                self.error_at(
                    &[section],
                    Some(pattern),
                    format!("path `{pattern}` is not valid UTF-8"),
                );
                continue;
            }
            let matches: Vec<PathBuf> = if is_glob {
                match self.files.glob(&self.dir, pattern) {
                    Ok(paths) => paths,
                    Err(crate::files::GlobError::Pattern(err)) => {
                        self.error_at(
                            &[section],
                            Some(pattern),
                            format!("bad glob `{pattern}`: {err}"),
                        );
                        continue;
                    }
                    Err(err) => {
                        self.error_at(&[section], Some(pattern), err.to_string());
                        continue;
                    }
                }
            } else if full.is_file() {
                if let Err(err) = self.files.resolve(&full, pattern) {
                    self.error_at(&[section], Some(pattern), err.to_string());
                    continue;
                }
                vec![full.clone()]
            } else {
                Vec::new()
            };
            if matches.is_empty() {
                if is_glob {
                    let at = self.source.locate(&[section], Some(pattern));
                    self.warnings.push(LoadError::new(
                        &self.source.path,
                        at,
                        format!("`{pattern}` matches no file"),
                    ));
                } else {
                    self.error_at(
                        &[section],
                        Some(pattern),
                        format!(
                            "missing file `{pattern}` (looked in {})",
                            self.dir.display()
                        ),
                    );
                }
            }
            files.extend(matches);
        }
        files.into_iter().collect()
    }

    /// Every dependency names a component of the pack, a built-in rule or a
    /// built-in strategy, and the pack's dependency graph has no cycle.
    pub(super) fn check_dependencies(&mut self, components: &[LoadedComponent]) {
        let local: BTreeMap<&str, usize> = components
            .iter()
            .enumerate()
            .map(|(i, c)| (c.manifest.name.as_str(), i))
            .collect();
        let known_strategies = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        for component in components {
            for dependency in &component.manifest.dependencies {
                let known = local.contains_key(dependency.as_str())
                    || builtins::find(dependency).is_some()
                    || known_strategies.get(dependency).is_some();
                if !known {
                    let at = component.source.locate(&["dependencies"], Some(dependency));
                    let candidates = local
                        .keys()
                        .copied()
                        .chain(builtins::names().map(|n| -> &str { n }));
                    self.errors.push(
                        LoadError::new(
                            &component.source.path,
                            at,
                            format!(
                                "component `{}` depends on `{dependency}`, which is neither a component of this pack nor a built-in",
                                component.manifest.name
                            ),
                        )
                        .suggest(nearest(dependency, candidates)),
                    );
                }
            }
        }
        // Iterative depth-first search with colours; reports each cycle once.
        let mut state = vec![0u8; components.len()]; // 0 new, 1 on stack, 2 done
        for start in 0..components.len() {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            state[start] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let deps = &components[node].manifest.dependencies;
                if *next < deps.len() {
                    let dep = &deps[*next];
                    *next += 1;
                    let Some(&target) = local.get(dep.as_str()) else {
                        continue;
                    };
                    match state[target] {
                        0 => {
                            state[target] = 1;
                            stack.push((target, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|(n, _)| *n == target).unwrap_or(0);
                            let mut names: Vec<&str> = stack[from..]
                                .iter()
                                .map(|(n, _)| components[*n].manifest.name.as_str())
                                .collect();
                            names.push(components[target].manifest.name.as_str());
                            let owner = &components[node];
                            let at = owner.source.locate(&["dependencies"], Some(dep));
                            self.errors.push(
                                LoadError::new(
                                    &owner.source.path,
                                    at,
                                    format!("dependency cycle: {}", names.join(" → ")),
                                )
                                .with_help(Some("remove one of these dependencies".into())),
                            );
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
    }

    pub(super) fn check_unique_step(
        &mut self,
        seen: &mut BTreeSet<String>,
        spec: &UseSpec,
        section: &str,
    ) {
        if !seen.insert(spec.step_name().to_owned()) {
            self.error_at(
                &["pipeline", section],
                Some(&spec.component),
                format!("step `{}` appears twice in the pipeline", spec.step_name()),
            )
            .help = Some("give the second use its own name with `as: other_name`".into());
        }
    }

    /// The scoring thresholds are in range and reachable.
    pub(super) fn check_scoring(&mut self, manifest: &PackManifest) {
        let scoring = &manifest.scoring;
        if scoring.needs_improvement_max_issues < scoring.pass_max_issues {
            self.error_at(
                &["scoring", "needs_improvement_max_issues"],
                None,
                format!(
                    "needs_improvement_max_issues ({}) is below pass_max_issues ({})",
                    scoring.needs_improvement_max_issues, scoring.pass_max_issues
                ),
            );
        }
        if let Some(min) = scoring.min_score {
            if !(0.0..=1.0).contains(&min) {
                self.error_at(
                    &["scoring", "min_score"],
                    None,
                    format!("min_score must be within [0, 1], got {min}"),
                );
            }
        }
        if scoring.min_score.is_some()
            && manifest.pipeline.metrics.iter().all(|m| m.weight() == 0.0)
        {
            self.error_at(
                &["scoring", "min_score"],
                None,
                "min_score needs a score, but the pipeline has no metric with a weight above 0",
            );
        }
    }

    /// The contract as written, with `--set contract.key=value` overrides applied
    /// (so one pack can serve agents with different `may_emit` grants).
    pub(super) fn contract_spec(
        &mut self,
        manifest: &PackManifest,
        options: &LoadOptions,
    ) -> Option<ContractSpec> {
        let overrides: Vec<&Override> = options
            .overrides
            .iter()
            .filter(|o| o.component == "contract")
            .collect();
        if overrides.is_empty() {
            return manifest.contract.clone();
        }
        let raw: Value = self.source.parse().unwrap_or(Value::Null);
        let mut spec = raw
            .get("contract")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        for o in &overrides {
            set_dotted(&mut spec, &o.key, o.value.clone());
        }
        match crate::strict_config::from_value::<ContractSpec>(spec) {
            Ok(spec) => Some(spec),
            Err(err) => {
                let raws: Vec<&str> = overrides.iter().map(|o| o.raw.as_str()).collect();
                let path = self.source.path.clone();
                self.errors.push(LoadError::whole_file(
                    &path,
                    format!("--set {}: {err}", raws.join(", ")),
                ));
                None
            }
        }
    }
}
