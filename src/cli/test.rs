//! `tribunal test` and `tribunal lint`: packs' own test cases, and load checks.

use super::{plural, write_out, LoadFlags, EXIT_ABORTED, EXIT_NOT_PASSED, EXIT_OK, EXIT_USAGE};
use crate::result_file::{check_outputs, Named};
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;

/// The packs of `test` and `lint`: arguments and `--pack` flags, in that order.
#[derive(Debug, Args)]
pub(super) struct PackList {
    /// Packs, or folders of packs.
    #[arg(value_name = "PACK")]
    packs: Vec<PathBuf>,
    /// A pack or folder of packs (repeatable; the same as naming it as an argument).
    #[arg(long = "pack", short = 'p', value_name = "PACK")]
    pack_flags: Vec<PathBuf>,
    #[command(flatten)]
    load: LoadFlags,
}

impl PackList {
    fn paths(&self) -> Vec<PathBuf> {
        self.packs.iter().chain(&self.pack_flags).cloned().collect()
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  tribunal test\n  tribunal test rules/ksi-emission --verbose\n  tribunal test examples/packs/invoice-summary --plugin-dir target/debug --allow-plugins"
)]
pub(super) struct TestArgs {
    /// Packs or folders of packs to test (default: rules/).
    #[command(flatten)]
    packs: PackList,
    /// Print every case, not only failures.
    #[arg(long, short)]
    verbose: bool,
    /// Also write the results as JUnit XML (a test suite per pack) to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  tribunal lint my-pack\n  tribunal lint rules --deny-warnings")]
pub(super) struct LintArgs {
    #[command(flatten)]
    packs: PackList,
    /// Exit 2 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

/// `tribunal test [PACK...] [--plugin-dir DIR] [--allow-path PATH]`.
pub(super) fn run_tests(args: &TestArgs) -> Result<u8, String> {
    let mut paths = args.packs.paths();
    if paths.is_empty() {
        let rules = PathBuf::from("rules");
        if !rules.is_dir() {
            return Err(
                "no pack given, and no `rules/` folder here to test: name packs or folders of packs (tribunal test PACK...)"
                    .to_owned(),
            );
        }
        paths.push(rules);
    }
    let packs = discover_packs(&paths, |_, _| {})?;
    let base = args.packs.load.options()?;
    let runtime = args.packs.load.runtime(Vec::new())?;
    let (mut passed, mut failed) = (0, 0);
    let mut outcomes = Vec::new();
    for pack in packs {
        let started = std::time::Instant::now();
        let outcome = runtime.test_pack(&pack, args.verbose, &base);
        print!("{}", tribunal_base::text::printable(&outcome.log));
        passed += outcome.passed;
        failed += outcome.failed;
        if args.junit.is_some() {
            outcomes.push((outcome, started.elapsed().as_secs_f64()));
        }
    }
    println!("{passed} passed, {failed} failed");
    if let Some(path) = &args.junit {
        // A file the run read is never written over.
        let inputs: Vec<Named> = outcomes
            .iter()
            .flat_map(|(outcome, _)| &outcome.inputs)
            .map(|(what, file)| Named::new(*what, file))
            .collect();
        if let Err(err) = check_outputs(&inputs, &[Named::new("--junit", path)]) {
            eprintln!("error: {err}");
            return Ok(EXIT_USAGE);
        }
        if let Err(err) = write_junit(path, &outcomes) {
            eprintln!("error: cannot write JUnit XML to {}: {err}", path.display());
            return Ok(EXIT_ABORTED);
        }
    }
    if passed + failed == 0 {
        eprintln!("warning: no test cases found (a pack lists its test files under `tests:`)");
        return Ok(EXIT_NOT_PASSED);
    }
    Ok(if failed == 0 {
        EXIT_OK
    } else {
        EXIT_NOT_PASSED
    })
}

/// Packs named on the command line: a folder with pack.yaml, or a folder whose
/// sub-folders are packs (`folders` gets each such folder and its pack count).
pub(crate) fn discover_packs(
    paths: &[PathBuf],
    mut folders: impl FnMut(&std::path::Path, usize),
) -> Result<Vec<PathBuf>, String> {
    let mut packs = Vec::new();
    for path in paths {
        if let Some(names) = bundled_packs(path)? {
            // (A bundle holds packs: each is FILE#NAME.)
            packs.extend(
                names
                    .iter()
                    .map(|name| PathBuf::from(format!("{}#{name}", path.display()))),
            );
            continue;
        }
        if path.join("pack.yaml").is_file() || path.is_file() {
            packs.push(path.clone());
            continue;
        }
        let found = tribunal::Pack::packs_in(path);
        if found.is_empty() {
            return Err(format!(
                "{}: {}",
                path.display(),
                tribunal::Pack::why_not_a_pack(path)
            ));
        }
        folders(path, found.len());
        packs.extend(found);
    }
    Ok(packs)
}

/// The names of the packs in the bundle at `path`, when it is one (a gzip
/// file).
fn bundled_packs(path: &std::path::Path) -> Result<Option<Vec<String>>, String> {
    if !tribunal::Bundle::is_bundle_file(path) {
        return Ok(None);
    }
    let bundle = tribunal::Bundle::read_file(path).map_err(|err| err.to_string())?;
    Ok(Some(
        bundle
            .manifest()
            .packs
            .iter()
            .map(|pack| pack.name.clone())
            .collect(),
    ))
}

pub(super) fn lint(args: &LintArgs) -> Result<u8, String> {
    let packs = discover_packs(&args.packs.paths(), |folder, count| {
        out!(
            "{}: a folder of packs: linting its {}",
            folder.display(),
            plural(count, "pack")
        );
    })?;
    if packs.is_empty() {
        return Err("no pack given: name packs or folders of packs as arguments".to_owned());
    }
    let mut failed = false;
    let options = args.packs.load.options()?;
    let runtime = args.packs.load.runtime(Vec::new())?;
    for path in packs {
        match runtime.load_for_inspection(&path, &options) {
            Err(errors) => {
                eprintln!("{}", tribunal_base::text::printable(&errors.to_string()));
                failed = true;
            }
            Ok(pack) => {
                let mut warnings: Vec<String> =
                    pack.warnings().iter().map(ToString::to_string).collect();
                // A `tests:` glob that matches nothing has its own warning
                // (from the loader, at the glob); a pack without the line gets
                // the suggestion to add it.
                if pack.test_files().is_empty() && !pack.has_test_patterns() {
                    warnings.push(format!(
                        "{}: the pack has no tests (add `tests: [tests/*.yaml]`)",
                        path.display()
                    ));
                }
                failed |= args.deny_warnings && !warnings.is_empty();
                // The pack's line first, then its warnings, in that order on a
                // terminal (stdout is written before stderr).
                out!(
                    "{}  {}  {}, {}, {}, {}",
                    if warnings.is_empty() { "ok" } else { "warn" },
                    pack.label(),
                    plural(pack.components().len(), "component"),
                    plural(pack.postprocessor_names().count(), "postprocessor"),
                    plural(pack.metric_names().count(), "metric"),
                    plural(pack.test_files().len(), "test file")
                );
                for warning in &warnings {
                    eprintln!("warning: {}", tribunal_base::text::printable(warning));
                }
                super::note_not_loaded(&pack);
            }
        }
    }
    Ok(if failed { EXIT_USAGE } else { EXIT_OK })
}

/// `test --junit`: one test suite per pack, one test case per pack test case
/// (named `FILE: NAME`); a mismatch is a failure, a case that could not run an error.
fn write_junit(
    path: &std::path::Path,
    outcomes: &[(tribunal::PackTestOutcome, f64)],
) -> Result<(), String> {
    use crate::junit::{write_case, Suite, Verdict};
    let mut suites = Vec::new();
    let mut bodies = Vec::new();
    for (outcome, seconds) in outcomes {
        let mut body = Vec::new();
        let (mut failures, mut errors) = (0, 0);
        for case in &outcome.cases {
            let verdict = if let Some(error) = &case.error {
                errors += 1;
                Verdict::Errored {
                    message: error.lines().next().unwrap_or_default().to_owned(),
                    text: error.clone(),
                }
            } else if case.problems.is_empty() {
                Verdict::Passed
            } else {
                failures += 1;
                Verdict::Failed {
                    kind: "mismatch".to_owned(),
                    message: case.problems.join("; "),
                    text: case
                        .problems
                        .iter()
                        .chain(&case.record)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n"),
                }
            };
            let name = format!("{}: {}", case.file, case.name);
            write_case(&mut body, &name, &outcome.label, &[], &verdict);
        }
        suites.push(Suite {
            name: outcome.label.clone(),
            tests: outcome.cases.len() as u64,
            failures,
            errors,
            seconds: *seconds,
            properties: vec![("tribunal", env!("CARGO_PKG_VERSION").to_owned())],
        });
        bodies.push(body);
    }
    let mut out = crate::result_file::ResultFile::create(path, None).map_err(|e| e.to_string())?;
    crate::junit::write_document(&mut out, &suites, |i, out| out.write_all(&bodies[i]))
        .map_err(|e| e.to_string())?;
    out.finish().map_err(|e| e.to_string())
}
