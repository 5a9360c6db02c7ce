//! `json_compare` (metric): compares the top-level keys of the extracted JSON
//! (the AIO) with the ground truth (`expected`, the GT) in four phases —
//! key buckets, completeness, hallucination, accuracy with per-field strategies — and
//! scores the weighted Response Quality Score (RQS).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::json::{escape_pointer, Json, Object as Members};

use super::strategy_names::{NormalizeSpec, Resolved, Resolver};
use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, EvalError, Kind, Metric, MetricOutput,
};
use crate::contract::RAW_FALLBACK_KEY;
use crate::json_write::{self, field, Object};
use crate::report::{Details, ErrorKind, Issue};
use crate::strategy::{Exact, Semantic};
use crate::text::{is_python_space, json_type_name as type_name, short_numbers};

pub const BUILTIN: Builtin = Builtin {
    name: "json_compare",
    kind: Kind::Metric,
    summary: "Compares extracted JSON with the ground truth: completeness, hallucination, accuracy and the response quality score (RQS)",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied (skipped): it scores the final answer",
    },
    docs: include_str!("../../../../docs/builtins/json_compare.md"),
    build,
};

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct Config {
    field_strategies: Option<Value>,
    fuzzy_threshold: Option<f64>,
    semantic_threshold: Option<f64>,
    thresholds: BTreeMap<String, f64>,
    /// The characters `NORMALIZED` removes besides whitespace.
    normalize: Option<NormalizeSpec>,
    weights: Weights,
    safety_metric: Option<String>,
    /// Strategy auto-detection gives plain-text strings (default `semantic`).
    text_strategy: Option<String>,
    /// Sentence-embedding model folder for `semantic` (relative to the manifest).
    model: Option<String>,
    /// A record without `expected`: `error` (the default) or `skip` (the
    /// metric does not apply; its weight leaves the record's score).
    when_no_expected: WhenNoExpected,
}

/// `when_no_expected:` — what a record without `expected` is to `json_compare`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum WhenNoExpected {
    /// The record is `ERROR`: it needed ground truth.
    #[default]
    Error,
    /// The metric is skipped for the record.
    Skip,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Weights {
    accuracy: f64,
    completeness: f64,
    hallucination: f64,
    safety: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            accuracy: 0.45,
            completeness: 0.25,
            hallucination: 0.15,
            safety: 0.15,
        }
    }
}

/// (expected, actual) value pairs a strategy is prepared for.
type Pairs<'v> = Vec<(&'v Json, &'v Json)>;

#[derive(Debug)]
struct JsonCompare {
    component: String,
    field_strategies: HashMap<String, Resolved>,
    auto_exact: Resolved,
    auto_semantic: Resolved,
    weights: Weights,
    safety_metric: Option<String>,
    /// Whether any strategy this metric can use wants [`Strategy::prepare`].
    prepares: bool,
    when_no_expected: WhenNoExpected,
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(ctx.name, config)?;
    let resolver = Resolver::new(ctx, ctx.name, config.model.as_deref())?
        .with_thresholds(
            &config.thresholds,
            &[
                ("fuzzy", "fuzzy_threshold", config.fuzzy_threshold),
                ("semantic", "semantic_threshold", config.semantic_threshold),
            ],
        )?
        .with_normalize(config.normalize.as_ref());
    let weights = config.weights;
    check_weights(&weights, &resolver)?;
    let field_strategies = field_strategies(config.field_strategies, ctx, &resolver)?;
    let text_strategy = config
        .text_strategy
        .as_deref()
        .unwrap_or("semantic")
        .to_lowercase();
    if text_strategy == "ignore" || ctx.strategies.get(&text_strategy).is_none() {
        let mut error = resolver.error(
            format_args!("`text_strategy`: unknown or unusable strategy `{text_strategy}`"),
            "text_strategy",
        );
        error.suggestion = crate::suggest::nearest(&text_strategy, ctx.strategies.names());
        return Err(error);
    }
    if let Some(metric) = &config.safety_metric {
        if metric.is_empty() {
            return Err(resolver.error("`safety_metric` must name a metric", "safety_metric"));
        }
        // Its score must exist when this metric runs: a metric earlier in
        // the pipeline (known at load), not a misspelt or later one.
        if let Some(before) = ctx.metrics_before {
            if !before.iter().any(|m| m == metric) {
                let mut error = resolver.error(
                    format_args!(
                        "`safety_metric` names `{metric}`, which is not a metric that runs before `{}` in the pipeline: its score would never exist",
                        ctx.name
                    ),
                    "safety_metric",
                );
                error.value = Some(metric.clone());
                error.suggestion = crate::suggest::nearest(metric, before.iter());
                return Err(error);
            }
        }
    }
    let auto_semantic = resolver.builtin(
        &text_strategy,
        Arc::new(Semantic::new(ctx.models.model(None))),
    );
    let prepares = auto_semantic.strategy.wants_prepare()
        || field_strategies
            .values()
            .any(|r| r.strategy.wants_prepare());
    Ok(Compiled::Metric(Arc::new(JsonCompare {
        component: ctx.name.to_owned(),
        field_strategies,
        auto_exact: resolver.builtin("exact", Arc::new(Exact)),
        auto_semantic,
        weights,
        safety_metric: config.safety_metric,
        prepares,
        when_no_expected: config.when_no_expected,
    })))
}

/// Every weight is a finite number >= 0.
fn check_weights(weights: &Weights, resolver: &Resolver<'_>) -> Result<(), BuildError> {
    for (key, value) in [
        ("weights.accuracy", weights.accuracy),
        ("weights.completeness", weights.completeness),
        ("weights.hallucination", weights.hallucination),
        ("weights.safety", weights.safety),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(resolver.error(
                format_args!("`{key}` must be a finite number >= 0, got {value}"),
                key,
            ));
        }
    }
    Ok(())
}

/// Reads `field_strategies` (inline map or JSON file) and resolves every name once.
fn field_strategies(
    config: Option<Value>,
    ctx: &BuildCtx<'_>,
    resolver: &Resolver<'_>,
) -> Result<HashMap<String, Resolved>, BuildError> {
    const KEY: &str = "field_strategies";
    // Values read from a file are quoted in errors only as a short excerpt, and not
    // at all from a file outside the pack.
    let mut quotable = true;
    let (map, file) = match config {
        None | Some(Value::Null) => return Ok(HashMap::new()),
        Some(Value::Object(map)) => (map, None),
        Some(Value::String(path)) => {
            let shown = ctx.resolve(&path).display().to_string();
            let text = ctx.read_text(&path).map_err(|err| {
                resolver.error(format_args!("cannot read field_strategies file: {err}"), KEY)
            })?;
            quotable = text.inside_pack;
            let value: Value = serde_json::from_str(&text.text).map_err(|err| {
                resolver.error(format_args!("field_strategies file `{shown}` is not valid JSON: {err}"), KEY)
            })?;
            let Value::Object(map) = value else {
                return Err(resolver.error(
                    format_args!(
                        "field_strategies file `{shown}` must hold a JSON object mapping field names to strategy names"
                    ),
                    KEY,
                ));
            };
            (map, Some(shown))
        }
        Some(_) => {
            return Err(resolver.error(
                "`field_strategies` must be a map of field names to strategy names, or the path of a JSON file holding one",
                KEY,
            ))
        }
    };
    let mut resolved = HashMap::with_capacity(map.len());
    for (field, value) in map {
        let field_shown = crate::files::redact_quotes(&format!("`{field}`"), quotable);
        let place = match &file {
            Some(file) => format!("field_strategies file `{file}`: field {field_shown}"),
            None => format!("field_strategies: field `{field}`"),
        };
        let key = if file.is_some() {
            KEY.to_owned()
        } else {
            format!("{KEY}.{field}")
        };
        let Value::String(name) = value else {
            return Err(resolver.error(
                format_args!(
                    "{place}: the strategy must be a name such as EXACT, FUZZY, SEMANTIC or IGNORE"
                ),
                &key,
            ));
        };
        let strategy = resolver.named(&name, (&place, &key), quotable)?;
        // The metric compares the output's top-level keys: one the contract
        // cannot hold would never get its strategy.
        super::required_fields::check_field_known(ctx, KEY, &field, &[&field])?;
        resolved.insert(field, strategy);
    }
    Ok(resolved)
}

/// The seed's `is_null`: `None`, `""` or whitespace only.
fn is_null(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::String(s) => s.chars().all(is_python_space),
        _ => false,
    }
}

static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([Tt ]([01][0-9]|2[0-3]):[0-5][0-9](:([0-5][0-9]|60)(\.[0-9]+)?)?([Zz]|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])?)?$",
    )
    .expect("valid date-time regex")
});

static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$").expect("valid e-mail regex"));

/// Strings auto-detection compares exactly: ISO-8601 dates / date-times and e-mails.
fn is_exact_text(text: &str) -> bool {
    let text = text.trim_matches(is_python_space);
    // What either pattern needs first, checked before it runs (most texts are
    // neither): a date starts with `YYYY-`, an e-mail has an `@`.
    let bytes = text.as_bytes();
    let may_be_date =
        bytes.len() >= 10 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-';
    let may_be_email = memchr::memchr(b'@', bytes).is_some();
    (may_be_date && DATE_TIME.is_match(text) && is_calendar_date(text))
        || (may_be_email && EMAIL.is_match(text))
}

/// Whether the `YYYY-MM-DD` the text starts with exists (no 30 February).
fn is_calendar_date(text: &str) -> bool {
    let number =
        |range: std::ops::Range<usize>| text.get(range).and_then(|t| t.parse::<u32>().ok());
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&day)
}

fn pointer(key: &str) -> String {
    format!("/{}", escape_pointer(key))
}

/// Up to this many configured field strategies are searched by comparing names.
const SCANNED_STRATEGIES: usize = 16;

impl JsonCompare {
    fn strategy_for(&self, key: &str, gt: &Json) -> &Resolved {
        // A few names are compared: hashing one (SipHash) costs more than
        // comparing it with a few others, most of which differ in length.
        let strategies = &self.field_strategies;
        let explicit = if strategies.len() <= SCANNED_STRATEGIES {
            strategies
                .iter()
                .find_map(|(name, resolved)| (name == key).then_some(resolved))
        } else {
            strategies.get(key)
        };
        if let Some(explicit) = explicit {
            return explicit;
        }
        match gt {
            Json::String(s) if !is_exact_text(s) => &self.auto_semantic,
            _ => &self.auto_exact,
        }
    }
}

impl Metric for JsonCompare {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    /// Hands every strategy that wants it the (GT, AIO) pairs of the batch's
    /// `both_non_null` fields it will compare (e.g. `semantic` embeds them at once).
    fn prepare(&self, records: &[Context<'_>]) {
        if !self.prepares {
            return;
        }
        let mut by_strategy: BTreeMap<&str, (&Resolved, Pairs<'_>)> = BTreeMap::new();
        for ctx in records {
            let (Json::Object(gt), Json::Object(aio)) = (ctx.expected, ctx.json) else {
                continue;
            };
            for (at, (key, gt_value)) in gt.iter().enumerate() {
                if is_null(gt_value) {
                    continue;
                }
                let Some(aio_value) = aio.get_near(key, at).filter(|v| !is_null(v)) else {
                    continue;
                };
                let resolved = self.strategy_for(key, gt_value);
                if resolved.strategy.wants_prepare() {
                    by_strategy
                        .entry(&resolved.name)
                        .or_insert_with(|| (resolved, Vec::new()))
                        .1
                        .push((gt_value, aio_value));
                }
            }
        }
        for (resolved, pairs) in by_strategy.into_values() {
            resolved.strategy.prepare(&pairs);
        }
    }

    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        if ctx.expected.is_null() && self.when_no_expected == WhenNoExpected::Skip {
            return Ok(MetricOutput::skip(
                "the record has no `expected` to compare with",
            ));
        }
        let gt = self.ground_truth(ctx)?;
        let safety = self.safety(ctx)?;
        let mut issues = Vec::new();
        let empty = Members::new();
        let aio = if let Json::Object(map) = ctx.json {
            map
        } else {
            issues.push(
                Issue::error("", "output has no JSON object to compare")
                    .code(codes::COMPARE_NO_JSON),
            );
            &empty
        };
        let mut buckets = Buckets::for_keys(gt.len());
        // Outputs usually follow the ground truth's order: each member is
        // looked for first at its own place.
        for (at, (key, gt_value)) in gt.iter().enumerate() {
            let aio_value = aio.get_near(key, at).filter(|v| !is_null(v));
            self.compare_field(key, gt_value, aio_value, ctx, &mut buckets, &mut issues)?;
        }
        // The engine's own fallback marker is not something the model said.
        let marker = ctx.extraction.raw_fallback.then_some(RAW_FALLBACK_KEY);
        for (at, key) in aio.keys().enumerate() {
            if Some(key.as_str()) != marker && gt.get_near(key, at).is_none() {
                buckets.extra_keys.push(key);
                issues.push(
                    Issue::warning("", format!("unexpected `{key}`"))
                        .at(pointer(key))
                        .code(codes::COMPARE_UNEXPECTED),
                );
            }
        }
        let (completeness, hallucination, accuracy) = buckets.phases(gt.len());
        // Phase 4: RQS, clamped like Python's `max(0.0, min(1.0, rqs))`.
        let w = self.weights;
        let rqs = (w.accuracy * accuracy) + (w.completeness * completeness) + (w.safety * safety)
            - (w.hallucination * hallucination);
        let rqs = if rqs < 1.0 { rqs } else { 1.0 };
        let rqs = if rqs > 0.0 { rqs } else { 0.0 };
        // Written as JSON text (a map per record, each key allocated and
        // hashed, cost more than the comparison itself).
        let mut details = Vec::with_capacity(256 + 128 * gt.len());
        let mut object = Object::open(&mut details);
        json_write::write_f64(field!(object, "completeness"), completeness);
        json_write::write_f64(field!(object, "hallucination"), hallucination);
        json_write::write_f64(field!(object, "accuracy"), accuracy);
        json_write::write_f64(field!(object, "safety"), safety);
        json_write::write_f64(field!(object, "rqs"), rqs);
        let mut lists = Object::open(field!(object, "buckets"));
        for (name, keys) in [
            ("extra_keys", &buckets.extra_keys),
            ("gt_null_aio_has_value", &buckets.gt_null_aio_has_value),
            ("gt_non_null", &buckets.gt_non_null),
            ("aio_missing_or_null", &buckets.aio_missing_or_null),
            ("both_non_null", &buckets.both_non_null),
        ] {
            json_write::write_array(lists.key(name), keys.iter().copied(), json_write::write_str);
        }
        lists.close();
        let mut fields = Object::open(field!(object, "fields"));
        for (key, strategy, compared) in &buckets.fields {
            let mut entry = Object::open(fields.key(key));
            json_write::write_str(field!(entry, "strategy"), strategy);
            if let Some((similarity, matched)) = compared {
                json_write::write_f64(field!(entry, "similarity"), *similarity);
                json_write::write_bool(field!(entry, "matched"), *matched);
            }
            entry.close();
        }
        fields.close();
        json_write::write_array(
            field!(object, "ignored"),
            buckets.ignored.iter().copied(),
            json_write::write_str,
        );
        object.close();
        let details = Details::written(details);
        Ok(MetricOutput {
            score: rqs,
            issues,
            details,
            skipped: None,
        })
    }
}

/// A compared field: its key, its strategy's name, and the similarity and
/// verdict when it was compared (not for `ignore`).
type FieldOutcome<'a> = (&'a str, &'a str, Option<(f64, bool)>);

/// Where each key of the ground truth and the output falls, as the seed's
/// buckets, and each compared field's result.
#[derive(Debug, Default)]
struct Buckets<'a> {
    extra_keys: Vec<&'a str>,
    gt_null_aio_has_value: Vec<&'a str>,
    gt_non_null: Vec<&'a str>,
    aio_missing_or_null: Vec<&'a str>,
    both_non_null: Vec<&'a str>,
    ignored: Vec<&'a str>,
    fields: Vec<FieldOutcome<'a>>,
    matched: usize,
}

impl Buckets<'_> {
    /// Buckets for a ground truth of `keys` keys: the lists most of them go
    /// to made once at their size (grown a push at a time they were nine
    /// allocations a record, 3% of a json-eval record's instructions).
    fn for_keys(keys: usize) -> Self {
        Self {
            gt_non_null: Vec::with_capacity(keys),
            both_non_null: Vec::with_capacity(keys),
            fields: Vec::with_capacity(keys),
            ..Self::default()
        }
    }

    /// Phases 1 to 3: completeness, hallucination and accuracy, for a ground
    /// truth of `gt_len` keys.
    fn phases(&self, gt_len: usize) -> (f64, f64, f64) {
        let completeness = if self.gt_non_null.is_empty() {
            1.0
        } else {
            self.both_non_null.len() as f64 / self.gt_non_null.len() as f64
        };
        let total_distinct = gt_len + self.extra_keys.len();
        let hallucination = if total_distinct == 0 {
            0.0
        } else {
            (self.extra_keys.len() + self.gt_null_aio_has_value.len()) as f64
                / total_distinct as f64
        };
        let scorable = self.both_non_null.len() - self.ignored.len();
        let accuracy = if scorable == 0 {
            1.0
        } else {
            self.matched as f64 / scorable as f64
        };
        (completeness, hallucination, accuracy)
    }
}

impl JsonCompare {
    /// The record's `expected`, which must be an object.
    fn ground_truth<'c>(&self, ctx: &Context<'c>) -> Result<&'c Members, EvalError> {
        let name = &self.component;
        match ctx.expected {
            Json::Object(map) => Ok(map),
            Json::Null => Err(EvalError::new(
                ErrorKind::Input,
                format!("{name} needs ground truth: the record has no `expected` (`when_no_expected: skip` leaves such records out of its score)"),
            )),
            other => Err(EvalError::new(
                ErrorKind::Input,
                format!(
                    "{name}: `expected` must be a JSON object, got {}",
                    type_name(other)
                ),
            )),
        }
    }

    /// The safety score: 1, or the score of `safety_metric`, which ran before.
    fn safety(&self, ctx: &Context<'_>) -> Result<f64, EvalError> {
        let name = &self.component;
        match &self.safety_metric {
            None => Ok(1.0),
            Some(metric) => ctx.scores.get(metric).copied().ok_or_else(|| {
                EvalError::new(ErrorKind::Internal, format!(
                    "{name}: safety_metric `{metric}` has no score: it must run before {name} in the pipeline"
                ))
            }),
        }
    }

    /// Puts one ground-truth key in its bucket and, when both sides have a
    /// value (`aio_value`: the output's, when it has one that is not null),
    /// compares them with the key's strategy.
    fn compare_field<'a>(
        &'a self,
        key: &'a str,
        gt_value: &Json,
        aio_value: Option<&Json>,
        ctx: &Context<'_>,
        buckets: &mut Buckets<'a>,
        issues: &mut Vec<Issue>,
    ) -> Result<(), EvalError> {
        if is_null(gt_value) {
            if aio_value.is_some() {
                buckets.gt_null_aio_has_value.push(key);
                issues.push(
                    Issue::warning("", format!("unexpected `{key}` (no value expected)"))
                        .at(pointer(key))
                        .code(codes::COMPARE_UNEXPECTED_VALUE),
                );
            }
            return Ok(());
        }
        buckets.gt_non_null.push(key);
        let Some(aio_value) = aio_value else {
            buckets.aio_missing_or_null.push(key);
            issues.push(
                Issue::warning("", format!("missing `{key}`"))
                    .at(pointer(key))
                    .code(codes::COMPARE_MISSING),
            );
            return Ok(());
        };
        buckets.both_non_null.push(key);
        let resolved = self.strategy_for(key, gt_value);
        if resolved.is_ignore() {
            buckets.ignored.push(key);
            buckets.fields.push((key, "ignore", None));
            return Ok(());
        }
        let similarity = resolved
            .strategy
            .compare(gt_value, aio_value, ctx)
            .map_err(|err| {
                err.within(format_args!(
                    "{}: field `{key}` ({} strategy)",
                    self.component, resolved.name
                ))
            })?;
        let matched = similarity >= resolved.threshold;
        if matched {
            buckets.matched += 1;
        } else {
            let (shown, threshold) = short_numbers(similarity, resolved.threshold);
            issues.push(
                Issue::warning(
                    "",
                    format!(
                        "`{key}` does not match the expected value ({} {shown} < {threshold})",
                        resolved.name,
                    ),
                )
                .at(pointer(key))
                .code(codes::COMPARE_MISMATCH),
            );
        }
        buckets
            .fields
            .push((key, &resolved.name, Some((similarity, matched))));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_support::Fixture;
    use crate::component::Strategy;
    use crate::report::Severity;
    use crate::strategy::StrategyRegistry;
    use serde_json::json;
    use std::path::Path;

    /// A stand-in for an embedding model: always the same similarity.
    #[derive(Debug)]
    struct Fixed(f64);

    impl Strategy for Fixed {
        fn compare(&self, _: &Json, _: &Json, _: &Context<'_>) -> Result<f64, EvalError> {
            Ok(self.0)
        }
    }

    fn registry_with_semantic(similarity: f64) -> Arc<StrategyRegistry> {
        let mut registry = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        registry.insert("semantic", Arc::new(Fixed(similarity)));
        Arc::new(registry)
    }

    fn build_with(
        config: &Value,
        registry: &Arc<StrategyRegistry>,
        base: &Path,
    ) -> Result<Arc<dyn Metric>, BuildError> {
        let files = crate::files::PackFiles::new(base, &[]).expect("the test's folder");
        let ctx = BuildCtx {
            name: "json_compare",
            base_dir: base,
            strategies: registry,
            contract: None,
            files: &files,
            models: crate::builtins::test_support::models(),
            warnings: None,
            metrics_before: None,
        };
        match build(config, &ctx)? {
            Compiled::Metric(m) => Ok(m),
            other => panic!("expected a metric, got {:?}", other.kind()),
        }
    }

    fn metric(config: &Value) -> Arc<dyn Metric> {
        build_with(config, &registry_with_semantic(0.88), Path::new(".")).expect("builds")
    }

    fn eval(
        metric: &Arc<dyn Metric>,
        json: Value,
        expected: Value,
    ) -> Result<MetricOutput, EvalError> {
        let fixture = Fixture::new("", json, expected);
        metric.evaluate(&fixture.ctx())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn seed_gt() -> Value {
        json!({
            "name": "John Smith",
            "email": "john@example.com",
            "bio": "Senior engineer with 10 years of experience...",
            "internal_id": null,
            "status": "active"
        })
    }

    fn seed_aio() -> Value {
        json!({
            "name": "John Smyth",
            "email": "john@example.com",
            "bio": "Experienced senior engineer, 10+ years...",
            "internal_id": "abc123",
            "extra_field": "surprise"
        })
    }

    #[test]
    fn seed_walkthrough() {
        let m = metric(&json!({"field_strategies": {"name": "FUZZY", "bio": "SEMANTIC"}}));
        let out = eval(&m, seed_aio(), seed_gt()).unwrap();
        let d = &out.details.to_value();
        assert!(close(d["completeness"].as_f64().unwrap(), 0.75));
        assert!(close(d["hallucination"].as_f64().unwrap(), 2.0 / 6.0));
        assert!(close(d["accuracy"].as_f64().unwrap(), 1.0));
        assert!(close(d["safety"].as_f64().unwrap(), 1.0));
        assert!(close(out.score, 0.7375), "{}", out.score);
        assert!(close(d["rqs"].as_f64().unwrap(), 0.7375));
        assert_eq!(
            d["buckets"],
            json!({
                "extra_keys": ["extra_field"],
                "gt_null_aio_has_value": ["internal_id"],
                "gt_non_null": ["name", "email", "bio", "status"],
                "aio_missing_or_null": ["status"],
                "both_non_null": ["name", "email", "bio"],
            })
        );
        assert_eq!(d["fields"]["name"]["strategy"], json!("fuzzy"));
        assert!(close(
            d["fields"]["name"]["similarity"].as_f64().unwrap(),
            0.9
        ));
        assert_eq!(
            d["fields"]["email"],
            json!({"strategy": "exact", "similarity": 1.0, "matched": true})
        );
        assert_eq!(
            d["fields"]["bio"],
            json!({"strategy": "semantic", "similarity": 0.88, "matched": true})
        );
        assert_eq!(d["ignored"], json!([]));
        let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "completeness",
                "hallucination",
                "accuracy",
                "safety",
                "rqs",
                "buckets",
                "fields",
                "ignored"
            ]
        );
        let issues: Vec<(&str, Option<&str>, Severity)> = out
            .issues
            .iter()
            .map(|i| (i.message.as_str(), i.path.as_deref(), i.severity))
            .collect();
        assert_eq!(
            issues,
            [
                (
                    "unexpected `internal_id` (no value expected)",
                    Some("/internal_id"),
                    Severity::Warning
                ),
                ("missing `status`", Some("/status"), Severity::Warning),
                (
                    "unexpected `extra_field`",
                    Some("/extra_field"),
                    Severity::Warning
                ),
            ]
        );
    }

    #[test]
    fn phase_zero_edge_cases() {
        let m = metric(&Value::Null);
        let gt = json!({
            "null_absent": null,
            "null_null": "",
            "null_valued": "  ",
            "present_absent": 1,
            "present_null": 2,
            "present_blank": 3,
            "present_value": 4
        });
        let aio = json!({
            "null_null": null,
            "null_valued": "x",
            "present_null": null,
            "present_blank": "\u{3000}\t\u{1f}",
            "present_value": 4,
            "only_aio": false
        });
        let out = eval(&m, aio, gt).unwrap();
        assert_eq!(
            out.details.to_value()["buckets"],
            json!({
                "extra_keys": ["only_aio"],
                "gt_null_aio_has_value": ["null_valued"],
                "gt_non_null": ["present_absent", "present_null", "present_blank", "present_value"],
                "aio_missing_or_null": ["present_absent", "present_null", "present_blank"],
                "both_non_null": ["present_value"],
            })
        );
        assert!(close(
            out.details.to_value()["completeness"].as_f64().unwrap(),
            0.25
        ));
        assert!(close(
            out.details.to_value()["hallucination"].as_f64().unwrap(),
            2.0 / 8.0
        ));
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            1.0
        ));
    }

    #[test]
    fn empty_ground_truth_is_complete_and_accurate() {
        let m = metric(&Value::Null);
        let out = eval(&m, json!({}), json!({})).unwrap();
        assert!(close(
            out.details.to_value()["completeness"].as_f64().unwrap(),
            1.0
        ));
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            1.0
        ));
        assert!(close(
            out.details.to_value()["hallucination"].as_f64().unwrap(),
            0.0
        ));
        assert!(close(out.score, 0.85));
        let out = eval(&m, json!({"a": 1}), json!({})).unwrap();
        assert!(close(
            out.details.to_value()["hallucination"].as_f64().unwrap(),
            1.0
        ));
        assert!(close(out.score, 0.7));
    }

    #[test]
    fn ignore_is_excluded_from_accuracy() {
        let m = metric(&json!({"field_strategies": {"notes": "ignore", "n": "Exact"}}));
        let out = eval(
            &m,
            json!({"notes": "whatever", "n": 3}),
            json!({"notes": "internal", "n": 4}),
        )
        .unwrap();
        assert_eq!(out.details.to_value()["ignored"], json!(["notes"]));
        assert_eq!(
            out.details.to_value()["fields"]["notes"],
            json!({"strategy": "ignore"})
        );
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            0.0
        ));
        assert_eq!(out.issues.len(), 1);
        assert_eq!(
            out.issues[0].message,
            "`n` does not match the expected value (exact 0 < 1)"
        );
        let out = eval(&m, json!({"notes": "x"}), json!({"notes": "y"})).unwrap();
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            1.0
        ));
    }

    #[test]
    fn numbers_compare_numerically() {
        let m = metric(&Value::Null);
        let out = eval(
            &m,
            json!({"n": 2.0, "b": true, "l": [1, "X"], "o": {"k": 1}}),
            json!({"n": 2, "b": true, "l": [1.0, "x"], "o": {"k": 1.0}}),
        )
        .unwrap();
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            1.0
        ));
        for key in ["n", "b", "l", "o"] {
            assert_eq!(
                out.details.to_value()["fields"][key]["strategy"],
                json!("exact"),
                "{key}"
            );
        }
    }

    #[test]
    fn the_raw_fallback_marker_is_not_a_hallucination() {
        let m = metric(&json!({}));
        let mut fixture = Fixture::new("", json!({"n": 1, "_raw_fallback": true}), json!({"n": 1}));
        fixture.extraction.raw_fallback = true;
        let out = m.evaluate(&fixture.ctx()).unwrap();
        assert!(close(
            out.details.to_value()["hallucination"].as_f64().unwrap(),
            0.0
        ));
        assert_eq!(out.details.to_value()["buckets"]["extra_keys"], json!([]));
        assert!(out.issues.is_empty());
        // A model that writes the key itself did say it.
        let out = eval(&m, json!({"n": 1, "_raw_fallback": true}), json!({"n": 1})).unwrap();
        assert!(close(
            out.details.to_value()["hallucination"].as_f64().unwrap(),
            0.5
        ));
    }

    #[test]
    fn text_strategy_chooses_what_plain_strings_use() {
        let registry = Arc::new(StrategyRegistry::with_builtins(
            &crate::semantic::Models::default(),
        ));
        let m = build_with(
            &json!({"text_strategy": "fuzzy"}),
            &registry,
            Path::new("."),
        )
        .unwrap();
        let out = eval(&m, json!({"city": "Lisboa"}), json!({"city": "Lisbon"})).unwrap();
        assert_eq!(
            out.details.to_value()["fields"]["city"]["strategy"],
            json!("fuzzy")
        );
        assert!(close(
            out.details.to_value()["fields"]["city"]["similarity"]
                .as_f64()
                .unwrap(),
            5.0 / 6.0
        ));
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            0.0
        ));
        let err =
            build_with(&json!({"text_strategy": "fuzy"}), &registry, Path::new(".")).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("fuzzy"));
        assert!(build_with(
            &json!({"text_strategy": "ignore"}),
            &registry,
            Path::new(".")
        )
        .is_err());
    }

    #[test]
    fn impossible_dates_are_text() {
        assert!(is_exact_text("2024-02-29"));
        assert!(!is_exact_text("2023-02-29"));
        assert!(!is_exact_text("2024-02-30"));
        assert!(!is_exact_text("2024-04-31T10:00:00Z"));
        assert!(is_exact_text("2000-02-29 23:59"));
        assert!(!is_exact_text("1900-02-29"));
    }

    #[test]
    fn the_quick_checks_before_the_patterns_change_no_answer() {
        let texts = [
            "2024-05-01",
            " 2024-05-01\u{1c}",
            "2024-05-0",
            "2024/05/01",
            "٢٠٢٤-05-01",
            "12345-05-01",
            "2024-05-01T10:30:00Z",
            "a@b.c",
            "a@b",
            "@",
            "x @y.z",
            "",
            "plain",
            "2024-05-01 a@b.c",
            "\u{a0}a@b.co\u{a0}",
            "2024-02-29T23:59:60.5+05:30",
        ];
        for text in texts {
            let trimmed = text.trim_matches(is_python_space);
            let by_patterns = (DATE_TIME.is_match(trimmed) && is_calendar_date(trimmed))
                || EMAIL.is_match(trimmed);
            assert_eq!(is_exact_text(text), by_patterns, "{text:?}");
        }
    }

    #[test]
    fn dates_and_emails_are_auto_exact() {
        let m = metric(&Value::Null);
        let gt = json!({
            "d": "2024-05-01",
            "dt": "2024-05-01T10:30:00Z",
            "dt2": "2024-05-01 10:30",
            "dt3": "2024-05-01T10:30:15.123+02:00",
            "mail": "Jane.Doe@Example.org",
            "text": "not a date 2024-05-01",
            "bad_month": "2024-13-01"
        });
        let aio = json!({
            "d": "2024-05-02",
            "dt": "2024-05-01t10:30:00z",
            "dt2": "2024-05-01 10:30",
            "dt3": "2024-05-01T10:30:15.123+02:00",
            "mail": "jane.doe@example.org",
            "text": "x",
            "bad_month": "y"
        });
        let out = eval(&m, aio, gt).unwrap();
        let f = &out.details.to_value()["fields"];
        for key in ["d", "dt", "dt2", "dt3", "mail"] {
            assert_eq!(f[key]["strategy"], json!("exact"), "{key}");
        }
        for key in ["text", "bad_month"] {
            assert_eq!(f[key]["strategy"], json!("semantic"), "{key}");
        }
        assert_eq!(f["d"]["matched"], json!(false));
        assert_eq!(f["mail"]["matched"], json!(true));
        assert_eq!(f["dt"]["matched"], json!(true));
        for text in [
            "a@b",
            "two words@x.com",
            "@x.com",
            "2024-05-01T25:00",
            "2024-05-01T10",
        ] {
            assert!(!is_exact_text(text), "{text}");
        }
    }

    #[test]
    fn fuzzy_thresholds_and_mismatch_messages() {
        let m = metric(&json!({"field_strategies": {"name": "fuzzy"}, "fuzzy_threshold": 0.95}));
        let out = eval(
            &m,
            json!({"name": "John Smyth"}),
            json!({"name": "John Smith"}),
        )
        .unwrap();
        assert_eq!(
            out.issues[0].message,
            "`name` does not match the expected value (fuzzy 0.9 < 0.95)"
        );
        assert_eq!(out.issues[0].path.as_deref(), Some("/name"));
        let m = metric(
            &json!({"field_strategies": {"bio": "semantic"}, "thresholds": {"semantic": 0.9}}),
        );
        let out = eval(&m, json!({"bio": "a"}), json!({"bio": "b"})).unwrap();
        assert_eq!(
            out.details.to_value()["fields"]["bio"]["matched"],
            json!(false)
        );
        assert_eq!(
            out.issues[0].message,
            "`bio` does not match the expected value (semantic 0.88 < 0.9)"
        );
    }

    #[test]
    fn pointer_escapes_key_names() {
        let m = metric(&Value::Null);
        let out = eval(&m, json!({"x/y": 1}), json!({"a~b": 1})).unwrap();
        let paths: Vec<_> = out.issues.iter().map(|i| i.path.as_deref()).collect();
        assert_eq!(paths, [Some("/a~0b"), Some("/x~1y")]);
    }

    #[test]
    fn rqs_is_clamped() {
        let m = metric(
            &json!({"weights": {"accuracy": 0, "completeness": 0, "safety": 0, "hallucination": 1}}),
        );
        let out = eval(&m, json!({"a": 1}), json!({})).unwrap();
        assert!(close(out.score, 0.0));
        assert!(out.score >= 0.0);
        let m = metric(&json!({"weights": {"accuracy": 1, "completeness": 1}}));
        let out = eval(&m, json!({"a": 1}), json!({"a": 1})).unwrap();
        assert!(close(out.score, 1.0));
    }

    #[test]
    fn safety_metric_comes_from_earlier_scores() {
        let m = metric(&json!({"safety_metric": "toxicity"}));
        let mut fixture = Fixture::new("", json!({"a": 1}), json!({"a": 1}));
        let err = m.evaluate(&fixture.ctx()).unwrap_err();
        assert!(
            err.message.contains("must run before json_compare"),
            "{}",
            err.message
        );
        fixture.scores.insert("toxicity".to_owned(), 0.5);
        let out = m.evaluate(&fixture.ctx()).unwrap();
        assert!(close(
            out.details.to_value()["safety"].as_f64().unwrap(),
            0.5
        ));
        assert!(close(out.score, 0.45 + 0.25 + 0.15 * 0.5));
    }

    #[test]
    fn ground_truth_is_required_and_json_may_be_absent() {
        let m = metric(&Value::Null);
        let err = eval(&m, json!({}), Value::Null).unwrap_err();
        assert_eq!(
            err.message,
            "json_compare needs ground truth: the record has no `expected` (`when_no_expected: skip` leaves such records out of its score)"
        );
        assert!(eval(&m, json!({}), json!([1])).is_err());
        let out = eval(&m, Value::Null, json!({"a": 1})).unwrap();
        assert_eq!(
            out.issues[0].message,
            "output has no JSON object to compare"
        );
        assert_eq!(out.issues[0].severity, Severity::Error);
        assert_eq!(
            out.details.to_value()["buckets"]["aio_missing_or_null"],
            json!(["a"])
        );
    }

    /// `model:` is confined like every file a pack names: an absolute path
    /// elsewhere, a `..` escape and a link out of the model folder are refused,
    /// whether or not something is there, and nothing of what is there is
    /// quoted.
    #[cfg(unix)]
    #[test]
    fn the_model_folder_is_confined_to_the_pack() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("config.json");
        std::fs::write(&secret, "SECRET LINE").unwrap();
        let pack = tempfile::tempdir().unwrap();
        let registry = Arc::new(StrategyRegistry::with_builtins(
            &crate::semantic::Models::default(),
        ));
        let model_in_pack = pack.path().join("model");
        std::fs::create_dir(&model_in_pack).unwrap();
        std::os::unix::fs::symlink(&secret, model_in_pack.join("config.json")).unwrap();
        let outside_path = outside.path().display().to_string();
        let missing_outside = format!("{outside_path}/nothing-here");
        for model in [
            outside_path.as_str(),
            missing_outside.as_str(),
            "../../../../../../../../tmp",
            "model",
        ] {
            let err = build_with(&json!({ "model": model }), &registry, pack.path()).unwrap_err();
            assert_eq!(err.key.as_deref(), Some("model"), "{model}");
            assert!(
                err.message.contains("is outside the pack folder"),
                "{model}: {}",
                err.message
            );
            assert!(!err.message.contains("SECRET"), "{}", err.message);
        }
    }

    #[test]
    fn a_missing_model_fails_at_load_when_named_and_per_record_when_detected() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(StrategyRegistry::with_builtins(
            &crate::semantic::Models::default(),
        ));
        // `model:` is checked at load, at its key.
        let err =
            build_with(&json!({"model": "no-model-here"}), &registry, dir.path()).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("model"));
        assert!(
            err.message.contains("no-model-here") && err.message.contains("does not exist"),
            "{}",
            err.message
        );
        // A field mapped to SEMANTIC explicitly needs a usable model at load.
        let mut registry = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        let missing = dir.path().join("missing");
        registry.insert(
            "semantic",
            Arc::new(crate::strategy::Semantic::new(
                crate::semantic::Models::default().model(Some(missing)),
            )),
        );
        let registry = Arc::new(registry);
        let err = build_with(
            &json!({"field_strategies": {"bio": "SEMANTIC"}}),
            &registry,
            dir.path(),
        )
        .unwrap_err();
        assert_eq!(err.key.as_deref(), Some("field_strategies.bio"));
        assert!(err.message.contains("does not exist"), "{}", err.message);
        // Auto-detected text: the record that needs the model fails, with the reason.
        let m = build_with(&Value::Null, &registry, dir.path()).expect("builds");
        let err = eval(&m, json!({"bio": "b"}), json!({"bio": "a text"})).unwrap_err();
        assert!(
            err.message.contains("field `bio` (semantic strategy)")
                && err.message.contains("does not exist"),
            "{}",
            err.message
        );
        assert_eq!(err.kind, ErrorKind::Model);
        // Identical texts and exact fields need no model.
        assert!(eval(&m, json!({"n": 1}), json!({"n": 1})).is_ok());
        assert!(eval(&m, json!({"bio": "same"}), json!({"bio": "same"})).is_ok());
    }

    #[test]
    fn field_strategies_from_a_json_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("strategies.json"),
            r#"{"name": "FUZZY", "bio": "SEMANTIC", "notes": "IGNORE"}"#,
        )
        .unwrap();
        let registry = registry_with_semantic(0.88);
        let m = build_with(
            &json!({"field_strategies": "strategies.json"}),
            &registry,
            dir.path(),
        )
        .unwrap();
        let mut gt = seed_gt();
        gt["notes"] = json!("n");
        let mut aio = seed_aio();
        aio["notes"] = json!("m");
        let out = eval(&m, aio, gt).unwrap();
        assert_eq!(
            out.details.to_value()["fields"]["name"]["strategy"],
            json!("fuzzy")
        );
        assert_eq!(out.details.to_value()["ignored"], json!(["notes"]));

        let err = build_with(
            &json!({"field_strategies": "absent.json"}),
            &registry,
            dir.path(),
        )
        .unwrap_err();
        assert!(err.message.contains("absent.json"), "{}", err.message);
        std::fs::write(dir.path().join("bad.json"), r#"{"name": "FUZY"}"#).unwrap();
        let err = build_with(
            &json!({"field_strategies": "bad.json"}),
            &registry,
            dir.path(),
        )
        .unwrap_err();
        assert!(
            err.message.contains("bad.json") && err.message.contains("`name`"),
            "{}",
            err.message
        );
        assert_eq!(err.suggestion.as_deref(), Some("FUZZY"));
        std::fs::write(dir.path().join("list.json"), "[1]").unwrap();
        let err = build_with(
            &json!({"field_strategies": "list.json"}),
            &registry,
            dir.path(),
        )
        .unwrap_err();
        assert!(err.message.contains("list.json"), "{}", err.message);
        std::fs::write(dir.path().join("broken.json"), "{").unwrap();
        let err = build_with(
            &json!({"field_strategies": "broken.json"}),
            &registry,
            dir.path(),
        )
        .unwrap_err();
        assert!(err.message.contains("broken.json"), "{}", err.message);
    }

    #[test]
    fn unknown_strategy_names_suggest_the_nearest() {
        let registry = registry_with_semantic(0.88);
        let err = build_with(
            &json!({"field_strategies": {"name": "FUZY"}}),
            &registry,
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("FUZZY"));
        assert_eq!(err.key.as_deref(), Some("field_strategies.name"));
        let err = build_with(
            &json!({"field_strategies": {"name": "semntic"}}),
            &registry,
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("semantic"));
        let err = build_with(
            &json!({"thresholds": {"fuzzzy": 0.5}}),
            &registry,
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("fuzzy"));
        for bad in [
            json!({"field_strategies": {"name": 1}}),
            json!({"field_strategies": 3}),
            json!({"fuzzy_threshold": 1.5}),
            json!({"fuzzy_threshold": 0.9, "thresholds": {"FUZZY": 0.8}}),
            json!({"weights": {"acuracy": 1}}),
            json!({"weights": {"safety": -1}}),
        ] {
            assert!(
                build_with(&bad, &registry, Path::new(".")).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn custom_strategies_use_their_thresholds() {
        let mut registry = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        registry.insert("half", Arc::new(Fixed(0.5)));
        let registry = Arc::new(registry);
        let m = build_with(
            &json!({"field_strategies": {"a": "HALF", "b": "half"}, "thresholds": {"half": 0.5}}),
            &registry,
            Path::new("."),
        )
        .unwrap();
        let out = eval(&m, json!({"a": "x", "b": "y"}), json!({"a": "p", "b": "q"})).unwrap();
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            1.0
        ));
        // Without a configured threshold, the strategy's default (1.0) applies.
        let m = build_with(
            &json!({"field_strategies": {"a": "half"}}),
            &registry,
            Path::new("."),
        )
        .unwrap();
        let out = eval(&m, json!({"a": "x"}), json!({"a": "p"})).unwrap();
        assert!(close(
            out.details.to_value()["accuracy"].as_f64().unwrap(),
            0.0
        ));
    }
}
