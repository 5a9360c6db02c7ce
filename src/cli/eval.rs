//! `tribunal eval`: a JSONL data set through the pack, results as JSONL.

use super::{write_out, OnePack, EXIT_NOT_PASSED, EXIT_OK, EXIT_RECORD_ERRORS};
use crate::jsonl::{self, FieldNames, DEFAULT_MAX_RECORD_BYTES};
use crate::report::{Fields, Status};
use crate::result_file::ResultFile;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Args)]
#[allow(clippy::struct_field_names)]
#[command(
    after_help = "Examples:\n  tribunal eval rules/ksi-emission --input examples/data/ksi-emission.jsonl --output results.jsonl --summary\n  cat data.jsonl | tribunal eval --pack my-pack --input - --require-pass > results.jsonl"
)]
pub(super) struct EvalArgs {
    #[command(flatten)]
    pack: OnePack,
    /// JSONL data set (`-` for stdin). Fields: id, output, expected, meta.
    #[arg(long, short)]
    input: PathBuf,
    /// Where to write result records (JSONL); stdout when absent.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Worker threads (0 = all cores).
    #[arg(long, short, default_value_t = 0)]
    jobs: usize,
    /// Print an aggregate summary (to stdout with --output, else to stderr).
    #[arg(long)]
    summary: bool,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    summary_json: bool,
    /// Exit 1 when some record did not pass.
    #[arg(long)]
    require_pass: bool,
    /// Largest input record (one line) accepted, in bytes; larger ones become ERROR records.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_BYTES)]
    max_record_bytes: usize,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Name of the id field in input records.
    #[arg(long, default_value = "id")]
    id_field: String,
    /// Name of the output field in input records.
    #[arg(long, default_value = "output")]
    output_field: String,
    /// Name of the ground-truth field in input records.
    #[arg(long, default_value = "expected")]
    expected_field: String,
    /// Name of the meta field in input records.
    #[arg(long, default_value = "meta")]
    meta_field: String,
    /// Result record fields to write, comma-separated (default: all). For large
    /// runs that need only verdicts, e.g. `id,status,score`. Fields: id, line,
    /// status, passed, score, metrics, issues, extraction, json, feedback,
    /// error, pack, revision.
    #[arg(long, value_name = "LIST", value_parser = Fields::parse)]
    fields: Option<Fields>,
}

pub(super) fn run_eval(args: &EvalArgs) -> Result<u8, String> {
    let pack = args.pack.load()?;
    // Open the output before evaluating anything, so a bad path fails fast; a
    // regular file is replaced only when the run has finished.
    let input_path = (args.input.as_os_str() != "-").then_some(args.input.as_path());
    let mut sink = match &args.output {
        Some(path) => ResultFile::create(path, input_path).map_err(|e| e.to_string())?,
        None => ResultFile::stdout(),
    };
    let reader: Box<dyn BufRead + Send> = if args.input.as_os_str() == "-" {
        Box::new(BufReader::with_capacity(1 << 16, io::stdin()))
    } else {
        let file = File::open(&args.input)
            .map_err(|e| format!("cannot read {}: {e}", args.input.display()))?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    let options = jsonl::Options {
        jobs: args.jobs,
        max_record_bytes: args.max_record_bytes,
        fields: FieldNames {
            id: args.id_field.clone(),
            output: args.output_field.clone(),
            expected: args.expected_field.clone(),
            meta: args.meta_field.clone(),
        },
        result_fields: args.fields.unwrap_or_default(),
    };
    let progress = (!args.no_progress && io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {pos} records  {per_sec}  {elapsed_precise} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    });
    let started = Instant::now();
    let result = jsonl::run(&pack, reader, &mut sink, &options, |records| {
        if let Some(bar) = &progress {
            bar.inc(records);
        }
    });
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let summary = result.map_err(|e| format!("cannot write results: {e}"))?;
    sink.finish().map_err(|e| e.to_string())?;
    if args.summary || args.summary_json {
        let elapsed = started.elapsed().as_secs_f64();
        let embeddings = crate::semantic::cache_report();
        if args.summary_json {
            let mut value = summary.to_value();
            value["seconds"] = serde_json::json!(elapsed);
            if let Some(cache) = &embeddings {
                value["embedding_cache"] = serde_json::json!({
                    "hits": cache.hits,
                    "misses": cache.misses,
                    "dir": cache.dir,
                    "writes_failed": cache.writes_failed,
                });
            }
            if args.output.is_some() {
                out_json!(&value);
            } else {
                eprintln!(
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            }
        } else {
            let rate = if elapsed > 0.0 {
                summary.records as f64 / elapsed
            } else {
                0.0
            };
            let mut text = format!("pack        {} (revision {})\n{summary}\ntime        {elapsed:.2}s ({rate:.0} records/s)", pack.label(), pack.revision);
            if let Some(cache) = &embeddings {
                let place = cache.dir.as_ref().map_or_else(
                    || "no cache on disk".to_owned(),
                    |dir| format!("cache {}", dir.display()),
                );
                let failed = if cache.writes_failed > 0 {
                    format!(", {} could not be stored", cache.writes_failed)
                } else {
                    String::new()
                };
                let _ = write!(
                    text,
                    "\nembeddings  {} computed, {} from the cache ({place}{failed})",
                    cache.misses, cache.hits
                );
            }
            if args.output.is_some() {
                out!("{text}");
            } else {
                eprintln!("{}", crate::text::printable(&text));
            }
        }
    }
    if summary.records == 0 {
        let input = if input_path.is_some() {
            args.input.display().to_string()
        } else {
            "stdin".to_owned()
        };
        eprintln!(
            "warning: {}: no records (the data set is empty or holds only blank lines){}",
            crate::text::printable(&input),
            if args.require_pass {
                "; --require-pass fails on an empty data set"
            } else {
                ""
            }
        );
    }
    if summary.count(Status::Error) > 0 {
        return Ok(EXIT_RECORD_ERRORS);
    }
    if args.require_pass && (summary.records == 0 || summary.count(Status::Pass) < summary.records)
    {
        return Ok(EXIT_NOT_PASSED);
    }
    Ok(EXIT_OK)
}
