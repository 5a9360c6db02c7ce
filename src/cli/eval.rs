//! `tribunal eval`: a JSONL data set through the pack, results as JSONL.

use super::gates::{self, FailUnder, Gates};
use super::{write_out, OnePack, EXIT_ABORTED, EXIT_NOT_PASSED, EXIT_OK};
use crate::result_file::resume::{self, KeptResults};
use crate::result_file::{Named, ResultFile};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tribunal::jsonl::{self, FieldNames, RunError, DEFAULT_MAX_RECORD_BYTES};
use tribunal::{Field, Fields, Status};

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
    /// Print the summary as JSON instead of a table; with FILE, write it there.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    summary_json: Option<PathBuf>,
    /// Gate: every record must PASS (exit 1 otherwise, or on an empty data set).
    #[arg(long)]
    require_pass: bool,
    #[allow(clippy::doc_markdown)] // clap's help text: no Markdown
    /// Gate on the run's aggregate: pass_rate=0.95 (share of PASS records),
    /// score=0.8 (mean record score) or METRIC=0.7 (a metric's mean); repeatable.
    #[arg(long = "fail-under", value_name = "NAME=MIN", value_parser = FailUnder::parse)]
    fail_under: Vec<FailUnder>,
    /// Gate: at most N records may be ERROR (could not be evaluated).
    #[arg(long, value_name = "N")]
    max_errors: Option<u64>,
    /// Also write the results as JUnit XML (one test case per record) to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Largest input record (one line) accepted, in bytes; larger ones become ERROR records.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_BYTES)]
    max_record_bytes: usize,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Without --summary, do not print the closing line (records, statuses,
    /// where the results went, time) on stderr.
    #[arg(long, short)]
    quiet: bool,
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
    /// Name of the transcript field in input records (a list of messages in
    /// the OpenAI Chat, Anthropic Messages or OpenAI Responses format).
    #[arg(long, default_value = "messages")]
    messages_field: String,
    /// Result record fields to write, comma-separated (default: all). For large
    /// runs that need only verdicts, e.g. `id,status,score`. Fields: id, line,
    /// status, passed, score, metrics, issues, extraction, json, feedback,
    /// error, pack, revision.
    #[arg(long, value_name = "LIST", value_parser = Fields::parse)]
    fields: Option<Fields>,
    /// Continue an unfinished run (stopped, killed or crashed) with the same
    /// --output: the results it wrote are checked against the pack and the
    /// input and kept; the rest of the input is evaluated.
    #[arg(long, requires = "output")]
    resume: bool,
}

/// How long the records being evaluated have, after a stop signal, to finish
/// before they are stopped.
const FINISH_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Set by the first SIGINT, SIGTERM or SIGHUP: stop reading, give the records
/// being evaluated [`FINISH_GRACE`] to finish, then stop them (they are left
/// out, for `--resume`), write every result judged, keep the partial results.
/// A second signal ends the process at once.
fn stop_on_signals(interrupt: tribunal::Interrupt) -> Option<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handler = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            eprintln!("\nstopped at once: the last result line may be torn (--resume drops it)");
            std::process::exit(i32::from(EXIT_ABORTED));
        }
        eprintln!(
            "\nstopping: finishing the records being evaluated, for {} s at most (signal again to stop at once)",
            FINISH_GRACE.as_secs()
        );
        let _ = std::thread::Builder::new()
            .name("tribunal-stop".into())
            .spawn({
                let interrupt = interrupt.clone();
                move || {
                    std::thread::sleep(FINISH_GRACE);
                    interrupt.interrupt();
                }
            });
    });
    handler.is_ok().then_some(stop)
}

/// The pack, served by an engine of its own: the batch runs through it.
fn one_pack_engine(
    pack: tribunal::Pack,
) -> Result<(tribunal::Engine, std::sync::Arc<tribunal::Served>), String> {
    let engine = tribunal::Engine::builder()
        .pack(pack)
        .threads(1)
        .build()
        .map_err(|err| err.to_string())?;
    let served = engine
        .packs()
        .into_iter()
        .next()
        .ok_or("the engine serves no pack")?;
    Ok((engine, served))
}

pub(super) fn run_eval(args: &EvalArgs) -> Result<u8, String> {
    let (engine, served) = one_pack_engine(args.pack.load()?)?;
    let pack = served.pack();
    let gates = Gates {
        fail_under: args.fail_under.clone(),
        max_errors: args.max_errors,
        require_pass: args.require_pass,
    };
    gates.check_names(pack.metric_names())?;
    check_files(args, pack, &gates)?;
    let input_path = (args.input.as_os_str() != "-").then_some(args.input.as_path());
    // Signals are handled from here on: a stop leaves the partial results
    // (with whatever was written) for --resume, never a stray file.
    let stop = stop_on_signals(engine.runtime().interrupt().clone());
    let (mut sink, mut resumed) = open_results(args, input_path)?;
    let reader: Box<dyn BufRead + Send> = if args.input.as_os_str() == "-" {
        Box::new(BufReader::with_capacity(1 << 16, io::stdin()))
    } else {
        let file = tribunal_base::files::open_stream(&args.input).map_err(|e| e.to_string())?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    let options = run_options(args, stop);
    // The test cases go to a file beside the JUnit file while the run streams;
    // the document, whose header holds the counts, is written at the end.
    let mut cases = match &args.junit {
        Some(path) => Some(
            CasesFile::create(path)
                .map_err(|e| format!("cannot write JUnit XML to {}: {e}", path.display()))?,
        ),
        None => None,
    };
    let progress = progress_bar(args);
    let started = Instant::now();
    // Each record's JUnit case is made on the worker threads, beside its result.
    let label = pack.label().to_owned();
    let write_case =
        move |report: &tribunal::Report, _: Option<&tribunal::Input>, out: &mut Vec<u8>| {
            crate::junit::write_report_case(out, report, &label);
        };
    let junit_out = cases.as_mut().map(|c| jsonl::Beside {
        out: &mut c.writer,
        write: &write_case,
    });
    let revision = pack.revision().to_owned();
    let fields = options.result_fields;
    let mut kept = resumed
        .as_mut()
        .map(|r| KeptResults::new(&mut r.kept, &mut r.checks, &revision, fields));
    let seal: Option<&jsonl::SealFn> = sink.keeps_checks().then_some(&resume::seal);
    let mut on_records = |records| {
        if let Some(bar) = &progress {
            bar.inc(records);
        }
    };
    let batch = tribunal::Batch::new(&options, &mut on_records)
        .beside(junit_out)
        .seal(seal)
        .resume(kept.as_mut().map(|k| k as &mut dyn jsonl::Resume));
    let result = engine.run(&served, reader, &mut sink, batch);
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let summary = match result {
        Ok(summary) => summary,
        // The kept results are not this pack's for this input: nothing was
        // evaluated, they stay as they were.
        Err(RunError::Kept(err)) => {
            let from = resumed
                .as_ref()
                .map_or_else(String::new, |r| format!(" in {}", r.partial.display()));
            return Err(format!("cannot resume: {err}{from}"));
        }
        // The run is aborted: the results could not be written (exit 3).
        Err(RunError::Io(err)) => {
            keep_unwritten(sink, &err);
            return Ok(EXIT_ABORTED);
        }
    };
    if let Some(from) = &resumed {
        say_what_was_resumed(from, &summary);
    }
    if summary.interrupted {
        keep_interrupted(sink, summary.records);
        return Ok(EXIT_ABORTED);
    }
    if let Err(err) = sink.finish() {
        eprintln!("error: {err}");
        return Ok(EXIT_ABORTED);
    }
    let outcomes = gates.check(&summary);
    if let (Some(path), Some(cases)) = (&args.junit, cases) {
        let seconds = started.elapsed().as_secs_f64();
        if let Err(err) = write_junit(path, input_path, cases, pack, &summary, seconds) {
            eprintln!("error: cannot write JUnit XML to {}: {err}", path.display());
            return Ok(EXIT_ABORTED);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    if let Err(code) = say_how_it_went(args, pack, &summary, &gates, &outcomes, elapsed) {
        return Ok(code);
    }
    if summary.records == 0 {
        warn_empty(args, input_path.is_some(), &gates);
    }
    Ok(exit_code(&gates, &outcomes, &summary))
}

/// Refuses, before anything is read, what would fail after the run: a folder
/// where a file is wanted, an output that is an input or another output, and
/// a resumed run whose kept results lack what its summary or gates count.
fn check_files(args: &EvalArgs, pack: &tribunal::Pack, gates: &Gates) -> Result<(), String> {
    // A folder where a file is wanted (`--summary-json` takes an optional value,
    // so `--summary-json PACK` would read the pack as the file): refused now,
    // not after the run.
    for (flag, file) in [
        ("--summary-json", &args.summary_json),
        ("--junit", &args.junit),
    ] {
        if let Some(file) = file.as_ref().filter(|f| f.as_os_str() != "-" && f.is_dir()) {
            return Err(format!(
                "{flag} {}: is a folder, not a file (to name the pack, give it first or with --pack)",
                file.display()
            ));
        }
    }
    // No output is an input or another output (before anything is read).
    let mut inputs = vec![Named::new("--input", &args.input)];
    inputs.extend(pack.inputs().map(|(what, file)| Named::new(what, file)));
    let mut outputs = vec![match &args.output {
        Some(path) => Named::new("--output", path),
        None => Named::new("the results", "-"),
    }];
    for (option, file) in [
        ("--summary-json", &args.summary_json),
        ("--junit", &args.junit),
    ] {
        if let Some(file) = file.as_ref().filter(|file| file.as_os_str() != "-") {
            outputs.push(Named::new(option, file));
        }
    }
    crate::result_file::check_outputs(&inputs, &outputs).map_err(|e| e.to_string())?;
    // Kept results count in the summary, the gates and the JUnit file only as
    // far as their fields go: resuming with fewer than those need is refused.
    if args.resume
        && (args.summary || args.summary_json.is_some() || gates.any() || args.junit.is_some())
    {
        let fields = args.fields.unwrap_or_default();
        let missing: Vec<&str> = [
            Field::Status,
            Field::Score,
            Field::Metrics,
            Field::Issues,
            Field::Extraction,
        ]
        .into_iter()
        .filter(|f| !fields.has(*f))
        .map(Field::as_str)
        .collect();
        if !missing.is_empty() {
            return Err(format!(
                "--resume with --summary, --summary-json, a gate or --junit needs the kept results' {} (not in --fields): add them, or resume without those",
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

/// Where the results go, opened before anything is evaluated so that a bad
/// path fails fast (a regular file is replaced only when the run has finished),
/// with the kept results of an unfinished run when resuming.
fn open_results(
    args: &EvalArgs,
    input_path: Option<&std::path::Path>,
) -> Result<(ResultFile, Option<crate::result_file::Resumed>), String> {
    Ok(match &args.output {
        Some(path) if args.resume => {
            let (sink, from) = ResultFile::resume(path, input_path).map_err(|e| e.to_string())?;
            (sink, Some(from))
        }
        Some(path) => (
            ResultFile::create(path, input_path).map_err(|e| e.to_string())?,
            None,
        ),
        None => (ResultFile::stdout(), None),
    })
}

/// The runner's options from the command line.
fn run_options(args: &EvalArgs, stop: Option<Arc<AtomicBool>>) -> jsonl::Options {
    let mut options = jsonl::Options::default();
    options.jobs = args.jobs;
    options.max_record_bytes = args.max_record_bytes;
    options.fields = FieldNames {
        id: args.id_field.clone(),
        output: args.output_field.clone(),
        expected: args.expected_field.clone(),
        meta: args.meta_field.clone(),
        messages: args.messages_field.clone(),
    };
    options.result_fields = args.fields.unwrap_or_default();
    options.stop = stop;
    options
}

/// The summaries asked for, else the closing line (unless `--quiet`).
fn say_how_it_went(
    args: &EvalArgs,
    pack: &tribunal::Pack,
    summary: &jsonl::Summary,
    gates: &Gates,
    outcomes: &[gates::Outcome],
    elapsed: f64,
) -> Result<(), u8> {
    if args.summary || args.summary_json.is_some() {
        write_summaries(args, pack, summary, gates, outcomes, elapsed)?;
    } else if !args.quiet {
        eprintln!("{}", closing_line(args, summary, elapsed));
    }
    Ok(())
}

/// What a run without `--summary` says when it ends, on stderr: `eval: 9
/// records (PASS 3, NEEDS_IMPROVEMENT 1, FAIL 4, ERROR 1) -> results.jsonl in
/// 2.05s`.
fn closing_line(args: &EvalArgs, summary: &jsonl::Summary, seconds: f64) -> String {
    let counts: Vec<String> = [
        Status::Pass,
        Status::NeedsImprovement,
        Status::Fail,
        Status::Error,
    ]
    .into_iter()
    .map(|status| format!("{} {}", status.as_str(), summary.count(status)))
    .collect();
    let to = match &args.output {
        Some(path) if path.as_os_str() != "-" => path.display().to_string(),
        _ => "stdout".to_owned(),
    };
    format!(
        "eval: {} ({}) -> {to} in {seconds:.2}s",
        super::plural(
            usize::try_from(summary.records).unwrap_or(usize::MAX),
            "record"
        ),
        counts.join(", ")
    )
}

/// A spinner on stderr, when it is a terminal and not turned off.
fn progress_bar(args: &EvalArgs) -> Option<ProgressBar> {
    (!args.no_progress && io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {pos} records  {rate}  {elapsed_precise} {msg}",
            )
            .map_or_else(
                |_| ProgressStyle::default_spinner(),
                |style| {
                    // Whole records per second: indicatif's `{per_sec}` shows
                    // four decimals (`202,649.5109/s`).
                    style.with_key(
                        "rate",
                        |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                            let _ = write!(out, "{:.0}/s", state.per_sec());
                        },
                    )
                },
            ),
        );
        bar
    })
}

/// Tells how many records a resumed run kept and evaluated.
fn say_what_was_resumed(from: &crate::result_file::Resumed, summary: &jsonl::Summary) {
    let torn = if from.torn > 0 {
        format!(" (a torn last line of {} bytes dropped)", from.torn)
    } else {
        String::new()
    };
    let source = from.partial.display();
    if summary.resumed == 0 && from.torn == 0 {
        eprintln!("resumed: no results to keep (no unfinished run left any in {source}); every record evaluated now");
    } else {
        eprintln!(
            "resumed: {} records kept from {source}{torn}, {} evaluated now",
            summary.resumed,
            summary.records - summary.resumed
        );
    }
}

/// Keeps what a run that could not write its results wrote, saying where
/// (the run exits 3).
fn keep_unwritten(sink: ResultFile, err: &io::Error) {
    let kept = sink.keep_partial().ok().flatten();
    let hint = kept.map_or_else(String::new, |partial| {
        format!("; the results written so far are kept in {}: once the cause is fixed, run the same command with --resume", partial.display())
    });
    eprintln!("error: cannot write results: {err}{hint}");
}

/// Keeps what an interrupted run wrote, saying where (the run exits 3).
fn keep_interrupted(sink: ResultFile, written: u64) {
    match sink.keep_partial() {
        Ok(Some(partial)) => {
            eprintln!("interrupted: {written} results kept in {} (the output file is unchanged); run the same command with --resume to finish", partial.display());
        }
        Ok(None) => eprintln!("interrupted: {written} results written"),
        Err(err) => eprintln!("error: {err}"),
    }
}

/// `--summary-json` and `--summary`; `Err` with the exit code when the summary
/// file cannot be written.
fn write_summaries(
    args: &EvalArgs,
    pack: &tribunal::Pack,
    summary: &jsonl::Summary,
    gates: &Gates,
    outcomes: &[gates::Outcome],
    elapsed: f64,
) -> Result<(), u8> {
    let embeddings = pack.runtime().embedding_cache_report();
    if let Some(summary_file) = &args.summary_json {
        let mut value = summary.to_value();
        value["pack"] = serde_json::json!({
            "name": pack.name(),
            "version": pack.version(),
            "revision": pack.revision(),
        });
        value["tribunal"] = serde_json::json!(env!("CARGO_PKG_VERSION"));
        value["seconds"] = serde_json::json!(elapsed);
        if gates.any() {
            value["gates"] = gates::to_value(outcomes);
        }
        if let Some(cache) = &embeddings {
            value["embedding_cache"] = serde_json::json!({
                "hits": cache.hits,
                "misses": cache.misses,
                "dir": cache.dir,
                "writes_failed": cache.writes_failed,
                "rejected": cache.rejected,
            });
        }
        if summary_file.as_os_str() != "-" {
            let text = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
            // Written as results are: through its own partial file, renamed
            // into place when complete.
            let written = ResultFile::create(summary_file, None)
                .map_err(|e| e.to_string())
                .and_then(|mut out| {
                    use std::io::Write as _;
                    out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
                    out.finish().map_err(|e| e.to_string())
                });
            if let Err(err) = written {
                eprintln!(
                    "error: cannot write the summary to {}: {err}",
                    summary_file.display()
                );
                return Err(EXIT_ABORTED);
            }
        } else if args.output.is_some() {
            out_json!(&value);
        } else {
            eprintln!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
    }
    // `--summary-json` alone prints the JSON instead of the table; with a
    // file, `--summary` still prints the table.
    let json_printed = args
        .summary_json
        .as_ref()
        .is_some_and(|file| file.as_os_str() == "-");
    if args.summary && !json_printed {
        let rate = if elapsed > 0.0 {
            summary.records as f64 / elapsed
        } else {
            0.0
        };
        let mut text = format!("pack        {} (revision {})\n{summary}\ntime        {elapsed:.2}s ({rate:.0} records/s)", pack.label(), pack.revision());
        if let Some(cache) = &embeddings {
            let place = cache.dir.as_ref().map_or_else(
                || "no cache on disk".to_owned(),
                |dir| format!("cache {}", dir.display()),
            );
            let mut failed = String::new();
            if cache.writes_failed > 0 {
                let _ = write!(failed, ", {} could not be stored", cache.writes_failed);
            }
            if cache.rejected > 0 {
                let _ = write!(
                    failed,
                    ", {} entries not their text's were ignored and written again",
                    cache.rejected
                );
            }
            let _ = write!(
                text,
                "\nembeddings  {} computed, {} from the cache ({place}{failed})",
                cache.misses, cache.hits
            );
        }
        if args.output.is_some() {
            out!("{text}");
        } else {
            eprintln!("{}", tribunal_base::text::printable(&text));
        }
    }
    Ok(())
}

/// The warning that the data set held no record.
fn warn_empty(args: &EvalArgs, from_file: bool, gates: &Gates) {
    let input = if from_file {
        args.input.display().to_string()
    } else {
        "stdin".to_owned()
    };
    eprintln!(
        "warning: {}: no records (the data set is empty or holds only blank lines){}",
        tribunal_base::text::printable(&input),
        if gates.require_pass || !gates.fail_under.is_empty() {
            "; --require-pass and --fail-under fail on an empty data set"
        } else {
            ""
        }
    );
}

/// The exit code of a finished run: the gates alone decide when there are
/// any (each says how it came out); without, records that could not be
/// evaluated are records not passed.
fn exit_code(gates: &Gates, outcomes: &[gates::Outcome], summary: &jsonl::Summary) -> u8 {
    if gates.any() {
        for outcome in outcomes {
            let verdict = if outcome.passed { "passed" } else { "FAILED" };
            eprintln!("gate {verdict}: {}", outcome.line);
        }
        return if outcomes.iter().all(|o| o.passed) {
            EXIT_OK
        } else {
            EXIT_NOT_PASSED
        };
    }
    if summary.count(Status::Error) > 0 {
        return EXIT_NOT_PASSED;
    }
    EXIT_OK
}

/// The JUnit test cases of a run, written beside the JUnit file as they come
/// (memory stays flat) and removed when the document is written or the run ends.
struct CasesFile {
    path: PathBuf,
    writer: std::io::BufWriter<File>,
}

impl CasesFile {
    fn create(junit: &std::path::Path) -> std::io::Result<Self> {
        let name = junit
            .file_name()
            .map_or_else(|| "junit".into(), |n| n.to_string_lossy().into_owned());
        let folder = match junit.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (path, file) =
            tribunal_base::files::create_temporary(&folder, &format!("{name}.cases"))?;
        Ok(Self {
            path,
            writer: std::io::BufWriter::new(file),
        })
    }
}

impl Drop for CasesFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes the JUnit document: one test suite for the pack, then the cases.
fn write_junit(
    path: &std::path::Path,
    input: Option<&std::path::Path>,
    mut cases: CasesFile,
    pack: &tribunal::Pack,
    summary: &jsonl::Summary,
    seconds: f64,
) -> Result<(), String> {
    use std::io::Write as _;
    cases.writer.flush().map_err(|e| e.to_string())?;
    let mut out = ResultFile::create(path, input).map_err(|e| e.to_string())?;
    let pass_rate = summary.pass_rate().unwrap_or(0.0);
    let mut properties = vec![
        ("pack", pack.label().to_owned()),
        ("revision", pack.revision().to_owned()),
        ("tribunal", env!("CARGO_PKG_VERSION").to_owned()),
        ("pass_rate", pass_rate.to_string()),
    ];
    if let Some(mean) = summary.score.mean() {
        properties.push(("score", mean.to_string()));
    }
    let suite = crate::junit::Suite {
        name: pack.label().to_owned(),
        tests: summary.records,
        failures: summary.count(Status::Fail) + summary.count(Status::NeedsImprovement),
        errors: summary.count(Status::Error),
        seconds,
        properties,
    };
    crate::junit::write_document(&mut out, &[suite], |_, out| {
        let mut body = File::open(&cases.path)?;
        std::io::copy(&mut body, out).map(|_| ())
    })
    .map_err(|e| e.to_string())?;
    out.finish().map_err(|e| e.to_string())
}
