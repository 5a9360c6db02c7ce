//! The helper library registered for scripts (documented in `docs/scripting.md`).
//!
//! Helpers are plain native functions: they cannot reach files, the network or
//! processes. A helper that fails raises a Rhai runtime error whose message
//! starts with `name(): `, which scripts may catch with `try { } catch (e) { }`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use regex::{Regex, RegexBuilder};
use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, FLOAT, INT};

use super::convert::{int, text as text_value, to_dynamic, to_json};
use super::strings::{jaro_winkler, token_set_ratio};
use crate::component::Context;
use crate::text::{count_sentences, levenshtein_until, similarity_until};

type HelperResult<T> = Result<T, Box<EvalAltResult>>;

/// Every helper's name, so an error raised by one reads as the helper's error
/// (not as a script's own `throw`).
pub const NAMES: &[&str] = &[
    "regex_test",
    "regex_find_all",
    "regex_captures",
    "regex_escape",
    "levenshtein",
    "similarity",
    "jaro_winkler",
    "token_set_ratio",
    "json_pointer",
    "parse_json",
    "to_json",
    "sentence_count",
    "word_count",
    "compare",
    "compare_with",
    "sleep",
    "skip",
    "trimmed",
    "replaced",
    "short_number",
    "split",
    "split_rev",
    "to_chars",
    "tool_calls",
];

/// Whether a runtime error's text was raised by a helper.
pub fn is_helper_error(message: &str) -> bool {
    message
        .split_once("(): ")
        .is_some_and(|(name, _)| NAMES.contains(&name))
}

fn fail<T>(helper: &str, message: impl std::fmt::Display) -> HelperResult<T> {
    Err(format!("{helper}(): {message}").into())
}

pub fn register(engine: &mut Engine, limits: &super::ScriptLimits, regexes: &Arc<RegexCache>) {
    // Rhai's core `sleep` would block the worker thread past the call's deadline
    // (no operations run while it sleeps): scripts get an error instead.
    engine.register_fn("sleep", |_: INT| -> HelperResult<()> {
        fail("sleep", "not available to scripts")
    });
    engine.register_fn("sleep", |_: FLOAT| -> HelperResult<()> {
        fail("sleep", "not available to scripts")
    });
    register_regex(engine, limits.max_array_size, regexes);
    register_text(engine);
    register_json(engine);
    engine.register_fn("tool_calls", tool_calls);
    // `compare_with` is the same helper under a name a strategy script's own
    // `fn compare(expected, actual, ctx)` does not shadow.
    engine.register_fn("compare", compare_strategy);
    engine.register_fn("compare_with", compare_strategy);
    // A metric that does not apply to the record: `return skip("no reference");`
    engine.register_fn("skip", |reason: &str| -> HelperResult<rhai::Map> {
        if reason.trim().is_empty() {
            return fail(
                "skip",
                "say why the metric does not apply: skip(\"no reference answer\")",
            );
        }
        let mut map = rhai::Map::new();
        map.insert("skip".into(), Dynamic::from(reason.to_owned()));
        Ok(map)
    });
}

/// `regex_test`, `regex_find_all`, `regex_captures`, `regex_escape`, and the
/// `split` family (arrays of at most `max_items`).
fn register_regex(engine: &mut Engine, max_items: usize, regexes: &Arc<RegexCache>) {
    let cache = Arc::clone(regexes);
    engine.register_fn(
        "regex_test",
        move |text: &str, pattern: &str| -> HelperResult<bool> {
            Ok(cache.get("regex_test", pattern)?.is_match(text))
        },
    );
    let cache = Arc::clone(regexes);
    engine.register_fn(
        "regex_find_all",
        move |text: &str, pattern: &str| -> HelperResult<Array> {
            let regex = cache.get("regex_find_all", pattern)?;
            let mut found = Array::new();
            for m in regex.find_iter(text) {
                if max_items > 0 && found.len() >= max_items {
                    return too_many("regex_find_all", max_items);
                }
                found.push(text_value(m.as_str()));
                if found.len().is_multiple_of(BUDGET_EVERY_ITEMS) {
                    within_budget()?;
                }
            }
            settle(found)
        },
    );
    register_split(engine, max_items);
    let cache = Arc::clone(regexes);
    engine.register_fn(
        "regex_captures",
        move |text: &str, pattern: &str| -> HelperResult<Dynamic> {
            let regex = cache.get("regex_captures", pattern)?;
            let Some(caps) = regex.captures(text) else {
                return Ok(Dynamic::UNIT);
            };
            let groups: Array = caps
                .iter()
                .map(|g| g.map_or(Dynamic::UNIT, |m| text_value(m.as_str())))
                .collect();
            let named: Map = regex
                .capture_names()
                .flatten()
                .map(|name| {
                    let value = caps
                        .name(name)
                        .map_or(Dynamic::UNIT, |m| text_value(m.as_str()));
                    (name.into(), value)
                })
                .collect();
            let mut result = Map::new();
            result.insert("groups".into(), Dynamic::from_array(groups));
            result.insert("named".into(), Dynamic::from_map(named));
            Ok(Dynamic::from_map(result))
        },
    );
    engine.register_fn("regex_escape", |text: &str| -> String {
        regex::escape(text)
    });
}

/// The text measures: distances, similarities, counts.
fn register_text(engine: &mut Engine) {
    // Quadratic in the lengths: on megabyte strings they would run for hours
    // without Rhai counting an operation, so they watch the call's deadline.
    engine.register_fn("levenshtein", |a: &str, b: &str| -> HelperResult<INT> {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        levenshtein_until(&a, &b, &mut super::frame::watch())
            .map_or_else(timed_out, |d| settle(int(d)))
    });
    engine.register_fn("similarity", |a: &str, b: &str| -> HelperResult<FLOAT> {
        similarity_until(a, b, &mut super::frame::watch()).map_or_else(timed_out, settle)
    });
    engine.register_fn("jaro_winkler", |a: &str, b: &str| -> HelperResult<FLOAT> {
        jaro_winkler(a, b, &mut super::frame::watch()).map_or_else(timed_out, settle)
    });
    engine.register_fn(
        "token_set_ratio",
        |a: &str, b: &str| -> HelperResult<FLOAT> {
            token_set_ratio(a, b, &mut super::frame::watch()).map_or_else(timed_out, settle)
        },
    );
    // Rhai's `trim()` and `replace()` change the string in place and return
    // `()`: `answer.trim() == ""` is always false. These return the new text.
    engine.register_fn("trimmed", |text: &str| -> String { text.trim().to_owned() });
    engine.register_fn("replaced", |text: &str, from: &str, to: &str| -> String {
        text.replace(from, to)
    });
    // Numbers in messages as the built-ins write them: `0.2549`, `1`.
    engine.register_fn("short_number", |x: FLOAT| -> String {
        crate::text::short_number(x, x)
    });
    engine.register_fn("short_number", |x: INT| -> String { x.to_string() });
    engine.register_fn("short_number", |x: FLOAT, other: FLOAT| -> String {
        crate::text::short_number(x, other)
    });
    engine.register_fn("sentence_count", |text: &str| -> INT {
        int(count_sentences(text))
    });
    engine.register_fn("word_count", |text: &str| -> INT {
        int(text.split_whitespace().count())
    });
}

/// `tool_calls(ctx.turns)`: every call of a transcript, in order, each the
/// call's map (`id`, `name`, `arguments`, `path`) with `turn` (its turn's
/// index), `result` (the text of the tool turn that answers it, `()` when none
/// does) and `is_error` (that turn's). `()` (a record without a transcript)
/// has none.
fn tool_calls(turns: &mut Dynamic) -> HelperResult<Array> {
    if turns.is_unit() {
        return Ok(Array::new());
    }
    let Some(turns) = turns.read_lock::<Array>() else {
        return fail(
            "tool_calls",
            format!(
                "takes `ctx.turns`, an array of turns, got {}",
                turns.type_name()
            ),
        );
    };
    let field = |map: &Map, key: &str| map.get(key).cloned().unwrap_or(Dynamic::UNIT);
    // The results, by the id of the call each answers (the first for an id).
    let mut results: HashMap<String, (Dynamic, Dynamic)> = HashMap::new();
    for turn in turns.iter() {
        let Some(turn) = turn.read_lock::<Map>() else {
            continue;
        };
        if field(&turn, "role").into_immutable_string().ok().as_deref() == Some("tool") {
            if let Ok(id) = field(&turn, "tool_call_id").into_immutable_string() {
                results
                    .entry(id.to_string())
                    .or_insert_with(|| (field(&turn, "text"), field(&turn, "is_error")));
            }
        }
    }
    let mut calls = Array::new();
    for (index, turn) in turns.iter().enumerate() {
        let Some(turn) = turn.read_lock::<Map>() else {
            continue;
        };
        let Some(list) = turn.get("tool_calls") else {
            continue;
        };
        let Some(list) = list.read_lock::<Array>() else {
            continue;
        };
        for call in list.iter() {
            let Some(call) = call.read_lock::<Map>() else {
                continue;
            };
            let mut out = call.clone();
            let id = field(&call, "id")
                .into_immutable_string()
                .unwrap_or_default();
            let (result, is_error) = results
                .get(id.as_str())
                .cloned()
                .unwrap_or((Dynamic::UNIT, Dynamic::FALSE));
            out.insert("turn".into(), Dynamic::from_int(int(index)));
            out.insert("result".into(), result);
            out.insert("is_error".into(), is_error);
            calls.push(Dynamic::from_map(out));
        }
    }
    Ok(calls)
}

/// `json_pointer`, `parse_json`, `to_json`.
fn register_json(engine: &mut Engine) {
    engine.register_fn(
        "json_pointer",
        // `&mut`: Rhai passes a first argument by reference, so looking into
        // `ctx.json` does not copy the whole document per call.
        |value: &mut Dynamic, pointer: &str| -> HelperResult<Dynamic> {
            if pointer.is_empty() {
                return Ok(value.clone());
            }
            let Some(rest) = pointer.strip_prefix('/') else {
                return fail(
                    "json_pointer",
                    format!(
                        "`{}` is not a JSON pointer (it must be \"\" or start with `/`)",
                        crate::files::excerpt(pointer)
                    ),
                );
            };
            Ok(lookup(value, rest.split('/')))
        },
    );
    engine.register_fn("parse_json", |text: &str| -> HelperResult<Dynamic> {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value) => Ok(to_dynamic(&value.into())),
            Err(err) => fail("parse_json", format!("not JSON: {err}")),
        }
    });
    engine.register_fn("to_json", |value: &mut Dynamic| -> HelperResult<String> {
        match to_json(value) {
            Ok(value) => Ok(value.to_string()),
            Err(reason) => fail("to_json", reason.replacen("returned ", "", 1)),
        }
    });
}

/// The most characters of a regex error's reason quoted (it quotes the pattern).
const MAX_REASON_CHARS: usize = 160;

/// How many items a helper building an array adds between two budget checks.
const BUDGET_EVERY_ITEMS: usize = 4096;

/// Rhai's `split` family, with the number of pieces counted before any is built:
/// `text.split("")` on a 16 MB string would otherwise build 16 million strings
/// (a gigabyte) before Rhai's array limit is checked on the result.
fn register_split(engine: &mut Engine, max_items: usize) {
    let check = move |pieces: usize| -> HelperResult<()> {
        if max_items > 0 && pieces > max_items {
            return too_many("split", max_items);
        }
        within_budget()
    };
    let pieces = |text: &str, delimiter: &str| {
        if delimiter.is_empty() {
            text.chars().count() + 2
        } else {
            text.matches(delimiter).count() + 1
        }
    };
    let collect =
        |parts: &mut dyn Iterator<Item = &str>| -> Array { parts.map(text_value).collect() };
    let by_text = move |text: &str, delimiter: &str, reverse: bool| -> HelperResult<Array> {
        if text.is_empty() || (!delimiter.is_empty() && !text.contains(delimiter)) {
            return Ok(vec![text_value(text)]);
        }
        check(pieces(text, delimiter))?;
        settle(if reverse {
            collect(&mut text.rsplit(delimiter))
        } else {
            collect(&mut text.split(delimiter))
        })
    };
    let by_char = move |text: &str, delimiter: char, reverse: bool| -> HelperResult<Array> {
        check(text.matches(delimiter).count() + 1)?;
        settle(if reverse {
            collect(&mut text.rsplit(delimiter))
        } else {
            collect(&mut text.split(delimiter))
        })
    };
    engine.register_fn("split", move |t: &str, d: &str| by_text(t, d, false));
    engine.register_fn("split_rev", move |t: &str, d: &str| by_text(t, d, true));
    engine.register_fn("split", move |t: &str, d: char| by_char(t, d, false));
    engine.register_fn("split_rev", move |t: &str, d: char| by_char(t, d, true));
    engine.register_fn("split", move |text: &str| -> HelperResult<Array> {
        if text.is_empty() {
            return Ok(vec![text_value(text)]);
        }
        check(text.split_whitespace().count())?;
        settle(collect(&mut text.split_whitespace()))
    });
    engine.register_fn("to_chars", move |text: &str| -> HelperResult<Array> {
        check(text.chars().count())?;
        settle(text.chars().map(Dynamic::from).collect())
    });
}

fn too_many<T>(helper: &str, max_items: usize) -> HelperResult<T> {
    fail(
        helper,
        format!("the result would have more than {max_items} items (limits.max_array_size)"),
    )
}

/// An error when the call has gone past its deadline or its memory.
fn within_budget() -> HelperResult<()> {
    super::over_budget().map_or(Ok(()), terminated)
}

/// A helper's result, unless the call went past its deadline or its memory
/// while the helper ran (the result is then not used).
fn settle<T>(result: T) -> HelperResult<T> {
    within_budget().map(|()| result)
}

/// The error a helper stopped by the deadline raises: the same as Rhai's own
/// termination by `on_progress`, so it reads as the limit the call hit.
fn timed_out<T>() -> HelperResult<T> {
    terminated(super::tripped().unwrap_or(super::TIMEOUT_TOKEN))
}

/// Ends the call with the token of the limit it hit, as `on_progress` does.
fn terminated<T>(token: &'static str) -> HelperResult<T> {
    Err(EvalAltResult::ErrorTerminated(Dynamic::from(token), rhai::Position::NONE).into())
}

#[allow(clippy::needless_pass_by_value)] // Rhai hands native functions their arguments by value
fn compare_strategy(name: &str, expected: Dynamic, actual: Dynamic) -> HelperResult<FLOAT> {
    let compared = super::with_current_context(|ctx| {
        let Some(strategy) = ctx.strategies.get(name) else {
            let hint = crate::suggest::nearest(name, ctx.strategies.names())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            let known = ctx.strategies.names().collect::<Vec<_>>().join(", ");
            return fail(
                "compare",
                format!("unknown strategy `{name}` (known: {known}){hint}"),
            );
        };
        let expected = to_json(&expected).or_else(|r| fail("compare", r))?;
        let actual = to_json(&actual).or_else(|r| fail("compare", r))?;
        // The strategy's set-up (a model load) takes neither the script's time
        // nor its memory; what the comparison keeps (the engine's caches) is
        // not the script's memory either: it gets back only a number.
        let compared =
            super::frame::outside_limits(super::frame::Time::Uncounted, ctx.budget, || {
                strategy.warm_up()
            })
            .and_then(|()| {
                // The comparison ends by this call's own deadline too (`fuzzy`
                // on long strings is quadratic).
                let budget = ctx.budget.ending_by(super::frame::innermost_deadline());
                let ctx = Context {
                    budget: &budget,
                    ..*ctx
                };
                super::frame::outside_limits(super::frame::Time::Counted, ctx.budget, || {
                    strategy.compare(&expected, &actual, &ctx)
                })
            });
        // A comparison the deadline stopped returns a number that must not be
        // used: the call ends as timed out, whatever the script would do with
        // it. (The step's own clock may not say so yet: the call's deadline is
        // read on the precise clock, the step's on the coarse one.)
        if super::past_deadline() {
            return timed_out();
        }
        compared.or_else(|err| fail("compare", format!("strategy `{name}`: {err}")))
    });
    compared.unwrap_or_else(|| fail("compare", "no record is being evaluated"))
}

/// Follows JSON-pointer tokens through maps and arrays; `()` when absent.
fn lookup<'a>(value: &Dynamic, mut tokens: impl Iterator<Item = &'a str>) -> Dynamic {
    let Some(token) = tokens.next() else {
        return value.clone();
    };
    let Some(key) = crate::json::unescape_pointer(token) else {
        return Dynamic::UNIT;
    };
    if let Some(map) = value.read_lock::<Map>() {
        return map
            .get(key.as_ref())
            .map_or(Dynamic::UNIT, |v| lookup(v, tokens));
    }
    if let Some(items) = value.read_lock::<Array>() {
        let canonical = key == "0" || (!key.starts_with('0') && !key.starts_with('+'));
        return match key.parse::<usize>() {
            Ok(index) if canonical => items
                .get(index)
                .map_or(Dynamic::UNIT, |v| lookup(v, tokens)),
            _ => Dynamic::UNIT,
        };
    }
    Dynamic::UNIT
}

/// The most patterns a [`RegexCache`] holds: when full it is emptied (scripts
/// use a handful of literal patterns; a script building patterns per record
/// must not grow memory without end).
const REGEX_CACHE_CAPACITY: usize = 512;

/// Patterns whose compiled form is larger than this are compiled for the call
/// and not kept: the regex crate allows 10 MiB per pattern, and 512 of those
/// would hold gigabytes for the whole run.
const CACHED_REGEX_SIZE_LIMIT: usize = 256 << 10;

/// The longest pattern a script may compile: parsing a megabyte of pattern takes
/// a second and hundreds of megabytes before it can fail.
const MAX_PATTERN_BYTES: usize = 64 << 10;

/// The patterns the regex helpers compiled, shared by the scripts of every
/// pack a runtime holds and by its threads: the runtime owns it
/// (`Runtime::regexes`), and each pack's script engine is handed it.
#[derive(Debug, Default)]
pub struct RegexCache(RwLock<HashMap<String, Arc<Regex>>>);

impl RegexCache {
    /// `pattern` compiled for `helper`: from the cache, or compiled now and
    /// kept (unless it compiles big).
    fn get(&self, helper: &str, pattern: &str) -> HelperResult<Arc<Regex>> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return fail(
                helper,
                format!(
                    "the pattern `{}` is {} bytes; patterns may be at most {MAX_PATTERN_BYTES}",
                    crate::files::excerpt(pattern),
                    pattern.len()
                ),
            );
        }
        if let Some(regex) = self
            .0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(pattern)
        {
            return Ok(Arc::clone(regex));
        }
        // Compiling a large pattern takes long and counts no operation: a script
        // compiling new patterns in a loop must not outrun its deadline by much.
        if super::past_deadline() {
            return timed_out();
        }
        let invalid = |err: regex::Error| {
            let reason = err
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            // regex's message quotes the pattern: keep its start only.
            let reason = crate::text::clip_chars(&reason, MAX_REASON_CHARS);
            fail(
                helper,
                format!(
                    "invalid regex `{}`: {reason}",
                    crate::files::excerpt(pattern)
                ),
            )
        };
        let regex = match RegexBuilder::new(pattern)
            .size_limit(CACHED_REGEX_SIZE_LIMIT)
            .build()
        {
            Ok(regex) => Arc::new(regex),
            Err(regex::Error::CompiledTooBig(_)) => {
                return Regex::new(pattern).map(Arc::new).or_else(invalid);
            }
            Err(err) => return invalid(err),
        };
        let mut cache = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= REGEX_CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), Arc::clone(&regex));
        Ok(regex)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.read().map_or(0, |c| c.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_errors_are_recognised() {
        assert!(is_helper_error("parse_json(): not JSON"));
        assert!(!is_helper_error("my own error"));
        assert!(!is_helper_error("nope(): x"));
    }

    #[test]
    fn patterns_are_compiled_once() {
        let cache = RegexCache::default();
        let a = cache.get("regex_test", "^unit-test-[0-9]+$").unwrap();
        let b = cache.get("regex_test", "^unit-test-[0-9]+$").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.len(), 1);
        // Another runtime's cache is its own.
        let other = RegexCache::default();
        assert!(!Arc::ptr_eq(
            &a,
            &other.get("regex_test", "^unit-test-[0-9]+$").unwrap()
        ));
        let err = cache.get("regex_test", "(unclosed").unwrap_err();
        assert!(
            err.to_string()
                .contains("regex_test(): invalid regex `(unclosed`"),
            "{err}"
        );
        // A pattern that compiles big is not kept (it still works).
        let big = r"^\w{100}$";
        assert!(cache
            .get("regex_test", big)
            .unwrap()
            .is_match(&"é".repeat(100)));
        assert!(!cache.0.read().map_or(true, |c| c.contains_key(big)));
        // Bounded: filling it empties it.
        for i in 0..REGEX_CACHE_CAPACITY + 50 {
            cache.get("regex_test", &format!("^bounded-{i}$")).unwrap();
            assert!(cache.len() <= REGEX_CACHE_CAPACITY);
        }
    }
}
