//! Ordered parallel map: evaluate items on worker threads, hand results to a
//! sink in input order, with a bounded number of items in flight (so memory
//! stays flat whatever the input size).

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;
use std::thread;

/// Chunks in flight per worker (read ahead, being evaluated, or waiting to be written).
const CHUNKS_PER_WORKER: usize = 4;

/// The native stack of a thread that evaluates records (the workers here and the
/// CLI's main thread). Rhai recurses natively through nested values (size checks,
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
    let window = jobs * CHUNKS_PER_WORKER;
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, Vec<T>)>(window);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<R>)>();
    // A permit per chunk in flight: the reader takes one, the sink returns it.
    let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(window);
    let work_rx = Mutex::new(work_rx);
    let f = &f;
    thread::scope(|scope| {
        scope.spawn(move || {
            let mut items = items;
            let mut seq = 0;
            loop {
                let batch: Vec<T> = items.by_ref().take(chunk.max(1)).collect();
                if batch.is_empty() {
                    break;
                }
                if permit_tx.send(()).is_err() || work_tx.send((seq, batch)).is_err() {
                    break;
                }
                seq += 1;
            }
        });
        for _ in 0..jobs {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            thread::Builder::new()
                .stack_size(STACK_SIZE)
                .spawn_scoped(scope, move || loop {
                    let next = work_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((seq, chunk))) = next else { break };
                    let results: Vec<R> = chunk.into_iter().map(f).collect();
                    if done_tx.send((seq, results)).is_err() {
                        break;
                    }
                })
                .expect("cannot start a worker thread");
        }
        drop(done_tx);
        drain_in_order(&done_rx, &permit_rx, &mut sink);
    });
}

fn drain_in_order<R, S: FnMut(R)>(
    done: &Receiver<(usize, Vec<R>)>,
    permits: &Receiver<()>,
    sink: &mut S,
) {
    let mut pending: BTreeMap<usize, Vec<R>> = BTreeMap::new();
    let mut next = 0;
    for (seq, results) in done {
        pending.insert(seq, results);
        while let Some(results) = pending.remove(&next) {
            for result in results {
                sink(result);
            }
            next += 1;
            let _ = permits.recv();
        }
    }
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
