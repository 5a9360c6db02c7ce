//! The time budget of the work in progress on this thread, for code below the
//! layer that sets it.
//!
//! Quadratic string work (similarity, Levenshtein) lives in `text` and is reached
//! from scripts (helpers, `fuzzy` through `compare()`), whose calls have a deadline.
//! The script host, a later layer, installs the check of its current call's
//! deadline here once; the work asks [`watch`] as it goes. Outside a call, or when
//! no host installed a check, the budget is unlimited.
//!
//! The pipeline also runs every step within the pack's time limit ([`Steps`]), so
//! the built-ins' long work (matching many tokens, similarity) stops there too.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

static CHECK: OnceLock<fn() -> bool> = OnceLock::new();

thread_local! {
    /// The deadline of the pipeline step running on this thread ([`Steps`]).
    static STEP: Cell<Option<Tick>> = const { Cell::new(None) };
    /// The deadline a caller set for the work on this thread ([`by_caller`]),
    /// on the precise clock: a caller compares it with its own reading.
    static CALLER: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// Runs `work` by the caller's `deadline` (a server's request deadline): the
/// steps inside end by it as by their own limits ([`passed`], [`remaining`]
/// and [`step_passed`] count it), and [`caller_passed`] tells a step that ran
/// late whose deadline it was. Read on the precise clock, so that when the
/// work says the deadline passed, the caller's clock says so too. (`None`:
/// no deadline of this caller's; an outer one still holds.)
pub fn by_caller<T>(deadline: Option<std::time::Instant>, work: impl FnOnce() -> T) -> T {
    let outer = CALLER.get();
    CALLER.set(earliest(deadline, outer));
    let result = work();
    CALLER.set(outer);
    result
}

/// Moves the deadline of the pipeline step running on this thread `by` later:
/// the step spent that long on the engine's one-time set-up (a model loaded
/// for a script's `compare()`), not on its own work. A caller's deadline
/// ([`by_caller`]) does not move: the caller did wait.
pub fn postpone_step(by: Duration) {
    STEP.set(STEP.get().map(|deadline| deadline + by));
}

/// Whether the deadline of the pipeline step running on this thread, or of its
/// caller, has passed (not asking the installed check: for the script host's
/// own use).
pub fn step_passed() -> bool {
    STEP.get().is_some_and(|d| Tick::now() >= d) || caller_passed()
}

/// Set once the process's evaluations are interrupted ([`interrupt`]).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends the work in progress on every thread, and all work after it: from
/// now on every deadline has passed, as a caller's (the steps running stop
/// at their next check of it). For a front end that is about to exit on a
/// signal, after the records already judged are written: it cannot be undone.
pub fn interrupt() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// The error of a step stopped by [`interrupt`].
pub const INTERRUPTED_MESSAGE: &str = "stopped: the run was interrupted";

/// Whether [`interrupt`] was called.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the deadline a caller set for the work on this thread has passed
/// (or the process's evaluations were interrupted).
pub fn caller_passed() -> bool {
    interrupted()
        || CALLER
            .get()
            .is_some_and(|deadline| std::time::Instant::now() >= deadline)
}

/// A reading of the clock steps are timed by: on Linux the kernel's coarse
/// monotonic clock, which advances once per timer tick (1–4 ms) and takes about
/// 3 ns to read, where the precise one takes about 21 ns (a record reads it once
/// per step and once more: 2.5% of a short record's time); elsewhere the
/// precise clock. A step's limit (1 s by default) is kept to within a tick.
/// Readings compare only with each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Tick(Duration);

impl Tick {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn now() -> Self {
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `time` is a timespec the call writes into; the clock exists on
        // every Linux since 2.6.32, and glibc and musl read it without a system
        // call.
        let failed = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &raw mut time) };
        debug_assert_eq!(failed, 0, "the coarse monotonic clock reads");
        Self(Duration::new(
            u64::try_from(time.tv_sec).unwrap_or(0),
            u32::try_from(time.tv_nsec).unwrap_or(0),
        ))
    }

    #[cfg(not(target_os = "linux"))]
    fn now() -> Self {
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        Self(START.get_or_init(Instant::now).elapsed())
    }
}

impl std::ops::Add<Duration> for Tick {
    type Output = Self;

    fn add(self, limit: Duration) -> Self {
        Self(self.0.saturating_add(limit))
    }
}

/// The earlier of two deadlines (`None`: no deadline).
pub fn earliest<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Steps run one after another, each within the same time limit. The clock
/// reading that ends a step starts the next, so `n` steps read the clock
/// `n + 1` times instead of `2n`. A step's time starts early by the
/// bookkeeping between two steps (and by up to a tick of [`Tick`]'s clock),
/// never late.
#[derive(Debug)]
pub struct Steps {
    limit: Option<Duration>,
    /// When the last step ended, if one did under this limit.
    ended: Option<Tick>,
}

impl Steps {
    /// Steps each given `limit` (none: no deadline of their own).
    pub fn new(limit: Option<Duration>) -> Self {
        Self { limit, ended: None }
    }

    /// Runs the next step, `work`, with a deadline of the limit from its
    /// start, never later than a deadline already running on this thread.
    /// `Err` holds the result when the deadline passed before `work` ended:
    /// work that gave up early returns a result that must not be used.
    pub fn within<T>(&mut self, work: impl FnOnce() -> T) -> Result<T, T> {
        let outer = STEP.get();
        let own = self
            .limit
            .map(|limit| self.ended.take().unwrap_or_else(Tick::now) + limit);
        let deadline = earliest(own, outer);
        STEP.set(deadline);
        let result = work();
        // Read again: the work may have postponed it (`postpone_step`).
        let deadline = STEP.get();
        STEP.set(outer);
        let Some(deadline) = deadline else {
            return Ok(result);
        };
        let now = Tick::now();
        if own.is_some() {
            self.ended = Some(now);
        }
        if now >= deadline {
            Err(result)
        } else {
            Ok(result)
        }
    }
}

/// How long until the deadline of the pipeline step running on this thread:
/// `None` outside a step with a limit, zero once it has passed. Work that can
/// be stopped from outside (a plugin's helper process) waits no longer.
pub fn remaining() -> Option<Duration> {
    if interrupted() {
        return Some(Duration::ZERO);
    }
    let step = STEP
        .get()
        .map(|deadline| deadline.0.saturating_sub(Tick::now().0));
    let caller = CALLER
        .get()
        .map(|deadline| deadline.saturating_duration_since(std::time::Instant::now()));
    earliest(step, caller)
}

/// Installs the check "has the deadline of the call in progress on this thread
/// passed?" (once per process; later installs are ignored).
pub fn install(check: fn() -> bool) {
    let _ = CHECK.set(check);
}

/// Whether the deadline of the work in progress on this thread has passed.
pub fn passed() -> bool {
    step_passed() || CHECK.get().is_some_and(|check| check())
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

    /// Longer than a few ticks of the coarse clock however the kernel is
    /// configured (1 to 10 ms each), so a 1 ms limit is past after it.
    const TICKS: Duration = Duration::from_millis(40);

    fn within<T>(limit: Option<Duration>, work: impl FnOnce() -> T) -> Result<T, T> {
        Steps::new(limit).within(work)
    }

    #[test]
    fn a_callers_deadline_ends_the_steps_inside_and_says_whose_it_was() {
        let soon = std::time::Instant::now() + Duration::from_millis(1);
        let late = by_caller(Some(soon), || {
            within(Some(Duration::from_secs(60)), || {
                std::thread::sleep(TICKS);
                (passed(), caller_passed())
            })
        });
        // The step's own limit is far: it ends in time by its own clock, and
        // the caller's deadline has passed (the pipeline makes that an error).
        assert_eq!(late, Ok((true, true)));
        assert!(!caller_passed(), "the caller's deadline ends with its work");
        let later = std::time::Instant::now() + Duration::from_secs(60);
        assert_eq!(by_caller(Some(later), || within(Some(TICKS), || 1)), Ok(1));
        // A step's own limit, under a far caller's deadline, is not the caller's.
        let own = by_caller(Some(later), || {
            within(Some(Duration::from_millis(1)), || {
                std::thread::sleep(TICKS);
                caller_passed()
            })
        });
        assert_eq!(own, Err(false));
    }

    #[test]
    fn work_past_its_deadline_is_flagged() {
        assert_eq!(within(None, passed), Ok(false));
        assert_eq!(within(Some(Duration::from_secs(60)), || 1), Ok(1));
        let late = within(Some(Duration::from_millis(1)), || {
            std::thread::sleep(TICKS);
            passed()
        });
        assert_eq!(late, Err(true));
        // The deadline ends with the work; an inner one never outlives an outer one.
        assert!(!passed());
        let nested = within(Some(Duration::from_millis(1)), || {
            within(Some(Duration::from_secs(60)), || {
                std::thread::sleep(TICKS);
            })
        });
        assert_eq!(nested, Err(Err(())));
    }

    #[test]
    fn each_step_has_the_whole_limit_from_where_the_one_before_ended() {
        // Two steps of 0.6 s under a limit of 1 s: each is within it, though
        // both together are not (the second is timed from the first's end).
        let mut steps = Steps::new(Some(Duration::from_secs(1)));
        let step = || std::thread::sleep(Duration::from_millis(600));
        assert_eq!(steps.within(step), Ok(()));
        assert_eq!(steps.within(step), Ok(()));
        let late = steps.within(|| {
            std::thread::sleep(Duration::from_millis(1_100));
            passed()
        });
        assert_eq!(late, Err(true));
    }
}
