//! Reading the files a pack names, treating the pack as untrusted.
//!
//! Every file a pack uses (manifests, scripts, schemas, strategy maps, test files)
//! must resolve, after following links, inside the pack's folder or a folder the
//! user allowed on the command line (`--allow-path`). Only regular files are read,
//! each under a size cap, so a link to `/dev/zero` or a FIFO cannot exhaust memory
//! or hang a load. Errors quote at most a short excerpt of what they read, and
//! nothing of a file outside the pack.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

mod owned;

pub use owned::{create_owned_dir, sweep_abandoned, OwnedDir, OWNER_LOCK};

/// Largest file a pack may use (a manifest, script, schema, strategy map or test file).
pub const MAX_PACK_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Largest file named on the command line as a value (`--set k=@file`, `--expected`).
pub const MAX_VALUE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Characters of a quoted value an error message may show.
pub const MAX_EXCERPT_CHARS: usize = 40;

/// Why a file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("`{shown}` is outside the pack folder {root} (after following links); a pack reads only its own files unless the command line allows more with --allow-path DIR")]
    OutsidePack { shown: String, root: String },
    #[error("`{shown}` is {kind}, not a regular file; only regular files are read")]
    NotRegular { shown: String, kind: &'static str },
    #[error("`{shown}` is {size} bytes, above the limit of {limit} bytes")]
    TooLarge {
        shown: String,
        size: u64,
        limit: u64,
    },
    #[error("cannot read `{shown}`: {source}")]
    Io { shown: String, source: io::Error },
    #[error("`{shown}` is not valid UTF-8 (at line {line})")]
    NotUtf8 { shown: String, line: usize },
}

/// Reads the regular file at `path` (following links) as UTF-8 text, refusing
/// devices, FIFOs, sockets and folders before opening them, and anything above
/// `limit` bytes.
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, FileError> {
    read_text_named(path, &path.display().to_string(), limit)
}

/// The bytes of the regular file at `path`, at most `limit` of them (see
/// [`read_regular_text`]).
pub fn read_regular_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    read_bytes(path, &path.display().to_string(), limit)
}

/// Reads the regular file at `path` (see [`read_regular_text`]), with errors
/// naming the file `shown` (as its user wrote it).
fn read_bytes(path: &Path, shown: &str, limit: u64) -> Result<Vec<u8>, FileError> {
    let shown = || shown.to_owned();
    let io_error = |source| FileError::Io {
        shown: shown(),
        source,
    };
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = fs::metadata(path).map_err(io_error)?;
    check_regular(&meta, limit, &shown)?;
    let file = File::open(path).map_err(io_error)?;
    // Checked again on what was opened, in case the path changed in between.
    check_regular(&file.metadata().map_err(io_error)?, limit, &shown)?;
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            shown: shown(),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// [`read_bytes`], as UTF-8 text.
fn read_text_named(path: &Path, shown: &str, limit: u64) -> Result<String, FileError> {
    String::from_utf8(read_bytes(path, shown, limit)?).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        FileError::NotUtf8 {
            shown: shown.to_owned(),
            line: err.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1,
        }
    })
}

fn check_regular(
    meta: &fs::Metadata,
    limit: u64,
    shown: &dyn Fn() -> String,
) -> Result<(), FileError> {
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            shown: shown(),
            kind: file_kind(meta),
        });
    }
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            shown: shown(),
            size: meta.len(),
            limit,
        });
    }
    Ok(())
}

fn file_kind(meta: &fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The folders a pack may read from, and the files it has read (for its revision).
#[derive(Debug, Clone)]
pub struct PackFiles {
    /// The pack's folder, canonical.
    root: PathBuf,
    /// Folders (or files) the user allowed beyond the pack, canonical.
    allowed: Vec<PathBuf>,
    /// Folders the user named on the command line for a use of their own (a
    /// model folder given with `--set`), canonical: readable like `allowed`, but
    /// not places plugin libraries may come from.
    named: Vec<PathBuf>,
    /// Canonical paths of every file read through [`PackFiles::read_text`].
    used: Arc<Mutex<BTreeSet<PathBuf>>>,
}

/// A file a pack may use: where it really is, and whether that is inside the pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub canonical: PathBuf,
    pub inside_pack: bool,
}

/// The text of a file a pack uses.
#[derive(Debug, Clone)]
pub struct PackText {
    pub text: String,
    /// Whether the file is inside the pack: only then may errors quote it.
    pub inside_pack: bool,
}

impl PackFiles {
    /// Confines reads to `root` and the `allowed` paths (files or folders).
    pub fn new(root: &Path, allowed: &[PathBuf]) -> io::Result<Self> {
        let root = fs::canonicalize(root)?;
        let allowed = allowed
            .iter()
            .map(|path| {
                fs::canonicalize(path).map_err(|err| {
                    io::Error::new(
                        err.kind(),
                        format!("--allow-path {}: {err}", path.display()),
                    )
                })
            })
            .collect::<io::Result<_>>()?;
        Ok(Self {
            root,
            allowed,
            named: Vec::new(),
            used: Arc::default(),
        })
    }

    /// The pack's folder, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The paths the user allowed beyond the pack (`--allow-path`), canonical.
    pub fn allowed(&self) -> &[PathBuf] {
        &self.allowed
    }

    /// Where `path` really is, if the pack may read it. `shown` is how the pack named it.
    pub fn resolve(&self, path: &Path, shown: &str) -> Result<Resolved, FileError> {
        let canonical = fs::canonicalize(path).map_err(|source| FileError::Io {
            shown: shown.to_owned(),
            source,
        })?;
        if !self.may_contain(&canonical) {
            return Err(self.outside(shown));
        }
        let inside_pack = canonical.starts_with(&self.root);
        Ok(Resolved {
            canonical,
            inside_pack,
        })
    }

    /// Also readable: `folders` the user named on the command line for a use of
    /// their own (those that exist), which [`allowed`](Self::allowed) does not
    /// list.
    #[must_use]
    pub fn with_named(mut self, folders: impl IntoIterator<Item = PathBuf>) -> Self {
        self.named.extend(
            folders
                .into_iter()
                .filter_map(|dir| fs::canonicalize(dir).ok()),
        );
        self
    }

    /// Whether `canonical` (a real path, which need not exist) is inside the
    /// pack, an allowed folder or a folder the user named.
    pub fn may_contain(&self, canonical: &Path) -> bool {
        canonical.starts_with(&self.root)
            || self
                .allowed
                .iter()
                .chain(&self.named)
                .any(|dir| canonical.starts_with(dir))
    }

    /// Whether the pack may read `path` (which exists).
    pub fn may_read(&self, path: &Path) -> bool {
        self.resolve(path, "").is_ok()
    }

    /// Reads a file the pack names (`shown`: as the pack wrote it), confined and capped.
    pub fn read_text(&self, path: &Path, shown: &str) -> Result<PackText, FileError> {
        let resolved = self.resolve(path, shown)?;
        let text = read_text_named(&resolved.canonical, shown, MAX_PACK_FILE_BYTES)?;
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(resolved.canonical);
        Ok(PackText {
            text,
            inside_pack: resolved.inside_pack,
        })
    }

    /// Canonical paths of the files read so far.
    pub fn used(&self) -> Vec<PathBuf> {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// How a used file is named in the revision: relative to the pack, or to the
    /// allowed path it is under (so a revision does not depend on where a clone is).
    pub fn revision_name(&self, canonical: &Path) -> String {
        if let Ok(rel) = canonical.strip_prefix(&self.root) {
            return slash_path(rel);
        }
        for (index, dir) in self.allowed.iter().enumerate() {
            if let Ok(rel) = canonical.strip_prefix(dir) {
                return format!("<allowed {index}>/{}", slash_path(rel));
            }
        }
        slash_path(canonical)
    }

    /// Files matching the glob `pattern` (relative to `base`, or absolute), in sorted
    /// order. The walk does not follow a link to a folder the pack may not read, nor
    /// visit a folder twice (no loops); a match that resolves outside the readable
    /// folders (a link to a file elsewhere), or a pattern rooted outside them, is an
    /// error rather than a silent omission.
    pub fn glob(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>, GlobError> {
        let full = lexical_normalise(&base.join(pattern));
        let compiled = glob::Pattern::new(&full.to_string_lossy())?;
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        // Walk from the longest prefix without wildcards.
        let mut start = PathBuf::new();
        for component in full.components() {
            if component
                .as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '['])
            {
                break;
            }
            start.push(component);
        }
        if start.as_os_str().is_empty() {
            start.push(".");
        }
        if let Ok(real) = fs::canonicalize(&start) {
            if !self.may_read(&real) && !self.is_ancestor_of_readable(&real) {
                return Err(GlobError::Outside(self.outside(pattern)));
            }
        }
        let mut found = BTreeSet::new();
        let mut visited = BTreeSet::new();
        let mut pending = vec![(start, false)];
        while let Some((dir, through_link)) = pending.pop() {
            let Ok(real) = fs::canonicalize(&dir) else {
                continue;
            };
            // A link is followed only into a folder the pack may read; a real
            // folder above the pack only to reach it (`../pack/*.yaml`).
            let readable = self.may_read(&real);
            if !readable && (through_link || !self.is_ancestor_of_readable(&real)) {
                continue;
            }
            if !visited.insert(real) || visited.len() > MAX_GLOB_FOLDERS {
                continue;
            }
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(meta) = fs::metadata(&path) else {
                    continue;
                };
                if meta.is_dir() {
                    let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                    pending.push((path, is_link));
                } else if compiled.matches_path_with(&path, options) {
                    if !self.may_read(&path) {
                        let shown = path.strip_prefix(base).unwrap_or(&path);
                        return Err(GlobError::Outside(self.outside(&slash_path(shown))));
                    }
                    found.insert(path);
                }
            }
        }
        Ok(found.into_iter().collect())
    }

    /// The error for `shown`, a path outside what the pack may read.
    pub fn outside(&self, shown: &str) -> FileError {
        FileError::OutsidePack {
            shown: shown.to_owned(),
            root: self.root.display().to_string(),
        }
    }

    /// Whether `dir` holds the pack or an allowed path (a walk may pass through it).
    fn is_ancestor_of_readable(&self, dir: &Path) -> bool {
        self.root.starts_with(dir) || self.allowed.iter().any(|a| a.starts_with(dir))
    }
}

/// Why a glob could not be expanded.
#[derive(Debug, thiserror::Error)]
pub enum GlobError {
    #[error("bad glob: {0}")]
    Pattern(#[from] glob::PatternError),
    #[error(transparent)]
    Outside(FileError),
}

/// Folders one glob may walk through.
const MAX_GLOB_FOLDERS: usize = 100_000;

fn slash_path(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// Removes `.` components and folds `dir/..` pairs, without touching the disk.
pub fn lexical_normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A short, printable excerpt of `text`: at most [`MAX_EXCERPT_CHARS`] characters,
/// control characters escaped.
pub fn excerpt(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_EXCERPT_CHARS {
            out.push('…');
            break;
        }
        crate::text::push_printable(&mut out, c, false);
    }
    out
}

/// Shortens every quoted span (`"…"` or `` `…` ``) of an error message to an
/// excerpt, or hides it entirely when `may_quote` is false (the text came from a
/// file outside the pack).
pub fn redact_quotes(message: &str, may_quote: bool) -> String {
    let mut out = String::with_capacity(message.len().min(512));
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[open] as char;
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        let Some(close) = find_closing(after, quote) else {
            rest = after;
            continue;
        };
        let inner = &after[..close];
        if may_quote {
            out.push_str(&excerpt(inner));
        } else {
            out.push('…');
        }
        out.push(quote);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The closing quote of a span, skipping backslash escapes inside `"…"`.
fn find_closing(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' && quote == '"' {
            escaped = true;
        } else if c == quote {
            return Some(i);
        }
    }
    None
}

/// Opens a file named on the command line to be read as a stream (a data set,
/// a result file): a regular file, or a FIFO (`<(command)`), but not a folder or
/// a device, which are refused before opening (`/dev/zero` is an endless line).
pub fn open_stream(path: &Path) -> Result<File, FileError> {
    let shown = || path.display().to_string();
    let io_error = |source| FileError::Io {
        shown: shown(),
        source,
    };
    let streamable = |meta: &fs::Metadata| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if meta.file_type().is_fifo() {
                return Ok(());
            }
        }
        check_regular(meta, u64::MAX, &shown)
    };
    streamable(&fs::metadata(path).map_err(io_error)?)?;
    let file = File::open(path).map_err(io_error)?;
    streamable(&file.metadata().map_err(io_error)?)?;
    Ok(file)
}

/// Why a file of the run's own (a partial results file, a temporary file)
/// could not be opened.
#[derive(Debug)]
pub enum OwnFileError {
    /// Something other than a regular file is at its path: what it is.
    Unsafe(&'static str),
    /// Opening it failed.
    Io(io::Error),
}

/// What is at `path`, when it is not a regular file (a link is not followed).
pub fn not_regular(meta: &fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        None
    } else if kind.is_symlink() {
        Some("a symbolic link")
    } else {
        Some(file_kind(meta))
    }
}

/// Opens a file the run writes for itself, for reading and writing: created if
/// there is none (`new`: only created, never one that is already there), never
/// through a link (`O_NOFOLLOW`), and only a regular file: a link, FIFO, device
/// or folder planted at its path is refused before it is opened (a FIFO would
/// block the run, a link would send the results elsewhere), and checked again
/// on what was opened.
pub fn open_own_file(path: &Path, new: bool) -> Result<File, OwnFileError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    if new {
        options.create_new(true);
    } else {
        options.create(true).truncate(false);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o644);
    }
    open_no_follow(path, &mut options)
}

/// Opens `path` as `options` say, only as a regular file and never through a
/// link there (`O_NOFOLLOW`) or waiting on a FIFO (`O_NONBLOCK`): what is
/// there is looked at before it is opened, and what was opened is checked again.
pub fn open_no_follow(path: &Path, options: &mut OpenOptions) -> Result<File, OwnFileError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => {
            if let Some(what) = not_regular(&meta) {
                return Err(OwnFileError::Unsafe(what));
            }
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(OwnFileError::Io(err)),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Not through a link, and never waiting on a FIFO put there meanwhile.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|err| {
        #[cfg(unix)]
        if err.raw_os_error() == Some(libc::ELOOP) {
            return OwnFileError::Unsafe("a symbolic link");
        }
        OwnFileError::Io(err)
    })?;
    let meta = file.metadata().map_err(OwnFileError::Io)?;
    if let Some(what) = not_regular(&meta) {
        return Err(OwnFileError::Unsafe(what));
    }
    Ok(file)
}

/// Creates a new temporary file in `folder`, named `.{stem}.{random}.tmp`: a
/// name no one can guess and plant a link or FIFO at beforehand, created only
/// if nothing is there (see [`open_own_file`]).
pub fn create_temporary(folder: &Path, stem: &str) -> io::Result<(PathBuf, File)> {
    loop {
        let path = folder.join(unguessable_name(stem));
        match open_own_file(&path, true) {
            Ok(file) => return Ok((path, file)),
            Err(OwnFileError::Io(err)) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(OwnFileError::Unsafe(_)) => {}
            Err(OwnFileError::Io(err)) => return Err(err),
        }
    }
}

/// `.{stem}.{random}.tmp`, the random part drawn from the system's randomness.
fn unguessable_name(stem: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    // Seeded from the system's randomness afresh for each state.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    format!(".{stem}.{:016x}.tmp", hasher.finish())
}

/// Creates a new, empty folder of the run's own in `folder` (see
/// [`create_temporary`]): `mkdir` never goes through a link already there.
pub fn create_temporary_dir(folder: &Path, stem: &str) -> io::Result<PathBuf> {
    loop {
        let path = folder.join(unguessable_name(stem));
        match fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
}

/// Puts the files of `staging` (a folder of the run's own) in `folder` under
/// their names, each by a rename, which replaces whatever is at a name (a link
/// included) and never writes through it; then removes `staging`.
pub fn move_into(staging: &Path, folder: &Path) -> io::Result<()> {
    for entry in fs::read_dir(staging)? {
        let entry = entry?;
        fs::rename(entry.path(), folder.join(entry.file_name()))?;
    }
    fs::remove_dir(staging)
}

/// Longest line of a result file or data set that `diff` and `report` read
/// (64 MiB): a longer line is skipped and counted, so memory stays bounded
/// whatever the file holds (`/dev/zero`, a line of gigabytes).
pub const MAX_RESULT_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line read by [`BoundedLines`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundedLine {
    /// The line's bytes, without its `\n` (or `\r\n`).
    Bytes(Vec<u8>),
    /// A line above the limit: how many bytes it had. None of it is kept.
    TooLong(u64),
}

/// The lines of a reader, each at most `max` bytes kept: a longer line is read
/// past without keeping it and given as [`BoundedLine::TooLong`]. Memory is
/// bounded by `max` and the reader's buffer, whatever the input.
#[derive(Debug)]
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
    done: bool,
}

impl<R: BufRead> BoundedLines<R> {
    /// The lines of `reader`, each read up to `max` bytes.
    pub fn new(reader: R, max: usize) -> Self {
        BoundedLines {
            reader,
            max,
            done: false,
        }
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = io::Result<BoundedLine>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut line = Vec::new();
        let mut length = 0u64;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    self.done = true;
                    return Some(Err(err));
                }
            };
            if available.is_empty() {
                self.done = true;
                if length == 0 {
                    return None;
                }
                break;
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.unwrap_or(available.len());
            length += take as u64;
            if length <= self.max as u64 {
                line.extend_from_slice(&available[..take]);
            } else {
                line = Vec::new();
            }
            self.reader.consume(take + usize::from(newline.is_some()));
            if newline.is_some() {
                break;
            }
        }
        if length > self.max as u64 {
            return Some(Ok(BoundedLine::TooLong(length)));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(Ok(BoundedLine::Bytes(line)))
    }
}

/// The repository this crate was built in (it lives in `crates/tribunal`): where
/// tests find the shipped packs and docs, and a binary built here its model.
pub fn built_in_repository() -> &'static Path {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).unwrap_or(here)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_spans_are_shortened_or_hidden() {
        let long = "k".repeat(100);
        let message = format!("invalid type: string \"{long}\", expected struct `Manifest`");
        let short = redact_quotes(&message, true);
        assert!(
            short.contains(&format!("\"{}…\"", "k".repeat(40))),
            "{short}"
        );
        assert!(short.contains("`Manifest`"), "{short}");
        let hidden = redact_quotes(&message, false);
        assert_eq!(hidden, "invalid type: string \"…\", expected struct `…`");
    }

    #[test]
    fn excerpts_escape_control_characters() {
        assert_eq!(excerpt("a\u{1b}]0;x\u{7}"), "a\\u{1b}]0;x\\u{7}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_before_reading() {
        let err = read_regular_text(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(matches!(err, FileError::NotRegular { .. }), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = read_regular_text(&fifo, 10).unwrap_err();
            assert!(err.to_string().contains("a FIFO"), "{err}");
        }
    }

    #[test]
    fn a_file_above_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big");
        fs::write(&file, vec![b'x'; 11]).unwrap();
        let err = read_regular_text(&file, 10).unwrap_err();
        assert!(matches!(err, FileError::TooLarge { size: 11, .. }), "{err}");
        assert_eq!(read_regular_text(&file, 11).unwrap().len(), 11);
    }

    #[cfg(unix)]
    #[test]
    fn reads_are_confined_to_the_pack_and_allowed_paths() {
        let outer = tempfile::tempdir().unwrap();
        let pack = outer.path().join("pack");
        let shared = outer.path().join("shared");
        fs::create_dir_all(&pack).unwrap();
        fs::create_dir_all(&shared).unwrap();
        fs::write(pack.join("a.yaml"), "a").unwrap();
        fs::write(shared.join("s.yaml"), "s").unwrap();
        std::os::unix::fs::symlink(shared.join("s.yaml"), pack.join("link.yaml")).unwrap();
        let files = PackFiles::new(&pack, &[]).unwrap();
        assert!(files.read_text(&pack.join("a.yaml"), "a.yaml").is_ok());
        for path in [pack.join("link.yaml"), pack.join("../shared/s.yaml")] {
            let err = files.read_text(&path, "x").unwrap_err();
            assert!(matches!(err, FileError::OutsidePack { .. }), "{err}");
        }
        let allowed = PackFiles::new(&pack, std::slice::from_ref(&shared)).unwrap();
        let text = allowed
            .read_text(&pack.join("link.yaml"), "link.yaml")
            .unwrap();
        assert!(!text.inside_pack);
        assert_eq!(allowed.used().len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn globs_do_not_leave_the_pack_or_loop() {
        let outer = tempfile::tempdir().unwrap();
        let pack = outer.path().join("pack");
        fs::create_dir_all(pack.join("c")).unwrap();
        fs::write(pack.join("c/a.yaml"), "a").unwrap();
        fs::write(outer.path().join("secret.yaml"), "s").unwrap();
        std::os::unix::fs::symlink("..", pack.join("c/up")).unwrap();
        std::os::unix::fs::symlink("..", pack.join("c/up2")).unwrap();
        std::os::unix::fs::symlink("/", pack.join("root")).unwrap();
        let files = PackFiles::new(&pack, &[]).unwrap();
        let found = files.glob(&pack, "**/*.yaml").unwrap();
        assert_eq!(found, [pack.join("c/a.yaml")]);
        for outside in ["../*.yaml", "/etc/*"] {
            let err = files.glob(&pack, outside).unwrap_err();
            assert!(matches!(err, GlobError::Outside(_)), "{outside}: {err}");
        }
        std::os::unix::fs::symlink(outer.path().join("secret.yaml"), pack.join("c/s.yaml"))
            .unwrap();
        let err = files.glob(&pack, "c/*.yaml").unwrap_err();
        assert!(err.to_string().contains("`c/s.yaml` is outside"), "{err}");
    }

    #[test]
    fn bounded_lines_keep_each_line_under_the_limit() {
        let read = |text: &[u8], max: usize, buffer: usize| {
            let reader = io::BufReader::with_capacity(buffer, text);
            BoundedLines::new(reader, max)
                .map(Result::unwrap)
                .collect::<Vec<_>>()
        };
        let bytes = |s: &str| BoundedLine::Bytes(s.as_bytes().to_vec());
        for buffer in [1, 2, 3, 7, 64] {
            assert_eq!(
                read(b"ab\r\ncdef\n\nghijk\nlm", 4, buffer),
                [
                    bytes("ab"),
                    bytes("cdef"),
                    bytes(""),
                    BoundedLine::TooLong(5),
                    bytes("lm")
                ],
                "buffer {buffer}"
            );
            assert_eq!(read(b"", 4, buffer), []);
            assert_eq!(read(b"abcdefgh", 4, buffer), [BoundedLine::TooLong(8)]);
        }
        // An endless line (`/dev/zero`) is read past in constant memory.
        let zeros = io::BufReader::new(io::repeat(0).take(100 << 20));
        let mut lines = BoundedLines::new(zeros, 1 << 10);
        assert_eq!(
            lines.next().unwrap().unwrap(),
            BoundedLine::TooLong(100 << 20)
        );
        assert!(lines.next().is_none());
    }
}
