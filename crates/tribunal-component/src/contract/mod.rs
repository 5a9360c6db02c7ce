//! The contract: the shape the model was asked to emit.
//!
//! One contract drives three things: the prompt's OUTPUT FORMAT block, a JSON
//! Schema for providers with structured output, and validation (the `contract`
//! postprocessor) of what came back, including the `may_emit` safety boundary and
//! the fallback values used when no JSON could be extracted.

use serde_json::{Map, Value};

use crate::component::BuildError;
use crate::extract::{MultipleValues, Tier};
use crate::json::{Json, Object};

mod compile;
mod conform;
mod from_schema;
pub use from_schema::{tools_from_file, ToolRules, ToolsFileError};
mod index;
pub use index::{Members, RuleId};
mod prompt;
mod schema;
mod spec;
use compile::{
    article, compile_fields, compile_ladder, compile_may_emit, compile_variants, display_value,
    imply_kind, items_phrase, sentences_phrase, types_phrase, variant_of,
};
pub use schema::{openai_strict, StrictSchemaError};
pub use spec::{
    ContractSpec, FieldSpec, ItemSpec, JsonType, Numbers, OnViolation, RepairMode, SentencesSpec,
    TypeSpec, VariantSpec,
};
mod place;
mod validate;
pub use place::{pointer_of, Last, Seg};
mod uniques;
pub use uniques::Uniques;

/// The ladder used when a pack does not configure one.
pub const DEFAULT_LADDER: [Tier; 4] = [Tier::Strict, Tier::Fence, Tier::Embedded, Tier::Repair];

/// The instruction line printed under `OUTPUT FORMAT` unless the contract sets its own.
pub const DEFAULT_INSTRUCTIONS: &str =
    "Reply with a single JSON object and nothing else — no prose before or after.";

/// Key added to fallback JSON so a run can count non-compliant outputs.
pub const RAW_FALLBACK_KEY: &str = "_raw_fallback";

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
