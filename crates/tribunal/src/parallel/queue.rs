//! The pool's queue of jobs, and its threads waiting for one: a job sent
//! when a thread waits goes straight to the thread that has waited least
//! (its caches the warmest), else to the back of the queue. A sender that
//! wakes a thread may first say on which cores it may run (a fork keeps its
//! helpers off the caller's core: see [`Jobs::send_off_core`]).
//!
//! The unsafe code here: reading and setting threads' CPU affinity (Linux).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// Work a pool thread runs.
pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Where the pool's jobs go; each thread holds it.
#[derive(Debug, Default)]
pub(super) struct Queue {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job (only while `jobs` is empty), the latest last.
    idle: Vec<Arc<Waiter>>,
    /// The pool is gone: threads end once `jobs` is empty.
    closed: bool,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("jobs", &self.jobs.len())
            .field("idle", &self.idle.len())
            .field("closed", &self.closed)
            .finish()
    }
}

/// A thread of the pool, as a sender sees it while it waits.
struct Waiter {
    job: Mutex<Slot>,
    given: Condvar,
    /// The thread, to keep it off a core, and the cores it may run on
    /// (Linux).
    #[cfg(target_os = "linux")]
    thread: libc::pthread_t,
    #[cfg(target_os = "linux")]
    cores: Option<libc::cpu_set_t>,
    /// A sender kept it off a core: it goes back to its `cores` after the job.
    kept_off: AtomicBool,
}

enum Slot {
    Empty,
    Job(Job),
    Closed,
}

/// A handle for sending jobs to a pool's threads.
#[derive(Debug, Clone)]
pub(super) struct Jobs(pub(super) Arc<Queue>);

impl Jobs {
    /// Runs `job` on a pool thread, after the jobs queued before it.
    pub(super) fn send(&self, job: Job) {
        self.send_off_core(job, None);
    }

    /// As [`send`](Self::send); a thread woken for it runs it off core
    /// `cpu` (where the caller is busy: the kernel would often put it there,
    /// to wait for the caller's turn to end while another core sits idle).
    pub(super) fn send_off_core(&self, job: Job, cpu: Option<usize>) {
        let mut inner = self.0.lock();
        if inner.closed {
            // No thread takes jobs (cannot happen while the pool lives): here.
            drop(inner);
            job();
            return;
        }
        let Some(waiter) = inner.idle.pop() else {
            inner.jobs.push_back(job);
            return;
        };
        drop(inner);
        if let Some(cpu) = cpu {
            waiter.keep_off(cpu);
        }
        waiter.give(Slot::Job(job));
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the threads once the jobs queued have run.
    pub(super) fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        for waiter in inner.idle.drain(..) {
            waiter.give(Slot::Closed);
        }
    }

    /// A pool thread: runs jobs until the pool is gone.
    pub(super) fn serve(&self) {
        let me = Arc::new(Waiter::current());
        loop {
            let mut inner = self.lock();
            let queued = inner.jobs.pop_front();
            let closed = inner.closed;
            if queued.is_none() && !closed {
                inner.idle.push(Arc::clone(&me));
            }
            drop(inner);
            let job = match queued {
                Some(job) => job,
                None if closed => return,
                None => match me.wait() {
                    Some(job) => job,
                    None => return,
                },
            };
            job();
            if me.kept_off.swap(false, Ordering::Relaxed) {
                me.back_on_its_cores();
            }
        }
    }
}

impl Waiter {
    /// The calling thread.
    fn current() -> Self {
        Self {
            job: Mutex::new(Slot::Empty),
            given: Condvar::new(),
            // SAFETY: pthread_self reads no memory of ours.
            #[cfg(target_os = "linux")]
            #[allow(unsafe_code)]
            thread: unsafe { libc::pthread_self() },
            // SAFETY: `set` is a plain bit set the call writes within its
            // size; 0 is the calling thread.
            #[cfg(target_os = "linux")]
            #[allow(unsafe_code)]
            cores: unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                let size = std::mem::size_of::<libc::cpu_set_t>();
                (libc::sched_getaffinity(0, size, &raw mut set) == 0).then_some(set)
            },
            kept_off: AtomicBool::new(false),
        }
    }

    /// Gives the (waiting) thread `slot` and wakes it.
    fn give(&self, slot: Slot) {
        *self.job.lock().unwrap_or_else(PoisonError::into_inner) = slot;
        // Woken after the slot is unlocked: woken while it was held, the
        // thread found it locked and slept again until the sender let go
        // (two more futex calls and a context switch for each job; a
        // server's check at 5,000 a second went through that every time).
        self.given.notify_one();
    }

    /// The next job given to this thread; `None` when the pool is gone.
    fn wait(&self) -> Option<Job> {
        let mut slot = self.job.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match std::mem::replace(&mut *slot, Slot::Empty) {
                Slot::Job(job) => return Some(job),
                Slot::Closed => return None,
                Slot::Empty => {
                    slot = self
                        .given
                        .wait(slot)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// Keeps the (waiting) thread off core `cpu`, on the others it may run on
    /// (nothing when `cpu` is the only one), until its next job has run.
    fn keep_off(&self, cpu: usize) {
        #[cfg(target_os = "linux")]
        // SAFETY: `set` is a plain bit set that the calls read within its
        // size; the thread waits in `wait`, alive.
        #[allow(unsafe_code)]
        unsafe {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            let Some(mut set) = self.cores else {
                return;
            };
            if cpu >= 8 * size || !libc::CPU_ISSET(cpu, &set) {
                return;
            }
            libc::CPU_CLR(cpu, &mut set);
            if libc::CPU_COUNT(&set) > 0
                && libc::pthread_setaffinity_np(self.thread, size, &raw const set) == 0
            {
                self.kept_off.store(true, Ordering::Relaxed);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = cpu;
    }

    /// Lets the calling thread (this one) run on its cores again, after a
    /// sender kept it off one.
    fn back_on_its_cores(&self) {
        #[cfg(target_os = "linux")]
        if let Some(cores) = &self.cores {
            // SAFETY: as in `keep_off`; 0 is the calling thread.
            #[allow(unsafe_code)]
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cores);
            }
        }
    }
}

/// The core the calling thread runs on (Linux).
pub(super) fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu reads no memory of ours.
        #[allow(unsafe_code)]
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}
