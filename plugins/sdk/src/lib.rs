//! SDK for Tribunal compiled plugins.
//!
//! A plugin is a `cdylib` exporting metrics, postprocessors and strategies to the
//! Tribunal engine. You write one struct per component, implement [`Metric`],
//! [`Postprocessor`] or [`Strategy`] for it (with a typed, serde-deserialised
//! config), and export everything with one [`export_plugin!`] line:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tribunal_plugin::{export_plugin, Context, Error, Metric, MetricResult};
//!
//! #[derive(Debug, Default, Deserialize, Serialize)]
//! #[serde(default, deny_unknown_fields)]
//! pub struct WordCountConfig {
//!     /// Number of words at which the score reaches 1.
//!     pub target: usize,
//! }
//!
//! pub struct WordCount {
//!     target: usize,
//! }
//!
//! impl Metric for WordCount {
//!     const NAME: &'static str = "word_count";
//!     const DESCRIPTION: &'static str = "Share of the target word count reached by the raw output";
//!     type Config = WordCountConfig;
//!
//!     fn new(config: WordCountConfig) -> Result<Self, Error> {
//!         if config.target == 0 {
//!             return Err("`target` must be at least 1".into());
//!         }
//!         Ok(Self { target: config.target })
//!     }
//!
//!     fn evaluate(&self, ctx: &Context) -> Result<MetricResult, Error> {
//!         let words = ctx.output.split_whitespace().count();
//!         Ok(MetricResult::score((words as f64 / self.target as f64).min(1.0)))
//!     }
//! }
//!
//! export_plugin! {
//!     name: "example_metrics",
//!     version: env!("CARGO_PKG_VERSION"),
//!     components: [metric WordCount],
//! }
//! # fn main() {}
//! ```
//!
//! Build it with `crate-type = ["cdylib"]` in the plugin's `Cargo.toml`, and
//! declare it in a manifest:
//! `implementation: { plugin: { library: example_metrics, component: word_count } }`.
//!
//! # The C ABI (version [`ABI_VERSION`])
//!
//! The macro generates the six symbols below; a plugin written in another
//! language exports them itself. Every string is UTF-8 JSON. Input is passed as
//! a pointer and a length (not NUL-terminated); output is a NUL-terminated
//! `char *` allocated by the plugin and handed back to `tribunal_plugin_free`.
//!
//! ```c
//! uint32_t tribunal_plugin_abi_version(void);
//! char    *tribunal_plugin_manifest(void);
//! char    *tribunal_plugin_instantiate(const uint8_t *request, size_t len, void **instance);
//! char    *tribunal_plugin_evaluate(const void *instance, const uint8_t *input, size_t len);
//! void     tribunal_plugin_release(void *instance);
//! void     tribunal_plugin_free(char *json);
//! ```
//!
//! 1. `tribunal_plugin_abi_version` is looked up and called first, before any other
//!    symbol; the host refuses a library whose version differs from its own.
//! 2. `tribunal_plugin_manifest` returns `{"ok": M}` (or `{"error": "message"}`)
//!    with `M` = `{"name", "version", "components": [{"name", "kind",
//!    "description"?, "config"?: {"defaults", "schema"}}]}` and `kind` one of
//!    `metric`, `postprocessor`, `strategy`. The host checks every component a
//!    pack declares against this list when the pack loads.
//! 3. `tribunal_plugin_instantiate` is called once per component use when a pack
//!    loads, with `{"component", "kind", "config"}`. On success it stores an opaque
//!    non-null handle in `*instance` and returns `{"ok": null}`; on failure it
//!    returns `{"error": "message"}` (a config error in serde's wording, e.g.
//!    ``unknown field `x` ``, lets the host point at the key and suggest a name).
//! 4. `tribunal_plugin_evaluate` is called once per record, possibly from many
//!    threads at once with the same handle, with `{"context": C}` (metrics,
//!    postprocessors) or `{"expected": E, "actual": A, "context": C}` (strategies),
//!    where `C` is the evaluation context described by [`Context`]. It returns
//!    `{"ok": result}` or `{"error": "message"}`. Results: a metric returns a
//!    number in [0, 1], a bool, or `{"score", "issues"?, "details"?}`; a
//!    postprocessor an array of issues or `{"issues"?, "json"?}`; a strategy a
//!    number in [0, 1]; an issue is a string or
//!    `{"message", "severity"?, "path"?, "rule"?}`.
//! 5. `tribunal_plugin_release` frees a handle when the pack that owns it is
//!    dropped. Libraries themselves are never unloaded.
//! 6. `tribunal_plugin_free` frees every string the plugin returned.
//!
//! A function must never unwind across the boundary: the macro wraps every
//! export in `catch_unwind` and turns a panic into `{"error": "panicked at
//! FILE:LINE:COL: message"}`, which makes that one record `ERROR`.
//!
//! # Trust
//!
//! A native plugin runs inside the engine's process with its full rights; the
//! engine cannot sandbox it. Load only plugins you would run as programs. Rhai
//! scripts are the sandboxed way to extend Tribunal.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[doc(hidden)]
pub mod __private;
mod ffi;
pub mod wire;

/// The version of the C ABI this SDK exports. A host loads only plugins built
/// with the same version.
pub const ABI_VERSION: u32 = 1;

/// The error a component returns: any error, or a message (`"text".into()`).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// What a component is (the engine's own `tribunal::Kind` is this type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Returns a score in [0, 1].
    #[serde(alias = "evaluation")]
    Metric,
    /// Returns issues and may normalise the extracted JSON.
    Postprocessor,
    /// Compares an expected and an actual field value; returns a similarity in [0, 1].
    Strategy,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Metric => "metric",
            Kind::Postprocessor => "postprocessor",
            Kind::Strategy => "strategy",
        }
    }
}

/// The evaluation context of one record: the same shape Rhai scripts see.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// The raw model output.
    pub output: String,
    /// What the record is judged as: `"whole"` (the output, or a finished
    /// conversation) or `"proposal"` (the tool calls a transcript's last
    /// assistant message proposes, before they run: `decide`).
    pub judging: String,
    /// The extracted (and so far normalised) JSON; `Null` when nothing was extracted.
    pub json: Value,
    pub extraction: Extraction,
    /// Ground truth; `Null` when the record has none.
    pub expected: Value,
    /// The record's `meta`.
    pub meta: Value,
    /// This component's config, as merged by the pack (the typed config your
    /// component was built with came from the same value).
    pub config: Value,
    /// Issues raised by earlier pipeline steps.
    pub issues: Vec<Issue>,
    /// Scores of the metrics that already ran, by step name.
    pub scores: BTreeMap<String, f64>,
    /// An agent's transcript, turn by turn, when the record has `messages`
    /// (OpenAI Chat, Anthropic Messages or OpenAI Responses, read into one
    /// shape); empty otherwise.
    pub turns: Vec<Turn>,
    /// For a step run per turn (`scope: assistant_turns` or `last`) on a
    /// transcript record: the index in `turns` of the turn whose text is
    /// `output`; `None` otherwise.
    pub turn: Option<usize>,
}

/// One turn of a transcript (`ctx.turns`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Turn {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Its text; a tool turn's result.
    pub text: String,
    /// The tools an assistant turn calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool turn answers.
    pub tool_call_id: Option<String>,
    /// Whether a tool turn reports an error.
    pub is_error: bool,
    /// JSON pointer of the message in the record (`/messages/3`).
    pub path: String,
}

/// A tool call of an assistant turn.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments, read (`null` when they are not JSON).
    pub arguments: Value,
    /// JSON pointer of the call in the record.
    pub path: String,
    /// JSON pointer of its arguments in the record.
    pub arguments_path: String,
}

impl Context {
    /// The extracted JSON at a JSON pointer (`""` is the whole document).
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        self.json.pointer(pointer)
    }
}

/// What the extraction ladder did for the record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Extraction {
    /// `strict`, `fence`, `embedded`, `repair` or `fallback`; `None` when nothing was extracted.
    pub tier: Option<String>,
    /// The repairs made by the `repair` tier, e.g. `trailing_comma`.
    pub repairs: Vec<String>,
    pub raw_fallback: bool,
}

/// How much an issue counts. Only `error` issues count towards a record's status.
/// (The engine's own `tribunal::Severity` is this type.)
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One finding about a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    pub message: String,
    #[serde(default)]
    pub severity: Severity,
    /// JSON pointer into the extracted JSON, if the issue has a place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The rule name; the host fills in the component's name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The component's own code for this kind of finding (lower-case letters,
    /// digits, `-` and `.`): the host namespaces it by the component's name in
    /// the pack (`NAME.CODE`); without one, the issue's code is `NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl Issue {
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            severity: Severity::Error,
            path: None,
            rule: None,
            code: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(message)
        }
    }

    pub fn info(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Info,
            ..Self::error(message)
        }
    }

    /// Places the issue at a JSON pointer into the extracted JSON.
    #[must_use]
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Gives the issue a code of the component's own (`too-long`); the result
    /// record shows it namespaced by the component's name (`length.too-long`).
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }
}

/// What a metric returns: a score in [0, 1] (the host rejects anything else),
/// issues, and free-form details shown in the result record; or, with
/// [`MetricResult::skip`], that the metric does not apply to the record ("not
/// applicable": its weight leaves the record's score).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricResult {
    pub score: f64,
    pub issues: Vec<Issue>,
    pub details: Value,
    /// Why the metric does not apply to this record (`score` is then ignored).
    pub skipped: Option<String>,
}

/// `{score, issues?, details?}`, or `{skip, issues?, details?}` when skipped.
impl Serialize for MetricResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match &self.skipped {
            Some(reason) => map.serialize_entry("skip", reason)?,
            None => map.serialize_entry("score", &self.score)?,
        }
        if !self.issues.is_empty() {
            map.serialize_entry("issues", &self.issues)?;
        }
        if !self.details.is_null() {
            map.serialize_entry("details", &self.details)?;
        }
        map.end()
    }
}

impl MetricResult {
    pub fn score(score: f64) -> Self {
        Self {
            score,
            ..Self::default()
        }
    }

    /// The metric does not apply to this record, for `reason` (a reference
    /// answer it needs is missing, say): the record shows the metric as
    /// skipped, and its weight leaves the record's score.
    pub fn skip(reason: impl Into<String>) -> Self {
        Self {
            skipped: Some(reason.into()),
            ..Self::default()
        }
    }

    #[must_use]
    pub fn with_issue(mut self, issue: Issue) -> Self {
        self.issues.push(issue);
        self
    }

    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// What a postprocessor returns: issues, and optionally a replacement for the
/// extracted JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PostResult {
    pub issues: Vec<Issue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
}

/// A metric: scores a record in [0, 1].
///
/// `new` runs once per use in a pack, when the pack loads; `evaluate` runs once
/// per record, possibly on many threads at once.
pub trait Metric: Sized + Send + Sync + 'static {
    /// The component name manifests refer to (`component: NAME`).
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    /// The config, deserialised from the pack's `config:`/`with:` (an absent
    /// config is `{}`). Its `Default` is published as the defaults.
    type Config: DeserializeOwned + Serialize + Default;

    fn new(config: Self::Config) -> Result<Self, Error>;

    fn evaluate(&self, ctx: &Context) -> Result<MetricResult, Error>;

    /// A JSON Schema of the config, published in the plugin manifest.
    fn config_schema() -> Option<Value> {
        None
    }
}

/// A postprocessor: reports issues and may normalise the extracted JSON.
pub trait Postprocessor: Sized + Send + Sync + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    type Config: DeserializeOwned + Serialize + Default;

    fn new(config: Self::Config) -> Result<Self, Error>;

    fn process(&self, ctx: &Context) -> Result<PostResult, Error>;

    fn config_schema() -> Option<Value> {
        None
    }
}

/// A field-matching strategy: the similarity in [0, 1] of an actual value to
/// an expected one.
pub trait Strategy: Sized + Send + Sync + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str = "";
    type Config: DeserializeOwned + Serialize + Default;

    fn new(config: Self::Config) -> Result<Self, Error>;

    fn compare(&self, expected: &Value, actual: &Value, ctx: &Context) -> Result<f64, Error>;

    fn config_schema() -> Option<Value> {
        None
    }
}

/// Exports a plugin's components through the C ABI.
///
/// ```ignore
/// tribunal_plugin::export_plugin! {
///     name: "readability",
///     version: env!("CARGO_PKG_VERSION"),
///     components: [metric Readability, postprocessor Cleanup, strategy Tolerance],
/// }
/// ```
///
/// Use it once per library, at the crate root. It defines the six
/// `tribunal_plugin_*` symbols described in the crate docs; each one catches
/// panics and reports them as errors.
#[macro_export]
macro_rules! export_plugin {
    (
        name: $name:expr,
        version: $version:expr,
        components: [ $( $kind:ident $component:ty ),* $(,)? ] $(,)?
    ) => {
        fn __tribunal_plugin_registry() -> $crate::__private::Registry {
            $crate::__private::Registry::new($name, $version) $( .$kind::<$component>() )*
        }

        static __TRIBUNAL_PLUGIN: $crate::__private::Plugin =
            $crate::__private::Plugin::new(__tribunal_plugin_registry);

        /// The plugin ABI version (`tribunal_plugin::ABI_VERSION`).
        #[allow(unsafe_code)]
        #[no_mangle]
        pub extern "C" fn tribunal_plugin_abi_version() -> u32 {
            $crate::__private::abi_version()
        }

        /// The plugin manifest as JSON; free it with `tribunal_plugin_free`.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub extern "C" fn tribunal_plugin_manifest() -> *mut ::std::os::raw::c_char {
            __TRIBUNAL_PLUGIN.manifest()
        }

        /// Builds a component instance from `{"component", "kind", "config"}`.
        ///
        /// # Safety
        /// `request` points to `len` readable bytes and `instance` to a writable pointer.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub unsafe extern "C" fn tribunal_plugin_instantiate(
            request: *const u8,
            len: usize,
            instance: *mut *mut ::std::ffi::c_void,
        ) -> *mut ::std::os::raw::c_char {
            // SAFETY: forwarded from the caller's contract.
            unsafe { __TRIBUNAL_PLUGIN.instantiate(request, len, instance) }
        }

        /// Evaluates one record with an instance.
        ///
        /// # Safety
        /// `instance` came from `tribunal_plugin_instantiate` and was not released;
        /// `input` points to `len` readable bytes.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub unsafe extern "C" fn tribunal_plugin_evaluate(
            instance: *const ::std::ffi::c_void,
            input: *const u8,
            len: usize,
        ) -> *mut ::std::os::raw::c_char {
            // SAFETY: forwarded from the caller's contract.
            unsafe { $crate::__private::evaluate(instance, input, len) }
        }

        /// Frees an instance.
        ///
        /// # Safety
        /// `instance` came from `tribunal_plugin_instantiate` and is not used again.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub unsafe extern "C" fn tribunal_plugin_release(instance: *mut ::std::ffi::c_void) {
            // SAFETY: forwarded from the caller's contract.
            unsafe { $crate::__private::release(instance) }
        }

        /// Frees a string this plugin returned.
        ///
        /// # Safety
        /// `json` came from this plugin and is not used again.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub unsafe extern "C" fn tribunal_plugin_free(json: *mut ::std::os::raw::c_char) {
            // SAFETY: forwarded from the caller's contract.
            unsafe { $crate::__private::free(json) }
        }
    };
}
