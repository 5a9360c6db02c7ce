//! `tribunal test` and `tribunal lint`: packs' own test cases, and load checks.

use super::{write_out, LoadFlags, EXIT_NOT_PASSED, EXIT_OK, EXIT_USAGE};
use crate::pack::{LoadOptions, Pack};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct TestArgs {
    /// Packs, or folders of packs (default: rules/).
    pub(super) packs: Vec<PathBuf>,
    /// Print every case, not only failures.
    #[arg(long, short)]
    pub(super) verbose: bool,
    #[command(flatten)]
    pub(super) load: LoadFlags,
}

#[derive(Debug, Args)]
pub(super) struct LintArgs {
    /// Packs, or folders of packs.
    #[arg(required = true)]
    pub(super) packs: Vec<PathBuf>,
    /// Exit 2 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    #[command(flatten)]
    pub(super) load: LoadFlags,
}

/// `tribunal test [PACK...] [--plugin-dir DIR] [--allow-path PATH]`.
pub(super) fn run_tests(
    paths: &[PathBuf],
    verbose: bool,
    base: &LoadOptions,
) -> Result<u8, String> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("rules")]
    } else {
        paths.to_vec()
    };
    let packs = discover_packs(&paths)?;
    let (mut passed, mut failed) = (0, 0);
    for pack in packs {
        let outcome = crate::pack_tests::run(&pack, verbose, base);
        print!("{}", crate::text::printable(&outcome.log));
        passed += outcome.passed;
        failed += outcome.failed;
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        EXIT_OK
    } else {
        EXIT_NOT_PASSED
    })
}

/// Packs named on the command line: a folder with pack.yaml, or a folder whose
/// sub-folders are packs.
pub(crate) fn discover_packs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut packs = Vec::new();
    for path in paths {
        if path.join("pack.yaml").is_file() || path.is_file() {
            packs.push(path.clone());
            continue;
        }
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("pack.yaml").is_file())
            .collect();
        if found.is_empty() {
            return Err(format!(
                "{}: no pack.yaml here or in its sub-folders",
                path.display()
            ));
        }
        found.sort();
        packs.extend(found);
    }
    Ok(packs)
}

pub(super) fn lint(args: &LintArgs) -> Result<u8, String> {
    let packs = discover_packs(&args.packs)?;
    let mut failed = false;
    for path in packs {
        let options = args.load.options();
        match Pack::load_with(&path, &options) {
            Err(errors) => {
                eprintln!("{}", crate::text::printable(&errors.to_string()));
                failed = true;
            }
            Ok(pack) => {
                for warning in &pack.warnings {
                    eprintln!("warning: {}", crate::text::printable(&warning.to_string()));
                }
                if pack.tests.is_empty() {
                    eprintln!(
                        "warning: {}: the pack has no tests (add `tests: [tests/*.yaml]`)",
                        crate::text::printable(&path.display().to_string())
                    );
                }
                failed |=
                    args.deny_warnings && (!pack.warnings.is_empty() || pack.tests.is_empty());
                out!(
                    "ok  {}  {} components, {} postprocessors, {} metrics, {} test files",
                    pack.label(),
                    pack.components.len(),
                    pack.postprocessor_names().count(),
                    pack.metric_names().count(),
                    pack.tests.len()
                );
            }
        }
    }
    Ok(if failed { EXIT_USAGE } else { EXIT_OK })
}
