//! `tribunal::Error`: every error the library returns, one variant per module
//! that can fail, so an embedding program can match on what went wrong and use
//! `?` across calls. Each module keeps its own error type; this only composes them.
//!
//! ```
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
//!         // Every error found, each with its file, line and column.
//!         assert!(errors.0[0].message.contains("no such pack"));
//!     }
//!     other => panic!("expected a load error, got {other:?}"),
//! }
//! ```

use crate::component::{BuildError, EvalError};
use crate::loader::{LoadError, LoadErrors};
use crate::pack::OverrideError;
use crate::plugin::PluginError;
use crate::script::LimitError;
use crate::semantic::ModelError;

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
    /// A component that cannot be built from its config.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A script limit that is not accepted.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A plugin library that cannot be used.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The sentence-embedding model cannot be used.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Evaluating a record failed (evaluation itself reports this as an `ERROR`
    /// record; this variant is for callers that want it as an error).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Reading input or writing results failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<LoadError> for Error {
    fn from(error: LoadError) -> Self {
        Self::Load(LoadErrors(vec![error]))
    }
}
