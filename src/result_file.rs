//! Where `eval` writes its result records, without ever losing data.
//!
//! A regular file (or a path that does not exist yet) is written through a
//! temporary file in the same folder, renamed over the destination only when the
//! run has finished: a run that fails part-way leaves the previous file as it was.
//! Anything else (`-` for stdout, a pipe, `/dev/null`, a terminal) is written
//! directly and never replaced. An output that is the run's own input (the same
//! file, through any path or link) is refused before anything is opened for writing.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

/// Why an output could not be opened or finished.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("--output {output} is the input file {input}: results would overwrite the records they are read from; write them to another file")]
    SameAsInput { output: PathBuf, input: PathBuf },
    #[error("cannot write results to {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
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
}

/// Bytes written between two background syncs.
const SYNC_EVERY: u64 = 32 << 20;

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
    target: PathBuf,
}

impl Drop for Pending {
    /// A run that did not finish removes its temporary file.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.temp);
    }
}

const BUFFER: usize = 1 << 16;

impl ResultFile {
    /// Standard output, written directly.
    pub fn stdout() -> Self {
        Self {
            writer: BufWriter::with_capacity(BUFFER, Dest::Stdout(io::stdout())),
            replace: None,
            syncer: None,
        }
    }

    /// Opens `path` for the results of a run reading `input` (`None` for stdin).
    /// `-` is standard output.
    pub fn create(path: &Path, input: Option<&Path>) -> Result<Self, OutputError> {
        if path.as_os_str() == "-" {
            return Ok(Self::stdout());
        }
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
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io_error)?;
            return Ok(Self {
                writer: BufWriter::with_capacity(BUFFER, Dest::File(file)),
                replace: None,
                syncer: None,
            });
        }
        // A link to a regular file is replaced where it points, so the link stays.
        let target = if existing.is_some() {
            fs::canonicalize(path).map_err(io_error)?
        } else {
            path.to_path_buf()
        };
        let (temp, file) = create_temp_beside(&target).map_err(io_error)?;
        let pending = Pending { temp, target };
        if let Some(meta) = &existing {
            // The replacement keeps the permissions the user gave the old file.
            fs::set_permissions(&pending.temp, meta.permissions()).map_err(io_error)?;
        }
        Ok(Self {
            syncer: Syncer::start(&file),
            writer: BufWriter::with_capacity(BUFFER, Dest::File(file)),
            replace: Some(pending),
        })
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
                // On disk before it takes the old file's place.
                file.sync_all().map_err(io_error)?;
            }
            fs::rename(&pending.temp, &pending.target).map_err(io_error)?;
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

/// Creates a new, empty file next to `target` that no one else has opened.
fn create_temp_beside(target: &Path) -> io::Result<(PathBuf, File)> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let temp = dir.join(format!(".{name}.tribunal-{pid}-{attempt}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => {
                attempt += 1;
            }
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[cfg(unix)]
    #[test]
    fn dev_null_is_written_directly_and_stays_a_device() {
        let mut file = ResultFile::create(Path::new("/dev/null"), None).unwrap();
        file.write_all(b"x\n").unwrap();
        file.finish().unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file());
    }
}
