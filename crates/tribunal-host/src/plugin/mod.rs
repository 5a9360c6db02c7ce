//! The native plugin host: finding, loading and checking plugin libraries, and
//! the components that call into them.
//!
//! A plugin is a shared library exporting the C ABI of the `tribunal-plugin`
//! crate (JSON across the boundary). A library is opened only with the user's
//! consent and only from the pack, a `--plugin-dir`, `TRIBUNAL_PLUGIN_PATH` or an
//! `--allow-path` (`consent.rs`: [`approve`] is the one check, and [`load`] opens
//! only what it approved). Libraries are found by name or path next to the
//! manifest, in each `--plugin-dir` and in `TRIBUNAL_PLUGIN_PATH`, with the
//! platform's prefix and suffix; each is opened once per process (keyed by its
//! canonical path) and never unloaded. Every raw call lives in `ffi.rs`; what a
//! plugin returns is checked by [`crate::wire`], like a Rhai script's result.

mod consent;
mod ffi;
mod isolated;

pub use consent::PluginPins;
pub use consent::{approve, Approved, PluginAccess, PluginPlaces, Refusal};

pub use isolated::serve as serve_helper;

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Json;

use crate::build::BuildCtx;
use crate::component::{
    BuildError, Compiled, Context, EvalError, Kind, Metric, MetricOutput, PostOutput,
    Postprocessor, Strategy, WithConfig,
};
use crate::report::ErrorKind;
use crate::suggest::{did_you_mean, nearest, parse_unknown_field};

use ffi::{Handle, OpenError, RawPlugin};

/// A component exported by a native plugin library, as a manifest names it.
#[derive(Debug, Clone, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginRef {
    /// The library: a name (`readability` finds `libreadability.so` next to the
    /// manifest, in `--plugin-dir` or `TRIBUNAL_PLUGIN_PATH`) or a path.
    pub library: String,
    /// The component's name in the library's manifest.
    pub component: String,
    /// `in_process` (the default: fastest, but a crash in the plugin ends the
    /// run) or `process` (the plugin runs in helper processes of its own: a
    /// crash, an abort, an exit or a hang is the record's ERROR and the run
    /// goes on).
    #[serde(default)]
    pub isolation: Isolation,
    /// With `isolation: process`: how long one call may take, in milliseconds
    /// (default 30000); a helper that does not answer in time is stopped.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Where a plugin component runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the engine's process: a plain function call.
    #[default]
    InProcess,
    /// In helper processes of its own, over pipes.
    Process,
}

/// The plugin ABI version this engine speaks: the SDK's.
pub use tribunal_plugin::ABI_VERSION;

/// Environment variable with extra folders to look for plugin libraries in
/// (separated like `PATH`).
pub const PLUGIN_PATH_ENV: &str = "TRIBUNAL_PLUGIN_PATH";

/// One component a plugin library exports, from its manifest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PluginComponent {
    pub name: String,
    pub kind: Kind,
    #[serde(default)]
    pub description: Option<String>,
    /// `{ "defaults": {...}, "schema": {...} }` as the plugin publishes them.
    #[serde(default)]
    pub config: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct PluginManifest {
    name: String,
    #[serde(default)]
    version: Option<String>,
    components: Vec<PluginComponent>,
}

/// A loaded plugin library: checked, with its manifest read. Lives for the process.
pub struct PluginLibrary {
    /// Canonical path of the library file.
    pub path: PathBuf,
    /// The plugin's own name, from its manifest.
    pub name: String,
    pub version: Option<String>,
    pub components: Vec<PluginComponent>,
    raw: RawPlugin,
}

impl fmt::Debug for PluginLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginLibrary")
            .field("path", &self.path)
            .field("name", &self.name)
            .field("version", &self.version)
            .field("components", &self.components)
            .finish_non_exhaustive()
    }
}

impl PluginLibrary {
    /// The library's file name, as error messages show it.
    pub fn file_name(&self) -> String {
        file_name(&self.path)
    }

    pub fn component(&self, name: &str) -> Option<&PluginComponent> {
        self.components.iter().find(|c| c.name == name)
    }

    /// What `tribunal explain` shows about one of the library's components.
    pub fn describe(&self, component: &str) -> String {
        let mut text = format!(
            "plugin `{}` {} ({}), component `{component}`",
            self.name,
            self.version.as_deref().unwrap_or("(no version)"),
            self.path.display()
        );
        if let Some(c) = self.component(component) {
            let _ = write!(text, " ({})", c.kind);
            if let Some(description) = c.description.as_deref().filter(|d| !d.is_empty()) {
                let _ = write!(text, "\n{description}");
            }
            let config = c.config.as_ref();
            for (key, label) in [("defaults", "config defaults"), ("schema", "config schema")] {
                if let Some(value) = config.and_then(|c| c.get(key)).filter(|v| !v.is_null()) {
                    let _ = write!(text, "\n{label}: {value}");
                }
            }
        }
        text
    }

    fn component_list(&self) -> String {
        self.components
            .iter()
            .map(|c| format!("{} ({})", c.name, c.kind))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The plugin libraries a runtime (`Runtime`) opened, by canonical
/// path, with the outcome of opening each (a library that failed its checks is
/// not opened again).
#[derive(Debug, Default)]
pub struct Libraries(Mutex<BTreeMap<PathBuf, Result<Arc<PluginLibrary>, PluginError>>>);

/// Why a plugin library cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    /// The file cannot be opened or loaded as a shared library.
    #[error("{0}")]
    Load(String),
    /// It is not a Tribunal plugin, or one built for another ABI version.
    #[error("{0}")]
    Abi(String),
    /// Its manifest (what it exports) cannot be read.
    #[error("{0}")]
    Manifest(String),
}

/// Opens the plugin library [`approve`] approved (once per process) and reads
/// its manifest.
pub fn load(libraries: &Libraries, approved: &Approved) -> Result<Arc<PluginLibrary>, PluginError> {
    let path = approved.path().to_path_buf();
    let mut loaded = libraries
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(outcome) = loaded.get(&path) {
        return outcome.clone();
    }
    let outcome = open(&path).map(Arc::new);
    loaded.insert(path, outcome.clone());
    outcome
}

fn open(path: &Path) -> Result<PluginLibrary, PluginError> {
    let shown = path.display();
    let raw = RawPlugin::open(path, ABI_VERSION).map_err(|err| match err {
        OpenError::Load(reason) => {
            PluginError::Load(format!("cannot load plugin library {shown}: {reason}"))
        }
        OpenError::NotAPlugin => PluginError::Abi(format!(
            "{shown} is not a tribunal plugin: it has no `tribunal_plugin_abi_version` symbol (expected ABI version {ABI_VERSION})"
        )),
        OpenError::WrongVersion(found) => PluginError::Abi(format!(
            "plugin library {shown} has ABI version {found}, but this tribunal expects ABI version {ABI_VERSION}; rebuild the plugin against a matching tribunal-plugin SDK"
        )),
        OpenError::MissingSymbol(symbol) => PluginError::Abi(format!(
            "plugin library {shown} (ABI version {ABI_VERSION}) does not export `{symbol}`"
        )),
    })?;
    let manifest = raw.manifest(envelope);
    let manifest = manifest
        .and_then(|value| {
            serde_json::from_value::<PluginManifest>(value).map_err(|err| err.to_string())
        })
        .map_err(|err| {
            PluginError::Manifest(format!("plugin library {shown}: unusable manifest: {err}"))
        })?;
    Ok(PluginLibrary {
        path: path.to_path_buf(),
        name: manifest.name,
        version: manifest.version,
        components: manifest.components,
        raw,
    })
}

/// Reads what a plugin returned: the value of its `{"ok": value}`; `None`
/// for an `{"error": "message"}` or a reply that is not one (the fuzz
/// target's entry point).
#[cfg(feature = "fuzzing")]
pub fn read_reply(bytes: Option<&[u8]>) -> Option<Json> {
    envelope(bytes).ok().map(Json::from)
}

/// Reads a `{"ok": value}` / `{"error": "message"}` reply.
fn envelope(bytes: Option<&[u8]>) -> Result<Value, String> {
    let Some(bytes) = bytes else {
        return Err("returned a null pointer instead of a JSON reply".into());
    };
    let value: Value = tribunal_plugin::wire::from_slice_deep(bytes).map_err(|err| {
        let text = String::from_utf8_lossy(bytes);
        let shown = crate::text::prefix_chars(&text, 80);
        let more = if shown.len() < text.len() { "..." } else { "" };
        format!("returned invalid JSON ({err}): {shown}{more}")
    })?;
    match value {
        Value::Object(mut map) if map.len() == 1 => {
            if let Some(error) = map.remove("error") {
                return Err(match error {
                    Value::String(message) => message,
                    other => other.to_string(),
                });
            }
            map.remove("ok").ok_or_else(not_an_envelope)
        }
        _ => Err(not_an_envelope()),
    }
}

fn not_an_envelope() -> String {
    "returned JSON that is neither {\"ok\": ...} nor {\"error\": ...}".into()
}

/// Every file name a `library:` value may have: as written, and with the
/// platform's prefix and suffix (`name` → `libname.so`); a hyphenated crate name
/// also as Cargo names its library (`my-plugin` → `libmy_plugin.so`).
fn file_names(library: &str) -> Vec<String> {
    let mut names = vec![library.to_owned()];
    let suffix = std::env::consts::DLL_SUFFIX;
    if !library.ends_with(suffix) {
        let prefix = std::env::consts::DLL_PREFIX;
        for stem in [library.to_owned(), library.replace('-', "_")] {
            for name in [format!("{prefix}{stem}{suffix}"), format!("{stem}{suffix}")] {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

/// Why a manifest's `plugin:` reference is unusable, and which of its two keys
/// (`library` or `component`) the error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    pub message: String,
    /// `"library"`, `"component"` or `"timeout_ms"`.
    pub key: &'static str,
    pub help: Option<String>,
    /// The user did not consent to opening plugin libraries (nothing was looked at).
    pub not_consented: bool,
}

/// Finds and opens the library `plugin` names, if [`approve`] approves it, and
/// checks that it exports the component as a `kind` (`name` is the component's
/// name in the pack).
pub fn check(
    libraries: &Libraries,
    plugin: &PluginRef,
    kind: Kind,
    name: &str,
    manifest_dir: &Path,
    access: &PluginAccess,
    timeout_ceiling_ms: u64,
) -> Result<Arc<PluginLibrary>, CheckError> {
    let library_error = |message: String, help: Option<String>| CheckError {
        message,
        key: "library",
        help,
        not_consented: false,
    };
    match (plugin.isolation, plugin.timeout_ms) {
        (Isolation::InProcess, Some(_)) => {
            return Err(CheckError {
                message: "`timeout_ms` applies to `isolation: process` (an in-process call cannot be stopped)".into(),
                key: "timeout_ms",
                help: Some("add `isolation: process`, or remove `timeout_ms`".into()),
                not_consented: false,
            })
        }
        (_, Some(0)) => {
            return Err(CheckError {
                message: "`timeout_ms` must be at least 1".into(),
                key: "timeout_ms",
                help: None,
                not_consented: false,
            })
        }
        (_, Some(asked)) if timeout_ceiling_ms > 0 && asked > timeout_ceiling_ms => {
            return Err(CheckError {
                message: format!(
                    "`timeout_ms`: {asked} is above the ceiling of {timeout_ceiling_ms} ms \
                     (limits.plugin_timeout_ms); a pack may only tighten it"
                ),
                key: "timeout_ms",
                help: Some(format!(
                    "the user lifts it for a run with --set limits.plugin_timeout_ms={asked}"
                )),
                not_consented: false,
            })
        }
        _ => {}
    }
    let approved =
        approve(&plugin.library, manifest_dir, access).map_err(|refusal| CheckError {
            not_consented: refusal == Refusal::NotConsented,
            ..library_error(refusal.message(name, &plugin.library), Some(refusal.help()))
        })?;
    let library = load(libraries, &approved).map_err(|err| library_error(err.to_string(), None))?;
    let Some(declared) = library.component(&plugin.component) else {
        return Err(CheckError {
            message: format!(
                "plugin `{}` ({}) has no component `{}`; it exports: {}",
                library.name,
                library.file_name(),
                plugin.component,
                library.component_list()
            ),
            key: "component",
            help: nearest(
                &plugin.component,
                library.components.iter().map(|c| c.name.as_str()),
            )
            .map(|s| did_you_mean(&s)),
            not_consented: false,
        });
    };
    if declared.kind != kind {
        return Err(CheckError {
            message: format!(
                "component `{name}` is declared a {kind}, but plugin `{}` ({}) exports `{}` as a {}",
                library.name,
                library.file_name(),
                declared.name,
                declared.kind
            ),
            key: "component",
            help: None,
            not_consented: false,
        });
    }
    Ok(library)
}

/// Builds the component `plugin` names in `library` (which [`check`] returned
/// for it), with its config. Called once per use at pack load.
pub fn instantiate(
    library: &Arc<PluginLibrary>,
    plugin: &PluginRef,
    kind: Kind,
    config: &Value,
    ctx: &BuildCtx<'_>,
    timeout_ceiling_ms: u64,
) -> Result<Compiled, BuildError> {
    let who = format!("plugin `{}` ({})", ctx.name, library.file_name());
    let request = serde_json::json!({
        "component": plugin.component,
        "kind": kind,
        "config": config,
    })
    .to_string();
    let refused = |message: String| {
        let mut error = BuildError::new(format!("{who}: {message}"));
        if let Some((unknown, expected)) = parse_unknown_field(&message) {
            error.suggestion = nearest(&unknown, expected.iter().map(String::as_str));
            error.key = Some(unknown);
        }
        error
    };
    let backend = match plugin.isolation {
        Isolation::InProcess => {
            let handle = library
                .raw
                .instantiate(request.as_bytes(), |bytes, handle| {
                    envelope(bytes).map(|_| handle)
                })
                .map_err(refused)?
                .ok_or_else(|| {
                    BuildError::new(format!(
                        "{who}: instantiate reported success but returned no instance handle"
                    ))
                })?;
            Backend::InProcess(Local {
                library: Arc::clone(library),
                handle,
            })
        }
        Isolation::Process => {
            // [`check`] kept `timeout_ms` within `limits.plugin_timeout_ms`,
            // which applies without it (0: no limit).
            let (ms, key) = match plugin.timeout_ms {
                Some(ms) => (ms, "timeout_ms"),
                None => (timeout_ceiling_ms, "limits.plugin_timeout_ms"),
            };
            let timeout = match ms {
                0 => std::time::Duration::MAX,
                ms => std::time::Duration::from_millis(ms),
            };
            Backend::Process(
                isolated::Isolated::start(&library.path, request.into_bytes(), (timeout, key))
                    .map_err(refused)?,
            )
        }
    };
    let instance = Instance {
        backend,
        who,
        name: ctx.name.to_owned(),
        config: config.clone(),
    };
    Ok(match kind {
        Kind::Metric => Compiled::Metric(Arc::new(PluginMetric(instance))),
        Kind::Postprocessor => Compiled::Postprocessor(Arc::new(PluginPostprocessor(instance))),
        Kind::Strategy => Compiled::Strategy(Arc::new(PluginStrategy(instance))),
    })
}

/// One built plugin component.
struct Instance {
    backend: Backend,
    /// "plugin `name` (libfile.so)", the prefix of every error it causes.
    who: String,
    /// The component's name in the pack: the rule of the issues it raises.
    name: String,
    config: Value,
}

/// Where an instance lives.
enum Backend {
    InProcess(Local),
    Process(isolated::Isolated),
}

/// An instance in this process; released in the plugin when dropped.
struct Local {
    library: Arc<PluginLibrary>,
    handle: Handle,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.who)
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        self.library.raw.release(self.handle);
    }
}

#[derive(Serialize)]
struct EvaluateInput<'a> {
    context: WithConfig<'a>,
}

#[derive(Serialize)]
struct CompareInput<'a> {
    expected: &'a Json,
    actual: &'a Json,
    context: WithConfig<'a>,
}

impl Instance {
    fn call(
        &self,
        input: &impl Serialize,
        budget: &crate::deadline::Budget<'_>,
    ) -> Result<Json, EvalError> {
        let input = serde_json::to_vec(input).map_err(|err| {
            EvalError::new(
                ErrorKind::Internal,
                format!("{}: cannot encode the input: {err}", self.who),
            )
        })?;
        match &self.backend {
            Backend::InProcess(local) => local
                .library
                .raw
                .evaluate(local.handle, &input, envelope)
                .map_err(|message| (ErrorKind::PluginReply, message)),
            Backend::Process(isolated) => isolated.call(&input, budget),
        }
        // The reply, read by the SDK's parser (one depth rule both ways), is
        // the engine's value from here on.
        .map(Json::from)
        .map_err(|(kind, message)| EvalError::new(kind, format!("{}: {message}", self.who)))
    }
}

struct PluginMetric(Instance);

impl fmt::Debug for PluginMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Metric for PluginMetric {
    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        let value = self.0.call(
            &EvaluateInput {
                context: ctx.with_config(&self.0.config),
            },
            ctx.budget,
        )?;
        let out = crate::wire::metric_output(&self.0.who, &self.0.name, value)?;
        crate::wire::turns_in_range(&self.0.who, &out.issues, ctx)?;
        Ok(out)
    }
}

struct PluginPostprocessor(Instance);

impl fmt::Debug for PluginPostprocessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Postprocessor for PluginPostprocessor {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let value = self.0.call(
            &EvaluateInput {
                context: ctx.with_config(&self.0.config),
            },
            ctx.budget,
        )?;
        let out = crate::wire::post_output(&self.0.who, &self.0.name, value)?;
        crate::wire::turns_in_range(&self.0.who, &out.issues, ctx)?;
        Ok(out)
    }
}

struct PluginStrategy(Instance);

impl fmt::Debug for PluginStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Strategy for PluginStrategy {
    fn compare(&self, expected: &Json, actual: &Json, ctx: &Context<'_>) -> Result<f64, EvalError> {
        let value = self.0.call(
            &CompareInput {
                expected,
                actual,
                context: ctx.with_config(&self.0.config),
            },
            ctx.budget,
        )?;
        crate::wire::similarity(&self.0.who, &value)
    }
}

/// Builds the workspace's plugin libraries for the tests.
#[cfg(test)]
#[path = "../../../../tests/support/plugin_build.rs"]
mod plugin_build;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;
    use crate::report::{ExtractionInfo, Issue};
    use crate::strategy::StrategyRegistry;

    #[test]
    fn a_library_is_opened_once_per_runtime() {
        let path = super::plugin_build::library_path("tribunal_tolerance");
        let dir = super::plugin_build::plugin_dir();
        let access = PluginAccess::Consented(PluginPlaces::new(dir, &[], &[]));
        let by_name = approve("tribunal_tolerance", dir, &access).unwrap();
        let via_dotdot = dir.join("deps").join("..").join(path.file_name().unwrap());
        let by_path = approve(via_dotdot.to_str().unwrap(), dir, &access).unwrap();
        let libraries = Libraries::default();
        let first = load(&libraries, &by_name).unwrap();
        let second = load(&libraries, &by_path).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(first.name, "tolerance");
        assert_eq!(first.components[0].name, "tolerance");
        assert_eq!(first.components[0].kind, Kind::Strategy);
        assert_eq!(
            first.components[0].config.as_ref().unwrap()["defaults"],
            json!({"rel_tol": 0.01, "abs_tol": 0.0, "graded": false, "parse_strings": true})
        );
    }

    #[test]
    fn check_opens_nothing_without_consent() {
        let dir = super::plugin_build::plugin_dir();
        let plugin = PluginRef {
            library: "tribunal_tolerance".into(),
            component: "tolerance".into(),
            isolation: Isolation::InProcess,
            timeout_ms: None,
        };
        let err = check(
            &Libraries::default(),
            &plugin,
            Kind::Strategy,
            "tol",
            dir,
            &PluginAccess::NotConsented,
            30_000,
        )
        .unwrap_err();
        assert!(err.not_consented);
        assert_eq!(err.key, "library");
        assert!(err.message.contains("--allow-plugins"), "{}", err.message);
    }

    #[test]
    fn the_wire_context_is_what_the_sdk_context_reads() {
        let extraction = ExtractionInfo {
            tier: Some(crate::extract::Tier::Fence),
            raw_fallback: false,
            ..ExtractionInfo::none()
        };
        let issues = [Issue::warning("x", "careful").at("/a")];
        let scores = BTreeMap::from([("m".to_owned(), 0.5)]);
        let strategies = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        let json = json!({"a": 1});
        let expected = json!({"a": 2});
        let meta = json!({"m": true});
        let ctx = Context {
            turns: None,
            turn: None,
            output: "raw",
            json: &json,
            extraction: &extraction,
            expected: &expected,
            meta: &meta,
            issues: &issues,
            scores: &scores,
            strategies: &strategies,
            memo: None,
            judging: crate::component::Judging::Whole,
            budget: &crate::deadline::Budget::unlimited(),
        };
        let config = serde_json::json!({"k": [1, 2]});
        // What a plugin reads, through the SDK's own type: every field arrives.
        let wire = serde_json::to_vec(&ctx.with_config(&config)).unwrap();
        let seen: tribunal_plugin::Context = tribunal_plugin::wire::from_slice_deep(&wire).unwrap();
        assert_eq!(seen.output, "raw");
        assert_eq!(
            (&seen.json, &seen.expected, &seen.meta),
            (&json.to_serde(), &expected.to_serde(), &meta.to_serde())
        );
        assert_eq!(seen.config, config);
        assert_eq!(seen.extraction.tier.as_deref(), Some("fence"));
        assert_eq!(seen.issues.len(), 1);
        assert_eq!(seen.issues[0].severity, crate::report::Severity::Warning);
        assert_eq!(seen.issues[0].path.as_deref(), Some("/a"));
        assert_eq!(seen.scores, scores);
        assert_eq!(seen.judging, "whole");
        // And no field the SDK does not know.
        let sent = serde_json::to_value(ctx.with_config(&config)).unwrap();
        let mut keys: Vec<&str> = sent
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "config",
                "expected",
                "extraction",
                "issues",
                "json",
                "judging",
                "meta",
                "output",
                "scores"
            ]
        );
    }

    #[test]
    fn replies_are_checked() {
        assert_eq!(
            envelope(Some(br#"{"ok": 0.5}"#)),
            Ok(serde_json::json!(0.5))
        );
        assert_eq!(envelope(Some(br#"{"ok": null}"#)), Ok(Value::Null));
        assert_eq!(envelope(Some(br#"{"error": "nope"}"#)), Err("nope".into()));
        assert_eq!(
            envelope(None),
            Err("returned a null pointer instead of a JSON reply".into())
        );
        assert_eq!(
            envelope(Some(br#"{"score": 1}"#)),
            Err(r#"returned JSON that is neither {"ok": ...} nor {"error": ...}"#.into())
        );
        let err = envelope(Some(br#"{"ok": 0.5"#)).unwrap_err();
        assert!(
            err.starts_with("returned invalid JSON (EOF while parsing an object")
                && err.ends_with(r#": {"ok": 0.5"#),
            "{err}"
        );
    }

    #[test]
    fn replies_may_nest_deeper_than_serde_json_allows_up_to_a_bound() {
        let nested = |depth: usize| {
            format!(
                r#"{{"ok": {{"details": "[{{\"", "x": {}{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        // 2 + 200 levels: more than serde_json's 128, less than the bound.
        let value = envelope(Some(nested(200).as_bytes())).unwrap();
        assert_eq!(value["details"], "[{\"");
        assert!(value["x"].is_array());
        let err = envelope(Some(nested(300).as_bytes())).unwrap_err();
        assert!(
            err.starts_with("returned invalid JSON (nested 302 levels deep, more than 256)"),
            "{err}"
        );
        // Deep but broken JSON is still reported as broken.
        let broken = format!(r#"{{"ok": {}"#, "[".repeat(200));
        let err = envelope(Some(broken.as_bytes())).unwrap_err();
        assert!(
            err.starts_with("returned invalid JSON (EOF while parsing"),
            "{err}"
        );
    }

    #[test]
    fn library_names_get_the_platform_prefix_and_suffix() {
        let (prefix, suffix) = (std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        let names = file_names("my-plugin");
        assert_eq!(names[0], "my-plugin");
        assert!(names.contains(&format!("{prefix}my-plugin{suffix}")));
        assert!(names.contains(&format!("{prefix}my_plugin{suffix}")));
        assert_eq!(file_names(&format!("x{suffix}")), [format!("x{suffix}")]);
    }
}
