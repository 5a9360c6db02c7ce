//! `eval`'s gates: pass/fail on the run's aggregate quality rather than on every
//! record (`--fail-under NAME=MIN`, `--max-errors N`, `--require-pass`). When a
//! gate is given, the gates alone decide between exit 0 and 1.

use serde_json::{json, Value};

use tribunal::jsonl::Summary;
use tribunal::Status;

/// One `--fail-under NAME=MIN`: `pass_rate` (share of `PASS` records), `score`
/// (mean record score) or a metric's name (its mean score).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FailUnder {
    name: String,
    min: f64,
}

impl FailUnder {
    /// Reads `NAME=MIN`, `MIN` a number in [0, 1].
    pub(super) fn parse(text: &str) -> Result<Self, String> {
        let (name, min) = text.split_once('=').ok_or_else(|| {
            format!(
                "`{text}`: a gate is NAME=MIN, e.g. pass_rate=0.95, score=0.8 or a metric's name"
            )
        })?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!(
                "`{text}`: the gate has no name (pass_rate, score or a metric's name)"
            ));
        }
        let min: f64 = min
            .trim()
            .parse()
            .ok()
            .filter(|m: &f64| (0.0..=1.0).contains(m))
            .ok_or_else(|| format!("`{text}`: the minimum must be a number from 0 to 1"))?;
        Ok(Self {
            name: name.to_owned(),
            min,
        })
    }
}

/// The gates of a run.
#[derive(Debug, Clone, Default)]
pub(super) struct Gates {
    pub fail_under: Vec<FailUnder>,
    pub max_errors: Option<u64>,
    pub require_pass: bool,
}

/// How one gate came out.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Outcome {
    /// What was required, e.g. `pass_rate >= 0.95`.
    pub gate: String,
    /// What the run reached (`None`: nothing to measure, e.g. no scores).
    pub value: Option<f64>,
    pub passed: bool,
    /// One line for a person: the gate, the value and by how much it missed.
    pub line: String,
}

impl Gates {
    /// Whether any gate was given (then the gates decide the exit code).
    pub(super) fn any(&self) -> bool {
        !self.fail_under.is_empty() || self.max_errors.is_some() || self.require_pass
    }

    /// Refuses a `--fail-under` name that is not `pass_rate`, `score` or one of
    /// the pack's metrics, before anything is evaluated.
    pub(super) fn check_names<'a>(
        &self,
        metrics: impl Iterator<Item = &'a str>,
    ) -> Result<(), String> {
        let names: Vec<&str> = ["pass_rate", "score"].into_iter().chain(metrics).collect();
        for gate in &self.fail_under {
            if !names.contains(&gate.name.as_str()) {
                let hint = tribunal_base::suggest::nearest(&gate.name, &names)
                    .map_or_else(String::new, |n| {
                        format!(" ({})", tribunal_base::suggest::did_you_mean(&n))
                    });
                return Err(format!(
                    "--fail-under {}: no such gate{hint}; the gates are pass_rate, score and the pack's metrics ({})",
                    gate.name,
                    names[2..].join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Every gate's outcome, in the order given (`--fail-under`s, then
    /// `--max-errors`, then `--require-pass`).
    pub(super) fn check(&self, summary: &Summary) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for gate in &self.fail_under {
            let value = match gate.name.as_str() {
                "pass_rate" => summary.pass_rate(),
                "score" => summary.score.mean(),
                metric => summary
                    .metrics
                    .iter()
                    .find(|(name, _)| name == metric)
                    .and_then(|(_, stats)| stats.mean()),
            };
            let what = if gate.name == "pass_rate" || gate.name == "score" {
                gate.name.clone()
            } else {
                format!("{} (mean)", gate.name)
            };
            let passed = value.is_some_and(|v| v >= gate.min);
            let line = match value {
                Some(v) if passed => format!("{what} {v:.4} >= {}", gate.min),
                Some(v) => format!("{what} {v:.4} < {} ({:.4} short)", gate.min, gate.min - v),
                None => format!("{what}: nothing to measure (no records with a score)"),
            };
            outcomes.push(Outcome {
                gate: format!("{} >= {}", gate.name, gate.min),
                value,
                passed,
                line,
            });
        }
        if let Some(max) = self.max_errors {
            let errors = summary.count(Status::Error);
            let passed = errors <= max;
            outcomes.push(Outcome {
                gate: format!("errors <= {max}"),
                value: Some(errors as f64),
                passed,
                line: if passed {
                    format!("ERROR records {errors} <= {max}")
                } else {
                    format!("ERROR records {errors} > {max} ({} too many)", errors - max)
                },
            });
        }
        if self.require_pass {
            let passing = summary.count(Status::Pass);
            let passed = summary.records > 0 && passing == summary.records;
            outcomes.push(Outcome {
                gate: "every record PASS".to_owned(),
                value: Some(passing as f64),
                passed,
                line: if summary.records == 0 {
                    "every record PASS: no records (a gate does not pass on nothing)".to_owned()
                } else if passed {
                    format!("every record PASS ({passing} of {})", summary.records)
                } else {
                    format!(
                        "every record PASS: {} of {} did not",
                        summary.records - passing,
                        summary.records
                    )
                },
            });
        }
        outcomes
    }
}

/// The outcomes as JSON, for `--summary-json`.
pub(super) fn to_value(outcomes: &[Outcome]) -> Value {
    Value::Array(
        outcomes
            .iter()
            .map(|o| json!({"gate": o.gate, "value": o.value, "passed": o.passed}))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(statuses: &[(Status, u64)], scores: &[f64]) -> Summary {
        let mut summary = Summary::new(vec!["m".into()]);
        for &(status, n) in statuses {
            summary.records += n;
            summary.statuses.insert(status, n);
        }
        for &s in scores {
            summary.score.add(s);
            summary.metrics[0].1.add(s / 2.0);
        }
        summary
    }

    #[test]
    fn gates_parse_and_refuse_bad_specs() {
        assert_eq!(
            FailUnder::parse("pass_rate=0.95"),
            Ok(FailUnder {
                name: "pass_rate".into(),
                min: 0.95
            })
        );
        assert!(FailUnder::parse("pass_rate")
            .unwrap_err()
            .contains("NAME=MIN"));
        assert!(FailUnder::parse("=0.5").unwrap_err().contains("no name"));
        assert!(FailUnder::parse("score=1.5")
            .unwrap_err()
            .contains("from 0 to 1"));
        assert!(FailUnder::parse("score=x")
            .unwrap_err()
            .contains("from 0 to 1"));
    }

    #[test]
    fn the_gates_decide_by_the_aggregates() {
        let run = summary(
            &[(Status::Pass, 4), (Status::Fail, 5), (Status::Error, 1)],
            &[0.9, 0.5],
        );
        let gates = Gates {
            fail_under: vec![
                FailUnder::parse("pass_rate=0.3").unwrap(),
                FailUnder::parse("score=0.8").unwrap(),
                FailUnder::parse("m=0.3").unwrap(),
            ],
            max_errors: Some(0),
            require_pass: true,
        };
        let outcomes = gates.check(&run);
        let passed: Vec<bool> = outcomes.iter().map(|o| o.passed).collect();
        assert_eq!(passed, [true, false, true, false, false]);
        assert_eq!(outcomes[0].line, "pass_rate 0.4000 >= 0.3");
        assert_eq!(outcomes[1].line, "score 0.7000 < 0.8 (0.1000 short)");
        assert_eq!(outcomes[2].line, "m (mean) 0.3500 >= 0.3");
        assert_eq!(outcomes[3].line, "ERROR records 1 > 0 (1 too many)");
        assert_eq!(outcomes[4].line, "every record PASS: 6 of 10 did not");
        // Nothing to measure never passes.
        let empty = Gates {
            fail_under: vec![FailUnder::parse("score=0").unwrap()],
            ..Gates::default()
        };
        assert!(!empty.check(&summary(&[], &[]))[0].passed);
    }

    #[test]
    fn unknown_gate_names_are_refused_with_a_suggestion() {
        let gates = Gates {
            fail_under: vec![FailUnder::parse("pass_rat=0.9").unwrap()],
            ..Gates::default()
        };
        let err = gates.check_names(["json_compare"].into_iter()).unwrap_err();
        assert!(err.contains("did you mean `pass_rate`?"), "{err}");
        assert!(err.contains("(json_compare)"), "{err}");
    }
}
