//! The contract: the shape the model was asked to emit.
//!
//! One contract drives three things: the prompt's OUTPUT FORMAT block, a JSON
//! Schema for providers with structured output, and validation (the `contract`
//! postprocessor) of what came back, including the `may_emit` safety boundary and
//! the fallback values used when no JSON could be extracted.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::component::BuildError;
use crate::extract::Tier;
use crate::report::Issue;
use crate::text::{count_sentences, escape_pointer, json_type_name as type_name, python_json};

/// The ladder used when a pack does not configure one.
pub const DEFAULT_LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];

/// The instruction line printed under `OUTPUT FORMAT` unless the contract sets its own.
pub const DEFAULT_INSTRUCTIONS: &str =
    "Reply with a single JSON object and nothing else — no prose before or after.";

/// Key added to fallback JSON so a run can count non-compliant outputs.
pub const RAW_FALLBACK_KEY: &str = "_raw_fallback";

/// `contract:` as written in `pack.yaml`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ContractSpec {
    /// Extraction tiers, in order. `fallback` may be listed last; it is used
    /// whenever a `fallback` template is given.
    #[serde(default)]
    pub extract: Option<Vec<Tier>>,
    #[serde(default)]
    pub may_emit: Option<Vec<String>>,
    #[serde(default)]
    pub kind_field: Option<String>,
    #[serde(default)]
    pub fields: IndexMap<String, FieldSpec>,
    #[serde(default)]
    pub fallback: Option<Map<String, Value>>,
    /// The line under `OUTPUT FORMAT` in the prompt block.
    #[serde(default)]
    pub instructions: Option<String>,
    /// An example object printed as the block's `Example:` line.
    #[serde(default)]
    pub example: Option<Value>,
    /// Whether keys not listed in `fields` are allowed (default true: extra fields are preserved).
    #[serde(default = "default_true")]
    pub additional_fields: bool,
}

fn default_true() -> bool {
    true
}

/// One field of the contract.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(default, rename = "type")]
    pub types: Option<TypeSpec>,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    #[serde(default, rename = "enum")]
    pub one_of: Option<Vec<Value>>,
    /// `[min, max]` or an exact count of sentences for a string field.
    #[serde(default)]
    pub sentences: Option<SentencesSpec>,
    /// Type of every value of an object field (a map such as `scores`).
    #[serde(default)]
    pub values: Option<JsonType>,
    /// Type of every item of an array field.
    #[serde(default)]
    pub items: Option<JsonType>,
    #[serde(default)]
    pub min_length: Option<usize>,
    #[serde(default)]
    pub max_length: Option<usize>,
    /// Raw text shown for this field in the prompt's `Schema:` line.
    #[serde(default)]
    pub hint: Option<String>,
    /// A line of its own in the prompt block (for example the rule for `text`).
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// `type: string` or `type: [string, "null"]`.
#[derive(Debug, Clone)]
pub enum TypeSpec {
    One(JsonType),
    Many(Vec<JsonType>),
}

impl<'de> Deserialize<'de> for TypeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpecVisitor;
        impl<'de> Visitor<'de> for SpecVisitor {
            type Value = TypeSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a type name or a list of them ({})",
                    JsonType::NAMES.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<TypeSpec, E> {
                JsonType::parse(name)
                    .map(TypeSpec::One)
                    .ok_or_else(|| E::unknown_variant(name, &JsonType::NAMES))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TypeSpec, E> {
                Ok(TypeSpec::One(JsonType::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<TypeSpec, A::Error> {
                let mut types = Vec::new();
                while let Some(t) = seq.next_element::<JsonType>()? {
                    types.push(t);
                }
                Ok(TypeSpec::Many(types))
            }
        }
        deserializer.deserialize_any(SpecVisitor)
    }
}

impl TypeSpec {
    fn to_vec(&self) -> Vec<JsonType> {
        match self {
            TypeSpec::One(t) => vec![*t],
            TypeSpec::Many(ts) => ts.clone(),
        }
    }
}

/// `sentences: 1` or `sentences: [1, 2]`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum SentencesSpec {
    Exactly(usize),
    Range([usize; 2]),
}

/// A JSON type name as contracts spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
    Any,
}

impl JsonType {
    const NAMES: [&'static str; 8] = [
        "string", "number", "integer", "boolean", "object", "array", "null", "any",
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Null => "null",
            JsonType::Any => "any",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" | "str" => JsonType::String,
            "number" | "float" => JsonType::Number,
            "integer" | "int" => JsonType::Integer,
            "boolean" | "bool" => JsonType::Boolean,
            "object" | "map" | "dict" => JsonType::Object,
            "array" | "list" => JsonType::Array,
            "null" => JsonType::Null,
            "any" => JsonType::Any,
            _ => return None,
        })
    }

    /// Whether `value` is of this type (integers are numbers; `any` takes everything).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            JsonType::String => value.is_string(),
            JsonType::Number => value.is_number(),
            JsonType::Integer => value.as_f64().is_some_and(|f| f.fract() == 0.0),
            JsonType::Boolean => value.is_boolean(),
            JsonType::Object => value.is_object(),
            JsonType::Array => value.is_array(),
            JsonType::Null => value.is_null(),
            JsonType::Any => true,
        }
    }

    fn default_hint(self) -> &'static str {
        match self {
            JsonType::String | JsonType::Any => "\"...\"",
            JsonType::Number => "0.0",
            JsonType::Integer => "0",
            JsonType::Boolean => "true",
            JsonType::Object => "{}",
            JsonType::Array => "[]",
            JsonType::Null => "null",
        }
    }
}

impl<'de> Deserialize<'de> for JsonType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeVisitor;
        impl Visitor<'_> for TypeVisitor {
            type Value = JsonType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a type name ({})", JsonType::NAMES.join(", "))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<JsonType, E> {
                JsonType::parse(name).ok_or_else(|| E::unknown_variant(name, &JsonType::NAMES))
            }
            // `type: [string, null]` written without quotes: YAML reads a null.
            fn visit_unit<E: de::Error>(self) -> Result<JsonType, E> {
                Ok(JsonType::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<JsonType, E> {
                Ok(JsonType::Null)
            }
        }
        deserializer.deserialize_any(TypeVisitor)
    }
}

/// A compiled field rule.
#[derive(Debug, Clone)]
pub struct FieldRule {
    pub name: String,
    pointer: String,
    pub types: Vec<JsonType>,
    pub spec: FieldSpec,
    pub sentences: Option<(usize, usize)>,
}

/// A compiled contract. Immutable; shared by every record.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Extraction tiers to try, in order (never contains `Fallback`).
    pub ladder: Vec<Tier>,
    pub kind_field: String,
    pub may_emit: Option<Vec<String>>,
    pub fields: Vec<FieldRule>,
    pub fallback: Option<Map<String, Value>>,
    pub instructions: String,
    pub example: Option<Value>,
    pub additional_fields: bool,
}

impl Contract {
    /// Checks a spec and compiles it. Errors carry the key they are about.
    pub fn compile(spec: &ContractSpec) -> Result<Self, BuildError> {
        let tiers = spec
            .extract
            .clone()
            .unwrap_or_else(|| DEFAULT_LADDER.to_vec());
        if let Some(pos) = tiers.iter().position(|t| *t == Tier::Fallback) {
            if pos + 1 != tiers.len() {
                return Err(
                    BuildError::new("`fallback` must be the last extraction tier")
                        .at_key("extract"),
                );
            }
            if spec.fallback.is_none() {
                return Err(BuildError::new(
                    "the `fallback` tier needs a `fallback:` template (for example `{ text: \"{raw}\" }`)",
                )
                .at_key("extract"));
            }
        }
        let ladder: Vec<Tier> = tiers.into_iter().filter(|t| *t != Tier::Fallback).collect();
        let kind_field = spec.kind_field.clone().unwrap_or_else(|| "kind".to_owned());
        if let Some(may_emit) = &spec.may_emit {
            if may_emit.is_empty() {
                return Err(BuildError::new("`may_emit` lists no kind").at_key("may_emit"));
            }
            if let Some(kind) = spec.fallback.as_ref().and_then(|f| f.get(&kind_field)) {
                if !kind
                    .as_str()
                    .is_some_and(|k| may_emit.iter().any(|m| m == k))
                {
                    return Err(BuildError::new(format!(
                        "the fallback {kind_field} {kind} is not in may_emit ({})",
                        may_emit.join(" | ")
                    ))
                    .at_key("fallback"));
                }
            }
        }
        let mut fields = Vec::with_capacity(spec.fields.len());
        for (name, field) in &spec.fields {
            let sentences = match field.sentences {
                None => None,
                Some(SentencesSpec::Exactly(n)) => Some((n, n)),
                Some(SentencesSpec::Range([a, b])) if a <= b => Some((a, b)),
                Some(SentencesSpec::Range([a, b])) => {
                    return Err(BuildError::new(format!(
                        "field `{name}`: sentences [{a}, {b}] has min above max"
                    ))
                    .at_key(name.clone()));
                }
            };
            if let (Some(min), Some(max)) = (field.min, field.max) {
                if min > max {
                    return Err(BuildError::new(format!(
                        "field `{name}`: min {min} is above max {max}"
                    ))
                    .at_key(name.clone()));
                }
            }
            fields.push(FieldRule {
                name: name.clone(),
                pointer: format!("/{}", escape_pointer(name)),
                types: field
                    .types
                    .as_ref()
                    .map(TypeSpec::to_vec)
                    .unwrap_or_default(),
                spec: field.clone(),
                sentences,
            });
        }
        Ok(Self {
            ladder,
            kind_field,
            may_emit: spec.may_emit.clone(),
            fields,
            fallback: spec.fallback.clone(),
            instructions: spec
                .instructions
                .clone()
                .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.to_owned()),
            example: spec.example.clone(),
            additional_fields: spec.additional_fields,
        })
    }

    /// The kind written in place of one outside `may_emit`.
    pub fn fallback_kind(&self) -> Option<&str> {
        self.fallback
            .as_ref()
            .and_then(|f| f.get(&self.kind_field))
            .and_then(Value::as_str)
            .or_else(|| {
                self.may_emit
                    .as_ref()
                    .and_then(|m| m.first())
                    .map(String::as_str)
            })
    }

    /// The fallback JSON for `raw`: the template with `{raw}` replaced by the whole
    /// output, marked `_raw_fallback: true`. `None` when the contract has no template.
    pub fn fallback_json(&self, raw: &str) -> Option<Value> {
        let template = self.fallback.as_ref()?;
        let mut out = Map::with_capacity(template.len() + 1);
        for (key, value) in template {
            let value = match value {
                Value::String(s) if s.contains("{raw}") => Value::String(s.replace("{raw}", raw)),
                other => other.clone(),
            };
            out.insert(key.clone(), value);
        }
        out.insert(RAW_FALLBACK_KEY.to_owned(), Value::Bool(true));
        Some(Value::Object(out))
    }

    /// Validates `json` against the contract. Returns the issues and, when the
    /// kind was coerced, the corrected JSON.
    pub fn validate(&self, json: &Value) -> (Vec<Issue>, Option<Value>) {
        let mut issues = Vec::new();
        let Value::Object(object) = json else {
            let message = if json.is_null() {
                "the output contains no JSON object".to_owned()
            } else {
                format!("expected a JSON object, got {}", type_name(json))
            };
            issues.push(Issue::error("", message).at(""));
            return (issues, None);
        };
        for field in &self.fields {
            match object.get(&field.name) {
                None => {
                    if field.spec.required {
                        issues.push(
                            Issue::error("", format!("missing required field `{}`", field.name))
                                .at(field.pointer.clone()),
                        );
                    }
                }
                Some(value) => self.check_field(field, value, &mut issues),
            }
        }
        if !self.additional_fields {
            for key in object.keys() {
                if key != RAW_FALLBACK_KEY && !self.fields.iter().any(|f| &f.name == key) {
                    issues.push(
                        Issue::error("", format!("unexpected field `{key}`"))
                            .at(format!("/{}", escape_pointer(key))),
                    );
                }
            }
        }
        let coerced = self.coerce_kind(object, &mut issues);
        (issues, coerced)
    }

    fn check_field(&self, field: &FieldRule, value: &Value, issues: &mut Vec<Issue>) {
        let name = &field.name;
        let at = || field.pointer.clone();
        if !field.types.is_empty() && !field.types.iter().any(|t| t.accepts(value)) {
            issues.push(
                Issue::error(
                    "",
                    format!(
                        "`{name}` must be {}, got {}",
                        types_phrase(&field.types),
                        type_name(value)
                    ),
                )
                .at(at()),
            );
            return;
        }
        let spec = &field.spec;
        if let Some(number) = value.as_f64() {
            if let Some(min) = spec.min.filter(|min| number < *min) {
                issues.push(
                    Issue::error("", format!("`{name}` must be at least {min}, got {number}"))
                        .at(at()),
                );
            }
            if let Some(max) = spec.max.filter(|max| number > *max) {
                issues.push(
                    Issue::error("", format!("`{name}` must be at most {max}, got {number}"))
                        .at(at()),
                );
            }
        }
        if let Some(allowed) = &spec.one_of {
            if !allowed.iter().any(|a| same_value(a, value)) {
                let list: Vec<String> = allowed.iter().map(display_value).collect();
                issues.push(
                    Issue::error(
                        "",
                        format!(
                            "`{name}` must be one of: {}, got {}",
                            list.join(" | "),
                            value
                        ),
                    )
                    .at(at()),
                );
            }
        }
        let length = match value {
            Value::String(s) => Some(s.chars().count()),
            Value::Array(a) => Some(a.len()),
            Value::Object(o) => Some(o.len()),
            _ => None,
        };
        if let Some(length) = length {
            if let Some(min) = spec.min_length.filter(|min| length < *min) {
                issues.push(
                    Issue::error(
                        "",
                        format!("`{name}` must have a length of at least {min}, got {length}"),
                    )
                    .at(at()),
                );
            }
            if let Some(max) = spec.max_length.filter(|max| length > *max) {
                issues.push(
                    Issue::error(
                        "",
                        format!("`{name}` must have a length of at most {max}, got {length}"),
                    )
                    .at(at()),
                );
            }
        }
        if let (Some((lo, hi)), Value::String(text)) = (field.sentences, value) {
            let count = count_sentences(text);
            if count < lo || count > hi {
                issues.push(
                    Issue::error(
                        "",
                        format!("`{name}` must be {}, got {count}", sentences_phrase(lo, hi)),
                    )
                    .at(at()),
                );
            }
        }
        if let (Some(expected), Value::Object(map)) = (spec.values, value) {
            for (key, item) in map {
                if !expected.accepts(item) {
                    issues.push(
                        Issue::error(
                            "",
                            format!(
                                "`{name}.{key}` must be {}, got {}",
                                article(expected.as_str()),
                                type_name(item)
                            ),
                        )
                        .at(format!(
                            "{}/{}",
                            field.pointer,
                            escape_pointer(key)
                        )),
                    );
                }
            }
        }
        if let (Some(expected), Value::Array(items)) = (spec.items, value) {
            for (index, item) in items.iter().enumerate() {
                if !expected.accepts(item) {
                    issues.push(
                        Issue::error(
                            "",
                            format!(
                                "`{name}[{index}]` must be {}, got {}",
                                article(expected.as_str()),
                                type_name(item)
                            ),
                        )
                        .at(format!("{}/{index}", field.pointer)),
                    );
                }
            }
        }
    }

    fn coerce_kind(&self, object: &Map<String, Value>, issues: &mut Vec<Issue>) -> Option<Value> {
        let may_emit = self.may_emit.as_ref()?;
        let kind = object.get(&self.kind_field)?;
        let Value::String(kind) = kind else {
            return None;
        };
        if may_emit.iter().any(|m| m == kind) {
            return None;
        }
        let replacement = self.fallback_kind()?;
        issues.push(
            Issue::error(
                "",
                format!(
                    "{} \"{kind}\" is not allowed (may_emit: {}); replaced with \"{replacement}\"",
                    self.kind_field,
                    may_emit.join(" | ")
                ),
            )
            .at(format!("/{}", escape_pointer(&self.kind_field))),
        );
        let mut fixed = object.clone();
        fixed.insert(
            self.kind_field.clone(),
            Value::String(replacement.to_owned()),
        );
        Some(Value::Object(fixed))
    }

    /// The OUTPUT FORMAT block to append to a prompt: the schema, the rules, an example.
    pub fn format_block(&self) -> String {
        let mut lines = vec!["OUTPUT FORMAT".to_owned(), self.instructions.clone()];
        let slots: Vec<String> = self
            .fields
            .iter()
            .map(|f| {
                let key = Value::String(f.name.clone()).to_string();
                format!("{key}: {}", self.hint(f))
            })
            .collect();
        if !slots.is_empty() {
            lines.push(format!("Schema: {{{}}}", slots.join(", ")));
        }
        for field in &self.fields {
            if let Some(line) = &field.spec.prompt {
                lines.push(line.clone());
            } else if let Some(line) = self.generated_rule_line(field) {
                lines.push(line);
            }
        }
        if let Some(example) = &self.example {
            lines.push(format!("Example: {}", python_json(example)));
        }
        lines.join("\n")
    }

    fn hint(&self, field: &FieldRule) -> String {
        if let Some(hint) = &field.spec.hint {
            return hint.clone();
        }
        let non_null: Vec<JsonType> = field
            .types
            .iter()
            .copied()
            .filter(|t| *t != JsonType::Null)
            .collect();
        let base = match non_null.first() {
            None => JsonType::String.default_hint().to_owned(),
            Some(JsonType::Number | JsonType::Integer)
                if field.spec.min.is_some() && field.spec.max.is_some() =>
            {
                format!(
                    "{}-{}",
                    field.spec.min.unwrap_or_default(),
                    field.spec.max.unwrap_or_default()
                )
            }
            Some(JsonType::Object) if field.spec.values.is_some() => {
                let inner = field.spec.values.map_or("\"...\"", JsonType::default_hint);
                format!("{{\"<key>\": {inner}}}")
            }
            Some(t) => t.default_hint().to_owned(),
        };
        if field.types.contains(&JsonType::Null)
            && non_null.len() == field.types.len() - 1
            && !non_null.is_empty()
        {
            format!("{base} or null")
        } else {
            base
        }
    }

    fn generated_rule_line(&self, field: &FieldRule) -> Option<String> {
        let name = &field.name;
        if *name == self.kind_field {
            if let Some(may_emit) = &self.may_emit {
                return Some(format!("{name} must be one of: {}", may_emit.join(" | ")));
            }
        }
        if let Some(allowed) = &field.spec.one_of {
            let list: Vec<String> = allowed.iter().map(display_value).collect();
            return Some(format!("{name} must be one of: {}", list.join(" | ")));
        }
        if let Some((lo, hi)) = field.sentences {
            return Some(format!("{name} must be {}.", sentences_phrase(lo, hi)));
        }
        None
    }

    /// A JSON Schema (draft 2020-12) of the contract.
    pub fn json_schema(&self, title: &str) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in &self.fields {
            let mut schema = Map::new();
            match field.types.as_slice() {
                [] | [JsonType::Any] => {}
                [one] => {
                    schema.insert("type".into(), json!(one.as_str()));
                }
                many => {
                    let names: Vec<&str> = many
                        .iter()
                        .filter(|t| **t != JsonType::Any)
                        .map(|t| t.as_str())
                        .collect();
                    schema.insert("type".into(), json!(names));
                }
            }
            if field.name == self.kind_field {
                if let Some(may_emit) = &self.may_emit {
                    schema.insert("enum".into(), json!(may_emit));
                }
            }
            let spec = &field.spec;
            if let Some(one_of) = &spec.one_of {
                schema.insert("enum".into(), json!(one_of));
            }
            if let Some(min) = spec.min {
                schema.insert("minimum".into(), json!(min));
            }
            if let Some(max) = spec.max {
                schema.insert("maximum".into(), json!(max));
            }
            let is_string = field.types.contains(&JsonType::String);
            let is_array = field.types.contains(&JsonType::Array);
            if let Some(n) = spec.min_length {
                let key = if is_string {
                    "minLength"
                } else if is_array {
                    "minItems"
                } else {
                    "minProperties"
                };
                schema.insert(key.into(), json!(n));
            }
            if let Some(n) = spec.max_length {
                let key = if is_string {
                    "maxLength"
                } else if is_array {
                    "maxItems"
                } else {
                    "maxProperties"
                };
                schema.insert(key.into(), json!(n));
            }
            if let Some(values) = spec.values {
                schema.insert("additionalProperties".into(), type_schema(values));
            }
            if let Some(items) = spec.items {
                schema.insert("items".into(), type_schema(items));
            }
            let mut description: Vec<String> = spec.description.iter().cloned().collect();
            if let Some((lo, hi)) = field.sentences {
                description.push(format!("Must be {}.", sentences_phrase(lo, hi)));
            }
            if !description.is_empty() {
                schema.insert("description".into(), json!(description.join(" ")));
            }
            if spec.required {
                required.push(field.name.clone());
            }
            properties.insert(field.name.clone(), Value::Object(schema));
        }
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("title".into(), json!(title));
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        schema.insert("required".into(), json!(required));
        schema.insert("additionalProperties".into(), json!(self.additional_fields));
        Value::Object(schema)
    }
}

fn type_schema(t: JsonType) -> Value {
    if t == JsonType::Any {
        json!({})
    } else {
        json!({ "type": t.as_str() })
    }
}

/// Equality for `enum`: JSON equality, except that numbers compare by value (2 == 2.0).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => {
            (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn article(name: &str) -> String {
    match name {
        "null" | "any" => name.to_owned(),
        n if n.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {n}"),
        n => format!("a {n}"),
    }
}

fn types_phrase(types: &[JsonType]) -> String {
    let names: Vec<String> = types.iter().map(|t| article(t.as_str())).collect();
    names.join(" or ")
}

fn number_word(n: usize) -> String {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| (*w).to_owned())
}

fn sentences_phrase(lo: usize, hi: usize) -> String {
    let unit = |n: usize| if n == 1 { "sentence" } else { "sentences" };
    if lo == hi {
        format!("exactly {} {}", number_word(lo), unit(lo))
    } else if hi == lo + 1 {
        format!("{} or {} {}", number_word(lo), number_word(hi), unit(hi))
    } else {
        format!("{} to {} {}", number_word(lo), number_word(hi), unit(hi))
    }
}
