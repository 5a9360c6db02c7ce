//! Sentence embeddings for the `semantic` strategy, a crate of its own under the
//! engine (which names it as its module `semantic`): a sentence-transformers model
//! (BERT encoder, mean pooling, L2 normalisation) loaded from a local folder, run
//! on the CPU (matrix products by gemm), and the cosine similarity of two texts.
//!
//! A model is loaded once per process and folder, on first use, and shared by
//! every pack and thread. Embeddings are cached per text (bounded) for the run,
//! and the texts of a batch are embedded in passes of many texts without padding
//! (see [`bert`]): a text's embedding does not depend on what else is in its
//! pass, so results are the same whatever the number of jobs or the batch
//! boundaries.

mod bert;
pub mod disk_cache;
pub mod locate;

// The foundation's modules under the names the code uses (`crate::files`), as
// in the engine.
use tribunal_base::{files, text};

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

pub use disk_cache::{default_root as default_cache_root, DiskCache};
pub use locate::{locate, MODEL_DIR_ENV, SETUP_COMMAND};
pub use tribunal_semantic_kernels::{Fork, OnCaller};

/// What a runtime's embedding caches did, for the run's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheReport {
    /// Texts whose embedding was read from the disk cache.
    pub hits: u64,
    /// Texts embedded by the model (and stored, when there is a disk cache).
    pub misses: u64,
    /// The folder of the disk cache, when there is one.
    pub dir: Option<PathBuf>,
    /// Embeddings that could not be written to the disk cache.
    pub writes_failed: u64,
    /// Entries of the disk cache that were not their text's (another text's or
    /// model's, a failed checksum, a link or special file): ignored, written
    /// again.
    pub rejected: u64,
}

/// The sentence-embedding models of one runtime (`Runtime`): a handle
/// per model folder as components name it, one loaded model (with its caches)
/// per folder, and where embeddings are kept across runs.
#[derive(Debug)]
pub struct Models {
    handles: Mutex<HashMap<Option<PathBuf>, Arc<SemanticModel>>>,
    shared: Arc<Shared>,
}

impl Default for Models {
    /// Models kept only in memory, each pass on the calling thread.
    fn default() -> Self {
        Self::new(None, Arc::new(OnCaller))
    }
}

/// What the handles of one [`Models`] share.
#[derive(Debug)]
struct Shared {
    /// Where the forward passes share out their work (the engine's runtime
    /// pool).
    fork: Arc<dyn Fork>,
    /// Where embeddings are kept across runs (`None`: only in memory). The
    /// cache is content-addressed (one file per embedding, under
    /// `root/embeddings/MODEL/`, named by the text's SHA-256 and kept per
    /// model and CPU kernels), so parallel and interrupted runs cannot damage it.
    cache_root: Option<PathBuf>,
    /// The models loaded, by canonical folder (in order: the cache report
    /// names the first one's disk cache).
    loaded: Mutex<BTreeMap<PathBuf, Arc<Loaded>>>,
}

impl Models {
    /// Models whose embeddings are kept on disk under `cache_root`, shared by
    /// every run, or only in memory (`None`); their forward passes share out
    /// their work on `fork`.
    pub fn new(cache_root: Option<PathBuf>, fork: Arc<dyn Fork>) -> Self {
        Self {
            handles: Mutex::default(),
            shared: Arc::new(Shared {
                fork,
                cache_root,
                loaded: Mutex::default(),
            }),
        }
    }

    /// The handle for `explicit` (or for the default location), so a model is
    /// loaded once however many packs and components use it.
    pub fn model(&self, explicit: Option<PathBuf>) -> Arc<SemanticModel> {
        let key = explicit.map(|p| p.canonicalize().unwrap_or(p));
        let mut handles = self
            .handles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(handles.entry(key.clone()).or_insert_with(|| {
            Arc::new(SemanticModel {
                explicit: key,
                shared: Arc::clone(&self.shared),
                loaded: OnceLock::new(),
            })
        }))
    }

    /// The caches' figures, `None` when no model was used.
    pub fn cache_report(&self) -> Option<CacheReport> {
        let loaded = self
            .shared
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = |counter: fn(&Loaded) -> &AtomicU64| {
            loaded
                .values()
                .map(|l| counter(l).load(Ordering::Relaxed))
                .sum::<u64>()
        };
        let (hits, misses) = (count(|l| &l.found), count(|l| &l.embedded));
        if hits + misses == 0 {
            return None;
        }
        let disks: Vec<&DiskCache> = loaded.values().filter_map(|l| l.disk.as_deref()).collect();
        Some(CacheReport {
            hits,
            misses,
            dir: disks.first().map(|d| d.dir().to_path_buf()),
            writes_failed: disks.iter().map(|d| d.writes_failed()).sum(),
            rejected: disks.iter().map(|d| d.rejected()).sum(),
        })
    }
}

/// Why the sentence-embedding model cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// No usable model folder: the one a pack names, `$TRIBUNAL_MODEL_DIR`'s or the set-up's.
    #[error("{0}")]
    NotFound(String),
    /// The folder is there, but the model in it does not load.
    #[error("{0}")]
    Load(String),
    /// The model could not embed a text.
    #[error("{0}")]
    Embed(String),
}

/// Tokens per forward pass, which bounds its working memory: the feed-forward
/// layer's activations take `tokens × intermediate size` floats (1.5 MB for
/// all-MiniLM-L6-v2), the attention scores only one text's row at a time.
/// Passes of 512 to 2,048 tokens ran equally fast, 256 about 6% slower and 128
/// 25% slower; 256 keeps two passes side by side (`--jobs 2`) within the memory
/// budget of 64 MB plus the model (peak 144-150 MB for json-eval, against
/// 161-166 MB with 512). Embeddings do not depend on it.
const MAX_PASS_TOKENS: usize = 256;
/// Embeddings kept for the run; the oldest are dropped beyond this (~1.6 KB each
/// for a 384-dimension model, plus a 32-byte key whatever the text's length).
pub const CACHE_ENTRIES: usize = 16_384;

/// A loaded model: tokenizer, encoder and the pooling settings of its folder.
#[derive(Debug)]
pub struct Embedder {
    tokenizer: Tokenizer,
    bert: bert::Bert,
    /// Where its passes share out their work.
    fork: Arc<dyn Fork>,
    /// For a BERT tokenizer: how many words of a text can reach the model (see
    /// [`cut_after_words`]); `None` for other tokenizers, which see whole texts.
    words_seen: Option<usize>,
}

/// `sentence_bert_config.json`.
#[derive(Debug, Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// `1_Pooling/config.json`; only mean pooling is supported.
#[derive(Debug, Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

impl Embedder {
    /// Loads the model in `dir` (see [`locate`] for where that is).
    #[cfg(test)]
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        Self::open(dir, Arc::new(tribunal_semantic_kernels::ThreadPerShare))
            .map_err(ModelError::Load)
    }

    fn open(dir: &Path, fork: Arc<dyn Fork>) -> Result<Self, String> {
        let pooling = dir.join("1_Pooling").join("config.json");
        if let Ok(text) = std::fs::read_to_string(&pooling) {
            let config: PoolingConfig =
                serde_json::from_str(&text).map_err(|e| format!("`{}`: {e}", pooling.display()))?;
            if !config.pooling_mode_mean_tokens
                || config.pooling_mode_cls_token
                || config.pooling_mode_max_tokens
                || config.pooling_mode_mean_sqrt_len_tokens
            {
                return Err(format!(
                    "`{}`: only mean pooling (pooling_mode_mean_tokens alone) is supported",
                    pooling.display()
                ));
            }
        }
        let bert = bert::Bert::load(dir)?;
        let sentence = dir.join("sentence_bert_config.json");
        let max_len = match std::fs::read_to_string(&sentence) {
            Ok(text) => {
                serde_json::from_str::<SentenceConfig>(&text)
                    .map_err(|e| format!("`{}`: {e}", sentence.display()))?
                    .max_seq_length
            }
            Err(_) => None,
        }
        .unwrap_or(bert.max_positions)
        .min(bert.max_positions);

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| format!("cannot load `{}`: {e}", tokenizer_path.display()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..TruncationParams::default()
            }))
            .map_err(|e| format!("`{}`: {e}", tokenizer_path.display()))?;
        tokenizer.with_padding(None);
        let bert_tokenizer = matches!(
            tokenizer.get_normalizer(),
            None | Some(tokenizers::NormalizerWrapper::BertNormalizer(_))
        ) && matches!(
            tokenizer.get_pre_tokenizer(),
            Some(tokenizers::PreTokenizerWrapper::BertPreTokenizer(_))
        ) && matches!(
            tokenizer.get_model(),
            tokenizers::ModelWrapper::WordPiece(_)
        );
        Ok(Self {
            tokenizer,
            bert,
            fork,
            words_seen: bert_tokenizer.then_some(max_len),
        })
    }

    pub fn dimensions(&self) -> usize {
        self.bert.hidden_size()
    }

    /// The token ids the model sees for `text` (with `[CLS]`/`[SEP]`, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, ModelError> {
        // Only the first `max_len` tokens reach the model: a megabyte text need
        // not be tokenized whole to find them.
        let text = match self.words_seen {
            Some(words) => cut_after_words(text, words),
            None => text,
        };
        self.tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| {
                ModelError::Embed(format!(
                    "cannot tokenize {:?}: {e}",
                    crate::text::prefix_chars(text, 60)
                ))
            })
    }

    /// L2-normalised embeddings of `texts`, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let ids = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        // A text of no tokens (a tokenizer without [CLS]/[SEP] and a text its
        // normaliser empties) embeds to the mean of nothing, as in sentence-transformers.
        let mut pending: Vec<usize> = Vec::new();
        for (i, seq) in ids.iter().enumerate() {
            if seq.is_empty() {
                out[i] = vec![0.0; self.dimensions()];
            } else {
                pending.push(i);
            }
        }
        // Passes of up to MAX_PASS_TOKENS tokens (a text alone may be longer).
        let mut rest = &pending[..];
        while !rest.is_empty() {
            let mut tokens = ids[rest[0]].len();
            let mut take = 1;
            while take < rest.len() && tokens + ids[rest[take]].len() <= MAX_PASS_TOKENS {
                tokens += ids[rest[take]].len();
                take += 1;
            }
            let (pass, after) = rest.split_at(take);
            let sequences: Vec<&[u32]> = pass.iter().map(|&i| ids[i].as_slice()).collect();
            let pooled = self
                .bert
                .mean_pooled(&sequences, &*self.fork)
                .map_err(|e| ModelError::Embed(format!("embedding failed: {e}")))?;
            for (&i, row) in pass.iter().zip(pooled) {
                out[i] = normalised(row);
            }
            rest = after;
        }
        Ok(out)
    }
}

/// `text` up to the end of its `words`-th word, where a word is a run between
/// separators that holds an ASCII letter or digit; the whole text when it has
/// fewer. For a BERT tokenizer (BERT normaliser, BERT pre-tokenizer, `WordPiece`)
/// each such word yields at least one token (an ASCII letter or digit survives
/// cleaning, accent stripping and lower-casing, and every word is at least one
/// piece or `[UNK]`), and tokens never span a separator, so the first `words`
/// tokens of the cut text are those of the whole text: truncated to fewer, both
/// give the same ids.
///
/// Separators are the characters the BERT normaliser and pre-tokenizer both treat
/// as whitespace: space, tab, line feed, carriage return and the other Unicode
/// space separators (Zs). Other control characters are removed by the normaliser
/// (they join the text around them), so they do not separate here.
pub fn cut_after_words(text: &str, words: usize) -> &str {
    let mut counted = 0;
    let mut has_alnum = false;
    for (i, c) in text.char_indices() {
        if is_space_separator(c) {
            if has_alnum {
                counted += 1;
                if counted >= words {
                    return &text[..i];
                }
            }
            has_alnum = false;
        } else if c.is_ascii_alphanumeric() {
            has_alnum = true;
        }
    }
    text
}

fn is_space_separator(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\r' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
    v
}

/// Cosine similarity of two L2-normalised embeddings.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
}

/// A cache key: the SHA-256 of a text, so an entry costs the same whatever the
/// text's length (a record may hold megabytes of text).
type TextKey = [u8; 32];

fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// Embeddings by text (its [`TextKey`]), oldest dropped first beyond `capacity`.
#[derive(Debug)]
struct Cache {
    map: HashMap<TextKey, Arc<[f32]>>,
    order: VecDeque<TextKey>,
    capacity: usize,
    /// Texts a call is fetching right now (other calls wait for them).
    in_flight: HashSet<TextKey>,
}

impl Cache {
    fn get(&self, key: &TextKey) -> Option<Arc<[f32]>> {
        self.map.get(key).cloned()
    }

    fn insert(&mut self, key: TextKey, embedding: Arc<[f32]>) {
        if self.map.contains_key(&key) {
            return;
        }
        while self.map.len() >= self.capacity {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.map.remove(&old);
        }
        self.order.push_back(key);
        self.map.insert(key, embedding);
    }
}

/// Texts a call has in flight; dropping it takes them out and wakes the calls
/// waiting for them (a no-op once the call has done so itself).
struct InFlight<'a> {
    loaded: &'a Loaded,
    keys: Vec<TextKey>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut cache = self
            .loaded
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for key in &self.keys {
            cache.in_flight.remove(key);
        }
        drop(cache);
        self.loaded.fetched.notify_all();
    }
}

/// A model folder's embedder and its cache, loaded on first use and shared.
#[derive(Debug)]
pub struct SemanticModel {
    /// The folder from a component's config; `None` = environment, then default.
    explicit: Option<PathBuf>,
    shared: Arc<Shared>,
    loaded: OnceLock<Result<Arc<Loaded>, ModelError>>,
}

#[derive(Debug)]
struct Loaded {
    embedder: Embedder,
    cache: Mutex<Cache>,
    /// Signalled when a call has fetched the texts it had in flight.
    fetched: Condvar,
    disk: Option<Arc<DiskCache>>,
    /// Texts whose embedding was read from the disk cache, texts embedded by
    /// the model (a text met again is taken from memory and not counted).
    found: AtomicU64,
    embedded: AtomicU64,
}

impl SemanticModel {
    /// Where the model is, without loading it (a load-time check).
    pub fn locate(&self) -> Result<PathBuf, ModelError> {
        locate(self.explicit.as_deref())
    }

    /// Loads the model (once per folder; later calls return at once).
    pub fn load(&self) -> Result<(), ModelError> {
        self.loaded().map(drop)
    }

    /// The model and its cache, loaded once per model folder: handles that reach
    /// the same folder by different routes (a `model:` naming the default folder,
    /// the environment variable, the default) share one model and one cache.
    fn loaded(&self) -> Result<&Loaded, ModelError> {
        self.loaded
            .get_or_init(|| {
                let dir = self.locate()?;
                let key = dir.canonicalize().unwrap_or_else(|_| dir.clone());
                let mut models = self
                    .shared
                    .loaded
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if let Some(loaded) = models.get(&key) {
                    return Ok(Arc::clone(loaded));
                }
                let embedder =
                    Embedder::open(&dir, Arc::clone(&self.shared.fork)).map_err(|e| {
                        ModelError::Load(format!(
                            "cannot load the sentence-embedding model in `{}`: {e}. Its files are \
                         damaged or not a BERT sentence-transformers model (a Git LFS pointer, \
                         an interrupted copy?): reinstall it (`{SETUP_COMMAND}` installs the \
                         default all-MiniLM-L6-v2) or point {MODEL_DIR_ENV} or json_compare's \
                         `model:` at a complete one",
                            dir.display()
                        ))
                    })?;
                let root = self.shared.cache_root.clone();
                // A cache that cannot be opened (an unreadable model file) is
                // left out: the embeddings are still computed.
                let disk = root
                    .and_then(|root| DiskCache::open(&root, &dir, embedder.dimensions()).ok())
                    .map(Arc::new);
                let loaded = Arc::new(Loaded {
                    embedder,
                    disk,
                    found: AtomicU64::new(0),
                    embedded: AtomicU64::new(0),
                    fetched: Condvar::new(),
                    cache: Mutex::new(Cache {
                        map: HashMap::new(),
                        order: VecDeque::new(),
                        capacity: CACHE_ENTRIES,
                        in_flight: HashSet::new(),
                    }),
                });
                models.insert(key, Arc::clone(&loaded));
                Ok(loaded)
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The embeddings of `texts`: from memory, else from the disk cache, else
    /// computed in one batched pass. A text another thread is embedding at the
    /// same time is waited for, not embedded twice.
    pub fn embeddings(&self, texts: &[&str]) -> Result<Vec<Arc<[f32]>>, ModelError> {
        let loaded = self.loaded()?;
        // Hashed outside the lock: texts can be long.
        let keys: Vec<TextKey> = texts.iter().map(|t| text_key(t)).collect();
        let lock = || {
            loaded
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        // Each distinct text not in memory is this call's to fetch, unless
        // another call is fetching it already.
        let mut found: Vec<Option<Arc<[f32]>>> = Vec::with_capacity(keys.len());
        let mut mine: Vec<(&str, TextKey)> = Vec::new();
        let mut mine_keys: HashSet<TextKey> = HashSet::new();
        let mut others: Vec<TextKey> = Vec::new();
        {
            let mut cache = lock();
            for (text, key) in texts.iter().zip(&keys) {
                let hit = cache.get(key);
                if hit.is_none() && cache.in_flight.insert(*key) {
                    mine.push((text, *key));
                    mine_keys.insert(*key);
                } else if hit.is_none() && !mine_keys.contains(key) {
                    others.push(*key);
                }
                found.push(hit);
            }
        }
        // Should the fetch panic, the guard still takes this call's texts out
        // of flight, so no other call waits for them forever.
        let mut guard = InFlight {
            loaded,
            keys: mine.iter().map(|(_, key)| *key).collect(),
        };
        let fetched = self.fetch(loaded, &mine);
        {
            let mut cache = lock();
            for key in guard.keys.drain(..) {
                cache.in_flight.remove(&key);
            }
            if let Ok(embeddings) = &fetched {
                for ((_, key), embedding) in mine.iter().zip(embeddings) {
                    cache.insert(*key, Arc::clone(embedding));
                }
            }
            loaded.fetched.notify_all();
            // Wait for the texts other calls were fetching.
            for key in &others {
                while cache.in_flight.contains(key) {
                    cache = loaded
                        .fetched
                        .wait(cache)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
            // This call's own texts from what it fetched (the cache may already
            // have dropped some of a very large batch), the others' from the cache.
            let own: HashMap<&TextKey, &Arc<[f32]>> = match &fetched {
                Ok(embeddings) => mine.iter().map(|(_, key)| key).zip(embeddings).collect(),
                Err(_) => HashMap::new(),
            };
            for (key, slot) in keys.iter().zip(&mut found) {
                if slot.is_none() {
                    *slot = own
                        .get(key)
                        .map(|e| Arc::clone(e))
                        .or_else(|| cache.get(key));
                }
            }
        }
        drop(guard);
        fetched?;
        // What is still missing (another call failed, or its result was already
        // dropped from memory): fetched here, one by one.
        let mut out = Vec::with_capacity(found.len());
        for ((text, key), slot) in texts.iter().zip(&keys).zip(found) {
            match slot {
                Some(embedding) => out.push(embedding),
                None => out.extend(self.fetch(loaded, &[(text, *key)])?),
            }
        }
        Ok(out)
    }

    /// Reads `wanted` from the disk cache, or embeds them in one batch (and
    /// stores them there).
    fn fetch(
        &self,
        loaded: &Loaded,
        wanted: &[(&str, TextKey)],
    ) -> Result<Vec<Arc<[f32]>>, ModelError> {
        let mut fetched: Vec<Option<Arc<[f32]>>> = wanted
            .iter()
            .map(|(_, key)| loaded.disk.as_ref()?.get(key).map(Arc::from))
            .collect();
        let to_embed: Vec<usize> = (0..wanted.len())
            .filter(|&i| fetched[i].is_none())
            .collect();
        loaded
            .found
            .fetch_add((wanted.len() - to_embed.len()) as u64, Ordering::Relaxed);
        if !to_embed.is_empty() {
            loaded
                .embedded
                .fetch_add(to_embed.len() as u64, Ordering::Relaxed);
            let batch: Vec<&str> = to_embed.iter().map(|&i| wanted[i].0).collect();
            for (&i, embedding) in to_embed.iter().zip(loaded.embedder.embed(&batch)?) {
                if let Some(disk) = &loaded.disk {
                    disk.put(&wanted[i].1, &embedding);
                }
                fetched[i] = Some(Arc::from(embedding));
            }
        }
        Ok(fetched
            .into_iter()
            .map(|e| e.expect("every text fetched"))
            .collect())
    }

    /// Cosine similarity of the two texts' embeddings, clamped to [0, 1]; 1.0
    /// exactly when the embeddings are equal (texts of the same tokens: `Food` and
    /// `food`, or texts equal up to the truncation), where the dot product of a
    /// unit f32 vector with itself may be a hair below 1.
    pub fn similarity(&self, a: &str, b: &str) -> Result<f64, ModelError> {
        let pair = self.embeddings(&[a, b])?;
        if pair[0] == pair[1] {
            return Ok(1.0);
        }
        Ok(cosine(&pair[0], &pair[1]).clamp(0.0, 1.0))
    }

    /// Embeds (and caches) the texts not cached yet, in batches; errors are left
    /// for the comparisons to report, record by record.
    pub fn prefetch(&self, texts: &[&str]) {
        if !texts.is_empty() {
            let _ = self.embeddings(texts);
        }
    }

    /// The loaded embedder (loading it if needed).
    #[cfg(test)]
    pub fn embedder(&self) -> Result<&Embedder, ModelError> {
        self.loaded().map(|l| &l.embedder)
    }
}

#[cfg(test)]
#[path = "../../../tests/support/model.rs"]
mod model_support;
/// Against the real model (installed by `scripts/setup`).
#[cfg(test)]
mod model_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_newest_texts_within_its_bound() {
        let mut cache = Cache {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: 3,
            in_flight: HashSet::new(),
        };
        let get = |cache: &Cache, text: &str| cache.get(&text_key(text));
        for i in 0..5u8 {
            cache.insert(text_key(&format!("t{i}")), Arc::from(vec![f32::from(i)]));
        }
        cache.insert(text_key("t4"), Arc::from(vec![9.0]));
        assert_eq!(cache.map.len(), 3);
        assert!(get(&cache, "t0").is_none() && get(&cache, "t1").is_none());
        assert_eq!(
            &*get(&cache, "t4").unwrap(),
            &[4.0],
            "an entry is never replaced"
        );
        assert_eq!(
            cache.order,
            [text_key("t2"), text_key("t3"), text_key("t4")]
        );
    }

    #[test]
    fn the_cache_does_not_keep_the_texts_themselves() {
        // Keys are fixed-size digests: 16,384 entries of megabyte texts must not
        // hold gigabytes. Texts that differ only at their end are distinct.
        let mut cache = Cache {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: 3,
            in_flight: HashSet::new(),
        };
        let get = |cache: &Cache, text: &str| cache.get(&text_key(text));
        let long = "word ".repeat(200_000);
        let longer = format!("{long}!");
        cache.insert(text_key(&long), Arc::from(vec![1.0]));
        cache.insert(text_key(&longer), Arc::from(vec![2.0]));
        assert_eq!(std::mem::size_of_val(&cache.order[0]), 32);
        assert_eq!(&*get(&cache, &long).unwrap(), &[1.0]);
        assert_eq!(&*get(&cache, &longer).unwrap(), &[2.0]);
        assert!(get(&cache, &long[1..]).is_none());
    }

    #[test]
    fn embeddings_are_unit_length_and_cosine_is_their_dot_product() {
        let v = normalised(vec![3.0, 4.0]);
        assert_eq!(v, [0.6, 0.8]);
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-7);
        assert_eq!(normalised(vec![0.0, 0.0]), [0.0, 0.0]);
    }
}
