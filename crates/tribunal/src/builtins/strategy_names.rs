//! Strategy names in a built-in's config (`json_compare`'s
//! `field_strategies`, `tool_calls`' `argument_strategies`), their
//! `thresholds` and `model:`, resolved against the pack's strategies once,
//! when the pack loads.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::build::BuildCtx;
use crate::component::{BuildError, Context, EvalError, Strategy};
use crate::json::Json;
use crate::strategy::{
    Normalized, Semantic, StrategyRegistry, DEFAULT_FUZZY_THRESHOLD, DEFAULT_SEMANTIC_THRESHOLD,
};

/// `normalize:` in a rule's `with:`: the characters `NORMALIZED` removes
/// besides whitespace.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NormalizeSpec {
    pub strip: String,
}

/// A strategy looked up once, with the threshold it is held to.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    /// Lower-case registry name.
    pub name: String,
    pub strategy: Arc<dyn Strategy>,
    pub threshold: f64,
}

impl Resolved {
    pub fn is_ignore(&self) -> bool {
        self.name == "ignore"
    }

    /// The strategy's similarity of `actual` to `expected`, after its
    /// one-time set-up (`semantic` loads its model), whose time is the
    /// engine's, not the step's: the step's deadline moves by as much.
    pub fn similarity(
        &self,
        expected: &Json,
        actual: &Json,
        ctx: &Context<'_>,
    ) -> Result<f64, EvalError> {
        let started = std::time::Instant::now();
        self.strategy.warm_up()?;
        ctx.budget.postpone_step(started.elapsed());
        self.strategy.compare(expected, actual, ctx)
    }
}

/// Resolves strategy names against the pack's registry at load.
pub(super) struct Resolver<'a> {
    component: &'a str,
    registry: &'a StrategyRegistry,
    thresholds: BTreeMap<String, f64>,
    /// `semantic` on the model folder of the component's `model:` config.
    semantic: Option<Arc<dyn Strategy>>,
    /// `normalized` with the component's `normalize: { strip }`.
    normalized: Option<Arc<dyn Strategy>>,
}

impl<'a> Resolver<'a> {
    /// The resolver of the component `component`: its `model:` folder (for
    /// `semantic`), confined like every file a pack names and located now.
    pub fn new(
        ctx: &BuildCtx<'a>,
        component: &'a str,
        model: Option<&str>,
    ) -> Result<Self, BuildError> {
        let mut resolver = Resolver {
            component,
            registry: ctx.strategies,
            thresholds: BTreeMap::new(),
            semantic: None,
            normalized: None,
        };
        if let Some(model) = model {
            let folder = confined_model(ctx, model)
                .map_err(|why| resolver.error(format_args!("`model`: {why}"), "model"))?;
            let semantic = Semantic::new(ctx.models.model(Some(folder)));
            semantic
                .model()
                .locate()
                .map_err(|why| resolver.error(format_args!("`model`: {why}"), "model"))?;
            resolver.semantic = Some(Arc::new(semantic));
        }
        Ok(resolver)
    }

    /// The resolver with the component's thresholds: `thresholds` (by
    /// strategy name) and the single keys in `also`.
    pub fn with_thresholds(
        mut self,
        by_name: &BTreeMap<String, f64>,
        also: &[(&str, &str, Option<f64>)],
    ) -> Result<Self, BuildError> {
        self.thresholds = thresholds(&self, by_name, also)?;
        Ok(self)
    }

    /// The resolver whose `normalized` removes the characters of the
    /// component's `normalize: { strip }` (besides whitespace).
    pub fn with_normalize(mut self, normalize: Option<&NormalizeSpec>) -> Self {
        self.normalized = normalize
            .map(|spec| -> Arc<dyn Strategy> { Arc::new(Normalized::stripping(&spec.strip)) });
        self
    }

    /// A strategy the config names at `key` (`place` says where, for the
    /// error, which quotes the name only when `quotable`: not from a file
    /// outside the pack), usable now: `semantic` needs a model, and says so
    /// at load, not once per record.
    pub fn named(
        &self,
        name: &str,
        (place, key): (&str, &str),
        quotable: bool,
    ) -> Result<Resolved, BuildError> {
        match self.resolve(name) {
            Ok(strategy) => match strategy.strategy.ready() {
                Ok(()) => Ok(strategy),
                Err(why) => Err(self.error(format_args!("{place}: {why}"), key)),
            },
            Err((message, suggestion)) => {
                let message = crate::files::redact_quotes(&message, quotable);
                let mut error = self.error(format_args!("{place}: {message}"), key);
                error.suggestion = suggestion;
                Err(error)
            }
        }
    }

    fn resolve(&self, name: &str) -> Result<Resolved, (String, Option<String>)> {
        let lower = name.trim().to_lowercase();
        if let (Some(semantic), "semantic") = (&self.semantic, lower.as_str()) {
            return Ok(self.resolved(lower, Arc::clone(semantic)));
        }
        if let (Some(normalized), "normalized") = (&self.normalized, lower.as_str()) {
            return Ok(self.resolved(lower, Arc::clone(normalized)));
        }
        let Some(strategy) = self.registry.get(&lower) else {
            let suggestion = crate::suggest::nearest(&lower, self.registry.names()).map(|s| {
                if name.chars().any(char::is_lowercase) {
                    s
                } else {
                    s.to_uppercase()
                }
            });
            let known: Vec<String> = self.registry.names().map(str::to_uppercase).collect();
            return Err((
                format!("unknown strategy `{name}` (known: {})", known.join(", ")),
                suggestion,
            ));
        };
        Ok(self.resolved(lower, Arc::clone(strategy)))
    }

    fn resolved(&self, name: String, strategy: Arc<dyn Strategy>) -> Resolved {
        let threshold =
            self.thresholds
                .get(&name)
                .copied()
                .unwrap_or_else(|| match name.as_str() {
                    "fuzzy" => DEFAULT_FUZZY_THRESHOLD,
                    "semantic" => DEFAULT_SEMANTIC_THRESHOLD,
                    _ => strategy.default_threshold(),
                });
        Resolved {
            name,
            strategy,
            threshold,
        }
    }

    /// A built-in the auto-detection needs, from the registry when it has one.
    pub fn builtin(&self, name: &str, fallback: Arc<dyn Strategy>) -> Resolved {
        if let (Some(semantic), "semantic") = (&self.semantic, name) {
            return self.resolved(name.to_owned(), Arc::clone(semantic));
        }
        let strategy = self.registry.get(name).map_or(fallback, Arc::clone);
        self.resolved(name.to_owned(), strategy)
    }

    pub fn error(&self, message: impl std::fmt::Display, key: &str) -> BuildError {
        BuildError::new(format!("{}: {message}", self.component)).at_key(key)
    }
}

/// The `model:` folder, confined like every file a pack names: where it really
/// is, inside the pack or an `--allow-path`; in the pack, so is every file in it
/// (a link out of the folder is refused, as an absolute path elsewhere is). What the
/// error says names the path as the pack wrote it, never what is there.
fn confined_model(ctx: &BuildCtx<'_>, model: &str) -> Result<std::path::PathBuf, String> {
    let path = ctx.resolve(model);
    // A folder that is not there is the model locator's to explain, when it
    // would be inside what the pack may read; elsewhere it is refused as if it
    // were there (an error never tells what exists outside the pack).
    if std::fs::symlink_metadata(&path).is_err_and(|err| err.kind() == std::io::ErrorKind::NotFound)
    {
        // Where it would be: its nearest existing folder's real path, and the
        // rest as written (`..` folded).
        let whole =
            crate::files::lexical_normalise(&std::path::absolute(&path).unwrap_or(path.clone()));
        let inside = whole
            .ancestors()
            .find_map(|dir| {
                let real = std::fs::canonicalize(dir).ok()?;
                Some(real.join(whole.strip_prefix(dir).ok()?))
            })
            .is_some_and(|real| ctx.files.may_contain(&real));
        if inside {
            return Ok(path);
        }
        return Err(ctx.files.outside(model).to_string());
    }
    let resolved = ctx
        .files
        .resolve(&path, model)
        .map_err(|err| err.to_string())?;
    let folder = resolved.canonical;
    // A folder the user allowed (`--allow-path`, or named with `--set`) is the
    // user's, links and all; one in the pack may not link out of it.
    if !resolved.inside_pack {
        return Ok(folder);
    }
    // The model's files, a level or two down (`1_Pooling/config.json`).
    let mut pending = vec![(folder.clone(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let shown = format!(
                "{model}/{}",
                path.strip_prefix(&folder).unwrap_or(&path).display()
            );
            let real = ctx
                .files
                .resolve(&path, &shown)
                .map_err(|err| err.to_string())?;
            if depth < 2 && real.canonical.is_dir() && real.canonical.starts_with(&folder) {
                pending.push((real.canonical, depth + 1));
            }
        }
    }
    Ok(folder)
}

/// `thresholds` (`by_name`) and the keys `also` sets (`fuzzy_threshold`: the
/// strategy, the key, its value), by lower-case strategy name, each within
/// [0, 1] and given once.
fn thresholds(
    resolver: &Resolver<'_>,
    by_name: &BTreeMap<String, f64>,
    also: &[(&str, &str, Option<f64>)],
) -> Result<BTreeMap<String, f64>, BuildError> {
    let check = |value: f64, key: &str| {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(value)
        } else {
            Err(resolver.error(
                format_args!("`{key}` must be within [0, 1], got {value}"),
                key,
            ))
        }
    };
    let mut thresholds = BTreeMap::new();
    for (name, &value) in by_name {
        let key = format!("thresholds.{name}");
        let lower = name.to_lowercase();
        if resolver.registry.get(&lower).is_none() {
            let mut error = resolver.error(
                format_args!("`thresholds`: unknown strategy `{name}`"),
                &key,
            );
            error.suggestion = crate::suggest::nearest(&lower, resolver.registry.names());
            return Err(error);
        }
        if thresholds.insert(lower, check(value, &key)?).is_some() {
            return Err(resolver.error(
                format_args!("`thresholds` names `{name}` twice"),
                "thresholds",
            ));
        }
    }
    for &(name, key, value) in also {
        if let Some(value) = value {
            if thresholds
                .insert(name.to_owned(), check(value, key)?)
                .is_some()
            {
                return Err(resolver.error(
                    format_args!("set either `{key}` or `thresholds.{name}`, not both"),
                    key,
                ));
            }
        }
    }
    Ok(thresholds)
}
