//! The architecture is a test: every top-level module of `src/` has a place in the
//! layer order below, and a module may name (`crate::x`) only modules placed
//! before it. There are no cycles between top-level modules, by construction.
//! `docs/architecture.md` explains the layers; keep the two in step.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Top-level modules, foundation first. A module may use only those before it.
const ORDER: &[(&str, &str)] = &[
    // Foundation: no engine concepts.
    ("alloc", "foundation"),
    ("deadline", "foundation"),
    ("json", "foundation"),
    ("text", "foundation"),
    ("json_write", "foundation"),
    ("json_read", "foundation"),
    ("suggest", "foundation"),
    ("files", "foundation"),
    ("strict_config", "foundation"),
    ("yaml", "foundation"),
    // Core types: the context, issues, results, the component interface.
    ("extract", "extraction"),
    ("report", "core"),
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
    // The pack: manifest, resolution, compilation.
    ("manifest", "pack"),
    ("source", "pack"),
    ("pack", "pack"),
    // Runs.
    ("parallel", "runs"),
    ("pipeline", "runs"),
    ("summary", "runs"),
    ("junit", "runs"),
    ("diff", "runs"),
    ("html_report", "runs"),
    ("jsonl", "runs"),
    ("result_file", "runs"),
    ("pack_tests", "runs"),
    // The library's error type, composed of every module's.
    ("error", "api"),
    // Front ends.
    ("cli", "front end"),
    ("fuzzing", "front end"),
];

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

#[test]
fn modules_use_only_the_layers_before_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank = |name: &str| ORDER.iter().position(|(m, _)| *m == name);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let Some(module) = module_of(relative) else {
            continue;
        };
        let Some(own) = rank(&module) else {
            problems.push(format!(
                "src/{}: module `{module}` has no place in ORDER (tests/architecture.rs): add it to its layer",
                relative.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap();
        for used in used_modules(&text) {
            if used == module {
                continue;
            }
            match rank(&used) {
                Some(other) if other > own => problems.push(format!(
                    "src/{}: `{module}` ({}) uses `crate::{used}` ({}), a later layer",
                    relative.display(),
                    ORDER[own].1,
                    ORDER[other].1
                )),
                Some(_) => {}
                None => problems.push(format!(
                    "src/{}: uses `crate::{used}`, which has no place in ORDER",
                    relative.display()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_module_in_the_order_exists() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (module, _) in ORDER {
        assert!(
            src.join(format!("{module}.rs")).is_file() || src.join(module).join("mod.rs").is_file(),
            "ORDER names `{module}`, which is not a module of src/"
        );
    }
}

#[test]
fn the_scanner_sees_grouped_and_plain_paths() {
    let used = used_modules("use crate::{text, files::X};\nlet x = crate::pack::Pack::load(p);");
    assert_eq!(
        used.into_iter().collect::<Vec<_>>(),
        ["files", "pack", "text"]
    );
}

/// The library's public API is what `src/lib.rs` re-exports and the JSONL batch
/// runner; the binary's entry point and the fuzz targets' bodies are public but
/// hidden (`#[doc(hidden)]`, for the binary and `fuzz/`): every other module is
/// internal, so it can change without breaking a program that embeds the engine.
#[test]
fn only_the_stated_modules_are_public() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert_eq!(
        public,
        ["cli", "fuzzing", "jsonl"],
        "a new public module widens the API: re-export what is needed instead"
    );
    for hidden in ["cli", "fuzzing"] {
        assert!(
            lib.contains(&format!("#[doc(hidden)]\npub mod {hidden};")),
            "`{hidden}` is public for the binary or the fuzzer only: keep it #[doc(hidden)]"
        );
    }
}

/// The Python binding is a front end over the public API: it names only what
/// `src/lib.rs` re-exports (and `jsonl`), never the hidden `cli`.
#[test]
fn the_python_binding_uses_only_the_public_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = fs::read_to_string(root.join("src/lib.rs")).unwrap();
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
    rust_files(&root.join("python/src"), &mut files);
    assert!(!files.is_empty(), "python/src has the binding");
    let mut problems = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for item in names_after(&text, "tribunal::") {
            if !public.contains(&item) {
                problems.push(format!(
                    "{}: uses `tribunal::{item}`, which is not part of the public API (src/lib.rs)",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        [
            "Pack",
            "STACK_SIZE",
            "EmbeddingCacheReport",
            "set_embedding_cache"
        ]
        .iter()
        .all(|name| public.contains(*name)),
        "{public:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
