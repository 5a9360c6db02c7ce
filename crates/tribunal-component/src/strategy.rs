//! Field-matching strategies and the registry metrics look them up in.
//!
//! A strategy compares an expected and an actual field value and returns a
//! similarity in [0, 1]. `exact`, `normalized`, `fuzzy`, `semantic` and `ignore` are built in;
//! a pack adds its own strategy components (scripts, plugins) under their names.

use std::sync::Arc;

use crate::json::Json;

use crate::component::{BuildError, Context, EvalError, Strategy};
use crate::report::ErrorKind;
use crate::semantic::{Models, SemanticModel};
use crate::text::similarity_until;
pub use crate::text::{exact_match, Normalizer, DEFAULT_NORMALIZE_STRIP};

/// Default similarity a `fuzzy` match needs.
pub const DEFAULT_FUZZY_THRESHOLD: f64 = 0.85;
/// Default similarity a `semantic` match needs.
pub const DEFAULT_SEMANTIC_THRESHOLD: f64 = 0.80;

pub use crate::component::StrategyRegistry;

impl StrategyRegistry {
    /// The built-in strategies (`exact`, `normalized`, `fuzzy`, `semantic`,
    /// `ignore`), `semantic` on the default model of `models`.
    pub fn with_builtins(models: &Models) -> Self {
        let mut registry = Self::empty();
        registry.insert("exact", Arc::new(Exact));
        registry.insert("normalized", Arc::new(Normalized::default()));
        registry.insert("fuzzy", Arc::new(Fuzzy));
        registry.insert("semantic", Arc::new(Semantic::new(models.model(None))));
        registry.insert("ignore", Arc::new(Ignore));
        registry
    }
}

/// The built-in strategies' documentation, as `tribunal explain NAME` prints it.
pub const DOCS: [(&str, &str); 5] = [
    (
        "exact",
        "# exact (strategy)\n\n\
         Compares an expected and an actual field value: 1 when they are equal, else 0.\n\n\
         - Text is compared case-insensitively.\n\
         - Numbers are equal when numerically equal (`2` = `2.0` = `2e0`), by their exact value \
         as written: integers however large, decimals however long \
         (`1` ≠ `1.0000000000000000000001`). A string equals a number or boolean it spells \
         (`\"2\"` = `2`, `\"True\"` = `true`).\n\
         - Arrays and objects are compared as their JSON text with sorted keys, so objects \
         match regardless of key order and arrays item by item in order.\n\n\
         Default threshold: 1.0. Used by `json_compare` (`field_strategies: { id: EXACT }`) \
         and by scripts through `compare(\"exact\", expected, actual)`.",
    ),
    (
        "normalized",
        "# normalized (strategy)\n\n\
         Compares strings as function-calling graders do: 1 when they are equal once both \
         are lower-cased and stripped of whitespace and of the characters `,./-_*^` \
         (\"New York, NY\" = \"new york ny\" = \"NewYork-NY\"), else 0. A rule's \
         `normalize: { strip: \"...\" }` (in `with:`, as `thresholds`) sets which \
         characters besides whitespace are removed.\n\n\
         - It applies to strings at any depth: inside lists (item by item, in order) and \
         objects (the same member names, in any order).\n\
         - Numbers compare by their exact value (`2` = `2.0`), booleans and `null` as \
         themselves, and a string equals only a string.\n\n\
         Default threshold: 1.0. Used by `tool_calls` (`argument_strategies: { city: \
         NORMALIZED }`, where `enum` and `any_of` also compare under it) and `json_compare` \
         (`field_strategies`), and by scripts through `compare(\"normalized\", a, b)`.",
    ),
    (
        "fuzzy",
        "# fuzzy (strategy)\n\n\
         Edit-distance similarity of two strings: `1 - levenshtein / longer length`, over \
         lower-cased Unicode characters (\"John Smith\" / \"John Smyth\" is 0.9). Values that \
         are not both strings are compared as `exact`.\n\n\
         Default threshold: 0.85 (`json_compare`'s `fuzzy_threshold`). Good for names, \
         addresses and codes with typos. Scripts: `compare(\"fuzzy\", a, b)`, or \
         `similarity(a, b)`.",
    ),
    (
        "semantic",
        "# semantic (strategy)\n\n\
         Similarity of meaning: the cosine similarity of the two strings' sentence \
         embeddings (all-MiniLM-L6-v2, run locally on the CPU; clamped to [0, 1]). \
         Paraphrases match; near-spellings of names and codes often do not. Values that \
         are not both strings are compared as `exact`.\n\n\
         Default threshold: 0.80 (`json_compare`'s `semantic_threshold`). Needs the model \
         `scripts/setup` installs (or `TRIBUNAL_MODEL_DIR`, or `json_compare`'s `model:`); \
         embeddings are cached per text, in memory and on disk. See docs/semantic.md.",
    ),
    (
        "ignore",
        "# ignore (strategy)\n\n\
         The field takes no part in accuracy (`json_compare`): it still counts for \
         completeness and hallucination. Comparing with it always gives 1.",
    ),
];

/// `exact`: case-insensitive comparison of the values' text; objects regardless
/// of key order; numerically equal numbers are equal (2 == 2.0).
#[derive(Debug, Clone, Copy)]
pub struct Exact;

impl Strategy for Exact {
    fn compare(&self, expected: &Json, actual: &Json, _: &Context<'_>) -> Result<f64, EvalError> {
        Ok(if exact_match(expected, actual) {
            1.0
        } else {
            0.0
        })
    }
}

/// `normalized`: strings equal once lower-cased and stripped of whitespace and
/// of the characters in its set, at any depth; numbers by value, booleans and
/// `null` as themselves, containers by their shape ([`Normalizer`]).
pub type Normalized = Normalizer;

impl Strategy for Normalized {
    fn compare(&self, expected: &Json, actual: &Json, _: &Context<'_>) -> Result<f64, EvalError> {
        Ok(if self.equal(expected, actual) {
            1.0
        } else {
            0.0
        })
    }
}

/// `fuzzy`: when both values are strings, normalised Levenshtein similarity of the
/// lower-cased strings; otherwise as `exact`.
#[derive(Debug, Clone, Copy)]
pub struct Fuzzy;

impl Strategy for Fuzzy {
    fn compare(&self, expected: &Json, actual: &Json, ctx: &Context<'_>) -> Result<f64, EvalError> {
        match (expected, actual) {
            // (Quadratic in the lengths: it stops at the step's deadline,
            // and the pipeline then discards the step's result.)
            (Json::String(e), Json::String(a)) => {
                Ok(similarity_until(e, a, &mut ctx.budget.watch()).unwrap_or(0.0))
            }
            _ => Exact.compare(expected, actual, ctx),
        }
    }

    fn default_threshold(&self) -> f64 {
        DEFAULT_FUZZY_THRESHOLD
    }
}

/// `semantic`: when both values are strings, the cosine similarity of their
/// sentence embeddings (clamped to [0, 1]); otherwise as `exact`. The model is
/// found and loaded on first use (see [`crate::semantic`]); when there is none the
/// comparison fails with the reason and the command that installs one.
#[derive(Debug, Clone)]
pub struct Semantic {
    model: Arc<SemanticModel>,
}

impl Semantic {
    /// The strategy on `model` (a handle of the runtime's [`Models`]).
    pub fn new(model: Arc<SemanticModel>) -> Self {
        Self { model }
    }

    pub fn model(&self) -> &Arc<SemanticModel> {
        &self.model
    }
}

impl Strategy for Semantic {
    fn compare(&self, expected: &Json, actual: &Json, ctx: &Context<'_>) -> Result<f64, EvalError> {
        match (expected, actual) {
            (Json::String(e), Json::String(a)) if e == a => Ok(1.0),
            (Json::String(e), Json::String(a)) => self
                .model
                .similarity(e, a)
                .map_err(|err| EvalError::new(ErrorKind::Model, err.to_string())),
            _ => Exact.compare(expected, actual, ctx),
        }
    }

    fn default_threshold(&self) -> f64 {
        DEFAULT_SEMANTIC_THRESHOLD
    }

    fn prepare(&self, pairs: &[(&Json, &Json)]) {
        let mut texts: Vec<&str> = Vec::with_capacity(pairs.len() * 2);
        for pair in pairs {
            if let (Json::String(e), Json::String(a)) = pair {
                if e != a {
                    texts.push(e);
                    texts.push(a);
                }
            }
        }
        self.model.prefetch(&texts);
    }

    fn wants_prepare(&self) -> bool {
        true
    }

    fn warm_up(&self) -> Result<(), EvalError> {
        self.model
            .load()
            .map_err(|err| EvalError::new(ErrorKind::Model, err.to_string()))
    }

    fn ready(&self) -> Result<(), BuildError> {
        self.model
            .locate()
            .map(drop)
            .map_err(|err| BuildError::new(err.to_string()))
    }
}

/// `ignore`: the field takes no part in accuracy. Callers check for it by name;
/// comparing with it always matches.
#[derive(Debug, Clone, Copy)]
pub struct Ignore;

impl Strategy for Ignore {
    fn compare(&self, _: &Json, _: &Json, _: &Context<'_>) -> Result<f64, EvalError> {
        Ok(1.0)
    }

    fn default_threshold(&self) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn exact_follows_the_seed_and_design() {
        assert!(exact_match(
            &json!("John@Example.com"),
            &json!("john@example.com")
        ));
        assert!(exact_match(&json!("ÉCOLE Σ"), &json!("école σ")));
        assert!(!exact_match(&json!("ecole"), &json!("école")));
        assert!(!exact_match(&json!("a"), &json!("ab")));
        assert!(exact_match(&json!(2), &json!(2.0)));
        assert!(exact_match(&json!(2), &json!("2")));
        assert!(exact_match(&json!(true), &json!("True")));
        assert!(exact_match(
            &json!({"a": 1, "b": [1, "X"]}),
            &json!({"b": [1.0, "x"], "a": 1})
        ));
        assert!(!exact_match(&json!([1, 2]), &json!([2, 1])));
        assert!(!exact_match(&json!(["2"]), &json!([2])));
        assert!(!exact_match(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(exact_match(
            &json!({"o": {"a": 1, "A": 2}}),
            &json!({"o": {"A": 2, "a": 1}})
        ));
        assert!(!exact_match(&json!(2.0), &json!("2")), "str(2.0) is 2.0");
        assert!(exact_match(&json!(2.0), &json!("2.0")));
        assert!(exact_match(&json!(1e-05), &json!("1E-05")));
        assert!(exact_match(&json!(1.5e16), &json!("1.5e+16")));
        assert!(exact_match(&json!(0.0001), &json!("0.0001")));
        assert!(
            exact_match(&json!({"a": [1, 2]}), &json!("{\"a\": [1, 2]}")),
            "dumps text"
        );
    }

    #[test]
    fn normalized_ignores_case_whitespace_and_the_stripped_characters_at_any_depth() {
        let normalized = Normalized::default();
        let same = |a: Json, b: Json| normalized.equal(&a, &b);
        assert!(same(json!("New York, NY"), json!("new york ny")));
        assert!(same(json!("New York, NY"), json!("NewYork-NY")));
        assert!(same(json!("ÉCOLE Σ"), json!("école\tσ")));
        assert!(!same(json!("New York"), json!("New Jersey")));
        assert!(!same(json!("ecole"), json!("école")));
        assert!(same(
            json!(["A.B", {"c": "x_y"}]),
            json!(["ab", {"c": "XY"}])
        ));
        assert!(!same(json!(["a", "b"]), json!(["b", "a"])));
        assert!(!same(json!({"a": "x"}), json!({"a": "x", "b": "y"})));
        assert!(same(
            json!({"a": 2, "b": true}),
            json!({"b": true, "a": 2.0})
        ));
        assert!(!same(json!(2), json!("2")), "a string equals only a string");
        assert!(!same(json!(true), json!("true")));
        assert!(same(json!(null), json!(null)));
        let keep_dots = Normalized::stripping(",");
        assert!(!keep_dots.equal(&json!("a.b"), &json!("ab")));
        assert!(keep_dots.equal(&json!("a, b"), &json!("AB")));
    }

    #[test]
    fn registry_lookup_is_case_insensitive() {
        let registry = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        assert!(registry.get("FUZZY").is_some());
        assert!(registry.get("Exact").is_some());
        assert!(registry.get("nope").is_none());
        assert_eq!(
            registry.names().collect::<Vec<_>>(),
            ["exact", "fuzzy", "ignore", "normalized", "semantic"]
        );
    }

    #[test]
    fn numbers_compare_by_their_exact_value() {
        let n = |text: &str| tribunal_json::json_read::parse(text).unwrap();
        let exact = |a: &str, b: &str| exact_match(&n(a), &n(b));
        assert!(!exact(
            "123456789012345678901234567890",
            "123456789012345678901234567891"
        ));
        assert!(exact(
            "123456789012345678901234567890",
            "123456789012345678901234567890"
        ));
        assert!(!exact("9007199254740993", "9007199254740992"));
        assert!(exact("-0", "0"));
        assert!(exact("2", "2.0"));
        assert!(exact("1e2", "100"));
        // The value as written, not as a double reads it.
        assert!(!exact(
            "123456789012345678901234567890",
            "1.2345678901234568e29"
        ));
        assert!(!exact(
            "123456789012345677877719597056",
            "1.2345678901234568e29"
        ));
        assert!(exact(
            "123456789012345680000000000000",
            "1.2345678901234568e29"
        ));
        assert!(exact("-3", "-3.0"));
        assert!(!exact("3", "3.5"));
        // One double, two values.
        assert!(!exact("0.1", "0.1000000000000000000001"));
        assert!(!exact("1", "1.0000000000000000000001"));
        assert!(!exact("[0.1]", "[0.1000000000000000000001]"));
        assert!(exact("2.5e1", "25.000"));
        assert!(!exact("0.1", "0.2"));
        assert!(exact("[1, 2.0]", "[1.0, 2]"));
        assert!(!exact(
            "[123456789012345678901234567890]",
            "[123456789012345678901234567891]"
        ));
    }
}
