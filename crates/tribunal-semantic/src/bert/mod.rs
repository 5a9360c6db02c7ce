//! A BERT encoder forward pass (the architecture of all-MiniLM-L6-v2 and most
//! sentence-transformers models) on the CPU, f32: the weights are read from
//! `model.safetensors` here, the matrix products are our own on CPUs with AVX-512
//! (weights packed at load into panels, `tribunal_semantic_kernels::panels`: about
//! 1.7 times gemm's speed on a check's few dozen tokens, and the same bits) and the
//! `gemm` crate's elsewhere, and the rest (embeddings, layer norms, attention,
//! activation, pooling) is our own.
//!
//! Texts are encoded without padding. The dense layers run once over the tokens of
//! every text of a pass, stacked into one matrix; attention runs within each text.
//! Every token row goes through the same operations in the same order whatever else
//! shares its pass: gemm picks its blocking of the inner dimension from that
//! dimension alone, and a one-row product (which gemm would route through another
//! kernel) is computed as two rows. The panels sum in gemm's order and blocks. So a
//! text's embedding is the same bits alone, in any batch and with any number of
//! threads.
//!
//! Threads: the pass starts none. Work shared out (a pass's groups of texts, a
//! product's panels or rows) goes to the [`Fork`] the embedder was given, the
//! engine's runtime pool.
//!
//! The element-wise and attention kernels are the `tribunal-semantic-kernels`
//! crate's (crates/semantic-kernels), which debug builds optimise like gemm.
//! The unsafe code here: gemm's raw-pointer entry point.
#![allow(unsafe_code)]

mod weights;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use gemm_common::Parallelism;
use serde::Deserialize;
use tribunal_semantic_kernels as kernels;
use tribunal_semantic_kernels::panels::{Panels, Rows};
use tribunal_semantic_kernels::Fork;
use weights::Weights;

/// The keys of a Hugging Face `config.json` a BERT forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn default_act() -> String {
    "gelu".to_owned()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

#[derive(Debug, Clone, Copy)]
enum Activation {
    /// BERT's `gelu`: the exact, erf-based GELU.
    GeluErf,
    /// `gelu_new` / `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Result<Self, String> {
        match name {
            "gelu" => Ok(Self::GeluErf),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Self::GeluTanh),
            "relu" => Ok(Self::Relu),
            other => Err(format!(
                "unsupported hidden_act `{other}` (supported: gelu, gelu_new, gelu_pytorch_tanh, relu)"
            )),
        }
    }

    /// Applies the activation in place.
    fn apply(self, values: &mut [f32]) {
        match self {
            Self::GeluErf => kernels::gelu_erf(values),
            Self::GeluTanh => kernels::gelu_tanh(values),
            Self::Relu => kernels::relu(values),
        }
    }
}

/// Forward passes running now: a pass alone on the machine lets gemm use every
/// core, passes side by side (`--jobs 2`) take one each.
static PASSES: AtomicUsize = AtomicUsize::new(0);

/// Counts a pass for as long as it lives.
struct Running;

impl Running {
    fn start() -> Self {
        PASSES.fetch_add(1, Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        PASSES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The threads the next matrix product may use.
#[derive(Debug, Clone, Copy)]
pub enum Threads {
    /// Every core when this is the only pass running, else one.
    Auto,
    /// Exactly this many.
    Fixed(usize),
}

impl Threads {
    /// How many threads.
    fn count(self) -> usize {
        match self {
            Self::Auto if PASSES.load(Ordering::Relaxed) <= 1 => cores(),
            Self::Auto => 1,
            Self::Fixed(n) => n.max(1),
        }
    }
}

/// The matrix kernels this CPU runs, found by the two checks gemm dispatches on
/// (their rounding can differ from another CPU's): part of the disk cache's
/// model fingerprint.
pub fn matrix_kernels() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "x86_64-avx512f";
        }
        if std::arch::is_x86_feature_detected!("fma") {
            return "x86_64-fma";
        }
    }
    std::env::consts::ARCH
}

fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// A dense layer: `y = x W^T + b`, `W` stored as `outputs` rows of `inputs`,
/// or packed into `panels` (and `weight` then empty) on CPUs that run them.
#[derive(Debug)]
struct Dense {
    weight: Vec<f32>,
    panels: Option<Panels>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// Layers of more outputs than this have their weights packed into panels.
/// gemm computes a product of at most 256 outputs (two rows of 128, one
/// computed as two) with other kernels, summing in another order.
const PANELS_ABOVE: usize = 256;

/// The block of the inner dimension gemm's AVX-512 kernels sum on their own
/// before adding to the output, for an `m` × `k` by `k` × `n` product of more
/// than [`PANELS_ABOVE`] outputs (`gemm_basic_generic` in gemm-common 0.19,
/// whose f32 kernels are 64 rows by 6): `Panels` sum in the same blocks to give
/// the same bits, which the tests check against gemm.
fn gemm_depth(m: usize, n: usize, k: usize) -> usize {
    gemm_common::cache::kernel_params(m, n, k, 64, 6, std::mem::size_of::<f32>()).kc
}

impl Dense {
    /// Several layers reading the same input as one (the query, key and value
    /// projections): their outputs side by side in each row.
    fn stacked(parts: Vec<Dense>) -> Self {
        let inputs = parts[0].inputs;
        let mut joined = Dense {
            weight: Vec::new(),
            panels: None,
            bias: Vec::new(),
            inputs,
            outputs: 0,
        };
        for part in parts {
            // `forward` hands gemm the joined weights as one matrix of `inputs` columns.
            assert_eq!(part.inputs, inputs, "stacked layers take the same inputs");
            joined.weight.extend(part.weight);
            joined.bias.extend(part.bias);
            joined.outputs += part.outputs;
        }
        joined
    }

    /// The layer with its weights packed into panels, where this CPU runs them
    /// and the layer has more than [`PANELS_ABOVE`] outputs.
    fn packed(mut self) -> Self {
        if self.outputs <= PANELS_ABOVE {
            return self;
        }
        self.panels = Panels::pack(&self.weight, self.inputs, self.outputs);
        if self.panels.is_some() {
            self.weight = Vec::new();
        }
        self
    }

    /// `out = x W^T + b` for `rows` rows of `x`, which start `x_stride`
    /// floats apart (at least `inputs`); `out`'s rows start `out_stride`
    /// floats apart (at least `outputs`; the floats between are zero).
    fn forward(&self, x: Rows<'_>, out: &mut Vec<f32>, out_stride: usize, share: Sharing<'_>) {
        assert_eq!(self.bias.len(), self.outputs, "one bias per output");
        out.clear();
        for _ in 0..x.count {
            out.extend_from_slice(&self.bias);
            out.resize(out.len() + out_stride - self.outputs, 0.0);
        }
        match &self.panels {
            Some(panels) => {
                // gemm's blocks for this product (computed as two rows when one).
                let depth = gemm_depth(x.count.max(2), self.outputs, self.inputs);
                let threads = share.threads.count();
                panels.product(x, out, out_stride, depth, threads, share.fork);
            }
            None => self.gemm(x, out, out_stride, share),
        }
    }

    /// `out += x W^T` by gemm, `out` holding `x.count` rows of `out_stride`;
    /// in shares of the rows when that is worth it.
    fn gemm(&self, x: Rows<'_>, out: &mut Vec<f32>, out_stride: usize, share: Sharing<'_>) {
        let Rows {
            data: x,
            count: rows,
            stride: x_stride,
        } = x;
        // The bounds the unsafe gemm calls rely on, checked in every build: a
        // wrong shape is a panic, never a read past a buffer.
        assert!(x_stride >= self.inputs && out_stride >= self.outputs);
        assert_eq!(
            x.len(),
            rows * x_stride,
            "the input is `rows` rows of `x_stride`"
        );
        assert_eq!(
            self.weight.len(),
            self.outputs * self.inputs,
            "the weights are `outputs` rows of `inputs`"
        );
        assert_eq!(out.len(), rows * out_stride, "`rows` rows of `out_stride`");
        if rows == 1 {
            // gemm computes a one-row product with another kernel (other
            // rounding): a second, zero row keeps every row on the same path.
            let padded = [x, &vec![0.0; x_stride]].concat();
            out.resize(2 * out_stride, 0.0);
            // SAFETY: two rows of each, as checked above and made here.
            unsafe { self.gemm_rows(&padded, 2, x_stride, out.as_mut_ptr(), out_stride) };
            out.truncate(out_stride);
            return;
        }
        let shares = self.row_shares(rows, share.threads.count());
        if shares == 1 {
            // SAFETY: `rows` rows of each, as checked above.
            unsafe { self.gemm_rows(x, rows, x_stride, out.as_mut_ptr(), out_stride) };
            return;
        }
        let target = Target(out.as_mut_ptr());
        share.fork.fork(shares, &|part| {
            let mine = rows * part / shares..rows * (part + 1) / shares;
            let x = &x[mine.start * x_stride..mine.end * x_stride];
            // SAFETY: the shares' rows are disjoint, so no two threads write
            // the same floats of `out`, which is borrowed mutably until `fork`
            // returns, once every share has ended; its bounds were checked.
            unsafe {
                let out = target.at(mine.start * out_stride);
                self.gemm_rows(x, mine.len(), x_stride, out, out_stride);
            }
        });
    }

    /// Shares of about equal rows to compute a product of `rows` rows in, on
    /// up to `threads` threads: 1 when the product is too small to be worth
    /// sharing out (below about a million multiply-adds a share). Each share
    /// takes gemm's path for the whole product: at least two rows (one takes
    /// the one-row kernel), more than 256 outputs in all (gemm computes at
    /// most 16 × 16 with other kernels), and more than 64 outputs (gemm's
    /// blocking of the inner dimension for at most 64 rows by 64 outputs is
    /// its own).
    fn row_shares(&self, rows: usize, threads: usize) -> usize {
        if self.outputs <= 64 {
            return 1;
        }
        let least_rows = (256 / self.outputs + 1).max(2);
        let work = rows * self.inputs * self.outputs;
        threads.min(rows / least_rows).min(work >> 20).max(1)
    }

    /// `out += x W^T` by gemm on this thread, for `rows` rows of `x` (starting
    /// `x_stride` floats apart) and of `out` (`out_stride` apart).
    ///
    /// # Safety
    /// `x` holds `rows` rows of `x_stride` floats and `out` points to as many
    /// rows of `out_stride` that no one else reads or writes meanwhile, with
    /// `x_stride >= inputs` and `out_stride >= outputs`.
    unsafe fn gemm_rows(
        &self,
        x: &[f32],
        rows: usize,
        x_stride: usize,
        out: *mut f32,
        out_stride: usize,
    ) {
        debug_assert!(x.len() >= rows * x_stride);
        // Slices never hold more than isize::MAX bytes.
        let stride = |n: usize| isize::try_from(n).expect("a row fits in memory");
        // SAFETY: `out` holds `rows` rows of `out_stride` floats (`outputs` of
        // them written), `x` `rows` rows of `x_stride` (`inputs` of them read)
        // and `weight` `outputs` rows of `inputs`, all contiguous, as the
        // strides say (the caller's promise and `gemm`'s checks); `out` does
        // not overlap the inputs.
        unsafe {
            gemm_f32::gemm::f32::get_gemm_fn()(
                rows,
                self.outputs,
                self.inputs,
                out,
                1,
                stride(out_stride),
                true,
                x.as_ptr(),
                1,
                stride(x_stride),
                self.weight.as_ptr(),
                stride(self.inputs),
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                Parallelism::None,
            );
        }
    }
}

/// Where a product's shares write: `out`'s first float.
#[derive(Clone, Copy)]
struct Target(*mut f32);

impl Target {
    /// The float `offset` floats on.
    ///
    /// # Safety
    /// As for [`pointer::add`]: within `out`.
    unsafe fn at(self, offset: usize) -> *mut f32 {
        // SAFETY: the caller's.
        unsafe { self.0.add(offset) }
    }
}

// SAFETY: each share writes through a `Target` only to its own rows (see
// `Dense::gemm`).
unsafe impl Send for Target {}
unsafe impl Sync for Target {}

/// How a pass's products may be shared out: on up to `threads` threads, by
/// `fork`.
#[derive(Clone, Copy)]
struct Sharing<'a> {
    threads: Threads,
    fork: &'a dyn Fork,
}

/// A pass's embeddings, or why it failed.
type PassResult = Result<Vec<Vec<f32>>, String>;

/// `sequences` (their indices, each group in order) in up to `count` groups of
/// about equal tokens, the longest first, each to the group with the fewest
/// tokens so far; none (an empty list) when the largest group would hold more
/// than two thirds of the tokens, where gemm sharing out each product does
/// better.
fn groups(sequences: &[&[u32]], count: usize) -> Vec<Vec<usize>> {
    if count < 2 || sequences.len() < 2 {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..sequences.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sequences[i].len()));
    let mut groups: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); count.min(sequences.len())];
    for i in order {
        let least = groups
            .iter_mut()
            .min_by_key(|(tokens, _)| *tokens)
            .expect("two groups or more");
        least.0 += sequences[i].len();
        least.1.push(i);
    }
    let total: usize = sequences.iter().map(|s| s.len()).sum();
    if groups.iter().any(|(tokens, _)| 3 * tokens > 2 * total) {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|(_, mut group)| {
            group.sort_unstable();
            group
        })
        .collect()
}

/// Where a row of `width` floats should start after the one before: rows a
/// multiple of 2 KB apart map onto the same few cache sets, so that a matrix
/// product reading or writing them runs at half speed (the feed-forward layer's
/// 1,536 floats, 6 KB); one more cache line between them avoids it.
/// (The products' sums are the same either way.)
fn row_stride(width: usize) -> usize {
    if width.is_multiple_of(512) {
        width + 16
    } else {
        width
    }
}

/// Layer normalisation over each row.
#[derive(Debug)]
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn apply(&self, x: &mut [f32]) {
        kernels::layer_norm(x, &self.weight, &self.bias, self.eps);
    }
}

#[derive(Debug)]
struct Layer {
    /// Query, key and value projections, stacked.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

/// The encoder, weights loaded once.
#[derive(Debug)]
pub struct Bert {
    /// `vocab_size` rows of `hidden`.
    words: Vec<f32>,
    /// `max_positions` rows of `hidden`.
    positions: Vec<f32>,
    /// Token type 0's row (single sentences), added to every token.
    token_type: Vec<f32>,
    embeddings_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    activation: Activation,
    pub max_positions: usize,
}

/// The working matrices of a pass, reused from layer to layer.
#[derive(Default)]
struct Buffers {
    qkv: Vec<f32>,
    context: Vec<f32>,
    dense: Vec<f32>,
    inner: Vec<f32>,
    attention: kernels::Attention,
}

impl Bert {
    /// Loads `config.json` and `model.safetensors` from `dir`.
    pub(crate) fn load(dir: &Path) -> Result<Self, String> {
        let config_path = dir.join("config.json");
        let text = std::fs::read_to_string(&config_path)
            .map_err(|e| format!("cannot read `{}`: {e}", config_path.display()))?;
        let config: BertConfig = serde_json::from_str(&text)
            .map_err(|e| format!("`{}` is not a BERT config: {e}", config_path.display()))?;
        if let Some(kind) = config.model_type.as_deref() {
            if kind != "bert" {
                return Err(format!(
                    "`{}`: model_type `{kind}` is not supported (only `bert`)",
                    config_path.display()
                ));
            }
        }
        let weights = dir.join("model.safetensors");
        let tensors = Weights::open(&weights)
            .map_err(|e| format!("cannot read `{}`: {e}", weights.display()))?;
        Self::new(&config, tensors).map_err(|e| format!("`{}`: {e}", weights.display()))
    }

    fn new(config: &BertConfig, mut w: Weights) -> Result<Self, String> {
        let activation = Activation::parse(&config.hidden_act)?;
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ));
        }
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let one = |name: &str| [name.to_owned()];
        let words = w.take(
            &one("embeddings.word_embeddings.weight"),
            &[config.vocab_size, h],
        )?;
        let positions = w.take(
            &one("embeddings.position_embeddings.weight"),
            &[config.max_position_embeddings, h],
        )?;
        // Every token has type 0 (single sentences): one row, added to all.
        let mut token_type = w.take(
            &one("embeddings.token_type_embeddings.weight"),
            &[config.type_vocab_size, h],
        )?;
        token_type.truncate(h);
        if token_type.len() != h {
            return Err("no token type embeddings (type_vocab_size is 0)".to_owned());
        }
        let embeddings_norm = w.norm("embeddings.LayerNorm", h, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let inner = config.intermediate_size;
            layers.push(Layer {
                qkv: Dense::stacked(vec![
                    w.dense(&format!("{l}.attention.self.query"), h, h)?,
                    w.dense(&format!("{l}.attention.self.key"), h, h)?,
                    w.dense(&format!("{l}.attention.self.value"), h, h)?,
                ])
                .packed(),
                attention_out: w
                    .dense(&format!("{l}.attention.output.dense"), h, h)?
                    .packed(),
                attention_norm: w.norm(&format!("{l}.attention.output.LayerNorm"), h, eps)?,
                intermediate: w
                    .dense(&format!("{l}.intermediate.dense"), h, inner)?
                    .packed(),
                output: w.dense(&format!("{l}.output.dense"), inner, h)?.packed(),
                output_norm: w.norm(&format!("{l}.output.LayerNorm"), h, eps)?,
            });
        }
        Ok(Self {
            words,
            positions,
            token_type,
            embeddings_norm,
            layers,
            heads: config.num_attention_heads,
            hidden: h,
            activation,
            max_positions: config.max_position_embeddings,
        })
    }

    /// The mean-pooled last hidden states of each token sequence (each of 1 to
    /// `max_positions` ids), in order.
    ///
    /// A pass of several sequences alone on the machine runs them in groups of
    /// about equal tokens, one group a core, each on one thread: the attention,
    /// the activations and the norms then run in parallel too, not only the
    /// products (for a check's few short texts, the products' threads waited on
    /// them about half the time). A sequence's embedding does not depend on its
    /// group, nor on the threads (see the module's notes), so the results are
    /// the same bits. One sequence, or a pass beside another, lets the products
    /// be shared out instead.
    ///
    /// The groups are shares of one `fork`: the calling thread takes them one
    /// by one, and so do the executor's threads that are free; the caller
    /// waits only for groups another thread has begun.
    pub(crate) fn mean_pooled(&self, sequences: &[&[u32]], fork: &dyn Fork) -> PassResult {
        let groups = if PASSES.load(Ordering::Relaxed) == 0 {
            groups(sequences, cores())
        } else {
            Vec::new()
        };
        if groups.len() < 2 {
            return self.mean_pooled_with(sequences, Threads::Auto, fork);
        }
        let done: Vec<Mutex<Option<PassResult>>> =
            groups.iter().map(|_| Mutex::default()).collect();
        fork.fork(groups.len(), &|share| {
            let mine: Vec<&[u32]> = groups[share].iter().map(|&i| sequences[i]).collect();
            let pooled = self.mean_pooled_with(&mine, Threads::Fixed(1), fork);
            *done[share].lock().unwrap_or_else(PoisonError::into_inner) = Some(pooled);
        });
        let mut out = vec![Vec::new(); sequences.len()];
        for (group, pooled) in groups.iter().zip(done) {
            let pooled = pooled.into_inner().unwrap_or_else(PoisonError::into_inner);
            let rows = pooled.expect("every group ran")?;
            for (&i, row) in group.iter().zip(rows) {
                out[i] = row;
            }
        }
        Ok(out)
    }

    /// The mean-pooled states of `sequences` in one pass, its products
    /// shared out on up to `threads` threads by `fork`.
    pub(crate) fn mean_pooled_with(
        &self,
        sequences: &[&[u32]],
        threads: Threads,
        fork: &dyn Fork,
    ) -> PassResult {
        let _running = Running::start();
        let h = self.hidden;
        let vocab = self.words.len() / h;
        let rows: usize = sequences.iter().map(|s| s.len()).sum();
        let mut x = Vec::with_capacity(rows * h);
        for sequence in sequences {
            if sequence.is_empty() || sequence.len() > self.max_positions {
                return Err(format!(
                    "a sequence of {} tokens (1 to {} can be embedded)",
                    sequence.len(),
                    self.max_positions
                ));
            }
            for (position, &id) in sequence.iter().enumerate() {
                let id = id as usize;
                if id >= vocab {
                    return Err(format!("token id {id} is outside the vocabulary ({vocab})"));
                }
                let word = &self.words[id * h..][..h];
                let place = &self.positions[position * h..][..h];
                kernels::push_sum3(&mut x, word, place, &self.token_type);
            }
        }
        self.embeddings_norm.apply(&mut x);
        let mut buffers = Buffers::default();
        let share = Sharing { threads, fork };
        for layer in &self.layers {
            self.layer(layer, sequences, &mut x, &mut buffers, share);
        }
        let mut pooled = Vec::with_capacity(sequences.len());
        let mut start = 0;
        for sequence in sequences {
            let len = sequence.len();
            pooled.push(kernels::mean_rows(&x[start * h..(start + len) * h], h));
            start += len;
        }
        Ok(pooled)
    }

    fn layer(
        &self,
        layer: &Layer,
        sequences: &[&[u32]],
        x: &mut Vec<f32>,
        b: &mut Buffers,
        share: Sharing<'_>,
    ) {
        let h = self.hidden;
        layer
            .qkv
            .forward(Rows::packed(x, h), &mut b.qkv, layer.qkv.outputs, share);
        b.context.clear();
        b.context.resize(x.len(), 0.0);
        let shape = kernels::Heads {
            hidden: h,
            heads: self.heads,
        };
        let mut start = 0;
        for sequence in sequences {
            let len = sequence.len();
            kernels::attend(
                &b.qkv[start * 3 * h..(start + len) * 3 * h],
                shape,
                &mut b.context[start * h..(start + len) * h],
                &mut b.attention,
            );
            start += len;
        }
        layer
            .attention_out
            .forward(Rows::packed(&b.context, h), &mut b.dense, h, share);
        kernels::add_into(&mut b.dense, x);
        layer.attention_norm.apply(&mut b.dense);
        std::mem::swap(x, &mut b.dense);
        let inner = row_stride(layer.intermediate.outputs);
        layer
            .intermediate
            .forward(Rows::packed(x, h), &mut b.inner, inner, share);
        // (The floats between the rows are never read.)
        self.activation.apply(&mut b.inner);
        layer
            .output
            .forward(Rows::packed(&b.inner, inner), &mut b.dense, h, share);
        kernels::add_into(&mut b.dense, x);
        layer.output_norm.apply(&mut b.dense);
        std::mem::swap(x, &mut b.dense);
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense layer of `inputs` → `outputs` with varied weights and biases.
    fn dense(inputs: usize, outputs: usize) -> Dense {
        let value = |i: usize| ((i * 7919) % 1009) as f32 / 1009.0 - 0.5;
        Dense {
            weight: (0..inputs * outputs).map(value).collect(),
            panels: None,
            bias: (0..outputs).map(|i| value(i + 17)).collect(),
            inputs,
            outputs,
        }
    }

    #[test]
    fn texts_are_grouped_by_tokens_and_not_when_one_would_take_most() {
        let seqs = |lens: &[usize]| -> Vec<Vec<u32>> { lens.iter().map(|&n| vec![1; n]).collect() };
        let of = |lens: &[usize], count| {
            let owned = seqs(lens);
            let refs: Vec<&[u32]> = owned.iter().map(Vec::as_slice).collect();
            groups(&refs, count)
        };
        // A check's description and address pairs: 34 and 32 tokens a core.
        assert_eq!(of(&[25, 27, 7, 7], 2), [vec![1, 3], vec![0, 2]]);
        assert_eq!(
            of(&[5, 5, 5, 5, 5, 5], 3),
            [vec![0, 3], vec![1, 4], vec![2, 5]]
        );
        // One text, one core, or a text of most of the tokens: no groups.
        assert!(of(&[40], 2).is_empty());
        assert!(of(&[10, 10], 1).is_empty());
        assert!(of(&[200, 5, 5], 2).is_empty());
        assert_eq!(of(&[20, 10], 2), [vec![0], vec![1]]);
    }

    /// Products on up to `threads` threads (a thread per share beyond the
    /// caller's).
    fn on(threads: usize) -> Sharing<'static> {
        Sharing {
            threads: Threads::Fixed(threads),
            fork: &kernels::ThreadPerShare,
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|f| f.to_bits()).collect()
    }

    /// gemm's products shared out by rows give the bits of the whole product
    /// on one thread: outputs on either side of each bound `row_shares` keeps
    /// (64, 128 where two rows make 256), inner dimensions on either side of
    /// gemm's 512, row counts from two to beyond gemm's 64-row blocks.
    #[test]
    fn products_shared_out_by_rows_give_the_bits_of_one_thread() {
        let shapes = [
            (4096, 64),
            (4096, 65),
            (3000, 100),
            (3000, 128),
            (2048, 129),
            (384, 300),
            (1536, 384),
            (384, 1152),
            (511, 700),
        ];
        let mut shared_out = 0;
        for (inputs, outputs) in shapes {
            let plain = dense(inputs, outputs);
            for rows in [2, 3, 4, 5, 7, 8, 13, 24, 70, 130] {
                let x: Vec<f32> = (0..rows * inputs)
                    .map(|i| (i as f32 * 0.37).sin())
                    .collect();
                let mut want = Vec::new();
                plain.forward(Rows::packed(&x, inputs), &mut want, outputs, on(1));
                for threads in [2, 3, 4] {
                    shared_out += usize::from(plain.row_shares(rows, threads) > 1);
                    let mut got = Vec::new();
                    plain.forward(Rows::packed(&x, inputs), &mut got, outputs, on(threads));
                    assert!(
                        bits(&want) == bits(&got),
                        "{rows} rows of {inputs} → {outputs}, {threads} threads"
                    );
                }
            }
        }
        assert!(shared_out > 100, "{shared_out} products shared out");
    }

    /// Weights packed into panels give gemm's products bit for bit: the shapes
    /// of all-MiniLM-L6-v2's and bert-base's layers and a few more, from one row to more
    /// than a block of gemm's, on one to three threads. Small layers stay gemm's.
    #[test]
    fn panels_give_the_bits_of_gemms_products() {
        if !kernels::panels::available() {
            return;
        }
        let shapes = [
            (384, 1152),
            (384, 384),
            (384, 1536),
            (1536, 384),
            (768, 3072),
            (3072, 768),
            (24, 300),
            (600, 257),
        ];
        assert!(dense(24, PANELS_ABOVE).packed().panels.is_none());
        for (inputs, outputs) in shapes {
            let plain = dense(inputs, outputs);
            let packed = dense(inputs, outputs).packed();
            assert!(packed.panels.is_some() && packed.weight.is_empty());
            for rows in [1, 2, 7, 12, 13, 24, 48, 70] {
                let x: Vec<f32> = (0..rows * inputs)
                    .map(|i| (i as f32 * 0.37).sin())
                    .collect();
                let mut want = Vec::new();
                plain.forward(Rows::packed(&x, inputs), &mut want, outputs, on(1));
                for threads in [1, 2, 3] {
                    let mut got = Vec::new();
                    packed.forward(Rows::packed(&x, inputs), &mut got, outputs, on(threads));
                    assert!(
                        bits(&want) == bits(&got),
                        "{rows} rows of {inputs} → {outputs}, {threads} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn rows_spaced_apart_give_the_products_of_rows_packed_together() {
        let (up, down) = (dense(24, 512), dense(512, 8));
        assert_eq!(row_stride(512), 528);
        assert_eq!(row_stride(384), 384);
        for rows in [1, 2, 5] {
            let x: Vec<f32> = (0..rows * 24).map(|i| (i as f32).sin()).collect();
            let (mut packed, mut spaced) = (Vec::new(), Vec::new());
            up.forward(Rows::packed(&x, 24), &mut packed, 512, on(1));
            up.forward(Rows::packed(&x, 24), &mut spaced, 528, on(1));
            assert_eq!(spaced.len(), rows * 528);
            for row in 0..rows {
                let (p, s) = (&packed[row * 512..][..512], &spaced[row * 528..][..528]);
                assert!(p.iter().zip(s).all(|(a, b)| a.to_bits() == b.to_bits()));
                assert!(
                    s[512..].iter().all(|&f| f == 0.0),
                    "the floats between rows are zero"
                );
            }
            let (mut from_packed, mut from_spaced) = (Vec::new(), Vec::new());
            down.forward(Rows::packed(&packed, 512), &mut from_packed, 8, on(1));
            down.forward(Rows::packed(&spaced, 528), &mut from_spaced, 8, on(1));
            assert_eq!(bits(&from_packed), bits(&from_spaced), "{rows} rows");
        }
    }

    /// A safetensors file of `tensors` (name, dtype, shape, raw bytes).
    fn safetensors(dir: &Path, tensors: &[(&str, &str, &[usize], Vec<u8>)]) -> std::path::PathBuf {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            let start = data.len();
            data.extend_from_slice(bytes);
            header.insert(
                (*name).to_owned(),
                serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
            );
        }
        header.insert(
            "__metadata__".to_owned(),
            serde_json::json!({"format": "pt"}),
        );
        let header = serde_json::Value::Object(header).to_string();
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(header.as_bytes());
        file.extend_from_slice(&data);
        let path = dir.join("model.safetensors");
        std::fs::write(&path, file).unwrap();
        path
    }

    fn name(n: &str) -> [String; 1] {
        [n.to_owned()]
    }

    #[test]
    fn weights_are_read_tensor_by_tensor_in_each_element_type() {
        let dir = tempfile::tempdir().unwrap();
        let f32s: Vec<u8> = [1.5f32, -2.0, 0.25, 1e-3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bf16s: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect();
        let f16s: Vec<u8> = [0.5f32, 3.0]
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect();
        let path = safetensors(
            dir.path(),
            &[
                ("a", "F32", &[2, 2], f32s),
                ("b", "BF16", &[2], bf16s),
                ("c", "F16", &[2], f16s),
            ],
        );
        let mut w = Weights::open(&path).unwrap();
        assert_eq!(
            w.take(&name("a"), &[2, 2]).unwrap(),
            [1.5, -2.0, 0.25, 1e-3]
        );
        assert_eq!(w.take(&name("b"), &[2]).unwrap(), [1.5, -2.0]);
        // The first name present is taken (older checkpoints' aliases).
        assert_eq!(
            w.take(&[String::from("gone"), String::from("c")], &[2])
                .unwrap(),
            [0.5, 3.0]
        );
        let err = w.take(&name("a"), &[2, 2]).unwrap_err();
        assert!(err.contains("`a` is missing"), "{err}");
    }

    #[test]
    fn a_malformed_weights_file_is_an_error_naming_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let four = |n: usize| vec![0u8; 4 * n];
        let path = safetensors(
            dir.path(),
            &[
                ("a", "F32", &[2, 2], four(4)),
                ("b", "I64", &[1], vec![0; 8]),
            ],
        );
        let mut w = Weights::open(&path).unwrap();
        let err = w.take(&name("a"), &[4]).unwrap_err();
        assert!(err.contains("shape [2, 2], expected [4]"), "{err}");
        let err = w.take(&name("b"), &[1]).unwrap_err();
        assert!(err.contains("element type I64"), "{err}");

        // Data that the file does not hold.
        let path = safetensors(dir.path(), &[("a", "F32", &[2, 2], four(3))]);
        let err = Weights::open(&path)
            .unwrap()
            .take(&name("a"), &[2, 2])
            .unwrap_err();
        assert!(err.contains("does not hold 4 F32 values"), "{err}");

        // A Git LFS pointer, a header longer than the file, a header that is not JSON.
        for (bytes, expected) in [
            (
                b"version https://git-lfs.github.com/spec/v1\n".to_vec(),
                "a header of",
            ),
            (vec![1, 0, 0, 0], "shorter than its header"),
            ([&5u64.to_le_bytes()[..], b"nope!"].concat(), "its header"),
        ] {
            std::fs::write(&path, bytes).unwrap();
            let err = Weights::open(&path).err().expect("an error");
            assert!(err.contains(expected), "{err}");
        }
    }
}
