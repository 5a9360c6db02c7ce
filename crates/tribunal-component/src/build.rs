//! What building a component from its config sees: the pack's strategies, its
//! contract and the files it may read. Every implementation source (built-ins,
//! scripts, plugins) is built with one of these, once per use, at pack load.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::component::StrategyRegistry;
use crate::contract::Contract;
use crate::files::{FileError, PackFiles, PackText};

/// What a component's builder may look at. Built once per component use at pack load.
#[derive(Debug, Clone)]
pub struct BuildCtx<'a> {
    /// The name the component is known by in the pack.
    pub name: &'a str,
    /// Folder that relative paths in the config are resolved against (the manifest's folder).
    pub base_dir: &'a Path,
    pub strategies: &'a Arc<StrategyRegistry>,
    pub contract: Option<&'a Arc<Contract>>,
    /// The folders the pack may read files from.
    pub files: &'a PackFiles,
    /// The runtime's sentence-embedding models.
    pub models: &'a crate::semantic::Models,
    /// Where a builder's warnings go (a pack load reports them, located as
    /// its errors are; `tribunal lint --deny-warnings` fails on them).
    pub warnings: Option<&'a std::cell::RefCell<Vec<crate::component::BuildError>>>,
    /// The names of the metric steps that run before this one in the
    /// pipeline (`None` where the component is not built as a step): a rule
    /// that reads an earlier metric's score checks the name against them.
    pub metrics_before: Option<&'a [String]>,
}

impl BuildCtx<'_> {
    /// Reports a warning about the config (its key and name as an error's).
    pub fn warn(&self, warning: crate::component::BuildError) {
        if let Some(warnings) = self.warnings {
            warnings.borrow_mut().push(warning);
        }
    }

    pub fn resolve(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    /// Reads a file the config names (relative to the manifest's folder), confined
    /// to the pack's folders and capped in size.
    pub fn read_text(&self, path: &str) -> Result<PackText, FileError> {
        self.files.read_text(&self.resolve(path), path)
    }
}
