//! A BERT encoder forward pass (the architecture of all-MiniLM-L6-v2 and most
//! sentence-transformers models) on candle tensors, CPU, f32.
//!
//! Sequences are encoded without padding: the caller groups token sequences of
//! one exact length, so no attention mask is needed and a text's embedding is the
//! same bits whichever other texts share its batch.

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{
    embedding, layer_norm, linear, Embedding, LayerNorm, LayerNormConfig, Linear, VarBuilder,
};
use serde::Deserialize;

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

    fn apply(self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Self::GeluErf => x.gelu_erf(),
            Self::GeluTanh => x.gelu(),
            Self::Relu => x.relu(),
        }
    }
}

#[derive(Debug)]
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder, weights loaded once.
#[derive(Debug)]
pub struct Bert {
    words: Embedding,
    positions: Tensor,
    token_type: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    hidden: usize,
    activation: Activation,
    pub max_positions: usize,
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
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        Self::new(&config, vb).map_err(|e| format!("`{}`: {e}", weights.display()))
    }

    fn new(config: &BertConfig, vb: VarBuilder<'_>) -> Result<Self, String> {
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
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let build = || -> candle_core::Result<Self> {
            let h = config.hidden_size;
            let norm = LayerNormConfig {
                eps: config.layer_norm_eps,
                ..LayerNormConfig::default()
            };
            let e = vb.pp("embeddings");
            let words = embedding(config.vocab_size, h, e.pp("word_embeddings"))?;
            let positions = e
                .pp("position_embeddings")
                .get((config.max_position_embeddings, h), "weight")?;
            // Every token has type 0 (single sentences): one row, added to all.
            let token_type = e
                .pp("token_type_embeddings")
                .get((config.type_vocab_size, h), "weight")?
                .get(0)?;
            let embeddings_norm = layer_norm(h, norm, e.pp("LayerNorm"))?;
            let mut layers = Vec::with_capacity(config.num_hidden_layers);
            for i in 0..config.num_hidden_layers {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                layers.push(Layer {
                    query: linear(h, h, a.pp("self.query"))?,
                    key: linear(h, h, a.pp("self.key"))?,
                    value: linear(h, h, a.pp("self.value"))?,
                    attention_out: linear(h, h, a.pp("output.dense"))?,
                    attention_norm: layer_norm(h, norm, a.pp("output.LayerNorm"))?,
                    intermediate: linear(h, config.intermediate_size, l.pp("intermediate.dense"))?,
                    output: linear(config.intermediate_size, h, l.pp("output.dense"))?,
                    output_norm: layer_norm(h, norm, l.pp("output.LayerNorm"))?,
                });
            }
            Ok(Self {
                words,
                positions,
                token_type,
                embeddings_norm,
                layers,
                heads: config.num_attention_heads,
                head_dim: h / config.num_attention_heads,
                hidden: h,
                activation,
                max_positions: config.max_position_embeddings,
            })
        };
        build().map_err(|e| e.to_string())
    }

    /// Mean-pooled token states of `batch` sequences of `len` tokens each
    /// (`ids` holds them row after row): a `[batch, hidden]` tensor.
    pub fn mean_pooled(
        &self,
        ids: &[u32],
        batch: usize,
        len: usize,
    ) -> candle_core::Result<Tensor> {
        let ids = Tensor::from_slice(ids, (batch, len), &Device::Cpu)?;
        let positions = self.positions.narrow(0, 0, len)?;
        let mut x = self
            .words
            .forward(&ids)?
            .broadcast_add(&positions)?
            .broadcast_add(&self.token_type)?;
        x = self.embeddings_norm.forward(&x)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for layer in &self.layers {
            let heads = |t: Tensor| -> candle_core::Result<Tensor> {
                t.reshape((batch, len, self.heads, self.head_dim))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = heads(layer.query.forward(&x)?)?;
            let k = heads(layer.key.forward(&x)?)?;
            let v = heads(layer.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((
                batch,
                len,
                self.hidden,
            ))?;
            let attended = layer.attention_out.forward(&context)?;
            x = layer.attention_norm.forward(&(attended + &x)?)?;
            let inner = self.activation.apply(&layer.intermediate.forward(&x)?)?;
            let out = layer.output.forward(&inner)?;
            x = layer.output_norm.forward(&(out + &x)?)?;
        }
        x.mean(1)
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }
}
