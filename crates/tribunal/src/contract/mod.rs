//! The contract: the shape the model was asked to emit.
//!
//! One contract drives three things: the prompt's OUTPUT FORMAT block, a JSON
//! Schema for providers with structured output, and validation (the `contract`
//! postprocessor) of what came back, including the `may_emit` safety boundary and
//! the fallback values used when no JSON could be extracted.

use std::fmt;

use indexmap::IndexMap;
use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::component::BuildError;
use crate::extract::{MultipleValues, Tier};
use crate::json::{Json, Object};

mod conform;
mod from_schema;
pub use from_schema::{tools_from_file, ToolRules};
mod index;
pub(crate) use index::{Members, RuleId};
mod prompt;
mod schema;
pub use schema::{openai_strict, StrictSchemaError};
mod validate;
pub(crate) use validate::{pointer_of, Last, Seg, Uniques};

/// The ladder used when a pack does not configure one.
pub const DEFAULT_LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];

/// The instruction line printed under `OUTPUT FORMAT` unless the contract sets its own.
pub const DEFAULT_INSTRUCTIONS: &str =
    "Reply with a single JSON object and nothing else — no prose before or after.";

/// Key added to fallback JSON so a run can count non-compliant outputs.
pub const RAW_FALLBACK_KEY: &str = "_raw_fallback";

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
    fn to_vec(&self) -> Vec<JsonType> {
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

/// A compiled field rule.
#[derive(Debug, Clone)]
pub struct FieldRule {
    /// The key in its object (empty for an array's item rule).
    pub name: String,
    /// The dotted name the prompt uses (`args.date`; the key for a top-level
    /// field; `citations[].doc_id` under an array's items). Messages name the
    /// value's own path (`citations[2].doc_id`).
    pub label: String,
    pub types: Vec<JsonType>,
    pub spec: FieldSpec,
    pub sentences: Option<(usize, usize)>,
    /// The rules for the members of an object field (`fields:` under it).
    pub children: Vec<FieldRule>,
    /// The rule every item of an array field follows (`items:`).
    pub item: Option<Box<FieldRule>>,
    /// An object field's variants (`variants:` under it), selected by the
    /// member `kind_field`.
    pub variants: Vec<Variant>,
    pub kind_field: String,
    /// `default:`, as the value filled in.
    pub default: Option<Json>,
    /// `pattern:`, compiled.
    pub pattern: Option<regex::Regex>,
    /// How `enum` compares (by value, unless a `tool_calls` argument's
    /// strategy says otherwise).
    pub enum_equality: EnumEquality,
}

/// How a rule's `enum` compares a value with the listed ones.
#[derive(Debug, Clone, Default)]
pub enum EnumEquality {
    /// As values: numbers by value, strings exactly.
    #[default]
    Value,
    /// As the `exact` strategy does (text case-insensitively).
    Exact,
    /// As the `normalized` strategy does.
    Normalized(crate::text::Normalizer),
}

impl FieldRule {
    /// The rule, its members' and its items' rules, with `enum` compared by
    /// `equality` (a `tool_calls` argument's strategy holds at any depth).
    pub fn set_enum_equality(&mut self, equality: &EnumEquality) {
        self.enum_equality = equality.clone();
        for child in &mut self.children {
            child.set_enum_equality(equality);
        }
        if let Some(item) = &mut self.item {
            item.set_enum_equality(equality);
        }
        for variant in &mut self.variants {
            for field in &mut variant.fields {
                field.set_enum_equality(equality);
            }
        }
    }

    /// Whether the values this rule describes have a shape of their own:
    /// members, variants or described items.
    fn has_shape(&self) -> bool {
        !self.children.is_empty() || !self.variants.is_empty() || self.item.is_some()
    }
}

/// What a contract knows of a path into the document (`a.b`, `/items/0/c`):
/// see [`Contract::lookup_path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKnown {
    /// Every segment is a field the contract describes, or the path goes
    /// inside a value the contract leaves free (a map, an `any`, an object
    /// without `fields`).
    Known,
    /// Segment `at` (0-based) names no field of the object that holds it:
    /// `closed` when that object takes no other members (`additional_fields:
    /// false`), so no document can have the path; `nearest` is the field
    /// name it most resembles. `in_array`: the segment is under an array
    /// and is not an item index.
    Unknown {
        at: usize,
        closed: bool,
        nearest: Option<String>,
        in_array: bool,
    },
}

/// A compiled variant: the fields an object of one kind has besides the common ones.
#[derive(Debug, Clone)]
pub struct Variant {
    pub kind: String,
    pub description: Option<String>,
    pub fields: Vec<FieldRule>,
}

/// A compiled contract. Immutable; shared by every record.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Extraction tiers to try, in order (never contains `Fallback`).
    pub ladder: Vec<Tier>,
    /// What the ladder does with several top-level documents.
    pub multiple_values: MultipleValues,
    /// Whether the document is brought to the contract after extraction.
    pub repair: RepairMode,
    pub kind_field: String,
    pub may_emit: Option<Vec<String>>,
    pub on_violation: OnViolation,
    pub fields: Vec<FieldRule>,
    pub fallback: Option<Map<String, Value>>,
    pub instructions: String,
    pub example: Option<Value>,
    pub additional_fields: bool,
    /// `sentence_abbreviations`, each without its final period.
    pub sentence_abbreviations: Vec<String>,
    /// `numbers:`: `finite` (a number beyond a double's range is an issue),
    /// `strict` (a fraction or an exponent makes a number no integer).
    pub numbers: Numbers,
    /// The kinds' own fields (empty: no variants). With variants, `may_emit`
    /// holds their names.
    pub variants: Vec<Variant>,
    /// The OUTPUT FORMAT block, made the first time it is asked for (every
    /// record with feedback ends with it).
    format_block: std::sync::OnceLock<String>,
    /// Its rules by number, made the first time a streaming session asks.
    index: std::sync::OnceLock<index::RuleIndex>,
}

impl Contract {
    /// Checks a spec and compiles it. Errors carry the key they are about.
    pub fn compile(spec: &ContractSpec) -> Result<Self, BuildError> {
        let ladder = compile_ladder(spec)?;
        let kind_field = spec.kind_field.clone().unwrap_or_else(|| "kind".to_owned());
        let has_variants = !spec.variants.is_empty();
        let may_emit = compile_may_emit(spec, &kind_field)?;
        let mut fields = compile_fields(&spec.fields, "", "fields")?;
        if has_variants {
            imply_kind(&mut fields, &kind_field, "")?;
        }
        let variants = compile_variants(&spec.variants, &spec.fields, &kind_field, "", "variants")?;
        let contract = Self {
            ladder,
            multiple_values: spec.multiple_values.unwrap_or_default(),
            repair: spec.repair.unwrap_or_default(),
            kind_field,
            may_emit,
            on_violation: spec.on_violation.unwrap_or(if has_variants {
                OnViolation::Reject
            } else {
                OnViolation::Coerce
            }),
            fields,
            fallback: spec.fallback.clone(),
            instructions: spec
                .instructions
                .clone()
                .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.to_owned()),
            example: spec.example.clone(),
            additional_fields: spec.additional_fields,
            sentence_abbreviations: spec
                .sentence_abbreviations
                .iter()
                .map(|word| word.trim().trim_end_matches('.').to_owned())
                .collect(),
            numbers: spec.numbers,
            variants,
            format_block: std::sync::OnceLock::new(),
            index: std::sync::OnceLock::new(),
        };
        Ok(contract)
    }

    /// What is wrong with the `example` the prompt shows, when it is not an
    /// output the contract takes: a misspelt or missing field there teaches
    /// the model the wrong shape. (A pack load warns: a `--set` that changes
    /// the contract may leave the example behind.)
    pub fn example_problem(&self) -> Option<BuildError> {
        let example = self.example.as_ref()?;
        let (issues, _) = self.validate(&Json::from(example), "");
        match issues
            .iter()
            .find(|i| i.severity == crate::report::Severity::Error)
        {
            None => None,
            Some(issue) => {
                let at = issue.path.as_deref().filter(|p| !p.is_empty());
                let mut error = BuildError::new(format!(
                    "the `example` is not an output the contract takes: {}{}",
                    issue.message,
                    at.map(|p| format!(" (at {p})")).unwrap_or_default()
                ))
                .at_key("example");
                // At the member it is about, when the example names it.
                if let Some(member) = at.and_then(|p| p.rsplit('/').next()) {
                    error = error.at_value(member.replace("~1", "/").replace("~0", "~"));
                }
                Some(error)
            }
        }
    }

    /// Whether the path `segments` (member names, or item indices under an
    /// array) names a field this contract describes: a rule that names a
    /// field (`no_placeholders`' `fields`, `required_fields`' `paths`) is
    /// checked against it at load, so that a misspelt name does not make the
    /// rule silently pass or always fail.
    pub fn lookup_path(&self, segments: &[&str]) -> PathKnown {
        let mut members: (&[FieldRule], &[Variant]) = (&self.fields, &self.variants);
        let mut closed = !self.additional_fields;
        let mut item: Option<&FieldRule> = None;
        for (at, segment) in segments.iter().enumerate() {
            let rule = if let Some(rule) = item.take() {
                // Under an array: an index, then the item's rule.
                if crate::json::array_index(segment).is_none() {
                    return PathKnown::Unknown {
                        at,
                        closed: true,
                        nearest: None,
                        in_array: true,
                    };
                }
                rule
            } else {
                let (common, variants) = members;
                let every = common
                    .iter()
                    .chain(variants.iter().flat_map(|v| v.fields.iter()));
                match every.clone().find(|f| f.name == *segment) {
                    Some(rule) => rule,
                    None => {
                        return PathKnown::Unknown {
                            at,
                            closed,
                            nearest: crate::suggest::nearest(segment, every.map(|f| &f.name)),
                            in_array: false,
                        }
                    }
                }
            };
            if let Some(items) = &rule.item {
                item = Some(items);
                continue;
            }
            if !rule.has_shape() {
                // Free inside (a map, `any`, an object without `fields`).
                return PathKnown::Known;
            }
            members = (&rule.children, &rule.variants);
            closed = rule.spec.additional_fields == Some(false);
        }
        PathKnown::Known
    }

    /// The variant for an object's kind, if the contract has variants and the
    /// kind is one of them.
    pub fn variant_of(&self, object: &Object) -> Option<&Variant> {
        variant_of(&self.variants, &self.kind_field, object)
    }

    /// The key the allowed kinds are listed under, as messages name it.
    fn kinds_key(&self) -> &'static str {
        if self.variants.is_empty() {
            "may_emit"
        } else {
            "variants"
        }
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
    pub fn fallback_json(&self, raw: &str) -> Option<Json> {
        let template = self.fallback.as_ref()?;
        let mut out = Object::with_capacity(template.len() + 1);
        for (key, value) in template {
            let value = match value {
                Value::String(s) if s.contains("{raw}") => Json::from(s.replace("{raw}", raw)),
                other => Json::from(other),
            };
            out.insert(key.as_str(), value);
        }
        out.insert(RAW_FALLBACK_KEY, Json::Bool(true));
        Some(Json::Object(out))
    }
}

/// Compiles `fields:` (at the top, in a variant, or under an object field):
/// each rule with its pointer and dotted label under `parent` (a pointer, `""`
/// at the top). `key` is where the map is in the contract, for error locations.
/// The extraction ladder without its `fallback` tier, which must come last
/// and needs a `fallback:` template.
fn compile_ladder(spec: &ContractSpec) -> Result<Vec<Tier>, BuildError> {
    let tiers = spec
        .extract
        .clone()
        .unwrap_or_else(|| DEFAULT_LADDER.to_vec());
    if let Some(pos) = tiers.iter().position(|t| *t == Tier::Fallback) {
        if pos + 1 != tiers.len() {
            return Err(
                BuildError::new("`fallback` must be the last extraction tier").at_key("extract"),
            );
        }
        if spec.fallback.is_none() {
            return Err(BuildError::new(
                "the `fallback` tier needs a `fallback:` template (for example `{ text: \"{raw}\" }`)",
            )
            .at_key("extract"));
        }
    }
    Ok(tiers.into_iter().filter(|t| *t != Tier::Fallback).collect())
}

/// The kinds the model may emit: `may_emit`, or the variants' names; the
/// fallback's kind must be one of them.
fn compile_may_emit(
    spec: &ContractSpec,
    kind_field: &str,
) -> Result<Option<Vec<String>>, BuildError> {
    let has_variants = !spec.variants.is_empty();
    if spec.on_violation.is_some() && spec.may_emit.is_none() && !has_variants {
        return Err(BuildError::new(
            "`on_violation` applies to `may_emit` or `variants`, and neither is given",
        )
        .at_key("on_violation"));
    }
    if has_variants && spec.may_emit.is_some() {
        return Err(BuildError::new(
            "`may_emit` and `variants` both list the allowed kinds: drop `may_emit` (with variants, the kinds are the variant names)",
        )
        .at_key("may_emit"));
    }
    if spec.kind_field.is_some() && spec.may_emit.is_none() && !has_variants {
        return Err(BuildError::new(
            "`kind_field` names the member `may_emit` or `variants` read, and neither is given",
        )
        .at_key("kind_field"));
    }
    if let Some(kinds) = &spec.may_emit {
        check_kind_field(spec, kind_field, kinds)?;
    }
    let may_emit = if has_variants {
        Some(spec.variants.keys().cloned().collect())
    } else {
        spec.may_emit.clone()
    };
    if let Some(may_emit) = &may_emit {
        if may_emit.is_empty() {
            return Err(BuildError::new("`may_emit` lists no kind").at_key("may_emit"));
        }
        if let Some(kind) = spec.fallback.as_ref().and_then(|f| f.get(kind_field)) {
            if !kind
                .as_str()
                .is_some_and(|k| may_emit.iter().any(|m| m == k))
            {
                let from = if has_variants { "variants" } else { "may_emit" };
                return Err(BuildError::new(format!(
                    "the fallback {kind_field} {kind} is not in {from} ({})",
                    may_emit.join(" | ")
                ))
                .at_key("fallback"));
            }
        }
    }
    Ok(may_emit)
}

/// `may_emit` reads the kind from the member `kind_field`: a contract whose
/// fields cannot hold a kind there would make the rule never fire (no such
/// member in a closed object) or always fire (a member that is never a
/// string, or whose `enum` leaves out a listed kind), so either is a load
/// error.
fn check_kind_field(
    spec: &ContractSpec,
    kind_field: &str,
    kinds: &[String],
) -> Result<(), BuildError> {
    let Some(field) = spec.fields.get(kind_field) else {
        if spec.additional_fields {
            return Ok(());
        }
        return Err(BuildError::new(format!(
            "`may_emit` reads each output's kind from its member `{kind_field}`, which the contract does not list and, with `additional_fields: false`, no output may have: add `{kind_field}` to `fields`, or name the member with `kind_field`"
        ))
        .at_key(if spec.kind_field.is_some() {
            "kind_field"
        } else {
            "may_emit"
        })
        .suggest(crate::suggest::nearest(kind_field, spec.fields.keys())));
    };
    let at = format!("fields.{kind_field}");
    if let Some(types) = &field.types {
        let types = types.to_vec();
        if !types
            .iter()
            .any(|t| matches!(t, JsonType::String | JsonType::Any))
        {
            return Err(BuildError::new(format!(
                "field `{kind_field}` holds each output's kind for `may_emit`, which lists strings, but its type is not `string`"
            ))
            .at_key(&at));
        }
    }
    if let Some(allowed) = &field.one_of {
        if let Some(kind) = kinds
            .iter()
            .find(|k| !allowed.iter().any(|v| v.as_str() == Some(k.as_str())))
        {
            return Err(BuildError::new(format!(
                "`may_emit` lists `{kind}`, which the `enum` of field `{kind_field}` does not take: no output could be of that kind"
            ))
            .at_key("may_emit")
            .at_value(kind));
        }
    }
    Ok(())
}

/// The variant of `variants` an object's kind (its member `kind_field`) names.
fn variant_of<'v>(
    variants: &'v [Variant],
    kind_field: &str,
    object: &Object,
) -> Option<&'v Variant> {
    let kind = object.get(kind_field)?.as_str()?;
    variants.iter().find(|v| v.kind == kind)
}

/// With variants, the kind selects the variant: a required string, listed
/// first when `fields` does not list it. `parent` is the object's label.
fn imply_kind(
    fields: &mut Vec<FieldRule>,
    kind_field: &str,
    parent: &str,
) -> Result<(), BuildError> {
    if fields.iter().any(|f| f.name == kind_field) {
        return Ok(());
    }
    let spec = FieldSpec {
        types: Some(TypeSpec::One(JsonType::String)),
        required: true,
        ..FieldSpec::default()
    };
    let mut implied = compile_fields(&IndexMap::from([(kind_field.to_owned(), spec)]), parent, "")?;
    implied.append(fields);
    *fields = implied;
    Ok(())
}

/// Each variant's own fields, none of which may repeat a common one
/// (`common`). `parent` is the object's label, `key` where the variants are.
fn compile_variants(
    variants: &IndexMap<String, Option<VariantSpec>>,
    common: &IndexMap<String, FieldSpec>,
    kind_field: &str,
    parent: &str,
    key: &str,
) -> Result<Vec<Variant>, BuildError> {
    let mut compiled = Vec::with_capacity(variants.len());
    for (kind, variant) in variants {
        let variant = variant.clone().unwrap_or_default();
        let key = format!("{key}.{kind}.fields");
        for name in variant.fields.keys() {
            if *name == kind_field || common.contains_key(name) {
                return Err(BuildError::new(format!(
                    "variant `{kind}` repeats the field `{name}` of `fields`: a field is either common (`fields`) or a variant's own"
                ))
                .at_key(format!("{key}.{name}")));
            }
        }
        compiled.push(Variant {
            kind: kind.clone(),
            description: variant.description.clone(),
            fields: compile_fields(&variant.fields, parent, &key)?,
        });
    }
    Ok(compiled)
}

/// Compiles `fields:` (at the top, in a variant, or under an object field):
/// each rule with its label under `parent` (a label, `""` at the top). `key`
/// is where the map is in the contract, for error locations.
fn compile_fields(
    specs: &IndexMap<String, FieldSpec>,
    parent: &str,
    key: &str,
) -> Result<Vec<FieldRule>, BuildError> {
    let mut rules = Vec::with_capacity(specs.len());
    for (name, field) in specs {
        let label = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}.{name}")
        };
        let at = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        rules.push(compile_field(name, field, label, &at)?);
    }
    Ok(rules)
}

/// An object field's variants: its kind a member whose allowed values (its
/// `enum`, so that the check, the prompt's rule line and the schema say so)
/// are the variant names.
fn compile_field_variants(
    field: &FieldSpec,
    kind_field: &str,
    children: &mut Vec<FieldRule>,
    label: &str,
    at: &str,
) -> Result<Vec<Variant>, BuildError> {
    if field.variants.is_empty() {
        return Ok(Vec::new());
    }
    if field
        .fields
        .get(kind_field)
        .is_some_and(|k| k.one_of.is_some())
    {
        return Err(BuildError::new(format!(
            "field `{label}.{kind_field}` has `enum`, but its kinds are the names of `variants`: drop `enum`"
        ))
        .at_key(at));
    }
    imply_kind(children, kind_field, label)?;
    let kinds = field
        .variants
        .keys()
        .map(|k| Value::String(k.clone()))
        .collect();
    if let Some(kind) = children.iter_mut().find(|c| c.name == kind_field) {
        kind.spec.one_of = Some(kinds);
    }
    compile_variants(
        &field.variants,
        &field.fields,
        kind_field,
        label,
        &format!("{at}.variants"),
    )
}

/// One field's rule (`name` in its object, `label` as the prompt names it,
/// `at` its key in the contract), with its members', items' and variants'.
fn compile_field(
    name: &str,
    field: &FieldSpec,
    label: String,
    at: &str,
) -> Result<FieldRule, BuildError> {
    let fail = |message: String| Err(BuildError::new(message).at_key(at));
    let sentences = match field.sentences {
        None => None,
        Some(SentencesSpec::Exactly(n)) => Some((n, n)),
        Some(SentencesSpec::Range([a, b])) if a <= b => Some((a, b)),
        Some(SentencesSpec::Range([a, b])) => {
            return fail(format!(
                "field `{label}`: sentences [{a}, {b}] has min above max"
            ));
        }
    };
    if let (Some(min), Some(max)) = (field.min, field.max) {
        if min > max {
            return fail(format!("field `{label}`: min {min} is above max {max}"));
        }
    }
    if let (Some(min), Some(max)) = (field.min_items, field.max_items) {
        if min > max {
            return fail(format!(
                "field `{label}`: min_items {min} is above max_items {max}"
            ));
        }
    }
    let mut types = field
        .types
        .as_ref()
        .map(TypeSpec::to_vec)
        .unwrap_or_default();
    // A type listed twice counts once (a JSON Schema's `type` list must not
    // repeat one).
    let mut seen = Vec::with_capacity(types.len());
    types.retain(|t| {
        let first = !seen.contains(t);
        seen.push(*t);
        first
    });
    let allows = |wanted: JsonType| {
        types.is_empty() || types.contains(&wanted) || types.contains(&JsonType::Any)
    };
    let nested =
        !field.fields.is_empty() || field.additional_fields.is_some() || !field.variants.is_empty();
    if nested && !allows(JsonType::Object) {
        return fail(format!(
            "field `{label}` has `fields` or `variants`, but its type does not allow an object"
        ));
    }
    let listed = field.items.is_some()
        || field.min_items.is_some()
        || field.max_items.is_some()
        || field.unique_items;
    if listed && !allows(JsonType::Array) {
        return fail(format!(
            "field `{label}` has `items`, `min_items`, `max_items` or `unique_items`, but its type does not allow an array"
        ));
    }
    if field.kind_field.is_some() && field.variants.is_empty() {
        return fail(format!(
            "field `{label}` has `kind_field` but no `variants`"
        ));
    }
    let kind_field = field
        .kind_field
        .clone()
        .unwrap_or_else(|| "kind".to_owned());
    let mut children = compile_fields(&field.fields, &label, &format!("{at}.fields"))?;
    let variants = compile_field_variants(field, &kind_field, &mut children, &label, at)?;
    let item = compile_item(field, &label, at)?;
    let default = compile_default(field, &types, &label, at)?;
    let pattern = match &field.pattern {
        None => None,
        Some(_) if !allows(JsonType::String) => {
            return fail(format!(
                "field `{label}` has `pattern`, but its type does not allow a string: the pattern would never be checked"
            ));
        }
        Some(source) => Some(crate::text::regex(source).map_err(|err| {
            BuildError::new(format!(
                "field `{label}`: `pattern` is not a valid regular expression: {err}"
            ))
            .at_key(format!("{at}.pattern"))
        })?),
    };
    Ok(FieldRule {
        name: name.to_owned(),
        label,
        types,
        spec: field.clone(),
        sentences,
        children,
        item,
        variants,
        kind_field,
        default,
        pattern,
        enum_equality: EnumEquality::Value,
    })
}

/// The rule every item of an array field follows (`items:`), if it has one.
fn compile_item(
    field: &FieldSpec,
    label: &str,
    at: &str,
) -> Result<Option<Box<FieldRule>>, BuildError> {
    let Some(ItemSpec(spec)) = &field.items else {
        return Ok(None);
    };
    let at = format!("{at}.items");
    if spec.required {
        return Err(BuildError::new(format!(
            "the items of `{label}` have `required`: an item is there or not by the array's length (`min_items`)"
        ))
        .at_key(at));
    }
    if spec.default.is_some() {
        return Err(BuildError::new(format!(
            "the items of `{label}` have `default`: only a member of an object can be missing"
        ))
        .at_key(at));
    }
    Ok(Some(Box::new(compile_field(
        "",
        spec,
        format!("{label}[]"),
        &at,
    )?)))
}

/// A field's `default:`: only for an optional field, and of its type and
/// `enum`.
fn compile_default(
    field: &FieldSpec,
    types: &[JsonType],
    label: &str,
    at: &str,
) -> Result<Option<Json>, BuildError> {
    let Some(default) = &field.default else {
        return Ok(None);
    };
    let fail = |message: String| Err(BuildError::new(message).at_key(format!("{at}.default")));
    if field.required {
        return fail(format!(
            "field `{label}` is required and has a `default`: a missing required field is an error, so drop one of them"
        ));
    }
    let value = Json::from(default);
    if !types.is_empty() && !types.iter().any(|t| t.accepts(&value)) {
        return fail(format!(
            "the default of `{label}` is {}, but the field must be {}",
            crate::text::json_type_name(&value),
            types_phrase(types)
        ));
    }
    if let Some(allowed) = &field.one_of {
        if !allowed.iter().any(|a| validate::same_value(a, &value)) {
            let list: Vec<String> = allowed.iter().map(display_value).collect();
            return fail(format!(
                "the default of `{label}` is {default}, not one of its `enum` ({})",
                list.join(" | ")
            ));
        }
    }
    Ok(Some(value))
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

/// `1 item`, `3 items`.
fn items_phrase(n: usize) -> String {
    if n == 1 {
        "1 item".to_owned()
    } else {
        format!("{n} items")
    }
}
