//! Bundles: one or more packs in one archive, with a manifest that lists each
//! file's SHA-256 and each pack's revision, optionally signed (Ed25519) over
//! the manifest's bytes, which cover every file through their digests.
//!
//! A bundle is a gzip-compressed tar archive, reproducible (the same packs
//! give the same bytes: files in path order, no times, owners or modes of the
//! machine that built it):
//!
//! ```text
//! .manifest.json        {"format": "tribunal-bundle/1", "revision", "tribunal", "packs", "files"}
//! .signatures.json      {"signatures": [{"keyid", "algorithm": "ed25519", "signature"}]}  (once signed)
//! ksi-emission/pack.yaml
//! ksi-emission/components/…
//! ```
//!
//! Reading one checks everything before anything is used: every entry a
//! regular file at a plain relative path, listed in the manifest with its
//! size and digest, nothing listed missing, nothing unlisted, the Tribunal
//! version in the manifest's range, the unpacked size within a bound; and,
//! when keys are trusted, a signature by one of them.

mod keys;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use keys::{PublicKey, SecretKey};

/// The manifest's name in the archive.
pub const MANIFEST_NAME: &str = ".manifest.json";
/// The signatures' name in the archive.
pub const SIGNATURES_NAME: &str = ".signatures.json";
/// The format this engine writes and reads.
const FORMAT: &str = "tribunal-bundle/1";
/// The most a bundle may hold unpacked (256 MiB), and files (10,000).
pub const MAX_UNPACKED_BYTES: u64 = 256 << 20;
const MAX_FILES: usize = 10_000;

/// What a bundle's manifest says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `tribunal-bundle/1`.
    pub format: String,
    /// The bundle's revision: 16 hex digits of a SHA-256 over its packs'
    /// revisions and its files' digests.
    pub revision: String,
    /// The Tribunal versions it needs (`>=0.1.0, <0.2.0`).
    pub tribunal: String,
    /// Its packs, in order.
    pub packs: Vec<BundledPack>,
    /// Its files, in path order.
    pub files: Vec<BundledFile>,
}

/// A pack in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundledPack {
    /// Its name (its address on a server).
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its content revision, as `Pack::revision` gives it.
    pub revision: String,
    /// Its folder in the archive.
    pub dir: String,
}

/// A file in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundledFile {
    /// Its path in the archive (`/`-separated, relative).
    pub path: String,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// A plugin library (native code: loaded only from a signed bundle,
    /// with consent to plugins).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plugin: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Signatures {
    signatures: Vec<SignatureEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureEntry {
    keyid: String,
    algorithm: String,
    signature: String,
}

/// Why a bundle was not built, read, signed or trusted. Nothing of a bundle
/// that fails is used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// A pack could not go into a bundle.
    #[error("{0}")]
    Build(String),
    /// Not a bundle, or a damaged one.
    #[error("not a valid bundle: {0}")]
    Invalid(String),
    /// Its files do not match its manifest.
    #[error("the bundle was altered: {0}")]
    Tampered(String),
    /// A signature that does not verify.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// No signature by a trusted key.
    #[error("not signed by a trusted key: {0}")]
    Untrusted(String),
    /// A key file that cannot be read.
    #[error("{0}")]
    Key(String),
}

impl BundleError {
    /// The same error, its message starting with `place` (a file, a URL).
    #[must_use]
    pub fn at(self, place: &str) -> Self {
        let at = |message: String| format!("{place}: {message}");
        match self {
            Self::Build(m) => Self::Build(at(m)),
            Self::Invalid(m) => Self::Invalid(at(m)),
            Self::Tampered(m) => Self::Tampered(at(m)),
            Self::BadSignature(m) => Self::BadSignature(at(m)),
            Self::Untrusted(m) => Self::Untrusted(at(m)),
            Self::Key(m) => Self::Key(at(m)),
        }
    }

    /// Its stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Build(_) => "bundle.build",
            Self::Invalid(_) => "bundle.invalid",
            Self::Tampered(_) => "bundle.tampered",
            Self::BadSignature(_) => "bundle.bad-signature",
            Self::Untrusted(_) => "bundle.untrusted",
            Self::Key(_) => "bundle.key",
        }
    }
}

/// A bundle read and checked: its manifest, signatures and files.
#[derive(Clone)]
pub struct Bundle {
    manifest: Manifest,
    manifest_bytes: Vec<u8>,
    signatures: Vec<SignatureEntry>,
    files: BTreeMap<String, Vec<u8>>,
}

impl std::fmt::Debug for Bundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bundle")
            .field("revision", &self.manifest.revision)
            .field("packs", &self.manifest.packs)
            .field("signatures", &self.signatures.len())
            .finish_non_exhaustive()
    }
}

impl Bundle {
    /// The bundle of `packs` whose files (under each pack's `dir/`) are
    /// `files`: its bytes.
    pub(crate) fn assemble(packs: Vec<BundledPack>, files: BTreeMap<String, Vec<u8>>) -> Vec<u8> {
        let listed = files
            .iter()
            .map(|(path, bytes)| BundledFile {
                path: path.clone(),
                sha256: hex(&Sha256::digest(bytes)),
                size: bytes.len() as u64,
                plugin: is_library(path),
            })
            .collect::<Vec<_>>();
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            revision: revision(&packs, &listed),
            tribunal: version_range(),
            packs,
            files: listed,
        };
        let manifest_bytes = manifest_text(&manifest);
        Self {
            manifest,
            manifest_bytes,
            signatures: Vec::new(),
            files,
        }
        .write()
    }

    /// Reads and checks a bundle (see the module's documentation), holding
    /// at most `max_unpacked` bytes unpacked.
    pub fn read(bytes: &[u8], max_unpacked: u64) -> Result<Self, BundleError> {
        let entries = unpack_entries(bytes, max_unpacked)?;
        let mut files = BTreeMap::new();
        let mut manifest_bytes = None;
        let mut signatures_bytes = None;
        for (path, data) in entries {
            match path.as_str() {
                MANIFEST_NAME => manifest_bytes = Some(data),
                SIGNATURES_NAME => signatures_bytes = Some(data),
                _ => {
                    files.insert(path, data);
                }
            }
        }
        let manifest_bytes = manifest_bytes
            .ok_or_else(|| BundleError::Invalid(format!("it has no {MANIFEST_NAME}")))?;
        let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
            .map_err(|err| BundleError::Invalid(format!("{MANIFEST_NAME}: {err}")))?;
        if manifest.format != FORMAT {
            return Err(BundleError::Invalid(format!(
                "its format is `{}`; this Tribunal reads `{FORMAT}`",
                manifest.format
            )));
        }
        check_version(&manifest.tribunal)?;
        check_files(&manifest, &files)?;
        let signatures = match signatures_bytes {
            None => Vec::new(),
            Some(bytes) => {
                serde_json::from_slice::<Signatures>(&bytes)
                    .map_err(|err| BundleError::Invalid(format!("{SIGNATURES_NAME}: {err}")))?
                    .signatures
            }
        };
        Ok(Self {
            manifest,
            manifest_bytes,
            signatures,
            files,
        })
    }

    /// Reads and checks the bundle file at `path` (see [`read`](Self::read)),
    /// with the default bound ([`MAX_UNPACKED_BYTES`]).
    pub fn read_file(path: &Path) -> Result<Self, BundleError> {
        let bytes = crate::files::read_regular_bytes(path, MAX_UNPACKED_BYTES)
            .map_err(|err| BundleError::Invalid(err.to_string()))?;
        Self::read(&bytes, MAX_UNPACKED_BYTES).map_err(|err| err.at(&path.display().to_string()))
    }

    /// Whether `path` is a file that looks like a bundle (it starts with
    /// gzip's magic number): what is read as a bundle where a pack is named.
    pub fn is_bundle_file(path: &Path) -> bool {
        let mut magic = [0u8; 2];
        path.is_file()
            && std::fs::File::open(path)
                .and_then(|mut file| file.read_exact(&mut magic))
                .is_ok()
            && looks_like_bundle(&magic)
    }

    /// What its manifest says.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Its revision.
    pub fn revision(&self) -> &str {
        &self.manifest.revision
    }

    /// Whether it holds a plugin library.
    pub fn has_plugins(&self) -> bool {
        self.manifest.files.iter().any(|f| f.plugin)
    }

    /// Whether it carries a signature.
    pub fn is_signed(&self) -> bool {
        !self.signatures.is_empty()
    }

    /// The id of the trusted key whose signature verifies it. A signature by
    /// a trusted key that does not verify is an error, whatever else signed.
    pub fn verify(&self, trusted: &[PublicKey]) -> Result<String, BundleError> {
        use base64::Engine as _;
        if self.signatures.is_empty() {
            return Err(BundleError::Untrusted(
                "the bundle is not signed (tribunal bundle sign)".to_owned(),
            ));
        }
        let mut signers = Vec::new();
        for signature in &self.signatures {
            signers.push(signature.keyid.clone());
            let Some(key) = trusted.iter().find(|k| k.id() == signature.keyid) else {
                continue;
            };
            if signature.algorithm != "ed25519" {
                return Err(BundleError::BadSignature(format!(
                    "algorithm `{}` (only ed25519 is read)",
                    signature.algorithm
                )));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&signature.signature)
                .unwrap_or_default();
            if !key.verifies(&self.manifest_bytes, &bytes) {
                return Err(BundleError::BadSignature(format!(
                    "the signature of key {} does not match the bundle's manifest",
                    signature.keyid
                )));
            }
            return Ok(signature.keyid.clone());
        }
        let trusted: Vec<String> = trusted.iter().map(PublicKey::id).collect();
        Err(BundleError::Untrusted(format!(
            "signed by {} ; trusted: {}",
            signers.join(", "),
            if trusted.is_empty() {
                "none".to_owned()
            } else {
                trusted.join(", ")
            }
        )))
    }

    /// The bundle's bytes with `key`'s signature (replacing an earlier one
    /// by the same key).
    pub fn sign(&self, key: &SecretKey) -> Vec<u8> {
        use base64::Engine as _;
        let keyid = key.public().id();
        let mut signed = self.clone();
        signed.signatures.retain(|s| s.keyid != keyid);
        signed.signatures.push(SignatureEntry {
            keyid,
            algorithm: "ed25519".to_owned(),
            signature: base64::engine::general_purpose::STANDARD
                .encode(key.sign(&self.manifest_bytes)),
        });
        signed.signatures.sort_by(|a, b| a.keyid.cmp(&b.keyid));
        signed.write()
    }

    /// Writes its files under `dir` (which must be empty or new); returns
    /// each pack's folder there, in order.
    pub fn unpack(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        for (path, data) in &self.files {
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)?;
            file.write_all(data)?;
        }
        Ok(self
            .manifest
            .packs
            .iter()
            .map(|pack| dir.join(&pack.dir))
            .collect())
    }

    /// The archive's bytes: reproducible.
    fn write(&self) -> Vec<u8> {
        let mut archive = tar::Builder::new(Vec::new());
        let signatures = (!self.signatures.is_empty()).then(|| {
            let mut text = serde_json::to_vec_pretty(&Signatures {
                signatures: self.signatures.clone(),
            })
            .unwrap_or_default();
            text.push(b'\n');
            text
        });
        let entries = std::iter::once((MANIFEST_NAME, &self.manifest_bytes))
            .chain(signatures.as_ref().map(|s| (SIGNATURES_NAME, s)))
            .chain(self.files.iter().map(|(p, d)| (p.as_str(), d)));
        for (path, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            // (Writing to memory cannot fail; a path was checked when read.)
            let _ = archive.append_data(&mut header, path, data.as_slice());
        }
        let tar = archive.into_inner().unwrap_or_default();
        let mut gz = flate2::GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), flate2::Compression::default());
        let _ = gz.write_all(&tar);
        gz.finish().unwrap_or_default()
    }
}

/// Whether `bytes` look like a bundle (gzip's magic number).
pub fn looks_like_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The pack folder, canonical.
pub(crate) fn pack_root(dir: &Path) -> Result<PathBuf, BundleError> {
    let dir = if dir.is_file() {
        dir.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        dir.to_path_buf()
    };
    std::fs::canonicalize(&dir)
        .map_err(|err| BundleError::Build(format!("{}: {err}", dir.display())))
}

/// Every file under `folder` (in the pack folder `root`), under `prefix/`:
/// names starting with `.` left out, a link refused.
pub(crate) fn collect(
    root: &Path,
    folder: &Path,
    prefix: &str,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), BundleError> {
    let failed = |err: std::io::Error| BundleError::Build(format!("{}: {err}", folder.display()));
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .map_err(failed)?
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(BundleError::Build(format!(
                "{}: a file name that is not UTF-8",
                entry.path().display()
            )));
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(failed)?;
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let archived = format!("{prefix}/{relative}");
        if kind.is_symlink() {
            return Err(BundleError::Build(format!(
                "{} is a link: a bundle holds files only (copy what it points to)",
                path.display()
            )));
        } else if kind.is_dir() {
            collect(root, &path, prefix, files)?;
        } else if kind.is_file() {
            if files.len() >= MAX_FILES {
                return Err(BundleError::Build(format!("more than {MAX_FILES} files")));
            }
            let data = std::fs::read(&path).map_err(failed)?;
            files.insert(archived, data);
        }
    }
    Ok(())
}

/// Whether a file is a native library (by its name).
fn is_library(path: &str) -> bool {
    [".so", ".dylib", ".dll"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// The bundle's revision: over its packs' revisions and its files' digests.
fn revision(packs: &[BundledPack], files: &[BundledFile]) -> String {
    let mut hasher = Sha256::new();
    for pack in packs {
        for part in [&pack.name, &pack.version, &pack.revision, &pack.dir] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        hasher.update(b"\n");
    }
    for file in files {
        hasher.update(file.path.as_bytes());
        hasher.update([0]);
        hasher.update(file.sha256.as_bytes());
        hasher.update([u8::from(file.plugin)]);
        hasher.update(b"\n");
    }
    hex(&hasher.finalize()[..8])
}

/// The manifest's bytes as written (what a signature signs).
fn manifest_text(manifest: &Manifest) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(manifest).unwrap_or_default();
    text.push(b'\n');
    text
}

/// This engine's version: (major, minor, patch).
fn this_version() -> (u64, u64, u64) {
    parse_version(env!("CARGO_PKG_VERSION")).unwrap_or((0, 0, 0))
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The versions that read what this one writes: this minor (0.x) or major.
fn version_range() -> String {
    let (major, minor, _) = this_version();
    let next = if major == 0 {
        format!("0.{}.0", minor + 1)
    } else {
        format!("{}.0.0", major + 1)
    };
    format!(">={major}.{minor}.0, <{next}")
}

/// Whether this engine is in `range` (`>=A.B.C, <D.E.F`).
fn check_version(range: &str) -> Result<(), BundleError> {
    let now = this_version();
    for bound in range.split(',') {
        let bound = bound.trim();
        let (holds, version) = if let Some(v) = bound.strip_prefix(">=") {
            (parse_version(v).map(|v| now >= v), v)
        } else if let Some(v) = bound.strip_prefix('<') {
            (parse_version(v).map(|v| now < v), v)
        } else {
            (None, bound)
        };
        match holds {
            Some(true) => {}
            Some(false) => {
                return Err(BundleError::Invalid(format!(
                    "it needs Tribunal {range}; this is {}",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            None => {
                return Err(BundleError::Invalid(format!(
                    "its Tribunal range `{range}` cannot be read (at `{version}`)"
                )))
            }
        }
    }
    Ok(())
}

/// The archive's entries: regular files at plain relative paths, each once,
/// within the bounds.
fn unpack_entries(bytes: &[u8], max_unpacked: u64) -> Result<Vec<(String, Vec<u8>)>, BundleError> {
    if !looks_like_bundle(bytes) {
        return Err(BundleError::Invalid(
            "it is not gzip-compressed (a bundle is a .tar.gz `tribunal bundle build` writes)"
                .to_owned(),
        ));
    }
    let invalid = |err: std::io::Error| BundleError::Invalid(err.to_string());
    // The unpacked tar, bounded (a small archive may unpack to gigabytes).
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(max_unpacked.saturating_add(1))
        .read_to_end(&mut tar)
        .map_err(invalid)?;
    if tar.len() as u64 > max_unpacked {
        return Err(BundleError::Invalid(format!(
            "it unpacks to more than {max_unpacked} bytes"
        )));
    }
    let mut archive = tar::Archive::new(tar.as_slice());
    let mut entries = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for entry in archive.entries().map_err(invalid)? {
        let mut entry = entry.map_err(invalid)?;
        let path = entry.path().map_err(invalid)?.into_owned();
        let shown = path.display().to_string();
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            tar::EntryType::Directory => continue,
            other => {
                return Err(BundleError::Invalid(format!(
                    "{shown} is not a regular file ({other:?})"
                )))
            }
        }
        let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
        let Some(text) = path.to_str().filter(|_| plain && !shown.is_empty()) else {
            return Err(BundleError::Invalid(format!(
                "{shown}: not a plain relative path"
            )));
        };
        let text = text.to_owned();
        if !seen.insert(text.clone()) {
            return Err(BundleError::Invalid(format!("{text} is in it twice")));
        }
        if entries.len() > MAX_FILES {
            return Err(BundleError::Invalid(format!("more than {MAX_FILES} files")));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(invalid)?;
        entries.push((text, data));
    }
    Ok(entries)
}

/// Every file listed, as listed; nothing unlisted; the revision right.
fn check_files(manifest: &Manifest, files: &BTreeMap<String, Vec<u8>>) -> Result<(), BundleError> {
    for listed in &manifest.files {
        let Some(data) = files.get(&listed.path) else {
            return Err(BundleError::Tampered(format!(
                "{} is listed in the manifest and missing",
                listed.path
            )));
        };
        if data.len() as u64 != listed.size || hex(&Sha256::digest(data)) != listed.sha256 {
            return Err(BundleError::Tampered(format!(
                "{} does not match its digest in the manifest",
                listed.path
            )));
        }
        if listed.plugin != is_library(&listed.path) {
            return Err(BundleError::Tampered(format!(
                "{} is listed as {} a plugin library",
                listed.path,
                if listed.plugin { "" } else { "not" }
            )));
        }
    }
    let listed: std::collections::BTreeSet<&str> =
        manifest.files.iter().map(|f| f.path.as_str()).collect();
    if let Some(unlisted) = files.keys().find(|path| !listed.contains(path.as_str())) {
        return Err(BundleError::Tampered(format!(
            "{unlisted} is not listed in the manifest"
        )));
    }
    for pack in &manifest.packs {
        let yaml = format!("{}/pack.yaml", pack.dir);
        if !files.contains_key(&yaml) || pack.dir.contains('/') || pack.dir.starts_with('.') {
            return Err(BundleError::Invalid(format!(
                "pack `{}` has no {yaml}",
                pack.name
            )));
        }
    }
    if revision(&manifest.packs, &manifest.files) != manifest.revision {
        return Err(BundleError::Tampered(
            "its revision does not match its packs and files".to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
