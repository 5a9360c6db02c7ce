//! Timing shared by the benchmarks that measure on their own (no harness).

use std::time::{Duration, Instant};

/// The best of `rounds` timings of `work` run `n` times, per run.
pub fn time(rounds: usize, n: usize, mut work: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..n {
                work();
            }
            start.elapsed() / u32::try_from(n).unwrap_or(u32::MAX)
        })
        .min()
        .unwrap_or_default()
}
