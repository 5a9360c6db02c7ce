//! The `tribunal` command line: check, eval, test, lint, list, explain, prompt.
//!
//! Exit codes: 0 success (check: the record passed); 1 check/test: not passed;
//! eval: some record did not pass with `--require-pass`; 2 usage or load error;
//! 3 eval: some records could not be evaluated (`ERROR`).

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

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

mod check;
mod eval;
mod inspect;
mod test;

use check::{check, CheckArgs};
use eval::{run_eval, EvalArgs};
use inspect::{explain, list, prompt, ExplainArgs, PromptArgs};
use test::{lint, run_tests, LintArgs, TestArgs};

use crate::pack::{LoadOptions, Override, Pack};

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
struct PackArg {
    /// The rule pack folder.
    pack: PathBuf,
    #[command(flatten)]
    load: LoadFlags,
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
