//! `--set` overrides as given: `component.key=value`, the value read as YAML
//! or from a file. (Merging them into a pack is the pack loader's.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::yaml::yaml_to_value;

/// A `--set component.key=value` override of a component's config for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Step or component name.
    pub component: String,
    /// Dotted key inside the component's config.
    pub key: String,
    /// The value, as read from YAML.
    pub value: Value,
    /// The text as given, for error messages and the revision.
    pub raw: String,
    /// The file an `@path` value was read from (which no output of the run
    /// may then be).
    pub file: Option<PathBuf>,
}

impl Override {
    /// Parses `component.key=value`. The value is read as YAML (so `0.9`, `true`
    /// and `[a, b]` are typed); `@path` reads a JSON or YAML file, relative to `cwd`.
    pub fn parse(spec: &str, cwd: &Path) -> Result<Self, OverrideError> {
        let error = |reason: String| OverrideError {
            spec: spec.to_owned(),
            reason,
        };
        let (target, value) = spec
            .split_once('=')
            .ok_or_else(|| error("expected component.key=value".into()))?;
        let (component, key) =
            split_target(target).ok_or_else(|| error("expected component.key=value".into()))?;
        let mut file = None;
        let value = if let Some(path) = value.strip_prefix('@') {
            let path = cwd.join(path);
            let text = crate::files::read_regular_text(&path, crate::files::MAX_VALUE_FILE_BYTES)
                .map_err(|err| error(err.to_string()))?;
            let value = yaml_to_value(&text, &path).map_err(|err| error(err.to_string()))?;
            file = Some(path);
            value
        } else {
            // A value that is not YAML is taken as text, but `.nan` and `.inf` are
            // refused rather than passed on as text (or, in JSON, as `null`).
            if let Err(crate::yaml::scan::ScanError::NotFinite { text, .. }) =
                crate::yaml::scan::scan(value)
            {
                return Err(error(format!(
                    "`{text}` is not a number JSON can hold; quote it if you mean the text"
                )));
            }
            yaml_to_value(value, Path::new("--set"))
                .unwrap_or_else(|_| Value::String(value.to_owned()))
        };
        Ok(Self {
            component: component.to_owned(),
            key: key.to_owned(),
            value,
            raw: spec.to_owned(),
            file,
        })
    }
}

impl Override {
    /// An override of `component.key` with a value already typed (what the Python
    /// API's `overrides={"json_emission.threshold": 0.8}` gives); `raw`, shown in
    /// messages, is `component.key=<value as JSON>`.
    pub fn new(target: &str, value: Value) -> Result<Self, OverrideError> {
        let raw = format!("{target}={value}");
        let (component, key) = split_target(target).ok_or_else(|| OverrideError {
            spec: raw.clone(),
            reason: "the key must be component.key".into(),
        })?;
        Ok(Self {
            component: component.to_owned(),
            key: key.to_owned(),
            value,
            raw,
            file: None,
        })
    }
}

/// `component.key` as its two non-empty parts.
fn split_target(target: &str) -> Option<(&str, &str)> {
    target
        .split_once('.')
        .filter(|(c, k)| !c.is_empty() && !k.is_empty())
}

/// A `--set` that cannot be read: the text as given, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--set {spec}: {reason}")]
pub struct OverrideError {
    /// The override as given.
    pub spec: String,
    /// Why it cannot be read.
    pub reason: String,
}
