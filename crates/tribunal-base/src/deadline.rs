//! The time budget of an evaluation, handed down explicitly.
//!
//! A [`Budget`] is made for each call into the pipeline (one record, or a
//! batch of them): the deadline of its caller (a server's request deadline,
//! none for a batch), the run's [`Interrupt`] (a front end stopping on a
//! signal) and the deadline of the pipeline step running ([`Steps`]: a
//! record's steps, one after another). The pipeline hands it to every
//! component in its context; the work that can run long asks it as it goes:
//! quadratic string work (similarity, Levenshtein) through [`Budget::watch`],
//! a plugin's helper process through [`Budget::remaining`]. Nothing of it
//! lives in a thread-local or a process-wide static: two engines in one
//! process, or work handed to another thread, keep their own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A flag that ends the work of a run: set once (a front end that is about to
/// exit on a signal, after the records already judged are written), it cannot
/// be undone, and from then on every deadline of the budgets made with it has
/// passed (the steps running stop at their next check). Clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Ends the work in progress under this flag, and all work after it.
    pub fn interrupt(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`interrupt`](Self::interrupt) was called.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The error of a step stopped by an [`Interrupt`].
pub const INTERRUPTED_MESSAGE: &str = "stopped: the run was interrupted";

/// The step deadline's value when no step with a limit is running.
const NO_STEP: u64 = u64::MAX;
/// The latest step deadline there is (a later one is this one).
const LATEST: u64 = NO_STEP - 1;

/// The time budget of one evaluation (see the module's documentation).
#[derive(Debug)]
pub struct Budget<'a> {
    /// The caller's deadline, on the precise clock: a caller compares it with
    /// its own reading.
    caller: Option<Instant>,
    /// The interrupt's flag (held as the flag itself: one load a check).
    interrupt: Option<&'a AtomicBool>,
    /// The deadline of the step running ([`Steps`]), a [`Tick`] in
    /// nanoseconds ([`NO_STEP`]: none). Atomic, so that a budget shared with
    /// the components (which may hand their context to other threads) can be
    /// postponed through a shared reference. Unused in a budget made inside
    /// another ([`ending_by`](Self::ending_by)): the step is the outer one's.
    step: AtomicU64,
    /// The budget this one was made inside, whose step it shares.
    outer: Option<&'a Budget<'a>>,
}

impl Budget<'static> {
    /// No deadline, no interrupt: work under it is never stopped (outside an
    /// evaluation, and in tests).
    pub const fn unlimited() -> Self {
        Self {
            caller: None,
            interrupt: None,
            step: AtomicU64::new(NO_STEP),
            outer: None,
        }
    }
}

impl<'a> Budget<'a> {
    /// The budget of work that ends by the caller's `deadline` (`None`: no
    /// deadline of the caller's) or when `interrupt` is set: the steps inside
    /// end by it as by their own limits ([`passed`](Self::passed),
    /// [`remaining`](Self::remaining)), and
    /// [`caller_passed`](Self::caller_passed) tells a step that ran late whose
    /// deadline it was.
    pub fn new(deadline: Option<Instant>, interrupt: Option<&'a Interrupt>) -> Self {
        Self {
            caller: deadline,
            interrupt: interrupt.map(|interrupt| &*interrupt.0),
            step: AtomicU64::new(NO_STEP),
            outer: None,
        }
    }

    /// The caller's deadline.
    pub fn caller(&self) -> Option<Instant> {
        self.caller
    }

    /// The budget of work inside this one that must also end by `deadline`
    /// (a script call's own, for the strategy it calls): the same interrupt
    /// and the same step (a postponement in either moves both), and
    /// `deadline` as its caller's when that is earlier.
    #[must_use]
    pub fn ending_by(&self, deadline: Option<Instant>) -> Budget<'_> {
        Budget {
            caller: earliest(self.caller, deadline),
            interrupt: self.interrupt,
            step: AtomicU64::new(NO_STEP),
            outer: Some(self),
        }
    }

    /// The budget that holds the step: the outermost.
    fn stepping(&self) -> &Budget<'a> {
        let mut budget = self;
        while let Some(outer) = budget.outer {
            budget = outer;
        }
        budget
    }

    /// Whether the run was interrupted.
    pub fn interrupted(&self) -> bool {
        self.interrupt
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// Whether the caller's deadline has passed (or the run was interrupted).
    pub fn caller_passed(&self) -> bool {
        self.interrupted()
            || self
                .caller
                .is_some_and(|deadline| Instant::now() >= deadline)
    }

    fn step_deadline(&self) -> Option<Tick> {
        match self.stepping().step.load(Ordering::Relaxed) {
            NO_STEP => None,
            nanos => Some(Tick(nanos)),
        }
    }

    fn set_step(&self, deadline: Option<Tick>) {
        self.stepping()
            .step
            .store(deadline.map_or(NO_STEP, |t| t.0), Ordering::Relaxed);
    }

    /// Whether the deadline of the step running under this budget, or of its
    /// caller, has passed.
    pub fn passed(&self) -> bool {
        self.step_deadline().is_some_and(|d| Tick::now() >= d) || self.caller_passed()
    }

    /// Moves the deadline of the step running `by` later: the step spent that
    /// long on the engine's one-time set-up (a model loaded for a script's
    /// `compare()`), not on its own work. The caller's deadline does not move:
    /// the caller did wait.
    pub fn postpone_step(&self, by: Duration) {
        if let Some(deadline) = self.step_deadline() {
            self.set_step(Some(deadline + by));
        }
    }

    /// How long until the deadline of the step running, or of the caller:
    /// `None` when neither has one, zero once one has passed. Work that can be
    /// stopped from outside (a plugin's helper process) waits no longer.
    pub fn remaining(&self) -> Option<Duration> {
        if self.interrupted() {
            return Some(Duration::ZERO);
        }
        let step = self
            .step_deadline()
            .map(|deadline| Duration::from_nanos(deadline.0.saturating_sub(Tick::now().0)));
        let caller = self
            .caller
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        earliest(step, caller)
    }

    /// The `keep_going(cells)` of quadratic string work: false once
    /// [`passed`](Self::passed). Reads the clock once per
    /// [`CLOCK_EVERY_CELLS`] cells of work.
    pub fn watch(&self) -> impl FnMut(usize) -> bool + '_ {
        watch_with(|| self.passed())
    }
}

/// How many cells of quadratic work pass between two clock reads.
pub const CLOCK_EVERY_CELLS: usize = 1 << 16;

/// The `keep_going(cells)` of quadratic string work, `false` once `passed`
/// says so, asked once per [`CLOCK_EVERY_CELLS`] cells of work (for a host
/// whose calls keep deadlines of their own, as the script host's do).
pub fn watch_with(passed: impl Fn() -> bool) -> impl FnMut(usize) -> bool {
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

/// A reading of the clock steps are timed by, in nanoseconds: on Linux the
/// kernel's coarse monotonic clock, which advances once per timer tick (1–4
/// ms) and takes about 3 ns to read, where the precise one takes about 21 ns
/// (a record reads it once per step and once more: 2.5% of a short record's
/// time); elsewhere the precise clock. A step's limit (1 s by default) is
/// kept to within a tick. Readings compare only with each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Tick(u64);

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
        let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
        let nanos = u64::try_from(time.tv_nsec).unwrap_or(0);
        Self(seconds.saturating_mul(1_000_000_000).saturating_add(nanos))
    }

    #[cfg(not(target_os = "linux"))]
    fn now() -> Self {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        Self(u64::try_from(START.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(LATEST))
    }
}

impl std::ops::Add<Duration> for Tick {
    type Output = Self;

    /// (Never [`NO_STEP`]: a deadline that far is the one just before it.)
    fn add(self, limit: Duration) -> Self {
        let limit = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
        Self(self.0.saturating_add(limit).min(LATEST))
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

    /// Runs the next step, `work`, under `budget` with a deadline of the
    /// limit from its start, never later than a step deadline the budget
    /// already has. `Err` holds the result when the deadline passed before
    /// `work` ended: work that gave up early returns a result that must not be
    /// used.
    pub fn within<T>(&mut self, budget: &Budget<'_>, work: impl FnOnce() -> T) -> Result<T, T> {
        let outer = budget.step_deadline();
        let own = self
            .limit
            .map(|limit| self.ended.take().unwrap_or_else(Tick::now) + limit);
        budget.set_step(earliest(own, outer));
        let result = work();
        // Read again: the work may have postponed it (`postpone_step`).
        let deadline = budget.step_deadline();
        budget.set_step(outer);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Longer than a few ticks of the coarse clock however the kernel is
    /// configured (1 to 10 ms each), so a 1 ms limit is past after it.
    const TICKS: Duration = Duration::from_millis(40);

    fn within<T>(
        budget: &Budget<'_>,
        limit: Option<Duration>,
        work: impl FnOnce() -> T,
    ) -> Result<T, T> {
        Steps::new(limit).within(budget, work)
    }

    #[test]
    fn a_callers_deadline_ends_the_steps_inside_and_says_whose_it_was() {
        let soon = Budget::new(Some(Instant::now() + Duration::from_millis(1)), None);
        let late = within(&soon, Some(Duration::from_secs(60)), || {
            std::thread::sleep(TICKS);
            (soon.passed(), soon.caller_passed())
        });
        // The step's own limit is far: it ends in time by its own clock, and
        // the caller's deadline has passed (the pipeline makes that an error).
        assert_eq!(late, Ok((true, true)));
        let later = Budget::new(Some(Instant::now() + Duration::from_secs(60)), None);
        assert_eq!(within(&later, Some(TICKS), || 1), Ok(1));
        // A step's own limit, under a far caller's deadline, is not the caller's.
        let own = within(&later, Some(Duration::from_millis(1)), || {
            std::thread::sleep(TICKS);
            later.caller_passed()
        });
        assert_eq!(own, Err(false));
        assert_eq!(
            later.remaining().map(|left| left > Duration::from_secs(50)),
            Some(true)
        );
        // Work inside it with a deadline of its own ends by the earlier.
        let inner = later.ending_by(Some(Instant::now() + Duration::from_millis(1)));
        std::thread::sleep(TICKS);
        assert!(inner.passed() && !later.passed());
        // ... and shares its step: a postponement inside moves the outer's.
        let moved = within(&later, Some(Duration::from_millis(1)), || {
            std::thread::sleep(TICKS);
            let inner = later.ending_by(None);
            assert!(inner.passed(), "the outer step's deadline holds inside");
            inner.postpone_step(Duration::from_secs(60));
            (inner.passed(), later.passed())
        });
        assert_eq!(moved, Ok((false, false)));
        assert_eq!(Budget::unlimited().remaining(), None);
    }

    #[test]
    fn work_past_its_deadline_is_flagged() {
        let budget = Budget::unlimited();
        assert_eq!(within(&budget, None, || budget.passed()), Ok(false));
        assert_eq!(within(&budget, Some(Duration::from_secs(60)), || 1), Ok(1));
        let late = within(&budget, Some(Duration::from_millis(1)), || {
            std::thread::sleep(TICKS);
            budget.passed()
        });
        assert_eq!(late, Err(true));
        // The deadline ends with the work; an inner one never outlives an outer one.
        assert!(!budget.passed());
        let nested = within(&budget, Some(Duration::from_millis(1)), || {
            within(&budget, Some(Duration::from_secs(60)), || {
                std::thread::sleep(TICKS);
            })
        });
        assert_eq!(nested, Err(Err(())));
    }

    #[test]
    fn a_postponed_step_ends_later_and_the_caller_does_not_wait() {
        let budget = Budget::unlimited();
        let postponed = within(&budget, Some(Duration::from_millis(1)), || {
            std::thread::sleep(TICKS);
            budget.postpone_step(Duration::from_secs(60));
            budget.passed()
        });
        assert_eq!(postponed, Ok(false));
        let soon = Budget::new(Some(Instant::now() + Duration::from_millis(1)), None);
        let late = within(&soon, Some(Duration::from_secs(60)), || {
            std::thread::sleep(TICKS);
            soon.postpone_step(Duration::from_secs(60));
            soon.passed()
        });
        assert_eq!(late, Ok(true));
    }

    #[test]
    fn an_interrupt_passes_every_deadline_of_its_budgets_only() {
        let interrupt = Interrupt::default();
        let (run, other) = (Budget::new(None, Some(&interrupt)), Budget::unlimited());
        assert!(!run.passed() && !run.interrupted());
        interrupt.clone().interrupt();
        assert!(run.passed() && run.caller_passed() && run.interrupted());
        assert_eq!(run.remaining(), Some(Duration::ZERO));
        assert!(!other.passed(), "another run's budget is its own");
        let mut keep_going = run.watch();
        assert!(keep_going(1), "asked only every CLOCK_EVERY_CELLS cells");
        assert!(!keep_going(CLOCK_EVERY_CELLS));
    }

    #[test]
    fn each_step_has_the_whole_limit_from_where_the_one_before_ended() {
        // Two steps of 0.6 s under a limit of 1 s: each is within it, though
        // both together are not (the second is timed from the first's end).
        let budget = Budget::unlimited();
        let mut steps = Steps::new(Some(Duration::from_secs(1)));
        let step = || std::thread::sleep(Duration::from_millis(600));
        assert_eq!(steps.within(&budget, step), Ok(()));
        assert_eq!(steps.within(&budget, step), Ok(()));
        let late = steps.within(&budget, || {
            std::thread::sleep(Duration::from_millis(1_100));
            budget.passed()
        });
        assert_eq!(late, Err(true));
    }
}
