//! The dense layers' matrix products on CPUs with AVX-512: `out += x Wᵀ` for a
//! few dozen token rows against weights read once per product.
//!
//! A check's texts are a few dozen tokens, so its products are skinny: 24 rows
//! against 384 × 1,536 weights. gemm runs them at about half the speed it reaches
//! on a hundred rows (its 64-row kernels leave lanes idle on 24 rows, and it
//! packs the rows again for every block of weights). Here the weights are packed
//! once, at load, into panels of 32 outputs whose inputs follow one another, so a
//! product streams each panel once from memory; the rows go through it twelve at
//! a time, their 24 sums (12 rows × 32 outputs) held in registers.
//!
//! The sums are gemm's, bit for bit: every output starts from the value in `out`,
//! each block of `depth` inputs is summed on its own by fused multiply-adds in
//! input order, starting from zero, and the block's sum is then added to the
//! output. That is the order of gemm's AVX-512 kernels, whose inner-dimension
//! block the caller passes as `depth` (the engine's tests compare the two).
//!
//! The unsafe code here: the AVX-512 build, called once the CPU is known to have
//! it, its raw-pointer loads and stores (within the bounds checked on entry), and
//! the threads of one product writing the same rows (each its own panels'
//! columns).

use std::ops::Range;

use crate::Fork;

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m512, _mm512_add_ps, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps,
    _mm512_storeu_ps,
};

/// Outputs per panel: two AVX-512 vectors.
pub const WIDTH: usize = 32;
/// Rows per block: their 24 sums and the two weight vectors fit the 32 registers.
const BLOCK: usize = 12;
/// Rows per chunk (whole blocks): 120 rows of a block of 512 inputs are 240 KB.
const CHUNK: usize = 10 * BLOCK;

/// Whether this CPU can run [`Panels`]' products.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX512.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A dense layer's weights packed for [`Panels::product`]: for each group of
/// [`WIDTH`] outputs, its `inputs` rows of [`WIDTH`] weights (outputs past the
/// layer's last are zero).
#[derive(Debug)]
pub struct Panels {
    data: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// `count` rows of a matrix, each starting `stride` floats after the one before.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    pub data: &'a [f32],
    pub count: usize,
    pub stride: usize,
}

impl<'a> Rows<'a> {
    /// `data` as rows of `width` floats, one after another.
    pub fn packed(data: &'a [f32], width: usize) -> Self {
        Self {
            data,
            count: data.len() / width,
            stride: width,
        }
    }
}

impl Panels {
    /// `weight` (`outputs` rows of `inputs`) packed; `None` when this CPU cannot
    /// run the products (see [`available`]).
    pub fn pack(weight: &[f32], inputs: usize, outputs: usize) -> Option<Self> {
        if !available() {
            return None;
        }
        assert_eq!(weight.len(), inputs * outputs, "`outputs` rows of `inputs`");
        let panels = outputs.div_ceil(WIDTH);
        let mut data = vec![0.0; panels * inputs * WIDTH];
        for (output, row) in weight.chunks_exact(inputs.max(1)).enumerate() {
            let panel = &mut data[output / WIDTH * inputs * WIDTH..][..inputs * WIDTH];
            for (input, &w) in row.iter().enumerate() {
                panel[input * WIDTH + output % WIDTH] = w;
            }
        }
        Some(Self {
            data,
            inputs,
            outputs,
        })
    }

    /// `out[r][j] += Σ x[r][i] · W[j][i]` for every row `r` of `x` and output
    /// `j`, the inputs summed in blocks of `depth` (see the module's notes);
    /// `out`'s rows start `out_stride` floats apart. In up to `threads` shares
    /// of the panels run by `fork`, when that is worth it.
    pub fn product(
        &self,
        x: Rows<'_>,
        out: &mut [f32],
        out_stride: usize,
        depth: usize,
        threads: usize,
        fork: &dyn Fork,
    ) {
        let Rows {
            data: x,
            count: rows,
            stride: x_stride,
        } = x;
        // The bounds the unsafe code below relies on, checked in every build.
        assert!(x_stride >= self.inputs && out_stride >= self.outputs && depth > 0);
        assert!(rows == 0 || x.len() >= (rows - 1) * x_stride + self.inputs);
        assert!(rows == 0 || out.len() >= (rows - 1) * out_stride + self.outputs);
        if rows == 0 || self.outputs == 0 {
            return;
        }
        let packed = Packed::new(x, rows, x_stride, self.inputs, depth);
        let panels = self.outputs.div_ceil(WIDTH);
        // A share below about a million multiply-adds costs more to hand out
        // than it saves.
        let work = rows * self.inputs * self.outputs;
        let threads = threads.min(panels).min(work / (1 << 20)).max(1);
        let target = Target {
            data: out.as_mut_ptr(),
            stride: out_stride,
        };
        if threads == 1 {
            // SAFETY: `out` is borrowed mutably here, and its bounds were checked.
            unsafe { self.run(&packed, target, 0..panels) };
            return;
        }
        fork.fork(threads, &|part| {
            let share = panels * part / threads..panels * (part + 1) / threads;
            // SAFETY: the shares are disjoint, so no two threads write the same
            // floats of `out`, which is borrowed mutably until `fork` returns,
            // once every share has ended; its bounds were checked.
            unsafe { self.run(&packed, target, share) };
        });
    }

    /// The products of the panels `panels`, in `target` (checked by `product`).
    unsafe fn run(&self, packed: &Packed, target: Target, panels: Range<usize>) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Panels` exist only on CPUs with AVX-512 (`pack`); the bounds
        // are the caller's.
        unsafe {
            run_avx512(self, packed, target, panels);
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (packed, target, panels);
            unreachable!("Panels are packed only on x86_64");
        }
    }
}

/// Where a product writes: rows of `stride` floats from `data`.
#[derive(Clone, Copy)]
struct Target {
    data: *mut f32,
    stride: usize,
}

// SAFETY: threads write through a `Target` only to their own panels' columns
// (see `Panels::product`).
unsafe impl Send for Target {}
unsafe impl Sync for Target {}

/// The rows of `x` packed block by block: for each block of `depth` inputs and
/// each block of up to [`BLOCK`] rows, input by input, that input of each row.
struct Packed {
    data: Vec<f32>,
    rows: usize,
    depth: usize,
}

impl Packed {
    fn new(x: &[f32], rows: usize, x_stride: usize, inputs: usize, depth: usize) -> Self {
        let mut data = Vec::with_capacity(rows * inputs);
        for start in (0..inputs).step_by(depth) {
            let len = depth.min(inputs - start);
            for first in (0..rows).step_by(BLOCK) {
                let count = BLOCK.min(rows - first);
                for input in start..start + len {
                    for row in first..first + count {
                        data.push(x[row * x_stride + input]);
                    }
                }
            }
        }
        Self { data, rows, depth }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512(panels: &Panels, packed: &Packed, target: Target, range: Range<usize>) {
    let (inputs, rows, depth) = (panels.inputs, packed.rows, packed.depth);
    // Rows a chunk at a time, so that a chunk's packed rows stay in the core's
    // cache while every panel streams past them.
    for chunk in (0..rows).step_by(CHUNK) {
        for panel in range.clone() {
            let weights = &panels.data[panel * inputs * WIDTH..][..inputs * WIDTH];
            let columns = WIDTH.min(panels.outputs - panel * WIDTH);
            for start in (0..inputs).step_by(depth) {
                let len = depth.min(inputs - start);
                let w = &weights[start * WIDTH..][..len * WIDTH];
                for first in (chunk..rows.min(chunk + CHUNK)).step_by(BLOCK) {
                    let count = BLOCK.min(rows - first);
                    // (`Packed`'s order: the blocks of inputs before this one
                    // hold every row, the rows' blocks before this one `len`
                    // inputs each.)
                    let block = &packed.data[start * rows + first * len..][..len * count];
                    // SAFETY: the caller checked that `out` holds every row of
                    // the product and the panel's columns in each.
                    let out = Target {
                        data: unsafe { target.data.add(first * target.stride + panel * WIDTH) },
                        stride: target.stride,
                    };
                    // SAFETY: this CPU has AVX-512; `w` is `len` inputs of WIDTH
                    // weights and `block` `len` inputs of `count` rows.
                    unsafe { sum_rows(count, w, block, out, columns) };
                }
            }
        }
    }
}

/// Dispatches [`sum_block`] on the number of rows, so that each count keeps its
/// sums in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sum_rows(count: usize, w: &[f32], x: &[f32], out: Target, columns: usize) {
    macro_rules! rows {
        ($($n:literal)*) => {
            match count {
                // SAFETY: as for `sum_rows`.
                $($n => unsafe { sum_block::<$n>(w, x, out, columns) },)*
                _ => unreachable!("a block holds 1 to {BLOCK} rows"),
            }
        };
    }
    rows!(1 2 3 4 5 6 7 8 9 10 11 12);
}

/// `out[r][0..columns] += Σ_i x[i][r] · w[i][..]` for the `N` rows of one block:
/// each sum from zero, in input order, by fused multiply-adds.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sum_block<const N: usize>(w: &[f32], x: &[f32], out: Target, columns: usize) {
    let len = w.len() / WIDTH;
    debug_assert_eq!(x.len(), len * N);
    let mut sums: [[__m512; 2]; N] = [[_mm512_setzero_ps(); 2]; N];
    for (w, x) in w.chunks_exact(WIDTH).zip(x.chunks_exact(N)) {
        // SAFETY: `w` holds WIDTH floats.
        let (low, high) = unsafe {
            (
                _mm512_loadu_ps(w.as_ptr()),
                _mm512_loadu_ps(w.as_ptr().add(16)),
            )
        };
        for (sum, &x) in sums.iter_mut().zip(x) {
            let x = _mm512_set1_ps(x);
            sum[0] = _mm512_fmadd_ps(low, x, sum[0]);
            sum[1] = _mm512_fmadd_ps(high, x, sum[1]);
        }
    }
    for (row, sum) in sums.iter().enumerate() {
        // SAFETY: row `row` of the block has `columns` floats from here (the
        // caller's bounds).
        unsafe {
            let at = out.data.add(row * out.stride);
            if columns == WIDTH {
                _mm512_storeu_ps(at, _mm512_add_ps(_mm512_loadu_ps(at), sum[0]));
                _mm512_storeu_ps(
                    at.add(16),
                    _mm512_add_ps(_mm512_loadu_ps(at.add(16)), sum[1]),
                );
            } else {
                let mut lanes = [0.0f32; WIDTH];
                _mm512_storeu_ps(lanes.as_mut_ptr(), sum[0]);
                _mm512_storeu_ps(lanes.as_mut_ptr().add(16), sum[1]);
                for (column, lane) in lanes.iter().enumerate().take(columns) {
                    *at.add(column) += lane;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sums in the kernels' order, one float at a time.
    fn reference(
        w: &[f32],
        x: &[f32],
        rows: usize,
        inputs: usize,
        outputs: usize,
        depth: usize,
    ) -> Vec<f32> {
        let mut out: Vec<f32> = (0..rows * outputs).map(|i| i as f32 * 0.25).collect();
        for r in 0..rows {
            for j in 0..outputs {
                for start in (0..inputs).step_by(depth) {
                    let mut sum = 0.0f32;
                    for i in start..(start + depth).min(inputs) {
                        sum = x[r * inputs + i].mul_add(w[j * inputs + i], sum);
                    }
                    out[r * outputs + j] += sum;
                }
            }
        }
        out
    }

    #[test]
    fn products_sum_each_block_of_inputs_in_order_in_any_shape_and_on_any_threads() {
        if !available() {
            return;
        }
        let value = |i: usize| ((i * 7919) % 1009) as f32 / 1009.0 - 0.5;
        // (The last is large enough to be shared out between threads.)
        let shapes = [
            (5, 3, 5),
            (40, 70, 16),
            (96, 64, 40),
            (64, 33, 64),
            (256, 1056, 100),
        ];
        for (inputs, outputs, depth) in shapes {
            let w: Vec<f32> = (0..inputs * outputs).map(value).collect();
            let panels = Panels::pack(&w, inputs, outputs).unwrap();
            for rows in [1, 2, 11, 12, 13, 25, 121, 150] {
                let x: Vec<f32> = (0..rows * inputs).map(|i| value(i * 3 + 1)).collect();
                let want = reference(&w, &x, rows, inputs, outputs, depth);
                for threads in [1, 2, 3] {
                    let mut out: Vec<f32> = (0..rows * outputs).map(|i| i as f32 * 0.25).collect();
                    let x = Rows {
                        data: &x,
                        count: rows,
                        stride: inputs,
                    };
                    panels.product(x, &mut out, outputs, depth, threads, &crate::ThreadPerShare);
                    assert!(
                        out.iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{rows} rows of {inputs} → {outputs}, depth {depth}, {threads} threads"
                    );
                }
            }
        }
    }
}
