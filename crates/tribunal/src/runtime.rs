//! The runtime packs run on: what evaluation shares across packs and calls,
//! owned by the program and passed to the packs it loads, never global.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::pack::{LoadOptions, Pack};
use crate::parallel::{self, Pool, MAX_JOBS};
use crate::yaml::LoadErrors;

/// What packs loaded through it share: the worker pool that evaluates batches
/// in parallel (in input order, with bounded memory) and the number of jobs a
/// call gets by default. Cheap to clone (clones share it); a [`Pack`] keeps the
/// runtime it was loaded with.
///
/// Load every pack of a program through one runtime, so that they share its
/// threads:
///
/// ```
/// # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
/// use tribunal::{Input, Runtime};
///
/// let runtime = Runtime::with_jobs(2);
/// let pack = runtime.load("rules/ksi-emission").expect("the shipped pack loads");
/// let mut statuses = Vec::new();
/// // 0: the runtime's jobs.
/// pack.evaluate_batch([Input::new("no JSON here")], 0, |report| statuses.push(report.status));
/// assert_eq!(statuses.len(), 1);
/// ```
///
/// One policy holds for every front end: a component that panics makes its
/// record `ERROR` (error kind `internal`), naming the component; the panic
/// goes no further.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    /// The jobs a call that asks for 0 gets.
    jobs: usize,
    pool: Pool,
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("jobs", &self.inner.jobs)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A runtime whose calls use every core unless they ask for fewer.
    pub fn new() -> Self {
        Self::with_jobs(0)
    }

    /// A runtime whose calls use `jobs` threads unless they ask otherwise (0:
    /// every core; at most 256).
    pub fn with_jobs(jobs: usize) -> Self {
        let jobs = if jobs == 0 { parallel::cores() } else { jobs };
        Self {
            inner: Arc::new(Inner {
                jobs: jobs.min(MAX_JOBS),
                pool: Pool::default(),
            }),
        }
    }

    /// The threads a call that asks for `requested` jobs gets: the runtime's
    /// jobs for 0, never more than 256. The one place job counts are resolved.
    pub fn jobs(&self, requested: usize) -> usize {
        match requested {
            0 => self.inner.jobs,
            jobs => jobs.min(MAX_JOBS),
        }
    }

    /// Loads the pack in `path` on this runtime (see [`Pack::load`]).
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Pack, LoadErrors> {
        self.load_with(path, &LoadOptions::default())
    }

    /// Loads a pack on this runtime with options (see [`Pack::load_with`]).
    pub fn load_with(
        &self,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Pack, LoadErrors> {
        Pack::load_inner(path.as_ref(), options, false, self)
    }

    /// Loads a pack on this runtime to show it, not to run it (see
    /// [`Pack::load_for_inspection`]).
    #[doc(hidden)]
    pub fn load_for_inspection(
        &self,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Pack, LoadErrors> {
        Pack::load_inner(path.as_ref(), options, true, self)
    }

    /// Runs `body` with a scope whose closures run on `workers` of the
    /// runtime's threads, and returns once all of them have ended: for a front
    /// end that feeds its workers itself (Python reads records under its lock).
    #[doc(hidden)]
    pub fn scope<'env, R>(
        &self,
        workers: usize,
        body: impl FnOnce(&parallel::Scope<'_, 'env>) -> R,
    ) -> R {
        self.inner.pool.scope(workers, body)
    }

    /// [`parallel::ordered_map`] on this runtime's threads, `jobs` resolved.
    pub(crate) fn ordered_map<T, R, I, F, S>(
        &self,
        items: I,
        jobs: usize,
        chunk: usize,
        f: F,
        sink: S,
    ) where
        T: Send,
        R: Send,
        I: Iterator<Item = T> + Send,
        F: Fn(T) -> R + Sync,
        S: FnMut(R),
    {
        parallel::ordered_map(&self.inner.pool, items, self.jobs(jobs), chunk, f, sink);
    }
}
