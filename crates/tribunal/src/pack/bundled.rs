//! Packs and bundles: a bundle built from pack folders, and packs loaded from
//! a bundle wherever a pack folder is read (`FILE` for a bundle of one pack,
//! `FILE#NAME` for one of several).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bundle::{self, Bundle, BundleError, BundledPack};
use crate::runtime::Runtime;
use crate::yaml::{LoadError, LoadErrors};

use super::{LoadOptions, Pack};

impl Bundle {
    /// Builds the bundle of the packs in `dirs` (each loaded on `runtime`
    /// with `load` first: a pack that does not load is not bundled): every
    /// file of each pack's folder (names starting with `.` left out), under
    /// the pack's name. A pack that reads a file from outside its folder, or
    /// holds a link, is refused. Reproducible: the same packs give the same
    /// bytes.
    pub fn build(
        dirs: &[PathBuf],
        runtime: &Runtime,
        load: &LoadOptions,
    ) -> Result<Vec<u8>, BundleError> {
        let mut packs = Vec::new();
        let mut files = BTreeMap::new();
        for dir in dirs {
            let pack = runtime
                .load_with(dir, load)
                .map_err(|err| BundleError::Build(err.to_string()))?;
            let name = pack.name().to_owned();
            if packs.iter().any(|p: &BundledPack| p.name == name) {
                return Err(BundleError::Build(format!(
                    "two packs are named `{name}`: a bundle serves each pack by its name"
                )));
            }
            let root = bundle::pack_root(dir)?;
            for (what, path) in pack.inputs() {
                let read = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                if !read.starts_with(&root) {
                    return Err(BundleError::Build(format!(
                        "pack `{name}` reads {what} {} from outside its folder {}: a bundle holds a pack's folder (copy the file into it)",
                        path.display(),
                        root.display()
                    )));
                }
            }
            bundle::collect(&root, &root, &name, &mut files)?;
            packs.push(BundledPack {
                dir: name.clone(),
                name,
                version: pack.version().to_owned(),
                revision: pack.revision().to_owned(),
            });
        }
        Ok(Self::assemble(packs, files))
    }
}

/// A bundle unpacked for loading: its folder (removed when the last pack
/// loaded from it is dropped) and revision.
#[derive(Debug)]
pub(crate) struct Unpacked {
    /// Removed when the last pack loaded from it is dropped; while the
    /// process lives, locked as its own (see [`sweep_once`]). (Held, not
    /// read, outside the tests.)
    #[cfg_attr(not(test), allow(dead_code))]
    dir: crate::files::OwnedDir,
    pub(crate) revision: String,
}

/// The stem of an unpacked bundle's folder's name in the temporary folder.
const UNPACKED_STEM: &str = "tribunal-bundle";

/// Removes, once a process, the folders of bundles that processes ended
/// without removing (killed with `SIGKILL`, by the OOM killer, a container
/// runtime after its grace period): each such end would otherwise leave a
/// copy of a bundle in the temporary folder, and a server restarted in a
/// loop one a restart. A folder some process still uses is locked by it,
/// and kept.
fn sweep_once(temp: &Path) {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        crate::files::sweep_abandoned(temp, UNPACKED_STEM);
    });
}

/// The bundle file `path` names, and the pack it names in it: `FILE` or
/// `FILE#NAME`, where `FILE` is a gzip file (a bundle). `None`: not a bundle.
pub(crate) fn bundle_path(path: &Path) -> Option<(PathBuf, Option<String>)> {
    if Bundle::is_bundle_file(path) {
        return Some((path.to_path_buf(), None));
    }
    let text = path.to_str()?;
    let (file, name) = text.rsplit_once('#')?;
    Bundle::is_bundle_file(Path::new(file)).then(|| (PathBuf::from(file), Some(name.to_owned())))
}

/// Whether `bundle` may be used as `options` say: signed by a trusted key
/// when keys are trusted; its plugin libraries only with consent and a
/// trusted signature. Returns the signer's key id, if verified.
pub(crate) fn trusted(
    bundle: &Bundle,
    options: &LoadOptions,
) -> Result<Option<String>, BundleError> {
    let signer = if options.trust.is_empty() {
        None
    } else {
        Some(bundle.verify(&options.trust)?)
    };
    if bundle.has_plugins() && (signer.is_none() || !options.allow_plugins) {
        return Err(BundleError::Untrusted(
            "the bundle holds plugin libraries (native code): they load only from a bundle signed by a trusted key (--trust) and with consent (--allow-plugins)".to_owned(),
        ));
    }
    Ok(signer)
}

/// A bundle unpacked, and each of its packs' name and folder there.
pub(crate) type UnpackedPacks = (Arc<Unpacked>, Vec<(String, PathBuf)>);

/// Reads `bytes` as a bundle, checks it as `options` say, and unpacks it in
/// a folder of its own: the folder, and each pack's name and folder there.
pub(crate) fn unpack(bytes: &[u8], options: &LoadOptions) -> Result<UnpackedPacks, BundleError> {
    let bundle = Bundle::read(bytes, bundle::MAX_UNPACKED_BYTES)?;
    trusted(&bundle, options)?;
    let failed = |err: std::io::Error| BundleError::Invalid(format!("cannot unpack it: {err}"));
    let temp = std::env::temp_dir();
    sweep_once(&temp);
    let dir = crate::files::create_owned_dir(&temp, UNPACKED_STEM).map_err(failed)?;
    let dirs = bundle.unpack(dir.path()).map_err(failed)?;
    let unpacked = Arc::new(Unpacked {
        dir,
        revision: bundle.revision().to_owned(),
    });
    let packs = bundle
        .manifest()
        .packs
        .iter()
        .zip(dirs)
        .map(|(pack, dir)| (pack.name.clone(), dir))
        .collect();
    Ok((unpacked, packs))
}

impl Pack {
    /// The revision of the bundle the pack was loaded from, if it was.
    pub fn bundle_revision(&self) -> Option<&str> {
        self.info.bundle.as_ref().map(|b| b.revision.as_str())
    }

    /// The pack `name` (the only one, when `None`) of the bundle `file`.
    pub(crate) fn load_bundled(
        file: &Path,
        name: Option<&str>,
        options: &LoadOptions,
        inspect_only: bool,
        runtime: &Runtime,
    ) -> Result<Self, LoadErrors> {
        let whole = |message: String| LoadErrors::from(LoadError::whole_file(file, message));
        let bytes = crate::files::read_regular_bytes(file, bundle::MAX_UNPACKED_BYTES)
            .map_err(|err| whole(err.to_string()))?;
        let (unpacked, packs) = unpack(&bytes, options).map_err(|err| whole(err.to_string()))?;
        let names = || {
            packs
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let dir = match name {
            Some(name) => packs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, dir)| dir.clone())
                .ok_or_else(|| {
                    whole(format!(
                        "the bundle has no pack `{name}` (it holds {})",
                        names()
                    ))
                })?,
            None if packs.len() == 1 => packs[0].1.clone(),
            None => {
                return Err(whole(format!(
                    "the bundle holds {} packs ({}): name one, as {}#{}",
                    packs.len(),
                    names(),
                    file.display(),
                    packs[0].0
                )))
            }
        };
        Self::load_unpacked(&dir, &unpacked, options, inspect_only, runtime)
    }

    /// The pack in `dir` of the `unpacked` bundle.
    pub(crate) fn load_unpacked(
        dir: &Path,
        unpacked: &Arc<Unpacked>,
        options: &LoadOptions,
        inspect_only: bool,
        runtime: &Runtime,
    ) -> Result<Self, LoadErrors> {
        let mut pack = Self::load_inner(dir, options, inspect_only, runtime)?;
        pack.info.bundle = Some(Arc::clone(unpacked));
        Ok(pack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::SecretKey;

    fn pack(dir: &Path, name: &str, min_score: &str) {
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::write(
            dir.join("pack.yaml"),
            format!("name: {name}\nversion: 1.0.0\npipeline:\n  metrics: [json_emission]\nscoring:\n  min_score: {min_score}\n"),
        )
        .unwrap();
        std::fs::write(dir.join("tests/cases.yaml"), "cases: []\n").unwrap();
        std::fs::write(dir.join(".hidden"), "left out").unwrap();
    }

    fn build(dirs: &[PathBuf]) -> Result<Vec<u8>, BundleError> {
        Bundle::build(dirs, &Runtime::new(), &LoadOptions::default())
    }

    #[test]
    fn a_bundle_is_reproducible_and_its_packs_load_with_their_revisions() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        pack(&a, "alpha", "0.5");
        pack(&b, "beta", "0.7");
        let bytes = build(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(
            bytes,
            build(&[a.clone(), b.clone()]).unwrap(),
            "same packs, other bytes"
        );
        let bundle = Bundle::read(&bytes, bundle::MAX_UNPACKED_BYTES).unwrap();
        let paths: Vec<&str> = bundle
            .manifest()
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "alpha/pack.yaml",
                "alpha/tests/cases.yaml",
                "beta/pack.yaml",
                "beta/tests/cases.yaml"
            ]
        );
        let file = root.path().join("packs.tar.gz");
        std::fs::write(&file, &bytes).unwrap();
        // Two packs: one is named.
        let err = Pack::load(&file).unwrap_err().to_string();
        assert!(
            err.contains("holds 2 packs (alpha, beta): name one"),
            "{err}"
        );
        let named = PathBuf::from(format!("{}#beta", file.display()));
        let loaded = Pack::load(&named).unwrap();
        assert_eq!(loaded.name(), "beta");
        assert_eq!(loaded.revision(), Pack::load(&b).unwrap().revision());
        assert_eq!(loaded.bundle_revision(), Some(bundle.revision()));
        let err = Pack::load(format!("{}#gamma", file.display()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no pack `gamma` (it holds alpha, beta)"),
            "{err}"
        );
        // Its folder goes with the last pack loaded from it.
        let unpacked = loaded.info.bundle.as_ref().unwrap().dir.path().to_owned();
        assert!(unpacked.join("beta/pack.yaml").is_file());
        assert!(unpacked.join(crate::files::OWNER_LOCK).is_file());
        drop(loaded);
        assert!(!unpacked.exists());
        // A change to one pack changes the bundle's revision.
        pack(&b, "beta", "0.8");
        let changed = Bundle::read(&build(&[a, b]).unwrap(), bundle::MAX_UNPACKED_BYTES).unwrap();
        assert_ne!(changed.revision(), bundle.revision());
    }

    #[test]
    fn trusted_keys_are_required_when_given_and_plugins_need_a_trusted_signature() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        pack(&a, "alpha", "0.5");
        std::fs::write(a.join("libthing.so"), b"\x7fELF not really").unwrap();
        let bytes = build(std::slice::from_ref(&a)).unwrap();
        let bundle = Bundle::read(&bytes, bundle::MAX_UNPACKED_BYTES).unwrap();
        assert!(bundle.has_plugins());
        let key = SecretKey::generate().unwrap();
        let signed = Bundle::read(&bundle.sign(&key), bundle::MAX_UNPACKED_BYTES).unwrap();
        let trusting = LoadOptions {
            trust: vec![key.public()],
            ..LoadOptions::default()
        };
        let consenting = LoadOptions {
            allow_plugins: true,
            ..trusting.clone()
        };
        // Plugins: never unsigned, never without consent.
        for (bundle, options) in [
            (&bundle, &LoadOptions::default()),
            (
                &bundle,
                &LoadOptions {
                    allow_plugins: true,
                    ..LoadOptions::default()
                },
            ),
            (
                &signed,
                &LoadOptions {
                    allow_plugins: true,
                    ..LoadOptions::default()
                },
            ),
            (&signed, &trusting),
        ] {
            let err = trusted(bundle, options).unwrap_err();
            assert!(err.to_string().contains("plugin libraries"), "{err}");
        }
        assert_eq!(
            trusted(&signed, &consenting).unwrap(),
            Some(key.public().id())
        );
        // Trusted keys given: an unsigned bundle is refused.
        std::fs::remove_file(a.join("libthing.so")).unwrap();
        let plain = Bundle::read(&build(&[a]).unwrap(), bundle::MAX_UNPACKED_BYTES).unwrap();
        assert_eq!(trusted(&plain, &LoadOptions::default()).unwrap(), None);
        assert!(matches!(
            trusted(&plain, &trusting),
            Err(BundleError::Untrusted(_))
        ));
    }

    #[test]
    fn a_pack_that_reads_outside_its_folder_or_holds_a_link_is_not_bundled() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        pack(&a, "alpha", "0.5");
        std::os::unix::fs::symlink("/etc/hostname", a.join("link")).unwrap();
        let err = build(std::slice::from_ref(&a)).unwrap_err();
        assert!(err.to_string().contains("is a link"), "{err}");
        std::fs::remove_file(a.join("link")).unwrap();
        pack(&b, "alpha", "0.5");
        let err = build(&[a, b]).unwrap_err();
        assert!(
            err.to_string().contains("two packs are named `alpha`"),
            "{err}"
        );
    }
}
