//! The time budget of the work in progress on this thread, for code below the
//! layer that sets it.
//!
//! Quadratic string work (similarity, Levenshtein) lives in `text` and is reached
//! from scripts (helpers, `fuzzy` through `compare()`), whose calls have a deadline.
//! The script host, a later layer, installs the check of its current call's
//! deadline here once; the work asks [`watch`] as it goes. Outside a call, or when
//! no host installed a check, the budget is unlimited.
//!
//! The pipeline also runs every step [`within`] the pack's time limit, so the
//! built-ins' long work (matching many tokens, similarity) stops there too.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static CHECK: OnceLock<fn() -> bool> = OnceLock::new();

thread_local! {
    /// The deadline of the pipeline step running on this thread ([`within`]).
    static STEP: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The earlier of two deadlines (`None`: no deadline).
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Runs `work` with a deadline `limit` from now (none: no deadline of its own),
/// never later than a deadline already running on this thread. `Err` holds
/// the result when the deadline passed before `work` ended: work that gave up
/// early returns a result that must not be used.
pub fn within<T>(limit: Option<Duration>, work: impl FnOnce() -> T) -> Result<T, T> {
    let outer = STEP.get();
    let own = limit.map(|limit| Instant::now() + limit);
    let deadline = earliest(own, outer);
    STEP.set(deadline);
    let result = work();
    STEP.set(outer);
    if deadline.is_some_and(|d| Instant::now() >= d) {
        Err(result)
    } else {
        Ok(result)
    }
}

/// Installs the check "has the deadline of the call in progress on this thread
/// passed?" (once per process; later installs are ignored).
pub fn install(check: fn() -> bool) {
    let _ = CHECK.set(check);
}

/// Whether the deadline of the work in progress on this thread has passed.
pub fn passed() -> bool {
    STEP.get().is_some_and(|d| Instant::now() >= d) || CHECK.get().is_some_and(|check| check())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_past_its_deadline_is_flagged() {
        assert_eq!(within(None, passed), Ok(false));
        assert_eq!(within(Some(Duration::from_secs(60)), || 1), Ok(1));
        let late = within(Some(Duration::from_millis(1)), || {
            std::thread::sleep(Duration::from_millis(5));
            passed()
        });
        assert_eq!(late, Err(true));
        // The deadline ends with the work; an inner one never outlives an outer one.
        assert!(!passed());
        let nested = within(Some(Duration::from_millis(1)), || {
            within(Some(Duration::from_secs(60)), || {
                std::thread::sleep(Duration::from_millis(5));
            })
        });
        assert_eq!(nested, Err(Err(())));
    }
}
