//! Everything that touches raw pointers, and the panic guard around every export.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CString};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use serde_json::{json, Value};

use crate::__private::{ok_reply, Instance, Plugin};

thread_local! {
    /// Set while an export runs, so the hook records the panic instead of printing it.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records the message and location of a
/// panic raised inside an export, and leaves every other panic to the previous
/// hook (a plugin crate's own unit tests link this code into a test binary).
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(a non-string panic payload)".to_owned());
                let text = match info.location() {
                    Some(at) => format!(
                        "panicked at {}:{}:{}: {message}",
                        at.file(),
                        at.line(),
                        at.column()
                    ),
                    None => format!("panicked: {message}"),
                };
                LAST_PANIC.with(|last| *last.borrow_mut() = Some(text));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `body` with panics caught; a panic becomes `Err("panicked at ...")`.
fn guarded<T>(body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    install_hook();
    let was = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(body));
    GUARDED.with(|g| g.set(was));
    result.unwrap_or_else(|_| {
        Err(LAST_PANIC
            .with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| "panicked".to_owned()))
    })
}

/// The `{"ok": ...}` / `{"error": ...}` reply as a C string owned by this library.
fn reply(result: Result<Vec<u8>, String>) -> *mut c_char {
    let bytes = result.unwrap_or_else(|error| json!({ "error": error }).to_string().into_bytes());
    // serde_json escapes NUL, so the text has no interior NUL byte.
    CString::new(bytes).map_or(std::ptr::null_mut(), CString::into_raw)
}

/// A reply made from a `Value` (for the calls made once, at load).
fn value_reply(result: Result<Value, String>) -> *mut c_char {
    reply(result.and_then(|value| ok_reply(&value).map_err(|err| err.to_string())))
}

/// # Safety
/// `ptr` is null with `len == 0`, or points to `len` readable bytes.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

impl Plugin {
    pub fn manifest(&self) -> *mut c_char {
        value_reply(guarded(|| Ok(self.registry().manifest())))
    }

    /// # Safety
    /// `request` points to `len` readable bytes; `instance` is null or writable.
    pub unsafe fn instantiate(
        &self,
        request: *const u8,
        len: usize,
        instance: *mut *mut c_void,
    ) -> *mut c_char {
        if instance.is_null() {
            return reply(Err("instantiate: the instance out-pointer is null".into()));
        }
        // SAFETY: the caller's contract.
        let request = unsafe { bytes(request, len) };
        let built = guarded(|| {
            self.registry()
                .instantiate(request)
                .map_err(|err| err.to_string())
        });
        value_reply(built.map(|built: Box<dyn Instance>| {
            // A thin pointer to the fat one; `release` rebuilds the box.
            let handle = Box::into_raw(Box::new(built)).cast::<c_void>();
            // SAFETY: checked non-null above; the caller guarantees it is writable.
            unsafe { instance.write(handle) };
            Value::Null
        }))
    }
}

/// # Safety
/// `instance` came from `instantiate` and was not released; `input` points to
/// `len` readable bytes.
pub unsafe fn evaluate(instance: *const c_void, input: *const u8, len: usize) -> *mut c_char {
    if instance.is_null() {
        return reply(Err("evaluate: the instance handle is null".into()));
    }
    // SAFETY: the handle is a live `Box<Box<dyn Instance>>` made by `instantiate`;
    // instances are `Sync`, so shared use from many threads is fine.
    let instance: &dyn Instance = unsafe { &**instance.cast::<Box<dyn Instance>>() };
    // SAFETY: the caller's contract.
    let input = unsafe { bytes(input, len) };
    reply(guarded(|| {
        instance.call(input).map_err(|err| err.to_string())
    }))
}

/// # Safety
/// `instance` came from `instantiate` and is not used again.
pub unsafe fn release(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    // SAFETY: made by `Box::into_raw` in `instantiate`, released once.
    let boxed = unsafe { Box::from_raw(instance.cast::<Box<dyn Instance>>()) };
    let _ = guarded(move || {
        drop(boxed);
        Ok(())
    });
}

/// # Safety
/// `json` was returned by this library and is not used again.
pub unsafe fn free(json: *mut c_char) {
    if !json.is_null() {
        // SAFETY: made by `CString::into_raw` in `envelope`, freed once.
        drop(unsafe { CString::from_raw(json) });
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    use super::*;
    use crate::__private::Registry;
    use crate::{Context, Error, Metric, MetricResult};

    #[derive(Debug, Default, Deserialize, Serialize)]
    #[serde(default, deny_unknown_fields)]
    struct HalfConfig {
        panic_on: String,
    }

    struct Half {
        panic_on: String,
    }

    impl Metric for Half {
        const NAME: &'static str = "half";
        type Config = HalfConfig;

        fn new(config: HalfConfig) -> Result<Self, Error> {
            Ok(Self {
                panic_on: config.panic_on,
            })
        }

        fn evaluate(&self, ctx: &Context) -> Result<MetricResult, Error> {
            assert!(
                self.panic_on.is_empty() || ctx.output != self.panic_on,
                "told to panic"
            );
            Ok(MetricResult::score(0.5))
        }
    }

    fn registry() -> Registry {
        Registry::new("test", "1.2.3").metric::<Half>()
    }

    static PLUGIN: Plugin = Plugin::new(registry);

    /// Reads and frees a reply.
    fn read(reply: *mut c_char) -> Value {
        assert!(!reply.is_null());
        // SAFETY: a reply made by this library, read once, then freed.
        let value = serde_json::from_slice(unsafe { CStr::from_ptr(reply) }.to_bytes()).unwrap();
        // SAFETY: as above.
        unsafe { free(reply) };
        value
    }

    fn instantiate(request: &Value) -> (Value, *mut c_void) {
        let request = request.to_string();
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid request bytes and out-pointer.
        let reply = unsafe { PLUGIN.instantiate(request.as_ptr(), request.len(), &raw mut handle) };
        (read(reply), handle)
    }

    fn evaluate(handle: *mut c_void, output: &str) -> Value {
        let input = json!({ "context": { "output": output } }).to_string();
        // SAFETY: a live handle and valid input bytes.
        read(unsafe { super::evaluate(handle, input.as_ptr(), input.len()) })
    }

    #[test]
    fn the_manifest_lists_components_with_defaults() {
        assert_eq!(
            read(PLUGIN.manifest()),
            json!({"ok": {
                "name": "test", "version": "1.2.3", "abi_version": 1,
                "components": [{"name": "half", "kind": "metric", "description": "",
                                "config": {"defaults": {"panic_on": ""}, "schema": null}}]
            }})
        );
    }

    #[test]
    fn an_instance_evaluates_and_a_panic_becomes_an_error_with_its_location() {
        let (reply, handle) = instantiate(
            &json!({"component": "half", "kind": "metric", "config": {"panic_on": "boom"}}),
        );
        assert_eq!(reply, json!({"ok": null}));
        assert!(!handle.is_null());
        assert_eq!(evaluate(handle, "fine"), json!({"ok": {"score": 0.5}}));
        let error = evaluate(handle, "boom")["error"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            error.starts_with("panicked at plugins/sdk/src/ffi.rs:")
                && error.ends_with(": told to panic"),
            "{error}"
        );
        // The instance survives its panic.
        assert_eq!(
            evaluate(handle, "fine again"),
            json!({"ok": {"score": 0.5}})
        );
        // SAFETY: released once, not used again.
        unsafe { release(handle) };
    }

    #[test]
    fn bad_instantiate_requests_are_errors() {
        for (request, expected) in [
            (
                json!({"component": "halve"}),
                "plugin `test` has no component `halve` (it exports: half)",
            ),
            (
                json!({"component": "half", "kind": "strategy"}),
                "component `half` is a metric, not a strategy",
            ),
            (
                json!({"component": "half", "config": {"panic_onn": "x"}}),
                "invalid config: unknown field `panic_onn`, expected `panic_on`",
            ),
        ] {
            let (reply, handle) = instantiate(&request);
            assert_eq!(reply, json!({ "error": expected }));
            assert!(handle.is_null());
        }
    }

    #[test]
    fn keys_a_later_host_may_add_to_a_request_are_ignored() {
        // Forward compatibility within one ABI version: a plugin built today must
        // still load and evaluate when a newer host sends more than it knows.
        let (reply, handle) = instantiate(
            &json!({"component": "half", "kind": "metric", "config": {}, "host": {"version": "9.9"}}),
        );
        assert_eq!(reply, json!({"ok": null}));
        assert!(!handle.is_null());
        let input =
            json!({ "context": { "output": "x", "new_key": 1 }, "trace_id": "t" }).to_string();
        // SAFETY: a live handle and valid input bytes.
        let reply = read(unsafe { super::evaluate(handle, input.as_ptr(), input.len()) });
        assert_eq!(reply, json!({"ok": {"score": 0.5}}));
        // SAFETY: released once, not used again.
        unsafe { release(handle) };
    }

    #[test]
    fn context_json_deeper_than_serde_json_allows_is_read_up_to_a_bound() {
        let (_, handle) = instantiate(&json!({"component": "half"}));
        let call = |depth: usize| {
            let input = format!(
                r#"{{"context": {{"output": "]", "json": {}{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            // SAFETY: a live handle and valid input bytes.
            read(unsafe { super::evaluate(handle, input.as_ptr(), input.len()) })
        };
        // 2 + 128 levels: what the engine sends for the deepest JSON it extracts.
        assert_eq!(call(128), json!({"ok": {"score": 0.5}}));
        assert_eq!(
            call(300),
            json!({"error": "invalid evaluate input: nested 302 levels deep, more than 256"})
        );
        // SAFETY: released once.
        unsafe { release(handle) };
    }

    #[test]
    fn a_null_handle_or_bad_input_is_an_error_not_a_crash() {
        let (_, handle) = instantiate(&json!({"component": "half"}));
        // SAFETY: null is checked; the input is valid bytes.
        let reply = read(unsafe { super::evaluate(std::ptr::null(), b"{}".as_ptr(), 2) });
        assert_eq!(
            reply,
            json!({"error": "evaluate: the instance handle is null"})
        );
        // SAFETY: a live handle and valid input bytes.
        let reply = read(unsafe { super::evaluate(handle, b"[1]".as_ptr(), 3) });
        assert!(
            reply["error"]
                .as_str()
                .unwrap()
                .starts_with("invalid evaluate input: invalid type: integer `1`, expected struct"),
            "{reply}"
        );
        // SAFETY: released once.
        unsafe { release(handle) };
    }
}
