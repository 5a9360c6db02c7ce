//! Per-call overhead of a plugin metric against the same logic built in.
//!
//! Run with `cargo bench --bench plugin_overhead` (set `TRIBUNAL_BENCH_RECORDS`
//! to change the size; default 100,000). It builds the example plugins in
//! release mode, then scores every record twice through `&dyn Metric`:
//!
//! - baseline: `NativeReadability`, a Rust `Metric` defined in this file with the
//!   readability plugin's logic, called directly;
//! - plugin: the `readability` component of `libtribunal_readability`, called
//!   through the C ABI (context serialised to JSON, parsed in the plugin, result
//!   serialised, parsed and checked by the host).
//!
//! Both must give the same scores (checked first). Printed: µs per record, the
//! plugin/baseline ratio and the overhead per call, for short and long texts.

#[path = "../tests/support/plugin_build.rs"]
mod plugin_build;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use tribunal::build::BuildCtx;
use tribunal::component::{Compiled, Context, EvalError, Metric, MetricOutput};
use tribunal::extract::Tier;
use tribunal::plugin::PluginRef;
use tribunal::report::{ExtractionInfo, Issue};
use tribunal::strategy::StrategyRegistry;
use tribunal::Kind;

/// The readability plugin's scoring, built in: words, sentences and syllables,
/// Flesch reading ease, and the score against the default target [60, 122].
#[derive(Debug)]
struct NativeReadability;

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

fn syllables(word: &str) -> usize {
    let lower: Vec<char> = word
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphabetic())
        .collect();
    if lower.is_empty() {
        return 1;
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
    if n > 2 && lower[n - 1] == 'e' && !is_vowel(lower[n - 2]) && lower[n - 2] != 'l' && count > 1 {
        count -= 1;
    }
    count.max(1)
}

impl Metric for NativeReadability {
    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        let Some(text) = ctx.json.pointer("/text").and_then(Value::as_str) else {
            return Ok(MetricOutput::score(0.0));
        };
        let (mut words, mut sentences, mut syllable_count) = (0usize, 0usize, 0usize);
        let mut in_sentence = false;
        for token in text.split_whitespace() {
            let word: String = token
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect();
            if word.chars().any(char::is_alphanumeric) {
                words += 1;
                syllable_count += syllables(&word);
                in_sentence = true;
            }
            let end = token.trim_end_matches(['"', '\'', ')', ']', '”', '’']);
            if in_sentence && end.ends_with(['.', '!', '?', '…']) {
                sentences += 1;
                in_sentence = false;
            }
        }
        if in_sentence {
            sentences += 1;
        }
        if words == 0 {
            return Ok(MetricOutput::score(0.0));
        }
        let flesch = 206.835
            - 1.015 * (words as f64 / sentences.max(1) as f64)
            - 84.6 * (syllable_count as f64 / words as f64);
        let (low, high, tolerance) = (60.0, 122.0, 30.0);
        let distance = if flesch < low {
            low - flesch
        } else if flesch > high {
            flesch - high
        } else {
            0.0
        };
        let mut issues = Vec::new();
        if distance > 0.0 {
            let how = if flesch < low { "harder" } else { "easier" };
            issues.push(
                Issue::warning(
                    "readability",
                    format!(
                        "`/text` reads {how} than the target: Flesch reading ease {flesch:.1}, target {low}–{high}"
                    ),
                )
                .at("/text"),
            );
        }
        Ok(MetricOutput {
            score: (1.0 - distance / tolerance).clamp(0.0, 1.0),
            issues,
            details: json!({ "flesch_reading_ease": flesch, "words": words }),
        })
    }
}

fn texts(records: usize, sentences_per_text: usize) -> Vec<Value> {
    let sentences = [
        "You owe 1,234.50 euros for the May cloud plan.",
        "Please pay by the first of July.",
        "Notwithstanding considerable organizational complexity, the engagement necessitates reconciliation.",
        "The bill covers three laptops and a docking station.",
        "Late payment adds a fee of two percent per month.",
        "Call us if anything looks wrong.",
    ];
    (0..records)
        .map(|i| {
            let text: Vec<&str> = (0..sentences_per_text)
                .map(|k| sentences[(i + k * 5) % sentences.len()])
                .collect();
            json!({ "text": text.join(" "), "total": i })
        })
        .collect()
}

/// Seconds to score every record with `metric`, and the sum of scores.
fn run(metric: &dyn Metric, records: &[Value]) -> (f64, f64) {
    let extraction = ExtractionInfo {
        tier: Some(Tier::Strict),
        repairs: Vec::new(),
        raw_fallback: false,
    };
    let strategies = StrategyRegistry::with_builtins();
    let scores = BTreeMap::new();
    let issues: [Issue; 0] = [];
    let started = Instant::now();
    let mut total = 0.0;
    for json in records {
        let ctx = Context {
            output: "",
            json,
            extraction: &extraction,
            expected: &Value::Null,
            meta: &Value::Null,
            issues: &issues,
            scores: &scores,
            strategies: &strategies,
        };
        total += metric.evaluate(&ctx).expect("scores").score;
    }
    (started.elapsed().as_secs_f64(), total)
}

fn main() {
    let records: usize = std::env::var("TRIBUNAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let plugin_dir = plugin_build::plugin_dir();
    let strategies = Arc::new(StrategyRegistry::with_builtins());
    let files = tribunal::files::PackFiles::new(Path::new("."), &[]).expect("cwd");
    let ctx = BuildCtx {
        name: "readability",
        base_dir: Path::new("."),
        strategies: &strategies,
        contract: None,
        files: &files,
    };
    let plugin_ref = PluginRef {
        library: "tribunal_readability".into(),
        component: "readability".into(),
    };
    let library = tribunal::plugin::check(
        &plugin_ref,
        Kind::Metric,
        "readability",
        Path::new("."),
        &[plugin_dir.to_path_buf()],
    )
    .unwrap_or_else(|err| panic!("cannot load the plugin: {}", err.message));
    let plugin = match tribunal::plugin::instantiate(
        &library,
        &plugin_ref,
        Kind::Metric,
        &json!({}),
        &ctx,
    ) {
        Ok(Compiled::Metric(metric)) => metric,
        Ok(other) => panic!("expected a metric, got a {}", other.kind()),
        Err(err) => panic!("cannot build the plugin metric: {err}"),
    };
    let native = NativeReadability;
    println!("plugin_overhead: {records} records per run, best of 3, one thread");
    for (label, sentences) in [
        ("short text (1 sentence)", 1),
        ("long text (40 sentences)", 40),
    ] {
        let data = texts(records, sentences);
        let bytes: usize = data.iter().map(|v| v.to_string().len()).sum::<usize>() / records;
        let mut best = [f64::INFINITY; 2];
        let mut sums = [0.0; 2];
        for _ in 0..3 {
            for (i, metric) in [&native as &dyn Metric, plugin.as_ref()]
                .into_iter()
                .enumerate()
            {
                let (seconds, sum) = run(metric, &data);
                best[i] = best[i].min(seconds);
                sums[i] = sum;
            }
        }
        assert!(
            (sums[0] - sums[1]).abs() < 1e-6 * records as f64,
            "the built-in and the plugin disagree: {} vs {}",
            sums[0],
            sums[1]
        );
        let per = |seconds: f64| seconds * 1e6 / records as f64;
        let (native_us, plugin_us) = (per(best[0]), per(best[1]));
        println!("  {label}, ~{bytes} bytes of JSON per record:");
        println!("    built-in metric (baseline) {native_us:>8.2} µs/record  1.00x");
        println!(
            "    plugin metric              {plugin_us:>8.2} µs/record  {:.2}x of baseline (+{:.2} µs per call)",
            plugin_us / native_us,
            plugin_us - native_us
        );
    }
}
