//! Temporary folders that say whose they are: a process's lock on a file in
//! each, which the system releases however the process ends, so folders that
//! ended processes left can be told from those in use, and removed.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::{create_temporary, create_temporary_dir};

/// The file in an [`OwnedDir`] whose lock says its process is alive.
pub const OWNER_LOCK: &str = ".tribunal-owner.lock";

/// A temporary folder (see [`create_temporary_dir`]) that says, as long as
/// it is held, that its process uses it: the process holds an exclusive lock
/// on the folder's [`OWNER_LOCK`] file. The operating system releases the
/// lock when the process ends, however it ends (`SIGKILL`, the OOM killer),
/// so [`sweep_abandoned`] can tell an abandoned folder from one in use, in any
/// process, PID namespace or container sharing the file system. Removed with
/// its files when dropped.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    /// `None` where the file system takes no lock (then the folder has no
    /// [`OWNER_LOCK`], and is never swept).
    _lock: Option<File>,
}

impl OwnedDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OwnedDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Creates a new folder of the process's own in `folder`, named as by
/// [`create_temporary_dir`], holding its [`OWNER_LOCK`], locked. The lock
/// file is locked under another name first and renamed into place: no
/// process sees it at its name unlocked. On a file system that takes no
/// lock, the folder is made without it (and never swept).
pub fn create_owned_dir(folder: &Path, stem: &str) -> io::Result<OwnedDir> {
    let path = create_temporary_dir(folder, stem)?;
    let locked = (|| {
        let (staged, lock) = create_temporary(&path, "owner")?;
        if lock.try_lock().is_err() {
            fs::remove_file(&staged)?;
            return Ok(None);
        }
        fs::rename(&staged, path.join(OWNER_LOCK))?;
        Ok(Some(lock))
    })();
    match locked {
        Ok(lock) => Ok(OwnedDir { path, _lock: lock }),
        Err(err) => {
            let _ = fs::remove_dir_all(&path);
            Err(err)
        }
    }
}

/// Removes the folders `.{stem}.*.tmp` in `folder` (see [`create_owned_dir`])
/// whose process has ended without removing them: those whose
/// [`OWNER_LOCK`] this process can lock. A folder without that file (being
/// made, made by another program or an older Tribunal), a link, one that
/// cannot be read or removed (another user's) is left. Returns how many it
/// removed.
pub fn sweep_abandoned(folder: &Path, stem: &str) -> usize {
    let prefix = format!(".{stem}.");
    let Ok(entries) = fs::read_dir(folder) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // (Exactly as `unguessable_name` writes them: the case counts.)
        let ours = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"));
        if ours.is_none() {
            continue;
        }
        // Not through a link: `file_type` does not follow one.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Ok(lock) = File::open(path.join(OWNER_LOCK)) else {
            continue;
        };
        if lock.try_lock().is_ok() && fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The folders in `folder` (names).
    fn folders(folder: &Path) -> BTreeSet<String> {
        fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    }

    #[test]
    fn owned_folders_in_use_are_kept_abandoned_ones_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let stem = "tribunal-bundle";
        // In use: held here (another open file's lock, as another process's).
        let live = create_owned_dir(root, stem).unwrap();
        fs::write(live.path().join("pack.yaml"), "name: x\n").unwrap();
        assert!(live.path().join(OWNER_LOCK).is_file());
        // Abandoned: its process ended, and the lock with it (a process
        // killed for real: tests/bundles.rs).
        let abandoned = root.join(format!(".{stem}.0000000000000001.tmp"));
        fs::create_dir(&abandoned).unwrap();
        File::create(abandoned.join(OWNER_LOCK)).unwrap();
        fs::write(abandoned.join("pack.yaml"), "name: x\n").unwrap();
        // Left alone: no lock file (another program's, or being made), a
        // link to an abandoned folder, a file, another stem's folder.
        let no_lock = root.join(format!(".{stem}.0000000000000002.tmp"));
        fs::create_dir(&no_lock).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("target");
        fs::create_dir(&target).unwrap();
        File::create(target.join(OWNER_LOCK)).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, root.join(format!(".{stem}.0000000000000003.tmp")))
            .unwrap();
        fs::write(root.join(format!(".{stem}.0000000000000004.tmp")), "x").unwrap();
        let other = root.join(".man.0000000000000005.tmp");
        fs::create_dir(&other).unwrap();
        File::create(other.join(OWNER_LOCK)).unwrap();

        let before = folders(root);
        assert_eq!(sweep_abandoned(root, stem), 1);
        assert!(!abandoned.exists());
        assert!(live.path().join("pack.yaml").is_file());
        assert!(no_lock.exists() && target.join(OWNER_LOCK).exists() && other.exists());
        let after = folders(root);
        assert_eq!(before.len(), after.len() + 1, "{before:?} {after:?}");
        // Dropped: removed, lock and all; nothing left to sweep.
        let live_path = live.path().to_path_buf();
        drop(live);
        assert!(!live_path.exists());
        assert_eq!(sweep_abandoned(root, stem), 0);
    }
}
