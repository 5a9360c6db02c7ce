//! Which files a command reads and writes, and refusing an output that is
//! one of its inputs or another output, through any path or link.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::OutputError;

/// A file a command reads or writes, with the option that names it (`--input`,
/// `-o`, `the pack file`). `-` is standard input as an input and standard output
/// as an output.
#[derive(Debug, Clone)]
pub struct Named {
    pub option: String,
    pub path: PathBuf,
}

impl Named {
    pub fn new(option: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            option: option.into(),
            path: path.into(),
        }
    }

    fn shown(&self, output: bool) -> String {
        match (self.path.as_os_str() == "-", output) {
            (true, false) => format!("{} - (standard input)", self.option),
            (true, true) => format!("{} (standard output)", self.option),
            (false, _) => format!("{} {}", self.option, self.path.display()),
        }
    }
}

/// What makes two names the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    /// A regular file: its device and inode (whatever path, link, hard link or
    /// `/proc/self/fd` entry names it, and a standard stream redirected from or
    /// to it).
    File(u64, u64),
    /// A path where nothing is yet: where it will be (its folder's real path).
    New(PathBuf),
}

/// The identity of `named` as an input (`output` false) or an output; `None`
/// for what two commands may share (a terminal, a pipe, `/dev/null`).
fn identity(named: &Named, output: bool) -> Option<Identity> {
    let meta = if named.path.as_os_str() == "-" {
        standard_stream(output)?
    } else {
        match fs::metadata(&named.path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound && output => {
                let name = named.path.file_name()?;
                let folder = match named.path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                return fs::canonicalize(folder)
                    .ok()
                    .map(|dir| Identity::New(dir.join(name)));
            }
            Err(_) => return None,
        }
    };
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(Identity::File(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// What standard input (or output) is, when it is redirected from (or to) a file.
fn standard_stream(output: bool) -> Option<fs::Metadata> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = if output {
            io::stdout().as_fd().try_clone_to_owned().ok()?
        } else {
            io::stdin().as_fd().try_clone_to_owned().ok()?
        };
        File::from(fd).metadata().ok()
    }
    #[cfg(not(unix))]
    {
        let _ = output;
        None
    }
}

/// The one rule for every file a command writes, checked before anything is
/// read: no output is one of the command's inputs (`--input`, `--baseline`, a
/// results file, a file of the pack...) or another of its outputs, as a file
/// (through links, hard links, `/proc/self/fd`, and standard input or output
/// redirected from or to a file). A clash names both options.
pub fn check_outputs(inputs: &[Named], outputs: &[Named]) -> Result<(), OutputError> {
    let inputs: Vec<_> = inputs
        .iter()
        .filter_map(|named| identity(named, false).map(|id| (id, named)))
        .collect();
    let mut seen: Vec<(Identity, &Named)> = Vec::new();
    for output in outputs {
        let Some(id) = identity(output, true) else {
            continue;
        };
        let clash = inputs
            .iter()
            .map(|(other, named)| (other, named.shown(false)))
            .chain(seen.iter().map(|(other, named)| (other, named.shown(true))))
            .find(|(other, _)| **other == id);
        if let Some((_, other)) = clash {
            return Err(OutputError::Clash {
                output: output.shown(true),
                other,
            });
        }
        seen.push((id, output));
    }
    Ok(())
}

/// Whether two metadata are of the same file.
pub(super) fn same_inode(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_is_never_an_input_or_another_output() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        fs::write(at("in.jsonl"), "x").unwrap();
        fs::hard_link(at("in.jsonl"), at("hard.jsonl")).unwrap();
        std::os::unix::fs::symlink(at("in.jsonl"), at("link.jsonl")).unwrap();
        let input = [Named::new("--input", at("in.jsonl"))];
        let clash = |outputs: &[Named]| match check_outputs(&input, outputs) {
            Err(OutputError::Clash { output, other }) => Some((output, other)),
            Ok(()) => None,
            Err(err) => panic!("{err}"),
        };
        for name in ["in.jsonl", "hard.jsonl", "link.jsonl"] {
            let (output, other) = clash(&[Named::new("-o", at(name))]).unwrap();
            assert!(output.starts_with("-o "), "{output}");
            assert!(other.starts_with("--input "), "{other}");
        }
        let proc_path = PathBuf::from(format!(
            "/proc/self/cwd/{}",
            at("in.jsonl").strip_prefix("/").unwrap().display()
        ))
        .canonicalize();
        if let Ok(path) = proc_path {
            assert!(clash(&[Named::new("-o", path)]).is_some());
        }
        // Two outputs that are one new file, by two names.
        let (output, other) = clash(&[
            Named::new("--output", at("new.jsonl")),
            Named::new("--junit", dir.path().join(".").join("new.jsonl")),
        ])
        .unwrap();
        assert!(output.starts_with("--junit") && other.starts_with("--output"));
        // What commands may share: /dev/null, and different files.
        assert!(clash(&[
            Named::new("--output", "/dev/null"),
            Named::new("--junit", "/dev/null"),
            Named::new("--summary-json", at("other.json")),
        ])
        .is_none());
    }
}
