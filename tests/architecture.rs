//! The architecture is a test. The engine (`crates/tribunal`) and each front end
//! are crates of their own: the crate graph keeps front ends out of the engine,
//! and the engine's dependency graph is checked to hold none of the front ends'
//! libraries (argument parsing, progress bars, signals, Python). Inside each
//! crate, every top-level module of its `src/` has a place in a layer order, and
//! a module may name (`crate::x`) only modules placed before it: there are no
//! cycles between top-level modules, by construction. `docs/architecture.md`
//! explains the crates and the layers; keep the two in step.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The engine's top-level modules, foundation first. A module may use only those
/// before it.
const ENGINE: &[(&str, &str)] = &[
    // Foundation: no engine concepts.
    ("alloc", "foundation"),
    ("codes", "foundation"),
    ("deadline", "foundation"),
    // The JSON layer's modules, from crates/tribunal-json, and codes,
    // deadline, text, suggest and files from crates/tribunal-base (see
    // `BORROWED`); `extract` is crates/tribunal-extract (`BORROWED_CRATES`);
    // alloc, strict_config, yaml, report, transcript, component, contract,
    // strategy and build are crates/tribunal-component's, and wire, script
    // and plugin crates/tribunal-host's (`BORROWED`).
    ("json", "foundation"),
    ("json_write", "foundation"),
    ("decimal", "foundation"),
    ("json_read", "foundation"),
    ("text", "foundation"),
    ("suggest", "foundation"),
    ("files", "foundation"),
    ("strict_config", "foundation"),
    ("yaml", "foundation"),
    ("overrides", "foundation"),
    // Core types: the context, issues, results, the component interface.
    ("extract", "extraction"),
    ("report", "core"),
    ("transcript", "core"),
    ("component", "core"),
    // The contract.
    ("contract", "contract"),
    // Built-in rules and strategies, and what building one sees.
    ("semantic", "rules"),
    ("strategy", "rules"),
    ("build", "rules"),
    ("builtins", "rules"),
    // Implementation sources.
    ("wire", "sources"),
    ("script", "sources"),
    ("plugin", "sources"),
    // What packs run on: the worker pool, the models, the plugin libraries.
    ("parallel", "runtime"),
    ("runtime", "runtime"),
    // The pack: manifest, resolution, compilation.
    ("bundle", "pack"),
    ("manifest", "pack"),
    ("source", "pack"),
    ("pack", "pack"),
    // Runs.
    ("decision", "runs"),
    ("pipeline", "runs"),
    ("stream", "runs"),
    ("summary", "runs"),
    ("jsonl", "runs"),
    ("pack_tests", "runs"),
    // The library's error type, composed of every module's.
    ("error", "api"),
    // One request API over served packs, judged on one executor.
    ("engine", "api"),
    // What the fuzz targets reach (hidden).
    ("fuzzing", "front ends' access"),
];

/// The command line's top-level modules (the repository's root crate).
const CLI: &[(&str, &str)] = &[
    ("junit", "outputs"),
    ("diff", "outputs"),
    ("html_report", "outputs"),
    ("result_file", "outputs"),
    ("cli", "commands"),
];

/// What the engine must never depend on, however indirectly: the front ends'
/// own libraries.
const NOT_IN_THE_ENGINE: &[&str] = &[
    "clap",
    "clap_complete",
    "clap_mangen",
    "indicatif",
    "ctrlc",
    "pyo3",
    // The Node.js binding's (node/).
    "napi",
    "napi-derive",
    // The server's HTTP stack (crates/tribunal-server).
    "tokio",
    "hyper",
    "hyper-util",
    "tribunal-server",
];

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn engine_src() -> std::path::PathBuf {
    repository().join("crates/tribunal/src")
}

/// The top-level module a file under `src/` belongs to (`None`: the crate roots).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs");
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// Every `crate::NAME` (and `crate::{NAME, …}`) a file names.
fn used_modules(text: &str) -> BTreeSet<String> {
    names_after(text, "crate::")
}

/// Every first segment named after `prefix` (`prefix NAME`, `prefix{NAME, …}`),
/// where `prefix` is not the end of a longer name.
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + prefix.len()..];
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            let items: Vec<&str> = match after.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .collect(),
                None => vec![after],
            };
            for item in items {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    used.insert(name);
                }
            }
        }
        rest = after;
    }
    used
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The JSON layer's crate (crates/tribunal-json), its modules in order: the
/// value, its writer, exact decimals, the reader.
const JSON_LAYER: &[(&str, &str)] = &[
    ("json", "value"),
    ("json_write", "writer"),
    ("decimal", "numbers"),
    ("json_read", "reader"),
];

/// The foundation's crate (crates/tribunal-base), its modules in order, after
/// the JSON layer's it names as its own: issue codes, the deadline, text,
/// suggestions, files.
const BASE_LAYER: &[(&str, &str)] = &[
    ("json", "value"),
    ("json_write", "writer"),
    ("decimal", "numbers"),
    ("codes", "codes"),
    ("deadline", "deadline"),
    ("text", "text"),
    ("suggest", "suggestions"),
    ("files", "files"),
];

/// The extraction ladder's crate (crates/tribunal-extract), its modules in
/// order, after the JSON layer's and the foundation's it names as its own:
/// the strict reading, the fence, the embedded document, the repair tier.
const EXTRACT_LAYER: &[(&str, &str)] = &[
    ("json", "value"),
    ("json_write", "writer"),
    ("json_read", "reader"),
    ("text", "text"),
    ("strict", "strict"),
    ("fence", "fence"),
    ("embedded", "embedded"),
    ("repair", "repair"),
];

/// Crates the engine names as one of its modules (`use tribunal_extract as
/// extract;` in its lib.rs): the module and that crate's `src`.
const BORROWED_CRATES: &[(&str, &str)] = &[
    ("extract", "crates/tribunal-extract/src"),
    ("semantic", "crates/tribunal-semantic/src"),
];

/// The component layer's crate (crates/tribunal-component), its modules in
/// order, after those of the crates below it that it names as its own: the
/// allocator, configs and YAML, the report, transcripts, the component
/// interface, the contract, strategies, what building sees.
const COMPONENT_LAYER: &[(&str, &str)] = &[
    ("json", "value"),
    ("json_write", "writer"),
    ("decimal", "numbers"),
    ("json_read", "reader"),
    ("codes", "codes"),
    ("deadline", "deadline"),
    ("text", "text"),
    ("suggest", "suggestions"),
    ("files", "files"),
    ("alloc", "allocator"),
    ("strict_config", "configs"),
    ("yaml", "yaml"),
    ("extract", "extraction"),
    ("report", "core"),
    ("transcript", "core"),
    ("component", "core"),
    ("contract", "contract"),
    ("semantic", "strategies"),
    ("strategy", "strategies"),
    ("build", "building"),
];

/// The hosts' crate (crates/tribunal-host), its modules in order, after
/// those of the crates below it that it names as its own: the wire format
/// both hosts speak, the Rhai script host, the plugin host.
const HOST_LAYER: &[(&str, &str)] = &[
    ("json", "value"),
    ("codes", "codes"),
    ("deadline", "deadline"),
    ("text", "text"),
    ("suggest", "suggestions"),
    ("files", "files"),
    ("alloc", "allocator"),
    ("yaml", "yaml"),
    ("extract", "extraction"),
    ("report", "core"),
    ("transcript", "core"),
    ("component", "core"),
    ("semantic", "strategies"),
    ("strategy", "strategies"),
    ("build", "building"),
    ("wire", "wire format"),
    ("script", "sources"),
    ("plugin", "sources"),
];

/// The sentence embeddings' crate (crates/tribunal-semantic), its modules in
/// order, after the foundation's it names as its own: finding the model, the
/// disk cache, the forward pass.
const SEMANTIC_LAYER: &[(&str, &str)] = &[
    ("text", "text"),
    ("files", "files"),
    ("locate", "model files"),
    ("disk_cache", "disk cache"),
    ("bert", "forward pass"),
    ("model_tests", "tests against the model"),
];

/// Modules the engine names as its own (`crate::json`, through a `use` in its
/// lib.rs) that live in a crate below it: the module and that crate's `src`.
const BORROWED: &[(&str, &str)] = &[
    ("json", "crates/tribunal-json/src"),
    ("json_write", "crates/tribunal-json/src"),
    ("decimal", "crates/tribunal-json/src"),
    ("json_read", "crates/tribunal-json/src"),
    ("codes", "crates/tribunal-base/src"),
    ("deadline", "crates/tribunal-base/src"),
    ("text", "crates/tribunal-base/src"),
    ("suggest", "crates/tribunal-base/src"),
    ("files", "crates/tribunal-base/src"),
    ("alloc", "crates/tribunal-component/src"),
    ("strict_config", "crates/tribunal-component/src"),
    ("yaml", "crates/tribunal-component/src"),
    ("report", "crates/tribunal-component/src"),
    ("transcript", "crates/tribunal-component/src"),
    ("component", "crates/tribunal-component/src"),
    ("contract", "crates/tribunal-component/src"),
    ("strategy", "crates/tribunal-component/src"),
    ("build", "crates/tribunal-component/src"),
    ("wire", "crates/tribunal-host/src"),
    ("script", "crates/tribunal-host/src"),
    ("plugin", "crates/tribunal-host/src"),
];

/// Macros a crate exports (at its root, `#[macro_export]`), re-exported by
/// the module that defines them (`pub use crate::field;`): not modules.
const EXPORTED_MACROS: &[&str] = &["field"];

/// The problems of one crate's modules against its layer `order`.
fn layer_problems(src: &Path, order: &[(&str, &str)]) -> Vec<String> {
    let shown = src
        .strip_prefix(repository())
        .unwrap_or(src)
        .display()
        .to_string();
    let rank = |name: &str| order.iter().position(|(m, _)| *m == name);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap();
        let Some(module) = module_of(relative) else {
            continue;
        };
        let Some(own) = rank(&module) else {
            problems.push(format!(
                "{shown}/{}: module `{module}` has no place in its crate's order (tests/architecture.rs): add it to its layer",
                relative.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap();
        for used in used_modules(&text) {
            // (`crate::Repair`: an item at the crate's root, not a module.)
            let item = used.starts_with(|c: char| c.is_ascii_uppercase());
            if used == module || item || EXPORTED_MACROS.contains(&used.as_str()) {
                continue;
            }
            match rank(&used) {
                Some(other) if other > own => problems.push(format!(
                    "{shown}/{}: `{module}` ({}) uses `crate::{used}` ({}), a later layer",
                    relative.display(),
                    order[own].1,
                    order[other].1
                )),
                Some(_) => {}
                None => problems.push(format!(
                    "{shown}/{}: uses `crate::{used}`, which has no place in its crate's order",
                    relative.display()
                )),
            }
        }
    }
    let is_module = |src: &Path, module: &str| {
        src.join(format!("{module}.rs")).is_file() || src.join(module).join("mod.rs").is_file()
    };
    for (module, _) in order {
        let borrowed = BORROWED
            .iter()
            .any(|(name, from)| name == module && is_module(&repository().join(from), module))
            || BORROWED_CRATES.iter().any(|(name, from)| {
                name == module && repository().join(from).join("lib.rs").is_file()
            });
        if !is_module(src, module) && !borrowed {
            problems.push(format!(
                "the order names `{module}`, which is not a module of {shown}"
            ));
        }
    }
    problems
}

#[test]
fn modules_use_only_the_layers_before_them() {
    let crates: [(&str, &[(&str, &str)]); 8] = [
        ("crates/tribunal/src", ENGINE),
        ("crates/tribunal-component/src", COMPONENT_LAYER),
        ("crates/tribunal-host/src", HOST_LAYER),
        ("crates/tribunal-json/src", JSON_LAYER),
        ("crates/tribunal-base/src", BASE_LAYER),
        ("crates/tribunal-extract/src", EXTRACT_LAYER),
        ("crates/tribunal-semantic/src", SEMANTIC_LAYER),
        ("src", CLI),
    ];
    let problems: Vec<String> = crates
        .iter()
        .flat_map(|(src, order)| layer_problems(&repository().join(src), order))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The packages the engine builds with (its normal and build dependencies,
/// followed through the whole graph), from `cargo metadata`.
fn engine_dependencies() -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(repository())
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let name_of = |id: &str| {
        metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .and_then(|p| p["name"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let engine = nodes
        .iter()
        .find(|node| name_of(node["id"].as_str().unwrap()) == "tribunal")
        .expect("the engine is in the graph");
    let mut seen = BTreeSet::new();
    let mut todo = vec![engine["id"].as_str().unwrap().to_owned()];
    while let Some(id) = todo.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
        for dep in node["deps"].as_array().unwrap() {
            // Not the dev-dependencies: tests may use anything.
            let built_with = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|kind| kind["kind"] != "dev");
            if built_with {
                todo.push(dep["pkg"].as_str().unwrap().to_owned());
            }
        }
    }
    seen.iter().map(|id| name_of(id)).collect()
}

#[test]
fn the_engine_depends_on_no_front_ends_library() {
    let dependencies = engine_dependencies();
    // The graph is read right: the engine's own direct dependencies are in it.
    for expected in ["serde_json", "rhai", "tribunal-plugin", "memchr"] {
        assert!(dependencies.contains(expected), "{dependencies:?}");
    }
    let found: Vec<&&str> = NOT_IN_THE_ENGINE
        .iter()
        .filter(|name| dependencies.contains(**name))
        .collect();
    assert!(
        found.is_empty(),
        "the engine (crates/tribunal) depends on {found:?}: a front end's library; keep it in the front end's crate"
    );
}

#[test]
fn the_scanner_sees_grouped_and_plain_paths() {
    let used = used_modules("use crate::{text, files::X};\nlet x = crate::pack::Pack::load(p);");
    assert_eq!(
        used.into_iter().collect::<Vec<_>>(),
        ["files", "pack", "text"]
    );
}

/// The library's public API is what the engine's `lib.rs` re-exports and the
/// JSONL batch runner; the fuzz targets' bodies are public but hidden
/// (`#[doc(hidden)]`, for `fuzz/`): every other module is internal, so it can change without breaking
/// a program that embeds the engine.
#[test]
fn only_the_stated_modules_are_public() {
    let lib = fs::read_to_string(engine_src().join("lib.rs")).unwrap();
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert_eq!(
        public,
        ["fuzzing", "jsonl"],
        "a new public module widens the API: re-export what is needed instead"
    );
    // Public for the fuzzer only, and its bodies not compiled into a shipped
    // build.
    assert!(
        lib.contains("#[cfg(feature = \"fuzzing\")]\n#[doc(hidden)]\npub mod fuzzing;"),
        "`fuzzing` is for the fuzzer only: keep it #[doc(hidden)] and built only with the engine's `fuzzing` feature"
    );
}

/// The front ends (the command line, the server, the Python and Node.js
/// bindings) are built on the public API: they name only what the engine's
/// `lib.rs` re-exports (and `jsonl`). There is no back door for them.
#[test]
fn the_front_ends_use_only_the_public_api() {
    let root = repository();
    let lib = fs::read_to_string(engine_src().join("lib.rs")).unwrap();
    // Each `pub use …;` statement, however many lines it spans.
    let public: BTreeSet<String> = lib
        .split("pub use ")
        .skip(1)
        .filter_map(|rest| rest.split_once(';').map(|(statement, _)| statement))
        .flat_map(|rest| {
            // `module::{A, B as C}` or `module::A as B`: the names exported.
            let names = rest.split_once('{').map_or(rest, |(_, names)| names);
            names
                .split(',')
                .map(|item| {
                    let item = item.trim().trim_end_matches('}').trim();
                    let exported = item.rsplit(" as ").next().unwrap_or(item);
                    exported.rsplit("::").next().unwrap_or(exported).to_owned()
                })
                .collect::<Vec<_>>()
        })
        .filter(|name| !name.is_empty())
        .chain(["jsonl".to_owned()])
        .collect();
    let mut files = Vec::new();
    for front_end in [
        "src",
        "crates/tribunal-server/src",
        "python/src",
        "node/src",
    ] {
        let before = files.len();
        rust_files(&root.join(front_end), &mut files);
        assert!(
            files.len() > before,
            "{front_end} holds the front end's code"
        );
    }
    let mut problems = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for item in names_after(&text, "tribunal::") {
            if !public.contains(&item) {
                problems.push(format!(
                    "{}: uses `tribunal::{item}`, which is not part of the public API (crates/tribunal/src/lib.rs)",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        ["Pack", "STACK_SIZE", "EmbeddingCacheReport", "Runtime"]
            .iter()
            .all(|name| public.contains(*name)),
        "{public:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Where threads are started, outside tests: the runtime's pool (the only
/// threads that evaluate: a batch's workers, a server's checks and its long
/// requests) and the few threads that only wait (for a signal, a pipe, a
/// file to write, files to change). A new place that starts threads is a
/// second scheduler: run the work on the runtime's pool instead, or say here
/// why it only waits.
const THREAD_STARTS: &[(&str, usize, &str)] = &[
    (
        "crates/tribunal/src/parallel.rs",
        1,
        "the runtime's pool: the one executor",
    ),
    (
        "crates/tribunal/src/engine/packs.rs",
        1,
        "the reload watcher: looks at files, sleeps",
    ),
    (
        "crates/tribunal-host/src/plugin/isolated.rs",
        1,
        "reads a plugin helper's pipe",
    ),
    (
        "crates/tribunal-server/src/otlp.rs",
        1,
        "sends spans to the collector",
    ),
    (
        "crates/tribunal-server/src/decision_log.rs",
        1,
        "writes the decision log",
    ),
    ("src/result_file/mod.rs", 1, "writes the result file"),
    ("src/cli/eval.rs", 1, "waits for a signal"),
    (
        "src/main.rs",
        1,
        "the command line's main thread, on the engine's deep stack",
    ),
    (
        "crates/semantic-kernels/src/lib.rs",
        1,
        "`ThreadPerShare`, a thread per share: only for the tests of the crates above (feature `testing`); the engine hands the embedding passes its pool (`Fork`)",
    ),
];

/// What starts threads.
const STARTS: &[&str] = &[
    "thread::Builder::new()",
    "thread::spawn(",
    "thread::scope(",
    "spawn_blocking(",
    "rayon::",
    "ThreadPoolBuilder",
    "Parallelism::Rayon",
];

/// Each source file of the engine's crates and front ends (tests and
/// benches aside) with a line `counted` says yes to, before the file's tests,
/// and how many: sorted by file.
fn lines_counted(counted: impl Fn(&str) -> bool) -> Vec<(String, usize)> {
    let root = repository();
    let mut files = Vec::new();
    for dir in [
        "crates/tribunal/src",
        "crates/tribunal-json/src",
        "crates/tribunal-base/src",
        "crates/tribunal-extract/src",
        "crates/tribunal-component/src",
        "crates/tribunal-host/src",
        "crates/tribunal-semantic/src",
        "crates/tribunal-server/src",
        "crates/semantic-kernels/src",
        "src",
        "python/src",
        "node/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        // The code before the file's tests.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
        let count = code.lines().filter(|line| counted(line)).count();
        if count > 0 {
            let relative = file.strip_prefix(root).unwrap().display().to_string();
            found.push((relative, count));
        }
    }
    found.sort();
    found
}

/// A table of files, counts and reasons, as [`lines_counted`] gives its
/// counts.
fn by_file(table: &[(&str, usize, &str)]) -> Vec<(String, usize)> {
    let mut stated: Vec<(String, usize)> = table
        .iter()
        .map(|(file, count, _)| ((*file).to_owned(), *count))
        .collect();
    stated.sort();
    stated
}

#[test]
fn threads_start_only_where_stated() {
    let found = lines_counted(|line| {
        let line = line.trim_start();
        !line.starts_with("//")
            && !line.starts_with("use ")
            && STARTS.iter().any(|start| line.contains(start))
    });
    assert_eq!(
        found,
        by_file(THREAD_STARTS),
        "threads started where the architecture does not say (THREAD_STARTS)"
    );
}

/// Where state lives outside the values that carry it: a thread-local, or a
/// process-wide static that changes (an atomic), with the count in each file
/// and why it cannot be handed down. Deadlines and caches travel in the
/// evaluation (`deadline::Budget` in each component's context, the runtime's
/// caches): a new one here is state two runtimes, or two threads of one
/// evaluation, would share or lose.
const MUTABLE_STATE: &[(&str, usize, &str)] = &[
    (
        "crates/tribunal-component/src/alloc.rs",
        2,
        "the allocator's per-thread byte count (a global allocator holds no state of its own) and mimalloc's options, set once before its first allocation",
    ),
    (
        "crates/tribunal/src/parallel.rs",
        1,
        "the deep stack a host's thread (Python's, Node's) borrows for a call, made once per thread",
    ),
    (
        "crates/tribunal-host/src/script/frame.rs",
        1,
        "the script calls running on a thread: Rhai's `on_progress`, `print` and helpers cannot carry ours (each frame points to its call's context and budget)",
    ),
    (
        "crates/tribunal-json/src/json_read.rs",
        1,
        "a scratch list of names `write_container` reuses on its thread",
    ),
    (
        "crates/tribunal-semantic/src/bert/mod.rs",
        1,
        "the embedding passes running in the process: how many of the machine's cores a pass may take",
    ),
    (
        "crates/semantic-kernels/src/lib.rs",
        1,
        "whether the AVX2 kernels may run (tests compare them with the portable ones)",
    ),
    (
        "crates/tribunal-server/src/otlp.rs",
        1,
        "a counter mixed into span ids",
    ),
    (
        "crates/tribunal/src/fuzzing/mod.rs",
        1,
        "scratch folder names (the fuzzing harness, feature `fuzzing`)",
    ),
];

#[test]
fn mutable_state_lives_only_where_stated() {
    let found = lines_counted(|line| {
        let line = line.trim_start();
        line.starts_with("thread_local!")
            || (line.contains("static ") && line.contains(": Atomic"))
            || (line.contains("static ") && line.contains(": std::sync::atomic::Atomic"))
    });
    assert_eq!(
        found,
        by_file(MUTABLE_STATE),
        "a thread-local or a changing static where the architecture does not say (MUTABLE_STATE)"
    );
}

/// The engine's ways to evaluate other than `Engine`'s (`decide`, `submit`,
/// `stream` with `finish`, `run`): a front end that calls one assembles its
/// own evaluation.
const EVALUATION_CALLS: &[&str] = &[
    "jsonl::run_into(",
    "jsonl::run(",
    "evaluate_record_into(",
    "evaluate_records(",
    ".evaluate(",
    ".evaluate_many(",
    ".evaluate_batch(",
    ".decide_within(",
    ".decide(",
    "Stream::new(",
    ".finish_into(",
    ".stream_for(",
    ".stream()",
];

/// Each front end, and how many such calls it still makes (issue 62 moves
/// them onto `Engine`): the server none; the count may only go down.
const FRONT_ENDS: &[(&str, usize)] = &[
    ("crates/tribunal-server/src", 0),
    ("src", 0),
    ("python/src", 0),
    ("node/src", 0),
];

#[test]
fn front_ends_evaluate_through_the_engine() {
    let root = repository();
    for (dir, allowed) in FRONT_ENDS {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        let mut calls = Vec::new();
        for file in &files {
            let text = fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
            // The code without comments, string literals and whitespace: a
            // call however `rustfmt` breaks its chain, and not a message
            // that names one (`start another with pack.stream()`).
            let code: String = code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let code: String = without_strings(&code)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            for call in EVALUATION_CALLS {
                // (`PyStream::new(` is not `Stream::new(`.)
                let uses = code
                    .match_indices(call)
                    .filter(|(at, _)| {
                        call.starts_with('.')
                            || !code[..*at]
                                .chars()
                                .next_back()
                                .is_some_and(|c| c.is_alphanumeric() || c == '_')
                    })
                    .count()
                    - if *call == ".decide(" {
                        code.matches("engine.decide(").count()
                    } else {
                        0
                    };
                for _ in 0..uses {
                    calls.push(format!(
                        "{}: {call}",
                        file.strip_prefix(root).unwrap().display()
                    ));
                }
            }
        }
        assert!(
            calls.len() <= *allowed,
            "{dir} evaluates outside `Engine` {} times (at most {allowed}):\n{}",
            calls.len(),
            calls.join("\n")
        );
    }
}

/// `code` with the text of its string literals left out (`"..."` stays as
/// `""`; escaped quotes inside, and a quote as a character, are skipped).
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push(c);
                }
                _ => {}
            }
        } else if c == 'r' && raw_string_start(chars.as_str()).is_some() {
            // A raw string (`r"..."`, `r#"..."#`): skipped to its end.
            let hashes = raw_string_start(chars.as_str()).unwrap_or_default();
            let end = format!("\"{}", "#".repeat(hashes));
            let rest = &chars.as_str()[hashes + 1..];
            let after = rest.find(&end).map_or(rest.len(), |at| at + end.len());
            out.push_str("\"\"");
            chars = rest[after..].chars();
        } else if c == '\''
            && (chars.as_str().starts_with("\"'") || chars.as_str().starts_with("\\\"'"))
        {
            // A quote as a character (`'"'`, `b'"'`), not a string's start.
            let skip = if chars.as_str().starts_with('"') {
                2
            } else {
                3
            };
            chars.nth(skip - 1);
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// How many `#` open the raw string that `rest` (what follows an `r`)
/// starts, if it starts one.
fn raw_string_start(rest: &str) -> Option<usize> {
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    rest[hashes..].starts_with('"').then_some(hashes)
}

/// The most code lines (neither blank nor a comment) a source file holds
/// before its tests, and a function from its `fn` to its closing brace: each
/// file one subject, each function one step (issue 62).
const MAX_FILE_LINES: usize = 600;
const MAX_FUNCTION_LINES: usize = 100;

/// The folders the limits hold in: every crate's code (its tests, the
/// benches' harnesses and the fixtures aside).
const LIMITED: &[&str] = &[
    "src",
    "crates",
    "python/src",
    "node/src",
    "plugins/sdk/src",
    "plugins/readability/src",
    "plugins/tolerance/src",
    "benches/io-floor/src",
    "benches/loadgen/src",
];

/// The files a `#[cfg(test)] mod NAME;` brings in: tests, held to no limit.
fn test_only_files(files: &[std::path::PathBuf]) -> BTreeSet<std::path::PathBuf> {
    let mut tests = BTreeSet::new();
    for file in files {
        let text = fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let stem = file.file_stem().unwrap().to_string_lossy();
        let dir = file.parent().unwrap();
        // A `mod.rs`, `lib.rs` or `main.rs` holds its submodules beside it;
        // `NAME.rs` in `NAME/`.
        let home = if ["mod", "lib", "main"].contains(&stem.as_ref()) {
            dir.to_path_buf()
        } else {
            dir.join(stem.as_ref())
        };
        for pair in lines.windows(2) {
            let declared = pair[1]
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0] == "#[cfg(test)]", declared) {
                tests.insert(home.join(format!("{name}.rs")));
                tests.insert(home.join(name).join("mod.rs"));
            }
        }
    }
    tests
}

/// `text` before its `#[cfg(test)] mod tests`, as lines.
fn code_before_tests(text: &str) -> Vec<&str> {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end].lines().collect()
}

fn is_code(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with("//")
}

/// Each function in `lines` that starts at the start of its line: its name,
/// its first line (from 1) and its code lines.
fn functions(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let skeleton = skeleton(&lines.join("\n"));
    let skeleton: Vec<&str> = skeleton.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else {
            continue;
        };
        let (mut depth, mut opened, mut code) = (0i64, false, 0);
        for (line, bare) in lines[at..].iter().zip(&skeleton[at..]) {
            code += usize::from(is_code(line));
            let line = bare;
            for c in line.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            // A declaration without a body (in a trait, or `extern`).
            if !opened && line.trim_end().ends_with(';') || opened && depth == 0 {
                break;
            }
        }
        if opened {
            found.push((name, at + 1, code));
        }
    }
    found
}

/// `code` with what is inside its strings, character literals and comments
/// left out, line for line (each newline kept), so that only its own braces
/// and semicolons are left.
fn skeleton(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
        // (`br"…"` is a raw string too: its `b` is not a name's end.)
        let mut before = out.chars().rev();
        let ident_before = match (before.next(), before.next()) {
            (Some('b'), previous) => previous.is_some_and(ident),
            (last, _) => last.is_some_and(ident),
        };
        // The length of what is left out from here (0: nothing).
        let skipped = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if c == '"' {
            let mut escaped = false;
            let end = after.char_indices().find(|&(_, ch)| {
                let ends = !escaped && ch == '"';
                escaped = !escaped && ch == '\\';
                ends
            });
            end.map_or(rest.len(), |(i, _)| i + 2)
        } else if c == 'r' && !ident_before && raw_string_start(after).is_some() {
            let hashes = raw_string_start(after).unwrap_or_default();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = &after[hashes + 1..];
            body.find(&close)
                .map_or(rest.len(), |end| 1 + hashes + 1 + end + close.len())
        } else if c == '\'' {
            // A character literal (`'x'`, `'\n'`, `'\u{7f}'`), not a lifetime.
            let mut chars = after.chars();
            match (chars.next(), chars.next()) {
                (Some('\\'), _) => after
                    .get(2..)
                    .and_then(|escaped| escaped.find('\''))
                    .map_or(1, |end| end + 4),
                (Some(ch), Some('\'')) => 2 + ch.len_utf8(),
                _ => 0,
            }
        } else {
            0
        };
        if skipped == 0 {
            out.push(c);
            rest = after;
        } else {
            out.extend(rest[..skipped].chars().filter(|&ch| ch == '\n'));
            rest = &rest[skipped..];
        }
    }
    out
}

/// The name of the function `line` starts, if it starts one.
fn function_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(scoped) => &scoped[scoped.find(')')? + 1..],
            None => after,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let name: String = rest
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_file_over_600_code_lines_and_no_function_over_100() {
    let mut files = Vec::new();
    for dir in LIMITED {
        rust_files(&repository().join(dir), &mut files);
    }
    files.retain(|f| {
        let relative = f.strip_prefix(repository()).unwrap();
        !relative.components().any(|c| {
            let c = c.as_os_str();
            c == "tests" || c == "benches" || c == "target" || c == "fixtures"
        })
    });
    let tests = test_only_files(&files);
    assert!(
        tests
            .iter()
            .any(|t| t.ends_with("tribunal-extract/src/repair/tests.rs")),
        "the test-only files are found: {tests:?}"
    );
    let mut over = Vec::new();
    for file in files.iter().filter(|f| !tests.contains(*f)) {
        let text = fs::read_to_string(file).unwrap();
        let lines = code_before_tests(&text);
        let shown = file.strip_prefix(repository()).unwrap().display();
        let code = lines.iter().filter(|l| is_code(l)).count();
        if code > MAX_FILE_LINES {
            over.push(format!("{shown}: {code} code lines"));
        }
        for (name, at, code) in functions(&lines) {
            if code > MAX_FUNCTION_LINES {
                over.push(format!("{shown}:{at}: fn {name} has {code} code lines"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} code lines a file or {MAX_FUNCTION_LINES} a function (split by subject):\n{}",
        over.join("\n")
    );
}

#[test]
fn the_size_counter_finds_functions_and_their_ends() {
    let text = [
        "pub(crate) fn a<'t>(x: &'t str) {",
        "    let s = \"} \\\" }\";",
        "    // }",
        "    if x { '{' } else { '\\'' } + '\\u{7b}' + '\\\\';",
        "    let r = r#\"{ \"",
        "    }\"#; /* { */",
        "    let b = br\"\\\"; let m = \"{",
        "    \";",
        "}",
        "fn b();",
        "    pub async fn c<T>(x: T)",
        "    where T: Copy,",
        "    {",
        "    }",
    ];
    assert_eq!(
        functions(&text),
        vec![("a".to_owned(), 1, 8), ("c".to_owned(), 11, 4)],
        "{text:#?}"
    );
    let limited = "fn x() {\n".to_owned() + &"    y();\n".repeat(MAX_FUNCTION_LINES) + "}\n";
    let lines: Vec<&str> = limited.lines().collect();
    assert_eq!(functions(&lines)[0].2, MAX_FUNCTION_LINES + 2);
}

/// The library crates: what a program embedding Tribunal (or a plugin) links.
const LIBRARIES: &[&str] = &[
    "crates/tribunal/src",
    "crates/tribunal-json/src",
    "crates/tribunal-base/src",
    "crates/tribunal-extract/src",
    "crates/tribunal-component/src",
    "crates/tribunal-host/src",
    "crates/tribunal-semantic/src",
    "crates/tribunal-server/src",
    "crates/semantic-kernels/src",
    "plugins/sdk/src",
];

/// A public function's error is a type a caller can match on, never a bare
/// `String` (issue 62): what went wrong has a name, and a message can change
/// without breaking a caller.
#[test]
fn no_public_function_returns_a_string_error() {
    let mut files = Vec::new();
    for dir in LIBRARIES {
        rust_files(&repository().join(dir), &mut files);
    }
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let code = skeleton(&text);
        let mut rest = code.as_str();
        while let Some(at) = rest.find("pub fn ") {
            let starts_item = rest[..at]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
            let signature = &rest[at..];
            let end = signature.find(['{', ';']).unwrap_or(signature.len());
            let signature = &signature[..end];
            let returns = signature.split("->").nth(1).unwrap_or_default();
            let returns: String = returns.split_whitespace().collect();
            if starts_item && returns.starts_with("Result<") && returns.ends_with(",String>") {
                let line = code[..code.len() - rest.len() + at].matches('\n').count() + 1;
                let shown = file.strip_prefix(repository()).unwrap().display();
                found.push(format!("{shown}:{line}: {}", signature.trim()));
            }
            rest = &rest[at + "pub fn ".len()..];
        }
    }
    assert!(
        found.is_empty(),
        "public functions with a String error (give it a type; or keep the function in its crate, `pub(crate)`):\n{}",
        found.join("\n")
    );
}
