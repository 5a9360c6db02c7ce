//! A compiled script used as a component: one per use in the pipeline, with
//! that use's config; runs the script's entry point under the limits and checks
//! what it returns.

use std::fmt;
use std::sync::Arc;

use rhai::{CallFnOptions, Dynamic, EvalAltResult, FuncArgs, Position, Scope};
use serde_json::Value;

use crate::json::Json;
use crate::report::ErrorKind;

use crate::build::BuildCtx;
use crate::component::{
    Compiled, Context, EvalError, Kind, Metric, MetricOutput, PostOutput, Postprocessor, Strategy,
};

use super::frame::{tripped, CallFrame, MEMORY_TOKEN, OPERATIONS_TOKEN, TIMEOUT_TOKEN};
use super::{convert, entry_point, helpers, CompiledScript};

/// A script used as a component: the compiled script plus this use's config.
pub struct ScriptComponent {
    script: Arc<CompiledScript>,
    /// "script \`name\`", the prefix of every message about this component.
    who: String,
    /// The component's name in the pack: the rule of the issues it raises.
    name: String,
    /// The merged config, converted once.
    config: Dynamic,
}

impl fmt::Debug for ScriptComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptComponent")
            .field("who", &self.who)
            .field("origin", &self.script.origin)
            .finish_non_exhaustive()
    }
}

/// Builds the component for one use of a compiled script.
pub fn build(
    script: &Arc<CompiledScript>,
    kind: Kind,
    config: &Value,
    ctx: &BuildCtx<'_>,
) -> Compiled {
    let config = if config.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        config.clone()
    };
    let component = Arc::new(ScriptComponent {
        script: Arc::clone(script),
        who: format!("script `{}`", ctx.name),
        name: ctx.name.to_owned(),
        config: convert::to_dynamic(&Json::from(config)),
    });
    match kind {
        Kind::Metric => Compiled::Metric(component),
        Kind::Postprocessor => Compiled::Postprocessor(component),
        Kind::Strategy => Compiled::Strategy(component),
    }
}

impl ScriptComponent {
    fn context(&self, ctx: &Context<'_>) -> Dynamic {
        convert::context(ctx, self.config.clone())
    }

    /// Runs `entry` with `args` under the limits; the result as JSON.
    fn call(&self, entry: &str, args: impl FuncArgs, ctx: &Context<'_>) -> Result<Json, EvalError> {
        let script = &self.script;
        let _frame = CallFrame::enter(&self.who, &script.host.limits, ctx, script.uses_compare)
            .map_err(|reason| {
                EvalError::new(ErrorKind::Script, format!("{}: {reason}", self.who))
            })?;
        let mut scope = Scope::new();
        // Top-level statements are not run per call: only the entry point is.
        let options = CallFnOptions::new().eval_ast(false).rewind_scope(false);
        let result = script.host.engine.call_fn_with_options::<Dynamic>(
            options,
            &mut scope,
            &script.ast,
            entry,
            args,
        );
        // A limit hit inside a callback whose errors Rhai ignores (the comparer
        // of `sort` or `dedup`) let the call go on and return: still an error.
        if let Some(token) = tripped() {
            let err = EvalAltResult::ErrorTerminated(Dynamic::from(token), Position::NONE);
            return Err(self.runtime_error(&err));
        }
        match result {
            // A non-finite number at the top level: JSON cannot hold it, and the
            // conversion words that for a score; a postprocessor returns no score.
            Ok(value) if script.kind == Kind::Postprocessor && value.is_float() => {
                match convert::to_json(&value) {
                    Ok(value) => Ok(value),
                    Err(_) => Err(EvalError::new(ErrorKind::Script, format!(
                        "{}: a postprocessor must return an array of issues or an object {{ issues, json }}, got {value}",
                        self.who
                    ))),
                }
            }
            Ok(value) => convert::to_json(&value).map_err(|reason| {
                EvalError::new(ErrorKind::Script, format!("{}: {reason}", self.who))
            }),
            Err(err) => Err(self.runtime_error(&err)),
        }
    }

    /// `script `name` (file:line:col): reason`, from the innermost error.
    fn runtime_error(&self, err: &EvalAltResult) -> EvalError {
        let mut err = err;
        let mut pos = err.position();
        while let EvalAltResult::ErrorInFunctionCall(_, _, inner, at) = err {
            if !at.is_none() {
                pos = *at;
            }
            err = inner;
        }
        if !err.position().is_none() {
            pos = err.position();
        }
        let limits = &self.script.host.limits;
        let kind = match err {
            EvalAltResult::ErrorTerminated(token, _) => {
                match token.clone().into_string().ok().as_deref() {
                    Some(TIMEOUT_TOKEN) => ErrorKind::Timeout,
                    Some(MEMORY_TOKEN) => ErrorKind::Memory,
                    _ => ErrorKind::Script,
                }
            }
            _ => ErrorKind::Script,
        };
        let reason = match err {
            EvalAltResult::ErrorTooManyOperations(_) => format!(
                "exceeded the {} operation limit (limits.max_operations)",
                thousands(limits.max_operations)
            ),
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(OPERATIONS_TOKEN) =>
            {
                format!(
                    "exceeded the {} operation limit (limits.max_operations)",
                    thousands(limits.max_operations)
                )
            }
            EvalAltResult::ErrorStackOverflow(_) => format!(
                "exceeded the call depth limit of {} (limits.max_call_depth)",
                limits.max_call_depth
            ),
            EvalAltResult::ErrorDataTooLarge(what, _) => {
                let (limit, key) = if what.contains("string") {
                    (limits.max_string_size, "max_string_size")
                } else if what.contains("map") {
                    (limits.max_map_size, "max_map_size")
                } else {
                    (limits.max_array_size, "max_array_size")
                };
                format!(
                    "{what} exceeded the limit of {} (limits.{key})",
                    thousands(limit as u64)
                )
            }
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(TIMEOUT_TOKEN) =>
            {
                format!(
                    "exceeded the {} ms time limit (limits.timeout_ms)",
                    thousands(limits.timeout_ms)
                )
            }
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_string().ok().as_deref() == Some(MEMORY_TOKEN) =>
            {
                format!(
                    "used more than {} bytes of memory (limits.max_memory)",
                    thousands(limits.max_memory as u64)
                )
            }
            EvalAltResult::ErrorRuntime(value, _) => {
                let text = value.to_string();
                if helpers::is_helper_error(&text) {
                    text
                } else {
                    format!("script threw: {text}")
                }
            }
            other => strip_position(&other.to_string()),
        };
        // Rhai reports no position for the limits it enforces (operations, call
        // depth, sizes, the deadline): name the entry point the call was in.
        let at = if pos.is_none() {
            let (entry, _) = entry_point(self.script.kind);
            format!(
                "{}, somewhere in `fn {entry}`",
                self.script.origin.describe(self.script.entry_at)
            )
        } else {
            self.script.origin.describe(pos)
        };
        EvalError::new(kind, format!("{} ({at}): {reason}", self.who))
    }
}

impl ScriptComponent {
    /// What the script's `prepare(ctx)` returns for the record: run once per
    /// record (for a step run on each turn, before the first turn's
    /// `evaluate`, with a context that has no `turn` and no `output`), so
    /// that what every turn needs (an index of the tool results, say) is
    /// built once and each turn costs constant time, not a scan of the
    /// turns before it.
    fn prepared(&self, ctx: &Context<'_>) -> Result<Dynamic, EvalError> {
        let run = || {
            let mut context = self.context(ctx);
            if ctx.turn.is_some() {
                if let Some(mut map) = context.write_lock::<rhai::Map>() {
                    map.remove("turn");
                    map.remove("output");
                }
            }
            let value = self.call("prepare", (context,), ctx)?;
            Ok(convert::to_dynamic(&value).into_read_only().into_shared())
        };
        match ctx.memo {
            Some(memo) => memo.once(&format!("prepare:{}", self.name), run),
            None => run(),
        }
    }
}

impl Metric for ScriptComponent {
    fn evaluate(&self, ctx: &Context<'_>) -> Result<MetricOutput, EvalError> {
        let mut context = self.context(ctx);
        if self.script.prepares {
            let prepared = self.prepared(ctx)?;
            if let Some(mut map) = context.write_lock::<rhai::Map>() {
                map.insert("prepared".into(), prepared);
            }
        }
        let value = self.call("evaluate", (context,), ctx)?;
        let out = crate::wire::metric_output(&self.who, &self.name, value).map_err(as_script)?;
        crate::wire::turns_in_range(&self.who, &out.issues, ctx).map_err(as_script)?;
        Ok(out)
    }
}

impl Postprocessor for ScriptComponent {
    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        let value = self.call("evaluate", (self.context(ctx),), ctx)?;
        let out = crate::wire::post_output(&self.who, &self.name, value).map_err(as_script)?;
        crate::wire::turns_in_range(&self.who, &out.issues, ctx).map_err(as_script)?;
        Ok(out)
    }
}

impl Strategy for ScriptComponent {
    fn compare(&self, expected: &Json, actual: &Json, ctx: &Context<'_>) -> Result<f64, EvalError> {
        let args = (
            convert::to_dynamic(expected),
            convert::to_dynamic(actual),
            self.context(ctx),
        );
        let value = self.call("compare", args, ctx)?;
        crate::wire::similarity(&self.who, &value).map_err(as_script)
    }
}

/// A value a script returned that is not what its kind returns: the script's
/// failure (`wire` calls it a plugin's reply).
fn as_script(err: EvalError) -> EvalError {
    err.of_kind(ErrorKind::Script)
}

/// Rhai's messages end with ` (line 3, position 7)`; ours give `file:line:col` instead.
pub(super) fn strip_position(message: &str) -> String {
    match message.rfind(" (line ") {
        Some(cut) if message.ends_with(')') => message[..cut].to_owned(),
        _ => message.to_owned(),
    }
}

/// `1000000` as `1,000,000`.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
