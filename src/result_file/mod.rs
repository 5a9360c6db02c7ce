//! Where `eval` writes its result records, without ever losing data.
//!
//! A regular file (or a path that does not exist yet) is written through its
//! partial results file in the same folder (`.NAME.partial`, locked while a run
//! writes it), renamed over the destination only when the run has finished: a
//! run that fails part-way leaves the previous file as it was. A run that is
//! interrupted, cannot write, or is killed leaves the partial results, which
//! `--resume` ([`ResultFile::resume`]) continues, verified against the checks
//! written beside them (`.NAME.partial.check`, see `jsonl::resume`).
//! Anything else (`-` for stdout, a pipe, `/dev/null`, a terminal) is written
//! directly and never replaced. An output that is the run's own input (the same
//! file, through any path or link) is refused before anything is opened for writing.

mod outputs;
pub mod resume;

use outputs::same_inode;
pub use outputs::{check_outputs, Named};

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use tribunal_base::files::{not_regular, open_own_file, OwnFileError};

/// Why an output could not be opened or finished.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("--output {output} is the input file {input}: results would overwrite the records they are read from; write them to another file")]
    SameAsInput { output: PathBuf, input: PathBuf },
    #[error("{output} and {other} are the same file: a command never writes over a file it reads, nor writes one file twice; nothing was read or changed. Choose another path")]
    Clash { output: String, other: String },
    #[error("cannot write results to {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot write results to {path}: its folder {folder} does not exist; create it, or write elsewhere")]
    NoFolder { path: PathBuf, folder: PathBuf },
    #[error("another run is writing {path} (its partial results {partial} are locked); wait for it to finish, or write to another file")]
    Busy { path: PathBuf, partial: PathBuf },
    #[error(
        "--resume needs --output to be a regular file (results are resumed from it), not {path}"
    )]
    NotResumable { path: PathBuf },
    #[error("the partial results file {partial} is {what}, not a regular file made by a run: nothing was written through it; remove it and run again")]
    UnsafePartial {
        partial: PathBuf,
        what: &'static str,
    },
    #[error("an unfinished run left {bytes} bytes of results for {path} in {partial}: continue them with --resume, or remove that file to start over")]
    Unfinished {
        path: PathBuf,
        partial: PathBuf,
        bytes: u64,
    },
}

/// The destination of a run's result records.
#[derive(Debug)]
pub struct ResultFile {
    writer: BufWriter<Dest>,
    /// For a replaced regular file: the temporary file and its final path.
    replace: Option<Pending>,
    /// For a replaced regular file: the thread that puts what has been written
    /// on disk while the run goes on, so that the last sync before the rename
    /// has little left to wait for.
    syncer: Option<Syncer>,
    /// For a replaced regular file: the checks of the records written, which
    /// `--resume` verifies (written directly, a batch at a time, before the
    /// batch's records).
    checks: Option<File>,
}

/// What `--resume` found to continue from.
pub struct Resumed {
    /// The partial results file the run continues.
    pub partial: PathBuf,
    /// The kept results: whole lines only, to be read and checked.
    pub kept: Box<dyn io::BufRead + Send>,
    /// Their checks, as the run that wrote them left them.
    pub checks: Box<dyn io::BufRead + Send>,
    /// Bytes of a torn last line (a run stopped mid-write) that were dropped.
    pub torn: u64,
}

/// Bytes written between two background syncs: what the last sync before the
/// rename may still have to write (a 100 MB result file: about 4 ms at 8 MiB,
/// 19 ms at 32 MiB, on the development machine's disk).
const SYNC_EVERY: u64 = 8 << 20;

#[derive(Debug)]
struct Syncer {
    /// One message per `SYNC_EVERY` bytes written.
    wake: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
    unsynced: u64,
}

impl Syncer {
    fn start(file: &File) -> Option<Self> {
        let file = file.try_clone().ok()?;
        let (wake, woken) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name("sync".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    while woken.try_recv().is_ok() {}
                    // A failure shows again in the final sync, which is reported.
                    let _ = file.sync_data();
                }
            })
            .ok()?;
        Some(Self {
            wake: Some(wake),
            thread: Some(thread),
            unsynced: 0,
        })
    }

    fn wrote(&mut self, bytes: usize) {
        self.unsynced += bytes as u64;
        if self.unsynced >= SYNC_EVERY {
            self.unsynced = 0;
            if let Some(wake) = &self.wake {
                let _ = wake.send(());
            }
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Debug)]
enum Dest {
    Stdout(io::Stdout),
    File(File),
}

impl Write for Dest {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Stdout(out) => out.write(buf),
            Self::File(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stdout(out) => out.flush(),
            Self::File(file) => file.flush(),
        }
    }
}

#[derive(Debug)]
struct Pending {
    temp: PathBuf,
    /// The checks file beside `temp`.
    checks: PathBuf,
    /// `temp` as messages show it: beside the output as the user named it.
    shown: PathBuf,
    target: PathBuf,
    /// The replaced file's permissions, given to the results when they take
    /// its place (not before: a read-only partial file could not be resumed).
    permissions: Option<fs::Permissions>,
    /// Keep the partial results when the run does not finish (a resumed run
    /// never removes the results it continues).
    keep: bool,
}

impl Drop for Pending {
    /// A run that did not finish removes its partial results, unless kept.
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.temp);
            let _ = fs::remove_file(&self.checks);
        }
    }
}

/// Where the results of a run writing `target` are kept until it finishes:
/// `.NAME.partial` beside it (what `--resume` continues).
pub fn partial_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
    let partial = format!(".{name}.partial");
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(partial),
        _ => PathBuf::from(partial),
    }
}

/// The checks of the partial results file `partial`: `.NAME.partial.check`.
fn checks_path(partial: &Path) -> PathBuf {
    let mut name = partial.as_os_str().to_owned();
    name.push(".check");
    PathBuf::from(name)
}

/// Opens (creating it if needed) the checks file of the locked partial results
/// file `partial`, as the run's own file.
fn open_checks(partial: &Path, given: &Path) -> Result<(PathBuf, File), OutputError> {
    let path = checks_path(partial);
    let file = open_own_file(&path, false).map_err(|err| match err {
        OwnFileError::Unsafe(what) => OutputError::UnsafePartial {
            partial: checks_path(&partial_path(given)),
            what,
        },
        OwnFileError::Io(source) => OutputError::Io {
            path: path.clone(),
            source,
        },
    })?;
    Ok((path, file))
}

/// Empties a checks file and writes its header: the checks of no record yet.
fn start_checks(file: &mut File) -> io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(resume::CHECKS_HEADER)
}

/// Reads a file from its start by position (`pread`), leaving the offset that
/// the run appends at alone.
struct ReadAt {
    file: File,
    at: u64,
    end: u64,
}

impl Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(&self.file, &mut buf[..want], self.at)?;
        #[cfg(windows)]
        let read = std::os::windows::fs::FileExt::seek_read(&self.file, &mut buf[..want], self.at)?;
        self.at += read as u64;
        Ok(read)
    }
}

/// The first `end` bytes of the file `file` is open on, buffered.
fn read_start(file: &File, end: u64) -> io::Result<Box<dyn io::BufRead + Send>> {
    let reader = ReadAt {
        file: file.try_clone()?,
        at: 0,
        end,
    };
    Ok(Box::new(BufReader::with_capacity(BUFFER, reader)))
}

/// Opens (creating it if needed) the partial results file of `target` and
/// locks it for this run: two runs never write one file.
fn open_partial(target: &Path, given: &Path) -> Result<(PathBuf, File), OutputError> {
    let partial = partial_path(target);
    let io_error = |source| OutputError::Io {
        path: partial.clone(),
        source,
    };
    loop {
        let file = open_own_file(&partial, false).map_err(|err| match err {
            OwnFileError::Unsafe(what) => OutputError::UnsafePartial {
                partial: partial_path(given),
                what,
            },
            OwnFileError::Io(source) => io_error(source),
        })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(OutputError::Busy {
                    path: given.to_path_buf(),
                    partial: partial_path(given),
                })
            }
            Err(fs::TryLockError::Error(source)) => return Err(io_error(source)),
        }
        // Another run may have renamed (finished) or removed the file between
        // our open and our lock: then the lock is on a file no longer at the
        // path, and we start again.
        let locked = file.metadata().map_err(io_error)?;
        match fs::metadata(&partial) {
            Ok(now) if same_inode(&locked, &now) => return Ok((partial, file)),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(io_error(err)),
        }
    }
}

/// Whether the results will replace a file (anything at the output path,
/// a dangling link included).
fn existing_output(pending: &Pending) -> bool {
    fs::symlink_metadata(&pending.target).is_ok()
}

/// The length of `file` up to and including its last newline.
fn whole_lines_length(file: &mut File) -> io::Result<u64> {
    let mut end = file.seek(SeekFrom::End(0))?;
    let mut chunk = vec![0u8; 1 << 16];
    while end > 0 {
        let size = chunk.len().min(usize::try_from(end).unwrap_or(usize::MAX));
        let start = end - size as u64;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk[..size])?;
        if let Some(pos) = chunk[..size].iter().rposition(|b| *b == b'\n') {
            return Ok(start + pos as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

const BUFFER: usize = 1 << 16;

impl ResultFile {
    /// Whether the run keeps the checks of its results (a replaced regular
    /// file: what `--resume` verifies), made by [`resume::seal`].
    pub fn keeps_checks(&self) -> bool {
        self.checks.is_some()
    }

    /// Standard output, written directly.
    pub fn stdout() -> Self {
        Self {
            writer: BufWriter::with_capacity(BUFFER, Dest::Stdout(io::stdout())),
            replace: None,
            syncer: None,
            checks: None,
        }
    }

    /// Opens `path` for the results of a run reading `input` (`None` for stdin).
    /// `-` is standard output.
    pub fn create(path: &Path, input: Option<&Path>) -> Result<Self, OutputError> {
        if path.as_os_str() == "-" {
            return Ok(Self::stdout());
        }
        // (Said of the output the user named, not of its hidden partial file.)
        if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
            if !folder.is_dir() {
                return Err(OutputError::NoFolder {
                    path: path.to_path_buf(),
                    folder: folder.to_path_buf(),
                });
            }
        }
        let Some((target, existing)) = Self::regular_target(path, input)? else {
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|source| OutputError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
            return Ok(Self {
                writer: BufWriter::with_capacity(BUFFER, Dest::File(file)),
                replace: None,
                syncer: None,
                checks: None,
            });
        };
        let (temp, file) = open_partial(&target, path)?;
        // An earlier run that did not finish left results: they are not
        // thrown away by a run that forgot --resume.
        let left = file
            .metadata()
            .map_err(|source| OutputError::Io {
                path: temp.clone(),
                source,
            })?
            .len();
        if left > 0 {
            return Err(OutputError::Unfinished {
                path: path.to_path_buf(),
                partial: partial_path(path),
                bytes: left,
            });
        }
        // No results: whatever checks are there belong to none.
        let (checks_at, mut checks) = open_checks(&temp, path)?;
        start_checks(&mut checks).map_err(|source| OutputError::Io {
            path: checks_at.clone(),
            source,
        })?;
        let pending = Pending {
            temp,
            checks: checks_at,
            shown: partial_path(path),
            target,
            // The replacement keeps the permissions the user gave the old file.
            permissions: existing.map(|meta| meta.permissions()),
            keep: false,
        };
        Ok(Self {
            // Only results that will replace a file are synced as they go
            // (see `finish`).
            syncer: existing_output(&pending)
                .then(|| Syncer::start(&file))
                .flatten(),
            writer: BufWriter::with_capacity(BUFFER, Dest::File(file)),
            replace: Some(pending),
            checks: Some(checks),
        })
    }

    /// Continues the unfinished run that was writing `path`: its partial
    /// results (or, without them, the finished `path`), cut after their last
    /// whole line, are returned to be checked, and the run appends after them.
    pub fn resume(path: &Path, input: Option<&Path>) -> Result<(Self, Resumed), OutputError> {
        let not_resumable = || OutputError::NotResumable {
            path: path.to_path_buf(),
        };
        if path.as_os_str() == "-" {
            return Err(not_resumable());
        }
        let (target, existing) = Self::regular_target(path, input)?.ok_or_else(not_resumable)?;
        let (temp, mut file) = open_partial(&target, path)?;
        let io_error = |source| OutputError::Io {
            path: temp.clone(),
            source,
        };
        let length = file.metadata().map_err(io_error)?.len();
        let whole = whole_lines_length(&mut file).map_err(io_error)?;
        file.set_len(whole).map_err(io_error)?;
        file.seek(SeekFrom::End(0)).map_err(io_error)?;
        let kept = read_start(&file, whole).map_err(io_error)?;
        let (checks_at, checks) = open_checks(&temp, path)?;
        let checks_error = |source| OutputError::Io {
            path: checks_at.clone(),
            source,
        };
        let checks_length = checks.metadata().map_err(checks_error)?.len();
        let kept_checks = read_start(&checks, checks_length).map_err(checks_error)?;
        let pending = Pending {
            temp: temp.clone(),
            checks: checks_at.clone(),
            shown: partial_path(path),
            target,
            permissions: existing.map(|meta| meta.permissions()),
            keep: true,
        };
        let resumed = Resumed {
            partial: partial_path(path),
            kept,
            checks: kept_checks,
            torn: length - whole,
        };
        let sink = Self {
            syncer: existing_output(&pending)
                .then(|| Syncer::start(&file))
                .flatten(),
            writer: BufWriter::with_capacity(BUFFER, Dest::File(file)),
            replace: Some(pending),
            checks: Some(checks),
        };
        Ok((sink, resumed))
    }

    /// Ends an interrupted run: what was written is flushed and kept in the
    /// partial results file, whose path is returned (`None` for an output
    /// written directly, such as stdout).
    pub fn keep_partial(mut self) -> Result<Option<PathBuf>, OutputError> {
        let flushed = self.writer.flush();
        self.syncer = None;
        let Some(mut pending) = self.replace.take() else {
            return flushed.map(|()| None).map_err(|source| OutputError::Io {
                path: PathBuf::from("-"),
                source,
            });
        };
        pending.keep = true;
        let path = pending.shown.clone();
        flushed.map_err(|source| OutputError::Io {
            path: path.clone(),
            source,
        })?;
        if let Dest::File(file) = self.writer.get_ref() {
            let _ = file.sync_all();
        }
        Ok(Some(path))
    }

    /// `Some((where the results go, its metadata if it exists))` for a regular
    /// file (or a path that does not exist yet); `None` for a device, a pipe or
    /// a socket, written as it comes. Refuses the run's own input.
    fn regular_target(
        path: &Path,
        input: Option<&Path>,
    ) -> Result<Option<(PathBuf, Option<fs::Metadata>)>, OutputError> {
        let io_error = |source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        };
        let existing = match fs::metadata(path) {
            Ok(meta) => Some(meta),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(io_error(err)),
        };
        if let (Some(meta), Some(input)) = (&existing, input) {
            if same_file(meta, input) {
                return Err(OutputError::SameAsInput {
                    output: path.to_path_buf(),
                    input: input.to_path_buf(),
                });
            }
        }
        if existing.as_ref().is_some_and(|meta| !meta.is_file()) {
            // A device, a pipe or a socket: there is nothing to keep, write as it comes.
            return Ok(None);
        }
        // A link to a regular file is replaced where it points, so the link stays.
        let target = if existing.is_some() {
            fs::canonicalize(path).map_err(io_error)?
        } else {
            path.to_path_buf()
        };
        Ok(Some((target, existing)))
    }

    /// Ends the run: flushes, and puts a replaced file in place.
    pub fn finish(mut self) -> Result<(), OutputError> {
        let path = self
            .replace
            .as_ref()
            .map_or_else(|| PathBuf::from("-"), |p| p.target.clone());
        let io_error = |source| OutputError::Io {
            path: path.clone(),
            source,
        };
        self.writer.flush().map_err(io_error)?;
        // Waits for a background sync under way.
        self.syncer = None;
        if let Some(pending) = self.replace.take() {
            if let Dest::File(file) = self.writer.get_ref() {
                if let Some(permissions) = pending.permissions.clone() {
                    file.set_permissions(permissions).map_err(io_error)?;
                }
                // On disk before it takes the old file's place: a crash then
                // leaves the old results or the new ones, never a file half
                // written. New results that replace nothing are left to the
                // system's own writeback, as any program's output is (syncing
                // was a tenth of a 200,000-record KSI run with two jobs).
                if existing_output(&pending) {
                    file.sync_all().map_err(io_error)?;
                }
            }
            // What is renamed is the file this run wrote: never a link or a
            // special file put at the partial file's path meanwhile.
            if let Dest::File(file) = self.writer.get_ref() {
                let ours = file.metadata().map_err(io_error)?;
                let there = fs::symlink_metadata(&pending.temp).map_err(io_error)?;
                let unsafe_partial = not_regular(&there).or_else(|| {
                    (!same_inode(&ours, &there)).then_some("another file than the run wrote")
                });
                if let Some(what) = unsafe_partial {
                    return Err(OutputError::UnsafePartial {
                        partial: pending.shown.clone(),
                        what,
                    });
                }
            }
            fs::rename(&pending.temp, &pending.target).map_err(io_error)?;
            // The results are in place: their checks served their purpose.
            self.checks = None;
            let _ = fs::remove_file(&pending.checks);
            std::mem::forget(pending);
        }
        Ok(())
    }
}

impl Write for ResultFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer.write(buf)?;
        if let Some(syncer) = &mut self.syncer {
            syncer.wrote(written);
        }
        Ok(written)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)?;
        if let Some(syncer) = &mut self.syncer {
            syncer.wrote(buf.len());
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl tribunal::jsonl::ResultSink for ResultFile {
    fn write_results(&mut self, lines: &[u8], checks: &[u8]) -> io::Result<()> {
        if let Some(file) = &mut self.checks {
            file.write_all(checks)?;
        }
        self.write_all(lines)
    }

    fn kept(&mut self, records: u64) -> io::Result<()> {
        if let Some(file) = &mut self.checks {
            if records == 0 {
                // Nothing kept: the checks start over, as a new run's do.
                start_checks(file)?;
            } else {
                let header = resume::CHECKS_HEADER.len() as u64;
                file.set_len(header + records * resume::CHECK_LINE)?;
                file.seek(SeekFrom::End(0))?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(self)
    }
}

/// Whether the existing output (`meta`) is the file at `input`.
fn same_file(meta: &fs::Metadata, input: &Path) -> bool {
    let Ok(input_meta) = fs::metadata(input) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.dev() == input_meta.dev() && meta.ino() == input_meta.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (meta, input_meta);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tribunal_base::files::create_temporary;

    #[cfg(unix)]
    #[test]
    fn own_files_are_regular_files_opened_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        fs::write(&target, "kept").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        for (path, what) in [
            (&link, "a symbolic link"),
            (&dangling, "a symbolic link"),
            (&dir.path().to_path_buf(), "a folder"),
        ] {
            for new in [false, true] {
                match open_own_file(path, new) {
                    Err(OwnFileError::Unsafe(found)) => assert_eq!(found, what),
                    other => panic!("{path:?}: {other:?}"),
                }
            }
        }
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(fs::read_to_string(&target).unwrap(), "kept");
        // A regular file is opened (created when absent); `new` only creates.
        assert!(open_own_file(&target, false).is_ok());
        assert!(matches!(
            open_own_file(&target, true),
            Err(OwnFileError::Io(err)) if err.kind() == io::ErrorKind::AlreadyExists
        ));
        let (first, _) = create_temporary(dir.path(), "x").unwrap();
        let (second, _) = create_temporary(dir.path(), "x").unwrap();
        assert_ne!(first, second);
        assert!(first
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".x."));
    }

    #[test]
    fn a_finished_run_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        fs::write(&out, "old\n").unwrap();
        let mut file = ResultFile::create(&out, None).unwrap();
        file.write_all(b"new\n").unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "old\n");
        file.finish().unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "new\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_unfinished_run_keeps_the_old_file_and_removes_its_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        fs::write(&out, "old\n").unwrap();
        let mut file = ResultFile::create(&out, None).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(fs::read_to_string(&out).unwrap(), "old\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_input_is_refused_through_a_link_and_a_hard_link() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("d.jsonl");
        fs::write(&input, "{}\n").unwrap();
        let soft = dir.path().join("soft.jsonl");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        let hard = dir.path().join("hard.jsonl");
        fs::hard_link(&input, &hard).unwrap();
        for out in [&input, &soft, &hard] {
            let err = ResultFile::create(out, Some(&input)).unwrap_err();
            assert!(matches!(err, OutputError::SameAsInput { .. }), "{err}");
        }
        assert_eq!(fs::read_to_string(&input).unwrap(), "{}\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_an_output_is_kept_and_its_target_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.jsonl");
        fs::write(&real, "old\n").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut file = ResultFile::create(&link, None).unwrap();
        file.write_all(b"new\n").unwrap();
        file.finish().unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new\n");
    }

    /// A read-only output keeps its mode, given to the results only when they
    /// replace it: the partial results of a run that stops stay writable, so
    /// that `--resume` can continue them.
    #[cfg(unix)]
    #[test]
    fn a_read_only_output_does_not_make_its_partial_results_read_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        fs::write(&out, "old\n").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(0o444)).unwrap();
        let mut file = ResultFile::create(&out, None).unwrap();
        file.write_all(b"first\n").unwrap();
        let partial = file.keep_partial().unwrap().unwrap();
        assert_eq!(partial, partial_path(&out));
        assert_ne!(
            fs::metadata(&partial).unwrap().permissions().mode() & 0o200,
            0
        );
        let (mut file, resumed) = ResultFile::resume(&out, None).unwrap();
        assert_eq!(resumed.torn, 0);
        file.write_all(b"second\n").unwrap();
        file.finish().unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "first\nsecond\n");
        assert_eq!(
            fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o444
        );
        assert!(!partial.exists());
    }

    #[test]
    fn only_results_that_replace_a_file_are_synced_as_they_go() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.jsonl");
        let file = ResultFile::create(&new, None).unwrap();
        assert!(file.syncer.is_none());
        file.finish().unwrap();
        assert_eq!(fs::read_to_string(&new).unwrap(), "");
        // The next run replaces it: it syncs, and so does a run resumed over it.
        let file = ResultFile::create(&new, None).unwrap();
        assert!(file.syncer.is_some());
        assert!(file.keep_partial().unwrap().is_some());
        let (file, _) = ResultFile::resume(&new, None).unwrap();
        assert!(file.syncer.is_some());
        file.finish().unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn dev_null_is_written_directly_and_stays_a_device() {
        let mut file = ResultFile::create(Path::new("/dev/null"), None).unwrap();
        file.write_all(b"x\n").unwrap();
        file.finish().unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file());
    }
}
