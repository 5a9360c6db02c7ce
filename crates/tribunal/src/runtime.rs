//! The runtime packs run on: what evaluation shares across packs and calls,
//! owned by the program and passed to the packs it loads, never global. (Its
//! `load` methods are the pack module's, which builds on this one.)

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::deadline::Interrupt;
use crate::overrides::{Override, OverrideError};
use crate::parallel::{self, Pool, MAX_JOBS};
use crate::script::RegexCache;
use crate::semantic::{CacheReport, Models};

/// What packs loaded through it share: the worker pool that evaluates batches
/// in parallel (in input order, with bounded memory), the number of jobs a
/// call gets by default, the sentence-embedding models with their caches, and
/// the plugin libraries opened. Cheap to clone (clones share it); a `Pack`
/// keeps the runtime it was loaded with.
///
/// Load every pack of a program through one runtime, so that they share its
/// threads:
///
/// ```
/// # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
/// use tribunal::{Input, Runtime};
///
/// let runtime = Runtime::builder().jobs(2).build();
/// let pack = runtime.load("rules/ksi-emission").expect("the shipped pack loads");
/// let mut statuses = Vec::new();
/// // 0: the runtime's jobs.
/// pack.evaluate_batch([Input::new("no JSON here")], 0, |report| statuses.push(report.status()));
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
    models: Models,
    plugins: crate::plugin::Libraries,
    /// The limits set for every pack (`limits.*` overrides).
    limits: Vec<Override>,
    /// The patterns scripts' regex helpers compiled, for every pack's scripts.
    regexes: Arc<RegexCache>,
    /// Ends every evaluation on the runtime once set ([`Runtime::interrupt`]).
    interrupt: Interrupt,
}

/// Settings of a [`Runtime`] (see [`Runtime::builder`]).
#[derive(Debug, Clone, Default)]
pub struct RuntimeBuilder {
    jobs: usize,
    embedding_cache: Option<PathBuf>,
    limits: Vec<Override>,
}

impl RuntimeBuilder {
    /// The threads a call uses unless it asks otherwise (0, the default: every
    /// core; at most 256).
    #[must_use]
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// Keeps sentence embeddings on disk under `dir`, shared by every run (see
    /// [`default_embedding_cache_dir`](crate::semantic::default_cache_root)), or
    /// only in memory (`None`, the default).
    #[must_use]
    pub fn embedding_cache(mut self, dir: Option<PathBuf>) -> Self {
        self.embedding_cache = dir;
        self
    }

    /// Sets a limit (`limits.KEY`, as `--set limits.KEY=VALUE` does) for every
    /// pack loaded on the runtime: the host's word, which may lift a limit
    /// past its default where a pack may only tighten it. A pack's own
    /// `--set limits.*` (`LoadOptions`) comes after, and wins.
    pub fn limit(mut self, limit: Override) -> Result<Self, OverrideError> {
        if limit.component != "limits" {
            return Err(OverrideError {
                spec: limit.raw.clone(),
                reason: format!(
                    "a runtime sets only `limits.*` for every pack, not `{}.{}`: give it to the pack's LoadOptions",
                    limit.component, limit.key
                ),
            });
        }
        self.limits.push(limit);
        Ok(self)
    }

    /// The runtime.
    pub fn build(self) -> Runtime {
        let pool = Pool::default();
        let jobs = if self.jobs == 0 {
            parallel::cores()
        } else {
            self.jobs
        };
        Runtime {
            inner: Arc::new(Inner {
                jobs: jobs.min(MAX_JOBS),
                models: Models::new(self.embedding_cache, Arc::new(pool.clone())),
                pool,
                limits: self.limits,
                plugins: crate::plugin::Libraries::default(),
                regexes: Arc::default(),
                interrupt: Interrupt::default(),
            }),
        }
    }
}

/// The embedding models' forward passes share their work out on the
/// runtime's threads (see [`Pool::fork`]).
impl crate::semantic::Fork for Pool {
    fn fork(&self, shares: usize, task: &(dyn Fn(usize) + Sync)) {
        Pool::fork(self, shares, task);
    }
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
    /// A runtime whose calls use every core unless they ask for fewer, and
    /// whose embeddings are kept in memory.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Settings for a runtime: its jobs, its embedding cache.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// What the runtime's embedding caches did so far, `None` when no model
    /// was used.
    pub fn embedding_cache_report(&self) -> Option<CacheReport> {
        self.inner.models.cache_report()
    }

    pub(crate) fn models(&self) -> &Models {
        &self.inner.models
    }

    /// The limits set for every pack loaded on the runtime.
    pub fn limits(&self) -> &[Override] {
        &self.inner.limits
    }

    /// The patterns the scripts of every pack on this runtime compiled (their
    /// regex helpers'): a cache the runtime owns, not the process.
    pub(crate) fn regexes(&self) -> &Arc<RegexCache> {
        &self.inner.regexes
    }

    /// The flag that ends the evaluations of every pack on this runtime:
    /// once [`Interrupt::interrupt`] is called on it (or on a clone), every
    /// step running stops at its next check of its deadline and is a
    /// `timeout` error, and so is every step after it; it cannot be undone.
    /// For a front end about to exit on a signal, after the records already
    /// judged are written. Another runtime's evaluations go on.
    pub fn interrupt(&self) -> &Interrupt {
        &self.inner.interrupt
    }

    pub(crate) fn plugins(&self) -> &crate::plugin::Libraries {
        &self.inner.plugins
    }

    /// The threads a call that asks for `requested` jobs gets: the runtime's
    /// jobs for 0, never more than 256. The one place job counts are resolved.
    pub fn jobs(&self, requested: usize) -> usize {
        match requested {
            0 => self.inner.jobs,
            jobs => jobs.min(MAX_JOBS),
        }
    }

    /// Runs `body` with a scope whose closures run on `workers` of the
    /// runtime's threads, and returns once all of them have ended: for a batch
    /// whose caller feeds its workers itself (`Engine::judge_records`).
    pub(crate) fn scope<'env, R>(
        &self,
        workers: usize,
        body: impl FnOnce(&parallel::Scope<'_, 'env>) -> R,
    ) -> R {
        self.inner.pool.scope(workers, body)
    }

    /// The runtime's threads, for an engine's submitted and long jobs.
    pub(crate) fn pool(&self) -> &Pool {
        &self.inner.pool
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
