//! Pack tests: the cases a pack ships under `tests:`, run by `tribunal test`.
//!
//! A test file is YAML: `cases:` (a list), and optionally `set:` config overrides
//! (`component.key: value`) applied to the pack for that file. A file may also be
//! just the list of cases. Each case gives an `output` (plus optional `id`,
//! `expected`, `meta`) and `expect`, a partial result record: every key given must
//! match the result (objects match as subsets, arrays element by element with the
//! same length, numbers within 1e-9).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::json::Json;

use crate::pack::{LoadOptions, Override, Pack};
use crate::pipeline::Input;
use crate::runtime::Runtime;
use crate::yaml::{LoadError, Source};

/// Tolerance for numbers in expectations that are both a double's own text
/// (scores computed in floating point), see [`numbers_match`].
pub const NUMBER_TOLERANCE: f64 = 1e-9;

/// Whether an expected number matches the result's: the same exact value
/// ([`crate::decimal::equal`], the one equality: `25` = `25.0` = `2.5e1`,
/// `1` ≠ `1.0000000000000000000001`, big integers digit by digit), or, when
/// both texts are the shortest text of a finite double (a computed score such
/// as `0.8339285714285715`), within [`NUMBER_TOLERANCE`] of each other. A
/// number a double cannot hold exactly never matches by tolerance.
fn numbers_match(expected: &str, actual: &str) -> bool {
    fn as_double(text: &str) -> Option<f64> {
        let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
        (crate::decimal::compare_f64(text, float) == Some(std::cmp::Ordering::Equal))
            .then_some(float)
    }
    crate::decimal::equal(expected, actual)
        || matches!((as_double(expected), as_double(actual)),
            (Some(e), Some(a)) if (e - a).abs() <= NUMBER_TOLERANCE)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    #[serde(default)]
    set: serde_json::Map<String, Value>,
    cases: Vec<Case>,
}

/// One test case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    #[serde(default)]
    pub id: Option<Value>,
    /// The output (`null` for a transcript case judged on its last assistant turn).
    #[serde(default)]
    pub output: Value,
    #[serde(default)]
    pub expected: Option<Value>,
    #[serde(default)]
    pub meta: Option<Value>,
    /// An agent's transcript (a list of messages).
    #[serde(default)]
    pub messages: Option<Value>,
    /// `true`: the case decides the tool calls the last assistant message of
    /// `messages` proposes (`Pack::decide`), and `expect` is a partial
    /// `{"decisions": [...]}`.
    #[serde(default)]
    pub proposed: bool,
    pub expect: Value,
}

impl Case {
    fn input(&self) -> Input {
        let id: Json = self
            .id
            .clone()
            .unwrap_or_else(|| Value::String(self.name.clone()))
            .into();
        let messages: Json = self.messages.as_ref().map(Json::from).unwrap_or_default();
        // (A case has one or the other: `read_test_file` checks.)
        let output = match (&self.output, messages.is_null()) {
            (Value::Null, false) => Json::Null,
            (Value::String(text), _) => Json::from(text.as_str()),
            (other, _) => Json::from(other.to_string()),
        };
        let expected = self.expected.as_ref().map(Json::from).unwrap_or_default();
        let meta = self.meta.as_ref().map(Json::from).unwrap_or_default();
        Input::from_record(id.clone(), output, expected, meta, messages)
            .unwrap_or_else(|_| Input::new("").with_id(id))
    }
}

/// Reads a test file: its overrides and cases.
pub fn read_test_file(path: &Path) -> Result<(Vec<Override>, Vec<Case>), LoadError> {
    let source = Source::read(path)?;
    let is_list = source
        .yaml
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")
        .is_some_and(|l| l.starts_with('-'));
    let file = if is_list {
        TestFile {
            set: serde_json::Map::new(),
            cases: source.parse()?,
        }
    } else {
        source.parse::<TestFile>()?
    };
    // A case judges an output, or a transcript's last assistant turn.
    if let Some(case) = file
        .cases
        .iter()
        .find(|case| case.output.is_null() && case.messages.is_none())
    {
        let position = source.locate(&["name"], Some(&case.name));
        return Err(LoadError::new(
            path,
            position,
            format!(
                "test case `{}` has neither `output` nor `messages`",
                case.name
            ),
        ));
    }
    if let Some(case) = file
        .cases
        .iter()
        .find(|case| case.proposed && case.messages.is_none())
    {
        let position = source.locate(&["name"], Some(&case.name));
        return Err(LoadError::new(
            path,
            position,
            format!(
                "test case `{}` is `proposed` but has no `messages`: a decision is on the tool calls a transcript's last assistant message proposes",
                case.name
            ),
        ));
    }
    let mut overrides = Vec::new();
    for (target, value) in file.set {
        let position = source.locate(&["set", &target], None);
        overrides.push(Override::new(&target, value).map_err(|_| {
            LoadError::new(
                path,
                position,
                format!("`set` key `{target}` must be component.key"),
            )
        })?);
    }
    Ok((overrides, file.cases))
}

/// Where `actual` differs from `expected` (a partial record), as readable lines.
pub fn mismatches(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    compare(expected, actual, "", &mut out);
    out
}

/// A text matcher in place of a string: `{contains: TEXT}` or `{matches: REGEX}`.
fn text_matcher(expected: &Value) -> Option<(&str, &str)> {
    let Value::Object(map) = expected else {
        return None;
    };
    let (key, Value::String(pattern)) = map.iter().next()? else {
        return None;
    };
    (map.len() == 1 && (key == "contains" || key == "matches"))
        .then_some((key.as_str(), pattern.as_str()))
}

fn compare(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    let here = if path.is_empty() { "(record)" } else { path };
    // `{contains: ...}` / `{matches: ...}` against a text (or a missing one).
    if let (Some((kind, pattern)), Value::String(_) | Value::Null) =
        (text_matcher(expected), actual)
    {
        let text = actual.as_str();
        let matched = match kind {
            "contains" => text.is_some_and(|text| text.contains(pattern)),
            _ => match crate::text::regex(pattern) {
                Ok(regex) => text.is_some_and(|text| regex.is_match(text)),
                Err(err) => {
                    out.push(format!("{here}: `matches` is not a valid regex: {err}"));
                    return;
                }
            },
        };
        if !matched {
            let wanted = if kind == "contains" {
                "text containing"
            } else {
                "text matching"
            };
            out.push(format!(
                "{here}: expected {wanted} {}, got {actual}",
                Value::String(pattern.to_owned())
            ));
        }
        return;
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match a.get(key) {
                    Some(found) => compare(value, found, &child, out),
                    None if value.is_null() => {}
                    None => out.push(format!(
                        "{child}: expected {value}, but the result has no such key"
                    )),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                out.push(format!(
                    "{here}: expected {} items, got {}: {}",
                    e.len(),
                    a.len(),
                    actual
                ));
                return;
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                compare(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            if !numbers_match(e.as_str(), a.as_str()) {
                out.push(format!("{here}: expected {e}, got {a}"));
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{here}: expected {e}, got {a}")),
    }
}

/// Result of running one pack's tests.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed or could not run.
    pub failed: usize,
    /// Human-readable lines (failures, and every case when verbose).
    pub log: String,
    /// `name@version` of the pack (its folder when it did not load).
    pub label: String,
    /// Every case, in order (for `JUnit` XML).
    pub cases: Vec<CaseOutcome>,
    /// The files the run read (the pack's, its test files, `--set @FILE`s),
    /// each with what it was: inputs no output of the command may be.
    pub inputs: Vec<(&'static str, PathBuf)>,
}

/// How one test case (or a test file that could not run) came out.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The test file, relative to the pack.
    pub file: String,
    /// The case's name (the file's, when the file itself failed).
    pub name: String,
    /// What did not match (empty when the case passed).
    pub problems: Vec<String>,
    /// For a failed case, what its record said: its error, or its status,
    /// score and issues (so a failure says why, not only what differs).
    pub record: Vec<String>,
    /// Why the case could not run at all (a file or `set` that does not load).
    pub error: Option<String>,
}

/// A pack's own test cases, on a runtime.
impl Runtime {
    /// Runs the test cases of the pack in `dir` (each `tests/*.yaml` file's
    /// cases, as `tribunal test` does): the pack is loaded on this runtime with
    /// `base` (plugin folders, allowed paths), and a test file's `set` adds
    /// its overrides. `verbose` logs every case, not only the failures. A pack
    /// that does not load is one failed case, with its errors.
    pub fn test_pack(&self, dir: &Path, verbose: bool, base: &LoadOptions) -> Outcome {
        let mut outcome = Outcome {
            label: dir.display().to_string(),
            ..Outcome::default()
        };
        let pack = match self.load_with(dir, base) {
            Ok(pack) => pack,
            Err(errors) => {
                let manifest = if dir.is_dir() {
                    dir.join("pack.yaml")
                } else {
                    dir.to_path_buf()
                };
                outcome.inputs.push(("the pack's file", manifest));
                outcome.fail_file("pack.yaml", "the pack loads", 1, errors.to_string());
                let _ = writeln!(outcome.log, "{}\n{errors}", dir.display());
                return outcome;
            }
        };
        pack.label().clone_into(&mut outcome.label);
        outcome.inputs = pack
            .inputs()
            .map(|(what, file)| (what, file.to_path_buf()))
            .chain(
                pack.info
                    .tests
                    .iter()
                    .map(|f| ("the pack's test file", f.clone())),
            )
            .collect();
        let _ = writeln!(outcome.log, "{} ({})", dir.display(), pack.label());
        if pack.info.tests.is_empty() {
            let _ = writeln!(outcome.log, "  (no tests)");
        }
        for file in &pack.info.tests {
            let shown = file.strip_prefix(dir).unwrap_or(file).display().to_string();
            let (overrides, cases) = match read_test_file(file) {
                Ok(parsed) => parsed,
                Err(err) => {
                    let _ = writeln!(outcome.log, "  FAIL  {err}");
                    outcome.fail_file(&shown, &shown, 1, err.to_string());
                    continue;
                }
            };
            let owned;
            let run_pack = if overrides.is_empty() {
                &pack
            } else {
                let options = LoadOptions {
                    overrides,
                    ..base.clone()
                };
                match self.load_with(dir, &options) {
                    Ok(p) => {
                        owned = p;
                        &owned
                    }
                    Err(errors) => {
                        let _ = writeln!(
                            outcome.log,
                            "  FAIL  {shown}: `set` does not load:\n{errors}"
                        );
                        let error = format!("`set` does not load:\n{errors}");
                        outcome.fail_file(&shown, &shown, cases.len().max(1), error);
                        continue;
                    }
                }
            };
            for case in &cases {
                outcome.check_case(run_pack, &shown, case, verbose);
            }
        }
        outcome
    }
}

impl Outcome {
    /// A file (or the pack) that could not run: `failed` cases fail, one
    /// outcome says why.
    fn fail_file(&mut self, file: &str, name: &str, failed: usize, error: String) {
        self.failed += failed;
        self.cases.push(CaseOutcome {
            file: file.to_owned(),
            name: name.to_owned(),
            problems: Vec::new(),
            record: Vec::new(),
            error: Some(error),
        });
    }

    /// Evaluates one case and compares its record with what it expects.
    fn check_case(&mut self, pack: &Pack, shown: &str, case: &Case, verbose: bool) {
        let (problems, record) = if case.proposed {
            let decisions = pack.decide(&case.input()).to_value();
            let problems = mismatches(&case.expect, &decisions);
            let record = if problems.is_empty() {
                Vec::new()
            } else {
                decision_lines(&decisions)
            };
            (problems, record)
        } else {
            let report = pack.evaluate(&case.input());
            let problems = mismatches(&case.expect, &report.to_value());
            let record = if problems.is_empty() {
                Vec::new()
            } else {
                record_lines(&report)
            };
            (problems, record)
        };
        self.cases.push(CaseOutcome {
            file: shown.to_owned(),
            name: case.name.clone(),
            problems: problems.clone(),
            record: record.clone(),
            error: None,
        });
        if problems.is_empty() {
            self.passed += 1;
            if verbose {
                let _ = writeln!(self.log, "  ok    {shown}: {}", case.name);
            }
        } else {
            self.failed += 1;
            let _ = writeln!(self.log, "  FAIL  {shown}: {}", case.name);
            for problem in problems {
                let _ = writeln!(self.log, "        {problem}");
            }
            for line in record {
                let _ = writeln!(self.log, "        | {line}");
            }
        }
    }
}

/// What a record said, for a failed case: `ERROR (kind): the error`, or its
/// status and score, then each issue (`severity rule path: message`).
/// The decisions, as `record_lines` shows a record: one line per call.
fn decision_lines(decisions: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(error) = decisions["error"].as_str() {
        lines.push(format!("error: {error}"));
    }
    for call in decisions["decisions"].as_array().into_iter().flatten() {
        let codes: Vec<&str> = call["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|issue| issue["code"].as_str())
            .collect();
        lines.push(format!(
            "call {} `{}`: {} [{}]",
            call["call"],
            call["name"].as_str().unwrap_or(""),
            call["decision"].as_str().unwrap_or(""),
            codes.join(", ")
        ));
    }
    lines
}

fn record_lines(report: &crate::report::Report) -> Vec<String> {
    if let Some(error) = report.error() {
        let kind = report.error_kind().map_or("error", |k| k.as_str());
        return vec![format!("the record is ERROR ({kind}): {error}")];
    }
    let score = report.score.map_or_else(
        || "no score".to_owned(),
        |s| format!("score {}", crate::text::short_number(s, s)),
    );
    let count = match report.issues.len() {
        0 => "no issue".to_owned(),
        1 => "1 issue".to_owned(),
        n => format!("{n} issues"),
    };
    let mut lines = vec![format!(
        "the record is {} ({score}), with {count}",
        report.status().as_str()
    )];
    for issue in &report.issues {
        let path = issue
            .path
            .as_deref()
            .map_or(String::new(), |p| format!(" {p}"));
        lines.push(format!(
            "  {} {}{path}: {}",
            issue.severity.as_str(),
            issue.rule,
            issue.message
        ));
    }
    lines
}

/// The shipped packs against the seeds' reference logic (`tests/reference/`).
#[cfg(test)]
mod reference_records;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_typo_in_a_test_file_key_gets_a_suggestion() {
        // `expected` is itself a key of a case: the list of keys is read whole.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(
            &file,
            "cases:\n  - name: one\n    output: hi\n    expcet: { status: FAIL }\n",
        )
        .unwrap();
        let err = read_test_file(&file).unwrap_err();
        assert_eq!(err.help.as_deref(), Some("did you mean `expect`?"), "{err}");
    }

    #[test]
    fn a_case_needs_an_output_or_messages() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(
            &file,
            "cases:\n  - name: one\n    output: hi\n    expect: {}\n  - name: two\n    expect: {}\n  - name: three\n    messages: [{role: assistant, content: hi}]\n    expect: {}\n",
        )
        .unwrap();
        let err = read_test_file(&file).unwrap_err();
        assert_eq!(
            err.to_string().lines().next().unwrap_or_default(),
            format!(
                "{}:5:11: test case `two` has neither `output` nor `messages`",
                file.display()
            ),
            "{err}"
        );
        std::fs::write(
            &file,
            "cases:\n  - name: three\n    messages: [{role: assistant, content: hi}]\n    expect: {}\n",
        )
        .unwrap();
        let (_, cases) = read_test_file(&file).unwrap();
        assert_eq!(cases[0].input().output, "hi");
    }

    #[test]
    fn partial_records_match_as_subsets() {
        let actual = json!({"status": "PASS", "score": 0.737_500_000_000_000_1, "issues": [{"message": "a", "rule": "r"}], "json": {"a": 1, "b": 2}});
        assert!(mismatches(
            &json!({"status": "PASS", "score": 0.7375, "json": {"a": 1}}),
            &actual
        )
        .is_empty());
        assert!(mismatches(&json!({"issues": [{"message": "a"}]}), &actual).is_empty());
        // Text matchers: `contains` and `matches`, on text or a missing text.
        let record = json!({"error": "script `m` (m.rhai:3:9): asked to fail", "feedback": null, "json": {"contains": "x"}});
        assert!(mismatches(&json!({"error": {"contains": "asked to fail"}}), &record).is_empty());
        assert!(mismatches(
            &json!({"error": {"matches": "^script `m` \\(.*:3:9\\)"}}),
            &record
        )
        .is_empty());
        assert_eq!(
            mismatches(&json!({"error": {"contains": "nope"}, "feedback": {"matches": "."}}), &record),
            [
                "error: expected text containing \"nope\", got \"script `m` (m.rhai:3:9): asked to fail\"",
                "feedback: expected text matching \".\", got null",
            ]
        );
        assert!(mismatches(&json!({"error": {"matches": "("}}), &record)[0]
            .starts_with("error: `matches` is not a valid regex"));
        // An object in the result is compared as an object, even one that looks like a matcher.
        assert!(mismatches(&json!({"json": {"contains": "x"}}), &record).is_empty());
        assert!(!mismatches(&json!({"json": {"contains": "y"}}), &record).is_empty());
        assert_eq!(mismatches(&json!({"issues": []}), &actual).len(), 1);
        assert_eq!(
            mismatches(&json!({"status": "FAIL"}), &actual),
            ["status: expected \"FAIL\", got \"PASS\""]
        );
        assert_eq!(
            mismatches(&json!({"error": null}), &actual),
            Vec::<String>::new()
        );
    }
}
