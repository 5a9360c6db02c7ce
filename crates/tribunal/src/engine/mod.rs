//! The engine: one request API over a set of packs. An [`Engine`] holds the
//! runtime, the packs it serves by name (reloaded when their files change),
//! the one executor whose threads judge, and the decision ids; a front end
//! hands it a [`Request`] (the bytes of a record, or of a transcript whose
//! proposed tool calls are to be decided) and gets a [`Decision`] back: the
//! report, the bytes of the answer as written, the decision id, the pack
//! revision that judged it. [`Engine::decide`] judges on the caller's thread,
//! [`Engine::submit`] on the executor's.
//!
//! ```
//! # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
//! use tribunal::{Engine, Request};
//!
//! let engine = Engine::builder()
//!     .source("rules/ksi-emission")
//!     .build()
//!     .expect("the shipped pack loads");
//! let record = br#"{"id": 7, "output": "{\"ksi\": 4}"}"#;
//! let decision = engine
//!     .decide(Request::check("ksi-emission", record.to_vec()))
//!     .expect("a record");
//! assert_eq!(decision.pack().name(), "ksi-emission");
//! let written = String::from_utf8(decision.bytes().to_vec()).unwrap();
//! assert!(written.starts_with(r#"{"id":7,"status":"#));
//! assert!(written.ends_with(&format!(r#""decision_id":"{}"}}"#, decision.id())));
//! ```

mod packs;
mod records;
mod request;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::jsonl;
use crate::pack::{LoadOptions, Pack};
use crate::pipeline::Input;
use crate::runtime::Runtime;
use crate::stream::Stream;

pub use crate::jsonl::Batch;
pub use packs::{PackEvent, PackEventKind, ReloadFailure, Served};
pub use records::{FedError, RecordFeed};
pub use request::{Ask, Decision, Judged, Request, RequestError, RequestErrorKind};

use packs::{Observer, Packs};
use request::DecisionIds;

/// A pack an engine serves, held by a streaming session: it derefs to the
/// pack, and keeps the revision it started with however the packs reload.
#[derive(Debug, Clone)]
pub struct ServedPack(Arc<Served>);

impl std::ops::Deref for ServedPack {
    type Target = Pack;

    fn deref(&self) -> &Pack {
        self.0.pack()
    }
}

impl ServedPack {
    /// The pack as served.
    pub fn served(&self) -> &Arc<Served> {
        &self.0
    }
}

/// Packs served by name on one runtime, judged on one executor: what a
/// front end (the server, a program) asks for decisions. Cheap to clone
/// (clones share it).
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    packs: Arc<Packs>,
    /// The runtime's threads kept for submitted requests (from the first).
    threads: usize,
    reserved: std::sync::Once,
    ids: DecisionIds,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.reserved.is_completed() {
            self.runtime.pool().release(self.threads);
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("runtime", &self.inner.runtime)
            .field("packs", &self.inner.packs.names())
            .field("threads", &self.inner.threads)
            .finish()
    }
}

/// Why an [`Engine`] did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// Packs that did not load, could not be found, or share a name: one
    /// message each (a load error names file, line and column).
    #[error("{}", .0.join("\n"))]
    Packs(Vec<String>),
    /// A bundle that was not installed: why.
    #[error("{0}")]
    Bundle(String),
}

/// Settings of an [`Engine`] (see [`Engine::builder`]).
pub struct EngineBuilder {
    runtime: Option<Runtime>,
    sources: Vec<PathBuf>,
    given: Vec<Pack>,
    load: LoadOptions,
    follow_links: bool,
    settle: Duration,
    threads: usize,
    observer: Option<Observer>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("sources", &self.sources)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl EngineBuilder {
    /// The runtime the packs load on (default: a new one).
    #[must_use]
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// A pack folder, or a folder holding packs, to serve (each pack by its
    /// name).
    #[must_use]
    pub fn source(mut self, source: impl Into<PathBuf>) -> Self {
        self.sources.push(source.into());
        self
    }

    /// A pack loaded by the front end itself (its own options, a bundle):
    /// served by its name, never reloaded. The engine runs on its runtime
    /// unless [`runtime`](Self::runtime) says otherwise.
    #[must_use]
    pub fn pack(mut self, pack: Pack) -> Self {
        if self.runtime.is_none() {
            self.runtime = Some(pack.runtime.clone());
        }
        self.given.push(pack);
        self
    }

    /// How the packs load (overrides, plugin consent).
    #[must_use]
    pub fn load_options(mut self, load: LoadOptions) -> Self {
        self.load = load;
        self
    }

    /// Serve packs that a folder of packs links to outside itself (default:
    /// such a pack is an error).
    #[must_use]
    pub fn follow_links(mut self, follow: bool) -> Self {
        self.follow_links = follow;
        self
    }

    /// How long a pack's changed files must stay as they are before the
    /// change is loaded (and a removed pack's folder stay gone before it is
    /// dropped). Default: none, the next look.
    #[must_use]
    pub fn settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// The runtime's threads kept for submitted requests, on top of what
    /// its batches use (0, the default: one per core).
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Who is told what a reload did (a pack loaded, failed, removed).
    #[must_use]
    pub fn on_pack_event(mut self, observer: impl Fn(&PackEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Loads every pack. The runtime's threads for submitted requests are
    /// kept from the first request submitted (a front end that judges on its
    /// own threads keeps none).
    pub fn build(self) -> Result<Engine, EngineError> {
        let runtime = self.runtime.unwrap_or_default();
        let observer = self
            .observer
            .unwrap_or_else(|| Arc::new(|_: &PackEvent| {}));
        let packs = Packs::load(
            self.sources,
            self.given,
            runtime.clone(),
            self.load,
            self.follow_links,
            self.settle,
            observer,
        )
        .map_err(EngineError::Packs)?;
        let threads = if self.threads == 0 {
            crate::parallel::cores()
        } else {
            self.threads
        };
        Ok(Engine {
            inner: Arc::new(Inner {
                runtime,
                packs: Arc::new(packs),
                threads: threads.min(crate::parallel::MAX_JOBS),
                reserved: std::sync::Once::new(),
                ids: DecisionIds::new(),
            }),
        })
    }
}

impl Engine {
    /// An engine serving `pack` alone (loaded by the front end, on its
    /// runtime), and the pack as served: a library binding's `Pack`.
    pub fn with_pack(pack: Pack) -> (Self, Arc<Served>) {
        let name = pack.name().to_owned();
        let engine = Self::builder()
            .pack(pack)
            .build()
            .expect("one pack given, and no source, is served as it is");
        let served = engine
            .find(&name)
            .expect("an engine serves the pack it was built with");
        (engine, served)
    }

    /// Settings for an engine: its sources, runtime, threads.
    pub fn builder() -> EngineBuilder {
        EngineBuilder {
            runtime: None,
            sources: Vec::new(),
            given: Vec::new(),
            load: LoadOptions::default(),
            follow_links: false,
            settle: Duration::ZERO,
            threads: 0,
            observer: None,
        }
    }

    /// The runtime its packs are loaded on.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// The pack named `name`, as served now.
    pub fn pack(&self, name: &str) -> Option<Arc<Served>> {
        self.inner.packs.get(name)
    }

    /// The pack named `name`, as served now, or the error that says it is
    /// not served (with the nearest name served, and the names).
    pub fn find(&self, name: &str) -> Result<Arc<Served>, RequestError> {
        self.pack(name)
            .ok_or_else(|| request::unknown_pack(self, name))
    }

    /// The names of the packs served, in order.
    pub fn names(&self) -> Vec<String> {
        self.inner.packs.names()
    }

    /// The packs served now, by name.
    pub fn packs(&self) -> Vec<Arc<Served>> {
        self.inner.packs.current()
    }

    /// The failed reload that is the last word on `served`'s folder, if
    /// any (its revision still serves).
    pub fn reload_failure(&self, served: &Served) -> Option<ReloadFailure> {
        self.inner.packs.failure(served.dir())
    }

    /// Installs the bundle `bytes` in place of every pack served: checked
    /// against its manifest, verified against the trusted keys of the load
    /// options, its packs loaded aside and swapped in at once. A bundle that
    /// fails changes nothing (what served before still serves), and is kept
    /// as [`bundle_failure`](Self::bundle_failure). Returns its revision.
    pub fn install_bundle(&self, bytes: &[u8]) -> Result<String, EngineError> {
        self.inner.packs.install(bytes).map_err(EngineError::Bundle)
    }

    /// The revision of the bundle served, if the packs come from one.
    pub fn bundle_revision(&self) -> Option<String> {
        self.inner.packs.bundle_revision()
    }

    /// Why the last bundle was not installed, until one is.
    pub fn bundle_failure(&self) -> Option<ReloadFailure> {
        self.inner.packs.bundle_failure()
    }

    /// Looks at every pack's files once, and loads again what changed (and
    /// stayed so for the settle time). Returns how many packs were swapped in.
    pub fn reload_changed(&self) -> usize {
        self.inner.packs.reload_changed()
    }

    /// Looks for changes every `every` on a thread of its own, until `stop`
    /// is set.
    pub fn watch(&self, every: Duration, stop: Arc<AtomicBool>) {
        self.inner.packs.watch(every, stop);
    }

    /// The runtime's threads kept for submitted requests.
    pub fn threads(&self) -> usize {
        self.inner.threads
    }

    /// Requests submitted and not yet started.
    pub fn waiting(&self) -> usize {
        self.inner.runtime.pool().waiting()
    }

    /// A new decision id: 32 hex digits, unique within the process and
    /// across restarts.
    pub fn next_decision_id(&self) -> String {
        self.inner.ids.next()
    }

    /// Judges `request` on this thread: its pack looked up, its bytes read
    /// as a record, judged by its deadline, the answer written with a new
    /// decision id.
    pub fn decide(&self, request: Request) -> Result<Decision, RequestError> {
        request::decide(self, request)
    }

    /// [`decide`](Self::decide) on one of the runtime's threads, after the
    /// work queued before it; `done` gets the decision there. A request
    /// still waiting when its deadline passes is not judged
    /// (`RequestErrorKind::Expired`).
    pub fn submit(
        &self,
        request: Request,
        done: impl FnOnce(Result<Decision, RequestError>) + Send + 'static,
    ) {
        let engine = self.clone();
        let inner = &self.inner;
        inner
            .reserved
            .call_once(|| inner.runtime.pool().reserve(inner.threads));
        inner.runtime.pool().submit(move || {
            if let Some(expired) = request.expired() {
                done(Err(expired));
                return;
            }
            done(engine.decide(request));
        });
    }

    /// A streaming session on the pack `served` (found by
    /// [`find`](Self::find)) for `record`, whose output arrives in chunks
    /// ([`Stream::push`]); [`finish`](Self::finish) ends it.
    pub fn stream(&self, served: &Arc<Served>, record: Input) -> Stream<ServedPack> {
        Stream::new(ServedPack(Arc::clone(served)), record)
    }

    /// The end of a streaming session: the whole text judged (by `deadline`),
    /// the answer written as a check's, ending with the bundle's revision and
    /// `decision_id` (given when the session began, its answer's header;
    /// `None`: an anonymous decision, the record alone).
    pub fn finish(
        &self,
        stream: Stream<ServedPack>,
        deadline: Option<Instant>,
        decision_id: Option<String>,
    ) -> Decision {
        let served = Arc::clone(&stream.pack_ref().0);
        let mut bytes = Vec::with_capacity(256 + stream.text().len());
        let tail = decision_id
            .as_deref()
            .map(|id| request::tail(&served, id))
            .unwrap_or_default();
        let report = stream.finish_writing(deadline, &mut bytes, &tail);
        request::decision(decision_id.unwrap_or_default(), served, report, bytes)
    }

    /// A batch: the JSONL records of `input` judged by the pack `served`, one
    /// result record each to `out`, in input order, on the runtime's threads
    /// (`batch.options.jobs`), with what `batch` adds (see [`Batch`] and
    /// [`jsonl::run_into`]).
    pub fn run<R, W>(
        &self,
        served: &Served,
        input: R,
        out: &mut W,
        batch: Batch<'_>,
    ) -> Result<jsonl::Summary, jsonl::RunError>
    where
        R: std::io::BufRead + Send,
        W: jsonl::ResultSink + ?Sized,
    {
        jsonl::run_into(served.pack(), input, out, batch)
    }

    /// A batch of records the front end reads itself, on this thread (see
    /// [`RecordFeed`]: Python's objects, read holding its interpreter's
    /// lock), judged by the pack `served` on `jobs` threads (0: every core,
    /// or the runtime's default), each result handed back on this thread, in
    /// input order, as `eval` writes it. `records`: how many there are, when
    /// known (a few are judged on this thread; a short list is cut into
    /// chunks small enough for every thread to get several).
    ///
    /// ```
    /// # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
    /// use tribunal::jsonl::{self, Evaluated, ReadRecord};
    /// use tribunal::{Engine, RecordFeed, Status};
    ///
    /// /// Records from lines of JSON; results kept.
    /// struct Lines {
    ///     lines: Vec<&'static str>,
    ///     read: usize,
    ///     results: Vec<Evaluated>,
    /// }
    ///
    /// impl RecordFeed for Lines {
    ///     type Error = std::convert::Infallible;
    ///
    ///     fn read(&mut self, limit: usize) -> Result<(Option<u64>, Vec<ReadRecord>), Self::Error> {
    ///         let first = self.read as u64 + 1;
    ///         let chunk: Vec<ReadRecord> = (first..)
    ///             .zip(self.lines.iter().skip(self.read).take(limit))
    ///             .map(|(line, text)| jsonl::read_line(text, line))
    ///             .collect();
    ///         self.read += chunk.len();
    ///         Ok((Some(first), chunk))
    ///     }
    ///
    ///     fn write(&mut self, results: Vec<Evaluated>) -> Result<(), Self::Error> {
    ///         self.results.extend(results);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let engine = Engine::builder().source("rules/ksi-emission").build()?;
    /// let served = engine.find("ksi-emission")?;
    /// let mut feed = Lines {
    ///     lines: vec![r#"{"id": 1, "output": "{\"event\": \"agent:status\", \"data\": {}}"}"#, "not json"],
    ///     read: 0,
    ///     results: Vec::new(),
    /// };
    /// engine.judge_records(&served, 0, Some(2), &mut feed)?;
    /// assert_eq!(feed.results[0].status, Status::Pass);
    /// assert!(feed.results[0].record.starts_with(r#"{"id":1,"line":1,"#));
    /// assert_eq!(feed.results[1].status, Status::Error);
    /// assert_eq!(
    ///     feed.results[1].error.as_deref(),
    ///     Some("line 2: not valid JSON: expected ident at line 1 column 2")
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn judge_records<F: RecordFeed>(
        &self,
        served: &Served,
        jobs: usize,
        records: Option<usize>,
        feed: &mut F,
    ) -> Result<(), FedError<F::Error>> {
        records::judge(&self.inner.runtime, served.pack(), jobs, records, feed)
    }

    /// Runs `job` on the runtime's threads with a thread of its own for as
    /// long as it runs: for work that waits for its input as it arrives (a
    /// server's batch request reading its body), which so never holds a
    /// thread a submitted request needs.
    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        self.inner.runtime.pool().spawn(job);
    }
}
