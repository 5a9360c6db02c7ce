//! `JUnit` XML, the format CI systems read natively (`eval --junit`, `test --junit`):
//! a `<testsuites>` document of one `<testsuite>` per pack and one `<testcase>`
//! per record or pack test case. A record that is `FAIL` or `NEEDS_IMPROVEMENT`
//! is a `<failure>` (its `type` is the status, its message the error issues),
//! an `ERROR` record an `<error>`; each record's status and score are properties.
//!
//! Text is escaped for XML 1.0, and the characters XML 1.0 cannot hold at all
//! (control characters other than tab and line breaks) become U+FFFD, so any
//! model output makes a well-formed document.

use std::fmt::Write as _;
use std::io::{self, Write};

use tribunal::{Report, Severity, Status};

/// Characters of a `<failure>` or `<error>` message attribute (the full text
/// is in the element).
const MESSAGE_CHARS: usize = 500;

/// How one test case came out.
#[derive(Debug)]
pub enum Verdict {
    Passed,
    /// `<failure type="KIND" message="…">TEXT</failure>`.
    Failed {
        kind: String,
        message: String,
        text: String,
    },
    /// `<error type="ERROR" message="…">TEXT</error>`.
    Errored {
        message: String,
        text: String,
    },
}

/// Appends one `<testcase>`.
pub fn write_case(
    out: &mut Vec<u8>,
    name: &str,
    classname: &str,
    properties: &[(&str, String)],
    verdict: &Verdict,
) {
    out.extend_from_slice(b"    <testcase name=\"");
    escape(out, name, true);
    out.extend_from_slice(b"\" classname=\"");
    escape(out, classname, true);
    out.extend_from_slice(b"\">\n");
    write_properties(out, properties, "      ");
    let (tag, kind, message, text) = match verdict {
        Verdict::Passed => {
            out.extend_from_slice(b"    </testcase>\n");
            return;
        }
        Verdict::Failed {
            kind,
            message,
            text,
        } => ("failure", kind.as_str(), message, text),
        Verdict::Errored { message, text } => ("error", "ERROR", message, text),
    };
    let _ = write!(out, "      <{tag} type=\"");
    escape(out, kind, true);
    out.extend_from_slice(b"\" message=\"");
    escape(
        out,
        tribunal_base::text::prefix_chars(message, MESSAGE_CHARS),
        true,
    );
    out.extend_from_slice(b"\">");
    escape(out, text, false);
    let _ = writeln!(out, "</{tag}>");
    out.extend_from_slice(b"    </testcase>\n");
}

/// Appends the `<testcase>` of a result record (named by its id, else its line).
pub fn write_report_case(out: &mut Vec<u8>, report: &Report, classname: &str) {
    let name = match (&report.id, report.line) {
        (tribunal::Json::String(id), _) => id.to_string(),
        (tribunal::Json::Null, Some(line)) => format!("line {line}"),
        (id, _) => id.to_string(),
    };
    let mut properties = vec![("status", report.status().as_str().to_owned())];
    if let Some(score) = report.score {
        properties.push(("score", score.to_string()));
    }
    if let Some(line) = report.line {
        properties.push(("line", line.to_string()));
    }
    let verdict = match report.status() {
        Status::Pass => Verdict::Passed,
        Status::Error => {
            let error = report.error().unwrap_or_default().to_owned();
            Verdict::Errored {
                message: error.clone(),
                text: error,
            }
        }
        status => {
            let errors: Vec<&str> = report
                .issues
                .iter()
                .filter(|i| i.severity == Severity::Error)
                .map(|i| i.message.as_str())
                .collect();
            let message = if errors.is_empty() {
                match report.score {
                    Some(score) => format!("{status}: score {score}"),
                    None => status.to_string(),
                }
            } else {
                errors.join("; ")
            };
            let mut text = String::new();
            if let Some(score) = report.score {
                let _ = writeln!(text, "score {score}");
            }
            write_failing_turns(&mut text, report);
            for issue in &report.issues {
                let at = issue
                    .path
                    .as_deref()
                    .map_or_else(String::new, |p| format!(" at {p}"));
                let turn = issue
                    .turn
                    .map_or_else(String::new, |turn| format!(" (turn {turn})"));
                let _ = writeln!(
                    text,
                    "{} {} [{}]{at}{turn}: {}",
                    issue.severity.as_str(),
                    issue.rule,
                    issue.code,
                    issue.message
                );
            }
            if let Some(feedback) = &report.feedback {
                text.push_str("\nfeedback:\n");
                text.push_str(feedback);
                text.push('\n');
            }
            Verdict::Failed {
                kind: status.as_str().to_owned(),
                message,
                text,
            }
        }
    };
    write_case(out, &name, classname, &properties, &verdict);
}

/// A transcript record's turns that did not pass, a line each (its index,
/// role, status, score and place), before the issues.
fn write_failing_turns(text: &mut String, report: &Report) {
    let Some(turns) = &report.turns else {
        return;
    };
    let failing = turns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.status != Status::Pass);
    for (count, (index, turn)) in failing.enumerate() {
        if count == 0 {
            text.push_str("failing turns:\n");
        }
        let score = turn
            .score
            .map_or_else(String::new, |score| format!(", score {score}"));
        let _ = writeln!(
            text,
            "  turn {index} ({}) {}{score} at {}",
            turn.role.as_str(),
            turn.status,
            turn.path
        );
    }
}

/// A `<testsuite>`'s attributes and properties.
#[derive(Debug)]
pub struct Suite {
    pub name: String,
    pub tests: u64,
    pub failures: u64,
    pub errors: u64,
    pub seconds: f64,
    pub properties: Vec<(&'static str, String)>,
}

/// Writes the document: the suites, each followed by its test cases, which
/// `cases` copies into `out` (so a large run's cases can come from a file).
pub fn write_document<W: Write>(
    out: &mut W,
    suites: &[Suite],
    mut cases: impl FnMut(usize, &mut W) -> io::Result<()>,
) -> io::Result<()> {
    let total = |f: fn(&Suite) -> u64| suites.iter().map(f).sum::<u64>();
    let seconds: f64 = suites.iter().map(|s| s.seconds).sum();
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        out,
        "<testsuites name=\"tribunal\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{seconds:.3}\">",
        total(|s| s.tests),
        total(|s| s.failures),
        total(|s| s.errors),
    )?;
    for (i, suite) in suites.iter().enumerate() {
        let mut head = Vec::new();
        head.extend_from_slice(b"  <testsuite name=\"");
        escape(&mut head, &suite.name, true);
        let _ = writeln!(
            head,
            "\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\">",
            suite.tests, suite.failures, suite.errors, suite.seconds
        );
        write_properties(&mut head, &suite.properties, "    ");
        out.write_all(&head)?;
        cases(i, out)?;
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

fn write_properties(out: &mut Vec<u8>, properties: &[(&str, String)], indent: &str) {
    if properties.is_empty() {
        return;
    }
    let _ = writeln!(out, "{indent}<properties>");
    for (name, value) in properties {
        let _ = write!(out, "{indent}  <property name=\"");
        escape(out, name, true);
        out.extend_from_slice(b"\" value=\"");
        escape(out, value, true);
        out.extend_from_slice(b"\"/>\n");
    }
    let _ = writeln!(out, "{indent}</properties>");
}

/// Appends `text` escaped for XML 1.0 (in an attribute, line breaks and tabs
/// as character references so they survive attribute normalisation).
fn escape(out: &mut Vec<u8>, text: &str, attribute: bool) {
    let mut buffer = [0u8; 4];
    for c in text.chars() {
        let replacement: &[u8] = match c {
            '&' => b"&amp;",
            '<' => b"&lt;",
            '>' => b"&gt;",
            '"' if attribute => b"&quot;",
            '\n' if attribute => b"&#10;",
            '\r' => b"&#13;",
            '\t' if attribute => b"&#9;",
            '\t' | '\n' => c.encode_utf8(&mut buffer).as_bytes(),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => "\u{fffd}".as_bytes(),
            _ => c.encode_utf8(&mut buffer).as_bytes(),
        };
        out.extend_from_slice(replacement);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_characters_xml_cannot_hold_are_replaced() {
        let mut out = Vec::new();
        escape(&mut out, "a<b>&\"c\"\n\t\r\u{0}\u{1b}é🙂", true);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a&lt;b&gt;&amp;&quot;c&quot;&#10;&#9;&#13;\u{fffd}\u{fffd}é🙂"
        );
        let mut out = Vec::new();
        escape(&mut out, "x\"\ny\t\u{7}", false);
        assert_eq!(String::from_utf8(out).unwrap(), "x\"\ny\t\u{fffd}");
    }
}
