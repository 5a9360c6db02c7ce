//! The docs test: every `console` block of the documentation is run against the
//! real binary and its output compared with the output shown, so the docs cannot
//! drift from the code. Also: every relative Markdown link points to a file that
//! exists.
//!
//! Scanned: README.md, docs/*.md, rules/*/README.md, examples/packs/*/README.md.
//!
//! - A block fenced as ```` ```console ```` (or `~~~console`) holds commands, lines
//!   starting with `$ ` (a line ending in `\` continues on the next), each followed by
//!   its expected output: stdout and stderr together, in order.
//! - Matching is line by line, trailing whitespace ignored. `[..]` in an expected line
//!   matches any text within the line; an expected line `...` matches any number of
//!   lines. Everything else must match exactly.
//! - Each Markdown file gets one fresh temporary folder, used by its blocks in order
//!   (a file written by one block is there for the next). It holds symlinks to the
//!   repository's `rules`, `examples`, `models`, `plugins`, `scripts`, `benches`,
//!   `docs` and the build's target folder (`target`), and for `docs/NAME.md` a copy of the
//!   fixture folder `docs/examples/NAME/`.
//! - Each block runs as one bash script from that folder, with the binary under test
//!   first on `PATH` (so `tribunal` is it). `cargo run [OPTIONS] -- ARGS` runs
//!   `tribunal ARGS`; `cargo build ...` runs the real cargo in the repository, on the
//!   same target folder; other cargo commands are refused (they could change the
//!   repository). Not run, but checked to name something that exists:
//!   `scripts/test` (the command that runs this test) and `cargo bench --bench NAME`
//!   (its figures depend on the machine). Exit codes are not compared.
//!
//! `DOCS=authoring,README cargo test --test docs` runs only the files whose path
//! contains one of the given words.

#[path = "support/files.rs"]
mod files;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// Repository folders the examples refer to, linked into each example folder.
const LINKED: [&str; 7] = [
    "rules", "examples", "models", "plugins", "scripts", "benches", "docs",
];
const MARKER: &str = "<<<tribunal-docs-example>>>";

/// One command of a console block and the output the docs show for it.
#[derive(Debug)]
struct Example {
    /// 1-based line of the command in the Markdown file.
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// A console block: its commands in order.
#[derive(Debug)]
struct Block {
    line: usize,
    examples: Vec<Example>,
}

/// The Markdown files whose examples are run.
fn markdown_files() -> Vec<PathBuf> {
    let repo = Path::new(REPO);
    let mut files = vec![repo.join("README.md")];
    let mut add_dir = |dir: PathBuf, readme_in_subdirs: bool| {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter_map(|p| {
                if readme_in_subdirs {
                    Some(p.join("README.md")).filter(|r| r.is_file())
                } else {
                    (p.extension().is_some_and(|e| e == "md") && p.is_file()).then_some(p)
                }
            })
            .collect();
        found.sort();
        files.extend(found);
    };
    add_dir(repo.join("docs"), false);
    add_dir(repo.join("rules"), true);
    add_dir(repo.join("examples/packs"), true);
    files
}

/// The console blocks of a Markdown text. Fences of another kind are skipped whole,
/// so a console fence shown inside another block is not run.
fn console_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let Some((fence, info)) = fence_open(line) else {
            continue;
        };
        let mut body = Vec::new();
        for (_, inner) in lines.by_ref() {
            if is_fence_close(inner, &fence) {
                break;
            }
            body.push(inner);
        }
        if info.split_whitespace().next() == Some("console") {
            blocks.push(Block {
                line: index + 1,
                examples: examples(index + 2, &body),
            });
        }
    }
    blocks
}

/// A fence opening (```` ``` ```` or `~~~`, three or more) and its info string.
fn fence_open(line: &str) -> Option<(String, &str)> {
    let trimmed = line.trim_start();
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence: String = trimmed.chars().take_while(|c| *c == marker).collect();
    (fence.len() >= 3).then(|| (fence.clone(), trimmed[fence.len()..].trim()))
}

fn is_fence_close(line: &str, fence: &str) -> bool {
    let trimmed = line.trim();
    let marker = fence.chars().next().unwrap_or('`');
    trimmed.len() >= fence.len() && trimmed.chars().all(|c| c == marker)
}

/// Commands and their expected output; `first_line` is the 1-based line of `body[0]`.
fn examples(first_line: usize, body: &[&str]) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut continued = false;
    for (offset, line) in body.iter().enumerate() {
        if continued {
            let example = examples.last_mut().expect("a command precedes");
            example.command.push('\n');
            example.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                line: first_line + offset,
                command: command.to_owned(),
                expected: Vec::new(),
            });
            continued = command.ends_with('\\');
        } else if let Some(example) = examples.last_mut() {
            example.expected.push((*line).to_owned());
        } else {
            panic!(
                "line {}: a console block must start with a `$ ` command",
                first_line + offset
            );
        }
    }
    examples
}

/// Whether `actual` matches `expected` (see the module docs for `[..]` and `...`).
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, others)| line_matches(first, line) && lines_match(rest, others)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (expected.trim_end(), actual.trim_end());
    let pieces: Vec<&str> = expected.split("[..]").collect();
    if pieces.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    if !rest.ends_with(last) {
        return false;
    }
    rest = &rest[..rest.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// The build's target folder: the test binary is TARGET/PROFILE/deps/NAME-HASH.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary lives in TARGET/PROFILE/deps")
        .to_path_buf()
}

/// A fresh folder for one Markdown file's examples.
fn example_folder(markdown: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let repo = Path::new(REPO);
    for name in LINKED {
        std::os::unix::fs::symlink(repo.join(name), dir.path().join(name)).expect("symlink");
    }
    std::os::unix::fs::symlink(target_dir(), dir.path().join("target")).expect("symlink");
    if markdown.parent() == Some(&repo.join("docs")) {
        let stem = markdown.file_stem().expect("a file name");
        let fixtures = repo.join("docs/examples").join(stem);
        if fixtures.is_dir() {
            files::copy_dir(&fixtures, dir.path());
        }
    }
    dir
}

/// What the test does with a command.
enum Treatment {
    Run,
    /// Shown but not run (see the module docs); what it names exists.
    NotRun,
    /// Shown but not run, and what it names does not exist.
    Missing(String),
}

fn treatment(command: &str) -> Treatment {
    let words: Vec<&str> = command.split_whitespace().collect();
    let exists = |path: &str| Path::new(REPO).join(path).is_file();
    match words.as_slice() {
        ["scripts/test", ..] if exists("scripts/test") => Treatment::NotRun,
        ["scripts/test", ..] => Treatment::Missing("scripts/test does not exist".to_owned()),
        ["cargo", "bench", rest @ ..] => {
            match rest.windows(2).find(|w| w[0] == "--bench").map(|w| w[1]) {
                Some(name) if exists(&format!("benches/{name}.rs")) => Treatment::NotRun,
                Some(name) => Treatment::Missing(format!("no benchmark benches/{name}.rs")),
                None => Treatment::Missing("`cargo bench` without `--bench NAME`".to_owned()),
            }
        }
        _ => Treatment::Run,
    }
}

/// The bash prelude: the binary under test first on PATH, `cargo run` as it, other
/// cargo commands in the repository.
fn prelude(dir: &Path) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_tribunal"));
    let target = target_dir();
    format!(
        r#"exec 2>&1
export PATH={bin_dir}:"$PATH" NO_COLOR=1 TERM=dumb CARGO_TARGET_DIR={target}
cd {dir}
cargo() {{
    case "$1" in
    run)
        while [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done
        shift
        tribunal "$@"
        ;;
    build) (cd {repo} && command cargo "$@") ;;
    *) echo "the docs test runs only \`cargo run\` and \`cargo build\`, not \`cargo $1\`" ;;
    esac
}}
"#,
        bin_dir = quote(bin.parent().expect("a folder")),
        target = quote(&target),
        dir = quote(dir),
        repo = quote(Path::new(REPO)),
    )
}

fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Runs every example of one Markdown file; returns a description of each mismatch.
fn check_file(markdown: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(markdown).expect("read a Markdown file");
    let shown = markdown
        .strip_prefix(REPO)
        .unwrap_or(markdown)
        .display()
        .to_string();
    let blocks = console_blocks(&text);
    let mut failures = Vec::new();
    if blocks.is_empty() {
        return failures;
    }
    let dir = example_folder(markdown);
    for block in &blocks {
        let mut script = prelude(dir.path());
        let mut run = Vec::new();
        for example in &block.examples {
            match treatment(&example.command) {
                Treatment::Run => {}
                Treatment::NotRun => continue,
                Treatment::Missing(problem) => {
                    failures.push(format!("{shown}:{}: {problem}", example.line));
                    continue;
                }
            }
            let _ = writeln!(script, "printf '\\n%s\\n' '{MARKER}'\n{}", example.command);
            run.push(example);
        }
        if run.is_empty() {
            continue;
        }
        let output = Command::new("timeout")
            .args(["600", "bash", "-c", &script])
            // The file's own embedding cache: its first SEMANTIC run computes.
            .env("TRIBUNAL_CACHE_DIR", dir.path().join(".cache"))
            .output()
            .expect("bash runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let separator = format!("\n{MARKER}\n");
        let mut outputs = stdout.split(&separator);
        let before = outputs.next().unwrap_or_default();
        if !before.trim().is_empty() {
            failures.push(format!(
                "{shown}:{}: the block's set-up printed:\n{before}",
                block.line
            ));
        }
        for example in run {
            let actual = outputs.next().unwrap_or("<the command did not run>");
            let mut actual: Vec<&str> = actual.lines().collect();
            while actual.last().is_some_and(|l| l.trim().is_empty()) {
                actual.pop();
            }
            let mut expected = example.expected.clone();
            while expected.last().is_some_and(|l| l.trim().is_empty()) {
                expected.pop();
            }
            if !lines_match(&expected, &actual) {
                failures.push(format!(
                    "{shown}:{}: $ {}\n--- shown in the docs\n{}\n--- printed\n{}\n---",
                    example.line,
                    example.command,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    failures
}

fn selected(path: &Path) -> bool {
    match std::env::var("DOCS") {
        Ok(words) if !words.trim().is_empty() => {
            let shown = path.display().to_string();
            words.split(',').any(|w| shown.contains(w.trim()))
        }
        _ => true,
    }
}

#[test]
fn every_console_example_prints_what_the_docs_show() {
    let files: Vec<PathBuf> = markdown_files()
        .into_iter()
        .filter(|p| selected(p))
        .collect();
    assert!(!files.is_empty(), "no Markdown file selected");
    // The files run in parallel, two at a time (each runs its blocks in order).
    let failures: Vec<String> = std::thread::scope(|scope| {
        let mut all = Vec::new();
        for pair in files.chunks(2) {
            let handles: Vec<_> = pair
                .iter()
                .map(|file| scope.spawn(move || check_file(file)))
                .collect();
            for handle in handles {
                all.extend(handle.join().expect("a docs thread"));
            }
        }
        all
    });
    assert!(
        failures.is_empty(),
        "{} example(s) do not print what the docs show:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_relative_link_points_to_a_file() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("a regex");
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("read a Markdown file");
        let dir = file.parent().expect("a folder");
        for (index, line) in text.lines().enumerate() {
            for found in link.captures_iter(line) {
                let target = &found[1];
                if target.contains("://")
                    || target.starts_with('#')
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let path = target.split('#').next().unwrap_or(target);
                if !dir.join(path).exists() {
                    broken.push(format!("{}:{}: {target}", file.display(), index + 1));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to missing files:\n{}",
        broken.join("\n")
    );
}

/// The README is the front door: short (the two commands, a first pack, links),
/// with the internals in docs/ and no unexplained project jargon.
#[test]
fn the_readme_stays_a_front_door() {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; keep it under 250 (move details to docs/)"
    );
    assert!(
        !readme.to_lowercase().contains("seed"),
        "README.md says \"seed\": say what the pack or rule checks instead"
    );
    // The quick start builds the release binary; the later examples reuse it.
    assert!(
        !readme.contains("cargo run -q --"),
        "use `cargo run --release -q --`"
    );
}

#[test]
fn the_matcher_understands_placeholders() {
    let expected = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert!(lines_match(&expected(&["a [..] c"]), &["a b c"]));
    assert!(lines_match(&expected(&["[..]"]), &[""]));
    assert!(!lines_match(&expected(&["a [..] c"]), &["a b d"]));
    assert!(!lines_match(&expected(&["x[..]x"]), &["x"]));
    assert!(lines_match(
        &expected(&["a", "...", "d"]),
        &["a", "b", "c", "d"]
    ));
    assert!(lines_match(&expected(&["a", "...", "b"]), &["a", "b"]));
    assert!(!lines_match(&expected(&["a", "...", "d"]), &["a", "b"]));
    assert!(!lines_match(&expected(&["a"]), &["a", "b"]));
    let blocks =
        console_blocks("x\n~~~console\n$ echo \\\n  hi\nhi\n```\n~~~\n```text\n$ no\n```\n");
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].examples[0].command, "echo \\\n  hi");
    assert_eq!(blocks[0].examples[0].expected, ["hi", "```"]);
}
