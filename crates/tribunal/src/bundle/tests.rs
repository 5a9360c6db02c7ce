use std::io::{Read, Write};

use super::*;

/// A bundle of two packs (their files made up: no pack is loaded here).
fn built(_root: &Path) -> Vec<u8> {
    let mut files = BTreeMap::new();
    let mut packs = Vec::new();
    for name in ["alpha", "beta"] {
        files.insert(
            format!("{name}/pack.yaml"),
            format!("name: {name}\nversion: 1.0.0\n").into_bytes(),
        );
        files.insert(format!("{name}/tests/cases.yaml"), b"cases: []\n".to_vec());
        packs.push(BundledPack {
            name: name.to_owned(),
            version: "1.0.0".to_owned(),
            revision: format!("{name}-revision"),
            dir: name.to_owned(),
        });
    }
    Bundle::assemble(packs, files)
}

/// The archive's entries, as they are.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut tar)
        .unwrap();
    let mut archive = tar::Archive::new(tar.as_slice());
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (path, data)
        })
        .collect()
}

/// An archive of `entries` as given (names written raw, any type).
fn archive(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, data, kind) in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(data.len() as u64);
        header.set_entry_type(*kind);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append(&header, *data).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn with(bytes: &[u8], change: impl FnOnce(&mut Vec<(String, Vec<u8>)>)) -> Vec<u8> {
    let mut all = entries(bytes);
    change(&mut all);
    let listed: Vec<(&str, &[u8], tar::EntryType)> = all
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_slice(), tar::EntryType::Regular))
        .collect();
    archive(&listed)
}

#[test]
fn a_bundle_reads_back_whole() {
    let root = tempfile::tempdir().unwrap();
    let bytes = built(root.path());
    assert_eq!(bytes, built(root.path()), "the same packs, other bytes");
    let bundle = Bundle::read(&bytes, MAX_UNPACKED_BYTES).unwrap();
    let manifest = bundle.manifest();
    assert_eq!(manifest.format, "tribunal-bundle/1");
    let names: Vec<&str> = manifest.packs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert!(!bundle.is_signed() && !bundle.has_plugins());
    let out = tempfile::tempdir().unwrap();
    let dirs = bundle.unpack(out.path()).unwrap();
    assert_eq!(dirs, [out.path().join("alpha"), out.path().join("beta")]);
    assert_eq!(
        std::fs::read_to_string(out.path().join("beta/pack.yaml")).unwrap(),
        "name: beta\nversion: 1.0.0\n"
    );
}

#[test]
fn signatures_verify_against_trusted_keys_only() {
    let root = tempfile::tempdir().unwrap();
    let bytes = built(root.path());
    let key = SecretKey::generate().unwrap();
    let other = SecretKey::generate().unwrap();
    let unsigned = Bundle::read(&bytes, MAX_UNPACKED_BYTES).unwrap();
    assert!(matches!(
        unsigned.verify(&[key.public()]),
        Err(BundleError::Untrusted(_))
    ));
    let signed = unsigned.sign(&key);
    assert_eq!(signed, unsigned.sign(&key), "signing is reproducible too");
    let read = Bundle::read(&signed, MAX_UNPACKED_BYTES).unwrap();
    assert_eq!(
        read.verify(&[other.public(), key.public()]).unwrap(),
        key.public().id()
    );
    let err = read.verify(&[other.public()]).unwrap_err();
    assert!(matches!(err, BundleError::Untrusted(_)), "{err}");
    assert!(err.to_string().contains(&key.public().id()), "{err}");
    // A second signer; re-signing by one key replaces its signature.
    let twice = read.sign(&other);
    let twice = Bundle::read(&twice, MAX_UNPACKED_BYTES).unwrap();
    assert_eq!(twice.signatures.len(), 2);
    assert_eq!(
        Bundle::read(&twice.sign(&key), MAX_UNPACKED_BYTES)
            .unwrap()
            .signatures
            .len(),
        2
    );
    // The same manifest written otherwise (its meaning, its revision kept):
    // a signature is over the bytes, and no longer verifies.
    let rewritten = with(&signed, |all| {
        let manifest = all.iter_mut().find(|(p, _)| p == MANIFEST_NAME).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&manifest.1).unwrap();
        manifest.1 = serde_json::to_vec(&value).unwrap();
    });
    // Another key's signature under this key's id.
    let other_signed = Bundle::read(&unsigned.sign(&other), MAX_UNPACKED_BYTES).unwrap();
    let impostor = with(&other_signed.write(), |all| {
        let signatures = all.iter_mut().find(|(p, _)| p == SIGNATURES_NAME).unwrap();
        signatures.1 = String::from_utf8(signatures.1.clone())
            .unwrap()
            .replace(&other.public().id(), &key.public().id())
            .into_bytes();
    });
    for forged in [rewritten, impostor] {
        let err = Bundle::read(&forged, MAX_UNPACKED_BYTES)
            .unwrap()
            .verify(&[key.public()])
            .unwrap_err();
        assert!(matches!(err, BundleError::BadSignature(_)), "{err}");
        assert_eq!(err.code(), "bundle.bad-signature");
    }
}

/// Every way an archive can differ from its manifest is refused, saying
/// which file; so is every entry that is not a plain file at a plain path.
#[test]
#[allow(clippy::too_many_lines)]
fn damaged_and_hostile_archives_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let bytes = built(root.path());
    let tampered: Vec<(&str, Vec<u8>)> = vec![
        (
            "one byte of a file",
            with(&bytes, |all| all[1].1.push(b' ')),
        ),
        (
            "a file replaced",
            with(&bytes, |all| all[1].1 = b"name: evil\n".to_vec()),
        ),
        (
            "a file added",
            with(&bytes, |all| {
                all.push(("alpha/extra.yaml".into(), b"x".to_vec()));
            }),
        ),
        (
            "a file removed",
            with(&bytes, |all| {
                all.remove(2);
            }),
        ),
    ];
    for (what, archive) in tampered {
        let err = Bundle::read(&archive, MAX_UNPACKED_BYTES).unwrap_err();
        assert!(matches!(err, BundleError::Tampered(_)), "{what}: {err}");
        assert_eq!(err.code(), "bundle.tampered");
    }
    let manifest = entries(&bytes).remove(0).1;
    let hostile: Vec<(&str, Vec<u8>)> = vec![
        ("not gzip", b"name: x\n".to_vec()),
        (
            "no manifest",
            archive(&[("alpha/pack.yaml", b"x", tar::EntryType::Regular)]),
        ),
        (
            "a parent path",
            archive(&[
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
                ("../evil", b"x", tar::EntryType::Regular),
            ]),
        ),
        (
            "an absolute path",
            archive(&[
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
                ("/etc/evil", b"x", tar::EntryType::Regular),
            ]),
        ),
        (
            "a link",
            archive(&[
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
                ("alpha/link", b"", tar::EntryType::Symlink),
            ]),
        ),
        (
            "a device",
            archive(&[
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
                ("alpha/dev", b"", tar::EntryType::Char),
            ]),
        ),
        (
            "twice",
            archive(&[
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
                (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
            ]),
        ),
        ("a truncated archive", bytes[..bytes.len() / 2].to_vec()),
        (
            "another format",
            with(&bytes, |all| {
                all[0].1 = String::from_utf8(all[0].1.clone())
                    .unwrap()
                    .replace("tribunal-bundle/1", "tribunal-bundle/9")
                    .into_bytes();
            }),
        ),
        (
            "another Tribunal",
            with(&bytes, |all| {
                let text = String::from_utf8(all[0].1.clone()).unwrap();
                let range = &serde_json::from_str::<Manifest>(&text).unwrap().tribunal;
                all[0].1 = text
                    .replace(range.as_str(), ">=99.0.0, <100.0.0")
                    .into_bytes();
            }),
        ),
    ];
    for (what, archive) in hostile {
        let err = Bundle::read(&archive, MAX_UNPACKED_BYTES).unwrap_err();
        assert!(matches!(err, BundleError::Invalid(_)), "{what}: {err}");
    }
    // A bomb: a small archive that unpacks past the bound.
    let zeros = vec![0u8; 4 << 20];
    let bomb = archive(&[
        (MANIFEST_NAME, &manifest, tar::EntryType::Regular),
        ("alpha/zeros", &zeros, tar::EntryType::Regular),
    ]);
    assert!(bomb.len() < 64 << 10);
    let err = Bundle::read(&bomb, 1 << 20).unwrap_err();
    assert!(err.to_string().contains("more than 1048576 bytes"), "{err}");
}
