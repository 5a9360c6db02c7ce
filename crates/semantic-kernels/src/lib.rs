//! The element-wise and attention kernels of Tribunal's BERT forward pass
//! (`crates/tribunal-semantic/src/bert/mod.rs`), and its matrix products on CPUs with AVX-512
//! ([`panels`]; elsewhere they are the `gemm` crate's).
//!
//! A crate of its own so that debug builds (the test suite) run it optimised,
//! like gemm. Every loop is free of branches and calls so that it vectorises,
//! and the two heavy kernels, [`attend`] and the activations, also have AVX2
//! builds, chosen at run time: vectors twice as wide and the same results, since
//! Rust never fuses a multiply and an add by itself (a test checks both builds
//! agree bit for bit).
//!
//! The unsafe code here: calling those AVX2 builds once the CPU is known to
//! have AVX2.
#![allow(unsafe_code)]
// The kernels' helpers must be inlined into each build (the AVX2 one included)
// to vectorise there.
#![allow(clippy::inline_always)]

use std::sync::atomic::{AtomicBool, Ordering};

pub mod panels;

/// Where the forward pass runs work on several threads: the caller's
/// executor (the engine hands its runtime's worker pool), so the kernels start
/// no threads of their own.
pub trait Fork: Send + Sync + std::fmt::Debug {
    /// Runs `task(0)` to `task(shares - 1)`, each once, and returns when all
    /// have ended: on the calling thread and whichever threads of the executor
    /// are free. A share nobody else has started when the caller is done with
    /// its own is the caller's too, so a busy executor never makes the caller
    /// wait for a share not begun. A panic in a share reaches the caller once
    /// every share has ended.
    fn fork(&self, shares: usize, task: &(dyn Fn(usize) + Sync));
}

/// The [`Fork`] that runs every share on the calling thread, in order.
#[derive(Debug, Clone, Copy, Default)]
pub struct OnCaller;

impl Fork for OnCaller {
    fn fork(&self, shares: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..shares).for_each(task);
    }
}

/// A [`Fork`] for tests: a thread started for each share but the caller's,
/// every thread taking the next share not yet taken.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadPerShare;

#[cfg(any(test, feature = "testing"))]
impl Fork for ThreadPerShare {
    fn fork(&self, shares: usize, task: &(dyn Fn(usize) + Sync)) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let take = || loop {
            let share = next.fetch_add(1, Ordering::Relaxed);
            if share >= shares {
                return;
            }
            task(share);
        };
        std::thread::scope(|scope| {
            for _ in 1..shares {
                scope.spawn(take);
            }
            take();
        });
    }
}

/// Whether the AVX2 builds may run.
static WIDE: AtomicBool = AtomicBool::new(true);

/// Lets the kernels use their AVX2 builds, or not (for tests comparing the two).
pub fn set_wide(on: bool) {
    WIDE.store(on, Ordering::Relaxed);
}

fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX2.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
            && WIDE.load(Ordering::Relaxed)
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Defines `pub fn $name(args)`, which runs `$body` built for AVX2 when the CPU
/// has it and for the baseline CPU otherwise.
macro_rules! kernel {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn any($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            fn avx2($($arg: $ty),*) {
                any($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if wide() {
                // SAFETY: the CPU has AVX2 (`wide`).
                return unsafe { avx2($($arg),*) };
            }
            any($($arg),*)
        }
    };
}

kernel! {
    /// BERT's `gelu`, the exact, erf-based GELU, in place.
    fn gelu_erf(values: &mut [f32]) {
        for v in values {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

kernel! {
    /// `gelu_new` / `gelu_pytorch_tanh`, the tanh approximation, in place.
    fn gelu_tanh(values: &mut [f32]) {
        // sqrt(2 / pi)
        const C: f32 = 0.797_884_6;
        for v in values {
            let x = *v;
            *v = 0.5 * x * (1.0 + tanh(C * (x + 0.044_715 * x * x * x)));
        }
    }
}

/// `ReLU` in place.
pub fn relu(values: &mut [f32]) {
    for v in values {
        *v = v.max(0.0);
    }
}

/// Layer normalisation of each row of `x` (rows as long as `weight`).
pub fn layer_norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let size = weight.len();
    for row in x.chunks_exact_mut(size) {
        let mean = sum(row) / size as f32;
        for v in row.iter_mut() {
            *v -= mean;
        }
        let var = sum_by(row, |v| v * v);
        let scale = 1.0 / (var / size as f32 + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(weight).zip(bias) {
            *v = *v * scale * w + b;
        }
    }
}

/// `into += from`, element by element.
pub fn add_into(into: &mut [f32], from: &[f32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// Appends `a + b + c` (added in that order), element by element.
pub fn push_sum3(out: &mut Vec<f32>, a: &[f32], b: &[f32], c: &[f32]) {
    out.extend(a.iter().zip(b).zip(c).map(|((a, b), c)| a + b + c));
}

/// The mean of the rows of `rows` (each `width` long; at least one row).
pub fn mean_rows(rows: &[f32], width: usize) -> Vec<f32> {
    let mut mean = vec![0.0f32; width];
    for row in rows.chunks_exact(width) {
        add_into(&mut mean, row);
    }
    let count = (rows.len() / width) as f32;
    for m in &mut mean {
        *m /= count;
    }
    mean
}

/// The sum of `values`, in eight lanes (vectorised).
#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    sum_by(values, |v| v)
}

/// The sum of `f` over `values`, in eight lanes (vectorised): the lanes take
/// the whole groups of eight, the rest is added in order, then the lanes.
#[inline(always)]
fn sum_by(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane += f(v);
        }
    }
    chunks.remainder().iter().map(|&v| f(v)).sum::<f32>() + lanes.iter().sum::<f32>()
}

/// Softmax of a row in place (shifted by its maximum).
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let total = sum(row);
    for v in row.iter_mut() {
        *v /= total;
    }
}

/// Working memory of [`attend`]: every head's keys (transposed) and values, and
/// one query's scores.
#[derive(Debug, Default)]
pub struct Attention {
    keys: Vec<f32>,
    values: Vec<f32>,
    scores: Vec<f32>,
}

/// The shape of an attention layer.
#[derive(Debug, Clone, Copy)]
pub struct Heads {
    /// The hidden size: a row of `qkv` is `3 × hidden` long.
    pub hidden: usize,
    pub heads: usize,
}

kernel! {
    /// Self-attention within one sequence: `qkv` holds its rows of query, key and
    /// value projections side by side; each head's weighted values are added to
    /// `context` (one `hidden`-long row per token, zero on entry).
    ///
    /// A head's keys are gathered transposed (rows padded with zeros to a
    /// multiple of eight) and its values side by side, in one pass over the rows
    /// in memory order, so every inner loop runs over contiguous memory in whole
    /// vectors.
    fn attend(qkv: &[f32], shape: Heads, context: &mut [f32], work: &mut Attention) {
        let (h, heads) = (shape.hidden, shape.heads);
        let d = h / heads;
        let len = qkv.len() / (3 * h);
        let scale = 1.0 / (d as f32).sqrt();
        let width = len.next_multiple_of(8);
        work.scores.clear();
        work.scores.resize(width, 0.0);
        work.keys.clear();
        work.keys.resize(heads * d * width, 0.0);
        work.values.clear();
        work.values.resize(heads * len * d, 0.0);
        for (j, row) in qkv.chunks_exact(3 * h).enumerate() {
            for head in 0..heads {
                let keys = &mut work.keys[head * d * width..][..d * width];
                for (t, &k) in row[h + head * d..][..d].iter().enumerate() {
                    keys[t * width + j] = k;
                }
                work.values[(head * len + j) * d..][..d]
                    .copy_from_slice(&row[2 * h + head * d..][..d]);
            }
        }
        for head in 0..heads {
            let keys = &work.keys[head * d * width..][..d * width];
            let values = &work.values[head * len * d..][..len * d];
            for (i, row) in qkv.chunks_exact(3 * h).enumerate() {
                let query = &row[head * d..][..d];
                let scores = &mut work.scores[..];
                scores.fill(0.0);
                for (&q, keys) in query.iter().zip(keys.chunks_exact(width)) {
                    for (s, k) in scores.chunks_exact_mut(8).zip(keys.chunks_exact(8)) {
                        let s: &mut [f32; 8] = s.try_into().expect("eight");
                        let k: &[f32; 8] = k.try_into().expect("eight");
                        for l in 0..8 {
                            s[l] += q * k[l];
                        }
                    }
                }
                let scores = &mut scores[..len];
                for s in scores.iter_mut() {
                    *s *= scale;
                }
                softmax(scores);
                let out = &mut context[i * h + head * d..][..d];
                for (&p, value) in scores.iter().zip(values.chunks_exact(d)) {
                    for (o, v) in out.iter_mut().zip(value) {
                        *o += p * v;
                    }
                }
            }
        }
    }
}

/// `e^x` in f32, within two units in the last place: Cody-Waite reduction by
/// ln 2 and Cephes' `expf` polynomial, written without branches or calls so that
/// loops over it vectorise.
#[inline(always)]
#[allow(clippy::many_single_char_names)] // the formula's names
fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * LOG2E + ROUND;
    let n = shifted - ROUND;
    // The same integer, read from the mantissa (an `as` cast would not vectorise).
    let n_int = shifted
        .to_bits()
        .wrapping_sub(ROUND.to_bits())
        .cast_signed();
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // 2^n, n in [-126, 127] after the clamp.
    e * f32::from_bits((n_int + 127).cast_unsigned() << 23)
}

/// The error function in f32, within 8e-7 absolute: Abramowitz and Stegun
/// 7.1.26 (1.5e-7), the formula `PyTorch`'s vectorised CPU `erf` uses, plus f32
/// rounding.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A1: f32 = 0.254_829_6;
    const A2: f32 = -0.284_496_74;
    const A3: f32 = 1.421_413_7;
    const A4: f32 = -1.453_152_1;
    const A5: f32 = 1.061_405_4;
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = ((((A5 * t + A4) * t + A3) * t + A2) * t + A1) * t;
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

/// `tanh(x)` in f32 from [`exp`]: `1 - 2 / (e^2x + 1)`, odd.
#[inline(always)]
fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let y = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_ulp_of_the_standard_library() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let (ours, std) = (exp(x), x.exp());
            let ulps = (i64::from(ours.to_bits()) - i64::from(std.to_bits())).abs();
            assert!(ulps <= 2, "exp({x}) = {ours}, std {std} ({ulps} ulp)");
            x += 0.0137;
        }
        assert_eq!(exp(0.0).to_bits(), 1.0f32.to_bits());
        assert!(exp(-200.0) < 1e-37 && exp(-200.0) >= 0.0);
        assert!(exp(200.0).is_finite());
    }

    #[test]
    fn erf_and_tanh_are_within_their_bounds() {
        let (mut worst_erf, mut worst_tanh) = (0.0f64, 0.0f64);
        let mut x = -6.0f32;
        while x < 6.0 {
            worst_erf = worst_erf.max((f64::from(erf(x)) - libm_erf(f64::from(x))).abs());
            worst_tanh = worst_tanh.max((f64::from(tanh(x)) - f64::from(x).tanh()).abs());
            x += 0.001_3;
        }
        // The formula's own 1.5e-7, plus f32 rounding where `1 - poly e^-x²`
        // cancels (small |x|).
        assert!(worst_erf < 8e-7, "erf off by {worst_erf:e}");
        assert!(worst_tanh < 3e-7, "tanh off by {worst_tanh:e}");
        for x in [0.1f32, 0.7, 2.5] {
            assert_eq!(erf(-x).to_bits(), (-erf(x)).to_bits(), "odd at {x}");
        }
        assert_eq!(erf(30.0).to_bits(), 1.0f32.to_bits());
        assert_eq!(erf(-30.0).to_bits(), (-1.0f32).to_bits());
    }

    /// erf in f64 by its Maclaurin series (|x| < 3) and continued fraction
    /// (beyond), accurate far below the f32 bound tested.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let value = if a < 3.0 {
            let mut term = a;
            let mut total = a;
            let mut n = 0.0;
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -a * a / n;
                total += term / (2.0 * n + 1.0);
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc by Lentz's continued fraction.
            let mut f = a;
            for k in (1..60).rev() {
                f = a + f64::from(k) / 2.0 / f;
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
        };
        value.copysign(x)
    }
}
