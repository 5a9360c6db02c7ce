//! The plugin host's `unsafe` code (docs/architecture.md lists the engine's
//! other, smaller uses): opening a plugin library and calling the six
//! functions of its C ABI (described in the `tribunal-plugin` crate docs).
//!
//! Invariants every call below relies on:
//! - a library is opened once and never closed (`Library` is leaked), so the
//!   function pointers copied out of it stay valid for the life of the process;
//! - the ABI version is read before any other symbol is looked up, and a library
//!   of another version is never called again;
//! - every string the plugin returns is read, then handed back to the plugin's
//!   own `free`, exactly once; the engine never frees plugin memory itself.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void, CStr};
use std::path::Path;
use std::ptr::NonNull;

type AbiVersionFn = unsafe extern "C" fn() -> u32;
type ManifestFn = unsafe extern "C" fn() -> *mut c_char;
type InstantiateFn = unsafe extern "C" fn(*const u8, usize, *mut *mut c_void) -> *mut c_char;
type EvaluateFn = unsafe extern "C" fn(*const c_void, *const u8, usize) -> *mut c_char;
type ReleaseFn = unsafe extern "C" fn(*mut c_void);
type FreeFn = unsafe extern "C" fn(*mut c_char);

/// Why a library could not be opened as a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// The dynamic loader refused the file.
    Load(String),
    /// No `tribunal_plugin_abi_version` symbol.
    NotAPlugin,
    /// Another ABI version.
    WrongVersion(u32),
    /// The right version, but a required symbol is missing.
    MissingSymbol(&'static str),
}

/// An opened plugin library of the right ABI version: its functions.
#[derive(Debug, Clone, Copy)]
pub struct RawPlugin {
    manifest: ManifestFn,
    instantiate: InstantiateFn,
    evaluate: EvaluateFn,
    release: ReleaseFn,
    free: FreeFn,
}

/// An instance handle a plugin returned from `instantiate`.
#[derive(Debug, Clone, Copy)]
pub struct Handle(NonNull<c_void>);

// SAFETY: the ABI requires instances to be usable from any thread, concurrently
// (the SDK enforces it with `Send + Sync` bounds on every component); the engine
// only passes the handle back to the plugin that made it.
unsafe impl Send for Handle {}
// SAFETY: as above.
unsafe impl Sync for Handle {}

impl RawPlugin {
    /// Opens `path`, checks its ABI version against `expected` first, then looks
    /// up the other five functions.
    pub fn open(path: &Path, expected: u32) -> Result<Self, OpenError> {
        // SAFETY: loading a library runs its initialisers. Plugins are trusted
        // code by design (see docs/plugins.md); this is the point where the user's
        // choice to load one is honoured.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|err| OpenError::Load(err.to_string()))?;
        // Never unloaded: code and data of the plugin may be referenced by
        // pointers we keep (functions, instances), and unloading Rust code with
        // thread-locals is unsound.
        let library: &'static libloading::Library = Box::leak(Box::new(library));
        // SAFETY: the symbol is declared by the ABI as `uint32_t (void)`.
        let version = unsafe { library.get::<AbiVersionFn>(b"tribunal_plugin_abi_version\0") }
            .map(|symbol| *symbol)
            .map_err(|_| OpenError::NotAPlugin)?;
        // SAFETY: the ABI's first function: no arguments, no state, returns a u32.
        let found = unsafe { version() };
        if found != expected {
            return Err(OpenError::WrongVersion(found));
        }
        // SAFETY (all five): the version matched, so the symbols have the types
        // this version of the ABI declares.
        unsafe {
            Ok(Self {
                manifest: symbol(library, "tribunal_plugin_manifest")?,
                instantiate: symbol(library, "tribunal_plugin_instantiate")?,
                evaluate: symbol(library, "tribunal_plugin_evaluate")?,
                release: symbol(library, "tribunal_plugin_release")?,
                free: symbol(library, "tribunal_plugin_free")?,
            })
        }
    }

    /// Calls `tribunal_plugin_manifest`; `read` sees the returned JSON bytes.
    pub fn manifest<T>(&self, read: impl FnOnce(Option<&[u8]>) -> T) -> T {
        // SAFETY: no arguments; returns a string we own until `free`.
        let text = unsafe { (self.manifest)() };
        self.consume(text, read)
    }

    /// Calls `tribunal_plugin_instantiate` with a JSON request; `read` sees the
    /// returned JSON bytes and the handle the plugin stored (if any).
    pub fn instantiate<T>(
        &self,
        request: &[u8],
        read: impl FnOnce(Option<&[u8]>, Option<Handle>) -> T,
    ) -> T {
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `request` is valid for its length during the call; `out` is a
        // writable pointer on our stack.
        let text = unsafe { (self.instantiate)(request.as_ptr(), request.len(), &raw mut out) };
        let handle = NonNull::new(out).map(Handle);
        self.consume(text, |bytes| read(bytes, handle))
    }

    /// Calls `tribunal_plugin_evaluate`; `read` sees the returned JSON bytes.
    pub fn evaluate<T>(
        &self,
        handle: Handle,
        input: &[u8],
        read: impl FnOnce(Option<&[u8]>) -> T,
    ) -> T {
        // SAFETY: the handle came from this plugin's `instantiate` and is
        // released only when its owner drops; `input` is valid during the call.
        let text = unsafe { (self.evaluate)(handle.0.as_ptr(), input.as_ptr(), input.len()) };
        self.consume(text, read)
    }

    /// Calls `tribunal_plugin_release`; the handle must not be used again.
    pub fn release(&self, handle: Handle) {
        // SAFETY: the caller gives up the handle (called from `Drop` of its only owner).
        unsafe { (self.release)(handle.0.as_ptr()) };
    }

    /// Shows a returned string to `read`, then gives it back to the plugin.
    fn consume<T>(&self, text: *mut c_char, read: impl FnOnce(Option<&[u8]>) -> T) -> T {
        if text.is_null() {
            return read(None);
        }
        // SAFETY: the ABI returns a NUL-terminated string that stays valid until
        // we pass it to `free`, which happens right after this read.
        let result = read(Some(unsafe { CStr::from_ptr(text) }.to_bytes()));
        // SAFETY: returned by this plugin, freed exactly once, not used after.
        unsafe { (self.free)(text) };
        result
    }
}

/// Looks up `name` and copies the function pointer out of the leaked library.
///
/// # Safety
/// `F` must be the type the ABI declares for `name`.
unsafe fn symbol<F: Copy>(
    library: &'static libloading::Library,
    name: &'static str,
) -> Result<F, OpenError> {
    let mut bytes = Vec::with_capacity(name.len() + 1);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(0);
    // SAFETY: forwarded from the caller.
    unsafe { library.get::<F>(&bytes) }
        .map(|symbol| *symbol)
        .map_err(|_| OpenError::MissingSymbol(name))
}

/// The plugin host helper's reply channel (`isolation: process`): the
/// process's standard output, which is then pointed at standard error, so
/// that a plugin printing to stdout cannot break a reply frame.
#[cfg(unix)]
pub fn protocol_output() -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: `fcntl(F_DUPFD_CLOEXEC)` only creates a new descriptor for fd 1,
    // closed on exec (a process the plugin starts must not hold the replies
    // pipe open, or a crash would not be seen as the end of the pipe); checked below.
    let replies = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 0) };
    if replies < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: re-points fd 1 at what fd 2 is; no memory is involved.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `replies` is a descriptor we just made and nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(replies) })
}

/// Elsewhere the replies share stdout with whatever the plugin prints.
#[cfg(not(unix))]
pub fn protocol_output() -> std::io::Result<std::io::Stdout> {
    Ok(std::io::stdout())
}
