//! The config a component's code declares it takes, checked at each use before
//! the code sees it: a script's manifest declares it (`config:` defaults, or a
//! `config_schema:`), a plugin publishes it in its manifest (`schema`, else
//! `defaults`). Built-ins check their own config.

use std::fmt;

use serde_json::{Map, Value};

use crate::component::BuildError;
use crate::suggest::nearest;
use crate::text::value_type_name as kind;

/// Who declared a config, as messages name it.
#[derive(Debug, Clone)]
pub(super) enum Declarer {
    /// A script's manifest (`config:` or `config_schema:`).
    Script,
    /// A plugin library, by its own name.
    Plugin(String),
}

impl Declarer {
    fn takes(&self) -> String {
        match self {
            Declarer::Script => "the script takes".to_owned(),
            Declarer::Plugin(name) => format!("plugin `{name}` takes"),
        }
    }

    fn nothing_declared(&self) -> String {
        match self {
            Declarer::Script => {
                "the script's manifest declares no `config:` (list each key there with its default)"
                    .to_owned()
            }
            Declarer::Plugin(name) => format!("plugin `{name}` takes no config"),
        }
    }

    fn default_source(&self) -> &'static str {
        match self {
            Declarer::Script => "in the manifest",
            Declarer::Plugin(_) => "published by the plugin",
        }
    }

    fn schema_source(&self) -> &'static str {
        match self {
            Declarer::Script => "the manifest's config_schema",
            Declarer::Plugin(_) => "the plugin's config schema",
        }
    }
}

/// What a component's code takes as config.
pub(super) enum DeclaredConfig {
    /// Not checked here (a plugin that publishes neither schema nor defaults
    /// checks its own config).
    Unchecked,
    /// Exactly the keys of these defaults, each of its default's type (a `null`
    /// default takes any value).
    Defaults(Declarer, Map<String, Value>),
    /// A JSON Schema the whole config must satisfy.
    Schema(Declarer, Box<Value>, Box<jsonschema::Validator>),
}

impl fmt::Debug for DeclaredConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclaredConfig::Unchecked => f.write_str("Unchecked"),
            DeclaredConfig::Defaults(who, defaults) => f
                .debug_tuple("Defaults")
                .field(who)
                .field(defaults)
                .finish(),
            DeclaredConfig::Schema(who, schema, _) => {
                f.debug_tuple("Schema").field(who).field(schema).finish()
            }
        }
    }
}

impl DeclaredConfig {
    /// A script's declared config: its `config_schema:` if it has one, else the
    /// keys and types of its `config:` defaults (none: it takes no config).
    pub(super) fn for_script(
        defaults: Option<&Value>,
        schema: Option<&Value>,
    ) -> Result<Self, String> {
        if let Some(schema) = schema {
            return Self::schema(Declarer::Script, schema)
                .map_err(|err| format!("`config_schema` is not a usable JSON Schema: {err}"));
        }
        let defaults = defaults
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Ok(DeclaredConfig::Defaults(Declarer::Script, defaults))
    }

    /// What a plugin publishes for a component (`{"defaults": …, "schema": …}`):
    /// its schema if given, else its defaults' keys and types; nothing checked
    /// when it publishes neither.
    pub(super) fn for_plugin(plugin: &str, published: Option<&Value>) -> Result<Self, String> {
        let who = Declarer::Plugin(plugin.to_owned());
        let Some(published) = published else {
            return Ok(DeclaredConfig::Unchecked);
        };
        if let Some(schema) = published.get("schema").filter(|s| !s.is_null()) {
            return Self::schema(who, schema).map_err(|err| {
                format!("plugin `{plugin}` publishes a config schema that is not a usable JSON Schema: {err}")
            });
        }
        Ok(match published.get("defaults") {
            Some(Value::Object(defaults)) => DeclaredConfig::Defaults(who, defaults.clone()),
            _ => DeclaredConfig::Unchecked,
        })
    }

    fn schema(who: Declarer, schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema).map_err(|err| err.to_string())?;
        Ok(DeclaredConfig::Schema(
            who,
            Box::new(schema.clone()),
            Box::new(validator),
        ))
    }

    /// The schema, for `explain`.
    pub(super) fn schema_value(&self) -> Option<&Value> {
        match self {
            DeclaredConfig::Schema(_, schema, _) => Some(schema),
            _ => None,
        }
    }

    /// Checks one use's config (defaults, `with:` and `--set` merged). The
    /// error names the component and the key; an unknown key gets the nearest
    /// declared one.
    pub(super) fn check(&self, name: &str, config: &Value) -> Result<(), BuildError> {
        match self {
            DeclaredConfig::Unchecked => Ok(()),
            DeclaredConfig::Defaults(who, defaults) => check_defaults(name, who, defaults, config),
            DeclaredConfig::Schema(who, schema, validator) => {
                check_schema(name, who, schema, validator, config)
            }
        }
    }
}

fn unknown_key<'a>(
    name: &str,
    who: &Declarer,
    key: &str,
    known: impl Iterator<Item = &'a String> + Clone,
) -> BuildError {
    let listed: Vec<String> = known.clone().map(|k| format!("`{k}`")).collect();
    let message = if listed.is_empty() {
        format!(
            "{name}: invalid config: unknown key `{key}`: {}",
            who.nothing_declared()
        )
    } else {
        format!(
            "{name}: invalid config: unknown key `{key}`; {}: {}",
            who.takes(),
            listed.join(", ")
        )
    };
    let mut error = BuildError::new(message).at_key(key.to_owned());
    error.suggestion = nearest(key, known);
    error
}

fn check_defaults(
    name: &str,
    who: &Declarer,
    defaults: &Map<String, Value>,
    config: &Value,
) -> Result<(), BuildError> {
    let Value::Object(given) = config else {
        return Ok(());
    };
    for (key, value) in given {
        let Some(default) = defaults.get(key) else {
            return Err(unknown_key(name, who, key, defaults.keys()));
        };
        if !default.is_null() && kind(default) != kind(value) {
            return Err(BuildError::new(format!(
                "{name}: invalid config: `{key}` must be {} (as its default {default} {}), got {}: {value}",
                kind(default),
                who.default_source(),
                kind(value)
            ))
            .at_key(key.clone()));
        }
    }
    Ok(())
}

fn check_schema(
    name: &str,
    who: &Declarer,
    schema: &Value,
    validator: &jsonschema::Validator,
    config: &Value,
) -> Result<(), BuildError> {
    // A key the schema does not allow gets the did-you-mean every other
    // unknown key gets, rather than the validator's "additional properties".
    let properties = schema.get("properties").and_then(Value::as_object);
    // (Keys `patternProperties` allows are not unknown: the validator decides.)
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
        && schema.get("patternProperties").is_none();
    if let (Some(properties), true, Value::Object(given)) = (properties, closed, config) {
        if let Some(key) = given.keys().find(|k| !properties.contains_key(*k)) {
            return Err(unknown_key(name, who, key, properties.keys()));
        }
    }
    let Some(error) = validator.iter_errors(config).next() else {
        return Ok(());
    };
    let path = error.instance_path().as_str().to_owned();
    let token = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    let first = crate::json::unescape_pointer(token)
        .map_or_else(|| token.to_owned(), std::borrow::Cow::into_owned);
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" at `{path}`")
    };
    let mut built = BuildError::new(format!(
        "{name}: invalid config{at}: {error} ({})",
        who.schema_source()
    ));
    if !first.is_empty() {
        built = built.at_key(first);
    }
    Err(built)
}
