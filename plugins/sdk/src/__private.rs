//! What `export_plugin!` expands to calls into here. Not a stable API: use the macro.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::wire::from_slice_deep;
use crate::{Context, Error, Kind, Metric, Postprocessor, Strategy};

pub use crate::ffi::{evaluate, free, release};

/// One built component, called once per record.
pub(crate) trait Instance: Send + Sync {
    /// The serialised `{"ok": result}` reply to one evaluate request.
    fn call(&self, input: &[u8]) -> Result<Vec<u8>, Error>;
}

/// `{"ok": value}`, serialised straight from `value` (no intermediate `Value`).
pub(crate) fn ok_reply<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    #[derive(serde::Serialize)]
    struct OkReply<'a, T: ?Sized> {
        ok: &'a T,
    }
    Ok(serde_json::to_vec(&OkReply { ok: value })?)
}

type Make = fn(Value) -> Result<Box<dyn Instance>, Error>;

#[derive(Debug)]
struct Entry {
    name: &'static str,
    kind: Kind,
    description: &'static str,
    defaults: Value,
    schema: Option<Value>,
    make: Make,
}

/// The components a library exports, built by the macro's generated function.
#[derive(Debug)]
pub struct Registry {
    name: &'static str,
    version: &'static str,
    components: Vec<Entry>,
}

impl Registry {
    pub fn new(name: &'static str, version: &'static str) -> Self {
        Self {
            name,
            version,
            components: Vec::new(),
        }
    }

    #[must_use]
    pub fn metric<M: Metric>(self) -> Self {
        self.with(
            M::NAME,
            Kind::Metric,
            M::DESCRIPTION,
            defaults::<M::Config>(),
            M::config_schema(),
            make_metric::<M>,
        )
    }

    #[must_use]
    pub fn postprocessor<P: Postprocessor>(self) -> Self {
        self.with(
            P::NAME,
            Kind::Postprocessor,
            P::DESCRIPTION,
            defaults::<P::Config>(),
            P::config_schema(),
            make_postprocessor::<P>,
        )
    }

    #[must_use]
    pub fn strategy<S: Strategy>(self) -> Self {
        self.with(
            S::NAME,
            Kind::Strategy,
            S::DESCRIPTION,
            defaults::<S::Config>(),
            S::config_schema(),
            make_strategy::<S>,
        )
    }

    fn with(
        mut self,
        name: &'static str,
        kind: Kind,
        description: &'static str,
        defaults: Value,
        schema: Option<Value>,
        make: Make,
    ) -> Self {
        assert!(
            self.components.iter().all(|c| c.name != name),
            "plugin `{}` exports two components named `{name}`",
            self.name
        );
        self.components.push(Entry {
            name,
            kind,
            description,
            defaults,
            schema,
            make,
        });
        self
    }

    pub(crate) fn manifest(&self) -> Value {
        let components: Vec<Value> = self
            .components
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "kind": c.kind,
                    "description": c.description,
                    "config": { "defaults": c.defaults, "schema": c.schema },
                })
            })
            .collect();
        json!({
            "name": self.name,
            "version": self.version,
            "abi_version": crate::ABI_VERSION,
            "components": components,
        })
    }

    pub(crate) fn instantiate(&self, request: &[u8]) -> Result<Box<dyn Instance>, Error> {
        // Unknown keys are ignored, not refused: a later host may send more
        // within the same ABI version, and plugins built today must still load.
        #[derive(Deserialize)]
        struct Request {
            component: String,
            kind: Option<Kind>,
            #[serde(default)]
            config: Value,
        }
        let request: Request = serde_json::from_slice(request)
            .map_err(|err| format!("invalid instantiate request: {err}"))?;
        let Some(entry) = self.components.iter().find(|c| c.name == request.component) else {
            let names: Vec<&str> = self.components.iter().map(|c| c.name).collect();
            return Err(format!(
                "plugin `{}` has no component `{}` (it exports: {})",
                self.name,
                request.component,
                names.join(", ")
            )
            .into());
        };
        if let Some(kind) = request.kind {
            if kind != entry.kind {
                return Err(format!(
                    "component `{}` is a {}, not a {}",
                    entry.name,
                    entry.kind.as_str(),
                    kind.as_str()
                )
                .into());
            }
        }
        let config = match request.config {
            Value::Null => Value::Object(Map::new()),
            config => config,
        };
        (entry.make)(config)
    }
}

/// A library's registry, built on first use (inside the panic guard).
#[derive(Debug)]
pub struct Plugin {
    build: fn() -> Registry,
    registry: OnceLock<Registry>,
}

impl Plugin {
    pub const fn new(build: fn() -> Registry) -> Self {
        Self {
            build,
            registry: OnceLock::new(),
        }
    }

    pub(crate) fn registry(&self) -> &Registry {
        self.registry.get_or_init(self.build)
    }
}

fn defaults<C: serde::Serialize + Default>() -> Value {
    serde_json::to_value(C::default()).unwrap_or(Value::Null)
}

fn config<C: serde::de::DeserializeOwned>(config: Value) -> Result<C, Error> {
    serde_json::from_value(config).map_err(|err| format!("invalid config: {err}").into())
}

fn make_metric<M: Metric>(value: Value) -> Result<Box<dyn Instance>, Error> {
    Ok(Box::new(MetricInstance(M::new(config(value)?)?)))
}

fn make_postprocessor<P: Postprocessor>(value: Value) -> Result<Box<dyn Instance>, Error> {
    Ok(Box::new(PostInstance(P::new(config(value)?)?)))
}

fn make_strategy<S: Strategy>(value: Value) -> Result<Box<dyn Instance>, Error> {
    Ok(Box::new(StrategyInstance(S::new(config(value)?)?)))
}

#[derive(Deserialize)]
struct ContextInput {
    context: Context,
}

#[derive(Deserialize)]
struct CompareInput {
    #[serde(default)]
    expected: Value,
    #[serde(default)]
    actual: Value,
    #[serde(default)]
    context: Context,
}

fn parse<T: serde::de::DeserializeOwned>(input: &[u8]) -> Result<T, Error> {
    from_slice_deep(input).map_err(|err| format!("invalid evaluate input: {err}").into())
}

struct MetricInstance<M>(M);

impl<M: Metric> Instance for MetricInstance<M> {
    fn call(&self, input: &[u8]) -> Result<Vec<u8>, Error> {
        let input: ContextInput = parse(input)?;
        let result = self.0.evaluate(&input.context)?;
        if !result.score.is_finite() {
            return Err(format!("the score is {}, not a number in [0, 1]", result.score).into());
        }
        ok_reply(&result)
    }
}

struct PostInstance<P>(P);

impl<P: Postprocessor> Instance for PostInstance<P> {
    fn call(&self, input: &[u8]) -> Result<Vec<u8>, Error> {
        let input: ContextInput = parse(input)?;
        ok_reply(&self.0.process(&input.context)?)
    }
}

struct StrategyInstance<S>(S);

impl<S: Strategy> Instance for StrategyInstance<S> {
    fn call(&self, input: &[u8]) -> Result<Vec<u8>, Error> {
        let input: CompareInput = parse(input)?;
        let similarity = self
            .0
            .compare(&input.expected, &input.actual, &input.context)?;
        if !similarity.is_finite() {
            return Err(format!("the similarity is {similarity}, not a number in [0, 1]").into());
        }
        ok_reply(&similarity)
    }
}

/// The ABI version, behind the same panic guard as every export.
pub fn abi_version() -> u32 {
    std::panic::catch_unwind(|| crate::ABI_VERSION).unwrap_or(0)
}
