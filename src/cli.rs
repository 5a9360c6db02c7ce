//! The `tribunal` command line: check, eval, test, lint, list, explain, prompt.
//!
//! Exit codes: 0 success (check: the record passed); 1 check/test: not passed;
//! eval: some record did not pass with `--require-pass`; 2 usage or load error;
//! 3 eval: some records could not be evaluated (`ERROR`).

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

/// `println!` for human-readable command output, with control characters escaped
/// (see [`crate::text::printable`]): when stdout is closed early (`tribunal list |
/// head`) the process ends quietly instead of panicking; another write error ends it
/// with exit code 2 and a message on stderr.
macro_rules! out {
    ($($arg:tt)*) => {
        write_out(&crate::text::printable(&format!($($arg)*)))
    };
}

/// [`out!`] for JSON, printed as serialised (JSON escapes its own control characters).
macro_rules! out_json {
    ($value:expr) => {
        write_out(&serde_json::to_string_pretty($value).unwrap_or_default())
    };
}

fn write_out(text: &str) {
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
    {
        if err.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {err}");
        std::process::exit(2);
    }
}

use crate::jsonl::{self, FieldNames, DEFAULT_MAX_RECORD_BYTES};
use crate::pack::{LoadOptions, Override, Pack};
use crate::pipeline::Input;
use crate::report::{Report, Status};
use crate::result_file::ResultFile;

pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_NOT_PASSED: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
pub(crate) const EXIT_RECORD_ERRORS: u8 = 3;

#[derive(Debug, Parser)]
#[command(
    name = "tribunal",
    version,
    about = "Validate and score what language models emit, with YAML rule packs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate one output (a file, or `-` / nothing for stdin).
    Check(CheckArgs),
    /// Evaluate a JSONL data set, streaming, in parallel.
    Eval(EvalArgs),
    /// Run packs' own test cases (default: every pack under rules/).
    Test(TestArgs),
    /// Load packs and report errors and warnings without evaluating anything.
    Lint(LintArgs),
    /// List a pack's components and pipeline.
    List(PackArg),
    /// Print the documentation of a component or built-in.
    Explain(ExplainArgs),
    /// Print the contract's OUTPUT FORMAT block (or its JSON Schema).
    Prompt(PromptArgs),
}

#[derive(Debug, Args)]
struct PackOptions {
    /// The rule pack: a folder with a pack.yaml.
    #[arg(long, short)]
    pack: PathBuf,
    /// Override a component's config for this run: component.key=value (value is YAML; @file reads a JSON/YAML file).
    #[arg(long = "set", value_name = "COMPONENT.KEY=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    load: LoadFlags,
}

/// How packs are loaded, the same for every command that loads one.
#[derive(Debug, Args)]
struct LoadFlags {
    /// Also look for plugin libraries in this folder (repeatable; after the manifest's folder).
    #[arg(long = "plugin-dir", value_name = "DIR")]
    plugin_dirs: Vec<PathBuf>,
    /// Let the pack's files resolve into this file or folder outside the pack (repeatable).
    #[arg(long = "allow-path", value_name = "PATH")]
    allow_paths: Vec<PathBuf>,
}

impl LoadFlags {
    fn options(&self) -> LoadOptions {
        LoadOptions {
            plugin_dirs: self.plugin_dirs.clone(),
            allow_paths: self.allow_paths.clone(),
            ..LoadOptions::default()
        }
    }
}

impl PackOptions {
    fn load(&self) -> Result<Pack, String> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let overrides = self
            .set
            .iter()
            .map(|s| Override::parse(s, &cwd).map_err(|err| err.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let options = LoadOptions {
            overrides,
            ..self.load.options()
        };
        Pack::load_with(&self.pack, &options).map_err(|e| e.to_string())
    }
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    pack: PackOptions,
    /// The model output to check; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Ground truth JSON file (for metrics such as `json_compare`).
    #[arg(long)]
    expected: Option<PathBuf>,
    /// The record's `meta` (a JSON object), as components see it.
    #[arg(long)]
    meta: Option<String>,
    /// Print the result record as JSON.
    #[arg(long)]
    json: bool,
    /// Print only the re-ask feedback (empty when there is nothing to fix).
    #[arg(long)]
    feedback: bool,
    /// Largest output accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_BYTES)]
    max_record_bytes: usize,
}

#[derive(Debug, Args)]
#[allow(clippy::struct_field_names)]
struct EvalArgs {
    #[command(flatten)]
    pack: PackOptions,
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
}

#[derive(Debug, Args)]
struct TestArgs {
    /// Packs, or folders of packs (default: rules/).
    packs: Vec<PathBuf>,
    /// Print every case, not only failures.
    #[arg(long, short)]
    verbose: bool,
    #[command(flatten)]
    load: LoadFlags,
}

#[derive(Debug, Args)]
struct LintArgs {
    /// Packs, or folders of packs.
    #[arg(required = true)]
    packs: Vec<PathBuf>,
    /// Exit 2 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    #[command(flatten)]
    load: LoadFlags,
}

#[derive(Debug, Args)]
struct PackArg {
    /// The rule pack folder.
    pack: PathBuf,
    #[command(flatten)]
    load: LoadFlags,
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// A component of the pack, or a built-in rule.
    name: String,
    /// Look in this pack first.
    #[arg(long, short)]
    pack: Option<PathBuf>,
    #[command(flatten)]
    load: LoadFlags,
}

#[derive(Debug, Args)]
struct PromptArgs {
    #[command(flatten)]
    pack: PackOptions,
    /// Print a JSON Schema (draft 2020-12) of the contract instead.
    #[arg(long)]
    schema: bool,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            });
        }
    };
    let result = match cli.command {
        Command::Check(args) => check(&args),
        Command::Eval(args) => run_eval(&args),
        Command::Test(args) => run_tests(&args.packs, args.verbose, &args.load.options()),
        Command::Lint(args) => lint(&args),
        Command::List(args) => list(&args.pack, &args.load.options()),
        Command::Explain(args) => explain(&args),
        Command::Prompt(args) => prompt(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            let message = crate::text::printable(message.trim_end());
            if message.starts_with("error:") {
                eprintln!("{message}");
            } else {
                eprintln!("error: {message}");
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn read_limited(reader: impl Read, limit: usize, what: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what}: {e}"))?;
    if bytes.len() > limit {
        return Err(format!(
            "{what} is larger than {limit} bytes (raise --max-record-bytes)"
        ));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{what} is not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to() + 1
        )
    })?;
    // A byte-order mark is the file's encoding, not the model's output.
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

fn check(args: &CheckArgs) -> Result<u8, String> {
    let pack = args.pack.load()?;
    let output = match &args.file {
        None => read_limited(io::stdin().lock(), args.max_record_bytes, "stdin")?,
        Some(p) if p.as_os_str() == "-" => {
            read_limited(io::stdin().lock(), args.max_record_bytes, "stdin")?
        }
        Some(path) => {
            let file =
                File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            read_limited(file, args.max_record_bytes, &path.display().to_string())?
        }
    };
    let expected = match &args.expected {
        None => Value::Null,
        Some(path) => {
            let text = crate::files::read_regular_text(path, crate::files::MAX_VALUE_FILE_BYTES)
                .map_err(|e| format!("--expected: {e}"))?;
            serde_json::from_str(&text)
                .map_err(|e| format!("{}: not valid JSON: {e}", path.display()))?
        }
    };
    let mut input = Input::new(output).with_expected(expected);
    if let Some(meta) = &args.meta {
        input.meta =
            serde_json::from_str(meta).map_err(|e| format!("--meta: not valid JSON: {e}"))?;
    }
    if let Some(file) = &args.file {
        input.id = Value::String(file.display().to_string());
    }
    let report = pack.evaluate(&input);
    let mut stdout = io::stdout().lock();
    let written = if args.json {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&report.to_value()).unwrap_or_default()
        )
    } else if args.feedback {
        let feedback = report.feedback.as_deref().unwrap_or("");
        writeln!(stdout, "{}", crate::text::printable(feedback))
    } else {
        write!(stdout, "{}", render_report(&report))
    };
    written.map_err(|e| format!("cannot write to stdout: {e}"))?;
    Ok(if report.passed {
        EXIT_OK
    } else {
        EXIT_NOT_PASSED
    })
}

/// The human-readable form of a report, as `check` prints it. What came from the
/// model's output or the pack is shown with control characters escaped.
pub(crate) fn render_report(report: &Report) -> String {
    use crate::text::{one_line, printable};
    use std::fmt::Write as _;
    let mut out = String::new();
    let score = report
        .score
        .map_or_else(|| "-".to_owned(), |s| format!("{s:.4}"));
    let tier = report.extraction.as_ref().map_or("-", |e| e.tier_name());
    let _ = writeln!(
        out,
        "{}  score {score}  extraction {tier}  ({})",
        report.status,
        one_line(&report.pack)
    );
    if let Some(extraction) = &report.extraction {
        if !extraction.repairs.is_empty() {
            let repairs: Vec<&str> = extraction.repairs.iter().map(|r| r.as_str()).collect();
            let _ = writeln!(out, "repairs: {}", repairs.join(", "));
        }
    }
    if let Some(error) = &report.error {
        let _ = writeln!(out, "error: {}", one_line(error));
    }
    if !report.metrics.is_empty() {
        let _ = writeln!(out, "metrics:");
        for (name, result) in &report.metrics {
            let _ = writeln!(
                out,
                "  {:<24} {:.4}  (weight {})",
                one_line(name),
                result.score,
                result.weight
            );
        }
    }
    if !report.issues.is_empty() {
        let _ = writeln!(out, "issues:");
        for issue in &report.issues {
            let path = issue
                .path
                .as_deref()
                .filter(|p| !p.is_empty())
                .unwrap_or("-");
            let _ = writeln!(
                out,
                "  {:<7} {:<18} {:<14} {}",
                issue.severity,
                one_line(&issue.rule),
                one_line(path),
                one_line(&issue.message)
            );
        }
    }
    if let Some(feedback) = &report.feedback {
        let _ = writeln!(out, "feedback:");
        for line in feedback.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "  {}", printable(line));
            }
        }
    }
    out
}

fn run_eval(args: &EvalArgs) -> Result<u8, String> {
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
    let result = jsonl::run(&pack, reader, &mut sink, &options, |_| {
        if let Some(bar) = &progress {
            bar.inc(1);
        }
    });
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let summary = result.map_err(|e| format!("cannot write results: {e}"))?;
    sink.finish().map_err(|e| e.to_string())?;
    if args.summary || args.summary_json {
        let elapsed = started.elapsed().as_secs_f64();
        if args.summary_json {
            let mut value = summary.to_value();
            value["seconds"] = serde_json::json!(elapsed);
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
            let text = format!("pack        {} (revision {})\n{summary}\ntime        {elapsed:.2}s ({rate:.0} records/s)", pack.label(), pack.revision);
            if args.output.is_some() {
                out!("{text}");
            } else {
                eprintln!("{}", crate::text::printable(&text));
            }
        }
    }
    if summary.count(Status::Error) > 0 {
        return Ok(EXIT_RECORD_ERRORS);
    }
    if args.require_pass && summary.count(Status::Pass) < summary.records {
        return Ok(EXIT_NOT_PASSED);
    }
    Ok(EXIT_OK)
}

/// `tribunal test [PACK...] [--plugin-dir DIR] [--allow-path PATH]`.
fn run_tests(paths: &[PathBuf], verbose: bool, base: &LoadOptions) -> Result<u8, String> {
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

fn lint(args: &LintArgs) -> Result<u8, String> {
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
                    pack.metric_steps().count(),
                    pack.tests.len()
                );
            }
        }
    }
    Ok(if failed { EXIT_USAGE } else { EXIT_OK })
}

fn list(path: &Path, options: &LoadOptions) -> Result<u8, String> {
    let pack = Pack::load_with(path, options).map_err(|e| e.to_string())?;
    out!("{}  (revision {})", pack.label(), pack.revision);
    if let Some(description) = &pack.description {
        out!("{}", description.trim());
    }
    out!("\ncomponents:");
    if pack.components.is_empty() {
        out!("  (none: the pipeline uses built-ins directly)");
    }
    for c in &pack.components {
        out!(
            "  {:<24} {:<13} {:<28} {}",
            c.name,
            c.kind.as_str(),
            c.implementation.to_string(),
            c.description.as_deref().unwrap_or("").trim()
        );
    }
    let mut tiers: Vec<&str> = pack.ladder().iter().map(|t| t.as_str()).collect();
    if pack.contract.as_ref().is_some_and(|c| c.fallback.is_some()) {
        tiers.push("fallback");
    }
    out!("\nextraction: {}", tiers.join(" → "));
    out!(
        "postprocessors: {}",
        pack.postprocessor_names().collect::<Vec<_>>().join(", ")
    );
    let metrics: Vec<String> = pack
        .metric_steps()
        .map(|(n, w)| format!("{n} (weight {w})"))
        .collect();
    out!("metrics: {}", metrics.join(", "));
    let s = &pack.scoring;
    out!(
        "scoring: PASS ≤ {} errors, NEEDS_IMPROVEMENT ≤ {}, min_score {}",
        s.pass_max_issues,
        s.needs_improvement_max_issues,
        s.min_score
            .map_or_else(|| "none".to_owned(), |m| m.to_string())
    );
    out!("tests: {} files", pack.tests.len());
    Ok(EXIT_OK)
}

fn explain(args: &ExplainArgs) -> Result<u8, String> {
    if let Some(path) = &args.pack {
        let options = args.load.options();
        let pack = Pack::load_with(path, &options).map_err(|e| e.to_string())?;
        if let Some(c) = pack.component(&args.name) {
            out!("# {} ({}, {})", c.name, c.kind, c.implementation);
            if let Some(description) = &c.description {
                out!("\n{}", description.trim());
            }
            if let Some(docs) = &c.docs {
                out!("\n{docs}");
            }
            if let Some(docs) = c.code_docs() {
                out!("\n---\n\n{docs}");
            }
            return Ok(EXIT_OK);
        }
    }
    if let Some(builtin) = crate::builtins::find(&args.name) {
        out!("{}", builtin.docs.trim());
        return Ok(EXIT_OK);
    }
    let names: Vec<&str> = crate::builtins::names().collect();
    let hint = crate::suggest::nearest(&args.name, names.iter().copied())
        .map_or_else(String::new, |s| format!("; did you mean `{s}`?"));
    Err(format!(
        "no component or built-in named `{}`{hint} (built-ins: {})",
        args.name,
        names.join(", ")
    ))
}

fn prompt(args: &PromptArgs) -> Result<u8, String> {
    let pack = args.pack.load()?;
    let contract = pack
        .contract
        .as_ref()
        .ok_or_else(|| format!("pack `{}` has no `contract:` section", pack.label()))?;
    if args.schema {
        out_json!(&contract.json_schema(&pack.name));
    } else {
        out!("{}", contract.format_block());
    }
    Ok(EXIT_OK)
}
