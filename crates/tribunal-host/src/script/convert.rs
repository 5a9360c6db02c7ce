//! JSON values to and from Rhai values, by hand (no JSON text in between).
//!
//! JSON `null` is Rhai's unit `()`, integers that fit are `INT` (i64), other
//! numbers `FLOAT` (f64), objects are maps (keys keep their order of insertion
//! only as far as Rhai's sorted maps allow: Rhai maps are sorted by key).

use rhai::{Array, Blob, Dynamic, ImmutableString, Map, FLOAT, INT};

use crate::component::Context;
use crate::json::{Json, Number, Object};
use crate::report::Issue;

/// How deeply nested a value a script returns may be (deeper is an error, not a
/// native stack overflow): the engine's one limit,
/// [`NESTING_LIMIT`](crate::json::NESTING_LIMIT).
const MAX_DEPTH: usize = crate::json::NESTING_LIMIT;

/// A JSON value as a Rhai value.
pub fn to_dynamic(value: &Json) -> Dynamic {
    match value {
        Json::Null => Dynamic::UNIT,
        Json::Bool(b) => Dynamic::from_bool(*b),
        Json::Number(n) => number(n),
        Json::String(s) => text(s),
        Json::Array(items) => Dynamic::from_array(items.iter().map(to_dynamic).collect()),
        Json::Object(map) => Dynamic::from_map(
            map.iter()
                .map(|(k, v)| (k.as_str().into(), to_dynamic(v)))
                .collect::<Map>(),
        ),
    }
}

fn number(n: &crate::json::Number) -> Dynamic {
    match n.as_i64() {
        Some(i) => Dynamic::from_int(i),
        None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// A string as a Rhai string.
pub fn text(s: &str) -> Dynamic {
    Dynamic::from(ImmutableString::from(s))
}

/// The context map a script receives: the shape of `Context::to_value`.
pub fn context(ctx: &Context<'_>, config: Dynamic) -> Dynamic {
    let mut map = Map::new();
    map.insert("output".into(), text(ctx.output));
    map.insert("json".into(), to_dynamic(ctx.json));
    let mut extraction = Map::new();
    extraction.insert(
        "tier".into(),
        ctx.extraction
            .tier
            .map_or(Dynamic::UNIT, |t| text(t.as_str())),
    );
    let repairs = if ctx.extraction.repairs.is_empty() {
        Dynamic::from_array(Array::new())
    } else {
        // Repairs are few and small; their serialised shape is the public one.
        serde_json::to_value(&ctx.extraction.repairs)
            .map_or(Dynamic::UNIT, |v| to_dynamic(&Json::from(v)))
    };
    extraction.insert("repairs".into(), repairs);
    if !ctx.extraction.schema_repairs.is_empty() {
        let changes = serde_json::to_value(&ctx.extraction.schema_repairs)
            .map_or(Dynamic::UNIT, |v| to_dynamic(&Json::from(v)));
        extraction.insert("schema_repairs".into(), changes);
    }
    extraction.insert(
        "raw_fallback".into(),
        Dynamic::from_bool(ctx.extraction.raw_fallback),
    );
    map.insert("extraction".into(), Dynamic::from_map(extraction));
    map.insert("expected".into(), to_dynamic(ctx.expected));
    map.insert("meta".into(), to_dynamic(ctx.meta));
    map.insert("config".into(), config);
    // Only a transcript record has turns (as in what plugins get); a missing
    // key reads as `()`.
    if let Some(turns) = ctx.turns {
        // Built once per record and shared (read-only: a script cannot change
        // what the next step reads), so a step run on each turn does not
        // convert every turn again for each one.
        let convert = || {
            Dynamic::from_array(turns.iter().map(turn).collect())
                .into_read_only()
                .into_shared()
        };
        let turns = match ctx.memo {
            Some(memo) => memo.turns(convert),
            None => convert(),
        };
        map.insert("turns".into(), turns);
    }
    if let Some(index) = ctx.turn {
        map.insert("turn".into(), Dynamic::from_int(index_int(index)));
    }
    map.insert("judging".into(), text(ctx.judging.as_str()));
    let issues = || {
        Dynamic::from_array(ctx.issues.iter().map(issue).collect())
            .into_read_only()
            .into_shared()
    };
    let issues = match (ctx.turn, ctx.memo) {
        // A step run on each turn sees the same issues on every turn (those
        // of the steps before it): converted once, not once per turn.
        (Some(_), Some(memo)) => memo.once(
            &format!("issues:{:p}:{}", ctx.issues.as_ptr(), ctx.issues.len()),
            issues,
        ),
        _ => Dynamic::from_array(ctx.issues.iter().map(issue).collect()),
    };
    map.insert("issues".into(), issues);
    map.insert(
        "scores".into(),
        Dynamic::from_map(
            ctx.scores
                .iter()
                .map(|(k, v)| (k.as_str().into(), Dynamic::from_float(*v)))
                .collect(),
        ),
    );
    Dynamic::from_map(map)
}

/// A turn of a transcript: `role`, `text`, `tool_calls` (each `id`, `name`,
/// `arguments`, `path`), `tool_call_id`, `is_error`, `path`.
fn turn(turn: &crate::transcript::Turn) -> Dynamic {
    let mut map = Map::new();
    map.insert("role".into(), text(turn.role.as_str()));
    map.insert("text".into(), text(&turn.text));
    let calls = turn
        .tool_calls
        .iter()
        .map(|call| {
            let mut map = Map::new();
            map.insert("id".into(), text(&call.id));
            map.insert("name".into(), text(&call.name));
            map.insert("arguments".into(), to_dynamic(&call.arguments));
            map.insert("path".into(), text(&call.path));
            Dynamic::from_map(map)
        })
        .collect();
    map.insert("tool_calls".into(), Dynamic::from_array(calls));
    map.insert(
        "tool_call_id".into(),
        turn.tool_call_id.as_deref().map_or(Dynamic::UNIT, text),
    );
    map.insert("is_error".into(), Dynamic::from_bool(turn.is_error));
    map.insert("path".into(), text(&turn.path));
    Dynamic::from_map(map)
}

fn issue(issue: &Issue) -> Dynamic {
    let mut map = Map::new();
    map.insert("rule".into(), text(&issue.rule));
    map.insert("code".into(), text(&issue.code));
    map.insert("severity".into(), text(issue.severity.as_str()));
    map.insert("message".into(), text(&issue.message));
    map.insert(
        "path".into(),
        issue.path.as_deref().map_or(Dynamic::UNIT, text),
    );
    if let Some(index) = issue.turn {
        map.insert("turn".into(), Dynamic::from_int(index_int(index)));
    }
    Dynamic::from_map(map)
}

/// A turn's index as a Rhai integer (a transcript has fewer turns than that).
fn index_int(index: usize) -> INT {
    INT::try_from(index).unwrap_or(INT::MAX)
}

/// A Rhai value as JSON. Fails on values JSON cannot hold (NaN, functions,
/// timestamps, ...), naming where in the value they are.
pub(crate) fn to_json(value: &Dynamic) -> Result<Json, String> {
    convert(value, &mut String::new(), 0)
}

fn convert(value: &Dynamic, path: &mut String, depth: usize) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the returned value is nested more than {MAX_DEPTH} levels deep (at {})",
            shown(path)
        ));
    }
    if value.is_unit() {
        return Ok(Json::Null);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(Json::Bool(b));
    }
    if let Ok(i) = value.as_int() {
        return Ok(Json::from(i));
    }
    if let Ok(f) = value.as_float() {
        return float(f, path);
    }
    if let Ok(c) = value.as_char() {
        return Ok(Json::from(c.to_string()));
    }
    if let Some(s) = value.read_lock::<ImmutableString>() {
        return Ok(Json::from(s.as_str()));
    }
    if let Some(items) = value.read_lock::<Array>() {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let len = path.len();
            path.push('/');
            path.push_str(&i.to_string());
            out.push(convert(item, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Json::Array(out));
    }
    if let Some(map) = value.read_lock::<Map>() {
        // (A Rhai map's keys are distinct: each is a new member.)
        let mut out = Object::with_capacity(map.len());
        for (key, item) in map.iter() {
            let len = path.len();
            path.push('/');
            path.push_str(&crate::json::escape_pointer(key));
            out.push_new(key.as_str(), convert(item, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Json::Object(out));
    }
    if let Some(blob) = value.read_lock::<Blob>() {
        return Ok(Json::Array(
            blob.iter().map(|b| Json::from(u64::from(*b))).collect(),
        ));
    }
    Err(format!(
        "returned a value of type `{}` at {}, which has no JSON form (use numbers, strings, bools, (), arrays and maps)",
        value.type_name(),
        shown(path)
    ))
}

fn float(f: FLOAT, path: &str) -> Result<Json, String> {
    if let Some(n) = Number::from_f64(f) {
        return Ok(Json::Number(n));
    }
    // NaN or an infinity: JSON cannot hold it. At the top level the caller's own
    // check says what a score must be; deeper it is named by where it is.
    if path.is_empty() {
        // A top-level non-finite score: let the wire check word it.
        return Err(format!("returned {f}; a score must be a number in [0, 1]"));
    }
    Err(format!("returned {f} at {path}, which has no JSON form"))
}

fn shown(path: &str) -> &str {
    if path.is_empty() {
        "the top level"
    } else {
        path
    }
}

/// An `INT` from a count, saturating (a count never exceeds `INT::MAX` in practice).
pub fn int(n: usize) -> INT {
    INT::try_from(n).unwrap_or(INT::MAX)
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn round_trip_keeps_every_json_shape() {
        let value = json!({"a": [1, 2.5, "x", null, true, {"b": -3}], "c": {}, "d": ""});
        let back = to_json(&to_dynamic(&value)).unwrap();
        // Rhai maps are sorted by key; compare as values.
        assert_eq!(back, value);
    }

    #[test]
    fn numbers_keep_their_kind() {
        assert!(to_dynamic(&json!(3)).is_int());
        assert!(to_dynamic(&json!(3.0)).is_float());
        assert!(to_dynamic(&json!(u64::MAX)).is_float());
        assert!(to_dynamic(&Json::Null).is_unit());
    }

    #[test]
    fn non_json_values_are_named() {
        let nan = Dynamic::from_float(f64::NAN);
        assert_eq!(
            to_json(&nan).unwrap_err(),
            "returned NaN; a score must be a number in [0, 1]"
        );
        let mut map = Map::new();
        map.insert("score".into(), Dynamic::from_float(f64::INFINITY));
        assert_eq!(
            to_json(&Dynamic::from_map(map)).unwrap_err(),
            "returned inf at /score, which has no JSON form"
        );
        let ts = Dynamic::from(std::time::Instant::now());
        assert!(to_json(&ts).unwrap_err().contains("has no JSON form"));
        assert_eq!(
            to_json(&Dynamic::from('x')).unwrap(),
            json!("x"),
            "a char is a one-character string"
        );
    }

    #[test]
    fn the_context_has_the_shape_plugins_get() {
        use crate::extract::Tier;
        use crate::report::{ExtractionInfo, Issue};
        use crate::strategy::StrategyRegistry;
        let extraction = ExtractionInfo {
            tier: Some(Tier::Repair),
            raw_fallback: true,
            ..ExtractionInfo::none()
        };
        let issues = [
            Issue::error("a", "first").at("/x"),
            Issue::warning("b", "second").in_turn(1),
        ];
        let scores = [("m".to_owned(), 0.5)].into_iter().collect();
        let strategies = StrategyRegistry::with_builtins(&crate::semantic::Models::default());
        let ctx = Context {
            turns: None,
            turn: Some(3),
            output: "raw text",
            json: &json!({"k": [1, 2.5, null]}),
            extraction: &extraction,
            expected: &json!({"k": "v"}),
            meta: &Json::Null,
            issues: &issues,
            scores: &scores,
            strategies: &strategies,
            memo: None,
            judging: crate::component::Judging::Whole,
            budget: &crate::deadline::Budget::unlimited(),
        };
        let config = serde_json::json!({"threshold": 0.7, "list": ["a"]});
        let ours = to_json(&context(&ctx, to_dynamic(&Json::from(&config)))).unwrap();
        assert_eq!(
            ours,
            serde_json::to_value(ctx.with_config(&config)).unwrap()
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut value = Dynamic::UNIT;
        for _ in 0..1000 {
            value = Dynamic::from_array(vec![value]);
        }
        assert!(to_json(&value)
            .unwrap_err()
            .contains("nested more than 128"));
    }
}
