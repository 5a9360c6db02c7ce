//! `tribunal report`: the page is written from a real run's results, holds
//! everything inline, and works in a real browser: headless Chromium loads it
//! with no console error, its charts are there, and filtering the record table
//! shows exactly the records asked for. The browser part is skipped, saying so,
//! where Chromium is not installed (`scripts/setup` installs it).

use std::fs;
use std::path::Path;
use std::process::Command as Process;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn tribunal() -> Command {
    Command::cargo_bin("tribunal").expect("binary builds")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Evaluates the shipped KSI sample data into `dir/results.jsonl`; its statuses.
fn results(dir: &Path) -> Vec<(String, String)> {
    tribunal()
        .arg("eval")
        .arg(root().join("rules/ksi-emission"))
        .arg("--input")
        .arg(root().join("examples/data/ksi-emission.jsonl"))
        .arg("--output")
        .arg(dir.join("results.jsonl"))
        .assert()
        .success();
    fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (
                r["id"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Process::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Loads `url` in headless Chromium: (the DOM after the page's script ran, stderr).
fn load(browser: &str, profile: &Path, url: &str) -> (String, String) {
    let out = Process::new("timeout")
        .args([
            "120",
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
        ])
        .args([
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .args(["--disable-sync", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The record rows the DOM shows (not `hidden`): their `data-status`.
fn visible_rows(dom: &str) -> Vec<String> {
    dom.split("<tr class=\"rec\"")
        .skip(1)
        .map(|row| &row[..row.find('>').unwrap_or(row.len())])
        .filter(|attributes| !attributes.contains("hidden"))
        .map(|attributes| {
            let at = attributes.find("data-status=\"").unwrap() + 13;
            attributes[at..at + attributes[at..].find('"').unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn the_report_is_self_contained_and_works_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let statuses = results(dir.path());
    let report = dir.path().join("report.html");
    tribunal()
        .arg("report")
        .arg(dir.path().join("results.jsonl"))
        .arg("-o")
        .arg(&report)
        .arg("--input")
        .arg(root().join("examples/data/ksi-emission.jsonl"))
        .assert()
        .success();
    let html = fs::read_to_string(&report).unwrap();
    assert!(
        html.contains(
            "<h4>raw output</h4><pre>I would emit an agent:status event once step 1 finishes.</pre>"
        ),
        "the data set's raw output, matched by line"
    );
    for external in ["http://", "https://", " src=", "<link", "@import"] {
        assert!(!html.contains(external), "the page reaches out: {external}");
    }
    assert!(
        html.matches("<svg").count() >= 2,
        "score and metric histograms"
    );
    assert!(html.contains("All 40 records."));

    let Some(browser) = chromium() else {
        eprintln!("skipped the browser part: chromium not found (scripts/setup installs it)");
        return;
    };
    let url = format!("file://{}", report.display());
    let fails = statuses.iter().filter(|(_, s)| s == "FAIL").count();
    // Unfiltered: every row, no console error, the charts drawn.
    let (dom, log) = load(browser, &dir.path().join("profile-1"), &url);
    assert_eq!(visible_rows(&dom).len(), 40);
    assert!(dom.contains("id=\"shown\">40<"), "the script ran");
    assert!(dom.matches("<rect").count() >= 40, "bars in the charts");
    for error in [
        "Uncaught",
        "ERROR:CONSOLE",
        "SyntaxError",
        "TypeError",
        "ReferenceError",
    ] {
        assert!(!log.contains(error), "console error in the page: {log}");
    }
    // Filtered by status (the page reads the filter from its address too).
    let (dom, log) = load(
        browser,
        &dir.path().join("profile-2"),
        &format!("{url}#status=FAIL"),
    );
    let shown = visible_rows(&dom);
    assert_eq!(shown.len(), fails, "{shown:?}");
    assert!(shown.iter().all(|s| s == "FAIL"));
    assert!(!log.contains("Uncaught"), "{log}");
    // Filtered by text: one id.
    let (id, status) = &statuses[5];
    let (dom, _) = load(
        browser,
        &dir.path().join("profile-3"),
        &format!("{url}#q={id}"),
    );
    assert_eq!(visible_rows(&dom), std::slice::from_ref(status));
}

#[test]
fn a_baseline_adds_the_comparison_and_bad_lines_are_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    results(dir.path());
    let mut newer = fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    newer = newer.replacen("\"status\":\"PASS\"", "\"status\":\"FAIL\"", 1);
    newer.push_str("{\"id\": \"cut\", \"sta\n");
    fs::write(dir.path().join("newer.jsonl"), newer).unwrap();
    let report = dir.path().join("report.html");
    tribunal()
        .arg("report")
        .arg(dir.path().join("newer.jsonl"))
        .arg("--output")
        .arg(&report)
        .arg("--baseline")
        .arg(dir.path().join("results.jsonl"))
        .arg("--max-records")
        .arg("10")
        .assert()
        .success()
        .stderr(predicate::str::contains("1 line(s) are not result records"));
    let html = fs::read_to_string(&report).unwrap();
    assert!(html.contains("Against the baseline"));
    assert!(html.contains("1 regressions"), "one PASS became FAIL");
    assert!(html.contains("a sample of 10 of the 40 records"));
    assert_eq!(html.matches("<tr class=\"rec\"").count(), 10);
    assert!(html.contains("1 line(s) were not result records"));
    tribunal()
        .args(["report", "nowhere.jsonl", "-o"])
        .arg(&report)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read nowhere.jsonl"));
}
