//! A counting global allocator, so the Rhai host can bound the memory one script
//! call takes (`limits.max_memory`).
//!
//! Rhai's own size limits bound one value at a time; a script can still hold many
//! values each within them (an array of large strings filled by index assignment).
//! This allocator keeps, per thread, the net number of bytes that thread has
//! allocated; the script host reads it when a call starts and from `on_progress`,
//! and ends a call whose net allocation has grown past the limit.
//!
//! The `tribunal` binary installs it. A program embedding the library gets the
//! memory limit by installing it too:
//!
//! ```no_run
//! #[global_allocator]
//! static ALLOC: tribunal::CountingAllocator = tribunal::CountingAllocator;
//! ```
//!
//! Without it, `max_memory` is not enforced (the other limits are).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};

/// The allocator underneath: mimalloc, made for many small short-lived blocks
/// (a record's JSON values), with per-thread heaps that do not contend.
use mimalloc::MiMalloc as Inner;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The global allocator (mimalloc underneath), counting each thread's net allocated bytes, so that a
/// Rhai script call can be held to its `limits.max_memory`. Install it in a
/// program that embeds the library (the `tribunal` binary does):
///
/// ```no_run
/// #[global_allocator]
/// static ALLOC: tribunal::CountingAllocator = tribunal::CountingAllocator;
/// ```
///
/// Without it, `max_memory` is not enforced (the other script limits are).
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    // A const-initialised `Cell` of a type without `Drop`: no lazy set-up and no
    // destructor, so it is safe to touch from inside the allocator, even while
    // the thread is being torn down.
    static NET: Cell<i64> = const { Cell::new(0) };
}

/// Blocks smaller than this are not counted: most allocations are small, and
/// skipping them keeps the thread-local off the allocator's hot path. What goes
/// uncounted is bounded by the operation limit (a Rhai operation makes a bounded
/// number of small blocks); anything large a script builds is counted.
pub const COUNTED_FROM: usize = 512;

/// The bytes of a block of `size` that count.
fn counted(size: usize) -> i64 {
    if size >= COUNTED_FROM {
        i64::try_from(size).unwrap_or(i64::MAX)
    } else {
        0
    }
}

fn count(delta: i64) {
    if delta != 0 {
        let _ = NET.try_with(|net| net.set(net.get().wrapping_add(delta)));
    }
}

// SAFETY: every call is forwarded unchanged to mimalloc, which upholds the
// `GlobalAlloc` contract; the counting touches only a thread-local integer and
// never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        tune_once();
        let ptr = if plain(layout) {
            // SAFETY: a plain block (see `plain`) is aligned enough as mimalloc
            // hands it out.
            unsafe { mi_malloc(layout.size()).cast() }
        } else {
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { Inner.alloc(layout) }
        };
        if !ptr.is_null() {
            count(counted(layout.size()));
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        tune_once();
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { Inner.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(counted(layout.size()));
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { Inner.dealloc(ptr, layout) };
        count(-counted(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = if plain(Layout::from_size_align(new_size, layout.align()).unwrap_or(layout)) {
            // SAFETY: `ptr` is mimalloc's (every block here is), and the new block
            // is plain (see `plain`).
            unsafe { mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { Inner.realloc(ptr, layout, new_size) }
        };
        if !new.is_null() {
            count(counted(new_size) - counted(layout.size()));
        }
        new
    }
}

// mimalloc's option setter (the `mi_option_arena_eager_commit` index of its
// v3 `mi_option_e`), and its unaligned allocation calls.
extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(ptr: *mut std::ffi::c_void, size: usize) -> *mut std::ffi::c_void;
}

/// Whether a block of this layout can come from `mi_malloc` (no alignment
/// argument, one check less on every allocation): mimalloc's size classes are
/// multiples of the word size, so every block is at least word-aligned, and a
/// block no smaller than its alignment is aligned to it when that is at most a
/// word (the rule the standard library's own `System` allocator uses).
#[inline]
fn plain(layout: Layout) -> bool {
    layout.align() <= std::mem::size_of::<usize>() && layout.align() <= layout.size()
}
const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

/// Set before the first allocation: mimalloc reads its options when it starts.
static TUNED: AtomicBool = AtomicBool::new(false);

/// Tunes mimalloc before its first allocation: arena memory is committed as it
/// is used rather than up front (the same speed; a two-worker `eval`'s peak RSS
/// falls from about 70 MB to about 26 MB).
#[inline]
fn tune_once() {
    if !TUNED.load(Ordering::Relaxed) {
        TUNED.store(true, Ordering::Relaxed);
        // SAFETY: sets one of mimalloc's integer options; the option index is
        // that of the mimalloc release this crate builds (libmimalloc-sys, v3).
        unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    }
}

/// Net bytes this thread has allocated so far in blocks of at least
/// `COUNTED_FROM` bytes (allocations minus what this thread freed). Only differences between two readings on one thread mean
/// anything; always 0 when `Counting` is not the global allocator.
pub fn thread_net_bytes() -> i64 {
    NET.try_with(Cell::get).unwrap_or(0)
}

/// Whether `Counting` is the process's global allocator (checked once).
pub fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let before = thread_net_bytes();
        let probe = std::hint::black_box(vec![0u8; 4096]);
        let after = thread_net_bytes();
        drop(probe);
        after - before >= 4096
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The library's unit tests run with `Counting` installed (see lib.rs).
    #[test]
    fn a_thread_counts_what_it_holds() {
        assert!(installed());
        let before = thread_net_bytes();
        let held = std::hint::black_box(vec![1u8; 1 << 20]);
        assert!(thread_net_bytes() - before >= 1 << 20);
        let mut grown = std::hint::black_box(Vec::<u8>::with_capacity(16));
        grown.reserve_exact(1 << 20);
        assert!(thread_net_bytes() - before >= 2 << 20);
        drop(held);
        drop(grown);
        assert!(thread_net_bytes() - before < 4096);
        // Another thread's allocations are not this thread's.
        let other = std::thread::spawn(|| {
            let v = std::hint::black_box(vec![0u8; 8 << 20]);
            (thread_net_bytes(), v.len())
        });
        let before = thread_net_bytes();
        let (theirs, _) = other.join().unwrap();
        // (Net: the new thread also frees a little the spawning thread allocated.)
        assert!(theirs >= (8 << 20) - 4096, "{theirs}");
        let grew = thread_net_bytes() - before;
        assert!(grew < 1 << 20, "{grew}");
    }
}
