//! Loading a rule pack: resolve, validate and compile everything once.
//!
//! `Pack::load` reads `pack.yaml`, the component manifests its globs name, the
//! contract and the pipeline; it builds every component once and reports every
//! error it finds (file, line, column, suggestion). The loaded `Pack` is
//! immutable and `Send + Sync`; evaluation lives in `pipeline/`.
//!
//! - `resolve`: component manifests (globs, duplicate names, their
//!   implementation through `source`), dependencies, scoring, the contract as written;
//! - `overrides`: `--set` overrides, the merged config of each use, limits, and
//!   blaming an override for the config error it causes;
//! - `compile`: the strategies, the contract and every pipeline step, built once;
//! - `revision`: the hash of what the pack is made of.

pub(crate) mod bundled;
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
use crate::manifest::{
    Aggregate, ComponentManifest, Implementation, PackManifest, Scope, ScoringSpec,
};
use crate::runtime::Runtime;
use crate::strategy::StrategyRegistry;
use crate::yaml::{LoadError, LoadErrors, Source};

/// Options for loading a pack.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Config overrides (`--set component.key=value`), applied over the pack's own.
    pub overrides: Vec<Override>,
    /// Folders to look for plugin libraries in, after the manifest's own folder.
    pub plugin_dirs: Vec<PathBuf>,
    /// Files or folders outside the pack that its files may resolve to (`--allow-path`).
    pub allow_paths: Vec<PathBuf>,
    /// The user's consent to opening the pack's plugin libraries
    /// (`--allow-plugins`). Opening one runs its native code, so without it
    /// (the default) a pack with a plugin component does not load, and nothing
    /// of the library is looked at. With it, a library is opened only from the
    /// pack's folder, `plugin_dirs`, `TRIBUNAL_PLUGIN_PATH` or `allow_paths`.
    pub allow_plugins: bool,
    /// With `allow_plugins`: the libraries consented to by digest (a server
    /// pins those present at start, so a reload opens no other).
    pub plugin_pins: Option<crate::plugin::PluginPins>,
    /// The keys a bundle must be signed by (`--trust`). None (the default):
    /// a bundle's files are checked against its manifest, its signature is
    /// not, and its plugin libraries do not load.
    pub trust: Vec<crate::bundle::PublicKey>,
}

/// Loading packs on a runtime.
impl Runtime {
    /// Loads the pack in `path` on this runtime (see [`Pack::load`]).
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Pack, LoadErrors> {
        self.load_with(path, &LoadOptions::default())
    }

    /// Loads a pack on this runtime with options (see [`Pack::load_with`]).
    pub fn load_with(
        &self,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Pack, LoadErrors> {
        Pack::load_inner(path.as_ref(), &self.with_limits(options), false, self)
    }

    /// Loads a pack on this runtime to show it, not to run it (see
    /// [`Pack::load_for_inspection`]).
    #[doc(hidden)]
    pub fn load_for_inspection(
        &self,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Pack, LoadErrors> {
        Pack::load_inner(path.as_ref(), &self.with_limits(options), true, self)
    }

    /// `options` with the runtime's limits before the pack's own overrides
    /// (which come later, and win).
    fn with_limits<'o>(&self, options: &'o LoadOptions) -> std::borrow::Cow<'o, LoadOptions> {
        if self.limits().is_empty() {
            return std::borrow::Cow::Borrowed(options);
        }
        let mut options = options.clone();
        options
            .overrides
            .splice(0..0, self.limits().iter().cloned());
        std::borrow::Cow::Owned(options)
    }
}

/// What `list` and `explain` show about a component of the pack.
#[derive(Debug, Clone)]
pub struct ComponentInfo {
    pub name: String,
    pub kind: Kind,
    pub description: Option<String>,
    pub implementation: Implementation,
    /// The Markdown body of the manifest, if it had one (for a script without
    /// one: the script's header comment).
    pub docs: Option<String>,
    /// The manifest's `config:` (its defaults; for a script, the config it takes).
    pub config: Option<serde_json::Value>,
    /// The code the implementation names.
    pub(crate) code: Arc<dyn crate::source::Implementation>,
}

impl ComponentInfo {
    /// Whether it is a Rhai script (`script:` or `inline:`), whose config keys
    /// are exactly the ones its manifest's `config` lists.
    pub fn is_script(&self) -> bool {
        matches!(
            self.implementation,
            Implementation::Script(_) | Implementation::Inline(_)
        )
    }

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
    /// Where it runs on a transcript record.
    pub scope: Scope,
    /// How a metric run per assistant turn scores.
    pub aggregate: Aggregate,
}

/// A loaded, compiled rule pack: load it once, then evaluate any number of
/// outputs with it ([`Pack::evaluate`], [`Pack::evaluate_batch`]), from any
/// number of threads (it is `Send + Sync` and never changes once loaded).
///
/// ```
/// # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
/// use tribunal::{LoadOptions, Override, Pack};
///
/// let options = LoadOptions {
///     overrides: vec![Override::parse("validate_json_emission.threshold=0.9", ".".as_ref())?],
///     ..LoadOptions::default()
/// };
/// let pack = Pack::load_with("rules/ksi-emission", &options)?;
/// assert_eq!(pack.label(), "ksi-emission@1.0.0");
/// assert_eq!(pack.revision().len(), 16);
/// assert_eq!(pack.metric_names().collect::<Vec<_>>(), ["validate_json_emission"]);
///
/// // A pack with a `contract:` tells the model what to emit.
/// let pack = Pack::load("rules/structured-output")?;
/// assert!(pack.prompt().unwrap().starts_with("OUTPUT FORMAT"));
/// assert_eq!(pack.json_schema().unwrap()["type"], "object");
/// # Ok::<(), tribunal::Error>(())
/// ```
#[derive(Debug)]
pub struct Pack {
    /// What the pack is: its name, files and what loading it noted.
    pub(crate) info: PackInfo,
    /// What it does to a record: the compiled pipeline.
    pub(crate) pipeline: Pipeline,
    /// What the pack runs on (its worker threads, models, plugin libraries).
    pub(crate) runtime: Runtime,
}

/// What a pack is, apart from what it does: its identity, the files it was
/// made of and read, and what loading it noted.
#[derive(Debug)]
pub(crate) struct PackInfo {
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    pub dir: PathBuf,
    /// Hash of every file in the pack folder and of the run's overrides.
    pub revision: String,
    /// `name@version`.
    pub label: String,
    pub components: Vec<ComponentInfo>,
    /// Test files named by the pack's `tests` globs.
    pub tests: Vec<PathBuf>,
    /// Every file the pack read while it loaded (where it really is): inputs
    /// that no output of a command may be.
    pub files_read: Vec<PathBuf>,
    /// The files `--set key=@FILE` values were read from: inputs too.
    pub set_files: Vec<PathBuf>,
    /// The pack's `tests` entries as written (globs and paths).
    pub test_patterns: Vec<String>,
    /// Things worth fixing that do not stop the pack from loading.
    pub warnings: Vec<LoadError>,
    /// Plugin components left unloaded, without consent, by
    /// [`Pack::load_for_inspection`]: a note each, at the manifest's `library:`.
    pub not_loaded: Vec<LoadError>,
    /// The bundle it was loaded from (its folder kept while the pack lives).
    pub bundle: Option<Arc<bundled::Unpacked>>,
}

/// What a pack does to a record: extraction, postprocessors, metrics, scoring,
/// compiled once.
#[derive(Debug)]
pub(crate) struct Pipeline {
    pub contract: Option<Arc<Contract>>,
    pub scoring: ScoringSpec,
    pub ladder: Vec<Tier>,
    pub postprocessors: Vec<Step<dyn Postprocessor>>,
    pub metrics: Vec<Step<dyn Metric>>,
    /// No step reads the extracted JSON: results written as records need only
    /// its text (see [`Metric::reads_json`]).
    pub json_unread: bool,
    pub strategies: Arc<StrategyRegistry>,
    /// How long one step may take on one record (`limits.timeout_ms`).
    pub step_timeout: Option<std::time::Duration>,
}

impl Pipeline {
    /// The assistant turns of a transcript record that steps run on by
    /// themselves: every one when a step has `scope: assistant_turns`, the
    /// last when a step has `scope: last`, none otherwise.
    pub fn turn_scope(&self) -> Option<Scope> {
        let scopes = self
            .postprocessors
            .iter()
            .map(|s| s.scope)
            .chain(self.metrics.iter().map(|s| s.scope));
        scopes.fold(None, |widest, scope| match (widest, scope) {
            (_, Scope::AssistantTurns) | (Some(Scope::AssistantTurns), _) => {
                Some(Scope::AssistantTurns)
            }
            (_, Scope::Last) | (Some(Scope::Last), _) => Some(Scope::Last),
            _ => None,
        })
    }
}

impl Pack {
    /// The packs in the folder `dir`: its sub-folders that hold a `pack.yaml`,
    /// sorted (none when `dir` cannot be read). `tribunal test rules/` tests
    /// each.
    pub fn packs_in(dir: &Path) -> Vec<PathBuf> {
        let mut packs: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|sub| sub.join("pack.yaml").is_file())
            .collect();
        packs.sort();
        packs
    }

    /// Why `path` is not a pack, in words, for a front end's message: it does
    /// not exist, it is a file other than a `pack.yaml`, or a folder without
    /// one (naming the packs in its sub-folders when it is a folder of packs).
    pub fn why_not_a_pack(path: &Path) -> String {
        const WHAT: &str = "a pack is a folder holding a pack.yaml (or the pack.yaml itself)";
        if !path.exists() {
            return format!("no such file or folder; {WHAT}");
        }
        if !path.is_dir() {
            return format!("not a pack; {WHAT}");
        }
        let packs: Vec<String> = Self::packs_in(path)
            .iter()
            .map(|sub| sub.display().to_string())
            .collect();
        match packs.len() {
            0 => format!("no pack.yaml in this folder; {WHAT}"),
            n => {
                let shown = packs.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
                let more = if n > 3 { ", …" } else { "" };
                format!("a folder of packs, not a pack: name one of them ({shown}{more})")
            }
        }
    }

    /// Every file this pack's load read, each with what it was to the command
    /// ("the pack's file", "the --set file"): inputs no output may be.
    #[doc(hidden)]
    pub fn components(&self) -> &[ComponentInfo] {
        &self.info.components
    }

    /// Whether the contract has a `fallback` (the ladder's last resort).
    #[doc(hidden)]
    pub fn has_fallback(&self) -> bool {
        self.pipeline
            .contract
            .as_ref()
            .is_some_and(|c| c.fallback.is_some())
    }

    #[doc(hidden)]
    pub fn scoring(&self) -> &ScoringSpec {
        &self.pipeline.scoring
    }

    #[doc(hidden)]
    pub fn test_files(&self) -> &[PathBuf] {
        &self.info.tests
    }

    /// Whether the manifest has a `tests:` entry (even one matching nothing).
    #[doc(hidden)]
    pub fn has_test_patterns(&self) -> bool {
        !self.info.test_patterns.is_empty()
    }

    #[doc(hidden)]
    pub fn inputs(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        let pack = self
            .info
            .files_read
            .iter()
            .map(|f| ("the pack's file", f.as_path()));
        let set = self
            .info
            .set_files
            .iter()
            .map(|f| ("the --set file", f.as_path()));
        pack.chain(set)
    }

    /// Loads the pack in `path` (a folder holding `pack.yaml`, or the file
    /// itself) on a runtime of its own. Every error found is returned, each
    /// with its file, line and column (and a suggestion where one helps).
    /// Packs that should share threads are loaded through one
    /// [`Runtime`](crate::runtime::Runtime) ([`Runtime::load`]).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, LoadErrors> {
        Runtime::new().load(path)
    }

    /// Loads a pack with config overrides (`--set`), plugin folders, the
    /// paths outside the pack it may read, and consent to opening its
    /// plugins, on a runtime of its own ([`Runtime::load_with`] to share one).
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Self, LoadErrors> {
        Runtime::new().load_with(path, options)
    }

    /// Loads a pack to show it (`lint`, `list`, `explain`, `prompt`), not to run
    /// it: without `allow_plugins`, each plugin component is left unloaded (its
    /// library is never looked at) and noted in [`Pack::not_loaded`] instead of
    /// being a load error. Such a pack must not be evaluated (its unloaded
    /// components would make every record an `ERROR`).
    #[doc(hidden)]
    pub fn load_for_inspection(
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Self, LoadErrors> {
        Runtime::new().load_for_inspection(path, options)
    }

    pub(crate) fn load_inner(
        path: &Path,
        options: &LoadOptions,
        inspect_only: bool,
        runtime: &Runtime,
    ) -> Result<Self, LoadErrors> {
        if let Some((file, name)) = bundled::bundle_path(path) {
            return Self::load_bundled(&file, name.as_deref(), options, inspect_only, runtime);
        }
        let manifest_path = if path.is_dir() {
            path.join("pack.yaml")
        } else {
            path.to_path_buf()
        };
        if !manifest_path.is_file() {
            return Err(LoadError::whole_file(path, Pack::why_not_a_pack(path)).into());
        }
        let dir = manifest_path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let source = Source::read(&manifest_path)?;
        let manifest: PackManifest = source.parse()?;
        // A model folder the user names on the command line (`--set
        // json_compare.model=PATH`) is the user's to allow, like `--allow-path`
        // (but not a place for plugin libraries); one the pack names stays
        // confined to what it may read.
        let named = options
            .overrides
            .iter()
            .filter(|o| o.key == "model")
            .filter_map(|o| o.value.as_str().map(|path| dir.join(path)));
        let files = PackFiles::new(&dir, &options.allow_paths)
            .map_err(|err| LoadError::whole_file(&manifest_path, err.to_string()))?
            .with_named(named);
        PackLoader {
            dir,
            files,
            source,
            manifests_failed: false,
            overrides: options.overrides.clone(),
            plugin_dirs: options.plugin_dirs.clone(),
            inspect_only,
            runtime: runtime.clone(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
        .load(&manifest, options)
    }

    /// The runtime the pack was loaded on, and runs on.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The pack's `name`.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The pack's `version`.
    pub fn version(&self) -> &str {
        &self.info.version
    }

    /// `name@version`, as result records give it in `pack`.
    pub fn label(&self) -> &str {
        &self.info.label
    }

    /// The pack's `description`, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.info.description.as_deref()
    }

    /// The content revision: a hash of every file in the pack's folder and of the
    /// overrides it was loaded with (result records give it in `revision`).
    pub fn revision(&self) -> &str {
        &self.info.revision
    }

    /// The `ERROR` result of a record this pack could not judge (`kind`
    /// says why, `reason` in words), as every front end writes one: the
    /// batch runner for a line that is not a record, the bindings for an
    /// argument that is not one.
    pub fn errored(
        &self,
        id: impl Into<crate::json::Json>,
        kind: crate::report::ErrorKind,
        reason: impl Into<String>,
    ) -> crate::report::Report {
        crate::report::Report::errored(id, kind, reason, self.label(), self.revision())
    }

    /// The folder the pack was loaded from.
    pub fn dir(&self) -> &Path {
        &self.info.dir
    }

    /// Things worth fixing that did not stop the pack from loading.
    pub fn warnings(&self) -> &[LoadError] {
        &self.info.warnings
    }

    /// The plugin components a pack loaded for inspection without consent
    /// left unloaded: a note each, at the manifest's `library:`.
    #[doc(hidden)]
    pub fn not_loaded(&self) -> &[LoadError] {
        &self.info.not_loaded
    }

    /// Names of the pipeline's metrics, in order (the keys of a result's `metrics`).
    pub fn metric_names(&self) -> impl Iterator<Item = &str> {
        self.pipeline.metrics.iter().map(|s| s.name.as_str())
    }

    /// The OUTPUT FORMAT block of the pack's contract, to put in a model's
    /// prompt (`tribunal prompt`); `None` when the pack has no `contract:`.
    pub fn prompt(&self) -> Option<String> {
        self.pipeline
            .contract
            .as_ref()
            .map(|contract| contract.format_block().to_owned())
    }

    /// The pack's contract as a JSON Schema (`tribunal prompt --schema`), for
    /// structured-output APIs; `None` when the pack has no `contract:`.
    pub fn json_schema(&self) -> Option<serde_json::Value> {
        self.pipeline
            .contract
            .as_ref()
            .map(|contract| contract.json_schema(&self.info.name))
    }

    /// The tools the pack lets a model call (its `tool_calls` step's allowed
    /// tools, or those its argument rules describe), each with a JSON Schema
    /// of its arguments: what `tribunal prompt --tools` writes as an API's
    /// tool definitions. Empty when no step names tools.
    pub fn tools(&self) -> Vec<crate::component::ToolDefinition> {
        self.pipeline
            .postprocessors
            .iter()
            .map(|step| step.run.tools())
            .find(|tools| !tools.is_empty())
            .unwrap_or_default()
    }

    /// [`Pack::json_schema`] in the subset OpenAI's Structured Outputs take with
    /// `strict: true` (`tribunal prompt --schema --strict`): every object
    /// closed, every property required (an optional one nullable), the
    /// keywords it refuses moved into descriptions. `None` without a
    /// contract; an error for what strict mode cannot express.
    pub fn json_schema_strict(
        &self,
    ) -> Option<Result<serde_json::Value, crate::contract::StrictSchemaError>> {
        self.json_schema()
            .map(|schema| crate::contract::openai_strict(&schema))
    }

    /// The extraction tiers tried for every record, in order.
    #[doc(hidden)]
    pub fn ladder(&self) -> &[Tier] {
        &self.pipeline.ladder
    }

    /// Names of the pipeline's postprocessor steps, in order.
    #[doc(hidden)]
    pub fn postprocessor_names(&self) -> impl Iterator<Item = &str> {
        self.pipeline.postprocessors.iter().map(|s| s.name.as_str())
    }

    /// Names and weights of the pipeline's metric steps, in order.
    #[doc(hidden)]
    pub fn metric_steps(&self) -> impl Iterator<Item = (&str, f64)> {
        self.pipeline
            .metrics
            .iter()
            .map(|s| (s.name.as_str(), s.weight))
    }

    #[doc(hidden)]
    pub fn component(&self, name: &str) -> Option<&ComponentInfo> {
        self.info.components.iter().find(|c| c.name == name)
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
    /// See [`Pack::load_for_inspection`].
    inspect_only: bool,
    runtime: Runtime,
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
