use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tribunal_plugin::{export_plugin, Context, Error, Issue, Metric, MetricResult};

/// The config, as a pack writes it under `config:` or `with:`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct WordCountConfig {
    /// JSON pointer to the text in the extracted JSON.
    pub field: String,
    /// Fewest and most words that score 1.
    pub min: usize,
    pub max: usize,
}

impl Default for WordCountConfig {
    fn default() -> Self {
        Self {
            field: "/text".into(),
            min: 5,
            max: 50,
        }
    }
}

pub struct WordCount {
    config: WordCountConfig,
}

impl Metric for WordCount {
    const NAME: &'static str = "word_count";
    const DESCRIPTION: &'static str = "Scores the length of a text field in words";
    type Config = WordCountConfig;

    fn new(config: WordCountConfig) -> Result<Self, Error> {
        if config.min > config.max {
            return Err(format!("`min` ({}) is above `max` ({})", config.min, config.max).into());
        }
        Ok(Self { config })
    }

    fn evaluate(&self, ctx: &Context) -> Result<MetricResult, Error> {
        let Some(text) = ctx.pointer(&self.config.field).and_then(Value::as_str) else {
            return Ok(MetricResult::score(0.0)
                .with_issue(Issue::error("no text to count").at(self.config.field.clone())));
        };
        let words = text.split_whitespace().count();
        let (min, max) = (self.config.min, self.config.max);
        let score = if words < min {
            words as f64 / min as f64
        } else if words > max {
            max as f64 / words as f64
        } else {
            1.0
        };
        let mut result = MetricResult::score(score).with_details(json!({ "words": words }));
        if score < 1.0 {
            result = result.with_issue(
                Issue::warning(format!("{words} words; aim for {min} to {max}"))
                    .with_code("off-budget")
                    .at(self.config.field.clone()),
            );
        }
        Ok(result)
    }
}

export_plugin! {
    name: "word_count",
    version: env!("CARGO_PKG_VERSION"),
    components: [metric WordCount],
}
