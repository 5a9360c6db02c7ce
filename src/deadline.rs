//! The time budget of the work in progress on this thread, for code below the
//! layer that sets it.
//!
//! Quadratic string work (similarity, Levenshtein) lives in `text` and is reached
//! from scripts (helpers, `fuzzy` through `compare()`), whose calls have a deadline.
//! The script host, a later layer, installs the check of its current call's
//! deadline here once; the work asks [`watch`] as it goes. Outside a call, or when
//! no host installed a check, the budget is unlimited.

use std::sync::OnceLock;

static CHECK: OnceLock<fn() -> bool> = OnceLock::new();

/// Installs the check "has the deadline of the call in progress on this thread
/// passed?" (once per process; later installs are ignored).
pub fn install(check: fn() -> bool) {
    let _ = CHECK.set(check);
}

/// Whether the deadline of the work in progress on this thread has passed.
pub fn passed() -> bool {
    CHECK.get().is_some_and(|check| check())
}

/// How many cells of quadratic work pass between two clock reads.
const CLOCK_EVERY_CELLS: usize = 1 << 16;

/// The `keep_going(cells)` of quadratic string work: false once the deadline has
/// passed; always true outside a call with a deadline. Reads the clock once per
/// [`CLOCK_EVERY_CELLS`] cells of work.
pub fn watch() -> impl FnMut(usize) -> bool {
    let mut work = 0usize;
    move |cells| {
        work += cells;
        if work < CLOCK_EVERY_CELLS {
            return true;
        }
        work = 0;
        !passed()
    }
}
