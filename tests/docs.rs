//! The documentation that is generated from the code stays in step with it.

use std::fs;
use std::path::Path;

/// `docs/builtins.md` is every built-in's documentation as `tribunal explain`
/// prints it; run with `UPDATE_DOCS=1` to regenerate it.
#[test]
fn the_builtins_reference_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/builtins.md");
    let expected = tribunal::builtins::reference();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::write(&path, &expected).unwrap();
    }
    let actual = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/builtins.md is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test docs`"
    );
}
