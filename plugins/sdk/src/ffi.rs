//! Everything that touches raw pointers, and the panic guard around every export.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CString};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use serde_json::{json, Value};

use crate::__private::{Instance, Plugin};

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

/// The `{"ok": ...}` / `{"error": ...}` envelope as a C string owned by this library.
fn envelope(result: Result<Value, String>) -> *mut c_char {
    let value = match result {
        Ok(ok) => json!({ "ok": ok }),
        Err(error) => json!({ "error": error }),
    };
    // serde_json escapes NUL, so the text has no interior NUL byte.
    CString::new(value.to_string()).map_or(std::ptr::null_mut(), CString::into_raw)
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
        envelope(guarded(|| Ok(self.registry().manifest())))
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
            return envelope(Err("instantiate: the instance out-pointer is null".into()));
        }
        // SAFETY: the caller's contract.
        let request = unsafe { bytes(request, len) };
        let built = guarded(|| {
            self.registry()
                .instantiate(request)
                .map_err(|err| err.to_string())
        });
        envelope(built.map(|built: Box<dyn Instance>| {
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
        return envelope(Err("evaluate: the instance handle is null".into()));
    }
    // SAFETY: the handle is a live `Box<Box<dyn Instance>>` made by `instantiate`;
    // instances are `Sync`, so shared use from many threads is fine.
    let instance: &dyn Instance = unsafe { &**instance.cast::<Box<dyn Instance>>() };
    // SAFETY: the caller's contract.
    let input = unsafe { bytes(input, len) };
    envelope(guarded(|| {
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
