//! Checking extracted JSON against the contract: required fields, types,
//! allowed values, sentence counts, the kind field and its coercion.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::json::{escape_pointer, Json, Object};

use crate::codes;
use crate::decimal;
use crate::report::Issue;
use crate::text::{count_sentences_with, json_type_name as type_name};

use super::place::{with_place, Last, Place, Seg};
use super::uniques::Uniques;
use super::{
    article, display_value, items_phrase, sentences_phrase, types_phrase, Contract, EnumEquality,
    FieldRule, OnViolation, Variant, RAW_FALLBACK_KEY,
};

impl Contract {
    /// Validates `json` against the contract. Returns the issues and, when the
    /// kind was coerced, the corrected JSON.
    /// `output` is the raw text, to say where its JSON broke when none was read.
    pub fn validate(&self, json: &Json, output: &str) -> (Vec<Issue>, Option<Json>) {
        let mut issues = Vec::new();
        if let (Json::Array(items), false) = (json, self.variants.is_empty()) {
            self.validate_list(items, &mut issues);
            return (issues, None);
        }
        let Json::Object(object) = json else {
            let message = if json.is_null() {
                match crate::extract::parse_failure(output) {
                    Some(why) => format!("the output's JSON could not be read: {why}"),
                    None => "the output contains no JSON object".to_owned(),
                }
            } else {
                format!("expected a JSON object, got {}", type_name(json))
            };
            issues.push(
                Issue::error("", message)
                    .at("")
                    .code(codes::CONTRACT_NOT_AN_OBJECT),
            );
            return (issues, None);
        };
        self.check_root(object, Place::Root, &mut issues);
        let coerced = self.coerce_kind(object, &mut issues);
        (issues, coerced)
    }

    /// An object judged as an output (its kind's fields, no other members
    /// where the contract takes none), at `place`.
    fn check_root(&self, object: &Object, place: Place<'_>, issues: &mut Vec<Issue>) {
        let shape = Shape::of(&self.fields, &self.variants, &self.kind_field, object);
        self.check_members(&shape.rules, object, place, issues);
        if !self.additional_fields {
            check_no_other_members(&shape.known(), object, place, issues);
        }
    }

    /// An output that is a list, under a contract of variants: each item an
    /// object of a kind (parallel tool calls, several events), judged as an
    /// output of its own at `/i`. An empty list is no output.
    fn validate_list(&self, items: &[Json], issues: &mut Vec<Issue>) {
        if items.is_empty() {
            issues.push(
                Issue::error(
                    "",
                    "expected a JSON object, or a list of them, got an empty array",
                )
                .at("")
                .code(codes::CONTRACT_NOT_AN_OBJECT),
            );
        }
        for (index, item) in items.iter().enumerate() {
            let place = Place::Item(&Place::Root, index);
            if let Some((name, at)) = self.api_call_name(item, index) {
                // A call as an API writes it: its tool is a kind; its
                // arguments are `tool_calls`' to judge (`arguments: contract`).
                let known = self.may_emit.as_deref().unwrap_or_default();
                match name {
                    Json::String(name) if known.iter().any(|k| k == name) => {}
                    Json::String(name) => issues.push(self.kind_not_allowed(name, at)),
                    _ => issues.push(
                        Issue::error("", format!("item {index}: the call has no tool name"))
                            .at(at)
                            .code(codes::CONTRACT_TYPE),
                    ),
                }
                continue;
            }
            match item {
                Json::Object(object) => {
                    let before = issues.len();
                    self.check_root(object, place, issues);
                    // A list is judged as written: a kind not allowed is
                    // rejected, never replaced.
                    if let Some((kind, _)) = self.disallowed_kind(object) {
                        let at = format!("/{index}/{}", escape_pointer(&self.kind_field));
                        issues.push(self.kind_not_allowed(kind, at));
                    }
                    for issue in &mut issues[before..] {
                        issue.message = format!("item {index}: {}", issue.message);
                    }
                }
                other => issues.push(
                    Issue::error(
                        "",
                        format!(
                            "item {index}: expected a JSON object, got {}",
                            type_name(other)
                        ),
                    )
                    .at(place.pointer())
                    .code(codes::CONTRACT_NOT_AN_OBJECT),
                ),
            }
        }
    }

    /// Checks the members of `object` (at `place`) that `fields` describe (a
    /// missing required one is an issue at its path).
    fn check_members(
        &self,
        fields: &[&FieldRule],
        object: &Object,
        place: Place<'_>,
        issues: &mut Vec<Issue>,
    ) {
        for field in fields {
            let at = Place::Member(&place, &field.name);
            match object.get(&field.name) {
                None => {
                    if field.spec.required {
                        issues.push(
                            Issue::error("", format!("missing required field `{}`", at.label()))
                                .at(at.pointer())
                                .code(codes::CONTRACT_MISSING_FIELD),
                        );
                    }
                }
                Some(value) => self.check_field(field, value, at, issues),
            }
        }
    }

    /// Checks `value`, at `place`, against `field`: its type, then its other
    /// rules, its members, its items.
    fn check_field(
        &self,
        field: &FieldRule,
        value: &Json,
        place: Place<'_>,
        issues: &mut Vec<Issue>,
    ) {
        let mut fail = |code: &'static str, message: String| {
            issues.push(Issue::error("", message).at(place.pointer()).code(code));
        };
        let strict = self.numbers.strict;
        if !field.types.is_empty() && !field.types.iter().any(|t| t.accepts_as(value, strict)) {
            let (wanted, got) = (types_phrase(&field.types), type_name(value));
            // An item of the wrong type keeps the code `items: TYPE` always had.
            let code = if matches!(place, Place::Item(..)) {
                codes::CONTRACT_ITEM
            } else {
                codes::CONTRACT_TYPE
            };
            fail(
                code,
                format!("`{}` must be {wanted}, got {got}", place.label()),
            );
            return;
        }
        let spec = &field.spec;
        if let Json::Number(number) = value {
            // The number as written, compared exactly (no finite number
            // escapes a bound by being beyond a double, or rounded to one).
            let text = number.as_str();
            let below = |min: &f64| decimal::compare_f64(text, *min) == Some(Ordering::Less);
            if let Some(min) = spec.min.filter(below) {
                let name = place.label();
                fail(
                    codes::CONTRACT_RANGE,
                    format!("`{name}` must be at least {min}, got {}", shown(number)),
                );
            }
            let above = |max: &f64| decimal::compare_f64(text, *max) == Some(Ordering::Greater);
            if let Some(max) = spec.max.filter(above) {
                let name = place.label();
                fail(
                    codes::CONTRACT_RANGE,
                    format!("`{name}` must be at most {max}, got {}", shown(number)),
                );
            }
            if self.numbers.finite && !decimal::fits_f64(text) {
                let name = place.label();
                fail(
                    codes::CONTRACT_RANGE,
                    format!(
                        "`{name}` must be a finite number a double holds (`numbers: finite`), got {text}"
                    ),
                );
            }
        }
        if let Some(allowed) = &spec.one_of {
            if !allowed
                .iter()
                .any(|a| enum_holds(a, value, strict, &field.enum_equality))
            {
                let list: Vec<String> = allowed.iter().map(display_value).collect();
                let name = place.label();
                fail(
                    codes::CONTRACT_ONE_OF,
                    format!("`{name}` must be one of: {}, got {value}", list.join(" | ")),
                );
            }
        }
        if let Some(length) = length_of(value) {
            length_issues(field, length, place, &mut fail);
        }
        if let (Some(pattern), Json::String(text)) = (&field.pattern, value) {
            if !pattern.is_match(text) {
                let name = place.label();
                fail(
                    codes::CONTRACT_PATTERN,
                    format!(
                        "`{name}` must match the pattern `{}`, got {value}",
                        pattern.as_str()
                    ),
                );
            }
        }
        if let (Some((lo, hi)), Json::String(text)) = (field.sentences, value) {
            let count = count_sentences_with(text, &self.sentence_abbreviations);
            if count < lo || count > hi {
                let name = place.label();
                fail(
                    codes::CONTRACT_SENTENCES,
                    format!("`{name}` must be {}, got {count}", sentences_phrase(lo, hi)),
                );
            }
        }
        match value {
            Json::Array(items) => self.check_items(field, items, place, issues),
            Json::Object(members) => self.check_object(field, members, place, issues),
            _ => {}
        }
    }

    /// An array field's item count, uniqueness and items (`items:`).
    fn check_items(
        &self,
        field: &FieldRule,
        items: &[Json],
        place: Place<'_>,
        issues: &mut Vec<Issue>,
    ) {
        let spec = &field.spec;
        item_count_issues(field, items.len(), place, &mut |code, message| {
            issues.push(Issue::error("", message).at(place.pointer()).code(code));
        });
        if spec.unique_items {
            let mut uniques = Uniques::default();
            for (later, item) in items.iter().enumerate() {
                if let Some(first) = uniques.add(Cow::Borrowed(item)) {
                    issues.push(repeated_item(place, later, first));
                }
            }
        }
        if let Some(rule) = &field.item {
            for (index, item) in items.iter().enumerate() {
                self.check_field(rule, item, Place::Item(&place, index), issues);
            }
        }
    }

    /// An object field's `values:` type, members, variant and unexpected members.
    fn check_object(
        &self,
        field: &FieldRule,
        members: &Object,
        place: Place<'_>,
        issues: &mut Vec<Issue>,
    ) {
        if let Some(expected) = field.spec.values {
            for (key, item) in members {
                if !expected.accepts_as(item, self.numbers.strict) {
                    let at = Place::Member(&place, key);
                    let what = format!("{}, got {}", article(expected.as_str()), type_name(item));
                    issues.push(
                        Issue::error("", format!("`{}` must be {what}", at.label()))
                            .at(at.pointer())
                            .code(codes::CONTRACT_ITEM),
                    );
                }
            }
        }
        let shape = Shape::of(&field.children, &field.variants, &field.kind_field, members);
        self.check_members(&shape.rules, members, place, issues);
        if field.spec.additional_fields == Some(false) {
            check_no_other_members(&shape.known(), members, place, issues);
        }
    }

    fn coerce_kind(&self, object: &Object, issues: &mut Vec<Issue>) -> Option<Json> {
        let (kind, may_emit) = self.disallowed_kind(object)?;
        let at = format!("/{}", escape_pointer(&self.kind_field));
        if self.on_violation == OnViolation::Reject {
            issues.push(self.kind_not_allowed(kind, at));
            return None;
        }
        let replacement = self.fallback_kind()?;
        issues.push(
            Issue::error(
                "",
                format!(
                    "{} \"{kind}\" is not allowed ({}: {}); replaced with \"{replacement}\"",
                    self.kind_field,
                    self.kinds_key(),
                    may_emit.join(" | ")
                ),
            )
            .at(at)
            .code(codes::CONTRACT_KIND_REPLACED),
        );
        let mut fixed = object.clone();
        fixed.insert(self.kind_field.as_str(), Json::from(replacement));
        Some(Json::Object(fixed))
    }
}

impl Contract {
    /// The tool name of a list item that is a call as an API writes it (an
    /// OpenAI Chat `tool_calls` item, an Anthropic `tool_use` block, an OpenAI
    /// Responses `function_call`), and its path; `None` for any other item,
    /// and for one whose `type` is a kind of the contract's own.
    fn api_call_name<'i>(&self, item: &'i Json, index: usize) -> Option<(&'i Json, String)> {
        let kind = item.get("type").and_then(Json::as_str)?;
        if self.variants.iter().any(|variant| variant.kind == kind) {
            return None;
        }
        match kind {
            "function" => Some((
                item.get("function")?.get("name").unwrap_or(&Json::Null),
                format!("/{index}/function/name"),
            )),
            "tool_use" | "function_call" => Some((
                item.get("name").unwrap_or(&Json::Null),
                format!("/{index}/name"),
            )),
            _ => None,
        }
    }

    /// The kind of `object` when it is one the contract does not allow, with
    /// the kinds it does.
    fn disallowed_kind<'o>(&'o self, object: &'o Object) -> Option<(&'o str, &'o [String])> {
        let may_emit = self.may_emit.as_ref()?;
        let Json::String(kind) = object.get(&self.kind_field)? else {
            return None;
        };
        (!may_emit.iter().any(|m| m == kind)).then_some((kind.as_ref(), may_emit.as_slice()))
    }

    /// `contract.kind-not-allowed` for `kind`, at `at`.
    fn kind_not_allowed(&self, kind: &str, at: String) -> Issue {
        let may_emit = self.may_emit.as_deref().unwrap_or_default();
        Issue::error(
            "",
            format!(
                "{} \"{kind}\" is not allowed ({}: {})",
                self.kind_field,
                self.kinds_key(),
                may_emit.join(" | ")
            ),
        )
        .at(at)
        .code(codes::CONTRACT_KIND_NOT_ALLOWED)
    }
}

/// The issue of an array's item `later` (in the array at `place`) that
/// equals its item `first`.
fn repeated_item(place: Place<'_>, later: usize, first: usize) -> Issue {
    let at = Place::Item(&place, later);
    Issue::error(
        "",
        format!(
            "`{}` repeats `{}` (unique_items)",
            at.label(),
            Place::Item(&place, first).label()
        ),
    )
    .at(at.pointer())
    .code(codes::CONTRACT_UNIQUE_ITEMS)
}

/// Equality for `enum`: [`decimal::equal_values`] (numbers by their exact
/// value, 2 == 2.0 == 2e0, 1 != 1.0000000000000000000001; members in any
/// order), without converting a listed scalar.
pub(super) fn same_value(a: &serde_json::Value, b: &Json) -> bool {
    match (a, b) {
        (serde_json::Value::Number(x), Json::Number(y)) => decimal::equal(x.as_str(), y.as_str()),
        (serde_json::Value::Array(_) | serde_json::Value::Object(_), _) => {
            decimal::equal_values(&a.into(), b)
        }
        _ => a == b,
    }
}

/// Whether `value` is the listed `allowed` for `enum`, compared as the rule
/// says, and under `numbers: strict` not a fraction where an integer is listed.
fn enum_holds(
    allowed: &serde_json::Value,
    value: &Json,
    strict: bool,
    equality: &EnumEquality,
) -> bool {
    let equal = match equality {
        EnumEquality::Value => same_value(allowed, value),
        EnumEquality::Exact => crate::text::exact_match(&allowed.into(), value),
        EnumEquality::Normalized(normalized) => normalized.equal(&allowed.into(), value),
    };
    equal && !(strict && strict_against(allowed, value))
}

/// [`decimal::strict_mismatch`] of a listed value.
fn strict_against(allowed: &serde_json::Value, value: &Json) -> bool {
    match (allowed, value) {
        (serde_json::Value::Number(x), Json::Number(y)) => {
            decimal::written_as_integer(x.as_str()) && !decimal::written_as_integer(y.as_str())
        }
        (serde_json::Value::Array(_) | serde_json::Value::Object(_), _) => {
            decimal::strict_mismatch(&allowed.into(), value)
        }
        _ => false,
    }
}

/// A number as a message shows it: as a double prints it when that is its
/// exact value (`1.5`, `3` for `3.0`), else as written (`1e400`,
/// `1.0000000000000000000001`).
fn shown(number: &crate::json::Number) -> String {
    match number.as_f64() {
        Some(float) if decimal::compare_f64(number.as_str(), float) == Some(Ordering::Equal) => {
            float.to_string()
        }
        _ => number.as_str().to_owned(),
    }
}

/// The length `min_length` and `max_length` bound: characters of a string,
/// items of an array, members of an object.
fn length_of(value: &Json) -> Option<usize> {
    match value {
        Json::String(s) => Some(s.chars().count()),
        Json::Array(a) => Some(a.len()),
        Json::Object(o) => Some(o.len()),
        _ => None,
    }
}

/// `min_length` and `max_length` of a value of `length` (characters, items or members).
fn length_issues(
    field: &FieldRule,
    length: usize,
    place: Place<'_>,
    fail: &mut dyn FnMut(&'static str, String),
) {
    let spec = &field.spec;
    if let Some(min) = spec.min_length.filter(|min| length < *min) {
        let name = place.label();
        fail(
            codes::CONTRACT_LENGTH,
            format!("`{name}` must have a length of at least {min}, got {length}"),
        );
    }
    if let Some(max) = spec.max_length.filter(|max| length > *max) {
        let name = place.label();
        fail(
            codes::CONTRACT_LENGTH,
            format!("`{name}` must have a length of at most {max}, got {length}"),
        );
    }
}

/// `min_items` and `max_items` of an array of `count` items.
fn item_count_issues(
    field: &FieldRule,
    count: usize,
    place: Place<'_>,
    fail: &mut dyn FnMut(&'static str, String),
) {
    let spec = &field.spec;
    if let Some(min) = spec.min_items.filter(|min| count < *min) {
        let name = place.label();
        fail(
            codes::CONTRACT_LENGTH,
            format!(
                "`{name}` must have at least {}, got {count}",
                items_phrase(min)
            ),
        );
    }
    if let Some(max) = spec.max_items.filter(|max| count > *max) {
        let name = place.label();
        fail(
            codes::CONTRACT_LENGTH,
            format!(
                "`{name}` must have at most {}, got {count}",
                items_phrase(max)
            ),
        );
    }
}

/// With `additional_fields: false`: each member of `object` (at `place`)
/// that `fields` do not list is an issue at its path.
fn check_no_other_members(
    fields: &[&FieldRule],
    object: &Object,
    place: Place<'_>,
    issues: &mut Vec<Issue>,
) {
    for key in object.keys() {
        if key != RAW_FALLBACK_KEY && !fields.iter().any(|f| &f.name == key) {
            let at = Place::Member(&place, key);
            issues.push(
                Issue::error("", format!("unexpected field `{}`", at.label()))
                    .at(at.pointer())
                    .code(codes::CONTRACT_UNEXPECTED_FIELD),
            );
        }
    }
}

/// The rules for the members of one object: the common fields and those of
/// the variant its kind selects.
pub(super) struct Shape<'r> {
    /// The common fields, then the variant's own.
    pub rules: Vec<&'r FieldRule>,
    common: &'r [FieldRule],
    variants: &'r [Variant],
    variant: Option<&'r Variant>,
}

impl<'r> Shape<'r> {
    pub fn of(
        common: &'r [FieldRule],
        variants: &'r [Variant],
        kind_field: &str,
        object: &Object,
    ) -> Self {
        let variant = super::variant_of(variants, kind_field, object);
        let own = variant.map_or(&[][..], |v| v.fields.as_slice());
        Self {
            rules: common.iter().chain(own).collect(),
            common,
            variants,
            variant,
        }
    }

    /// The variant the object's kind selects.
    pub fn variant(&self) -> Option<&'r Variant> {
        self.variant
    }

    /// The members `additional_fields: false` allows: the rules' names, or,
    /// for a kind outside the variants, those of every variant (the kind is
    /// reported once, at the kind, not every member some variant has as
    /// "unexpected" on top of it).
    pub fn known(&self) -> Vec<&'r FieldRule> {
        if self.variant.is_none() && !self.variants.is_empty() {
            let every = self.variants.iter().flat_map(|v| &v.fields);
            self.common.iter().chain(every).collect()
        } else {
            self.rules.clone()
        }
    }
}

/// The checks a streaming session runs as values complete: the same checks,
/// with the same messages, codes and paths as [`Contract::validate`], on one
/// value at a time.
impl Contract {
    /// `value`, at `path`, against `rule`: the checks of a whole value (for a
    /// container: its members and items too).
    pub fn check_value_at(
        &self,
        rule: &FieldRule,
        value: &Json,
        path: &[Seg],
        last: Option<Last<'_>>,
    ) -> Vec<Issue> {
        let mut issues = Vec::new();
        self.check_value_into(rule, value, path, last, &mut issues);
        issues
    }

    /// [`Contract::check_value_at`], its issues added to `issues`.
    pub fn check_value_into(
        &self,
        rule: &FieldRule,
        value: &Json,
        path: &[Seg],
        last: Option<Last<'_>>,
        issues: &mut Vec<Issue>,
    ) {
        with_place(path, last, &mut |place| {
            self.check_field(rule, value, place, issues);
        });
    }

    /// The type check alone of a container value that has just opened (an
    /// object when `object`, else an array), at `path`.
    pub fn container_type_at(
        &self,
        rule: &FieldRule,
        object: bool,
        path: &[Seg],
        last: Option<Last<'_>>,
    ) -> Option<Issue> {
        let empty = if object {
            Json::Object(Object::new())
        } else {
            Json::Array(Vec::new())
        };
        if rule.types.is_empty() || rule.types.iter().any(|t| t.accepts(&empty)) {
            return None;
        }
        // The type check comes first and ends `check_field` when it fails.
        let issues = self.check_value_at(rule, &empty, path, last);
        issues.into_iter().next()
    }

    /// `key`, a member of the object at `path` whose members `known` are, when
    /// the object takes no other members.
    /// The issue of the item `later` of the array at `path` that equals its
    /// item `first` (`unique_items`).
    pub fn repeated_item_at(&self, path: &[Seg], later: usize, first: usize) -> Issue {
        with_place(path, None, &mut |place| repeated_item(place, later, first))
    }

    pub fn unexpected_member_at(&self, key: &str, path: &[Seg]) -> Issue {
        with_place(path, Some(Last::Member(key)), &mut |at| {
            Issue::error("", format!("unexpected field `{}`", at.label()))
                .at(at.pointer())
                .code(codes::CONTRACT_UNEXPECTED_FIELD)
        })
    }

    /// A container's own counts, at `path`: its length (`min_length`,
    /// `max_length`: items or members) and, for an array, `min_items` and
    /// `max_items`.
    pub fn counts_at(
        &self,
        rule: &FieldRule,
        length: usize,
        array: bool,
        path: &[Seg],
    ) -> Vec<Issue> {
        with_place(path, None, &mut |place| {
            let mut issues = Vec::new();
            let mut fail = |code: &'static str, message: String| {
                issues.push(Issue::error("", message).at(place.pointer()).code(code));
            };
            length_issues(rule, length, place, &mut fail);
            if array {
                item_count_issues(rule, length, place, &mut fail);
            }
            issues
        })
    }

    /// A required member `name` the object at `path` does not have.
    pub fn missing_member_at(&self, name: &str, path: &[Seg]) -> Issue {
        with_place(path, Some(Last::Member(name)), &mut |at| {
            Issue::error("", format!("missing required field `{}`", at.label()))
                .at(at.pointer())
                .code(codes::CONTRACT_MISSING_FIELD)
        })
    }

    /// The kind check of the top-level object, once its kind is known.
    /// The kind the contract writes in place of `kind` at the top level, when
    /// it replaces it (`may_emit` with `on_violation: replace`).
    pub fn replaced_kind(&self, kind: &str) -> Option<String> {
        let mut object = Object::new();
        object.insert(self.kind_field.as_str(), Json::from(kind));
        let coerced = self.coerce_kind(&object, &mut Vec::new())?;
        coerced[self.kind_field.as_str()]
            .as_str()
            .map(str::to_owned)
    }

    pub fn kind_issues(&self, kind: &str) -> Vec<Issue> {
        let mut object = Object::new();
        object.insert(self.kind_field.as_str(), Json::from(kind));
        let mut issues = Vec::new();
        let _ = self.coerce_kind(&object, &mut issues);
        issues
    }
}
