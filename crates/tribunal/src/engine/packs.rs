//! The packs an [`Engine`](super::Engine) serves, by name, and their hot reload.
//!
//! Every pack loads on the engine's one runtime. [`Packs::watch`] looks at
//! each pack's files every so often: when they changed (a file's size or
//! modification time, a file added or removed) and then stayed as they are for
//! the settle time, and at least until the next look (an editor saving several
//! files, or one file in several writes with pauses shorter than the settle
//! time, is loaded once it is done), the pack loads again and the new revision
//! is swapped in at once; requests in flight finish on the revision they
//! started with. A pack that fails to load keeps its old revision serving, and
//! the failure is kept (shown by the front end) and reported once per change
//! until a later change loads. A pack whose folder is gone for the settle time
//! is dropped, even when no pack is left. What happens is told to the engine's
//! observer as [`PackEvent`]s.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use crate::pack::{LoadOptions, Pack};
use crate::runtime::Runtime;

/// A pack as served: the loaded pack, the folder it came from, when.
pub struct Served {
    pack: Pack,
    dir: PathBuf,
    loaded_at: SystemTime,
    fingerprint: u64,
    /// Given loaded (`EngineBuilder::pack`): never reloaded nor dropped.
    fixed: bool,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("pack", &self.pack.label())
            .field("revision", &self.pack.revision())
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Served {
    /// The pack.
    pub fn pack(&self) -> &Pack {
        &self.pack
    }

    /// The folder it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// When this revision was loaded.
    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }
}

/// A reload that failed: the old revision (if any) kept serving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadFailure {
    /// Why it did not load.
    pub message: String,
    /// When it failed.
    pub at: SystemTime,
    fingerprint: u64,
}

/// What a look at the packs' files did, as the engine tells its observer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackEvent {
    /// What happened.
    pub kind: PackEventKind,
    /// It, in words (a line for the service's log).
    pub message: String,
}

/// The kinds of [`PackEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackEventKind {
    /// A pack was added, or a new revision of one swapped in.
    Loaded,
    /// A changed pack did not load: its last revision (if any) still serves.
    Failed,
    /// A pack whose folder no longer holds it was dropped.
    Removed,
    /// A problem with the folders served (said once, until it changes).
    Problem,
}

/// Who is told of [`PackEvent`]s.
pub(crate) type Observer = Arc<dyn Fn(&PackEvent) + Send + Sync>;

/// The packs by name.
pub(crate) struct Packs {
    runtime: Runtime,
    load: LoadOptions,
    sources: Vec<PathBuf>,
    by_name: RwLock<BTreeMap<String, Arc<Served>>>,
    /// Failed reloads, by pack folder.
    failures: Mutex<BTreeMap<PathBuf, ReloadFailure>>,
    /// The last bundle that failed to install, until one installs.
    bundle_failure: Mutex<Option<ReloadFailure>>,
    /// Pack folders whose files changed, how they are now and since when:
    /// loaded once they have stayed so for `settle`.
    settling: Mutex<BTreeMap<PathBuf, (u64, Instant)>>,
    /// Served pack folders that no longer hold a pack, since when: dropped
    /// once they have been gone for `settle`.
    gone: Mutex<BTreeMap<PathBuf, Instant>>,
    /// How long a pack's files must stay unchanged (or gone) before the
    /// change is taken.
    settle: Duration,
    /// The last problem a look had with the served folders, said once.
    problem: Mutex<Option<String>>,
    observer: Observer,
    /// Serve packs a folder of packs links to outside itself.
    follow_links: bool,
}

impl std::fmt::Debug for Packs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packs")
            .field("sources", &self.sources)
            .field("settle", &self.settle)
            .finish_non_exhaustive()
    }
}

impl Packs {
    /// Loads every pack of `sources` (pack folders, or folders holding packs).
    /// Any pack that does not load, or two packs of one name, is an error
    /// (one message each). A pack that a folder of packs links to outside
    /// itself is served only when `follow_links`, else it is an error.
    pub(crate) fn load(
        sources: Vec<PathBuf>,
        given: Vec<Pack>,
        runtime: Runtime,
        load: LoadOptions,
        follow_links: bool,
        settle: Duration,
        observer: Observer,
    ) -> Result<Self, Vec<String>> {
        let (dirs, refused) = pack_dirs(&sources, follow_links).map_err(|e| vec![e])?;
        if !refused.is_empty() {
            return Err(refused);
        }
        let mut packs = BTreeMap::new();
        let mut errors = Vec::new();
        for pack in given {
            let name = pack.name().to_owned();
            if packs.contains_key(&name) {
                errors.push(format!("two packs are named `{name}`"));
                continue;
            }
            let served = Served {
                dir: pack.dir().to_path_buf(),
                pack,
                loaded_at: SystemTime::now(),
                fingerprint: 0,
                fixed: true,
            };
            packs.insert(name, Arc::new(served));
        }
        for dir in dirs {
            match load_pack(&runtime, &load, &dir) {
                Ok(served) => {
                    let name = served.pack.name().to_owned();
                    if let Some(other) = packs.get(&name).map(|s: &Arc<Served>| s.dir.clone()) {
                        errors.push(format!(
                            "two packs are named `{name}`: {} and {} (a pack's name is its address: /v1/packs/{name})",
                            other.display(),
                            dir.display()
                        ));
                    } else {
                        packs.insert(name, Arc::new(served));
                    }
                }
                Err(message) => errors.push(message),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            runtime,
            load,
            sources,
            by_name: RwLock::new(packs),
            failures: Mutex::default(),
            bundle_failure: Mutex::default(),
            settling: Mutex::default(),
            gone: Mutex::default(),
            settle,
            problem: Mutex::default(),
            observer,
            follow_links,
        })
    }

    fn tell(&self, kind: PackEventKind, message: String) {
        (self.observer)(&PackEvent { kind, message });
    }

    /// The pack named `name`, as served now.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Served>> {
        read(&self.by_name).get(name).cloned()
    }

    /// The names of the packs served.
    pub(crate) fn names(&self) -> Vec<String> {
        read(&self.by_name).keys().cloned().collect()
    }

    /// The packs served now, by name.
    pub(crate) fn current(&self) -> Vec<Arc<Served>> {
        read(&self.by_name).values().cloned().collect()
    }

    /// Installs the bundle `bytes`: checked and verified as the load options
    /// say, every pack loaded aside, then all swapped in at once in place of
    /// every pack served (requests in flight finish on the packs they
    /// started with). Nothing of a bundle that fails is served: the packs
    /// served before stay. Returns the bundle's revision.
    pub(crate) fn install(&self, bytes: &[u8]) -> Result<String, String> {
        let result = self.install_aside(bytes);
        match &result {
            Ok((revision, names)) => {
                *lock(&self.bundle_failure) = None;
                self.tell(
                    PackEventKind::Loaded,
                    format!("bundle revision {revision} installed: {}", names.join(", ")),
                );
            }
            Err(message) => {
                *lock(&self.bundle_failure) = Some(ReloadFailure {
                    message: message.clone(),
                    at: SystemTime::now(),
                    fingerprint: 0,
                });
                let serving = self.bundle_revision();
                self.tell(
                    PackEventKind::Failed,
                    format!(
                        "bundle not installed, {}: {message}",
                        serving.map_or_else(
                            || "no bundle serving yet".to_owned(),
                            |r| format!("revision {r} still serving")
                        )
                    ),
                );
            }
        }
        result.map(|(revision, _)| revision)
    }

    fn install_aside(&self, bytes: &[u8]) -> Result<(String, Vec<String>), String> {
        // A bundle's plugin libraries load on its trusted signature, not on
        // the digests pinned at start.
        let options = LoadOptions {
            plugin_pins: None,
            ..self.load.clone()
        };
        let (unpacked, dirs) =
            crate::pack::bundled::unpack(bytes, &options).map_err(|err| err.to_string())?;
        let mut loaded = BTreeMap::new();
        let mut errors = Vec::new();
        for (name, dir) in &dirs {
            match Pack::load_unpacked(dir, &unpacked, &options, false, &self.runtime) {
                Ok(pack) => {
                    loaded.insert(
                        name.clone(),
                        Arc::new(Served {
                            pack,
                            dir: dir.clone(),
                            loaded_at: SystemTime::now(),
                            fingerprint: 0,
                            fixed: false,
                        }),
                    );
                }
                Err(err) => errors.push(format!("pack `{name}`: {err}")),
            }
        }
        if !errors.is_empty() {
            return Err(errors.join("\n"));
        }
        let names = loaded.keys().cloned().collect();
        let revision = unpacked.revision.clone();
        *write(&self.by_name) = loaded;
        Ok((revision, names))
    }

    /// The revision of the bundle served, if packs come from one.
    pub(crate) fn bundle_revision(&self) -> Option<String> {
        read(&self.by_name)
            .values()
            .find_map(|s| s.pack.bundle_revision().map(str::to_owned))
    }

    /// The last bundle that failed to install, if no bundle installed since.
    pub(crate) fn bundle_failure(&self) -> Option<ReloadFailure> {
        lock(&self.bundle_failure).clone()
    }

    /// The failed reload of the pack folder `dir` that is still the last
    /// word on it, if any.
    pub(crate) fn failure(&self, dir: &Path) -> Option<ReloadFailure> {
        lock(&self.failures).get(dir).cloned()
    }

    /// Looks at every pack's files once, and loads again what changed.
    /// Returns how many packs were swapped in.
    pub(crate) fn reload_changed(&self) -> usize {
        // (No pack left where the server looks: every served one is gone.
        // The problem is logged once, not at every look.)
        let (dirs, problem) = match pack_dirs(&self.sources, self.follow_links) {
            Ok((dirs, refused)) if refused.is_empty() => (dirs, None),
            // (A link refused is said once; the other packs are served.)
            Ok((dirs, refused)) => (dirs, Some(refused.join("; "))),
            Err(message) => (Vec::new(), Some(message)),
        };
        {
            let mut last = lock(&self.problem);
            if *last != problem {
                if let Some(message) = &problem {
                    self.tell(PackEventKind::Problem, format!("reload: {message}"));
                }
                (*last).clone_from(&problem);
            }
        }
        let current = self.current();
        let mut swapped = 0;
        for dir in &dirs {
            let served = current.iter().find(|s| &s.dir == dir);
            let fingerprint = fingerprint(dir, served.map(|s| &s.pack));
            if served.is_some_and(|s| s.fingerprint == fingerprint) {
                // (Back as served: a change seen before is no longer waiting.)
                lock(&self.settling).remove(dir);
                continue;
            }
            let failed_before = lock(&self.failures)
                .get(dir)
                .is_some_and(|f| f.fingerprint == fingerprint);
            if failed_before || !self.settled(dir, fingerprint) {
                continue;
            }
            if self.reload_one(dir, served, fingerprint) {
                swapped += 1;
            }
        }
        // Pack folders that are gone (or no longer hold a pack.yaml), once
        // they have been gone for the settle time.
        let mut gone = lock(&self.gone);
        gone.retain(|dir, _| !dirs.contains(dir));
        for served in &current {
            // (A bundle's packs are not the folders': a bundle replaces them.)
            if dirs.contains(&served.dir) || served.fixed || served.pack.bundle_revision().is_some()
            {
                continue;
            }
            // (Seen gone at an earlier look, and for the settle time.)
            match gone.get(&served.dir) {
                None => {
                    gone.insert(served.dir.clone(), Instant::now());
                    continue;
                }
                Some(since) if since.elapsed() < self.settle => continue,
                Some(_) => {}
            }
            gone.remove(&served.dir);
            let name = served.pack.name();
            write(&self.by_name).remove(name);
            lock(&self.failures).remove(&served.dir);
            self.tell(
                PackEventKind::Removed,
                format!(
                    "pack `{name}` removed: {} no longer holds a pack",
                    served.dir.display()
                ),
            );
        }
        swapped
    }

    /// Whether the files of `dir`, changed, are as they were at the last look
    /// (`fingerprint`): else they are noted, to be loaded at the next look
    /// if they stay so.
    fn settled(&self, dir: &Path, fingerprint: u64) -> bool {
        let mut settling = lock(&self.settling);
        match settling.get(dir) {
            Some((seen, since)) if *seen == fingerprint => {
                if since.elapsed() < self.settle {
                    return false;
                }
                settling.remove(dir);
                true
            }
            _ => {
                settling.insert(dir.to_path_buf(), (fingerprint, Instant::now()));
                false
            }
        }
    }

    /// Loads `dir` again (or for the first time); swaps it in when it loads.
    fn reload_one(&self, dir: &Path, old: Option<&Arc<Served>>, fingerprint: u64) -> bool {
        let fail = |message: String| {
            self.tell(
                PackEventKind::Failed,
                format!(
                    "reload of {} failed, {}: {message}",
                    dir.display(),
                    match old {
                        Some(old) => format!(
                            "revision {} of `{}` still serving",
                            old.pack.revision(),
                            old.pack.name()
                        ),
                        None => "not served".to_owned(),
                    }
                ),
            );
            lock(&self.failures).insert(
                dir.to_path_buf(),
                ReloadFailure {
                    message,
                    at: SystemTime::now(),
                    fingerprint,
                },
            );
            false
        };
        let served = match load_pack(&self.runtime, &self.load, dir) {
            Ok(served) => served,
            Err(message) => return fail(message),
        };
        let name = served.pack.name().to_owned();
        let mut packs = write(&self.by_name);
        if let Some(other) = packs.get(&name).filter(|other| other.dir != dir) {
            let message = format!(
                "its pack is named `{name}`, as is the pack in {}",
                other.dir.display()
            );
            drop(packs);
            return fail(message);
        }
        if let Some(old) = old {
            if old.pack.name() != name {
                packs.remove(old.pack.name());
            }
        }
        let revision = served.pack.revision().to_owned();
        packs.insert(name.clone(), Arc::new(served));
        drop(packs);
        lock(&self.failures).remove(dir);
        self.tell(
            PackEventKind::Loaded,
            match old {
                Some(old) => format!(
                    "pack `{name}` reloaded from {}: revision {} replaces {}",
                    dir.display(),
                    revision,
                    old.pack.revision()
                ),
                None => format!(
                    "pack `{name}` added from {}: revision {revision}",
                    dir.display()
                ),
            },
        );
        true
    }

    /// Looks for changes every `every` until `stop` is set (on a thread of its own).
    pub(crate) fn watch(self: &Arc<Self>, every: Duration, stop: Arc<AtomicBool>) {
        let registry = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("tribunal-reload".into())
            .stack_size(crate::parallel::STACK_SIZE)
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    if !stop.load(Ordering::Relaxed) {
                        registry.reload_changed();
                    }
                }
            });
        if let Err(err) = spawned {
            self.tell(
                PackEventKind::Problem,
                format!("cannot start the reload thread: {err}; packs will not reload"),
            );
        }
    }
}

fn load_pack(runtime: &Runtime, load: &LoadOptions, dir: &Path) -> Result<Served, String> {
    // Look first: a change made while loading shows as a change next time.
    let before = fingerprint(dir, None);
    let pack = runtime.load_with(dir, load).map_err(|e| e.to_string())?;
    let fingerprint = if before == fingerprint(dir, None) {
        fingerprint(dir, Some(&pack))
    } else {
        0
    };
    Ok(Served {
        pack,
        dir: dir.to_path_buf(),
        loaded_at: SystemTime::now(),
        fingerprint,
        fixed: false,
    })
}

/// The value behind `mutex`, even after a panic while it was held.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The packs, read, even after a panic while they were written.
fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The packs, to write, even after a panic while they were written.
fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The pack folders of `sources`, each once, in order, and why each pack a
/// folder of packs links to outside itself is refused (unless
/// `follow_links`: a pack folder named itself is the operator's choice).
fn pack_dirs(
    sources: &[PathBuf],
    follow_links: bool,
) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let mut dirs = Vec::new();
    let mut refused = Vec::new();
    for source in sources {
        let found = if source.join("pack.yaml").is_file() {
            vec![source.clone()]
        } else if source.is_dir() {
            let found = Pack::packs_in(source);
            if follow_links {
                found
            } else {
                let (inside, outside): (Vec<_>, Vec<_>) =
                    found.into_iter().partition(|dir| within(source, dir));
                refused.extend(outside.iter().map(|dir| {
                    format!(
                        "{} links to a pack outside {}: not served (pass --follow-links to serve packs linked from elsewhere)",
                        dir.display(),
                        source.display()
                    )
                }));
                inside
            }
        } else {
            Vec::new()
        };
        if found.is_empty() && refused.is_empty() {
            return Err(Pack::why_not_a_pack(source));
        }
        for dir in found {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    Ok((dirs, refused))
}

/// Whether the pack folder `dir`, found in `source`, is inside it as it
/// resolves (a link to a folder elsewhere is not).
fn within(source: &Path, dir: &Path) -> bool {
    let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return true;
    }
    match (std::fs::canonicalize(source), std::fs::canonicalize(dir)) {
        (Ok(source), Ok(dir)) => dir.starts_with(source),
        _ => false,
    }
}

/// Files looked at per pack folder, at most (a folder with more is watched
/// through its first ones).
const MAX_WATCHED: usize = 10_000;

/// A hash of the names, sizes and modification times of the files under
/// `dir` and of the files the pack reads from outside it.
fn fingerprint(dir: &Path, pack: Option<&Pack>) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            folder.hash(&mut hasher);
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            seen += 1;
            if seen > MAX_WATCHED {
                return hasher.finish();
            }
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else {
                hash_file(&mut hasher, &path, &meta);
            }
        }
    }
    if let Some(pack) = pack {
        for (_, path) in pack.inputs() {
            if !path.starts_with(dir) {
                if let Ok(meta) = std::fs::metadata(path) {
                    hash_file(&mut hasher, path, &meta);
                }
            }
        }
    }
    hasher.finish()
}

fn hash_file(hasher: &mut DefaultHasher, path: &Path, meta: &std::fs::Metadata) {
    path.hash(hasher);
    meta.len().hash(hasher);
    if let Ok(modified) = meta.modified() {
        modified.hash(hasher);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::Packs as Registry;

    fn load(source: &Path, settle: std::time::Duration) -> Registry {
        Registry::load(
            vec![source.to_path_buf()],
            Vec::new(),
            crate::runtime::Runtime::new(),
            crate::pack::LoadOptions::default(),
            false,
            settle,
            Arc::new(|_: &super::PackEvent| {}),
        )
        .unwrap()
    }

    fn write(dir: &Path, version: &str) {
        std::fs::write(
            dir.join("pack.yaml"),
            format!("name: p\nversion: {version}\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_change_loads_once_the_files_stay_as_they_are_for_one_look() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.0.0");
        let registry = load(dir.path(), std::time::Duration::ZERO);
        let version = || registry.get("p").unwrap().pack.version().to_owned();
        // Nothing changed: nothing loads.
        assert_eq!(registry.reload_changed(), 0);
        // Written (the sizes differ, so the change is seen whatever the clock).
        write(dir.path(), "1.0.10");
        assert_eq!(
            registry.reload_changed(),
            0,
            "seen once: it may still be being written"
        );
        assert_eq!(version(), "1.0.0");
        // Written again before the next look: still settling.
        write(dir.path(), "1.0.100");
        assert_eq!(registry.reload_changed(), 0);
        assert_eq!(version(), "1.0.0");
        // The same at the next look: loaded.
        assert_eq!(registry.reload_changed(), 1);
        assert_eq!(version(), "1.0.100");
        assert_eq!(registry.reload_changed(), 0);
    }

    /// A registry of the packs in `source`, taking changes after `settle`.
    fn settling(source: &Path, settle: std::time::Duration) -> Registry {
        load(source, settle)
    }

    /// With a settle time, a pack written in parts with pauses longer than
    /// the looks but shorter than the settle time is never served half-way;
    /// a removed pack (the last one too) is dropped once gone that long.
    #[test]
    fn changes_and_removals_are_taken_after_the_settle_time_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.0.0");
        let settle = std::time::Duration::from_millis(400);
        let registry = settling(dir.path(), settle);
        let version = || registry.get("p").map(|s| s.pack.version().to_owned());
        // The first part of a pack.yaml (a pack of its own, with no version).
        std::fs::write(
            dir.path().join("pack.yaml"),
            "name: p
",
        )
        .unwrap();
        for _ in 0..3 {
            assert_eq!(registry.reload_changed(), 0);
            std::thread::sleep(settle / 4);
        }
        assert_eq!(version().as_deref(), Some("1.0.0"), "half a pack served");
        // The rest, then the settle time: loaded.
        write(dir.path(), "2.0.0");
        assert_eq!(registry.reload_changed(), 0);
        std::thread::sleep(settle + settle / 4);
        assert_eq!(registry.reload_changed(), 1);
        assert_eq!(version().as_deref(), Some("2.0.0"));
        // Removed (the only pack): served until gone for the settle time.
        std::fs::remove_file(dir.path().join("pack.yaml")).unwrap();
        registry.reload_changed();
        assert_eq!(version().as_deref(), Some("2.0.0"));
        std::thread::sleep(settle / 2);
        registry.reload_changed();
        assert_eq!(version().as_deref(), Some("2.0.0"));
        std::thread::sleep(settle);
        registry.reload_changed();
        assert_eq!(version(), None, "a removed pack still served");
        assert!(registry.names().is_empty());
        // Back: added again once settled.
        write(dir.path(), "3.0.0");
        registry.reload_changed();
        std::thread::sleep(settle + settle / 4);
        assert_eq!(registry.reload_changed(), 1);
        assert_eq!(version().as_deref(), Some("3.0.0"));
    }

    /// A pack published the safe way (written beside, then swapped in with
    /// two renames) is never dropped between the renames, and loads whole.
    #[test]
    fn a_pack_swapped_in_by_renames_is_never_dropped() {
        let served = tempfile::tempdir().unwrap();
        let dir = served.path().join("p");
        std::fs::create_dir(&dir).unwrap();
        write(&dir, "1.0.0");
        let settle = std::time::Duration::from_millis(300);
        let registry = settling(served.path(), settle);
        let version = || registry.get("p").map(|s| s.pack.version().to_owned());
        let aside = tempfile::tempdir().unwrap();
        let new = aside.path().join("p.new");
        std::fs::create_dir(&new).unwrap();
        // (Another size: the change is seen whatever the clock.)
        write(&new, "2.0.10");
        std::fs::rename(&dir, aside.path().join("p.old")).unwrap();
        // A look between the two renames: the folder is gone, not dropped.
        registry.reload_changed();
        assert_eq!(version().as_deref(), Some("1.0.0"));
        std::fs::rename(&new, &dir).unwrap();
        registry.reload_changed();
        assert_eq!(version().as_deref(), Some("1.0.0"));
        std::thread::sleep(settle + settle / 4);
        assert_eq!(registry.reload_changed(), 1);
        assert_eq!(version().as_deref(), Some("2.0.10"));
    }
}
