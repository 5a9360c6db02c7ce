//! Where a component's code comes from: a built-in, a Rhai script (a file or
//! inline) or a native plugin.
//!
//! This is the one place that turns a manifest's `implementation:` into code:
//! [`Sources::resolve`] checks it once, at load, and returns an
//! [`Implementation`] that builds the compiled component for each use of it
//! (each with that use's config). Nothing else in the engine asks which source
//! a component came from, so a new source (WebAssembly, say) is a new
//! `Implementation` type here and one more arm in `resolve`.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::build::BuildCtx;
use crate::builtins::{self, Builtin};
use crate::component::{BuildError, Compiled, Kind};
use crate::files::PackFiles;
use crate::manifest::{ComponentManifest, Implementation as Spec};
use crate::plugin::{PluginAccess, PluginLibrary, PluginRef};
use crate::script::{CompiledScript, ScriptHost, ScriptLimits};
use crate::suggest::nearest;
use crate::yaml::{LoadError, Source};

mod config;

use config::DeclaredConfig;

/// A component's code, checked at load: what every implementation source provides.
pub(crate) trait Implementation: Send + Sync + fmt::Debug {
    /// Builds the component (of the manifest's kind) for one use, with its config.
    fn build(&self, config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError>;

    /// Documentation the code carries, shown by `explain` after the manifest's own.
    fn docs(&self) -> Option<String> {
        None
    }

    /// A description the code carries, shown by `explain` when the manifest has none.
    fn description(&self) -> Option<String> {
        None
    }

    /// What loading found suspicious in the code (`lint` and the load's
    /// warnings), each at its file, line and column.
    fn warnings(&self) -> Vec<LoadError> {
        Vec::new()
    }
}

/// A component's `implementation:` as written, and the code it names.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub spec: Spec,
    pub code: Arc<dyn Implementation>,
    /// Why the code is a stand-in (a plugin loaded for inspection without the
    /// user's consent), placed at the manifest's `library:`.
    pub not_loaded: Option<LoadError>,
}

/// What resolving implementations may use from the pack being loaded. Scripts
/// share one Rhai engine per pack, made when the first script is compiled.
#[derive(Debug)]
pub(crate) struct Sources {
    /// Whether plugin libraries may be opened, and from where.
    plugins: PluginAccess,
    /// The pack is loaded to be shown (`lint`, `list`, `explain`, `prompt`), not
    /// run: without consent, a plugin component is a stand-in that is never
    /// opened (and never runs) instead of a load error.
    inspect_only: bool,
    limits: ScriptLimits,
    script_host: OnceLock<Arc<ScriptHost>>,
    /// Where plugin libraries are opened once for every pack.
    runtime: crate::runtime::Runtime,
}

impl Sources {
    pub(crate) fn new(
        plugins: PluginAccess,
        inspect_only: bool,
        limits: ScriptLimits,
        runtime: crate::runtime::Runtime,
    ) -> Self {
        Self {
            plugins,
            inspect_only,
            limits,
            script_host: OnceLock::new(),
            runtime,
        }
    }

    /// The code the component's `implementation:` names, checked for its kind;
    /// the error is placed at the manifest's line.
    pub(crate) fn resolve(
        &self,
        component: &ComponentManifest,
        source: &Source,
        files: &PackFiles,
    ) -> Result<Resolved, LoadError> {
        let Some(spec) = &component.implementation else {
            return Err(LoadError::new(
                &source.path,
                source.locate(&["name"], None),
                format!(
                    "component `{}` has no `implementation` (builtin, script, inline or plugin)",
                    component.name
                ),
            )
            .with_help(Some(
                "add e.g. `implementation: { builtin: json_emission }`".into(),
            )));
        };
        let spec = spec.resolve().map_err(|err| {
            let at = source.locate(&["implementation"], None);
            LoadError::new(&source.path, at, err.to_string())
        })?;
        if let Spec::Plugin(plugin) = &spec {
            if self.inspect_only && matches!(self.plugins, PluginAccess::NotConsented) {
                let refusal = crate::plugin::Refusal::NotConsented;
                let at = source.locate(
                    &["implementation", "plugin", "library"],
                    Some(&plugin.library),
                );
                let note = LoadError::new(
                    &source.path,
                    at,
                    refusal.message(&component.name, &plugin.library),
                );
                let code = Arc::new(UnloadedPlugin {
                    plugin: plugin.clone(),
                    kind: component.kind,
                });
                return Ok(Resolved {
                    spec,
                    code,
                    not_loaded: Some(note),
                });
            }
        }
        let code = self.code(component, source, files, &spec)?;
        Ok(Resolved {
            spec,
            code,
            not_loaded: None,
        })
    }

    /// The code `spec` names, checked for the component's kind.
    fn code(
        &self,
        component: &ComponentManifest,
        source: &Source,
        files: &PackFiles,
        spec: &Spec,
    ) -> Result<Arc<dyn Implementation>, LoadError> {
        let error = |keys: &[&str], value: Option<&str>, message: String| {
            LoadError::new(&source.path, source.locate(keys, value), message)
        };
        let dir = source.path.parent().unwrap_or(Path::new("."));
        if component.config_schema.is_some() && !matches!(spec, Spec::Script(_) | Spec::Inline(_)) {
            return Err(error(
                &["config_schema"],
                None,
                "`config_schema` declares a script's config; a built-in or a plugin declares its own (see `tribunal explain`)".to_owned(),
            ));
        }
        match spec {
            Spec::Builtin(name) => {
                let at = |message| error(&["implementation", "builtin"], Some(name), message);
                match builtins::find(name) {
                    None => Err(at(format!("unknown built-in `{name}`"))
                        .suggest(nearest(name, builtins::names()))),
                    Some(builtin) if builtin.kind != component.kind => Err(at(format!(
                        "component `{}` is a {} but built-in `{name}` is a {}",
                        component.name, component.kind, builtin.kind
                    ))),
                    Some(builtin) => Ok(Arc::new(BuiltinCode(builtin))),
                }
            }
            Spec::Script(path) => {
                let at = |message| error(&["implementation", "script"], Some(path), message);
                let file = dir.join(path);
                if !file.exists() {
                    return Err(at(format!(
                        "missing script file `{path}` (looked in {})",
                        dir.display()
                    )));
                }
                let text = files
                    .read_text(&file, path)
                    .map_err(|err| at(format!("cannot read script: {err}")))?
                    .text;
                let origin = crate::script::Origin::file(&file).within_pack(files.root());
                self.compile_script(component, source, &text, origin)
            }
            Spec::Inline(text) => {
                let origin = crate::script::inline_origin(source).within_pack(files.root());
                self.compile_script(component, source, text, origin)
            }
            Spec::Plugin(plugin) => {
                let library = crate::plugin::check(
                    self.runtime.plugins(),
                    plugin,
                    component.kind,
                    &component.name,
                    dir,
                    &self.plugins,
                    self.limits.plugin_timeout_ms,
                )
                .map_err(|err| {
                    let value = match err.key {
                        "library" => Some(plugin.library.as_str()),
                        "component" => Some(plugin.component.as_str()),
                        _ => None,
                    };
                    error(&["implementation", "plugin", err.key], value, err.message)
                        .with_help(err.help)
                })?;
                let published = library
                    .component(&plugin.component)
                    .and_then(|c| c.config.as_ref());
                let declared =
                    DeclaredConfig::for_plugin(&library.name, published).map_err(|err| {
                        error(
                            &["implementation", "plugin", "component"],
                            Some(&plugin.component),
                            err,
                        )
                    })?;
                Ok(Arc::new(PluginCode {
                    plugin: plugin.clone(),
                    kind: component.kind,
                    library,
                    timeout_ceiling_ms: self.limits.plugin_timeout_ms,
                    declared,
                }))
            }
        }
    }

    fn compile_script(
        &self,
        component: &ComponentManifest,
        source: &Source,
        text: &str,
        origin: crate::script::Origin,
    ) -> Result<Arc<dyn Implementation>, LoadError> {
        let host = self
            .script_host
            .get_or_init(|| Arc::new(ScriptHost::new(self.limits, self.runtime.regexes())));
        let script = crate::script::compile(host, &component.name, component.kind, text, origin)?;
        let declared =
            DeclaredConfig::for_script(component.config.as_ref(), component.config_schema.as_ref())
                .map_err(|err| {
                    LoadError::new(&source.path, source.locate(&["config_schema"], None), err)
                })?;
        Ok(Arc::new(ScriptCode {
            script,
            kind: component.kind,
            declared,
        }))
    }
}

/// A built-in rule named by `implementation: { builtin: NAME }`.
#[derive(Debug)]
struct BuiltinCode(&'static Builtin);

impl Implementation for BuiltinCode {
    fn build(&self, config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
        (self.0.build)(config, ctx)
    }

    fn docs(&self) -> Option<String> {
        Some(self.0.docs.trim().to_owned())
    }
}

/// A Rhai script, compiled once for every use of its component.
#[derive(Debug)]
struct ScriptCode {
    script: Arc<CompiledScript>,
    kind: Kind,
    /// The manifest's `config_schema:`, else its `config:` (the keys the
    /// script takes, each of its default's type).
    declared: DeclaredConfig,
}

impl Implementation for ScriptCode {
    fn build(&self, config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
        self.declared.check(ctx.name, config)?;
        Ok(crate::script::build(&self.script, self.kind, config, ctx))
    }

    fn description(&self) -> Option<String> {
        self.script.header_comment()
    }

    fn warnings(&self) -> Vec<LoadError> {
        self.script.lints().to_vec()
    }

    fn docs(&self) -> Option<String> {
        let schema = self.declared.schema_value()?;
        let text = serde_json::to_string_pretty(schema).unwrap_or_default();
        Some(format!(
            "config schema (config_schema in the manifest):\n{text}"
        ))
    }
}

/// A component exported by a native plugin library, opened and checked at load.
#[derive(Debug)]
struct PluginCode {
    plugin: PluginRef,
    kind: Kind,
    library: Arc<PluginLibrary>,
    /// `limits.plugin_timeout_ms`.
    timeout_ceiling_ms: u64,
    /// What the plugin publishes about the component's config.
    declared: DeclaredConfig,
}

impl Implementation for PluginCode {
    fn build(&self, config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
        self.declared.check(ctx.name, config)?;
        crate::plugin::instantiate(
            &self.library,
            &self.plugin,
            self.kind,
            config,
            ctx,
            self.timeout_ceiling_ms,
        )
    }

    fn docs(&self) -> Option<String> {
        Some(self.library.describe(&self.plugin.component))
    }
}

/// A plugin component of a pack loaded for inspection without the user's
/// consent: its library is never looked at, so its config is not checked and
/// it cannot run (a pack loaded this way is only shown, never evaluated; if it
/// were, each of its records would be an `ERROR`).
#[derive(Debug)]
struct UnloadedPlugin {
    plugin: PluginRef,
    kind: Kind,
}

impl Implementation for UnloadedPlugin {
    fn build(&self, _config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
        let stand_in = Arc::new(NotLoaded(format!(
            "plugin component `{}` (library `{}`) was not loaded: pass --allow-plugins to run it",
            ctx.name, self.plugin.library
        )));
        Ok(match self.kind {
            Kind::Metric => Compiled::Metric(stand_in),
            Kind::Postprocessor => Compiled::Postprocessor(stand_in),
            Kind::Strategy => Compiled::Strategy(stand_in),
        })
    }

    fn docs(&self) -> Option<String> {
        Some(format!(
            "plugin library `{}`, component `{}`: not loaded (pass --allow-plugins to load it and show what it publishes)",
            self.plugin.library, self.plugin.component
        ))
    }
}

/// What an unloaded plugin component runs as: an error for every record.
#[derive(Debug)]
struct NotLoaded(String);

impl crate::component::Metric for NotLoaded {
    fn evaluate(
        &self,
        _ctx: &crate::component::Context<'_>,
    ) -> Result<crate::component::MetricOutput, crate::component::EvalError> {
        Err(crate::component::EvalError::new(
            crate::report::ErrorKind::Internal,
            self.0.clone(),
        ))
    }
}

impl crate::component::Postprocessor for NotLoaded {
    fn process(
        &self,
        _ctx: &crate::component::Context<'_>,
    ) -> Result<crate::component::PostOutput, crate::component::EvalError> {
        Err(crate::component::EvalError::new(
            crate::report::ErrorKind::Internal,
            self.0.clone(),
        ))
    }
}

impl crate::component::Strategy for NotLoaded {
    fn compare(
        &self,
        _expected: &crate::json::Json,
        _actual: &crate::json::Json,
        _ctx: &crate::component::Context<'_>,
    ) -> Result<f64, crate::component::EvalError> {
        Err(crate::component::EvalError::new(
            crate::report::ErrorKind::Internal,
            self.0.clone(),
        ))
    }
}
