//! Detectors (postprocessors) on every text a record carries: the output, the
//! messages of a transcript by role, tool outputs and the arguments of tool
//! calls. `no_secrets` finds credentials in provider token formats;
//! `no_hidden_unicode` finds characters a reader cannot see (bidirectional
//! controls, tag characters, zero-width and other invisible characters).
//! Both judge a proposal too: a proposed call whose arguments carry a secret
//! or a hidden character is denied.

use std::sync::Arc;

use regex::{Regex, RegexSet};
use serde::Deserialize;
use serde_json::Value;

use super::Builtin;
use crate::build::BuildCtx;
use crate::codes;
use crate::component::{
    self, BuildError, Compiled, Context, Early, EvalError, Kind, PostOutput, Postprocessor,
};
use crate::json::{escape_pointer, Json};
use crate::report::{Issue, Severity};
use crate::transcript::Role;

const APPLIES: super::Applies = super::Applies {
    conversation: "applied: the messages of the roles in `in`, tool outputs and every call's arguments",
    single_output: "applied: the output's text",
    proposal: "applied: a proposed call's arguments decide it; the earlier messages' findings are `history`",
};

pub const NO_SECRETS: Builtin = Builtin {
    name: "no_secrets",
    kind: Kind::Postprocessor,
    summary: "No credentials (cloud keys, VCS, chat-service and AI-provider tokens, private key blocks) in the output, messages, tool outputs or call arguments",
    streaming: "at `finish()`",
    applies: APPLIES,
    docs: include_str!("../../../../docs/builtins/no_secrets.md"),
    build: build_secrets,
};

pub const NO_HIDDEN_UNICODE: Builtin = Builtin {
    name: "no_hidden_unicode",
    kind: Kind::Postprocessor,
    summary: "No characters a reader cannot see (bidirectional controls, tag characters, zero-width and other invisible characters) in the output, messages, tool outputs or call arguments",
    streaming: "at `finish()`",
    applies: APPLIES,
    docs: include_str!("../../../../docs/builtins/no_hidden_unicode.md"),
    build: build_unicode,
};

/// Where a detector looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Place {
    Output,
    System,
    User,
    Assistant,
    Tool,
    Arguments,
}

const EVERY_PLACE: [Place; 6] = [
    Place::Output,
    Place::System,
    Place::User,
    Place::Assistant,
    Place::Tool,
    Place::Arguments,
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "every_place", rename = "in")]
    places: Vec<Place>,
    #[serde(default = "error_severity")]
    severity: Severity,
}

fn every_place() -> Vec<Place> {
    EVERY_PLACE.to_vec()
}

fn error_severity() -> Severity {
    Severity::Error
}

/// What a detector finds in one text: the message of its issue.
trait Finder: Send + Sync + std::fmt::Debug {
    fn find(&self, text: &str) -> Option<String>;
    fn code(&self) -> &'static str;
}

/// A detector: a finder, run on the places configured.
#[derive(Debug)]
struct Detector<F> {
    finder: F,
    places: Vec<Place>,
    severity: Severity,
}

fn build_with<F: Finder + 'static>(
    name: &str,
    config: &Value,
    finder: F,
) -> Result<Compiled, BuildError> {
    let config: Config = component::parse_config(name, config)?;
    if config.places.is_empty() {
        return Err(BuildError::new(format!(
            "{name}: `in` is empty: the detector would look nowhere (leave `in` out to look everywhere)"
        ))
        .at_key("in"));
    }
    Ok(Compiled::Postprocessor(Arc::new(Detector {
        finder,
        places: config.places,
        severity: config.severity,
    })))
}

fn build_secrets(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    build_with(ctx.name, config, Secrets::new())
}

fn build_unicode(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    build_with(ctx.name, config, HiddenUnicode)
}

impl<F: Finder> Detector<F> {
    fn looks_at(&self, place: Place) -> bool {
        self.places.contains(&place)
    }

    fn check(&self, text: &str, path: Option<&str>, turn: Option<usize>, out: &mut Vec<Issue>) {
        if let Some(message) = self.finder.find(text) {
            let code = self.finder.code();
            out.push(super::text_issue(code, self.severity, message, path, turn));
        }
    }

    /// Every string in a call's arguments, each at its pointer.
    fn arguments(&self, value: &Json, path: &mut String, turn: usize, out: &mut Vec<Issue>) {
        match value {
            Json::String(text) => self.check(text, Some(path), Some(turn), out),
            Json::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    self.arguments(item, path, turn, out);
                    path.truncate(len);
                }
            }
            Json::Object(members) => {
                for (name, member) in members.iter() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&escape_pointer(name));
                    // A key can hide text too.
                    self.check(name, Some(path), Some(turn), out);
                    self.arguments(member, path, turn, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

impl<F: Finder> Postprocessor for Detector<F> {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let mut issues = Vec::new();
        match ctx.turns {
            None => {
                if self.looks_at(Place::Output) {
                    self.check(ctx.output, None, None, &mut issues);
                }
            }
            Some(turns) => {
                let mut keep_going = ctx.budget.watch();
                for (index, turn) in turns.iter().enumerate() {
                    let place = match turn.role {
                        Role::System => Place::System,
                        Role::User => Place::User,
                        Role::Assistant => Place::Assistant,
                        Role::Tool => Place::Tool,
                    };
                    if self.looks_at(place) {
                        self.check(&turn.text, Some(&turn.path), Some(index), &mut issues);
                    }
                    if self.looks_at(Place::Arguments) {
                        for call in &turn.tool_calls {
                            let mut path = call.arguments_path.clone();
                            self.arguments(&call.arguments, &mut path, index, &mut issues);
                        }
                    }
                    if !keep_going(turn.text.len() + 1) {
                        break;
                    }
                }
            }
        }
        Ok(PostOutput { issues, json: None })
    }

    fn on_proposal(&self) -> bool {
        true
    }

    fn early(&self) -> Early {
        Early::AtFinish { keeps_json: true }
    }
}

/// Provider token formats, each with the name an issue gives it.
const SECRET_FORMATS: [(&str, &str); 16] = [
    (
        "an AWS access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    ),
    ("a Google API key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    ("a GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b"),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("a Slack token", r"\bxox[baprs]-[A-Za-z0-9\-]{10,}"),
    (
        "a Slack webhook URL",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
    ),
    ("a Stripe key", r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    (
        "an Anthropic API key",
        r"\bsk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_\-]{32,}",
    ),
    (
        "an OpenAI API key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}",
    ),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    (
        "a SendGrid API key",
        r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b",
    ),
    (
        "a Telegram bot token",
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b",
    ),
    (
        "a private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    ),
];

/// The provider formats, compiled once: a set finds which match in one pass,
/// then the first that does is located.
#[derive(Debug)]
struct Secrets {
    set: RegexSet,
    each: Vec<Regex>,
}

impl Secrets {
    fn new() -> Self {
        let patterns = SECRET_FORMATS.map(|(_, pattern)| pattern);
        Self {
            set: RegexSet::new(patterns).expect("the secret formats are valid"),
            each: patterns
                .iter()
                .map(|p| Regex::new(p).expect("the secret formats are valid"))
                .collect(),
        }
    }
}

impl Finder for Secrets {
    fn find(&self, text: &str) -> Option<String> {
        let kinds: Vec<usize> = self.set.matches(text).into_iter().collect();
        let first = *kinds.first()?;
        let found = self.each[first].find(text)?;
        let secret = found.as_str();
        let shown: String = secret.chars().take(4).collect();
        let more = if kinds.len() > 1 { " (and more)" } else { "" };
        Some(format!(
            "{} (`{shown}…`, {} characters) at character {}{more}: a secret must not be passed on",
            SECRET_FORMATS[first].0,
            secret.chars().count(),
            text[..found.start()].chars().count() + 1
        ))
    }

    fn code(&self) -> &'static str {
        codes::SECRET_FOUND
    }
}

/// Characters a reader cannot see.
#[derive(Debug)]
struct HiddenUnicode;

/// A hidden character's name and class, or `None` for a visible one (or one
/// that is hidden only where it belongs: a zero-width joiner between emoji,
/// tag characters in a flag's sequence).
fn hidden(c: char) -> Option<(&'static str, &'static str)> {
    const BIDI: &str = "a bidirectional control";
    const ZERO: &str = "a zero-width character";
    const INVISIBLE: &str = "an invisible character";
    const SELECTOR: &str = "a variation selector";
    Some(match c {
        '\u{202A}' => ("LEFT-TO-RIGHT EMBEDDING", BIDI),
        '\u{202B}' => ("RIGHT-TO-LEFT EMBEDDING", BIDI),
        '\u{202C}' => ("POP DIRECTIONAL FORMATTING", BIDI),
        '\u{202D}' => ("LEFT-TO-RIGHT OVERRIDE", BIDI),
        '\u{202E}' => ("RIGHT-TO-LEFT OVERRIDE", BIDI),
        '\u{2066}' => ("LEFT-TO-RIGHT ISOLATE", BIDI),
        '\u{2067}' => ("RIGHT-TO-LEFT ISOLATE", BIDI),
        '\u{2068}' => ("FIRST STRONG ISOLATE", BIDI),
        '\u{2069}' => ("POP DIRECTIONAL ISOLATE", BIDI),
        '\u{200E}' => ("LEFT-TO-RIGHT MARK", BIDI),
        '\u{200F}' => ("RIGHT-TO-LEFT MARK", BIDI),
        '\u{061C}' => ("ARABIC LETTER MARK", BIDI),
        '\u{E0000}'..='\u{E007F}' => ("a TAG character", "a tag character"),
        '\u{200B}' => ("ZERO WIDTH SPACE", ZERO),
        '\u{200C}' => ("ZERO WIDTH NON-JOINER", ZERO),
        '\u{200D}' => ("ZERO WIDTH JOINER", ZERO),
        '\u{2060}' => ("WORD JOINER", ZERO),
        '\u{FEFF}' => ("ZERO WIDTH NO-BREAK SPACE", ZERO),
        '\u{00AD}' => ("SOFT HYPHEN", INVISIBLE),
        '\u{034F}' => ("COMBINING GRAPHEME JOINER", INVISIBLE),
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => ("a HANGUL FILLER", INVISIBLE),
        '\u{17B4}' | '\u{17B5}' => ("a KHMER INHERENT VOWEL", INVISIBLE),
        '\u{180E}' => ("MONGOLIAN VOWEL SEPARATOR", INVISIBLE),
        '\u{2061}'..='\u{2064}' => ("an INVISIBLE OPERATOR", INVISIBLE),
        '\u{FE00}'..='\u{FE0D}' | '\u{E0100}'..='\u{E01EF}' => ("a VARIATION SELECTOR", SELECTOR),
        _ => return None,
    })
}

/// Whether `c` is a pictograph an emoji sequence joins (the ranges emoji
/// live in).
fn pictographic(c: char) -> bool {
    matches!(c, '\u{1F000}'..='\u{1FAFF}' | '\u{2600}'..='\u{27BF}' | '\u{2300}'..='\u{23FF}' | '\u{2B00}'..='\u{2BFF}' | '\u{FE0F}')
}

impl Finder for HiddenUnicode {
    fn find(&self, text: &str) -> Option<String> {
        // (Most texts are ASCII: nothing to look at.)
        if text.is_ascii() {
            return None;
        }
        let chars: Vec<char> = text.chars().collect();
        let mut first = None;
        let mut count = 0usize;
        let mut in_flag = false;
        for (at, &c) in chars.iter().enumerate() {
            // An emoji flag's tag sequence: U+1F3F4, tags, U+E007F.
            if c == '\u{1F3F4}' {
                in_flag = true;
                continue;
            }
            if in_flag && ('\u{E0020}'..='\u{E007F}').contains(&c) {
                if c == '\u{E007F}' {
                    in_flag = false;
                }
                continue;
            }
            in_flag = false;
            let Some(found) = hidden(c) else { continue };
            if c == '\u{200D}'
                && at > 0
                && pictographic(chars[at - 1])
                && chars.get(at + 1).copied().is_some_and(pictographic)
            {
                continue; // joins two emoji
            }
            count += 1;
            first.get_or_insert((at, c, found));
        }
        let (at, c, (name, class)) = first?;
        let more = match count - 1 {
            0 => String::new(),
            1 => " (and 1 more)".to_owned(),
            n => format!(" (and {n} more)"),
        };
        Some(format!(
            "hidden character U+{:04X} ({name}, {class}) at character {}{more}",
            u32::from(c),
            at + 1
        ))
    }

    fn code(&self) -> &'static str {
        codes::UNICODE_HIDDEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_format_is_found_and_its_text_never_shown() {
        let samples = [
            "AKIAIOSFODNN7EXAMPLE",
            "AIzaSyD-1234567890abcdefghijklmnopqrstu",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "glpat-abcdefghij0123456789",
            "xoxb-1234567890-abcdefghij",
            "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx",
            "sk_live_0123456789abcdefghijklmn",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "hf_abcdefghijklmnopqrstuvwxyz01234567",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
            "123456789:AAabcdefghijklmnopqrstuvwxyz0123456",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
        ];
        let secrets = Secrets::new();
        for (sample, (kind, _)) in samples.iter().zip(SECRET_FORMATS) {
            let text = format!("Use this: {sample} then go.");
            let message = secrets
                .find(&text)
                .unwrap_or_else(|| panic!("{kind} not found in {text}"));
            assert!(message.starts_with(kind), "{message}");
            assert!(message.contains("at character 11"), "{message}");
            assert!(
                !message.contains(&sample[6..]),
                "{message} shows the secret"
            );
        }
        // Ordinary text, hashes and ids are not secrets.
        for text in [
            "The order QX7P2K shipped.",
            "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "task-ask-user",
            "AKIA is a prefix",
            "sk-12345",
        ] {
            assert_eq!(secrets.find(text), None, "{text}");
        }
    }

    #[test]
    fn hidden_characters_are_found_and_emoji_sequences_are_not() {
        let unicode = HiddenUnicode;
        for (text, first) in [
            (
                "abc\u{202E}fed",
                "U+202E (RIGHT-TO-LEFT OVERRIDE, a bidirectional control) at character 4",
            ),
            (
                "a\u{200B}b\u{200B}c",
                "U+200B (ZERO WIDTH SPACE, a zero-width character) at character 2 (and 1 more)",
            ),
            (
                "x\u{E0041}\u{E0042}",
                "U+E0041 (a TAG character, a tag character) at character 2 (and 1 more)",
            ),
            (
                "soft\u{00AD}hyphen",
                "U+00AD (SOFT HYPHEN, an invisible character) at character 5",
            ),
            (
                "a\u{200D}b",
                "U+200D (ZERO WIDTH JOINER, a zero-width character) at character 2",
            ),
            (
                "😀\u{E0100}",
                "U+E0100 (a VARIATION SELECTOR, a variation selector) at character 2",
            ),
        ] {
            let message = unicode.find(text).unwrap_or_else(|| panic!("{text:?}"));
            assert!(message.ends_with(first), "{message}");
        }
        for text in [
            "plain ascii",
            "café, naïve, 日本語, مرحبا",
            "family: 👨\u{200D}👩\u{200D}👧",
            "heart: ❤\u{FE0F}",
            "flag: 🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
        ] {
            assert_eq!(unicode.find(text), None, "{text:?}");
        }
    }
}
