//! A pack's revision: the hash of the files it is made of and of the run's overrides.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::LoadOptions;
use crate::files::{PackFiles, MAX_PACK_FILE_BYTES};

/// Hash of the pack as 16 hex digits: every regular file under the pack folder
/// (paths and contents, in sorted order; hidden entries and the top-level
/// README.md skipped; links not followed, so a link loop or a link to `/` costs
/// nothing), every file the pack read through a link or from an allowed path,
/// and the run's overrides. A file above [`MAX_PACK_FILE_BYTES`] that the pack
/// did not read (it cannot: no pack file may be that large) counts by its name,
/// length and first and last 64 KiB ([`hash_unread`]): a 4 GiB file left in the
/// folder costs microseconds, not a read of 4 GiB.
pub(super) fn revision(dir: &Path, files: &PackFiles, options: &LoadOptions) -> String {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            // Hidden entries, and the pack's README (documentation that cannot change
            // any result), are not part of the revision.
            if name.starts_with('.') || (folder == dir && name == "readme.md") {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(kind) if kind.is_file() => found.push(entry.path()),
                // Links are hashed below if the pack used what they point to;
                // devices, FIFOs and sockets are never read.
                _ => {}
            }
        }
    }
    found.sort();
    let mut hasher = Sha256::new();
    let mut hashed = BTreeSet::new();
    let used: BTreeSet<_> = files.used().into_iter().collect();
    for file in found {
        let relative = file.strip_prefix(dir).unwrap_or(&file);
        let at = files.root().join(relative);
        let name = relative.to_string_lossy().replace('\\', "/");
        if used.contains(&at) {
            hash_file(&mut hasher, &name, &file);
        } else {
            hash_unread(&mut hasher, &name, &file);
        }
        hashed.insert(at);
    }
    for used in used {
        if !hashed.contains(&used) {
            hasher.update(b"--used ");
            hash_file(&mut hasher, &files.revision_name(&used), &used);
        }
    }
    for o in &options.overrides {
        hasher.update(b"--set ");
        hasher.update(o.component.as_bytes());
        hasher.update(b".");
        hasher.update(o.key.as_bytes());
        hasher.update(b"=");
        hasher.update(o.value.to_string().as_bytes());
    }
    let digest = hasher.finalize();
    digest[..8]
        .iter()
        .fold(String::with_capacity(16), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// Bytes read from each end of a large file the pack did not read.
const UNREAD_ENDS: u64 = 64 * 1024;

/// Adds a file the pack did not read to the revision hash: as [`hash_file`] for a
/// file within [`MAX_PACK_FILE_BYTES`] (so revisions stay what they were), else
/// its name, its length and its first and last [`UNREAD_ENDS`] bytes.
fn hash_unread(hasher: &mut Sha256, name: &str, path: &Path) {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.len() <= MAX_PACK_FILE_BYTES {
        hash_file(hasher, name, path);
        return;
    }
    hasher.update(b"--unread ");
    hasher.update(name.as_bytes());
    hasher.update([0]);
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => hasher.update(meta.len().to_le_bytes()),
        _ => return,
    }
    let mut buffer = vec![0u8; UNREAD_ENDS as usize];
    for from in [
        SeekFrom::Start(0),
        SeekFrom::End(-UNREAD_ENDS.cast_signed()),
    ] {
        if file.seek(from).is_err() {
            return;
        }
        let mut read = 0;
        while read < buffer.len() {
            match file.read(&mut buffer[read..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
        hasher.update(&buffer[..read]);
    }
}

/// Adds a file's name and content to the revision hash, streaming the content.
pub(super) fn hash_file(hasher: &mut Sha256, name: &str, path: &Path) {
    use std::io::Read;
    hasher.update(name.as_bytes());
    hasher.update([0]);
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    let Ok(meta) = file.metadata() else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    hasher.update(meta.len().to_le_bytes());
    let mut buffer = vec![0u8; 1 << 16];
    let mut left = meta.len();
    while left > 0 {
        match file.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
                hasher.update(&buffer[..n]);
                left -= n as u64;
            }
        }
    }
}
