//! A batch of records read by the front end itself, on the calling thread
//! (Python's objects, read while holding its interpreter's lock), judged on
//! the runtime's threads, the results handed back on the calling thread in
//! input order: [`Engine::judge_records`](super::Engine::judge_records).

use std::collections::BTreeMap;
use std::sync::mpsc::{self, TrySendError};
use std::sync::Mutex;

use crate::jsonl::{Evaluated, ReadRecord};
use crate::pack::Pack;
use crate::parallel::on_deep_stack;
use crate::runtime::Runtime;

/// Records per chunk handed to a thread (at most): read by the front end
/// while the chunks before them are judged.
const CHUNK_RECORDS: usize = 256;
/// Fewer records than this are judged on the calling thread: handing them to
/// other threads and the results back costs thread wake-ups (40–50 µs a call
/// on a 2-core VM), more than sharing so little work saves.
const INLINE_RECORDS: usize = 128;

/// The front end's side of [`Engine::judge_records`](super::Engine::judge_records):
/// where the records come from and where their results go. Every method is
/// called on the calling thread.
pub trait RecordFeed {
    /// Why the front end stops the batch (a Python exception).
    type Error;

    /// The next records, at most `limit` of them, each read as `eval` reads
    /// a line, and the `line` of the first (`None`: results without a
    /// `line`). None left: the end.
    fn read(&mut self, limit: usize) -> Result<(Option<u64>, Vec<ReadRecord>), Self::Error>;

    /// The results of records read, in input order.
    fn write(&mut self, results: Vec<Evaluated>) -> Result<(), Self::Error>;

    /// Called before each chunk is read (Python looks for Ctrl-C here).
    fn between(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Runs `work` (judging records on this thread, or waiting for the
    /// threads that do) as this thread must run work that is not the front
    /// end's: Python's releases its interpreter's lock meanwhile.
    fn outside<T: Send>(&mut self, work: impl FnOnce() -> T + Send) -> T {
        work()
    }
}

/// Why a caller-fed batch stopped before its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FedError<E> {
    /// The front end stopped it (its own error).
    #[error("{0}")]
    Feed(E),
    /// Chunks judged on other threads did not all come back (a thread that
    /// ended early): how many did, of how many sent.
    #[error("judging stopped early: {came_back} of {sent} chunks of records came back")]
    Lost {
        /// The chunks whose results came back.
        came_back: usize,
        /// The chunks sent.
        sent: usize,
    },
}

/// A chunk: its place among the batch's chunks, its records, and the `line`
/// of the first.
type Chunk = (usize, Vec<ReadRecord>, Option<u64>);

/// [`Engine::judge_records`](super::Engine::judge_records).
pub(super) fn judge<F: RecordFeed>(
    runtime: &Runtime,
    pack: &Pack,
    jobs: usize,
    records: Option<usize>,
    feed: &mut F,
) -> Result<(), FedError<F::Error>> {
    let jobs = runtime.jobs(jobs);
    let mut results = InOrder {
        feed,
        pending: BTreeMap::new(),
        next: 0,
    };
    // A few records: judged here.
    if records.is_some_and(|len| len < INLINE_RECORDS) {
        let (lines, chunk) = results.feed.read(usize::MAX).map_err(FedError::Feed)?;
        let done = results
            .feed
            .outside(|| on_deep_stack(|| crate::jsonl::evaluate_records(pack, &chunk, lines)));
        return results.collect(0, done).map_err(FedError::Feed);
    }
    // A short list (a Ray batch of 1,000 records) in chunks: with one job, a
    // few (a worker starts on the first while this thread reads the rest);
    // with more, small enough that every thread gets several and all finish
    // close together.
    let chunks = if jobs == 1 { 4 } else { 16 * jobs };
    let chunk_records = records.map_or(CHUNK_RECORDS, |len| {
        len.div_ceil(chunks).clamp(1, CHUNK_RECORDS)
    });
    let sent = on_workers(runtime, pack, jobs, chunk_records, &mut results)?;
    if results.next < sent {
        return Err(FedError::Lost {
            came_back: results.next,
            sent,
        });
    }
    Ok(())
}

/// The batch on `jobs` threads: this thread reads the records into chunks
/// and hands the results back in order, while threads of the runtime's pool
/// judge chunks for the whole call. With more than one job it is also one of
/// the `jobs` threads that judge: a chunk that finds the workers' queue full
/// is judged here ([`RecordFeed::outside`]), so that `jobs` busy threads
/// share `jobs` cores. Returns how many chunks it sent.
fn on_workers<F: RecordFeed>(
    runtime: &Runtime,
    pack: &Pack,
    jobs: usize,
    chunk_records: usize,
    results: &mut InOrder<'_, F>,
) -> Result<usize, FedError<F::Error>> {
    let judges_here = jobs > 1;
    let workers = if judges_here { jobs - 1 } else { 1 };
    // Room for a short list's chunks with one job (this thread does not
    // wait); with more, a chunk that finds the queue full is judged here.
    let room = if judges_here { 2 * workers } else { 4 };
    let mut sent = 0;
    let (work_tx, work_rx) = mpsc::sync_channel::<Chunk>(room);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<Evaluated>)>();
    let work_rx = Mutex::new(work_rx);
    let work_rx = &work_rx;
    // The scope ends once its workers have; by then every result is in
    // (they end before `done_rx` runs dry).
    runtime.scope(workers, |scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            scope.spawn(move || loop {
                let next = work_rx.lock().map(|work| work.recv());
                let Ok(Ok((seq, chunk, lines))) = next else {
                    break;
                };
                let done = crate::jsonl::evaluate_records(pack, &chunk, lines);
                if done_tx.send((seq, done)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let fed = (|| -> Result<(), F::Error> {
            loop {
                results.feed.between()?;
                let (lines, chunk) = results.feed.read(chunk_records)?;
                if chunk.is_empty() {
                    return Ok(());
                }
                // A full queue: this thread judges the chunk itself, or (one
                // job) waits for room outside the front end.
                let here = match work_tx.try_send((sent, chunk, lines)) {
                    Ok(()) => None,
                    Err(TrySendError::Full(work)) if judges_here => Some(work),
                    Err(TrySendError::Full(work)) => {
                        if results.feed.outside(|| work_tx.send(work).is_ok()) {
                            None
                        } else {
                            return Ok(());
                        }
                    }
                    Err(TrySendError::Disconnected(_)) => return Ok(()),
                };
                sent += 1;
                if let Some((seq, chunk, lines)) = here {
                    let done = results.feed.outside(|| {
                        on_deep_stack(|| crate::jsonl::evaluate_records(pack, &chunk, lines))
                    });
                    results.collect(seq, done)?;
                }
                while let Ok((seq, done)) = done_rx.try_recv() {
                    results.collect(seq, done)?;
                }
            }
        })();
        // No more work: the workers finish what they have and end.
        drop(work_tx);
        let rest: Vec<(usize, Vec<Evaluated>)> =
            results.feed.outside(move || done_rx.iter().collect());
        fed.map_err(FedError::Feed)?;
        for (seq, done) in rest {
            results.collect(seq, done).map_err(FedError::Feed)?;
        }
        Ok(sent)
    })
}

/// Results handed to the feed in input order as the chunks come back.
struct InOrder<'f, F: RecordFeed> {
    feed: &'f mut F,
    pending: BTreeMap<usize, Vec<Evaluated>>,
    /// The chunk whose results are handed over next.
    next: usize,
}

impl<F: RecordFeed> InOrder<'_, F> {
    fn collect(&mut self, seq: usize, done: Vec<Evaluated>) -> Result<(), F::Error> {
        self.pending.insert(seq, done);
        while let Some(done) = self.pending.remove(&self.next) {
            self.feed.write(done)?;
            self.next += 1;
        }
        Ok(())
    }
}
