//! The worker pool a runtime (`Runtime`) keeps, and the ordered
//! parallel map on it: evaluate items on worker threads, hand results to a
//! sink in input order, with a bounded number of items in flight (so memory
//! stays flat whatever the input size).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;

use corosensei::stack::DefaultStack;

mod queue;

use queue::{current_cpu, Job, Jobs, Queue};

/// Chunks in flight per worker (read ahead, being evaluated, or waiting to be written).
const CHUNKS_PER_WORKER: usize = 4;

/// The most threads a call may use, and a pool may start.
pub const MAX_JOBS: usize = 256;

/// The native stack of a thread that evaluates records (the workers here, and
/// the CLI's main thread, which is one of them). Rhai recurses natively through nested values (size checks,
/// clone, drop) and nested script calls: within the default script limits that
/// goes deeper than the 2 MiB of a default thread (a stack overflow aborts the
/// whole process). A program that evaluates packs on threads
/// of its own should give them this much; only the pages a thread
/// touches take memory.
pub const STACK_SIZE: usize = 256 << 20;

/// The cores of this machine.
pub fn cores() -> usize {
    thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The runtime's threads: the only threads that evaluate. Started when a call
/// first needs them and kept (a thread kept keeps its allocator's memory warm,
/// and starting threads for each call cost about 50 µs a call). Three kinds
/// of work share them, from one queue, in order (a job sent while a thread
/// waits goes to the one that has waited least):
///
/// - the closures of a [`scope`](Self::scope) (a batch's ordered map);
/// - jobs [`submit`](Self::submit)ted by a front end (a server's checks),
///   on the threads [`reserve`](Self::reserve)d for them;
/// - long jobs [`spawn`](Self::spawn)ed (a request that reads its records
///   as they arrive), each with a thread of its own for as long as it runs.
///
/// A fourth kind, a [`fork`](Self::fork)'s shares (an embedding pass's
/// products), goes to whichever threads are free, the caller taking any
/// share none has begun.
///
/// Threads are started while the calls in progress, the reservations and the
/// long jobs ask for more than there are (up to [`MAX_JOBS`]), so a call does
/// not wait for another to end, and a long job waiting for input never holds
/// a thread another needs. They end when the pool is dropped. A process
/// forked from the one that started them (Python's `multiprocessing`) has
/// none of them, and starts its own. A clone is a handle on the same threads
/// (the embedding models hold one).
#[derive(Debug, Default, Clone)]
pub struct Pool {
    state: Arc<Mutex<PoolState>>,
    /// Submitted jobs not yet started.
    waiting: Arc<std::sync::atomic::AtomicUsize>,
}

#[derive(Debug)]
struct PoolState {
    /// The process that started the threads.
    process: u32,
    /// Where their jobs wait (closed when the pool is dropped).
    queue: Arc<Queue>,
    threads: usize,
    /// Threads the calls in progress asked for.
    asked: usize,
    /// Thread starts the system refuses next (tests).
    #[cfg(test)]
    refuse: usize,
}

impl PoolState {
    fn new() -> Self {
        Self {
            process: std::process::id(),
            queue: Arc::default(),
            threads: 0,
            asked: 0,
            #[cfg(test)]
            refuse: 0,
        }
    }

    /// Starts a worker thread running `serve`.
    fn start(&mut self, serve: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        #[cfg(test)]
        if self.refuse > 0 {
            self.refuse -= 1;
            return Err(std::io::Error::other("refused by the test"));
        }
        thread::Builder::new()
            .name("tribunal-worker".into())
            .stack_size(STACK_SIZE)
            .spawn(serve)
            .map(drop)
    }
}

impl Default for PoolState {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PoolState {
    /// The pool is gone: its threads end once the jobs queued have run.
    fn drop(&mut self) {
        self.queue.close();
    }
}

impl Pool {
    /// Runs `body` with a [`Scope`] whose closures run on `workers` of the
    /// pool's threads (started if need be), and returns once `body` has and
    /// every closure spawned in it has ended, even when one panics.
    pub fn scope<'env, R>(&self, workers: usize, body: impl FnOnce(&Scope<'_, 'env>) -> R) -> R {
        let pending = Arc::new(Pending::default());
        // Dropped last, on unwinding too (a thread that cannot start): waits
        // for the closures, and gives back the threads asked for.
        let _wait = Wait {
            _asked: Asked {
                pool: self,
                threads: workers,
            },
            pending: Arc::clone(&pending),
        };
        let jobs = self.lease(workers);
        let scope = Scope {
            jobs,
            pending,
            _borrows: PhantomData,
        };
        body(&scope)
    }

    /// Starts threads until there are enough for the calls in progress and
    /// `workers` more; returns where to send their work. When the system
    /// refuses a thread, the threads there are do the work; when there are
    /// none, it panics (the caller's `Wait` then gives back what it asked).
    fn lease(&self, workers: usize) -> Jobs {
        lease(&self.state, workers)
    }

    /// Keeps `threads` threads for [`submit`](Self::submit)ted jobs, on top
    /// of what the calls in progress use, until [`release`](Self::release).
    pub(crate) fn reserve(&self, threads: usize) {
        // (Counted now, started when work is first submitted.)
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.asked += threads;
    }

    /// Gives back threads [`reserve`](Self::reserve)d.
    pub(crate) fn release(&self, threads: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.asked = state.asked.saturating_sub(threads);
    }

    /// Runs `job` on one of the threads, after the work queued before it. A
    /// panic in it ends that job only.
    pub(crate) fn submit(&self, job: impl FnOnce() + Send + 'static) {
        use std::sync::atomic::Ordering;
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let waiting = Arc::clone(&self.waiting);
        let job: Job = Box::new(move || {
            waiting.fetch_sub(1, Ordering::Relaxed);
            let _ = panic::catch_unwind(AssertUnwindSafe(job));
        });
        self.lease(0).send(job);
    }

    /// Runs `job`, which may wait for input as long as it likes, with a
    /// thread of its own on top of the others for as long as it runs. A
    /// panic in it ends that job only.
    pub(crate) fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let jobs = self.lease(1);
        let state = Arc::clone(&self.state);
        let job: Job = Box::new(move || {
            let _ = panic::catch_unwind(AssertUnwindSafe(job));
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            state.asked = state.asked.saturating_sub(1);
        });
        jobs.send(job);
    }

    /// Submitted jobs not yet started.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `task(0)` to `task(shares - 1)`, each once, on this thread and up
    /// to `shares - 1` of the pool's (started if need be, as a scope's are),
    /// and returns when all have ended. Each thread takes the next share not
    /// yet taken, this one too: when the pool's threads are busy, this thread
    /// does the shares they have not begun instead of waiting for them. A
    /// panic in a share reaches the caller once every share has ended.
    ///
    /// A thread woken for a share is kept off this thread's core while it
    /// runs it: the kernel would often wake it there, behind this thread's
    /// own share, while another core sat idle (in `tribunal serve` at 20
    /// SEMANTIC checks a second, a check's p50 went from 12–13 ms to 15–18;
    /// with the helper moving itself off once it ran there, one in five to
    /// fifteen still began 3 ms late).
    pub(crate) fn fork(&self, shares: usize, task: &(dyn Fn(usize) + Sync)) {
        if shares <= 1 {
            (0..shares).for_each(task);
            return;
        }
        let helpers = shares - 1;
        // SAFETY: only the lifetime changes. A share is run only when taken
        // below `shares`, and this call does not return before every such
        // share has ended (`Shares::wait`); a helper starting later takes
        // none and never reads `task`.
        // (A cast may not lengthen a trait object's lifetime.)
        #[allow(unsafe_code, clippy::transmute_ptr_to_ptr)]
        let task = unsafe {
            std::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(task)
        };
        let caller = current_cpu();
        let shared = Arc::new(Shares {
            task,
            count: shares,
            next: std::sync::atomic::AtomicUsize::new(0),
            running: Pending::of(shares),
            panic: Mutex::new(None),
        });
        // Gives back the threads asked for, on unwinding too.
        let _give_back = Asked {
            pool: self,
            threads: helpers,
        };
        let jobs = self.lease(helpers);
        for _ in 0..helpers {
            let shared = Arc::clone(&shared);
            // (Not on this thread's core, busy with its own shares.)
            jobs.send_off_core(Box::new(move || shared.take()), caller);
        }
        shared.take();
        if let Some(panic) = shared.wait() {
            panic::resume_unwind(panic);
        }
    }
}

/// The shares of a [`Pool::fork`]: the task (its borrows erased), how many,
/// the next not yet taken, those not yet ended and the first panic.
struct Shares {
    task: *const (dyn Fn(usize) + Sync + 'static),
    count: usize,
    next: std::sync::atomic::AtomicUsize,
    running: Pending,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

// SAFETY: `task` is `Sync`, and is called only while the fork that owns it
// waits (see `Pool::fork`).
#[allow(unsafe_code)]
unsafe impl Send for Shares {}
#[allow(unsafe_code)]
unsafe impl Sync for Shares {}

impl Shares {
    /// Runs the shares not yet taken, one at a time, until none is left.
    fn take(&self) {
        use std::sync::atomic::Ordering;
        loop {
            let share = self.next.fetch_add(1, Ordering::Relaxed);
            if share >= self.count {
                return;
            }
            // SAFETY: the share was taken below `count`, so the fork waits
            // for it to end before its task's borrows can end.
            #[allow(unsafe_code)]
            let task = unsafe { &*self.task };
            if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(|| task(share))) {
                let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
                first.get_or_insert(panic);
            }
            self.running.end_one();
        }
    }

    /// Waits for every share to end; the first panic, if one did.
    fn wait(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.running.wait();
        self.panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Gives back, when dropped, threads a call asked a pool for.
struct Asked<'pool> {
    pool: &'pool Pool,
    threads: usize,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        let mut state = self
            .pool
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.asked = state.asked.saturating_sub(self.threads);
    }
}

/// Starts threads until there are enough for the work in progress and
/// `workers` more; returns where to send their work (see [`Pool::lease`]).
fn lease(state: &Mutex<PoolState>, workers: usize) -> Jobs {
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    if state.process != std::process::id() {
        // A forked child: the threads (and the lock their queue may be
        // under) stayed with the parent.
        std::mem::forget(std::mem::take(&mut *state));
    }
    state.asked += workers;
    // (Work submitted with no reservation still gets a thread.)
    let wanted = state.asked.clamp(1, MAX_JOBS);
    while state.threads < wanted {
        let queue = Arc::clone(&state.queue);
        match state.start(move || queue.serve()) {
            Ok(()) => state.threads += 1,
            Err(err) if state.threads == 0 => {
                drop(state);
                panic!("cannot start a worker thread: {err}");
            }
            Err(_) => break,
        }
    }
    Jobs(Arc::clone(&state.queue))
}

/// Work not yet ended: a scope's closures, a fork's shares.
#[derive(Default)]
struct Pending {
    count: Mutex<usize>,
    ended: Condvar,
}

impl Pending {
    /// `count` pieces of work not yet ended.
    fn of(count: usize) -> Self {
        Self {
            count: Mutex::new(count),
            ended: Condvar::new(),
        }
    }

    /// One more.
    fn add(&self) {
        *self.count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
    }

    /// One has ended.
    fn end_one(&self) {
        let ended = {
            let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
            *count -= 1;
            *count == 0
        };
        // (After the lock is let go: see `Jobs::send_off_core`.)
        if ended {
            self.ended.notify_all();
        }
    }

    /// Waits until every one has ended.
    fn wait(&self) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count > 0 {
            count = self
                .ended
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Waits, when dropped, for a scope's closures; then gives its threads back
/// (its `Asked`, dropped after).
struct Wait<'pool> {
    _asked: Asked<'pool>,
    pending: Arc<Pending>,
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        self.pending.wait();
    }
}

/// Spawns closures on a pool's threads that may borrow what lives longer than
/// the [`Pool::scope`] call (`'env`).
#[allow(missing_debug_implementations)]
pub struct Scope<'pool, 'env> {
    jobs: Jobs,
    pending: Arc<Pending>,
    _borrows: PhantomData<(&'pool Pool, &'env mut &'env ())>,
}

impl<'env> Scope<'_, 'env> {
    /// Runs `work` on a pool thread. A panic in it is caught and dropped:
    /// `work` reports its own outcome (as [`ordered_map`] does).
    pub fn spawn<F: FnOnce() + Send + 'env>(&self, work: F) {
        self.pending.add();
        let pending = Arc::clone(&self.pending);
        let job: Box<dyn FnOnce() + Send + 'env> = Box::new(move || {
            let _ = panic::catch_unwind(AssertUnwindSafe(work));
            pending.end_one();
        });
        // SAFETY: only the lifetime changes. `Pool::scope` does not return,
        // nor unwind past its `Wait`, before every job spawned in the scope
        // has ended, so nothing `work` borrows for `'env` is gone while it runs.
        #[allow(unsafe_code)]
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'env>, Job>(job) };
        self.jobs.send(job);
    }
}

/// Applies `f` to every item on `jobs` threads (the calling thread and
/// `jobs - 1` of `pool`'s) and calls `sink` with the results in input order, on
/// the calling thread, handing items to workers `chunk` at a time (1 when the
/// items are already batches). With one job no other thread is used.
///
/// The calling thread is one of the `jobs`: between its own chunks it hands
/// the finished ones to `sink`, and whichever thread is free takes the next
/// chunk from `items` (read under a lock, where it was taken). No thread only
/// reads or only writes, so `jobs` threads keep `jobs` cores busy without
/// being preempted by each other, and a chunk is read on the core that
/// evaluates it. At most `jobs * CHUNKS_PER_WORKER` chunks are taken and not
/// yet handed to `sink`, so memory stays flat whatever the input size. A panic
/// in `f` on a worker reaches the caller.
pub fn ordered_map<T, R, I, F, S>(
    pool: &Pool,
    items: I,
    jobs: usize,
    chunk: usize,
    f: F,
    mut sink: S,
) where
    T: Send,
    R: Send,
    I: Iterator<Item = T> + Send,
    F: Fn(T) -> R + Sync,
    S: FnMut(R),
{
    if jobs <= 1 {
        for item in items {
            sink(f(item));
        }
        return;
    }
    let source = Mutex::new(Source {
        items,
        chunk: chunk.max(1),
        taken: 0,
    });
    let (source, f) = (&source, &f);
    pool.scope(jobs - 1, |scope| {
        // Made here so that a panic on this thread drops them before the scope
        // waits for the workers, which then see the end.
        let (done_tx, done_rx) = mpsc::channel::<(usize, thread::Result<Vec<R>>)>();
        // A permit per chunk taken and not yet sunk: taking one is sending, the
        // sink gives one back by receiving.
        let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(jobs * CHUNKS_PER_WORKER);
        for _ in 1..jobs {
            let (done_tx, permit_tx) = (done_tx.clone(), permit_tx.clone());
            scope.spawn(move || {
                while permit_tx.send(()).is_ok() {
                    let Some((seq, chunk)) = take(source) else {
                        break;
                    };
                    let results = panic::catch_unwind(AssertUnwindSafe(|| {
                        chunk.into_iter().map(f).collect()
                    }));
                    if done_tx.send((seq, results)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut pending: BTreeMap<usize, Vec<R>> = BTreeMap::new();
        let mut next = 0;
        let mut more = true;
        let mut sink_ready = |pending: &mut BTreeMap<usize, Vec<R>>, next: &mut usize| {
            while let Some(results) = pending.remove(next) {
                results.into_iter().for_each(&mut sink);
                *next += 1;
                let _ = permit_rx.try_recv();
            }
        };
        loop {
            while let Ok((seq, results)) = done_rx.try_recv() {
                pending.insert(seq, or_panic(results));
            }
            sink_ready(&mut pending, &mut next);
            if more && permit_tx.try_send(()).is_ok() {
                match take(source) {
                    Some((seq, chunk)) => {
                        pending.insert(seq, chunk.into_iter().map(f).collect());
                    }
                    None => more = false,
                }
                continue;
            }
            if !more && next == source.lock().map_or(next, |s| s.taken) {
                break;
            }
            // Every chunk taken and not sunk is a worker's: wait for one.
            match done_rx.recv() {
                Ok((seq, results)) => {
                    pending.insert(seq, or_panic(results));
                }
                Err(_) => break,
            }
        }
    });
}

/// A worker's results, or its panic, resumed on this thread.
fn or_panic<R>(results: thread::Result<R>) -> R {
    results.unwrap_or_else(|panic| panic::resume_unwind(panic))
}

/// The items not yet taken, and how many chunks were.
struct Source<I> {
    items: I,
    chunk: usize,
    taken: usize,
}

/// The next chunk and its place, or `None` at the end.
fn take<T, I: Iterator<Item = T>>(source: &Mutex<Source<I>>) -> Option<(usize, Vec<T>)> {
    let mut source = source.lock().ok()?;
    let chunk_len = source.chunk;
    let chunk: Vec<T> = source.items.by_ref().take(chunk_len).collect();
    if chunk.is_empty() {
        return None;
    }
    let seq = source.taken;
    source.taken += 1;
    Some((seq, chunk))
}

/// Runs `f` on this thread's evaluation stack: [`STACK_SIZE`] bytes,
/// as the library asks of threads that evaluate (nested values and scripts
/// recurse natively; a host's own threads, Python's or Node's, have 8 MiB or
/// less, and an overflow would end the process). Made once per thread; only the
/// pages used take memory. `f` must not call back into the host's interpreter
/// (Python and V8 check their native stack's bounds).
pub fn on_deep_stack<T>(f: impl FnOnce() -> T) -> T {
    thread_local! {
        static STACK: RefCell<Option<DefaultStack>> = const { RefCell::new(None) };
    }
    STACK.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = DefaultStack::new(STACK_SIZE).ok();
            }
            match slot.as_mut() {
                Some(stack) => corosensei::on_stack(stack, f),
                None => f(),
            }
        }
        // Already on it.
        Err(_) => f(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered_map<T, R, I, F, S>(items: I, jobs: usize, chunk: usize, f: F, sink: S)
    where
        T: Send,
        R: Send,
        I: Iterator<Item = T> + Send,
        F: Fn(T) -> R + Sync,
        S: FnMut(R),
    {
        super::ordered_map(&Pool::default(), items, jobs, chunk, f, sink);
    }

    #[test]
    fn keeps_input_order_with_many_workers() {
        let mut out = Vec::new();
        ordered_map(
            0..10_000u64,
            4,
            32,
            |x| {
                if x % 97 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                x * 2
            },
            |r| out.push(r),
        );
        assert_eq!(out, (0..10_000u64).map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn chunks_in_flight_stay_within_the_window() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (started, sunk) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let most = AtomicUsize::new(0);
        let (jobs, chunk) = (2, 8);
        ordered_map(
            0..20_000u64,
            jobs,
            chunk,
            |x| {
                let ahead =
                    started.fetch_add(1, Ordering::SeqCst) + 1 - sunk.load(Ordering::SeqCst);
                most.fetch_max(ahead, Ordering::SeqCst);
                if x % 1_000 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                x
            },
            |_| {
                sunk.fetch_add(1, Ordering::SeqCst);
            },
        );
        assert_eq!(sunk.into_inner(), 20_000);
        let most = most.into_inner();
        assert!(
            most <= jobs * CHUNKS_PER_WORKER * chunk,
            "{most} items in flight"
        );
        assert!(most > chunk, "the workers never overlapped");
    }

    #[test]
    fn a_panic_on_any_thread_reaches_the_caller() {
        for bad in [0u64, 1, 4_999, 9_999] {
            let caught = std::panic::catch_unwind(|| {
                ordered_map(
                    0..10_000u64,
                    2,
                    16,
                    |x| assert_ne!(x, bad, "bad item"),
                    |()| {},
                );
            });
            assert!(caught.is_err(), "the panic at item {bad} was lost");
        }
    }

    #[test]
    fn a_pool_keeps_its_threads_between_calls() {
        let pool = Pool::default();
        let threads = Mutex::new(std::collections::HashSet::new());
        for _ in 0..20 {
            super::ordered_map(
                &pool,
                0..2_000u32,
                3,
                16,
                |_| {
                    let me = thread::current();
                    if me.name() == Some("tribunal-worker") {
                        threads.lock().unwrap().insert(me.id());
                    } else {
                        // The calling thread takes chunks too: slowed down, it
                        // cannot take them all before a busy machine starts the
                        // workers (which this test once saw fail).
                        thread::sleep(std::time::Duration::from_micros(200));
                    }
                },
                |()| {},
            );
        }
        let threads = threads.into_inner().unwrap().len();
        assert!(
            (1..=2).contains(&threads),
            "{threads} worker threads for 3 jobs"
        );
    }

    #[test]
    fn calls_side_by_side_do_not_wait_for_each_other() {
        // Each call's worker waits until the other call's worker has started:
        // with one thread for both calls, neither would ever end.
        let pool = Pool::default();
        let started = [mpsc::channel::<()>(), mpsc::channel::<()>()];
        let [(a_tx, a_rx), (b_tx, b_rx)] = started;
        let (a_rx, b_rx) = (Mutex::new(a_rx), Mutex::new(b_rx));
        thread::scope(|s| {
            s.spawn(|| {
                pool.scope(1, |scope| {
                    scope.spawn(|| {
                        a_tx.send(()).unwrap();
                        b_rx.lock().unwrap().recv().unwrap();
                    });
                });
            });
            s.spawn(|| {
                pool.scope(1, |scope| {
                    scope.spawn(|| {
                        b_tx.send(()).unwrap();
                        a_rx.lock().unwrap().recv().unwrap();
                    });
                });
            });
        });
    }

    #[test]
    fn a_scope_returns_only_after_its_closures() {
        let pool = Pool::default();
        let mut done = [false; 8];
        pool.scope(4, |scope| {
            for slot in &mut done {
                scope.spawn(move || {
                    thread::sleep(std::time::Duration::from_millis(5));
                    *slot = true;
                });
            }
        });
        assert_eq!(done, [true; 8]);
    }

    #[test]
    fn single_job_runs_inline() {
        let mut out = Vec::new();
        ordered_map(["a", "b"].into_iter(), 1, 32, str::to_uppercase, |r| {
            out.push(r);
        });
        assert_eq!(out, ["A", "B"]);
    }

    #[test]
    fn empty_input_yields_nothing() {
        let mut count = 0;
        ordered_map(std::iter::empty::<u8>(), 3, 32, |x| x, |_| count += 1);
        assert_eq!(count, 0);
    }
}

#[cfg(test)]
mod refused_threads {
    use super::*;

    fn state(pool: &Pool) -> std::sync::MutexGuard<'_, PoolState> {
        pool.state.lock().unwrap()
    }

    /// A thread the system refuses: the work runs on the threads there are,
    /// and with none at all the call fails; either way what it asked for is
    /// given back, so later calls start the threads they need.
    #[test]
    fn a_refused_thread_costs_only_that_call_and_leaks_no_lease() {
        let pool = Pool::default();
        state(&pool).refuse = 1;
        let failed = panic::catch_unwind(AssertUnwindSafe(|| pool.scope(2, |_| ())));
        let message = failed.unwrap_err();
        assert_eq!(
            message.downcast_ref::<String>().map(String::as_str),
            Some("cannot start a worker thread: refused by the test")
        );
        let counts = |pool: &Pool| {
            let state = state(pool);
            (state.asked, state.threads)
        };
        assert_eq!(counts(&pool), (0, 0));

        // One thread starts, the second is refused: the work runs on one.
        let mut sum = 0;
        pool.scope(1, |_| ());
        state(&pool).refuse = 1;
        ordered_map(&pool, 0..1000u64, 3, 7, |x| x * 2, |x| sum += x);
        assert_eq!(sum, 999 * 1000);
        let (asked, threads) = counts(&pool);
        assert_eq!(asked, 0);
        assert!(threads >= 1);
    }
}

#[cfg(test)]
mod submitted_jobs {
    use super::*;
    use std::time::Duration;

    /// Submitted jobs run on the reserved threads in the order they came; a
    /// panic ends its job only; `waiting` counts those not yet started.
    #[test]
    fn submitted_jobs_run_in_order_and_a_panic_ends_only_its_job() {
        let pool = Pool::default();
        pool.reserve(1);
        let (done, finished) = mpsc::channel();
        let (go, gate) = mpsc::channel::<()>();
        pool.submit(move || gate.recv().unwrap());
        pool.submit(|| panic!("this job only"));
        for i in 0..3 {
            let done = done.clone();
            pool.submit(move || {
                let name = thread::current().name().map(str::to_owned);
                done.send((i, name)).unwrap();
            });
        }
        // The first job holds the only thread: the others wait.
        assert!(finished.recv_timeout(Duration::from_millis(100)).is_err());
        assert_eq!(pool.waiting(), 4);
        go.send(()).unwrap();
        for i in 0..3 {
            let (n, name) = finished.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(n, i);
            assert_eq!(name.as_deref(), Some("tribunal-worker"));
        }
        assert_eq!(pool.waiting(), 0);
        pool.release(1);
        assert_eq!(pool.state.lock().unwrap().asked, 0);
    }

    /// A long job waiting for its input has a thread of its own: with every
    /// reserved thread's worth of it waiting, submitted jobs still run, and
    /// the batch it runs (an ordered map) too; its thread is given back.
    #[test]
    fn long_jobs_never_hold_a_reserved_thread() {
        let pool = Arc::new(Pool::default());
        pool.reserve(1);
        let (release, wait) = mpsc::channel::<()>();
        let (batch_done, batch) = mpsc::channel();
        let inner = Arc::clone(&pool);
        pool.spawn(move || {
            wait.recv().unwrap();
            let mut sum = 0;
            ordered_map(&inner, 0..100u64, 2, 3, |x| x, |x| sum += x);
            batch_done.send(sum).unwrap();
        });
        let (done, finished) = mpsc::channel();
        pool.submit(move || done.send(()).unwrap());
        finished
            .recv_timeout(Duration::from_secs(10))
            .expect("a submitted job runs while the long job waits");
        release.send(()).unwrap();
        assert_eq!(batch.recv_timeout(Duration::from_secs(10)).unwrap(), 4950);
        // (Given back once it has ended.)
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while pool.state.lock().unwrap().asked != 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the long job's thread kept"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod forks {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Every share runs once, on the caller and the pool's threads, and the
    /// threads asked for are given back.
    #[test]
    fn every_share_runs_once_and_the_threads_are_given_back() {
        let pool = Pool::default();
        for shares in [0, 1, 2, 3, 16] {
            let runs: Vec<AtomicUsize> = (0..shares).map(|_| AtomicUsize::new(0)).collect();
            let names = Mutex::new(Vec::new());
            pool.fork(shares, &|share| {
                runs[share].fetch_add(1, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(2));
                let name = thread::current().name().map(str::to_owned);
                names.lock().unwrap().push(name);
            });
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
            let names = names.into_inner().unwrap();
            assert_eq!(names.len(), shares);
            if shares == 16 {
                // Sixteen shares of 2 ms: the pool's threads took some.
                assert!(names
                    .iter()
                    .any(|n| n.as_deref() == Some("tribunal-worker")));
            }
            assert_eq!(pool.state.lock().unwrap().asked, 0);
        }
        assert!(pool.state.lock().unwrap().threads >= 1);
    }

    /// With every pool thread busy and no thread to be had, the caller does
    /// the shares none has begun instead of waiting for a free thread; the
    /// helpers that start later find nothing left to do.
    #[test]
    fn the_caller_does_the_shares_busy_threads_have_not_begun() {
        let pool = Pool::default();
        let (go, gate) = mpsc::channel::<()>();
        let (started, running) = mpsc::channel();
        pool.spawn(move || {
            started.send(()).unwrap();
            gate.recv().unwrap();
        });
        running.recv().unwrap();
        pool.state.lock().unwrap().refuse = usize::MAX;
        let caller = thread::current().id();
        let on_caller = AtomicUsize::new(0);
        pool.fork(4, &|_| {
            if thread::current().id() == caller {
                on_caller.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert_eq!(on_caller.load(Ordering::Relaxed), 4);
        go.send(()).unwrap();
    }

    /// A share that panics: the others still run, and the panic reaches the
    /// caller once all have ended.
    #[test]
    fn a_panicking_share_reaches_the_caller_after_the_others() {
        let pool = Pool::default();
        let ran = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.fork(6, &|share| {
                thread::sleep(Duration::from_millis(1));
                assert!(share != 2, "share 2");
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }));
        let panic = outcome.unwrap_err();
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"share 2"));
        assert_eq!(ran.load(Ordering::Relaxed), 5);
        assert_eq!(pool.state.lock().unwrap().asked, 0);
    }
}
