//! The calls in progress on a thread: each script call pushes a frame holding
//! its deadline, memory baseline, print allowance, the limit it has hit and (for
//! `compare()`) the context it was called with. Rhai's `on_progress` and the
//! helpers read the innermost frame.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use crate::component::Context;

use super::ScriptLimits;

/// The token `on_progress` terminates a call with when its deadline has passed.
pub(super) const TIMEOUT_TOKEN: &str = "tribunal:timeout";
/// The token `on_progress` terminates a call with past `max_memory`.
pub(super) const MEMORY_TOKEN: &str = "tribunal:memory";
/// The token `on_progress` terminates a call with past `max_operations`.
pub(super) const OPERATIONS_TOKEN: &str = "tribunal:operations";
/// How many operations pass between two clock reads.
const CLOCK_EVERY_OPS: u64 = 256;
/// How deeply `compare()` may call a script strategy that calls `compare()`...
const MAX_NESTED_CALLS: usize = 8;

/// The context of a call in progress, its lifetime erased, for the `compare()`
/// helper (a strategy takes a `Context`, and the helper runs inside a Rhai call
/// that cannot borrow one) and for the call's deadline (its budget). Read only
/// through [`ContextPtr::get`], while the frame holding it is on the stack.
#[derive(Debug, Clone, Copy)]
struct ContextPtr(*const Context<'static>);

impl ContextPtr {
    /// The context, for as long as the frame holding it is borrowed.
    #[allow(unsafe_code)]
    fn get(&self) -> &Context<'_> {
        // SAFETY: the pointer was made from the `&Context` a `CallFrame`
        // borrows for as long as it lives; the guard pops its frame when
        // dropped (it is a local of `ScriptComponent::call`, never leaked), so
        // a frame still on this thread's stack points to a context that is
        // still borrowed. The reference lives no longer than the borrow of the
        // frame (or of the pointer copied out of it while the frame is on the
        // stack).
        unsafe { &*self.0 }
    }
}

/// One script call in progress on this thread.
struct Frame {
    who: String,
    deadline: Option<Instant>,
    /// The context the call was made with: its budget (the deadline of the
    /// step and of its caller) ends the call too.
    context: ContextPtr,
    /// Whether the script calls `compare()`, which reads the context.
    compares: bool,
    /// The limit this call has hit (its token), if any: from then on every
    /// operation ends the call, and the call is an error even if the script
    /// went on (Rhai ignores errors in `sort` / `dedup` comparers).
    tripped: Option<&'static str>,
    /// This thread's net allocated bytes when the call started.
    memory_base: i64,
    /// Net bytes the call may allocate (0: not enforced).
    max_memory: i64,
    /// Bytes the call has printed with `print`/`debug` so far.
    printed: usize,
}

thread_local! {
    /// The calls in progress on this thread, innermost last (a script may call a
    /// script strategy through `compare()`).
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Pushes a frame for a call; pops it when dropped, whatever the outcome. It
/// borrows the call's context for as long as it lives, so the frame never holds
/// a context that is gone.
pub(super) struct CallFrame<'c> {
    context: PhantomData<&'c Context<'c>>,
}

impl<'c> CallFrame<'c> {
    pub(super) fn enter(
        who: &str,
        limits: &ScriptLimits,
        context: &'c Context<'c>,
        compares: bool,
    ) -> Result<Self, String> {
        let timeout_ms = limits.timeout_ms;
        FRAMES.with_borrow_mut(|frames| {
            if frames.len() >= MAX_NESTED_CALLS {
                return Err(format!(
                    "scripts calling strategies through compare() nest more than {MAX_NESTED_CALLS} deep"
                ));
            }
            // 0 means no deadline of its own.
            let own = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
            // A nested call never outlives its caller's deadline.
            let deadline =
                crate::deadline::earliest(own, frames.last().and_then(|outer| outer.deadline));
            frames.push(Frame {
                who: who.to_owned(),
                deadline,
                context: ContextPtr(std::ptr::from_ref(context).cast()),
                compares,
                tripped: None,
                memory_base: crate::alloc::thread_net_bytes(),
                max_memory: memory_limit(limits),
                printed: 0,
            });
            Ok(Self {
                context: PhantomData,
            })
        })
    }
}

impl Drop for CallFrame<'_> {
    fn drop(&mut self) {
        FRAMES.with_borrow_mut(|frames| {
            frames.pop();
        });
    }
}

impl Frame {
    /// Marks the call as past its memory, if it is and has hit no limit yet.
    fn trip_on_memory(&mut self) {
        if self.tripped.is_none()
            && self.max_memory > 0
            && crate::alloc::thread_net_bytes() - self.memory_base > self.max_memory
        {
            self.tripped = Some(MEMORY_TOKEN);
        }
    }

    /// Marks the call as past its deadline, if it is and has hit no limit yet.
    fn trip_on_deadline(&mut self) {
        // Its own deadline, or its pipeline step's or the step's caller's,
        // whichever comes first.
        if self.tripped.is_none()
            && (self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.context.get().budget.passed())
        {
            self.tripped = Some(TIMEOUT_TOKEN);
        }
    }
}

/// `on_progress`: the token to end the call with, once a limit is hit and for
/// every operation after that.
pub(super) fn progress(ops: u64, max_operations: u64) -> Option<&'static str> {
    FRAMES.with_borrow_mut(|frames| {
        let frame = frames.last_mut()?;
        if frame.tripped.is_none() && max_operations > 0 && ops > max_operations {
            frame.tripped = Some(OPERATIONS_TOKEN);
        }
        frame.trip_on_memory();
        if ops.is_multiple_of(CLOCK_EVERY_OPS) {
            frame.trip_on_deadline();
        }
        frame.tripped
    })
}

/// Whether the time of work done [`outside_limits`] counts against the calls'
/// deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Time {
    Counted,
    Uncounted,
}

/// Runs engine work a script asked for (a strategy's comparison through
/// `compare()`) outside the limits of the calls in progress on this thread: what
/// it leaves allocated does not count as theirs, nor, with [`Time::Uncounted`],
/// the time it takes (their deadlines, and that of the step in `budget`, move
/// by as much).
pub(super) fn outside_limits<T>(
    time: Time,
    budget: &crate::deadline::Budget<'_>,
    work: impl FnOnce() -> T,
) -> T {
    let (bytes, started) = (crate::alloc::thread_net_bytes(), Instant::now());
    let result = work();
    let kept = crate::alloc::thread_net_bytes() - bytes;
    let took = started.elapsed();
    if time == Time::Uncounted {
        budget.postpone_step(took);
    }
    FRAMES.with_borrow_mut(|frames| {
        for frame in frames.iter_mut() {
            frame.memory_base += kept;
            if time == Time::Uncounted {
                frame.deadline = frame.deadline.map(|d| d + took);
            }
        }
    });
    result
}

/// `limits.max_memory` as the call frames enforce it: 0 when the counting
/// allocator is not installed (nothing to measure with).
fn memory_limit(limits: &ScriptLimits) -> i64 {
    if crate::alloc::installed() {
        i64::try_from(limits.max_memory).unwrap_or(i64::MAX)
    } else {
        0
    }
}

/// What `print` and `debug` may write per call; the rest is dropped, with one note.
pub(super) const MAX_PRINTED_BYTES: usize = 64 << 10;

/// Writes one line of script output to stderr, within the call's allowance.
pub(super) fn print_capped(prefix: &str, text: &str) {
    let allowed = FRAMES.with_borrow_mut(|frames| {
        let Some(frame) = frames.last_mut() else {
            return Some(text.len());
        };
        let room = MAX_PRINTED_BYTES.saturating_sub(frame.printed);
        if room == 0 {
            return None;
        }
        frame.printed = frame.printed.saturating_add(text.len());
        Some(room)
    });
    let Some(room) = allowed else {
        return;
    };
    let text = crate::text::printable(text);
    if text.len() <= room {
        eprintln!("{prefix}{text}");
    } else {
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = &text[..end];
        eprintln!(
            "{prefix}{cut}… [output of this call past {} KiB dropped]",
            MAX_PRINTED_BYTES >> 10
        );
    }
}

/// The limit the innermost call has gone past, checked now: its deadline or its
/// memory (for helpers that build large results without counting operations).
/// Marks the call, so that it ends as an error whatever the script does next.
pub(super) fn over_budget() -> Option<&'static str> {
    FRAMES.with_borrow_mut(|frames| {
        let frame = frames.last_mut()?;
        frame.trip_on_memory();
        frame.trip_on_deadline();
        frame.tripped
    })
}

/// The `keep_going(cells)` of a helper's quadratic string work: false once
/// the innermost call's deadline has passed (see [`past_deadline`]).
pub(super) fn watch() -> impl FnMut(usize) -> bool {
    crate::deadline::watch_with(past_deadline)
}

/// Whether the innermost call's deadline has passed (for helpers that work
/// without counting operations); marks the call as timed out when it has.
pub(super) fn past_deadline() -> bool {
    FRAMES.with_borrow_mut(|frames| {
        let Some(frame) = frames.last_mut() else {
            return false;
        };
        frame.trip_on_deadline();
        frame.tripped.is_some()
    })
}

/// The deadline of the innermost call (its own, or its caller's call's).
pub(super) fn innermost_deadline() -> Option<Instant> {
    FRAMES.with_borrow(|frames| frames.last().and_then(|f| f.deadline))
}

/// The limit the innermost call has hit, if any.
pub(super) fn tripped() -> Option<&'static str> {
    FRAMES.with_borrow(|frames| frames.last().and_then(|f| f.tripped))
}

pub(super) fn current_script() -> String {
    FRAMES.with_borrow(|frames| {
        frames.last().map_or_else(
            || "?".to_owned(),
            |f| f.who.trim_start_matches("script ").to_owned(),
        )
    })
}

/// Runs `f` with the context of the innermost call of a script that calls
/// `compare()`; `None` outside of such a call.
pub(super) fn with_current_context<R>(f: impl FnOnce(&Context<'_>) -> R) -> Option<R> {
    let ptr = FRAMES.with_borrow(|frames| {
        frames
            .iter()
            .rev()
            .find_map(|frame| frame.compares.then_some(frame.context))
    })?;
    // (Its frame stays on the stack while `f` runs: `f` may push and pop
    // frames of its own, inside it. `f` cannot keep the reference.)
    Some(f(ptr.get()))
}
