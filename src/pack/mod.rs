//! Loading a rule pack: resolve, validate and compile everything once.
//!
//! `Pack::load` reads `pack.yaml`, the component manifests its globs name, the
//! contract and the pipeline; it builds every component once and reports every
//! error it finds (file, line, column, suggestion). The loaded `Pack` is
//! immutable and `Send + Sync`; evaluation lives in `pipeline.rs`.
//!
//! - `resolve`: component manifests (globs, duplicate names, their
//!   implementation through `source`), dependencies, scoring, the contract as written;
//! - `overrides`: `--set` overrides, the merged config of each use, limits, and
//!   blaming an override for the config error it causes;
//! - `compile`: the strategies, the contract and every pipeline step, built once;
//! - `revision`: the hash of what the pack is made of.

mod compile;
mod overrides;
mod resolve;
mod revision;

pub use overrides::{Override, OverrideError};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::component::{Kind, Metric, Postprocessor};
use crate::contract::Contract;
use crate::extract::Tier;
use crate::files::PackFiles;
use crate::loader::{LoadError, LoadErrors, Source};
use crate::manifest::{ComponentManifest, Implementation, PackManifest, ScoringSpec};
use crate::strategy::StrategyRegistry;

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
    implementation: Option<crate::source::Resolved>,
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
}
