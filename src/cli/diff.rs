//! `tribunal diff OLD.jsonl NEW.jsonl`: what changed between two runs.

use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;

use super::{write_out, EXIT_NOT_PASSED, EXIT_OK};
use crate::diff::{compare, Run};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  tribunal diff old-results.jsonl results.jsonl\n  tribunal diff old-results.jsonl results.jsonl --json --fail-on-regression"
)]
pub(super) struct DiffArgs {
    /// The earlier run's result records (JSONL, as `eval --output` writes them).
    old: PathBuf,
    /// The later run's result records.
    new: PathBuf,
    /// Print the diff as JSON (every changed record) instead of text.
    #[arg(long)]
    json: bool,
    /// Exit 1 when a record's status got worse.
    #[arg(long)]
    fail_on_regression: bool,
}

pub(super) fn run_diff(args: &DiffArgs) -> Result<u8, String> {
    let read = |path: &PathBuf| -> Result<Run, String> {
        let file = tribunal_base::files::open_stream(path).map_err(|e| e.to_string())?;
        Run::read(BufReader::new(file)).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (old, new) = (read(&args.old)?, read(&args.new)?);
    let (old_name, new_name) = (
        args.old.display().to_string(),
        args.new.display().to_string(),
    );
    let diff = compare(&old, &new, &old_name, &new_name);
    if args.json {
        out_json!(&diff.to_value(&old, &new));
    } else {
        out!("{}", diff.text(&old, &new).trim_end());
    }
    Ok(if args.fail_on_regression && !diff.regressions.is_empty() {
        EXIT_NOT_PASSED
    } else {
        EXIT_OK
    })
}
