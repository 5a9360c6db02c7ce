//! Loading a rule pack: resolve, validate and compile everything once.
//!
//! `Pack::load` reads `pack.yaml`, the component manifests its globs name, the
//! contract and the pipeline; it builds every component once and reports every
//! error it finds (file, line, column, suggestion). The loaded `Pack` is
//! immutable and `Send + Sync`; evaluation lives in `pipeline.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::build::BuildCtx;
use crate::builtins;
use crate::component::{BuildError, Compiled, Kind, Metric, Postprocessor};
use crate::contract::{Contract, ContractSpec, DEFAULT_LADDER};
use crate::extract::Tier;
use crate::files::PackFiles;
use crate::loader::{yaml_to_value, LoadError, LoadErrors, Source};
use crate::manifest::{ComponentManifest, Implementation, PackManifest, ScoringSpec, UseSpec};
use crate::source::Sources;
use crate::strategy::StrategyRegistry;
use crate::suggest::nearest;

/// A `--set component.key=value` override of a component's config for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Step or component name.
    pub component: String,
    /// Dotted key inside the component's config.
    pub key: String,
    pub value: Value,
    /// The text as given, for error messages and the revision.
    pub raw: String,
}

impl Override {
    /// Parses `component.key=value`. The value is read as YAML (so `0.9`, `true`
    /// and `[a, b]` are typed); `@path` reads a JSON or YAML file, relative to `cwd`.
    pub fn parse(spec: &str, cwd: &Path) -> Result<Self, String> {
        let (target, value) = spec
            .split_once('=')
            .ok_or_else(|| format!("--set {spec}: expected component.key=value"))?;
        let (component, key) = target
            .split_once('.')
            .filter(|(c, k)| !c.is_empty() && !k.is_empty())
            .ok_or_else(|| format!("--set {spec}: expected component.key=value"))?;
        let value = if let Some(path) = value.strip_prefix('@') {
            let path = cwd.join(path);
            let text = crate::files::read_regular_text(&path, crate::files::MAX_VALUE_FILE_BYTES)
                .map_err(|err| format!("--set {spec}: {err}"))?;
            yaml_to_value(&text, &path).map_err(|err| format!("--set {spec}: {err}"))?
        } else {
            // A value that is not YAML is taken as text, but `.nan` and `.inf` are
            // refused rather than passed on as text (or, in JSON, as `null`).
            if let Err(crate::yaml_scan::ScanError::NotFinite { text, .. }) =
                crate::yaml_scan::scan(value)
            {
                return Err(format!(
                    "--set {spec}: `{text}` is not a number JSON can hold; quote it if you mean the text"
                ));
            }
            yaml_to_value(value, Path::new("--set"))
                .unwrap_or_else(|_| Value::String(value.to_owned()))
        };
        Ok(Self {
            component: component.to_owned(),
            key: key.to_owned(),
            value,
            raw: spec.to_owned(),
        })
    }
}

/// Options for loading a pack.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub overrides: Vec<Override>,
    /// Folders to look for plugin libraries in, after the manifest's own folder.
    pub plugin_dirs: Vec<PathBuf>,
    /// Files or folders outside the pack that its files may resolve to (`--allow-path`).
    pub allow_paths: Vec<PathBuf>,
}

/// What `list` and `explain` show about a component of the pack.
#[derive(Debug, Clone)]
pub struct ComponentInfo {
    pub name: String,
    pub kind: Kind,
    pub version: Option<String>,
    pub description: Option<String>,
    pub implementation: Implementation,
    /// The Markdown body of the manifest, if it had one (for a script without
    /// one: the script's header comment).
    pub docs: Option<String>,
    /// The code the implementation names.
    pub(crate) code: Arc<dyn crate::source::Implementation>,
    pub file: PathBuf,
    pub dependencies: Vec<String>,
}

impl ComponentInfo {
    /// Documentation the component's code carries (a built-in's, a plugin's),
    /// shown by `explain` after the manifest's own.
    pub fn code_docs(&self) -> Option<String> {
        self.code.docs()
    }
}

/// A compiled pipeline step.
#[derive(Debug)]
pub(crate) struct Step<T: ?Sized> {
    /// The name results and issues are reported under.
    pub name: String,
    pub run: Arc<T>,
    pub weight: f64,
}

/// A loaded, compiled rule pack. Immutable and shareable across threads.
#[derive(Debug)]
pub struct Pack {
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    pub dir: PathBuf,
    /// Hash of every file in the pack folder and of the run's overrides.
    pub revision: String,
    pub components: Vec<ComponentInfo>,
    pub contract: Option<Arc<Contract>>,
    pub scoring: ScoringSpec,
    /// Test files named by the pack's `tests` globs.
    pub tests: Vec<PathBuf>,
    /// Things worth fixing that do not stop the pack from loading.
    pub warnings: Vec<LoadError>,
    pub(crate) ladder: Vec<Tier>,
    pub(crate) postprocessors: Vec<Step<dyn Postprocessor>>,
    pub(crate) metrics: Vec<Step<dyn Metric>>,
    pub(crate) strategies: Arc<StrategyRegistry>,
    pub(crate) label: String,
    /// How long one step may take on one record (`limits.timeout_ms`).
    pub(crate) step_timeout: Option<std::time::Duration>,
}

impl Pack {
    /// Loads the pack in `path` (a folder holding `pack.yaml`, or the file itself).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, LoadErrors> {
        Self::load_with(path, &LoadOptions::default())
    }

    /// Loads a pack with run options such as config overrides.
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Self, LoadErrors> {
        let path = path.as_ref();
        let manifest_path = if path.is_dir() {
            path.join("pack.yaml")
        } else {
            path.to_path_buf()
        };
        if !manifest_path.is_file() {
            return Err(LoadError::new(
                &manifest_path,
                (1, 1),
                "no such pack: expected a folder with a pack.yaml, or the path of a pack.yaml",
            )
            .into());
        }
        let dir = manifest_path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let source = Source::read(&manifest_path)?;
        let manifest: PackManifest = source.parse()?;
        let files = PackFiles::new(&dir, &options.allow_paths)
            .map_err(|err| LoadError::new(&manifest_path, (1, 1), err.to_string()))?;
        PackLoader {
            dir,
            files,
            source,
            manifests_failed: false,
            overrides: options.overrides.clone(),
            plugin_dirs: options.plugin_dirs.clone(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
        .load(&manifest, options)
    }

    /// `name@version`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The extraction tiers tried for every record, in order.
    pub fn ladder(&self) -> &[Tier] {
        &self.ladder
    }

    /// Names of the pipeline's postprocessor steps, in order.
    pub fn postprocessor_names(&self) -> impl Iterator<Item = &str> {
        self.postprocessors.iter().map(|s| s.name.as_str())
    }

    /// Names and weights of the pipeline's metric steps, in order.
    pub fn metric_steps(&self) -> impl Iterator<Item = (&str, f64)> {
        self.metrics.iter().map(|s| (s.name.as_str(), s.weight))
    }

    pub fn component(&self, name: &str) -> Option<&ComponentInfo> {
        self.components.iter().find(|c| c.name == name)
    }

    /// The strategies metrics can look up (built-ins plus the pack's own).
    pub fn strategies(&self) -> &StrategyRegistry {
        &self.strategies
    }
}

struct LoadedComponent {
    manifest: ComponentManifest,
    source: Source,
    /// `None` when it could not be resolved (the error is reported at the manifest).
    implementation: Option<Arc<dyn crate::source::Implementation>>,
}

impl LoadedComponent {
    /// The manifest's folder: relative paths in its config resolve from here.
    fn dir(&self) -> PathBuf {
        self.source
            .path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
}

struct PackLoader {
    dir: PathBuf,
    /// What the pack may read, and what it has read.
    files: PackFiles,
    source: Source,
    /// Some component manifest could not be read or parsed.
    manifests_failed: bool,
    /// The run's `--set` overrides, to blame them for the config errors they cause.
    overrides: Vec<Override>,
    /// Where plugin libraries are looked for (`--plugin-dir`).
    plugin_dirs: Vec<PathBuf>,
    errors: Vec<LoadError>,
    warnings: Vec<LoadError>,
}

impl PackLoader {
    fn error_at(
        &mut self,
        keys: &[&str],
        value: Option<&str>,
        message: impl Into<String>,
    ) -> &mut LoadError {
        let at = self.source.locate(keys, value);
        self.errors
            .push(LoadError::new(&self.source.path, at, message));
        self.errors.last_mut().expect("just pushed")
    }

    fn load(mut self, manifest: &PackManifest, options: &LoadOptions) -> Result<Pack, LoadErrors> {
        // Checked first, in every pack (with scripts or not), so a typo in
        // `--set limits.*` is always an error.
        let limits = self.script_limits(manifest);
        let sources = Sources::new(self.plugin_dirs.clone(), limits);
        let components = self.load_components(manifest, &sources);
        self.check_dependencies(&components);

        let contract_spec = self.contract_spec(manifest, options);
        let contract_declared = manifest.contract.is_some();
        let contract = match contract_spec.as_ref().map(Contract::compile) {
            None => None,
            Some(Ok(contract)) => Some(Arc::new(contract)),
            Some(Err(err)) => {
                let key = err.key.clone();
                let keys: Vec<&str> = std::iter::once("contract").chain(key.as_deref()).collect();
                let help = err
                    .suggestion
                    .clone()
                    .map(|s| format!("did you mean `{s}`?"));
                self.error_at(&keys, None, format!("contract: {}", err.message))
                    .help = help;
                None
            }
        };
        let ladder = contract
            .as_ref()
            .map_or_else(|| DEFAULT_LADDER.to_vec(), |c| c.ladder.clone());

        self.check_overrides(manifest, &components, options);
        let strategies = Arc::new(self.build_strategies(&components, options));

        let mut uses: Vec<UseSpec> = manifest.pipeline.postprocessors.clone();
        if contract.is_some() && !uses.iter().any(|u| u.component == "contract") {
            uses.insert(
                0,
                UseSpec {
                    component: "contract".into(),
                    weight: None,
                    with: None,
                    alias: None,
                },
            );
        }
        let mut seen = BTreeSet::new();
        let mut postprocessors = Vec::new();
        for spec in &uses {
            self.check_unique_step(&mut seen, spec, "postprocessors");
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
            if spec.component == "contract" && contract.is_none() && contract_declared {
                continue; // the contract's own error is already reported
            }
            if let Some(Compiled::Postprocessor(run)) = self.build_step(
                spec,
                "postprocessors",
                Kind::Postprocessor,
                &components,
                &strategies,
                contract.as_ref(),
                options,
            ) {
                postprocessors.push(Step {
                    name: spec.step_name().to_owned(),
                    run,
                    weight: 1.0,
                });
            }
        }
        let mut metrics = Vec::new();
        for spec in &manifest.pipeline.metrics {
            self.check_unique_step(&mut seen, spec, "metrics");
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
            if let Some(Compiled::Metric(run)) = self.build_step(
                spec,
                "metrics",
                Kind::Metric,
                &components,
                &strategies,
                contract.as_ref(),
                options,
            ) {
                metrics.push(Step {
                    name: spec.step_name().to_owned(),
                    run,
                    weight: spec.weight(),
                });
            }
        }
        self.check_scoring(&manifest.scoring);
        if manifest.scoring.min_score.is_some()
            && manifest.pipeline.metrics.iter().all(|m| m.weight() == 0.0)
        {
            self.error_at(
                &["scoring", "min_score"],
                None,
                "min_score needs a score, but the pipeline has no metric with a weight above 0",
            );
        }
        let tests = self.expand_globs(&manifest.tests, "tests");

        if !self.errors.is_empty() {
            return Err(LoadErrors(self.errors));
        }
        let used: BTreeSet<&str> = uses
            .iter()
            .chain(&manifest.pipeline.metrics)
            .map(|u| u.component.as_str())
            .chain(
                components
                    .iter()
                    .flat_map(|c| c.manifest.dependencies.iter().map(String::as_str)),
            )
            .collect();
        for component in &components {
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
        let revision = revision(&self.dir, &self.files, options);
        let version = manifest
            .version
            .clone()
            .unwrap_or_else(|| "0.0.0".to_owned());
        let timeout_ms = limits.timeout_ms;
        Ok(Pack {
            step_timeout: (timeout_ms > 0).then(|| std::time::Duration::from_millis(timeout_ms)),
            label: format!("{}@{version}", manifest.name),
            name: manifest.name.clone(),
            version,
            description: manifest.description.clone(),
            dir: self.dir,
            revision,
            components: components
                .into_iter()
                .filter_map(|c| {
                    let code = c.implementation?;
                    Some(ComponentInfo {
                        implementation: c.manifest.implementation.as_ref()?.resolve().ok()?,
                        name: c.manifest.name,
                        kind: c.manifest.kind,
                        version: c.manifest.version,
                        description: c.manifest.description,
                        docs: c.source.body.or_else(|| code.description()),
                        code,
                        file: c.source.path,
                        dependencies: c.manifest.dependencies,
                    })
                })
                .collect(),
            contract,
            scoring: manifest.scoring,
            tests,
            warnings: self.warnings,
            ladder,
            postprocessors,
            metrics,
            strategies,
        })
    }

    /// The contract as written, with `--set contract.key=value` overrides applied
    /// (so one pack can serve agents with different `may_emit` grants).
    fn contract_spec(
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
                self.errors.push(LoadError::new(
                    &path,
                    (1, 1),
                    format!("--set {}: {err}", raws.join(", ")),
                ));
                None
            }
        }
    }

    fn expand_globs(&mut self, patterns: &[String], section: &str) -> Vec<PathBuf> {
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

    fn load_components(
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

    /// The pack's `limits:` with the run's `--set limits.key=value` overrides.
    fn script_limits(&mut self, manifest: &PackManifest) -> crate::script::ScriptLimits {
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
        if let Err((key, message)) = checked {
            self.error_at(&["limits", key], None, message);
            limits = crate::script::ScriptLimits::default();
        }
        for o in overrides {
            if let Err(message) = limits.set(&o.key, &o.value) {
                let path = self.source.path.clone();
                self.errors.push(
                    LoadError::new(&path, (1, 1), format!("--set {}: {message}", o.raw)).suggest(
                        nearest(&o.key, crate::script::ScriptLimits::KEYS.iter().copied()),
                    ),
                );
            }
        }
        limits
    }

    /// Every dependency names a component of the pack, a built-in rule or a
    /// built-in strategy, and the pack's dependency graph has no cycle.
    fn check_dependencies(&mut self, components: &[LoadedComponent]) {
        let local: BTreeMap<&str, usize> = components
            .iter()
            .enumerate()
            .map(|(i, c)| (c.manifest.name.as_str(), i))
            .collect();
        let known_strategies = StrategyRegistry::with_builtins();
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

    fn check_unique_step(&mut self, seen: &mut BTreeSet<String>, spec: &UseSpec, section: &str) {
        if !seen.insert(spec.step_name().to_owned()) {
            self.error_at(
                &["pipeline", section],
                Some(&spec.component),
                format!("step `{}` appears twice in the pipeline", spec.step_name()),
            )
            .help = Some("give the second use its own name with `as: other_name`".into());
        }
    }

    fn check_scoring(&mut self, scoring: &ScoringSpec) {
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
    }

    fn check_overrides(
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
                    LoadError::new(
                        &path,
                        (1, 1),
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

    fn build_strategies(
        &mut self,
        components: &[LoadedComponent],
        options: &LoadOptions,
    ) -> StrategyRegistry {
        let mut registry = StrategyRegistry::with_builtins();
        let plain = Arc::new(StrategyRegistry::with_builtins());
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
            let files = self.files.clone();
            let ctx = BuildCtx {
                name: &component.manifest.name,
                base_dir: &dir,
                strategies: &plain,
                contract: None,
                files: &files,
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

    fn build_implementation(
        component: &LoadedComponent,
        config: &Value,
        ctx: &BuildCtx<'_>,
    ) -> Result<Compiled, BuildError> {
        match &component.implementation {
            Some(implementation) => implementation.build(config, ctx),
            None => Err(BuildError::new("no implementation")),
        }
    }

    /// The `--set` override a config error on `key` of this component/step comes from.
    fn blamed_override(&self, names: &[&str], key: Option<&str>) -> Option<&Override> {
        let first = |k: &str| k.split('.').next().unwrap_or(k).to_owned();
        let key = key.map(first)?;
        self.overrides
            .iter()
            .find(|o| names.contains(&o.component.as_str()) && first(&o.key) == key)
    }

    /// Reports a config error caused by a `--set` override, if it was one.
    fn push_override_error(&mut self, names: &[&str], err: &BuildError) -> bool {
        let Some(o) = self.blamed_override(names, err.key.as_deref()) else {
            return false;
        };
        let raw = o.raw.clone();
        self.push_set_error(&raw, err);
        true
    }

    /// The `--set` overrides that changed this component's config, for a help line
    /// when an error cannot be pinned to one key.
    fn overrides_note(&self, names: &[&str]) -> Option<String> {
        let raws: Vec<&str> = self
            .overrides
            .iter()
            .filter(|o| names.contains(&o.component.as_str()))
            .map(|o| o.raw.as_str())
            .collect();
        (!raws.is_empty())
            .then(|| format!("this config was changed by --set {}", raws.join(", --set ")))
    }

    fn push_set_error(&mut self, raw: &str, err: &BuildError) {
        let message = format!("--set {raw}: {}", err.message);
        let help = err
            .suggestion
            .clone()
            .map(|s| format!("did you mean `{s}`?"));
        let path = self.source.path.clone();
        self.errors
            .push(LoadError::new(&path, (1, 1), message).with_help(help));
    }

    fn push_build_error(
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
            .suggestion
            .clone()
            .map(|s| format!("did you mean `{s}`?"))
            .or_else(|| self.overrides_note(&[&component.manifest.name, step]));
        let key = err.key.as_deref();
        let in_with = spec
            .and_then(|(s, _)| s.with.as_ref())
            .zip(key)
            .is_some_and(|(with, key)| with.get(key).is_some());
        let error = if in_with {
            let (spec, section) = spec.expect("checked above");
            let at = self.source.locate(
                &[
                    "pipeline",
                    section,
                    &spec.component,
                    "with",
                    key.unwrap_or(""),
                ],
                None,
            );
            LoadError::new(&self.source.path, at, err.message.clone())
        } else {
            let at = match key {
                Some(key) => component.source.locate(&["config", key], None),
                None => component.source.locate(&["implementation"], None),
            };
            LoadError::new(&component.source.path, at, err.message.clone())
        };
        self.errors.push(error.with_help(help));
    }

    #[allow(clippy::too_many_arguments)]
    fn build_step(
        &mut self,
        spec: &UseSpec,
        section: &str,
        expected: Kind,
        components: &[LoadedComponent],
        strategies: &Arc<StrategyRegistry>,
        contract: Option<&Arc<Contract>>,
        options: &LoadOptions,
    ) -> Option<Compiled> {
        let step = spec.step_name();
        if let Some(component) = components
            .iter()
            .find(|c| c.manifest.name == spec.component)
        {
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
            let config = merged_config(
                component.manifest.config.as_ref(),
                spec.with.as_ref(),
                &spec.component,
                step,
                options,
            );
            let dir = component.dir();
            let files = self.files.clone();
            let ctx = BuildCtx {
                name: step,
                base_dir: &dir,
                strategies,
                contract,
                files: &files,
            };
            return match Self::build_implementation(component, &config, &ctx) {
                Ok(compiled) => Some(compiled),
                Err(err) => {
                    self.push_build_error(component, Some((spec, section)), &err);
                    None
                }
            };
        }
        let Some(builtin) = builtins::find(&spec.component) else {
            if self.manifests_failed {
                // A manifest that did not parse may define this name; its own
                // error is already reported.
                return None;
            }
            let candidates: Vec<&str> = components
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
            .help = nearest(&spec.component, candidates).map(|s| format!("did you mean `{s}`?"));
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
        let config = merged_config(None, spec.with.as_ref(), &spec.component, step, options);
        let dir = self.dir.clone();
        let files = self.files.clone();
        let ctx = BuildCtx {
            name: step,
            base_dir: &dir,
            strategies,
            contract,
            files: &files,
        };
        match (builtin.build)(&config, &ctx) {
            Ok(compiled) => Some(compiled),
            Err(err) if self.push_override_error(&[&spec.component, step], &err) => None,
            Err(err) => {
                let key = err.key.clone().unwrap_or_default();
                let help = err
                    .suggestion
                    .clone()
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| self.overrides_note(&[&spec.component, step]));
                let keys = [
                    "pipeline",
                    section,
                    spec.component.as_str(),
                    "with",
                    key.as_str(),
                ];
                let keys = if key.is_empty() {
                    &keys[..3]
                } else {
                    &keys[..]
                };
                let value = if key.is_empty() {
                    Some(spec.component.as_str())
                } else {
                    None
                };
                self.error_at(keys, value, err.message).help = help;
                None
            }
        }
    }
}

/// Where a component of this kind belongs, for "list it under ..." messages.
fn section_for(kind: Kind) -> &'static str {
    match kind {
        Kind::Metric => "`pipeline.metrics`",
        Kind::Postprocessor => "`pipeline.postprocessors`",
        Kind::Strategy => {
            "`components` and name it in a `field_strategies` map (strategies are looked up by name, not run as steps)"
        }
    }
}

/// Manifest defaults, then the pipeline's `with:`, then `--set` overrides for
/// this component or step. Top-level keys replace; `--set a.b.c` sets nested keys.
fn merged_config(
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
fn set_dotted(target: &mut Value, key: &str, value: Value) {
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

/// Hash of the pack as 16 hex digits: every regular file under the pack folder
/// (paths and contents, in sorted order; hidden entries and the top-level
/// README.md skipped; links not followed, so a link loop or a link to `/` costs
/// nothing), every file the pack read through a link or from an allowed path,
/// and the run's overrides.
fn revision(dir: &Path, files: &PackFiles, options: &LoadOptions) -> String {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            // Hidden entries, and the pack's README (documentation that cannot change
            // any result), are not part of the revision.
            if name.starts_with('.') || (folder == dir && name == "readme.md") {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(kind) if kind.is_file() => found.push(entry.path()),
                // Links are hashed below if the pack used what they point to;
                // devices, FIFOs and sockets are never read.
                _ => {}
            }
        }
    }
    found.sort();
    let mut hasher = Sha256::new();
    let mut hashed = BTreeSet::new();
    for file in found {
        let relative = file.strip_prefix(dir).unwrap_or(&file);
        hashed.insert(files.root().join(relative));
        hash_file(
            &mut hasher,
            &relative.to_string_lossy().replace('\\', "/"),
            &file,
        );
    }
    for used in files.used() {
        if !hashed.contains(&used) {
            hasher.update(b"--used ");
            hash_file(&mut hasher, &files.revision_name(&used), &used);
        }
    }
    for o in &options.overrides {
        hasher.update(b"--set ");
        hasher.update(o.component.as_bytes());
        hasher.update(b".");
        hasher.update(o.key.as_bytes());
        hasher.update(b"=");
        hasher.update(o.value.to_string().as_bytes());
    }
    let digest = hasher.finalize();
    digest[..8]
        .iter()
        .fold(String::with_capacity(16), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// Adds a file's name and content to the revision hash, streaming the content.
fn hash_file(hasher: &mut Sha256, name: &str, path: &Path) {
    use std::io::Read;
    hasher.update(name.as_bytes());
    hasher.update([0]);
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    let Ok(meta) = file.metadata() else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    hasher.update(meta.len().to_le_bytes());
    let mut buffer = vec![0u8; 1 << 16];
    let mut left = meta.len();
    while left > 0 {
        match file.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
                hasher.update(&buffer[..n]);
                left -= n as u64;
            }
        }
    }
}
