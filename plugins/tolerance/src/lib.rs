//! Tribunal plugin `tolerance`: a strategy comparing numbers with a relative and
//! an absolute tolerance, the rule of Python's `math.isclose`:
//! `|actual − expected| ≤ max(rel_tol · max(|actual|, |expected|), abs_tol)`.
//! See this crate's README for the config and an example.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tribunal_plugin::{export_plugin, Context, Error, Strategy};

/// Config of the `tolerance` strategy.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToleranceConfig {
    /// Allowed difference relative to the larger magnitude (0.01 = 1%).
    pub rel_tol: f64,
    /// Allowed absolute difference, for values near zero.
    pub abs_tol: f64,
    /// Outside the tolerance, return `tolerance / difference` (a similarity that
    /// shrinks as the miss grows) instead of 0.
    pub graded: bool,
    /// Read strings such as `"12.5"` or `" 3 "` as numbers.
    pub parse_strings: bool,
}

impl Default for ToleranceConfig {
    fn default() -> Self {
        Self {
            rel_tol: 0.01,
            abs_tol: 0.0,
            graded: false,
            parse_strings: true,
        }
    }
}

/// The `tolerance` strategy.
#[derive(Debug)]
pub struct Tolerance {
    config: ToleranceConfig,
}

impl Tolerance {
    fn number(&self, value: &Value) -> Option<f64> {
        match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) if self.config.parse_strings => {
                s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
            }
            _ => None,
        }
    }

    /// Similarity of two numbers in [0, 1].
    pub fn similarity(&self, expected: f64, actual: f64) -> f64 {
        let difference = (actual - expected).abs();
        let tolerance =
            (self.config.rel_tol * actual.abs().max(expected.abs())).max(self.config.abs_tol);
        if difference <= tolerance {
            1.0
        } else if self.config.graded && tolerance > 0.0 {
            tolerance / difference
        } else {
            0.0
        }
    }
}

impl Strategy for Tolerance {
    const NAME: &'static str = "tolerance";
    const DESCRIPTION: &'static str =
        "Numbers equal within a relative (rel_tol) or absolute (abs_tol) tolerance";
    type Config = ToleranceConfig;

    fn new(config: ToleranceConfig) -> Result<Self, Error> {
        for (name, value) in [("rel_tol", config.rel_tol), ("abs_tol", config.abs_tol)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("`{name}` must be a number ≥ 0, got {value}").into());
            }
        }
        Ok(Self { config })
    }

    fn compare(&self, expected: &Value, actual: &Value, _ctx: &Context) -> Result<f64, Error> {
        Ok(match (self.number(expected), self.number(actual)) {
            (Some(e), Some(a)) => self.similarity(e, a),
            // A number was expected and something else came back (or the reverse).
            (Some(_), None) | (None, Some(_)) => 0.0,
            // Neither is a number: plain equality, so the strategy can serve a
            // field that is sometimes null or a label.
            (None, None) => {
                if expected == actual {
                    1.0
                } else {
                    0.0
                }
            }
        })
    }

    fn config_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "rel_tol": { "type": "number", "minimum": 0 },
                "abs_tol": { "type": "number", "minimum": 0 },
                "graded": { "type": "boolean" },
                "parse_strings": { "type": "boolean" }
            }
        }))
    }
}

export_plugin! {
    name: "tolerance",
    version: env!("CARGO_PKG_VERSION"),
    components: [strategy Tolerance],
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn strategy(config: Value) -> Tolerance {
        Tolerance::new(serde_json::from_value(config).unwrap()).unwrap()
    }

    fn compare(s: &Tolerance, expected: &Value, actual: &Value) -> f64 {
        s.compare(expected, actual, &Context::default()).unwrap()
    }

    #[test]
    fn relative_tolerance_scales_with_magnitude() {
        let s = strategy(json!({"rel_tol": 0.01}));
        assert_eq!(compare(&s, &json!(100), &json!(100.9)), 1.0);
        assert_eq!(compare(&s, &json!(100), &json!(101.5)), 0.0);
        assert_eq!(compare(&s, &json!(0.001), &json!(0.00101)), 1.0);
        assert_eq!(compare(&s, &json!(0), &json!(0.000_001)), 0.0);
    }

    #[test]
    fn absolute_tolerance_covers_values_near_zero() {
        let s = strategy(json!({"rel_tol": 0.01, "abs_tol": 0.001}));
        assert_eq!(compare(&s, &json!(0), &json!(0.0005)), 1.0);
        assert_eq!(compare(&s, &json!(0), &json!(0.002)), 0.0);
    }

    #[test]
    fn graded_similarity_shrinks_with_the_miss() {
        let s = strategy(json!({"rel_tol": 0.0, "abs_tol": 1.0, "graded": true}));
        assert_eq!(compare(&s, &json!(10), &json!(11)), 1.0);
        assert_eq!(compare(&s, &json!(10), &json!(12)), 0.5);
        assert_eq!(compare(&s, &json!(10), &json!(14)), 0.25);
    }

    #[test]
    fn strings_and_non_numbers() {
        let s = strategy(json!({}));
        assert_eq!(compare(&s, &json!(12.5), &json!(" 12.5 ")), 1.0);
        assert_eq!(compare(&s, &json!(12.5), &json!("twelve")), 0.0);
        assert_eq!(compare(&s, &json!(null), &json!(null)), 1.0);
        assert_eq!(compare(&s, &json!("n/a"), &json!("n/a")), 1.0);
        assert_eq!(compare(&s, &json!("n/a"), &json!(3)), 0.0);
        let strict = strategy(json!({"parse_strings": false}));
        assert_eq!(compare(&strict, &json!(12.5), &json!("12.5")), 0.0);
    }

    #[test]
    fn bad_config_is_refused() {
        let err = Tolerance::new(ToleranceConfig {
            rel_tol: -0.1,
            ..ToleranceConfig::default()
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "`rel_tol` must be a number ≥ 0, got -0.1");
        let unknown = serde_json::from_value::<ToleranceConfig>(json!({"rel_tl": 0.1}))
            .unwrap_err()
            .to_string();
        assert!(unknown.starts_with("unknown field `rel_tl`"), "{unknown}");
    }
}
