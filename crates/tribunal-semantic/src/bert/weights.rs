//! Reading `model.safetensors`: its header's table of tensors, each tensor
//! widened to f32 as it is taken, and the layers' weights by name.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{Dense, Norm};

/// The largest `model.safetensors` header read (its JSON table of tensors).
const MAX_HEADER_BYTES: u64 = 100 << 20;

/// The element types a tensor may be stored in, each widened to f32.
#[derive(Debug, Clone, Copy)]
enum Element {
    F32,
    F16,
    Bf16,
}

impl Element {
    fn parse(dtype: &str) -> Result<Self, String> {
        match dtype {
            "F32" => Ok(Self::F32),
            "F16" => Ok(Self::F16),
            "BF16" => Ok(Self::Bf16),
            other => Err(format!("element type {other} (F32, F16 or BF16 expected)")),
        }
    }

    /// Bytes per value.
    fn width(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
        }
    }

    /// Appends the values of `bytes` (little-endian, whole values) as f32.
    fn widen(self, bytes: &[u8], into: &mut Vec<f32>) {
        match self {
            Self::F32 => into.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ),
            Self::F16 => into.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()),
            ),
            Self::Bf16 => into.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()),
            ),
        }
    }
}

/// A tensor's entry in the header: element type, shape, and where its bytes are.
#[derive(Debug, Deserialize)]
struct TensorEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// The tensors of a `model.safetensors` file, each read from the file straight
/// into its f32 values when asked for: the weights are never held twice, nor
/// the file whole.
pub(super) struct Weights {
    file: std::fs::File,
    /// Where the tensors' bytes start (after the header) and the file's length.
    data_start: u64,
    file_len: u64,
    entries: HashMap<String, TensorEntry>,
    /// `bert.` for checkpoints saved from `BertForX`, else empty.
    prefix: &'static str,
}

impl Weights {
    /// Reads the header of the safetensors file at `path`: an 8-byte little-endian
    /// length, then that many bytes of JSON naming every tensor.
    pub(super) fn open(path: &Path) -> Result<Self, String> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let file_len = file.metadata().map_err(|e| e.to_string())?.len();
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|_| "not a safetensors file (shorter than its header)".to_owned())?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER_BYTES || 8 + header_len > file_len {
            return Err(format!(
                "not a safetensors file (a header of {header_len} bytes in a file of {file_len})"
            ));
        }
        let mut header = vec![0u8; usize::try_from(header_len).map_err(|e| e.to_string())?];
        file.read_exact(&mut header).map_err(|e| e.to_string())?;
        let mut table: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| format!("not a safetensors file (its header: {e})"))?;
        table.remove("__metadata__");
        let entries = table
            .into_iter()
            .map(|(name, entry)| {
                serde_json::from_value(entry)
                    .map(|entry| (name.clone(), entry))
                    .map_err(|e| format!("tensor `{name}` in the header: {e}"))
            })
            .collect::<Result<HashMap<String, TensorEntry>, String>>()?;
        // Checkpoints saved from `BertForX` prefix every tensor with `bert.`.
        let prefix = if entries.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        Ok(Self {
            file,
            data_start: 8 + header_len,
            file_len,
            entries,
            prefix,
        })
    }

    /// The first of `names` present, as f32 values row after row, checked to
    /// have `shape`.
    pub(super) fn take(&mut self, names: &[String], shape: &[usize]) -> Result<Vec<f32>, String> {
        for name in names {
            let full = format!("{}{name}", self.prefix);
            if let Some(entry) = self.entries.remove(&full) {
                return self
                    .read(&entry, shape)
                    .map_err(|e| format!("tensor `{full}`: {e}"));
            }
        }
        Err(format!("tensor `{}{}` is missing", self.prefix, names[0]))
    }

    fn read(&mut self, entry: &TensorEntry, shape: &[usize]) -> Result<Vec<f32>, String> {
        use std::io::{Read, Seek, SeekFrom};
        if entry.shape != shape {
            return Err(format!("shape {:?}, expected {shape:?}", entry.shape));
        }
        let element = Element::parse(&entry.dtype)?;
        let width = element.width();
        // The file must hold every byte before any is allocated for.
        let count = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or("its shape overflows")?;
        let [start, end] = entry.data_offsets;
        let bytes = end
            .checked_sub(start)
            .ok_or("its data ends before it starts")?;
        let wanted = count.checked_mul(width).and_then(|n| u64::try_from(n).ok());
        if wanted != Some(bytes) || self.data_start.saturating_add(end) > self.file_len {
            return Err(format!(
                "its data ({start}..{end}) does not hold {count} {} values in the file",
                entry.dtype
            ));
        }
        self.file
            .seek(SeekFrom::Start(self.data_start + start))
            .map_err(|e| e.to_string())?;
        // Read in blocks, so no second copy of a large tensor is ever held.
        let mut values = Vec::with_capacity(count);
        let mut block = vec![0u8; 1 << 16];
        let mut left = count * width;
        while left > 0 {
            let chunk = &mut block[..left.min(1 << 16)];
            self.file.read_exact(chunk).map_err(|e| e.to_string())?;
            element.widen(chunk, &mut values);
            left -= chunk.len();
        }
        Ok(values)
    }

    pub(super) fn dense(
        &mut self,
        at: &str,
        inputs: usize,
        outputs: usize,
    ) -> Result<Dense, String> {
        Ok(Dense {
            weight: self.take(&[format!("{at}.weight")], &[outputs, inputs])?,
            panels: None,
            bias: self.take(&[format!("{at}.bias")], &[outputs])?,
            inputs,
            outputs,
        })
    }

    /// A layer norm's scale and shift (`weight`/`bias`, or the older
    /// `gamma`/`beta`).
    pub(super) fn norm(&mut self, at: &str, size: usize, eps: f64) -> Result<Norm, String> {
        Ok(Norm {
            weight: self.take(&[format!("{at}.weight"), format!("{at}.gamma")], &[size])?,
            bias: self.take(&[format!("{at}.bias"), format!("{at}.beta")], &[size])?,
            eps: eps as f32,
        })
    }
}
