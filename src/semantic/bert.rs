//! A BERT encoder forward pass (the architecture of all-MiniLM-L6-v2 and most
//! sentence-transformers models) on the CPU, f32: the weights are read with candle,
//! the matrix products are the `gemm` crate's, and the rest (embeddings, layer
//! norms, attention, activation, pooling) is our own.
//!
//! Texts are encoded without padding. The dense layers run once over the tokens of
//! every text of a pass, stacked into one matrix; attention runs within each text.
//! Every token row goes through the same operations in the same order whatever else
//! shares its pass: gemm picks its blocking of the inner dimension from that
//! dimension alone and never splits it between threads, and a one-row product (which
//! gemm would route through another kernel) is computed as two rows. So a text's
//! embedding is the same bits alone, in any batch and with any number of threads.
//!
//! The element-wise and attention kernels are the `tribunal-semantic-kernels`
//! crate's (crates/semantic-kernels), which debug builds optimise like gemm.
//! The unsafe code here: gemm's raw-pointer entry point.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::{DType, Device, Tensor};
use gemm::Parallelism;
use serde::Deserialize;
use tribunal_semantic_kernels as kernels;

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
    /// Exactly this many (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Fixed(usize),
}

impl Threads {
    fn parallelism(self) -> Parallelism {
        let threads = match self {
            Self::Auto if PASSES.load(Ordering::Relaxed) <= 1 => cores(),
            Self::Auto => 1,
            Self::Fixed(n) => n,
        };
        if threads > 1 {
            Parallelism::Rayon(threads)
        } else {
            Parallelism::None
        }
    }
}

/// The matrix kernels this CPU runs (their rounding can differ from another
/// CPU's): part of the disk cache's model fingerprint.
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

/// A dense layer: `y = x W^T + b`, `W` stored as `outputs` rows of `inputs`.
#[derive(Debug)]
struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Dense {
    /// Several layers reading the same input as one (the query, key and value
    /// projections): their outputs side by side in each row.
    fn stacked(parts: Vec<Dense>) -> Self {
        let inputs = parts[0].inputs;
        let mut joined = Dense {
            weight: Vec::new(),
            bias: Vec::new(),
            inputs,
            outputs: 0,
        };
        for part in parts {
            debug_assert_eq!(part.inputs, inputs);
            joined.weight.extend(part.weight);
            joined.bias.extend(part.bias);
            joined.outputs += part.outputs;
        }
        joined
    }

    /// `out = x W^T + b` for `rows` rows of `x`.
    fn forward(&self, x: &[f32], rows: usize, out: &mut Vec<f32>, threads: Threads) {
        debug_assert_eq!(x.len(), rows * self.inputs);
        // gemm computes a one-row product with another kernel (other rounding):
        // a second, zero row keeps every row on the same path.
        let padded;
        let (x, m) = if rows == 1 {
            padded = [x, &vec![0.0; self.inputs]].concat();
            (&padded[..], 2)
        } else {
            (x, rows)
        };
        // Slices never hold more than isize::MAX bytes.
        let stride = |n: usize| isize::try_from(n).expect("a row fits in memory");
        out.clear();
        for _ in 0..m {
            out.extend_from_slice(&self.bias);
        }
        // SAFETY: `out` holds `m` rows of `outputs`, `x` `m` rows of `inputs` and
        // `weight` `outputs` rows of `inputs`, all contiguous, as the strides say;
        // `out` does not overlap the inputs.
        unsafe {
            gemm::gemm(
                m,
                self.outputs,
                self.inputs,
                out.as_mut_ptr(),
                1,
                stride(self.outputs),
                true,
                x.as_ptr(),
                1,
                stride(self.inputs),
                self.weight.as_ptr(),
                stride(self.inputs),
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                threads.parallelism(),
            );
        }
        out.truncate(rows * self.outputs);
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

/// The tensors of `model.safetensors`, taken out one by one: each is freed as
/// it is converted, so the weights are never held twice.
struct Weights {
    tensors: HashMap<String, Tensor>,
    /// `bert.` for checkpoints saved from `BertForX`, else empty.
    prefix: &'static str,
}

impl Weights {
    /// The first of `names` present, as f32 values row after row, checked to
    /// have `shape`.
    fn take(&mut self, names: &[String], shape: &[usize]) -> Result<Vec<f32>, String> {
        for name in names {
            let full = format!("{}{name}", self.prefix);
            let Some(tensor) = self.tensors.remove(&full) else {
                continue;
            };
            if tensor.dims() != shape {
                return Err(format!(
                    "tensor `{full}` has shape {:?}, expected {shape:?}",
                    tensor.dims()
                ));
            }
            return tensor
                .to_dtype(DType::F32)
                .and_then(|t| t.flatten_all())
                .and_then(|t| t.to_vec1::<f32>())
                .map_err(|e| format!("tensor `{full}`: {e}"));
        }
        Err(format!("tensor `{}{}` is missing", self.prefix, names[0]))
    }

    fn dense(&mut self, at: &str, inputs: usize, outputs: usize) -> Result<Dense, String> {
        Ok(Dense {
            weight: self.take(&[format!("{at}.weight")], &[outputs, inputs])?,
            bias: self.take(&[format!("{at}.bias")], &[outputs])?,
            inputs,
            outputs,
        })
    }

    /// A layer norm's scale and shift (`weight`/`bias`, or the older
    /// `gamma`/`beta`).
    fn norm(&mut self, at: &str, size: usize, eps: f64) -> Result<Norm, String> {
        Ok(Norm {
            weight: self.take(&[format!("{at}.weight"), format!("{at}.gamma")], &[size])?,
            bias: self.take(&[format!("{at}.bias"), format!("{at}.beta")], &[size])?,
            eps: eps as f32,
        })
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
    pub fn load(dir: &Path) -> Result<Self, String> {
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
        let tensors = candle_core::safetensors::load(&weights, &Device::Cpu)
            .map_err(|e| format!("cannot read `{}`: {e}", weights.display()))?;
        Self::new(&config, tensors).map_err(|e| format!("`{}`: {e}", weights.display()))
    }

    fn new(config: &BertConfig, tensors: HashMap<String, Tensor>) -> Result<Self, String> {
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
        // Checkpoints saved from `BertForX` prefix every tensor with `bert.`.
        let prefix = if tensors.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let mut w = Weights { tensors, prefix };
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
                ]),
                attention_out: w.dense(&format!("{l}.attention.output.dense"), h, h)?,
                attention_norm: w.norm(&format!("{l}.attention.output.LayerNorm"), h, eps)?,
                intermediate: w.dense(&format!("{l}.intermediate.dense"), h, inner)?,
                output: w.dense(&format!("{l}.output.dense"), inner, h)?,
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
    pub fn mean_pooled(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        self.mean_pooled_with(sequences, Threads::Auto)
    }

    pub fn mean_pooled_with(
        &self,
        sequences: &[&[u32]],
        threads: Threads,
    ) -> Result<Vec<Vec<f32>>, String> {
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
        for layer in &self.layers {
            self.layer(layer, sequences, &mut x, &mut buffers, threads);
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
        threads: Threads,
    ) {
        let h = self.hidden;
        let rows = x.len() / h;
        layer.qkv.forward(x, rows, &mut b.qkv, threads);
        b.context.clear();
        b.context.resize(rows * h, 0.0);
        let mut start = 0;
        for sequence in sequences {
            let len = sequence.len();
            kernels::attend(
                &b.qkv[start * 3 * h..(start + len) * 3 * h],
                kernels::Heads {
                    hidden: h,
                    heads: self.heads,
                },
                &mut b.context[start * h..(start + len) * h],
                &mut b.attention,
            );
            start += len;
        }
        layer
            .attention_out
            .forward(&b.context, rows, &mut b.dense, threads);
        kernels::add_into(&mut b.dense, x);
        layer.attention_norm.apply(&mut b.dense);
        std::mem::swap(x, &mut b.dense);
        layer.intermediate.forward(x, rows, &mut b.inner, threads);
        self.activation.apply(&mut b.inner);
        layer.output.forward(&b.inner, rows, &mut b.dense, threads);
        kernels::add_into(&mut b.dense, x);
        layer.output_norm.apply(&mut b.dense);
        std::mem::swap(x, &mut b.dense);
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }
}
