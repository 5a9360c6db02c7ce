//! `tribunal::Error`: every error the public API returns, one variant per kind,
//! so an embedding program can match on what went wrong and use `?` across
//! calls. The modules inside keep typed errors of their own (`BuildError`,
//! `PluginError`, `LimitError`, `ModelError`, ...); the pack loader turns each
//! into a `LoadError` at the file, line and column that caused it, so those are
//! what a caller sees.
//!
//! ```
//! # std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).unwrap(); // the repository
//! fn load_strict(path: &str) -> Result<tribunal::Pack, tribunal::Error> {
//!     let options = tribunal::LoadOptions {
//!         overrides: vec![tribunal::Override::parse(
//!             "json_emission.threshold=0.9",
//!             std::path::Path::new("."),
//!         )?],
//!         ..tribunal::LoadOptions::default()
//!     };
//!     Ok(tribunal::Pack::load_with(path, &options)?)
//! }
//!
//! match load_strict("rules/no-such-pack") {
//!     Err(tribunal::Error::Load(errors)) => {
//!         // Every error found, each with its file (and line and column when
//!         // the error is at a place in the file; a missing pack is not).
//!         assert!(errors.0[0].message.starts_with("no such file or folder"));
//!         assert_eq!(errors.0[0].position, None);
//!     }
//!     other => panic!("expected a load error, got {other:?}"),
//! }
//! ```

use crate::pack::OverrideError;
use crate::yaml::{LoadError, LoadErrors};

/// Any error the library returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A pack did not load: every error found, each with file, line and column.
    #[error(transparent)]
    Load(#[from] LoadErrors),
    /// A `--set component.key=value` override that cannot be read.
    #[error(transparent)]
    Override(#[from] OverrideError),
    /// Reading input or writing results failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<LoadError> for Error {
    fn from(error: LoadError) -> Self {
        Self::Load(LoadErrors(vec![error]))
    }
}
