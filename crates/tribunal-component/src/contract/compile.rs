//! Compiling a contract's fields, variants, ladder and `may_emit` from their
//! spec, and the phrases its messages use.

use indexmap::IndexMap;
use serde_json::Value;

use super::{
    validate, ContractSpec, EnumEquality, FieldRule, FieldSpec, ItemSpec, JsonType, SentencesSpec,
    TypeSpec, Variant, VariantSpec, DEFAULT_LADDER,
};
use crate::component::BuildError;
use crate::extract::Tier;
use crate::json::{Json, Object};

/// The extraction ladder without its `fallback` tier, which must come last
/// and needs a `fallback:` template.
pub(super) fn compile_ladder(spec: &ContractSpec) -> Result<Vec<Tier>, BuildError> {
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
pub(super) fn compile_may_emit(
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
pub(super) fn check_kind_field(
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
pub(super) fn variant_of<'v>(
    variants: &'v [Variant],
    kind_field: &str,
    object: &Object,
) -> Option<&'v Variant> {
    let kind = object.get(kind_field)?.as_str()?;
    variants.iter().find(|v| v.kind == kind)
}

/// With variants, the kind selects the variant: a required string, listed
/// first when `fields` does not list it. `parent` is the object's label.
pub(super) fn imply_kind(
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
pub(super) fn compile_variants(
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
pub(super) fn compile_fields(
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
pub(super) fn compile_field_variants(
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
pub(super) fn compile_field(
    name: &str,
    field: &FieldSpec,
    label: String,
    at: &str,
) -> Result<FieldRule, BuildError> {
    let fail = |message: String| Err(BuildError::new(message).at_key(at));
    let sentences = field_bounds(field, &label, at)?;
    let types = field_types(field);
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

/// A field's `sentences` as (min, max), once its bounds are checked: none
/// above the max it goes with.
fn field_bounds(
    field: &FieldSpec,
    label: &str,
    at: &str,
) -> Result<Option<(usize, usize)>, BuildError> {
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
    Ok(sentences)
}

/// A field's types (`type:`), each once: a type listed twice counts once (a
/// JSON Schema's `type` list must not repeat one).
fn field_types(field: &FieldSpec) -> Vec<JsonType> {
    let mut types = field
        .types
        .as_ref()
        .map(TypeSpec::to_vec)
        .unwrap_or_default();
    let mut seen = Vec::with_capacity(types.len());
    types.retain(|t| {
        let first = !seen.contains(t);
        seen.push(*t);
        first
    });
    types
}

/// The rule every item of an array field follows (`items:`), if it has one.
pub(super) fn compile_item(
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
pub(super) fn compile_default(
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

pub(super) fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn article(name: &str) -> String {
    match name {
        "null" | "any" => name.to_owned(),
        n if n.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {n}"),
        n => format!("a {n}"),
    }
}

pub(super) fn types_phrase(types: &[JsonType]) -> String {
    let names: Vec<String> = types.iter().map(|t| article(t.as_str())).collect();
    names.join(" or ")
}

pub(super) fn number_word(n: usize) -> String {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| (*w).to_owned())
}

pub(super) fn sentences_phrase(lo: usize, hi: usize) -> String {
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
pub(super) fn items_phrase(n: usize) -> String {
    if n == 1 {
        "1 item".to_owned()
    } else {
        format!("{n} items")
    }
}
