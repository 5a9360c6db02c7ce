//! The sentence-embedding model `scripts/setup` installs, for the tests that use
//! it (the integration tests and the model's own unit tests include this file).

use std::path::{Path, PathBuf};

/// Where `scripts/setup` installs the model (or `$TRIBUNAL_MODEL_DIR`).
pub fn model_dir() -> PathBuf {
    std::env::var_os("TRIBUNAL_MODEL_DIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(
            || {
                // The repository's root: this file is also compiled into the
                // engine's unit tests, whose crate is crates/tribunal.
                let here = Path::new(env!("CARGO_MANIFEST_DIR"));
                let root = here
                    .ancestors()
                    .find(|dir| dir.join("Cargo.lock").is_file());
                root.unwrap_or(here).join("models/all-MiniLM-L6-v2")
            },
            PathBuf::from,
        )
}

/// A copy of the installed model (its files linked) in a folder of its own, so a
/// pack pointed at it (`model:`) has its own, cold, embedding cache.
pub fn model_copy(into: &Path) -> PathBuf {
    let source = model_dir();
    let copy = into.join("model");
    std::fs::create_dir_all(copy.join("1_Pooling")).unwrap();
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ] {
        if source.join(file).is_file() {
            std::os::unix::fs::symlink(source.join(file), copy.join(file)).unwrap();
        }
    }
    copy
}
