//! The `tribunal` command line: check, eval, test, lint, list, explain, prompt;
//! completions and man pages generated from the same definition.
//!
//! Exit codes: 0 success (check: the record passed); 1 not passed (check, test;
//! eval: some records are `ERROR`, or with gates a gate failed); 2 usage or
//! load error; 3 run aborted (results, summary or JUnit could not be written).

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// `println!` for human-readable command output, with control characters escaped
/// (see [`tribunal_base::text::printable`]): when stdout is closed early (`tribunal list |
/// head`) the process ends quietly instead of panicking; another write error ends it
/// with exit code 2 and a message on stderr.
macro_rules! out {
    ($($arg:tt)*) => {
        write_out(&tribunal_base::text::printable(&format!($($arg)*)))
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

mod bundle;
mod check;
mod diff;
mod eval;
mod gates;
mod generate;
mod inspect;
mod report_page;
mod serve;
mod test;

use check::{check, CheckArgs};
use diff::{run_diff, DiffArgs};
use eval::{run_eval, EvalArgs};
use generate::{completions, man, new, schema, CompletionsArgs, ManArgs, NewArgs, SchemaArgs};
use inspect::{explain, list, prompt, ExplainArgs, PromptArgs};
use report_page::{run_report, ReportArgs};
use serve::{serve, ServeArgs};
use test::{lint, run_tests, LintArgs, TestArgs};

use tribunal::{LoadOptions, Override, Pack, Runtime};

pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_NOT_PASSED: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
/// The run was aborted: its results could not be written.
pub(crate) const EXIT_ABORTED: u8 = 3;

#[derive(Debug, Parser)]
#[command(
    name = "tribunal",
    version,
    about = "Validate and score what language models emit, with YAML rule packs",
    after_help = "Every command that loads a pack takes it as its first argument or as --pack.\n\
        Exit codes: 0 success, 1 not passed (check, test; eval: ERROR records,\n\
        or a failed gate), 2 usage or load error, 3 run aborted (the results,\n\
        summary or JUnit file could not be written).\n\n\
        Examples:\n  \
        tribunal check rules/ksi-emission reply.txt\n  \
        tribunal eval rules/ksi-emission --input data.jsonl --output results.jsonl --summary\n  \
        tribunal test rules/"
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
    /// Compare two runs' result files: status changes (regressions first), score deltas.
    Diff(DiffArgs),
    /// Serve packs over HTTP: a local decision service for agents and gateways.
    Serve(ServeArgs),
    /// Write one self-contained HTML page about a run (charts, issues, a record table).
    Report(ReportArgs),
    /// Load packs and report errors and warnings without evaluating anything.
    Lint(LintArgs),
    /// List a pack's components and pipeline.
    List(ListArgs),
    /// Print the documentation of a component or built-in.
    Explain(ExplainArgs),
    /// Print the contract's OUTPUT FORMAT block (or its JSON Schema).
    Prompt(PromptArgs),
    /// Print the JSON Schema of pack.yaml or of a component manifest (for editors).
    Schema(SchemaArgs),
    /// Print a new pack: `new tools --from FILE` holds a tools file's argument rules.
    New(NewArgs),
    /// Packs as one signed archive: build, sign, verify, keygen.
    Bundle(bundle::BundleArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a folder.
    Man(ManArgs),
    /// Internal: run a plugin component for `isolation: process` (the engine
    /// starts this itself; it speaks frames on stdin and stdout).
    #[command(name = "__plugin-host", hide = true)]
    PluginHost(PluginHostArgs),
}

#[derive(Debug, Args)]
struct PluginHostArgs {
    /// The plugin library to serve.
    library: PathBuf,
}

/// The pack of a command that loads one: `--pack P`, or the command's first
/// argument (a positional named `pack_arg`: [`OnePack`]'s, or `check`'s and
/// `explain`'s own).
#[derive(Debug, Args)]
struct PackOptions {
    /// The rule pack: a folder with a pack.yaml (or give it as the first argument).
    #[arg(long, short, value_name = "PACK")]
    pack: Option<PathBuf>,
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
    #[allow(clippy::doc_markdown)] // clap's help text: no Markdown
    /// Let the pack open its plugin libraries: native code that runs with your
    /// privileges (only from the pack, a --plugin-dir or an --allow-path). Also
    /// TRIBUNAL_ALLOW_PLUGINS=1 (or true, yes).
    #[arg(long = "allow-plugins")]
    allow_plugins: bool,
    /// A key a bundle must be signed by (a NAME.pub of `tribunal bundle keygen`;
    /// repeatable). Without one, a bundle's files are checked against its manifest
    /// and its plugin libraries do not load.
    #[arg(long = "trust", value_name = "PUB")]
    trust: Vec<PathBuf>,
    #[allow(clippy::doc_markdown)] // clap's help text: no Markdown
    /// Keep SEMANTIC embeddings in this folder across runs (default: $TRIBUNAL_CACHE_DIR,
    /// else $XDG_CACHE_HOME/tribunal, else ~/.cache/tribunal).
    #[arg(long = "cache-dir", value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,
    /// Keep SEMANTIC embeddings only in memory, for this run.
    #[arg(long = "no-cache")]
    no_cache: bool,
}

impl LoadFlags {
    /// The runtime the command's packs load on: its embedding cache is the
    /// run's (`--cache-dir`, `--no-cache`), and so are the `limits` it sets
    /// (`--set limits.*`).
    fn runtime(&self, limits: Vec<Override>) -> Result<Runtime, String> {
        self.runtime_with_jobs(limits, 0)
    }

    /// [`runtime`](Self::runtime) with `jobs` worker threads (0: all cores).
    fn runtime_with_jobs(&self, limits: Vec<Override>, jobs: usize) -> Result<Runtime, String> {
        let cache = if self.no_cache {
            None
        } else {
            self.cache_dir
                .clone()
                .or_else(tribunal::default_embedding_cache_dir)
        };
        let mut runtime = Runtime::builder().jobs(jobs).embedding_cache(cache);
        for limit in limits {
            runtime = runtime.limit(limit).map_err(|err| err.to_string())?;
        }
        Ok(runtime.build())
    }

    /// The load options (the trusted keys read).
    fn options(&self) -> Result<LoadOptions, String> {
        Ok(LoadOptions {
            plugin_dirs: self.plugin_dirs.clone(),
            allow_paths: self.allow_paths.clone(),
            allow_plugins: self.allow_plugins || consent_from_env(),
            trust: bundle::read_public_keys(&self.trust)?,
            ..LoadOptions::default()
        })
    }
}

/// The environment variable that gives `--allow-plugins` to every command (for CI).
pub(crate) const ALLOW_PLUGINS_ENV: &str = "TRIBUNAL_ALLOW_PLUGINS";

/// Whether `TRIBUNAL_ALLOW_PLUGINS` gives consent: only `1`, `true` or `yes`
/// (any case) do; anything else (`0`, `no`, empty, unset) does not.
fn consent_from_env() -> bool {
    std::env::var(ALLOW_PLUGINS_ENV).is_ok_and(|value| env_consents(&value))
}

fn env_consents(value: &str) -> bool {
    ["1", "true", "yes"]
        .iter()
        .any(|yes| value.trim().eq_ignore_ascii_case(yes))
}

impl PackOptions {
    /// The pack's path: `--pack`, else the positional `pack_arg`; clap has already
    /// refused both or neither where the pack is required.
    fn path<'a>(&'a self, pack_arg: Option<&'a PathBuf>) -> Option<&'a PathBuf> {
        self.pack.as_ref().or(pack_arg)
    }

    /// Loads the pack to run it (`check`, `eval`): a plugin component without
    /// consent is a load error.
    fn load(&self, pack_arg: Option<&PathBuf>) -> Result<Pack, String> {
        self.load_as(pack_arg, |runtime, path, options| {
            runtime.load_with(path, options)
        })
    }

    /// Loads the pack to show it (`list`, `explain`, `prompt`): a plugin
    /// component without consent is left unloaded, and noted.
    fn inspect(&self, pack_arg: Option<&PathBuf>) -> Result<Pack, String> {
        self.load_as(pack_arg, |runtime, path, options| {
            runtime.load_for_inspection(path, options)
        })
    }

    fn load_as(
        &self,
        pack_arg: Option<&PathBuf>,
        load: impl FnOnce(&Runtime, &PathBuf, &LoadOptions) -> Result<Pack, tribunal::LoadErrors>,
    ) -> Result<Pack, String> {
        let path = self
            .path(pack_arg)
            .ok_or("no pack given: name it as the first argument or with --pack")?;
        let (limits, overrides) = split_overrides(&self.set)?;
        let runtime = self.load.runtime(limits)?;
        let options = LoadOptions {
            overrides,
            ..self.load.options()?
        };
        load(&runtime, path, &options).map_err(|e| e.to_string())
    }
}

/// The `--set` overrides of a command, parsed: the `limits.*` ones, which are
/// the host's for every pack the command loads (its runtime's), and the others.
fn split_overrides(set: &[String]) -> Result<(Vec<Override>, Vec<Override>), String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let overrides = set
        .iter()
        .map(|s| Override::parse(s, &cwd).map_err(|err| err.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(overrides
        .into_iter()
        .partition(|o: &Override| o.component == "limits"))
}

/// The one pack of `eval`, `list` and `prompt`: the first argument or `--pack`
/// (exactly one of them), with the loading options.
#[derive(Debug, Args)]
struct OnePack {
    /// The rule pack folder (or --pack).
    #[arg(
        value_name = "PACK",
        required_unless_present = "pack",
        conflicts_with = "pack"
    )]
    pack_arg: Option<PathBuf>,
    #[command(flatten)]
    options: PackOptions,
}

impl OnePack {
    fn load(&self) -> Result<Pack, String> {
        self.options.load(self.pack_arg.as_ref())
    }

    fn inspect(&self) -> Result<Pack, String> {
        self.options.inspect(self.pack_arg.as_ref())
    }
}

/// Notes on stderr for the plugin components `pack` left unloaded (without
/// `--allow-plugins`), so that stdout holds only what was asked for.
fn note_not_loaded(pack: &Pack) {
    for note in pack.not_loaded() {
        eprintln!(
            "note: {}",
            tribunal_base::text::printable(&note.to_string())
        );
    }
}

/// `tribunal list`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  tribunal list rules/json-eval\n  \
    tribunal list rules/json-eval --set json_compare.fuzzy_threshold=0.9")]
struct ListArgs {
    #[command(flatten)]
    pack: OnePack,
}

/// `count` and the noun, in the plural unless `count` is 1: "1 component", "2 metrics".
fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
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
        Command::Test(args) => run_tests(&args),
        Command::Diff(args) => run_diff(&args),
        Command::Report(args) => run_report(&args),
        Command::Serve(args) => serve(&args),
        Command::Lint(args) => lint(&args),
        Command::List(args) => args.pack.inspect().map(|p| list(&p)),
        Command::Explain(args) => explain(&args),
        Command::Prompt(args) => prompt(&args),
        Command::Schema(args) => schema(&args),
        Command::New(args) => new(&args),
        Command::Bundle(args) => bundle::bundle(&args),
        Command::Completions(args) => Ok(completions(&args)),
        Command::Man(args) => man(&args),
        Command::PluginHost(args) => {
            let code = tribunal::serve_plugin_helper(&args.library);
            return ExitCode::from(u8::try_from(code).unwrap_or(EXIT_USAGE));
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            let message = tribunal_base::text::printable(message.trim_end());
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

#[cfg(test)]
mod tests {
    use super::env_consents;

    #[test]
    fn only_yes_words_in_the_environment_are_consent() {
        for value in ["1", "true", "yes", "TRUE", "Yes", " 1 "] {
            assert!(env_consents(value), "{value:?}");
        }
        for value in ["", "0", "false", "no", "off", "y", "2", "allow"] {
            assert!(!env_consents(value), "{value:?}");
        }
    }
}
