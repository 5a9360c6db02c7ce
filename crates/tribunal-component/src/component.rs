//! The three component kinds and the context every component receives.
//!
//! Built-ins, Rhai scripts and native plugins all implement these traits; the
//! engine never knows which implementation source it is calling. Every trait
//! is `Send + Sync` so a compiled pack can be shared across worker threads.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::json::Json;
use crate::report::{Details, ErrorKind, ExtractionInfo, Issue};

/// What a component is for: the plugin SDK's type, so plugins and the engine
/// share one definition.
pub use tribunal_plugin::Kind;

/// Strategies by lower-case name. Built once per pack; shared by every record.
/// The built-in ones are added by `StrategyRegistry::with_builtins` (`strategy`).
#[derive(Debug, Clone)]
pub struct StrategyRegistry {
    by_name: BTreeMap<String, Arc<dyn Strategy>>,
}

impl StrategyRegistry {
    /// A registry without any strategy.
    pub fn empty() -> Self {
        Self {
            by_name: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a strategy under `name` (stored lower-case).
    pub fn insert(&mut self, name: &str, strategy: Arc<dyn Strategy>) {
        self.by_name.insert(name.to_lowercase(), strategy);
    }

    /// Looks a strategy up by name, case-insensitively (`FUZZY` and `fuzzy` are one).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Strategy>> {
        self.by_name.get(&name.to_lowercase())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

/// The one shape every component sees for one record. Its serialisation, with
/// the component's config ([`Context::with_config`]), is the context plugins
/// receive (the SDK's `Context` reads it) and the map Rhai scripts receive (a test
/// in `script::convert` keeps the two equal).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Context<'a> {
    /// The raw model output.
    pub output: &'a str,
    /// The extracted (and so far normalised) JSON; `Null` when nothing was extracted.
    pub json: &'a Json,
    pub extraction: &'a ExtractionInfo,
    /// Ground truth; `Null` when the record has none.
    pub expected: &'a Json,
    pub meta: &'a Json,
    /// Issues raised by earlier pipeline steps.
    pub issues: &'a [Issue],
    /// Scores of the metrics that already ran, by name.
    pub scores: &'a BTreeMap<String, f64>,
    /// The record's transcript, turn by turn, when it has `messages`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<&'a [crate::transcript::Turn]>,
    /// For a step run per turn (`scope: assistant_turns` or `last`) on a
    /// transcript record: the index in `turns` of the turn whose text is
    /// `output`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// Field-matching strategies available to metrics.
    #[serde(skip)]
    pub strategies: &'a StrategyRegistry,
    /// What extensions build once per record and share between the steps
    /// that read it (see [`RecordMemo`]); `None` outside a pipeline.
    #[serde(skip)]
    pub memo: Option<&'a RecordMemo>,
    /// What the record is judged as: the whole record, or the tool calls its
    /// last assistant message proposes ([`Judging::Proposal`]).
    pub judging: Judging,
    /// The time budget of the step: work that can run long asks it as it
    /// goes ([`Budget::watch`](crate::deadline::Budget::watch),
    /// [`Budget::passed`](crate::deadline::Budget::passed)) and stops when
    /// it has passed (the pipeline then makes the step a `timeout` error).
    /// [`Budget::unlimited`](crate::deadline::Budget::unlimited) outside a
    /// pipeline.
    #[serde(skip)]
    pub budget: &'a crate::deadline::Budget<'a>,
}

/// What a record is judged as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judging {
    /// The whole output, or the whole conversation (`Pack::evaluate`).
    #[default]
    Whole,
    /// The tool calls the transcript's last assistant message proposes,
    /// before they run (`Pack::decide`): the rules that can only be judged
    /// on a finished conversation (`tool_calls`' `required` and expected
    /// trajectory, the contract of the final answer) are not applied.
    Proposal,
}

impl Judging {
    /// Whether it is [`Judging::Whole`].
    pub fn is_whole(&self) -> bool {
        *self == Judging::Whole
    }

    /// Its name, as scripts read it (`ctx.judging`).
    pub fn as_str(self) -> &'static str {
        match self {
            Judging::Whole => "whole",
            Judging::Proposal => "proposal",
        }
    }
}

/// What an extension host builds from a record once and shares between the
/// steps run on it: a script's `ctx.turns`, converted once per record rather
/// than once per step and turn, so that a step run on each of a transcript's
/// turns costs time linear in its length.
#[derive(Default)]
pub struct RecordMemo {
    turns: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    /// Values a host makes once per record and key (a per-turn step's
    /// `ctx.issues`, a script's `prepare`), see [`RecordMemo::once`].
    keyed: std::sync::Mutex<Vec<(String, Box<dyn std::any::Any + Send + Sync>)>>,
    /// The contract's checks already ran on the record's document, as a
    /// streaming session read it, and found nothing (see
    /// [`RecordMemo::take_contract_judged`]).
    contract_judged: std::sync::atomic::AtomicBool,
}

impl RecordMemo {
    /// Notes that the contract's checks ran on the record's document and
    /// found nothing.
    pub fn contract_judged(&self) {
        self.contract_judged
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the contract's checks already found nothing in the record's
    /// document: true once (for the first contract step, the one that sees
    /// the document as extracted), then false.
    pub fn take_contract_judged(&self) -> bool {
        self.contract_judged
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    /// The value `make` builds for `key`, built on the first call for that
    /// key in this record (later calls with another `T` build it anew,
    /// unshared). `make` runs without the memo locked.
    pub fn once<T: Clone + Send + Sync + 'static>(&self, key: &str, make: impl FnOnce() -> T) -> T {
        let lock = || {
            self.keyed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(value) = lock()
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.downcast_ref::<T>())
        {
            return value.clone();
        }
        let value = make();
        lock().push((key.to_owned(), Box::new(value.clone())));
        value
    }

    /// The record's turns as `make` builds them, built on the first call
    /// (later calls with another `T` build it anew, unshared).
    pub fn turns<T: Clone + Send + Sync + 'static>(&self, make: impl FnOnce() -> T) -> T {
        let mut made = None;
        let stored = self.turns.get_or_init(|| {
            let value = make();
            made = Some(value.clone());
            Box::new(value)
        });
        match (made, stored.downcast_ref::<T>()) {
            (Some(value), _) => value,
            (None, Some(value)) => value.clone(),
            (None, None) => unreachable!("one host memoises the turns"),
        }
    }
}

impl fmt::Debug for RecordMemo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordMemo")
            .field("turns", &self.turns.get().is_some())
            .field(
                "keyed",
                &self
                    .keyed
                    .lock()
                    .map(|keyed| keyed.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>())
                    .unwrap_or_default(),
            )
            .field("contract_judged", &self.contract_judged)
            .finish()
    }
}

/// A context with one component's config: what crosses an extension boundary.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WithConfig<'a> {
    #[serde(flatten)]
    pub context: &'a Context<'a>,
    pub config: &'a Value,
}

impl<'a> Context<'a> {
    /// The context with one component's config, as extensions receive it.
    pub fn with_config(&'a self, config: &'a Value) -> WithConfig<'a> {
        WithConfig {
            context: self,
            config,
        }
    }
}

/// A failure of the evaluation itself (not a finding about the output):
/// the record becomes `ERROR` with this reason and kind.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    pub message: String,
    pub kind: ErrorKind,
}

impl EvalError {
    /// A failure of `kind`.
    pub fn new(kind: ErrorKind, reason: impl Into<String>) -> Self {
        Self {
            message: reason.into(),
            kind,
        }
    }

    /// The same failure, its message after `prefix` (`metric `x`: …`).
    #[must_use]
    pub fn within(self, prefix: impl fmt::Display) -> Self {
        Self {
            message: format!("{prefix}: {}", self.message),
            kind: self.kind,
        }
    }

    /// The same message, as a failure of `kind`.
    #[must_use]
    pub fn of_kind(self, kind: ErrorKind) -> Self {
        Self { kind, ..self }
    }
}

/// What a metric returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricOutput {
    pub score: f64,
    pub issues: Vec<Issue>,
    pub details: Details,
    /// The metric does not apply to this record ("not applicable"), and why:
    /// its weight leaves the record's score (`score` is ignored).
    pub skipped: Option<String>,
}

impl MetricOutput {
    /// "Not applicable" to this record, for `reason`.
    pub fn skip(reason: impl Into<String>) -> Self {
        Self {
            skipped: Some(reason.into()),
            ..Self::default()
        }
    }

    pub fn score(score: f64) -> Self {
        Self {
            score,
            ..Self::default()
        }
    }
}

/// What a postprocessor returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PostOutput {
    pub issues: Vec<Issue>,
    /// Replacement for the extracted JSON, when the postprocessor normalises it.
    pub json: Option<Json>,
}

pub trait Metric: Send + Sync + fmt::Debug {
    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError>;

    /// Whether it runs on a proposal ([`Judging::Proposal`]): a metric that
    /// scores the final answer does not (it is skipped, saying so).
    fn on_proposal(&self) -> bool {
        true
    }

    /// Called with the contexts of a batch of records before any of them is
    /// evaluated, so work can be done once for all (e.g. embedding every text a
    /// `semantic` field compares in one pass). Results must not depend on it.
    fn prepare(&self, _records: &[Context<'_>]) {}

    /// Whether the metric reads the extracted JSON (`ctx.json`). A pack whose
    /// metrics all say no, and that has no postprocessor, does not build the
    /// value when it writes results (`ctx.json` is then `null`): only its text.
    fn reads_json(&self) -> bool {
        true
    }
}

pub trait Postprocessor: Send + Sync + fmt::Debug {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError>;

    /// Whether it runs on a proposal ([`Judging::Proposal`]): a step that
    /// judges the final answer (the contract, the output's JSON) does not;
    /// scripts and plugins do, and read `judging`.
    fn on_proposal(&self) -> bool {
        true
    }

    /// What a streaming session may learn of this step before the output
    /// ends ([`Early`]); by default nothing, and it may rewrite the JSON.
    fn early(&self) -> Early {
        Early::AtFinish { keeps_json: false }
    }

    /// The tools this step lets a model call, as function definitions
    /// (`tool_calls`: `tribunal prompt --tools`); by default none.
    fn tools(&self) -> Vec<ToolDefinition> {
        Vec::new()
    }
}

/// A tool a pack lets a model call, as the model's API is told of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it is for, when the pack says (a contract variant's description).
    pub description: Option<String>,
    /// A JSON Schema of its arguments (an object).
    pub parameters: serde_json::Value,
}

/// What a postprocessor judges while an output streams (`Pack::stream`), on
/// the document the session reads, when every step before it left that
/// document as it was.
#[derive(Debug, Clone)]
pub enum Early {
    /// Nothing early; `keeps_json`: it never rewrites the JSON, so later
    /// steps still see the document as written.
    AtFinish { keeps_json: bool },
    /// The pack's contract: its checks on each value as it completes (it
    /// rewrites only a kind outside `may_emit`).
    Contract,
    /// A check of each string value as it completes; it never rewrites the JSON.
    Strings(Arc<dyn EarlyStrings>),
}

/// A postprocessor's check of the document's string values, one at a time,
/// for a streaming session: the issue its `process` reports about a string,
/// as soon as the string is complete.
pub trait EarlyStrings: Send + Sync + fmt::Debug {
    /// Fields it reports at most once each (the session keeps which it did).
    fn fields(&self) -> usize;

    /// The issues about the string `value` at `path` (strings come in
    /// document order), given the fields already reported (`done`, updated
    /// here), pushed onto `out`: none when it has nothing to say, or nothing
    /// certain.
    fn string(
        &self,
        path: &[crate::json::Seg],
        value: &str,
        done: &mut [bool],
        out: &mut Vec<Issue>,
    );
}

pub trait Strategy: Send + Sync + fmt::Debug {
    /// Similarity of `actual` to `expected`, in [0, 1].
    fn compare(&self, expected: &Json, actual: &Json, ctx: &Context<'_>) -> Result<f64, EvalError>;

    /// The similarity at or above which a field counts as matching, unless the
    /// calling metric configures its own threshold for this strategy.
    fn default_threshold(&self) -> f64 {
        1.0
    }

    /// Called with the (expected, actual) pairs a batch of records will compare,
    /// before they are compared; only when [`Strategy::wants_prepare`] says so.
    /// Results must not depend on it.
    fn prepare(&self, _pairs: &[(&Json, &Json)]) {}

    /// Whether [`Strategy::prepare`] does anything (callers skip collecting pairs).
    fn wants_prepare(&self) -> bool {
        false
    }

    /// Whether the strategy can run at all (e.g. `semantic` has a model), checked
    /// at load when a pack names it explicitly; the reason when it cannot.
    fn ready(&self) -> Result<(), BuildError> {
        Ok(())
    }

    /// One-time set-up the comparisons need (`semantic` loads its model), done
    /// before the first one. A script calling the strategy through `compare()`
    /// runs it outside its limits: the set-up is the engine's, not the script's.
    /// An error here is the comparison's error.
    fn warm_up(&self) -> Result<(), EvalError> {
        Ok(())
    }
}

/// A compiled component, ready to run.
#[derive(Debug, Clone)]
pub enum Compiled {
    Metric(Arc<dyn Metric>),
    Postprocessor(Arc<dyn Postprocessor>),
    Strategy(Arc<dyn Strategy>),
}

impl Compiled {
    /// The kind of component built.
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            Compiled::Metric(_) => Kind::Metric,
            Compiled::Postprocessor(_) => Kind::Postprocessor,
            Compiled::Strategy(_) => Kind::Strategy,
        }
    }
}

/// Why a component could not be built. The loader adds file, line and column.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct BuildError {
    pub message: String,
    /// A config key (dotted) the error is about, used to locate it in the source.
    pub key: Option<String>,
    /// A scalar under that key the error is about (a name in a list), located
    /// after the key.
    pub value: Option<String>,
    pub suggestion: Option<String>,
}

impl BuildError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            key: None,
            value: None,
            suggestion: None,
        }
    }

    #[must_use]
    pub fn at_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The error is about the scalar `value` under its key (a name in a list).
    #[must_use]
    pub fn at_value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// The help line offers `suggestion` (`did you mean ...?`).
    #[must_use]
    pub fn suggest(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// The help line for the suggestion, if there is one.
    pub fn help(&self) -> Option<String> {
        self.suggestion.as_deref().map(crate::suggest::did_you_mean)
    }
}

/// Deserialises a built-in's config strictly, turning serde's message into a
/// `BuildError` that names the offending key and suggests the nearest valid one.
pub fn parse_config<T: serde::de::DeserializeOwned>(
    component: &str,
    config: &Value,
) -> Result<T, BuildError> {
    let config = if config.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        config.clone()
    };
    crate::strict_config::from_value(config).map_err(|err| {
        let message = err.to_string();
        let mut error = BuildError::new(format!("{component}: invalid config: {message}"));
        if let Some((unknown, expected)) = crate::suggest::parse_unknown_field(&message) {
            error.key = Some(unknown.clone());
            error.suggestion =
                crate::suggest::nearest(&unknown, expected.iter().map(String::as_str));
        } else if let Some(field) = crate::suggest::parse_field_in_message(&message) {
            error.key = Some(field);
        }
        error
    })
}
