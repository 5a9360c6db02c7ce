//! The contract as written in `pack.yaml`: the shapes serde reads and the JSON
//! Schemas `tribunal schema` prints for them.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::extract::{MultipleValues, Tier};
use crate::json::Json;

/// `contract:` as written in `pack.yaml`.
#[derive(Debug, Clone, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractSpec {
    /// Extraction tiers, in order. `fallback` may be listed last; it is used
    /// whenever a `fallback` template is given.
    #[serde(default)]
    pub extract: Option<Vec<Tier>>,
    /// Several top-level documents in a row (`{...}{...}`, or with prose between
    /// them): take the `first` (the default), the `last`, or `all` of them as an
    /// array. The `repair` tier lists `multiple_values` when it saw more than one.
    #[serde(default)]
    pub multiple_values: Option<MultipleValues>,
    /// `schema`: after extraction, bring the document to the contract where the
    /// change is safe (a number or boolean in a string, a single value for an
    /// array, a member `additional_fields: false` forbids, a missing field's
    /// `default`), each change listed in `extraction.schema_repairs` with its
    /// path. `none` (the default): the document is judged as the model wrote it.
    #[serde(default)]
    pub repair: Option<RepairMode>,
    #[serde(default)]
    pub may_emit: Option<Vec<String>>,
    /// What a kind outside `may_emit` does: `coerce` (the default, seed 001's
    /// boundary) replaces it with the fallback kind in the result's `json`;
    /// `reject` leaves the JSON as the model wrote it. Both report an error.
    #[serde(default)]
    pub on_violation: Option<OnViolation>,
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
    /// Words that end in a period without ending a sentence, for `sentences:`
    /// (added to the built-in list: titles, months, `e.g.`, `vs.`, ...).
    #[serde(default)]
    pub sentence_abbreviations: Vec<String>,
    /// `finite`: a number beyond a double's range (`1e400`) is an issue in
    /// any field, bounded or not (`contract.range`); `any` (the default)
    /// leaves it to the fields' bounds, which compare it exactly.
    #[serde(default)]
    pub numbers: Numbers,
    /// Discriminated variants: for each value of `kind_field` (a tool, an event
    /// type), the fields an object of that kind has besides `fields`. The
    /// variant names are the allowed kinds (no `may_emit` with them).
    #[serde(default)]
    pub variants: IndexMap<String, Option<VariantSpec>>,
}

/// Which numbers a contract takes, as `numbers:` says it: a word or a list of
/// words. `any` (the default): every JSON number, compared by value; `finite`:
/// only numbers within a double's range; `strict`: as typed graders read them,
/// a number written with a fraction or an exponent (`5.0`, `5e0`) is not an
/// `integer`, nor equal to a listed integer `5` (one-sided: `5` still equals a
/// listed `5.0`, and an integer is a `number`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Numbers {
    pub finite: bool,
    pub strict: bool,
}

impl Numbers {
    const WORDS: [&'static str; 3] = ["any", "finite", "strict"];

    /// Both sets of rules at once (a step's own and its pack contract's).
    #[must_use]
    pub fn with(self, other: Numbers) -> Numbers {
        Numbers {
            finite: self.finite || other.finite,
            strict: self.strict || other.strict,
        }
    }

    fn add(&mut self, word: &str) -> bool {
        match word {
            "any" => {}
            "finite" => self.finite = true,
            "strict" => self.strict = true,
            _ => return false,
        }
        true
    }

    /// The words that say it (`numbers: [finite, strict]`), for a contract
    /// written back.
    pub fn words(self) -> Vec<&'static str> {
        let mut words = Vec::new();
        if self.finite {
            words.push("finite");
        }
        if self.strict {
            words.push("strict");
        }
        if words.is_empty() {
            words.push("any");
        }
        words
    }
}

impl<'de> Deserialize<'de> for Numbers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumbersVisitor;
        impl<'de> Visitor<'de> for NumbersVisitor {
            type Value = Numbers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "one of {} or a list of them", Numbers::WORDS.join(", "))
            }
            fn visit_str<E: de::Error>(self, word: &str) -> Result<Numbers, E> {
                let mut numbers = Numbers::default();
                if numbers.add(word) {
                    Ok(numbers)
                } else {
                    Err(E::unknown_variant(word, &Numbers::WORDS))
                }
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Numbers, A::Error> {
                let mut numbers = Numbers::default();
                while let Some(word) = seq.next_element::<String>()? {
                    if !numbers.add(&word) {
                        return Err(de::Error::unknown_variant(&word, &Numbers::WORDS));
                    }
                }
                Ok(numbers)
            }
        }
        deserializer.deserialize_any(NumbersVisitor)
    }
}

/// `numbers: strict` or `numbers: [finite, strict]`.
impl JsonSchema for Numbers {
    fn schema_name() -> Cow<'static, str> {
        "Numbers".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let words: Vec<Value> = Self::WORDS.iter().map(|w| Value::from(*w)).collect();
        json_schema!({
            "description": "which numbers the contract takes: `any` (the default), `finite` (within a double's range), `strict` (a number written with a fraction or an exponent is not an integer, nor equal to a listed integer), or a list of them",
            "anyOf": [
                { "enum": words.clone() },
                { "type": "array", "items": { "enum": words } }
            ]
        })
    }
}

/// One kind's own fields, under `variants:`.
#[derive(Debug, Clone, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// What this kind is for (the prompt and the JSON Schema show it).
    #[serde(default)]
    pub description: Option<String>,
    /// The fields of this kind, as `fields:` (none may repeat a common field).
    #[serde(default)]
    pub fields: IndexMap<String, FieldSpec>,
}

fn default_true() -> bool {
    true
}

/// `repair:` — whether the contract may bring a document to its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepairMode {
    /// The document is judged as the model wrote it.
    #[default]
    None,
    /// Safe changes toward the contract, each listed with its path.
    Schema,
}

/// `on_violation:` — what a kind outside `may_emit` does to the result's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnViolation {
    /// Replace the kind with the fallback kind (an error says so).
    #[default]
    Coerce,
    /// Keep the JSON as written; the error makes the record fail to pass.
    Reject,
}

/// One field of the contract.
#[derive(Debug, Clone, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(default, rename = "type")]
    pub types: Option<TypeSpec>,
    #[serde(default)]
    pub required: bool,
    /// The value of an optional field the model left out (or wrote `null` for,
    /// where its type takes no null): filled in under `repair: schema`, and
    /// shown in the JSON Schema.
    #[serde(default)]
    pub default: Option<Value>,
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
    /// Every item of an array field: a type name (`items: string`), or a
    /// field spec of its own (`items: {type: object, fields: {...}}`), checked
    /// at each item's path (`/citations/2/doc_id`).
    #[serde(default)]
    pub items: Option<ItemSpec>,
    /// The fewest items an array field may have.
    #[serde(default)]
    pub min_items: Option<usize>,
    /// The most items an array field may have.
    #[serde(default)]
    pub max_items: Option<usize>,
    /// Whether an array field's items must all differ.
    #[serde(default)]
    pub unique_items: bool,
    #[serde(default)]
    pub min_length: Option<usize>,
    #[serde(default)]
    pub max_length: Option<usize>,
    /// A regular expression a string value must match somewhere in it, as
    /// JSON Schema's `pattern` (Rust's `regex` syntax; anchor it with `^` and
    /// `$` to hold the whole value).
    #[serde(default)]
    pub pattern: Option<String>,
    /// Raw text shown for this field in the prompt's `Schema:` line.
    #[serde(default)]
    pub hint: Option<String>,
    /// A line of its own in the prompt block (for example the rule for `text`).
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// The members of an object field, each a field of its own, checked at its
    /// path (`/args/date`) and named with dots (`args.date`).
    #[serde(default)]
    pub fields: IndexMap<String, FieldSpec>,
    /// Whether an object field with `fields` may have members not listed
    /// there (default true).
    #[serde(default)]
    pub additional_fields: Option<bool>,
    /// The member of an object field whose value selects its variant (default
    /// `kind`); only with `variants`.
    #[serde(default)]
    pub kind_field: Option<String>,
    /// Discriminated variants of an object field, as the contract's own
    /// `variants:`: the variant names are the kinds allowed.
    #[serde(default)]
    pub variants: IndexMap<String, Option<VariantSpec>>,
}

/// `items:` — a type name (`items: string`) or a field spec for every item.
#[derive(Debug, Clone)]
pub struct ItemSpec(pub Box<FieldSpec>);

impl<'de> Deserialize<'de> for ItemSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ItemVisitor;
        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = ItemSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a type name ({}) or a field spec such as {{type: object, fields: ...}}",
                    JsonType::SPELLING_NAMES.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ItemSpec, E> {
                let one = JsonType::parse(name)
                    .ok_or_else(|| E::unknown_variant(name, &JsonType::SPELLING_NAMES))?;
                Ok(ItemSpec::of_type(one))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ItemSpec, E> {
                Ok(ItemSpec::of_type(JsonType::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<ItemSpec, E> {
                Ok(ItemSpec::of_type(JsonType::Null))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<ItemSpec, A::Error> {
                FieldSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|spec| ItemSpec(Box::new(spec)))
            }
        }
        deserializer.deserialize_any(ItemVisitor)
    }
}

impl ItemSpec {
    fn of_type(one: JsonType) -> Self {
        Self(Box::new(FieldSpec {
            types: Some(TypeSpec::One(one)),
            ..FieldSpec::default()
        }))
    }
}

/// `items: string` or `items: {type: object, fields: ...}`.
impl JsonSchema for ItemSpec {
    fn schema_name() -> Cow<'static, str> {
        "ItemSpec".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<JsonType>();
        let spec = generator.subschema_for::<FieldSpec>();
        json_schema!({ "anyOf": [one, spec] })
    }
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
                    JsonType::SPELLING_NAMES.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<TypeSpec, E> {
                JsonType::parse(name)
                    .map(TypeSpec::One)
                    .ok_or_else(|| E::unknown_variant(name, &JsonType::SPELLING_NAMES))
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
    pub(super) fn to_vec(&self) -> Vec<JsonType> {
        match self {
            TypeSpec::One(t) => vec![*t],
            TypeSpec::Many(ts) => ts.clone(),
        }
    }
}

/// `sentences: 1` or `sentences: [1, 2]`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
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

    /// Every spelling a contract may use for a type: the names, then Python's.
    const SPELLINGS: [(&'static str, JsonType); 15] = [
        ("string", JsonType::String),
        ("number", JsonType::Number),
        ("integer", JsonType::Integer),
        ("boolean", JsonType::Boolean),
        ("object", JsonType::Object),
        ("array", JsonType::Array),
        ("null", JsonType::Null),
        ("any", JsonType::Any),
        ("str", JsonType::String),
        ("float", JsonType::Number),
        ("int", JsonType::Integer),
        ("bool", JsonType::Boolean),
        ("map", JsonType::Object),
        ("dict", JsonType::Object),
        ("list", JsonType::Array),
    ];

    /// Every spelling, for the error that lists them (aliases included).
    const SPELLING_NAMES: [&'static str; 15] = {
        let mut names = [""; 15];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::SPELLINGS[i].0;
            i += 1;
        }
        names
    };

    fn parse(name: &str) -> Option<Self> {
        Self::SPELLINGS
            .iter()
            .find(|(spelling, _)| *spelling == name)
            .map(|(_, t)| *t)
    }

    /// Whether `value` is of this type under `numbers: strict` (when
    /// `strict`, an integer is written without a fraction or an exponent).
    pub fn accepts_as(self, value: &Json, strict: bool) -> bool {
        match (self, value) {
            (JsonType::Integer, Json::Number(n)) if strict => {
                crate::decimal::written_as_integer(n.as_str())
            }
            _ => self.accepts(value),
        }
    }

    /// Whether `value` is of this type (integers are numbers; `any` takes everything).
    pub fn accepts(self, value: &Json) -> bool {
        match self {
            JsonType::String => value.is_string(),
            JsonType::Number => value.is_number(),
            // (Exactly: `5.0` and `1e400` are integers, `1.0000000000000000001` is not.)
            JsonType::Integer => {
                matches!(value, Json::Number(n) if crate::decimal::is_integer(n.as_str()))
            }
            JsonType::Boolean => value.is_boolean(),
            JsonType::Object => value.is_object(),
            JsonType::Array => value.is_array(),
            JsonType::Null => value.is_null(),
            JsonType::Any => true,
        }
    }

    pub(super) fn default_hint(self) -> &'static str {
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
                write!(f, "a type name ({})", JsonType::SPELLING_NAMES.join(", "))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<JsonType, E> {
                JsonType::parse(name)
                    .ok_or_else(|| E::unknown_variant(name, &JsonType::SPELLING_NAMES))
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

/// A type name in any of its spellings (a YAML null, `type: [string, null]`, is
/// the type `null`).
impl JsonSchema for JsonType {
    fn schema_name() -> Cow<'static, str> {
        "JsonType".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut names: Vec<Value> = Self::SPELLINGS
            .iter()
            .map(|(name, _)| Value::from(*name))
            .collect();
        names.push(Value::Null);
        json_schema!({ "description": "a JSON type name", "enum": names })
    }
}

/// `type: string` or `type: [string, "null"]`.
impl JsonSchema for TypeSpec {
    fn schema_name() -> Cow<'static, str> {
        "TypeSpec".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<JsonType>();
        json_schema!({ "anyOf": [one, { "type": "array", "items": one }] })
    }
}
