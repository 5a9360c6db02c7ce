//! The JSON Schemas of `pack.yaml` and component manifests (docs/schemas/): the
//! shipped files are what `tribunal schema` prints (run with `UPDATE_DOCS=1` to
//! rewrite them), every pack and component manifest the repository ships validates
//! against them (the docs' example packs too, those that load: some are broken on
//! purpose), and they refuse what the loader refuses.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn printed_schema(name: &str) -> Value {
    let output = Command::cargo_bin("tribunal")
        .expect("the binary")
        .args(["schema", name])
        .output()
        .expect("tribunal runs");
    assert!(output.status.success(), "tribunal schema {name} failed");
    serde_json::from_slice(&output.stdout).expect("the schema is JSON")
}

#[test]
fn shipped_schemas_are_what_tribunal_prints() {
    for name in ["pack", "component"] {
        let path = Path::new(REPO).join(format!("docs/schemas/{name}.schema.json"));
        let printed = printed_schema(name);
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let text = serde_json::to_string_pretty(&printed).expect("JSON") + "\n";
            std::fs::write(&path, text).expect("write the schema");
        }
        let shipped: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
                .unwrap_or(Value::Null);
        assert!(
            shipped == printed,
            "{} is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test schemas`",
            path.display()
        );
    }
}

/// Every file named `pack.yaml` under the folders that ship packs; of the docs'
/// examples, those that load (the docs show some packs' load errors).
fn pack_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.file_name().is_some_and(|n| n == "pack.yaml") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for dir in ["rules", "examples/packs", "docs/examples"] {
        walk(&Path::new(REPO).join(dir), &mut found);
    }
    found.retain(|p| !p.starts_with(Path::new(REPO).join("docs")) || loads(p));
    found.sort();
    found
}

fn loads(pack: &Path) -> bool {
    Command::cargo_bin("tribunal")
        .expect("the binary")
        .arg("lint")
        .arg(pack.parent().expect("a folder"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A YAML file as JSON; for a Markdown manifest, its front matter.
fn read_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read a manifest");
    let yaml = if path.extension().is_some_and(|e| e == "md") {
        text.split("\n---")
            .next()
            .and_then(|t| t.strip_prefix("---"))
            .unwrap_or_else(|| panic!("{}: no front matter", path.display()))
            .to_owned()
    } else {
        text
    };
    serde_yaml::from_str(&yaml).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The component manifests a pack's `components:` globs name.
fn component_files(pack: &Path, manifest: &Value) -> Vec<PathBuf> {
    let dir = pack.parent().expect("a folder");
    let globs = manifest["components"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut files = Vec::new();
    for pattern in globs.iter().filter_map(Value::as_str) {
        let full = dir.join(pattern);
        for entry in glob::glob(&full.to_string_lossy())
            .expect("a glob")
            .flatten()
        {
            let is_manifest = entry
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "md");
            if is_manifest {
                files.push(entry);
            }
        }
    }
    files
}

fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn every_shipped_pack_and_manifest_validates() {
    let pack_schema = jsonschema::validator_for(&printed_schema("pack")).expect("a valid schema");
    let component_schema =
        jsonschema::validator_for(&printed_schema("component")).expect("a valid schema");
    let packs = pack_files();
    assert!(packs.len() >= 8, "too few packs found: {packs:?}");
    let (mut problems, mut components) = (Vec::new(), 0);
    for pack in &packs {
        let manifest = read_yaml(pack);
        for error in errors(&pack_schema, &manifest) {
            problems.push(format!("{}: {error}", pack.display()));
        }
        for file in component_files(pack, &manifest) {
            components += 1;
            for error in errors(&component_schema, &read_yaml(&file)) {
                problems.push(format!("{}: {error}", file.display()));
            }
        }
    }
    assert!(components >= 5, "too few component manifests found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_schemas_refuse_what_the_loader_refuses() {
    let pack_schema = jsonschema::validator_for(&printed_schema("pack")).expect("a valid schema");
    let component_schema =
        jsonschema::validator_for(&printed_schema("component")).expect("a valid schema");
    let yaml = |text: &str| -> Value { serde_yaml::from_str(text).expect("YAML") };
    // A typo in a step's key, a weight that is not a number, an unknown tier.
    for bad in [
        "name: p\npipeline:\n  metrics:\n    - use: json_emission\n      wieght: 1\n",
        "name: p\npipeline:\n  metrics:\n    - use: json_emission\n      weight: heavy\n",
        "name: p\ncontract:\n  extract: [strict, guess]\n",
        "name: p\ncontract:\n  fields:\n    a: {type: text}\n",
        "version: 1.0.0\n",
    ] {
        assert!(!pack_schema.is_valid(&yaml(bad)), "accepted:\n{bad}");
    }
    assert!(pack_schema.is_valid(&yaml(
        "name: p\ncontract:\n  fields:\n    a: {type: [str, null], required: true}\npipeline:\n  metrics: [json_emission, {use: x, weight: 2, as: y}]\n"
    )));
    // Two implementation sources, no kind, an unknown kind; the seed spelling is fine.
    for bad in [
        "kind: metric\nname: m\nimplementation: {builtin: a, script: b.rhai}\n",
        "name: m\nimplementation: {builtin: a}\n",
        "kind: judge\nname: m\n",
        "kind: metric\ncomponent_type: metric\nname: m\n",
    ] {
        assert!(!component_schema.is_valid(&yaml(bad)), "accepted:\n{bad}");
    }
    assert!(component_schema.is_valid(&yaml(
        "component_type: evaluation\nname: m\nimplementation: {builtin: json_compare}\nconfig: {fuzzy_threshold: 0.8}\n"
    )));
}
