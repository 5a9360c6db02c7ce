//! Whether a pack's plugin library may be opened: decided here, before anything
//! is opened, by [`approve`] alone.
//!
//! Opening a shared library runs its initialisers, so a plugin is native code
//! running with the user's privileges the moment it is opened, and a pack chooses
//! its library. Two rules follow:
//!
//! - **consent**: nothing is looked up, let alone opened, unless the user said
//!   so (`--allow-plugins`, `TRIBUNAL_ALLOW_PLUGINS=1`, `allow_plugins=True` in
//!   Python, `allow_plugins` in the pack's `LoadOptions`);
//! - **containment**: with consent, a library is opened only from the pack's
//!   folder, a `--plugin-dir`, a `TRIBUNAL_PLUGIN_PATH` folder or an
//!   `--allow-path`, after following links. A path outside them (absolute, `..`,
//!   or through a link) is refused from its text and the links inside those
//!   places alone: nothing outside them is ever looked at, so the refusal is the
//!   same whether something exists there or not.
//!
//! [`Approved`] is the only thing [`super::load`] opens, and only [`approve`]
//! makes one.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Whether the user consented to opening the pack's plugin libraries, and the
/// places those libraries may come from.
#[derive(Debug, Clone)]
pub enum PluginAccess {
    /// No consent: no plugin library is looked up or opened.
    NotConsented,
    /// Consent, for libraries in these places.
    Consented(PluginPlaces),
}

/// The plugin libraries a long-running process consented to, by digest: while
/// recording (as a server loads its packs at start) every library approved is
/// noted with a digest of its bytes; once sealed, only those libraries, with
/// those bytes, are approved again (a reload never opens a library dropped in,
/// or changed, after the operator consented). Shared by clones.
#[derive(Debug, Clone, Default)]
pub struct PluginPins(std::sync::Arc<std::sync::Mutex<Pins>>);

#[derive(Debug, Default)]
struct Pins {
    sealed: bool,
    libraries: std::collections::HashMap<PathBuf, u64>,
}

impl PluginPins {
    /// Pins that record every library approved until [`seal`](Self::seal).
    pub fn new() -> Self {
        Self::default()
    }

    /// From now on, only the libraries recorded, with the same bytes, are approved.
    pub fn seal(&self) {
        self.lock().sealed = true;
    }

    /// How many libraries are pinned.
    pub fn len(&self) -> usize {
        self.lock().libraries.len()
    }

    /// Whether no library is pinned.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pins> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the library at `path` (canonical) may be opened: recorded while
    /// recording; once sealed, `Err` when it was not recorded or its bytes
    /// changed (`true` for changed).
    fn check(&self, path: &Path) -> Result<(), bool> {
        let digest = fs::read(path).map_or(0, |bytes| twox_hash::XxHash3_64::oneshot(&bytes));
        let mut pins = self.lock();
        if !pins.sealed {
            pins.libraries.insert(path.to_path_buf(), digest);
            return Ok(());
        }
        match pins.libraries.get(path) {
            Some(pinned) if *pinned == digest => Ok(()),
            Some(_) => Err(true),
            None => Err(false),
        }
    }
}

/// Where plugin libraries may be: the folders a library name is looked up in,
/// and every place (folder or file) a library may resolve to, all canonical.
#[derive(Debug, Clone, Default)]
pub struct PluginPlaces {
    /// `--plugin-dir` folders, then `TRIBUNAL_PLUGIN_PATH` folders, as given
    /// (looked up after the manifest's folder).
    search: Vec<PathBuf>,
    /// The pack folder, the search folders and the `--allow-path`s, canonical
    /// (those that exist).
    roots: Vec<PathBuf>,
    /// The libraries consented to by digest, when the process pins them.
    pins: Option<PluginPins>,
}

impl PluginPlaces {
    /// The places of a pack in `pack_root` loaded with `plugin_dirs` and the
    /// (canonical) `allowed` paths; reads `TRIBUNAL_PLUGIN_PATH`.
    pub fn new(pack_root: &Path, plugin_dirs: &[PathBuf], allowed: &[PathBuf]) -> Self {
        let search: Vec<PathBuf> = plugin_dirs
            .iter()
            .cloned()
            .chain(
                // An empty entry (`TRIBUNAL_PLUGIN_PATH=`, or `:/opt/plugins` from
                // appending to an unset variable) would mean the current directory,
                // loading whatever library sits where tribunal runs: skipped.
                std::env::var_os(super::PLUGIN_PATH_ENV)
                    .map(|paths| {
                        std::env::split_paths(&paths)
                            .filter(|folder| !folder.as_os_str().is_empty())
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default(),
            )
            .collect();
        let roots = std::iter::once(pack_root)
            .chain(search.iter().map(PathBuf::as_path))
            .chain(allowed.iter().map(PathBuf::as_path))
            .filter_map(|place| fs::canonicalize(place).ok())
            .collect();
        Self {
            search,
            roots,
            pins: None,
        }
    }

    /// The same places, approving only the libraries `pins` allows.
    #[must_use]
    pub fn with_pins(mut self, pins: Option<PluginPins>) -> Self {
        self.pins = pins;
        self
    }

    /// Whether `path` (absolute, without `.` or `..`) is in one of the places.
    fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// Whether `path` is a folder above one of the places: a real folder (the
    /// places are canonical) that reveals nothing about what a pack names.
    fn is_above(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| root.starts_with(path))
    }
}

/// A plugin library the user consented to and that lies in the allowed places:
/// its canonical path. Only [`approve`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved(PathBuf);

impl Approved {
    /// The canonical path of the library.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The library the engine named to its `isolation: process` helper (the
    /// hidden `__plugin-host` command): the engine approved it, and opened it
    /// itself, before starting the helper (see [`super::instantiate`]).
    pub fn named_by_the_engine(path: &Path) -> Self {
        Self(path.to_path_buf())
    }
}

/// Why a plugin library is not opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The user did not consent to opening plugin libraries.
    NotConsented,
    /// The library is outside the places a plugin may come from (or leads out
    /// of them through a link). Says nothing of what is there.
    Outside,
    /// Nothing loadable at any of the paths tried (all inside the places).
    NotFound { tried: Vec<PathBuf> },
    /// A library the process did not consent to by digest: new since it
    /// started, or `changed`.
    NotPinned { path: PathBuf, changed: bool },
}

impl Refusal {
    /// The message, about the library `library` (as the manifest wrote it) of
    /// the component `component` (its name in the pack).
    pub fn message(&self, component: &str, library: &str) -> String {
        match self {
            Self::NotConsented => format!(
                "plugin component `{component}` (library `{library}`) not loaded: pass --allow-plugins to load it"
            ),
            Self::Outside => format!(
                "plugin library `{library}` refused: a pack's plugin library must be inside the pack folder, a --plugin-dir, a TRIBUNAL_PLUGIN_PATH folder or an --allow-path (after following links); nothing outside them is opened or looked at"
            ),
            Self::NotFound { tried } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                format!(
                    "plugin library `{library}` not found; tried: {}",
                    tried.join(", ")
                )
            }
            Self::NotPinned { path, changed } => format!(
                "plugin library `{library}` ({}) refused: it {} since the server started, and consent (--allow-plugins) covers the libraries present then, by digest",
                path.display(),
                if *changed { "changed" } else { "appeared" }
            ),
        }
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        match self {
            Self::NotConsented => "a plugin is native code that runs with your privileges as soon as it is opened: consent only for a pack you trust, with --allow-plugins (or TRIBUNAL_ALLOW_PLUGINS=1; in Python, Pack.load(..., allow_plugins=True))".into(),
            Self::Outside => "ship the library in the pack, or pass its folder with --plugin-dir (or --allow-path)".into(),
            Self::NotFound { .. } => "build the plugin, then put it next to this manifest, pass its folder with --plugin-dir, or add the folder to TRIBUNAL_PLUGIN_PATH".into(),
            Self::NotPinned { .. } => "restart the server to consent to the libraries as they are now".into(),
        }
    }
}

/// The one check between a manifest's `library:` and opening it: consent first
/// (before touching the file system), then containment. `library` is a name or
/// a path as the manifest wrote it; a name or relative path is looked up next
/// to the manifest (`manifest_dir`), then in each search folder, with the
/// platform's prefix and suffix.
pub fn approve(
    library: &str,
    manifest_dir: &Path,
    access: &PluginAccess,
) -> Result<Approved, Refusal> {
    let PluginAccess::Consented(places) = access else {
        return Err(Refusal::NotConsented);
    };
    let written = Path::new(library);
    let (parent, base) = match written.file_name() {
        Some(base) => (
            written.parent().unwrap_or(Path::new("")),
            base.to_string_lossy().into_owned(),
        ),
        None => (Path::new(""), library.to_owned()),
    };
    // Each folder as given (what errors show) and absolute (what is checked:
    // the places are canonical, so containment compares like with like).
    let folders: Vec<(PathBuf, PathBuf)> = if written.is_absolute() {
        vec![(PathBuf::new(), PathBuf::new())]
    } else {
        std::iter::once(manifest_dir)
            .chain(places.search.iter().map(PathBuf::as_path))
            .map(|folder| {
                let real = fs::canonicalize(folder).unwrap_or_else(|_| absolute(folder));
                (folder.to_path_buf(), real)
            })
            .collect()
    };
    let mut tried = Vec::new();
    for (shown, real) in &folders {
        for name in super::file_names(&base) {
            let candidate = crate::files::lexical_normalise(&real.join(parent).join(&name));
            if !places.contains(&candidate) {
                continue; // never looked at
            }
            if let Some(found) = walk(&candidate, places)? {
                if let Some(pins) = &places.pins {
                    pins.check(&found).map_err(|changed| Refusal::NotPinned {
                        path: found.clone(),
                        changed,
                    })?;
                }
                return Ok(Approved(found));
            }
            let shown = crate::files::lexical_normalise(&shown.join(parent).join(&name));
            if !tried.contains(&shown) {
                tried.push(shown);
            }
        }
    }
    if tried.is_empty() {
        return Err(Refusal::Outside);
    }
    Err(Refusal::NotFound { tried })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// One step of a path still to follow.
enum Step {
    Root(PathBuf),
    Parent,
    Name(OsString),
}

fn steps(path: &Path) -> impl DoubleEndedIterator<Item = Step> + '_ {
    let mut root = PathBuf::new();
    path.components()
        .filter_map(move |component| match component {
            Component::Prefix(prefix) => {
                root.push(prefix.as_os_str());
                None
            }
            Component::RootDir => {
                root.push(Component::RootDir.as_os_str());
                Some(Step::Root(std::mem::take(&mut root)))
            }
            Component::CurDir => None,
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
        })
}

/// How many links one path may go through (as Linux's `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// Follows `path` (absolute, in `places`) one component at a time, resolving
/// links as the system would, but looks at nothing outside `places` (the
/// folders above them are real folders, known from the places themselves): a
/// step that would leave them is refused before it is taken. Returns the
/// canonical path of the regular file found, or `None` when there is none.
fn walk(path: &Path, places: &PluginPlaces) -> Result<Option<PathBuf>, Refusal> {
    // A stack: the next step last.
    let mut pending: Vec<Step> = steps(path).rev().collect();
    let mut at = PathBuf::new();
    let mut links = 0;
    while let Some(step) = pending.pop() {
        match step {
            Step::Root(root) => at = root,
            Step::Parent => {
                at.pop();
            }
            Step::Name(name) => {
                let next = at.join(name);
                if !places.contains(&next) {
                    if places.is_above(&next) {
                        at = next;
                        continue;
                    }
                    return Err(Refusal::Outside);
                }
                let Ok(meta) = fs::symlink_metadata(&next) else {
                    return Ok(None);
                };
                if !meta.file_type().is_symlink() {
                    at = next;
                    continue;
                }
                links += 1;
                let Ok(target) = fs::read_link(&next) else {
                    return Ok(None);
                };
                if links > MAX_LINKS {
                    return Ok(None);
                }
                // A relative target continues from the link's folder (`at`).
                pending.extend(steps(&target).rev().collect::<Vec<_>>());
            }
        }
    }
    if !places.contains(&at) {
        return Err(Refusal::Outside);
    }
    Ok(fs::metadata(&at)
        .is_ok_and(|meta| meta.is_file())
        .then_some(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUFFIX: &str = std::env::consts::DLL_SUFFIX;

    /// A pack folder and a folder outside it, both canonical.
    fn folders() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (pack, outside) = (base.join("pack"), base.join("outside"));
        fs::create_dir_all(pack.join("components")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        (dir, pack, outside)
    }

    fn consented(pack: &Path, plugin_dirs: &[PathBuf], allowed: &[PathBuf]) -> PluginAccess {
        PluginAccess::Consented(PluginPlaces::new(pack, plugin_dirs, allowed))
    }

    #[test]
    fn without_consent_nothing_is_looked_at() {
        // A folder that does not exist: any look would fail differently.
        let nowhere = Path::new("/nonexistent/for/sure");
        for library in ["probe", "/etc/passwd", "../x", "libprobe.so"] {
            assert_eq!(
                approve(library, nowhere, &PluginAccess::NotConsented),
                Err(Refusal::NotConsented)
            );
        }
        let message = Refusal::NotConsented.message("count", "probe");
        assert!(message.contains("--allow-plugins"), "{message}");
    }

    #[test]
    fn a_library_in_the_pack_or_a_plugin_dir_is_approved() {
        let (_dir, pack, outside) = folders();
        let shipped = pack.join(format!("libshipped{SUFFIX}"));
        fs::write(&shipped, b"").unwrap();
        let in_dir = outside.join(format!("libbuilt{SUFFIX}"));
        fs::write(&in_dir, b"").unwrap();
        let access = consented(&pack, std::slice::from_ref(&outside), &[]);
        let components = pack.join("components");
        assert_eq!(
            approve("../shipped", &components, &access).unwrap().path(),
            shipped
        );
        assert_eq!(
            approve("built", &components, &access).unwrap().path(),
            in_dir
        );
        // Absolute, but inside a place.
        let written = in_dir.to_str().unwrap();
        assert_eq!(
            approve(written, &components, &access).unwrap().path(),
            in_dir
        );
    }

    #[test]
    fn a_library_outside_the_places_is_refused_whether_or_not_it_exists() {
        let (_dir, pack, outside) = folders();
        let access = consented(&pack, &[], &[]);
        let target = outside.join(format!("libprobe{SUFFIX}"));
        let components = pack.join("components");
        let escapes = [
            target.to_str().unwrap().to_owned(),
            format!("../../outside/libprobe{SUFFIX}"),
            "../../outside/probe".to_owned(),
        ];
        for make in [false, true] {
            if make {
                fs::write(&target, b"anything").unwrap();
            }
            for library in &escapes {
                assert_eq!(
                    approve(library, &components, &access),
                    Err(Refusal::Outside),
                    "{library} (exists: {make})"
                );
            }
        }
        // Or a folder, or something that is not a library: the same.
        fs::remove_file(&target).unwrap();
        fs::create_dir(&target).unwrap();
        assert_eq!(
            approve(target.to_str().unwrap(), &components, &access),
            Err(Refusal::Outside)
        );
        // The same library is approved once its folder is allowed.
        fs::remove_dir(&target).unwrap();
        fs::write(&target, b"").unwrap();
        let allowed = consented(&pack, &[], std::slice::from_ref(&outside));
        assert_eq!(
            approve(target.to_str().unwrap(), &components, &allowed)
                .unwrap()
                .path(),
            target
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_places_is_refused_without_following_it() {
        let (_dir, pack, outside) = folders();
        let access = consented(&pack, &[], &[]);
        let components = pack.join("components");
        let target = outside.join(format!("libprobe{SUFFIX}"));
        // A link to a file outside, and a link to a folder outside.
        std::os::unix::fs::symlink(&target, pack.join(format!("libfile{SUFFIX}"))).unwrap();
        std::os::unix::fs::symlink(&outside, pack.join("libs")).unwrap();
        for make in [false, true] {
            if make {
                fs::write(&target, b"").unwrap();
            }
            for library in ["../file", "../libs/probe"] {
                assert_eq!(
                    approve(library, &components, &access),
                    Err(Refusal::Outside),
                    "{library} (exists: {make})"
                );
            }
        }
        // A link that stays inside is followed.
        let real = pack.join(format!("libreal{SUFFIX}"));
        fs::write(&real, b"").unwrap();
        std::os::unix::fs::symlink(&real, pack.join(format!("libalias{SUFFIX}"))).unwrap();
        assert_eq!(
            approve("../alias", &components, &access).unwrap().path(),
            real
        );
        // A loop of links is not found (and does not hang).
        std::os::unix::fs::symlink(pack.join("loop2"), pack.join("loop1")).unwrap();
        std::os::unix::fs::symlink(pack.join("loop1"), pack.join("loop2")).unwrap();
        assert!(matches!(
            approve("../loop1", &components, &access),
            Err(Refusal::NotFound { .. })
        ));
    }

    #[test]
    fn a_missing_library_lists_every_path_tried_inside_the_places() {
        let (_dir, pack, outside) = folders();
        let extra = outside.join("extra");
        let access = consented(&pack, std::slice::from_ref(&extra), &[]);
        let Err(Refusal::NotFound { tried }) = approve("nothing_here", &pack, &access) else {
            panic!("expected not found");
        };
        let prefix = std::env::consts::DLL_PREFIX;
        for name in [
            "nothing_here".to_owned(),
            format!("{prefix}nothing_here{SUFFIX}"),
        ] {
            assert!(tried.contains(&pack.join(&name)), "{tried:?}");
        }
        // A search folder that does not exist is no place (nothing is tried there).
        assert!(
            tried.iter().all(|path| path.starts_with(&pack)),
            "{tried:?}"
        );
        fs::create_dir(&extra).unwrap();
        let file = extra.join(format!("{prefix}nothing_here{SUFFIX}"));
        fs::write(&file, b"").unwrap();
        let access = consented(&pack, std::slice::from_ref(&extra), &[]);
        assert_eq!(
            approve("nothing_here", &pack, &access).unwrap().path(),
            file
        );
    }
}
