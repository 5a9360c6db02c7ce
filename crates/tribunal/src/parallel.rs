//! Ordered parallel map: evaluate items on worker threads, hand results to a
//! sink in input order, with a bounded number of items in flight (so memory
//! stays flat whatever the input size).

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread;

/// Chunks in flight per worker (read ahead, being evaluated, or waiting to be written).
const CHUNKS_PER_WORKER: usize = 4;

/// The native stack of a thread that evaluates records (the workers here, and
/// the CLI's main thread, which is one of them). Rhai recurses natively through nested values (size checks,
/// clone, drop) and nested script calls: within the default script limits that
/// goes deeper than the 2 MiB of a default thread (a stack overflow aborts the
/// whole process). A program that calls [`Pack::evaluate`](crate::pack::Pack::evaluate)
/// on threads of its own should give them this much; only the pages a thread
/// touches take memory.
pub const STACK_SIZE: usize = 256 << 20;

/// Number of worker threads to use for `jobs` (0 = all cores).
pub fn effective_jobs(jobs: usize) -> usize {
    if jobs == 0 {
        thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    } else {
        jobs
    }
}

/// Applies `f` to every item on `jobs` threads (0 = all cores) and calls `sink`
/// with the results in input order, on the calling thread, handing items to
/// workers `chunk` at a time (1 when the items are already batches). With one
/// job no thread is started.
///
/// The calling thread is one of the `jobs`: between its own chunks it hands
/// the finished ones to `sink`, and whichever thread is free takes the next
/// chunk from `items` (read under a lock, where it was taken). No thread only
/// reads or only writes, so `jobs` threads keep `jobs` cores busy without
/// being preempted by each other, and a chunk is read on the core that
/// evaluates it. At most `jobs * CHUNKS_PER_WORKER` chunks are taken and not
/// yet handed to `sink`, so memory stays flat whatever the input size. A panic
/// in `f` on a worker reaches the caller.
pub fn ordered_map<T, R, I, F, S>(items: I, jobs: usize, chunk: usize, f: F, mut sink: S)
where
    T: Send,
    R: Send,
    I: Iterator<Item = T> + Send,
    F: Fn(T) -> R + Sync,
    S: FnMut(R),
{
    let jobs = effective_jobs(jobs);
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
    thread::scope(|scope| {
        // Made here so that a panic on this thread drops them before the scope
        // waits for the workers, which then see the end.
        let (done_tx, done_rx) = mpsc::channel::<(usize, thread::Result<Vec<R>>)>();
        // A permit per chunk taken and not yet sunk: taking one is sending, the
        // sink gives one back by receiving.
        let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(jobs * CHUNKS_PER_WORKER);
        for _ in 1..jobs {
            let (done_tx, permit_tx) = (done_tx.clone(), permit_tx.clone());
            thread::Builder::new()
                .stack_size(STACK_SIZE)
                .spawn_scoped(scope, move || {
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
                })
                .expect("cannot start a worker thread");
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

#[cfg(test)]
mod tests {
    use super::*;

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
