//! The embedding cache on disk, shared by every run: content-addressed, one file
//! per embedding, so runs in parallel and interrupted runs cannot damage it.
//!
//! `ROOT/embeddings/MODEL/AB/CDEF…` holds the embedding (little-endian `f32`s) of
//! the text whose SHA-256 is `ABCDEF…`, computed by the model whose fingerprint
//! is `MODEL`: a SHA-256 over the files the model is read from (the small ones
//! whole, the weights by size and their first and last megabyte), this engine's
//! version, the cache format and the matrix kernels the CPU runs, so a changed
//! model or engine, or another CPU's rounding, never reads another's embeddings.
//! An entry records the text's hash and the model's fingerprint beside the
//! embedding, with a checksum over them (XXH3, 128 bits: it catches a damaged
//! or truncated entry; an entry put there on purpose is caught by what it
//! records, and whoever can write the cache can write any embedding into it):
//! an entry that belongs to another text or model (copied there), fails its
//! checksum, is not a regular file (a link, a FIFO: opened without following
//! links and without waiting) or is not of its exact size is ignored, counted
//! ([`DiskCache::rejected`]) and written again.
//! Nothing larger than an entry is ever read. A file is written to a new file
//! of an unguessable name beside its place and renamed into it.
//!
//! `ROOT` is `eval --cache-dir` (every command that loads a pack takes it), else
//! `$TRIBUNAL_CACHE_DIR`, else `$XDG_CACHE_HOME/tribunal`, else
//! `$HOME/.cache/tribunal`; `--no-cache` turns the cache off. A program using the
//! library turns it on with [`set_cache_root`](super::set_cache_root).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::TextKey;
use crate::files::OwnFileError;

/// Bumped when what is stored, or how an embedding is computed, changes.
const FORMAT: &str = "tribunal-embeddings-4";

/// The first bytes of an entry.
const MAGIC: &[u8; 8] = b"TRBEMB4\n";
/// Bytes of the model fingerprint an entry records.
const FINGERPRINT: usize = 16;
/// Bytes of an entry's checksum (XXH3-128 of what precedes it; format 3's
/// SHA-256 cost a run reading its embeddings from the cache a twentieth of
/// its time).
const CHECKSUM: usize = 16;

/// The checksum of an entry's `body`.
fn checksum(body: &[u8]) -> [u8; CHECKSUM] {
    twox_hash::XxHash3_128::oneshot(body).to_le_bytes()
}

/// The files of a model folder that decide its embeddings.
const MODEL_FILES: &[&str] = &[
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];

/// The environment variable naming the cache root.
pub const CACHE_DIR_ENV: &str = "TRIBUNAL_CACHE_DIR";

/// The default cache root: `$TRIBUNAL_CACHE_DIR`, `$XDG_CACHE_HOME/tribunal` or
/// `$HOME/.cache/tribunal` (`None` when none of them is set).
pub fn default_root() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_DIR_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("tribunal")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("tribunal")))
}

/// One model's folder in the cache.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    fingerprint: [u8; FINGERPRINT],
    dimensions: usize,
    writes_failed: AtomicU64,
    rejected: AtomicU64,
}

impl DiskCache {
    /// The cache of the model in `model_dir` under `root` (the folder is made
    /// when the first embedding is stored).
    pub fn open(root: &Path, model_dir: &Path, dimensions: usize) -> io::Result<Self> {
        let mut hasher = Sha256::new();
        hasher.update(FORMAT.as_bytes());
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(super::bert::matrix_kernels().as_bytes());
        for name in MODEL_FILES {
            match fingerprint_file(&model_dir.join(name), &mut hasher) {
                Ok(()) => hasher.update(name.as_bytes()),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
        let mut fingerprint = [0u8; FINGERPRINT];
        fingerprint.copy_from_slice(&hasher.finalize()[..FINGERPRINT]);
        Ok(Self {
            dir: root.join("embeddings").join(hex(&fingerprint)),
            fingerprint,
            dimensions,
            writes_failed: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
        })
    }

    /// Where this model's embeddings are kept.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &TextKey) -> PathBuf {
        let name = hex(key);
        self.dir.join(&name[..2]).join(&name[2..])
    }

    /// The bytes of the entry for `key` holding `embedding`.
    fn entry(&self, key: &TextKey, embedding: &[f32]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.entry_len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(&self.fingerprint);
        bytes.extend(embedding.iter().flat_map(|x| x.to_le_bytes()));
        let checksum = checksum(&bytes);
        bytes.extend_from_slice(&checksum);
        bytes
    }

    fn entry_len(&self) -> usize {
        MAGIC.len() + 32 + FINGERPRINT + self.dimensions * 4 + CHECKSUM
    }

    /// The stored embedding of the text, if there is a whole one that is its
    /// own; anything else at its place is rejected (counted) and not read.
    pub fn get(&self, key: &TextKey) -> Option<Vec<f32>> {
        self.read(key).unwrap_or_else(|()| {
            self.rejected.fetch_add(1, Ordering::Relaxed);
            None
        })
    }

    /// `Ok(None)`: no entry; `Err`: an entry that is not this text's.
    fn read(&self, key: &TextKey) -> Result<Option<Vec<f32>>, ()> {
        use std::io::Read;
        let path = self.path(key);
        let expected = self.entry_len();
        let file = match crate::files::open_no_follow(&path, fs::OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(OwnFileError::Io(err)) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(_) => return Err(()),
        };
        if file.metadata().map_err(|_| ())?.len() != expected as u64 {
            return Err(());
        }
        let mut bytes = Vec::with_capacity(expected);
        file.take(expected as u64)
            .read_to_end(&mut bytes)
            .map_err(|_| ())?;
        let (body, checksum) = bytes.split_at(bytes.len().saturating_sub(CHECKSUM));
        let fingerprint_end = MAGIC.len() + 32 + FINGERPRINT;
        let own = bytes.len() == expected
            && body.starts_with(MAGIC)
            && &body[MAGIC.len()..MAGIC.len() + 32] == key
            && body[MAGIC.len() + 32..fingerprint_end] == self.fingerprint
            && self::checksum(body) == *checksum;
        if !own {
            return Err(());
        }
        Ok(Some(
            body[fingerprint_end..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    /// Stores an embedding; a failure (a full disk, a read-only folder) is
    /// counted, and the run goes on without it.
    pub fn put(&self, key: &TextKey, embedding: &[f32]) {
        if self.write(key, embedding).is_err() {
            self.writes_failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn write(&self, key: &TextKey, embedding: &[f32]) -> io::Result<()> {
        let path = self.path(key);
        let folder = path.parent().expect("a cache file is in a folder");
        fs::create_dir_all(folder)?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
        let (temp, mut file) = crate::files::create_temporary(folder, name)?;
        let written = file.write_all(&self.entry(key, embedding));
        drop(file);
        // The rename replaces whatever was at the entry's place (a link, a
        // FIFO, another text's entry) without going through it.
        if let Err(err) = written.and_then(|()| fs::rename(&temp, &path)) {
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
        Ok(())
    }

    /// Entries found at their place that were not their text's (another text's
    /// or model's, a failed checksum, a link or special file, the wrong size):
    /// ignored and written again.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// Embeddings that could not be stored so far.
    pub fn writes_failed(&self) -> u64 {
        self.writes_failed.load(Ordering::Relaxed)
    }
}

/// Files up to this size are hashed whole; of a larger one (the weights, about
/// 90 MB), its size and its first and last `SAMPLE` bytes: its header (every
/// tensor's name, shape and offset) and weights from both ends, which differ
/// between any two models, at a cost that does not grow with the model.
const WHOLE: u64 = 4 << 20;
const SAMPLE: u64 = 1 << 20;

fn fingerprint_file(path: &Path, hasher: &mut Sha256) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = fs::File::open(path)?;
    let size = file.metadata()?.len();
    hasher.update(size.to_le_bytes());
    if size <= WHOLE {
        let mut bytes = Vec::with_capacity(size as usize);
        file.read_to_end(&mut bytes)?;
        hasher.update(&bytes);
        return Ok(());
    }
    let mut sample = vec![0u8; SAMPLE as usize];
    file.read_exact(&mut sample)?;
    hasher.update(&sample);
    file.seek(SeekFrom::Start(size - SAMPLE))?;
    file.read_exact(&mut sample)?;
    hasher.update(&sample);
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(dir: &Path, weights: &[u8]) {
        fs::write(dir.join("config.json"), "{}").unwrap();
        fs::write(dir.join("model.safetensors"), weights).unwrap();
    }

    #[test]
    fn embeddings_round_trip_per_model() {
        let root = tempfile::tempdir().unwrap();
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        model(one.path(), b"weights one");
        model(two.path(), b"weights two");
        let first = DiskCache::open(root.path(), one.path(), 3).unwrap();
        let second = DiskCache::open(root.path(), two.path(), 3).unwrap();
        assert_ne!(first.dir(), second.dir(), "another model, another folder");
        let key = [7u8; 32];
        assert_eq!(first.get(&key), None);
        first.put(&key, &[0.5, -1.0, 1e-8]);
        assert_eq!(first.get(&key), Some(vec![0.5, -1.0, 1e-8]));
        assert_eq!(second.get(&key), None);
        // The same model opened again (another run) finds it.
        let again = DiskCache::open(root.path(), one.path(), 3).unwrap();
        assert_eq!(again.get(&key), Some(vec![0.5, -1.0, 1e-8]));
        // A damaged entry is a miss, and is written again.
        fs::write(first.path(&key), b"short").unwrap();
        assert_eq!(first.get(&key), None);
        first.put(&key, &[1.0, 2.0, 3.0]);
        assert_eq!(first.get(&key), Some(vec![1.0, 2.0, 3.0]));
        assert_eq!(first.writes_failed(), 0);
        let leftovers: Vec<_> = fs::read_dir(first.path(&key).parent().unwrap())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary files left");
    }

    /// Whatever an attacker who can write the cache puts at an entry's place is
    /// rejected (counted), never read past its size, never waited on, and is
    /// replaced by the right entry: a link to `/dev/zero` (took 9 GB), a FIFO
    /// (hung `check`), another text's entry copied over (turned a FAIL into a
    /// PASS), an entry of another model, and a flipped bit.
    /// What is planted at an entry's place, and how.
    type Plant<'a> = (&'a str, Box<dyn Fn() + 'a>);

    #[cfg(unix)]
    #[test]
    fn entries_that_are_not_their_texts_are_rejected_and_written_again() {
        let root = tempfile::tempdir().unwrap();
        let (weights, other_weights) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        model(weights.path(), b"w");
        model(other_weights.path(), b"w2");
        let cache = DiskCache::open(root.path(), weights.path(), 2).unwrap();
        let other_model = DiskCache::open(root.path(), other_weights.path(), 2).unwrap();
        let (key, other) = ([1u8; 32], [2u8; 32]);
        cache.put(&other, &[9.0, 9.0]);
        other_model.put(&key, &[8.0, 8.0]);
        let place = cache.path(&key);
        fs::create_dir_all(place.parent().unwrap()).unwrap();
        let plants: Vec<Plant<'_>> = vec![
            (
                "a link to /dev/zero",
                Box::new(|| std::os::unix::fs::symlink("/dev/zero", &place).unwrap()),
            ),
            (
                "a FIFO",
                Box::new(|| {
                    assert!(std::process::Command::new("mkfifo")
                        .arg(&place)
                        .status()
                        .unwrap()
                        .success());
                }),
            ),
            (
                "another text's entry",
                Box::new(|| {
                    fs::copy(cache.path(&other), &place).unwrap();
                }),
            ),
            (
                "another model's entry",
                Box::new(|| {
                    fs::copy(other_model.path(&key), &place).unwrap();
                }),
            ),
            (
                "a flipped bit",
                Box::new(|| {
                    cache.put(&key, &[1.0, 2.0]);
                    let mut bytes = fs::read(&place).unwrap();
                    bytes[MAGIC.len() + 32 + FINGERPRINT] ^= 1;
                    fs::write(&place, bytes).unwrap();
                }),
            ),
        ];
        for (n, (what, plant)) in plants.iter().enumerate() {
            let _ = fs::remove_file(&place);
            plant();
            assert_eq!(cache.get(&key), None, "{what}");
            assert_eq!(cache.rejected(), n as u64 + 1, "{what}");
            cache.put(&key, &[1.0, 2.0]);
            assert_eq!(cache.get(&key), Some(vec![1.0, 2.0]), "{what}");
            assert!(fs::symlink_metadata(&place).unwrap().is_file(), "{what}");
        }
        assert_eq!(cache.writes_failed(), 0);
    }

    #[test]
    fn large_weights_are_fingerprinted_by_size_and_both_ends() {
        let root = tempfile::tempdir().unwrap();
        let dir_of = |weights: &[u8]| {
            let model_dir = tempfile::tempdir().unwrap();
            model(model_dir.path(), weights);
            DiskCache::open(root.path(), model_dir.path(), 3)
                .unwrap()
                .dir()
                .to_path_buf()
        };
        let weights = vec![7u8; 5 << 20];
        let base = dir_of(&weights);
        let mut last = weights.clone();
        *last.last_mut().unwrap() = 8;
        let mut first = weights.clone();
        first[0] = 8;
        let mut longer = weights.clone();
        longer.push(7);
        for other in [&last, &first, &longer] {
            assert_ne!(dir_of(other), base);
        }
        // The middle is not read (the cost stays flat however large the model).
        let mut middle = weights.clone();
        middle[2 << 20] = 8;
        assert_eq!(dir_of(&middle), base);
    }

    #[test]
    fn a_cache_that_cannot_be_written_is_counted_not_fatal() {
        let root = tempfile::tempdir().unwrap();
        let weights = tempfile::tempdir().unwrap();
        model(weights.path(), b"w");
        // A file where the cache's folder should be.
        fs::write(root.path().join("embeddings"), "not a folder").unwrap();
        let cache = DiskCache::open(root.path(), weights.path(), 2).unwrap();
        cache.put(&[1u8; 32], &[1.0, 2.0]);
        assert_eq!(cache.writes_failed(), 1);
        assert_eq!(cache.get(&[1u8; 32]), None);
    }
}
