//! `tribunal report RESULTS.jsonl -o report.html [--baseline OLD.jsonl]`.

use std::io::{BufReader, Write as _};
use std::path::PathBuf;

use clap::Args;

use super::{EXIT_ABORTED, EXIT_OK};
use crate::diff::Run;
use crate::html_report::Page;
use crate::result_file::{check_outputs, Named, ResultFile};

/// Records the page holds by default.
const DEFAULT_SAMPLE: usize = 2_000;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  tribunal report results.jsonl -o report.html\n  tribunal report results.jsonl -o report.html --baseline old-results.jsonl"
)]
pub(super) struct ReportArgs {
    /// The run's result records (JSONL, as `eval --output` writes them).
    results: PathBuf,
    /// The HTML file to write.
    #[arg(long, short)]
    output: PathBuf,
    /// An earlier run's result records: adds a comparison section.
    #[arg(long, value_name = "OLD.jsonl")]
    baseline: Option<PathBuf>,
    /// The data set the run evaluated: the table then shows each record's raw
    /// output (matched by input line).
    #[arg(long, value_name = "DATA.jsonl")]
    input: Option<PathBuf>,
    /// The name of the output field in the data set.
    #[arg(long, default_value = "output")]
    output_field: String,
    /// Records the page's table holds at most (those that did not pass first).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE)]
    max_records: usize,
}

pub(super) fn run_report(args: &ReportArgs) -> Result<u8, String> {
    // The page is none of the files it is made from (checked before reading).
    let mut inputs = vec![Named::new("the results", &args.results)];
    for (option, file) in [("--baseline", &args.baseline), ("--input", &args.input)] {
        if let Some(file) = file {
            inputs.push(Named::new(option, file));
        }
    }
    check_outputs(&inputs, &[Named::new("-o", &args.output)]).map_err(|e| e.to_string())?;
    let open = |path: &PathBuf| {
        tribunal_base::files::open_stream(path)
            .map(BufReader::new)
            .map_err(|e| e.to_string())
    };
    // With a baseline, this run's records are taken in while the page reads them.
    let mut runs = match &args.baseline {
        Some(path) => {
            let old = Run::read(open(path)?)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Some((path.display().to_string(), old, Run::default()))
        }
        None => None,
    };
    let mut page = Page::read(
        open(&args.results)?,
        args.max_records,
        runs.as_mut().map(|(_, _, new)| new),
    )
    .map_err(|e| format!("cannot read {}: {e}", args.results.display()))?;
    if let Some(data) = &args.input {
        page.add_outputs(open(data)?, &args.output_field)
            .map_err(|e| format!("cannot read {}: {e}", data.display()))?;
    }
    let source = args.results.display().to_string();
    let html = page.html(
        &source,
        runs.as_ref()
            .map(|(name, old, new)| (name.as_str(), old, new)),
    );
    if page.skipped() > 0 {
        eprintln!(
            "warning: {}: {} line(s) are not result records and were skipped (the page says which)",
            source,
            page.skipped()
        );
    }
    let written = ResultFile::create(&args.output, Some(&args.results))
        .map_err(|e| e.to_string())
        .and_then(|mut out| {
            out.write_all(html.as_bytes()).map_err(|e| e.to_string())?;
            out.finish().map_err(|e| e.to_string())
        });
    if let Err(err) = written {
        eprintln!("error: cannot write the report: {err}");
        return Ok(EXIT_ABORTED);
    }
    let compared = args
        .baseline
        .as_ref()
        .map_or_else(String::new, |b| format!(", compared with {}", b.display()));
    eprintln!(
        "report: {} records of {source}{compared} -> {}",
        page.records(),
        args.output.display()
    );
    Ok(EXIT_OK)
}
