//! Tribunal plugin `readability`: a metric scoring how readable a text field is.
//!
//! The score comes from the Flesch reading ease of the text
//! (`206.835 − 1.015 · words/sentence − 84.6 · syllables/word`): 1 inside the
//! configured target range, falling linearly to 0 at `tolerance` points outside
//! it. See this crate's README for the config and an example.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tribunal_plugin::{export_plugin, Context, Error, Issue, Metric, MetricResult};

/// Config of the `readability` metric.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadabilityConfig {
    /// JSON pointer to the text in the extracted JSON; `null` scores the raw output.
    pub field: Option<String>,
    /// Flesch reading ease range that scores 1, `[low, high]`. The default,
    /// `[60, 122]`, asks for plain English or easier (the formula cannot exceed
    /// 121.22, so the default sets no upper bound).
    pub target: [f64; 2],
    /// Points outside the target range at which the score reaches 0.
    pub tolerance: f64,
}

impl Default for ReadabilityConfig {
    fn default() -> Self {
        Self {
            field: Some("/text".to_owned()),
            target: [60.0, 122.0],
            tolerance: 30.0,
        }
    }
}

/// Counts behind a Flesch score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextStats {
    pub words: usize,
    pub sentences: usize,
    pub syllables: usize,
}

impl TextStats {
    /// Words, sentences and syllables of an (English) text.
    pub fn of(text: &str) -> Self {
        let mut stats = Self::default();
        let mut in_sentence = false;
        for token in text.split_whitespace() {
            let word: String = token
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect();
            if word.chars().any(char::is_alphanumeric) {
                stats.words += 1;
                stats.syllables += syllables(&word);
                in_sentence = true;
            }
            // A token ending in ., ! or ? (possibly before closing quotes or
            // brackets) ends a sentence; "e.g." inside a token does not.
            let end = token.trim_end_matches(['"', '\'', ')', ']', '”', '’']);
            if in_sentence && end.ends_with(['.', '!', '?', '…']) {
                stats.sentences += 1;
                in_sentence = false;
            }
        }
        if in_sentence {
            stats.sentences += 1;
        }
        stats
    }

    /// Flesch reading ease; `None` for a text without words.
    pub fn flesch_reading_ease(&self) -> Option<f64> {
        (self.words > 0).then(|| {
            206.835
                - 1.015 * (self.words as f64 / self.sentences.max(1) as f64)
                - 84.6 * (self.syllables as f64 / self.words as f64)
        })
    }

    /// Flesch–Kincaid grade level; `None` for a text without words.
    pub fn grade_level(&self) -> Option<f64> {
        (self.words > 0).then(|| {
            0.39 * (self.words as f64 / self.sentences.max(1) as f64)
                + 11.8 * (self.syllables as f64 / self.words as f64)
                - 15.59
        })
    }
}

fn is_vowel(c: char) -> bool {
    matches!(
        c,
        'a' | 'e'
            | 'i'
            | 'o'
            | 'u'
            | 'y'
            | 'à'
            | 'á'
            | 'â'
            | 'ä'
            | 'è'
            | 'é'
            | 'ê'
            | 'ë'
            | 'ì'
            | 'í'
            | 'î'
            | 'ï'
            | 'ò'
            | 'ó'
            | 'ô'
            | 'ö'
            | 'ù'
            | 'ú'
            | 'û'
            | 'ü'
    )
}

/// Syllables of one word: groups of vowels, less a silent final `e`, at least one.
pub fn syllables(word: &str) -> usize {
    let lower: Vec<char> = word
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphabetic())
        .collect();
    if lower.is_empty() {
        return 1; // a number reads as (at least) one syllable
    }
    let mut count = 0;
    let mut previous_vowel = false;
    for &c in &lower {
        let vowel = is_vowel(c);
        if vowel && !previous_vowel {
            count += 1;
        }
        previous_vowel = vowel;
    }
    let n = lower.len();
    let silent_e = n > 2 && lower[n - 1] == 'e' && !is_vowel(lower[n - 2]) && lower[n - 2] != 'l';
    if silent_e && count > 1 {
        count -= 1;
    }
    count.max(1)
}

/// The `readability` metric.
#[derive(Debug)]
pub struct Readability {
    config: ReadabilityConfig,
}

impl Readability {
    /// Score in [0, 1] for a Flesch reading ease.
    pub fn score_for(&self, flesch: f64) -> f64 {
        let [low, high] = self.config.target;
        let distance = if flesch < low {
            low - flesch
        } else if flesch > high {
            flesch - high
        } else {
            0.0
        };
        (1.0 - distance / self.config.tolerance).clamp(0.0, 1.0)
    }

    fn where_text(&self) -> String {
        self.config
            .field
            .as_deref()
            .map_or_else(|| "the output".to_owned(), |f| format!("`{f}`"))
    }
}

impl Metric for Readability {
    const NAME: &'static str = "readability";
    const DESCRIPTION: &'static str =
        "Flesch reading ease of a text field, scored against a target range";
    type Config = ReadabilityConfig;

    fn new(config: ReadabilityConfig) -> Result<Self, Error> {
        let [low, high] = config.target;
        if !(low.is_finite() && high.is_finite() && low <= high) {
            return Err(format!(
                "`target` must be [low, high] with low ≤ high, got [{low}, {high}]"
            )
            .into());
        }
        if !(config.tolerance.is_finite() && config.tolerance > 0.0) {
            return Err(format!(
                "`tolerance` must be a number above 0, got {}",
                config.tolerance
            )
            .into());
        }
        if let Some(field) = &config.field {
            if !(field.is_empty() || field.starts_with('/')) {
                return Err(format!(
                    "`field` must be a JSON pointer (\"\" or starting with `/`), got \"{field}\"; did you mean \"/{field}\"?"
                )
                .into());
            }
        }
        Ok(Self { config })
    }

    fn evaluate(&self, ctx: &Context) -> Result<MetricResult, Error> {
        let text = match &self.config.field {
            None => Some(ctx.output.as_str()),
            Some(pointer) => ctx.pointer(pointer).and_then(Value::as_str),
        };
        let path = self.config.field.clone();
        let with_path = |issue: Issue| match &path {
            Some(p) => issue.at(p.clone()),
            None => issue,
        };
        let Some(text) = text else {
            return Ok(
                MetricResult::score(0.0).with_issue(with_path(Issue::error(format!(
                    "no text to score: {} is missing or not a string",
                    self.where_text()
                )))),
            );
        };
        let stats = TextStats::of(text);
        let (Some(flesch), Some(grade)) = (stats.flesch_reading_ease(), stats.grade_level()) else {
            return Ok(
                MetricResult::score(0.0).with_issue(with_path(Issue::error(format!(
                    "no text to score: {} has no words",
                    self.where_text()
                )))),
            );
        };
        let score = self.score_for(flesch);
        let [low, high] = self.config.target;
        let mut result = MetricResult::score(score).with_details(json!({
            "flesch_reading_ease": round2(flesch),
            "grade_level": round2(grade),
            "words": stats.words,
            "sentences": stats.sentences,
            "syllables": stats.syllables,
            "target": [low, high],
        }));
        if flesch < low || flesch > high {
            let how = if flesch < low { "harder" } else { "easier" };
            result = result.with_issue(with_path(Issue::warning(format!(
                "{} reads {how} than the target: Flesch reading ease {:.1}, target {low}–{high}",
                self.where_text(),
                flesch
            ))));
        }
        Ok(result)
    }

    fn config_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "field": { "type": ["string", "null"], "description": "JSON pointer to the text; null scores the raw output" },
                "target": { "type": "array", "items": { "type": "number" }, "minItems": 2, "maxItems": 2 },
                "tolerance": { "type": "number", "exclusiveMinimum": 0 }
            }
        }))
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

export_plugin! {
    name: "readability",
    version: env!("CARGO_PKG_VERSION"),
    components: [metric Readability],
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn metric(config: Value) -> Readability {
        Readability::new(serde_json::from_value(config).unwrap()).unwrap()
    }

    fn context(json: Value) -> Context {
        Context {
            json,
            ..Context::default()
        }
    }

    #[test]
    fn syllables_follow_the_usual_rules() {
        for (word, expected) in [
            ("cat", 1),
            ("make", 1),
            ("table", 2),
            ("reading", 2),
            ("readability", 5),
            ("the", 1),
            ("42", 1),
            ("queue", 1),
            ("beautiful", 3),
        ] {
            assert_eq!(syllables(word), expected, "{word}");
        }
    }

    #[test]
    fn counts_words_sentences_and_syllables() {
        let stats = TextStats::of("The cat sat. The dog ran away! Did it?");
        assert_eq!(
            stats,
            TextStats {
                words: 9,
                sentences: 3,
                syllables: 10
            }
        );
        assert_eq!(TextStats::of("No full stop at the end").sentences, 1);
        assert_eq!(TextStats::of("  ... ").words, 0);
    }

    #[test]
    fn simple_text_scores_high_and_dense_text_low() {
        let m = metric(json!({}));
        let easy = m
            .evaluate(&context(
                json!({"text": "The cat sat on the mat. It was warm. We had tea."}),
            ))
            .unwrap();
        let hard = m
            .evaluate(&context(json!({"text": "Notwithstanding considerable organizational complexity, interdisciplinary collaboration fundamentally necessitates comprehensive institutional accountability mechanisms."})))
            .unwrap();
        assert!(easy.details["flesch_reading_ease"].as_f64().unwrap() > 90.0);
        assert!(hard.details["flesch_reading_ease"].as_f64().unwrap() < 0.0);
        assert_eq!(hard.score, 0.0);
        assert_eq!(hard.issues.len(), 1);
        assert!(hard.issues[0].message.contains("harder than the target"));
        // The default target has no upper bound; a [60, 80] band penalises very easy text.
        assert_eq!(easy.score, 1.0);
        assert!(easy.issues.is_empty());
        let band = metric(json!({"target": [60, 80]}));
        let easy = band
            .evaluate(&context(
                json!({"text": "The cat sat on the mat. It was warm. We had tea."}),
            ))
            .unwrap();
        assert!(easy.score < 1.0);
        assert!(easy.issues[0].message.contains("easier than the target"));
    }

    #[test]
    fn score_falls_linearly_outside_the_target() {
        let m = metric(json!({"target": [60, 80], "tolerance": 20}));
        assert_eq!(m.score_for(70.0), 1.0);
        assert_eq!(m.score_for(50.0), 0.5);
        assert_eq!(m.score_for(90.0), 0.5);
        assert_eq!(m.score_for(30.0), 0.0);
    }

    #[test]
    fn missing_text_is_an_error_issue_with_score_zero() {
        let m = metric(json!({"field": "/summary"}));
        let out = m.evaluate(&context(json!({"text": "x"}))).unwrap();
        assert_eq!(out.score, 0.0);
        assert_eq!(
            out.issues[0].message,
            "no text to score: `/summary` is missing or not a string"
        );
        assert_eq!(out.issues[0].path.as_deref(), Some("/summary"));
    }

    #[test]
    fn raw_output_when_field_is_null() {
        let m = metric(json!({"field": null, "target": [0, 130]}));
        let ctx = Context {
            output: "Short and clear.".into(),
            ..Context::default()
        };
        assert_eq!(m.evaluate(&ctx).unwrap().score, 1.0);
    }

    #[test]
    fn bad_config_is_refused() {
        let err = |config: Value| {
            Readability::new(serde_json::from_value(config).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"target": [80, 60]})),
            "`target` must be [low, high] with low ≤ high, got [80, 60]"
        );
        assert_eq!(
            err(json!({"tolerance": 0})),
            "`tolerance` must be a number above 0, got 0"
        );
        assert!(err(json!({"field": "text"})).contains("did you mean \"/text\"?"));
        assert!(serde_json::from_value::<ReadabilityConfig>(json!({"targt": [1, 2]})).is_err());
    }
}
