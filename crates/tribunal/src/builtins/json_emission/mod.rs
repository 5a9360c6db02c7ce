//! `json_emission` (metric): scores whether a response actually emits a JSON
//! event (`{"event": "agent:status", "data": {...}}`) rather than describing one, with
//! the original Python `validate_json_emission` scoring reproduced bit for bit, and an issue when
//! the response only describes emitting JSON.

mod py_json;

use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, EvalError, Kind, Metric, MetricOutput,
};
use crate::json_write::{self, field, Object};
use crate::report::{Details, Issue};
use crate::text::is_python_space;

pub const BUILTIN: Builtin = Builtin {
    name: "json_emission",
    kind: Kind::Metric,
    summary: "Scores actual JSON event emission versus describing it",
    streaming: "at `finish()`",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied (skipped): it scores the final answer",
    },
    docs: include_str!("../../../../../docs/builtins/json_emission.md"),
    build,
};

const DEFAULT_PATTERN: &str =
    r#"\{[^{}]*"event"\s*:\s*"[^"]+"\s*,[^{}]*"data"\s*:\s*\{[^{}]*\}[^{}]*\}"#;
const DEFAULT_EVENTS: [&str; 6] = [
    "agent:status",
    "agent:spawn",
    "state:entity:create",
    "state:entity:update",
    "message:send",
    "message:publish",
];
const DEFAULT_DESCRIPTION_PATTERNS: [&str; 4] = [
    r"I (would|will|can|should) (emit|send|output|generate)",
    r"(emit|send|output|generate) (a|an|the) (JSON|event)",
    r"JSON (event|message|object) (would|will|should) be",
    r"here('s| is) (the|a|an) JSON",
];
const DEFAULT_DESCRIPTION_MESSAGE: &str = "describes JSON instead of emitting it";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    events: Vec<String>,
    threshold: f64,
    pattern: String,
    description_patterns: Vec<String>,
    points: Points,
    penalty: f64,
    description_message: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            events: DEFAULT_EVENTS.map(str::to_owned).to_vec(),
            threshold: 0.7,
            pattern: DEFAULT_PATTERN.to_owned(),
            description_patterns: DEFAULT_DESCRIPTION_PATTERNS.map(str::to_owned).to_vec(),
            points: Points::default(),
            penalty: 0.2,
            description_message: DEFAULT_DESCRIPTION_MESSAGE.to_owned(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Points {
    structure: f64,
    valid: f64,
    event: f64,
}

impl Default for Points {
    fn default() -> Self {
        Self {
            structure: 0.4,
            valid: 0.3,
            event: 0.3,
        }
    }
}

#[derive(Debug)]
struct JsonEmission {
    events: Vec<String>,
    threshold: f64,
    pattern: Emissions,
    descriptions: Vec<Regex>,
    /// `descriptions` as one search of a text's ASCII lowercase, when that
    /// finds the same (see [`lowered_search`]).
    lowered: Option<Regex>,
    points: Points,
    penalty: f64,
    description_message: String,
}

/// Where the pack's contract lists the kinds of its outputs by their
/// `event` member (`kind_field: event` with `may_emit` or `variants`), every
/// event this metric accepts must be one of them: the contract rejects any
/// other, so its points could never be earned.
fn check_events(events: &[String], ctx: &BuildCtx<'_>) -> Result<(), BuildError> {
    let Some(contract) = ctx.contract else {
        return Ok(());
    };
    let Some(kinds) = contract
        .may_emit
        .as_ref()
        .filter(|_| contract.kind_field == "event")
    else {
        return Ok(());
    };
    match events.iter().find(|e| !kinds.contains(e)) {
        None => Ok(()),
        Some(event) => Err(BuildError::new(format!(
            "{}: `events` names `{event}`, which the contract's kinds ({}) do not take: no output of that event could pass",
            ctx.name,
            kinds.join(", ")
        ))
        .at_key("events")
        .at_value(event.as_str())
        .suggest(crate::suggest::nearest(event, kinds))),
    }
}

fn build(raw: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(ctx.name, raw)?;
    let name = ctx.name;
    let non_negative = |value: f64, key: &str| {
        if value.is_finite() && value >= 0.0 {
            Ok(value)
        } else {
            Err(BuildError::new(format!(
                "{name}: `{key}` must be a finite number >= 0, got {value}"
            ))
            .at_key(key))
        }
    };
    non_negative(config.points.structure, "points.structure")?;
    non_negative(config.points.valid, "points.valid")?;
    non_negative(config.points.event, "points.event")?;
    non_negative(config.penalty, "penalty")?;
    if !config.threshold.is_finite() {
        return Err(
            BuildError::new(format!("{name}: `threshold` must be a finite number"))
                .at_key("threshold"),
        );
    }
    let compile = |pattern: &str, key: &str, case_insensitive: bool| {
        RegexBuilder::new(&python_whitespace(pattern))
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|err| {
                BuildError::new(format!("{name}: invalid `{key}` regex `{pattern}`: {err}"))
                    .at_key(key)
            })
    };
    let pattern = Emissions::new(
        compile(&config.pattern, "pattern", false)?,
        config.pattern == DEFAULT_PATTERN,
    );
    let mut descriptions: Vec<Regex> = config
        .description_patterns
        .iter()
        .map(|p| compile(p, "description_patterns", true))
        .collect::<Result<_, _>>()?;
    // Only whether any of them matches counts: one alternation scans the text
    // once instead of once per pattern (kept apart when they cannot be joined,
    // e.g. two patterns naming the same group, or set apart when one sets flags
    // inline, which could then reach past its own pattern).
    if descriptions.len() > 1 && !descriptions.iter().any(|r| r.as_str().contains("(?")) {
        let joined: Vec<String> = descriptions
            .iter()
            .map(|r| format!("(?:{})", r.as_str()))
            .collect();
        if let Ok(any) = RegexBuilder::new(&joined.join("|"))
            .case_insensitive(true)
            .build()
        {
            descriptions = vec![any];
        }
    }
    let lowered = lowered_search(&config.description_patterns, &descriptions);
    if raw.get("events").is_some() {
        check_events(&config.events, ctx)?;
    }
    Ok(Compiled::Metric(Arc::new(JsonEmission {
        events: config.events,
        threshold: config.threshold,
        pattern,
        descriptions,
        lowered,
        points: config.points,
        penalty: config.penalty,
        description_message: config.description_message,
    })))
}

/// The description patterns' search as a case-sensitive one of their ASCII
/// lowercase, for texts that are ASCII: `None` unless every pattern is ASCII
/// letters, digits and operators with no escape, class or flag, and they are
/// one search. On an ASCII text such a pattern matches case-insensitively
/// exactly where its lowercase matches the text's lowercase (no character
/// outside ASCII, like the Kelvin sign that folds to `k`, can be in either).
/// The case-insensitive search tries every place where two letters of a
/// literal begin, in either case: on 4 KB of English prose it took 4-5 µs,
/// the lowered one under 1 µs with the copy.
fn lowered_search(patterns: &[String], descriptions: &[Regex]) -> Option<Regex> {
    let plain = |p: &String| p.is_ascii() && !p.contains(['\\', '[']) && !p.contains("(?");
    match descriptions {
        [one] if patterns.iter().all(plain) => Regex::new(&one.as_str().to_ascii_lowercase()).ok(),
        _ => None,
    }
}

/// The pattern's matches in a text, as `Regex::find_iter` finds them.
#[derive(Debug)]
struct Emissions {
    regex: Regex,
    /// For the default pattern: a finder of the `"event"` every match holds.
    /// A match opens with a `{` followed by no brace up to its `"event"`, so
    /// it can start only at the last brace before an `"event"`, when that
    /// brace is a `{`: trying just those places in order with
    /// [`default_match`] finds what the regex finds without its search of
    /// every place (forward, then back for the start).
    default: Option<memchr::memmem::Finder<'static>>,
}

impl Emissions {
    fn new(regex: Regex, is_default: bool) -> Self {
        let default = is_default.then(|| memchr::memmem::Finder::new(EVENT));
        Self { regex, default }
    }

    /// Hands each match to `found`, in order (no list of them is made).
    fn each<'t>(&self, text: &'t str, mut found: impl FnMut(&'t str)) {
        let Some(event) = &self.default else {
            self.regex.find_iter(text).for_each(|m| found(m.as_str()));
            return;
        };
        let bytes = text.as_bytes();
        // `from`: where the last match ended (the next starts there or later);
        // `search`: where the next `"event"` is looked for.
        let (mut from, mut search) = (0, 0);
        while let Some(at) = event.find(&bytes[search..]) {
            let at = search + at;
            search = at + 1;
            let Some(brace) = memchr::memrchr2(b'{', b'}', &bytes[from..at]) else {
                continue;
            };
            let start = from + brace;
            if bytes[start] == b'}' {
                continue;
            }
            if let Some(len) = default_match(&text[start..]) {
                found(&text[start..start + len]);
                from = start + len;
                search = from;
            }
        }
    }

    #[cfg(test)]
    fn find_all<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut found = Vec::new();
        self.each(text, |m| found.push(m));
        found
    }
}

const EVENT: &[u8] = b"\"event\"";

/// The length of the default pattern's match at the start of `text` (which
/// opens with its `{`), as the pattern anchored there finds it; `None` when it
/// does not match there. Written out, for the regex's lazy DFA and its cache
/// per search were the biggest cost of the metric on short outputs. The
/// pattern is `{A"event"\s*:\s*"V"\s*,B"data"\s*:\s*{C}D}` where `A`, `B`,
/// `C` and `D` hold no brace and `V` no quote:
/// - once its `"event"` is chosen, a match can continue in one way only: `V`
///   ends at the next quote, `B` at the next brace, which must be a `{` with
///   `"data"\s*:\s*` before it, and `C` and `D` at the two braces after it;
/// - its `"event"` lies before the first brace, and `A` is greedy: the regex
///   tries the last such `"event"` first, then each one before it.
///
/// `\s` is Python's whitespace here too ([`is_python_space`], the set
/// [`python_whitespace`] makes the regex's `\s` match).
fn default_match(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let first_brace = next_brace(bytes, 1).unwrap_or(bytes.len());
    // From the last `"event"` back, found by the quote it ends with (the few
    // quotes before a short output's first brace are quicker to try than a
    // search for the whole name, 2% of a KSI record). Overlapping ones can be
    // skipped: one overlapping the next (`"event"event"`) is followed by
    // `event"`, not by `\s*:`.
    let mut end = first_brace;
    while let Some(quote) = memchr::memrchr(b'"', &bytes[1..end]) {
        // Just after the quote; the name it would close starts after the `{`.
        let after = 1 + quote + 1;
        if after > EVENT.len() && bytes[after - EVENT.len()..after] == *EVENT {
            if let Some(len) = after_event(text, after) {
                return Some(len);
            }
            end = after - EVENT.len();
        } else {
            end = after - 1;
        }
    }
    None
}

/// Where a match ends whose `"event"` ends at `from`, if one does:
/// `\s*:\s*"V"\s*,B"data"\s*:\s*{C}D}` from there (see [`default_match`]).
fn after_event(text: &str, from: usize) -> Option<usize> {
    let rest = text[from..].trim_start_matches(is_python_space);
    let rest = rest.strip_prefix(':')?.trim_start_matches(is_python_space);
    let value = rest.strip_prefix('"')?;
    let quote = value.find('"').filter(|&quote| quote > 0)?;
    let rest = value[quote + 1..].trim_start_matches(is_python_space);
    let b = text.len() - rest.strip_prefix(',')?.len();
    let bytes = text.as_bytes();
    let open = next_brace(bytes, b).filter(|&at| bytes[at] == b'{')?;
    let head = text[b..open].trim_end_matches(is_python_space);
    let head = head.strip_suffix(':')?.trim_end_matches(is_python_space);
    head.strip_suffix("\"data\"")?;
    let close = next_brace(bytes, open + 1).filter(|&at| bytes[at] == b'}')?;
    let end = next_brace(bytes, close + 1).filter(|&at| bytes[at] == b'}')?;
    Some(end + 1)
}

/// The first brace at or after `from`.
fn next_brace(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(b'{', b'}', &bytes[from..]).map(|at| from + at)
}

/// Rewrites `\s` / `\S` so they match Python's `str.isspace()` set, which adds the
/// information separators U+001C–U+001F to Unicode `White_Space`. Everything else
/// passes through; character-class nesting is tracked the way Rust parses it.
fn python_whitespace(pattern: &str) -> String {
    const SPACE: &str = r"\s\x1C-\x1F";
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut depth = 0usize; // character-class nesting
                            // Just after `[` (1) or `[^` (2): a `]` here is literal.
    let mut class_start = 0u8;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => match chars.next() {
                Some('s') if depth > 0 => out.push_str(SPACE),
                Some('s') => {
                    out.push('[');
                    out.push_str(SPACE);
                    out.push(']');
                }
                Some('S') => {
                    out.push_str("[^");
                    out.push_str(SPACE);
                    out.push(']');
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '[' => {
                depth += 1;
                class_start = 1;
                out.push('[');
            }
            '^' if depth > 0 && at_class_start == 1 => {
                class_start = 2;
                out.push('^');
            }
            ']' if depth > 0 && at_class_start == 0 => {
                depth -= 1;
                out.push(']');
            }
            other => out.push(other),
        }
    }
    out
}

impl Metric for JsonEmission {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        let mut score = 0.0_f64;
        // Every match of the pattern (Python's `re.findall`), and whether one
        // is `parsed.get("event") in ksi_events`, skipping unparseable matches
        // and (AttributeError) non-objects.
        let (mut matches, mut valid, mut hit) = (0usize, 0usize, false);
        self.pattern.each(ctx.output, |found| {
            matches += 1;
            let Some(parsed) = py_json::loads(found) else {
                return;
            };
            if parsed.has_event && parsed.has_data {
                valid += 1;
            }
            hit = hit
                || parsed
                    .event
                    .as_deref()
                    .is_some_and(|event| self.events.iter().any(|e| e == event));
        });
        let mut known_event = false;
        let mut described = false;
        let mut issues = Vec::new();
        if matches == 0 {
            described = match &self.lowered {
                Some(lowered) if ctx.output.is_ascii() => {
                    lowered.is_match(&ctx.output.to_ascii_lowercase())
                }
                _ => self.descriptions.iter().any(|r| r.is_match(ctx.output)),
            };
            if described {
                // Python's `max(0.0, score - penalty)`.
                let lowered = score - self.penalty;
                score = if lowered > 0.0 { lowered } else { 0.0 };
                issues.push(
                    Issue::error("", self.description_message.clone())
                        .code(codes::EMISSION_DESCRIBED),
                );
            }
        } else {
            score += self.points.structure;
            if valid > 0 {
                score += self.points.valid;
                if hit {
                    score += self.points.event;
                    known_event = true;
                }
            }
        }
        let verdict = score >= self.threshold;
        // Python's `min(score, max_score)`.
        let score = if 1.0 < score { 1.0 } else { score };
        let mut details = Vec::with_capacity(96);
        let mut object = Object::open(&mut details);
        json_write::write_u64(field!(object, "matches"), matches as u64);
        json_write::write_u64(field!(object, "valid"), valid as u64);
        json_write::write_bool(field!(object, "known_event"), known_event);
        json_write::write_bool(field!(object, "described"), described);
        json_write::write_bool(field!(object, "verdict"), verdict);
        object.close();
        Ok(MetricOutput {
            score,
            issues,
            details: Details::written(details),
            skipped: None,
        })
    }

    /// The seed's metric reads the raw output only.
    fn reads_json(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_support::{build_ctx, Fixture};
    use serde_json::json;

    fn metric(config: &Value) -> Arc<dyn Metric> {
        match build(config, &build_ctx("json_emission")).expect("builds") {
            Compiled::Metric(m) => m,
            other => panic!("expected a metric, got {:?}", other.kind()),
        }
    }

    fn run_with(config: &Value, output: &str) -> MetricOutput {
        let fixture = Fixture::new(output, Value::Null, Value::Null);
        metric(config).evaluate(&fixture.ctx()).unwrap()
    }

    /// The ASCII-lowercase search is taken for patterns of plain literals and
    /// operators only; anything whose meaning could change with case (an
    /// escape, a class, a flag) or a character outside ASCII keeps the
    /// case-insensitive one.
    #[test]
    fn only_plain_ascii_patterns_are_searched_lowered() {
        let lowered = |patterns: &[&str]| {
            let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
            let joined: Vec<String> = patterns.iter().map(|p| format!("(?:{p})")).collect();
            let one = RegexBuilder::new(&joined.join("|"))
                .case_insensitive(true)
                .build()
                .unwrap();
            lowered_search(&patterns, &[one]).map(|r| r.as_str().to_owned())
        };
        assert_eq!(
            lowered(&DEFAULT_DESCRIPTION_PATTERNS),
            Some(
                DEFAULT_DESCRIPTION_PATTERNS
                    .map(|p| format!("(?:{})", p.to_ascii_lowercase()))
                    .join("|")
            )
        );
        assert!(lowered(&["Would EMIT", "x{2,3}.Y$"]).is_some());
        for kept in [
            r"I\s+would",
            r"[A-Z]end",
            r"(?-i)Emit",
            "\u{17f}end",
            r"\Bsend",
            r"\x53end",
        ] {
            assert_eq!(lowered(&["here is", kept]), None, "{kept}");
        }
    }

    /// Whether a text describes JSON is the same through the lowered search
    /// as through the case-insensitive one, on generated texts: the patterns'
    /// words in random case, among filler, newlines and near misses, ASCII or
    /// not (a Kelvin sign and a long s fold to `k` and `s`).
    #[test]
    fn a_lowered_search_describes_what_the_case_insensitive_one_does() {
        let configs: [&[&str]; 4] = [
            &DEFAULT_DESCRIPTION_PATTERNS,
            &["Would EMIT", "json.{0,3}object", "^ok$"],
            &["here(s| is)?", "x{2,3}Y", "sKy"],
            // (Not lowered: a long s matches `s` and `S` case-insensitively.)
            &["\u{17f}ky", "emit"],
        ];
        let pieces = [
            "I", "i", "would", "will", "can", "emit", "send", "output", "generate", "a", "an",
            "the", "JSON", "event", "message", "object", "be", "here", "here's", "is", "there",
            "xx", "xxx", "y", "ok", "sky", "s", "k", "\u{212a}", "\u{17f}", "\u{e9}", ".", ",",
        ];
        let joins = [" ", " ", " ", "", "\n", "  ", "-"];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).unwrap()
        };
        let (mut described, mut lowered_runs) = (0, 0);
        for patterns in configs {
            let metric = metric(&json!({ "description_patterns": patterns }));
            let reference: Vec<Regex> = patterns
                .iter()
                .map(|p| RegexBuilder::new(p).case_insensitive(true).build().unwrap())
                .collect();
            for _ in 0..3000 {
                let mut text = String::new();
                for _ in 0..=next(12) {
                    let piece = pieces[next(pieces.len())];
                    for c in piece.chars() {
                        match next(3) {
                            0 => text.extend(c.to_uppercase()),
                            _ => text.push(c),
                        }
                    }
                    text.push_str(joins[next(joins.len())]);
                }
                let expected = reference.iter().any(|r| r.is_match(&text));
                let fixture = Fixture::new(&text, Value::Null, Value::Null);
                let out = metric.evaluate(&fixture.ctx()).unwrap();
                let found = out
                    .issues
                    .iter()
                    .any(|i| i.code.as_ref() == codes::EMISSION_DESCRIBED);
                assert_eq!(found, expected, "{patterns:?} on {text:?}");
                described += usize::from(expected);
                lowered_runs += usize::from(text.is_ascii());
            }
        }
        // Both answers, and mostly through the lowered search.
        assert!(
            described > 1000 && described < 8000,
            "{described} described"
        );
        assert!(lowered_runs > 6000, "{lowered_runs} ASCII texts");
    }

    fn run(output: &str) -> MetricOutput {
        run_with(&Value::Null, output)
    }

    /// The default pattern's matches are found by trying only the places a
    /// match can start, each with the pattern written out: the same matches
    /// as the regex's own search, and at every `{` the same match as the
    /// regex anchored there, on texts made of the pattern's pieces (braces in
    /// the event value, `"event"` twice, empty values, unclosed objects,
    /// whitespace of one and of several bytes, Python-only whitespace).
    #[test]
    fn default_pattern_matches_as_the_regex_finds_them() {
        let regex = Regex::new(&python_whitespace(DEFAULT_PATTERN)).unwrap();
        let anchored = Regex::new(&format!(r"\A(?:{})", regex.as_str())).unwrap();
        let emissions = Emissions::new(regex.clone(), true);
        let pieces = [
            "{",
            "}",
            "\"",
            "\"\"",
            "\"event\"",
            "event\"",
            "\"data\"",
            ":",
            ",",
            " ",
            "\n",
            "\u{a0}",
            "\u{2003}",
            "\u{1c}",
            "\u{200b}",
            "x",
            "é",
            "\"agent:status\"",
            "\"event\": \"",
            "\"data\" :{",
            "{\"event\": \"a\", \"data\": {}}",
        ];
        // A match's parts in order, each kept, dropped, replaced by a piece or
        // followed by one at random: texts that match or just miss.
        let template = [
            "{",
            "\"event\"",
            " ",
            ":",
            "\u{a0}",
            "\"",
            "agent:status",
            "\"",
            "\n",
            ",",
            " x",
            "\"data\"",
            "\u{2003}",
            ":",
            " ",
            "{",
            "\"k\": 1",
            "}",
            " ",
            "}",
        ];
        let mut next = crate::json::numbers(0x9e37_79b9_7f4a_7c15);
        let mut pick = |of: &[&'static str]| of[usize::try_from(next()).unwrap() % of.len()];
        let (mut matched, mut anchored_matches) = (0, 0);
        for round in 0..200_000 {
            let mut text = String::new();
            if round % 2 == 0 {
                for _ in 0..pick(&["0", "1", "2"]).parse::<usize>().unwrap() * 8 {
                    text.push_str(pick(&pieces));
                }
            } else {
                for part in template {
                    match pick(&[
                        "keep", "keep", "keep", "keep", "keep", "keep", "drop", "swap", "add",
                    ]) {
                        "keep" => text.push_str(part),
                        "drop" => {}
                        "swap" => text.push_str(pick(&pieces)),
                        _ => {
                            text.push_str(part);
                            text.push_str(pick(&pieces));
                        }
                    }
                }
            }
            let expected: Vec<&str> = regex.find_iter(&text).map(|m| m.as_str()).collect();
            assert_eq!(emissions.find_all(&text), expected, "in {text:?}");
            matched += usize::from(!expected.is_empty());
            for (at, _) in text.match_indices('{') {
                let expected = anchored.find(&text[at..]).map(|m| m.end());
                assert_eq!(default_match(&text[at..]), expected, "at {at} in {text:?}");
                anchored_matches += usize::from(expected.is_some());
            }
        }
        assert!(matched > 1_000, "only {matched} texts matched");
        assert!(anchored_matches > 2_000, "only {anchored_matches} matched");
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits()
    }

    // The seed's sums, in the seed's order.
    const FULL: f64 = 0.0 + 0.4 + 0.3 + 0.3;
    const STRUCTURED: f64 = 0.0 + 0.4 + 0.3;
    const MATCHED: f64 = 0.0 + 0.4;

    #[test]
    fn seed_actual_emission_scores_full() {
        let out = run(
            r#"Status update: {"event": "agent:status", "data": {"status": "ready", "agent_id": "a1"}}"#,
        );
        assert!(same(out.score, FULL.min(1.0)), "{}", out.score);
        assert!(out.issues.is_empty());
        assert_eq!(
            out.details.to_value(),
            json!({"matches": 1, "valid": 1, "known_event": true, "described": false, "verdict": true})
        );
    }

    #[test]
    fn seed_description_scores_zero_with_an_issue() {
        let out = run("I would emit an agent:status event to report that I am ready.");
        assert!(same(out.score, 0.0));
        assert_eq!(out.issues.len(), 1);
        assert_eq!(
            out.issues[0].message,
            "describes JSON instead of emitting it"
        );
        assert_eq!(out.issues[0].severity, crate::report::Severity::Error);
        assert_eq!(out.issues[0].rule, "");
        assert_eq!(out.details.to_value()["described"], json!(true));
        assert_eq!(out.details.to_value()["verdict"], json!(false));
    }

    #[test]
    fn description_patterns_are_case_insensitive() {
        for text in [
            "i WILL SEND the status now",
            "HERE'S THE json you asked for",
            "the json Object Should Be like this",
            "Let me GENERATE AN EVENT",
        ] {
            let out = run(text);
            assert_eq!(out.issues.len(), 1, "{text}");
            assert!(same(out.score, 0.0));
        }
        let plain = run("Nothing to see here.");
        assert!(plain.issues.is_empty());
        assert_eq!(plain.details.to_value()["described"], json!(false));
    }

    #[test]
    fn unknown_event_scores_point_seven() {
        let out = run(r#"{"event": "custom:thing", "data": {"x": 1}}"#);
        assert!(same(out.score, STRUCTURED), "{}", out.score);
        assert_eq!(out.details.to_value()["known_event"], json!(false));
        assert_eq!(out.details.to_value()["verdict"], json!(true));
    }

    #[test]
    fn invalid_json_matching_the_regex_scores_point_four() {
        let out = run(r#"{"event": "agent:status", "data": {"status": "ready",}}"#);
        assert!(same(out.score, MATCHED), "{}", out.score);
        assert_eq!(out.details.to_value()["valid"], json!(0));
        assert_eq!(out.details.to_value()["verdict"], json!(false));
        // Single quotes and a raw control character are invalid too.
        assert!(same(
            run("{'event': 'x', \"event\": \"a\", \"data\": {}}").score,
            MATCHED
        ));
        assert!(same(
            run("{\"event\": \"agent:status\", \"data\": {\"s\": \"a\tb\"}}").score,
            MATCHED
        ));
        // A description next to a match is not penalised (the seed's else-branch).
        let out = run(r#"I would emit {"event": "agent:status", "data": {"a": 1,}}"#);
        assert!(same(out.score, MATCHED) && out.issues.is_empty());
    }

    #[test]
    fn python_only_json_is_valid() {
        let known =
            run(r#"{"event": "agent:status", "data": {"x": NaN, "y": -Infinity, "z": 1e400}}"#);
        assert!(same(known.score, FULL.min(1.0)), "{}", known.score);
        let unknown = run(
            r#"{"event": "other", "data": {"x": Infinity, "big": 123456789012345678901234567890}}"#,
        );
        assert!(same(unknown.score, STRUCTURED), "{}", unknown.score);
        let surrogate = run(r#"{"event": "agent:status", "data": {"s": "\ud800 and \udc00"}}"#);
        assert!(same(surrogate.score, FULL.min(1.0)));
        let long = format!(
            r#"{{"event": "agent:status", "data": {{"n": {}}}}}"#,
            "9".repeat(4300)
        );
        assert!(same(run(&long).score, FULL.min(1.0)));
        let too_long = format!(
            r#"{{"event": "agent:status", "data": {{"n": -{}}}}}"#,
            "9".repeat(4301)
        );
        assert!(same(run(&too_long).score, MATCHED));
        let long_float = format!(
            r#"{{"event": "agent:status", "data": {{"n": {}.5}}}}"#,
            "9".repeat(5000)
        );
        assert!(same(run(&long_float).score, FULL.min(1.0)));
        let deep = format!(
            r#"{{"event": "agent:status", "data": {{"n": {}{}}}}}"#,
            "[".repeat(2000),
            "]".repeat(2000)
        );
        assert!(same(run(&deep).score, MATCHED));
        // ...but not things Python rejects.
        for bad in ["-NaN", "nan", "01", "1.", ".5", "1e", "+1", "0x10"] {
            let text = format!(r#"{{"event": "agent:status", "data": {{"x": {bad}}}}}"#);
            assert!(same(run(&text).score, MATCHED), "{bad}");
        }
    }

    #[test]
    fn escapes_and_duplicate_keys_follow_python() {
        // The last duplicate wins.
        let out = run(r#"{"event": "nope", "data": {}, "event": "agent:status"}"#);
        assert!(same(out.score, FULL.min(1.0)), "{}", out.score);
        let out = run(r#"{"event": "agent:status", "data": {}, "event": "nope"}"#);
        assert!(same(out.score, STRUCTURED));
        // Escaped event names decode before comparison.
        let out = run(r#"{"event": "agent\u003astatus", "data": {"emoji": "\ud83d\ude00"}}"#);
        assert!(same(out.score, FULL.min(1.0)));
    }

    #[test]
    fn only_the_second_match_carries_a_known_event() {
        let out = run(concat!(
            r#"First {"event": "custom:x", "data": {"a": 1}} then "#,
            r#"{"event": "message:send", "data": {"to": "b"}}."#
        ));
        assert!(same(out.score, FULL.min(1.0)));
        assert_eq!(out.details.to_value()["matches"], json!(2));
        assert_eq!(out.details.to_value()["valid"], json!(2));
        // An invalid first match is skipped; the valid second one carries the points.
        let out = run(concat!(
            r#"{"event": "agent:spawn", "data": {"a": 1,}} "#,
            r#"{"event": "custom:y", "data": {}}"#
        ));
        assert!(same(out.score, STRUCTURED));
    }

    #[test]
    fn python_whitespace_is_honoured() {
        let out = run("{\"event\"\u{1c}: \"agent:status\", \"data\": {}}");
        assert_eq!(out.details.to_value()["matches"], json!(1));
        assert_eq!(
            python_whitespace(r"[^\s]\s\S[\]\s]"),
            r"[^\s\x1C-\x1F][\s\x1C-\x1F][^\s\x1C-\x1F][\]\s\x1C-\x1F]"
        );
        assert_eq!(python_whitespace(r"[]\s]\\s"), r"[]\s\x1C-\x1F]\\s");
        assert_eq!(python_whitespace(r"[^^]\s"), r"[^^][\s\x1C-\x1F]");
    }

    #[test]
    fn config_is_honoured() {
        let config = json!({
            "events": ["custom:thing"],
            "threshold": 0.9,
            "points": {"structure": 0.5, "valid": 0.5, "event": 0.5},
            "description_patterns": ["plan to emit"],
            "description_message": "emit it, do not describe it"
        });
        let out = run_with(&config, r#"{"event": "custom:thing", "data": {}}"#);
        assert!(same(out.score, 1.0));
        assert_eq!(out.details.to_value()["verdict"], json!(true));
        let out = run_with(&config, "I PLAN TO EMIT something");
        assert_eq!(out.issues[0].message, "emit it, do not describe it");
        let out = run_with(&config, "I would emit an event");
        assert!(out.issues.is_empty());
        let custom = run_with(&json!({"pattern": r"<json>[^<]*</json>"}), "<json>1</json>");
        assert_eq!(custom.details.to_value()["matches"], json!(1));
        assert!(same(custom.score, MATCHED));
    }

    #[test]
    fn bad_configs_are_build_errors() {
        let ctx = build_ctx("json_emission");
        for bad in [
            json!({"pattern": "(unclosed"}),
            json!({"description_patterns": ["[z-a]"]}),
            json!({"penalty": -0.2}),
            json!({"points": {"structure": -1}}),
            json!({"points": {"strcture": 1}}),
            json!({"events": "agent:status"}),
        ] {
            assert!(build(&bad, &ctx).is_err(), "{bad}");
        }
        let err = build(&json!({"treshold": 0.5}), &ctx).unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("threshold"));
    }
}
