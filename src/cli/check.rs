//! `tribunal check`: one output, its result in full.

use clap::Args;
use serde_json::Value;
use std::io::{self, Write};
use std::path::PathBuf;
use tribunal::jsonl::DEFAULT_MAX_RECORD_BYTES;
use tribunal::Input;
use tribunal::Report;
use tribunal::{Engine, Judged, Request};

use super::{read_limited, PackOptions, EXIT_NOT_PASSED, EXIT_OK};

#[derive(Debug, Args)]
#[command(
    override_usage = "tribunal check [OPTIONS] <PACK> [FILE]\n       tribunal check [OPTIONS] --pack <PACK> [FILE]",
    after_help = "Examples:\n  tribunal check rules/ksi-emission rules/ksi-emission/examples/emits.txt\n  echo '{\"kind\": \"agent.spoke\", \"text\": \"Hi.\"}' | tribunal check rules/structured-output --json\n  tribunal check --pack rules/json-eval --expected gt.json reply.json --feedback"
)]
pub(super) struct CheckArgs {
    /// The rule pack folder (or --pack; then the only argument is the FILE).
    #[arg(value_name = "PACK", required_unless_present = "pack")]
    pack_arg: Option<PathBuf>,
    /// The model output to check; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    pack: PackOptions,
    /// Ground truth (for metrics such as `json_compare`): a JSON file, `@FILE`, or inline JSON.
    #[arg(long, value_name = "JSON|FILE")]
    expected: Option<String>,
    /// The record's `meta`, as components see it: inline JSON, `@FILE`, or a JSON file.
    #[arg(long, value_name = "JSON|FILE")]
    meta: Option<String>,
    /// Print the result record as JSON.
    #[arg(long)]
    json: bool,
    /// Print only the re-ask feedback (empty when there is nothing to fix).
    #[arg(long)]
    feedback: bool,
    /// Largest output accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_BYTES)]
    max_record_bytes: usize,
    /// Read the output as it arrives (a model's stream piped in) and print each
    /// violation as soon as it is certain, then the result; with --json, one
    /// JSON line per event, then the result record as the last line.
    #[arg(long, conflicts_with = "feedback")]
    stream: bool,
    /// Decide the tool calls the transcript's last assistant message proposes,
    /// before they run: FILE holds the messages (a JSON array, or a record
    /// with `messages`); prints `allow` or `deny` for each call, with the
    /// issues that decide it (with --json, `{"decisions": [...]}`); exits 0
    /// when every call is allowed.
    #[arg(long, conflicts_with_all = ["feedback", "stream"])]
    proposed: bool,
}

pub(super) fn check(args: &CheckArgs) -> Result<u8, String> {
    // With --pack, a single argument is the output file.
    let (pack_arg, file) = match (&args.pack.pack, &args.pack_arg, &args.file) {
        (Some(_), Some(_), Some(_)) => {
            return Err("too many arguments: with --pack, give only the output FILE".to_owned())
        }
        (Some(_), first, None) => (None, first.as_ref()),
        (_, first, file) => (first.as_ref(), file.as_ref()),
    };
    let pack = args.pack.load(pack_arg)?;
    let name = pack.name().to_owned();
    // One pack, judged on this thread: the engine's request road.
    let engine = Engine::builder()
        .pack(pack)
        .threads(1)
        .build()
        .map_err(|err| err.to_string())?;
    if args.stream {
        return check_streaming(args, &engine, &name, file);
    }
    let output = match file {
        None => read_limited(io::stdin().lock(), args.max_record_bytes, "stdin")?,
        Some(p) if p.as_os_str() == "-" => {
            read_limited(io::stdin().lock(), args.max_record_bytes, "stdin")?
        }
        Some(path) => {
            let file = tribunal_base::files::open_stream(path).map_err(|e| e.to_string())?;
            read_limited(file, args.max_record_bytes, &path.display().to_string())?
        }
    };
    if args.proposed {
        return check_proposed(args, &engine, &name, &output, file);
    }
    let input = record(args, output, file)?;
    let request = Request::check_record(name, input).anonymous();
    let decision = engine.decide(request).map_err(|e| e.to_string())?;
    let Judged::Report(report) = decision.into_judged() else {
        unreachable!("a check's report");
    };
    let mut stdout = io::stdout().lock();
    let written = if args.json {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&report.to_value()).unwrap_or_default()
        )
    } else if args.feedback {
        let feedback = report.feedback.as_deref().unwrap_or("");
        writeln!(stdout, "{}", tribunal_base::text::printable(feedback))
    } else {
        write!(stdout, "{}", render_report(&report))
    };
    verdict(written, &report)
}

/// `check --proposed`: the decisions on the proposed tool calls.
fn check_proposed(
    args: &CheckArgs,
    engine: &Engine,
    name: &str,
    text: &str,
    file: Option<&PathBuf>,
) -> Result<u8, String> {
    let from = file.map_or_else(|| "stdin".to_owned(), |f| f.display().to_string());
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("{from}: not JSON ({e}): --proposed reads the messages, a JSON array or a record with `messages`"))?;
    let (messages, id, meta, expected) = match value {
        Value::Array(_) => (value, Value::Null, Value::Null, Value::Null),
        Value::Object(mut record) => {
            let Some(messages) = record.remove("messages") else {
                return Err(format!(
                    "{from}: the record has no `messages`: --proposed decides the tool calls of a transcript's last assistant message"
                ));
            };
            let take = |record: &mut serde_json::Map<String, Value>, key| {
                record.remove(key).unwrap_or(Value::Null)
            };
            let id = take(&mut record, "id");
            let meta = take(&mut record, "meta");
            let expected = take(&mut record, "expected");
            (messages, id, meta, expected)
        }
        _ => {
            return Err(format!(
                "{from}: --proposed reads the messages: a JSON array, or a record with `messages`"
            ))
        }
    };
    let mut input = tribunal::Input::from_messages(messages);
    input.id = if id.is_null() {
        file.map_or(Value::Null, |f| Value::String(f.display().to_string()))
            .into()
    } else {
        id.into()
    };
    input.meta = match &args.meta {
        Some(arg) => json_arg("--meta", arg)?.into(),
        None => meta.into(),
    };
    input.expected = match &args.expected {
        Some(arg) => json_arg("--expected", arg)?.into(),
        None => expected.into(),
    };
    let request = Request::decide_record(name, input).anonymous();
    let decision = engine.decide(request).map_err(|e| e.to_string())?;
    let Judged::Calls(decisions) = decision.into_judged() else {
        unreachable!("a decision's calls");
    };
    let mut stdout = io::stdout().lock();
    let written = if args.json {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&decisions.to_value()).unwrap_or_default()
        )
    } else {
        write!(stdout, "{}", render_decisions(&decisions))
    };
    written.map_err(|e| format!("cannot write to stdout: {e}"))?;
    Ok(if decisions.all_allowed() {
        EXIT_OK
    } else {
        EXIT_NOT_PASSED
    })
}

/// The decisions for a terminal: one line per call, its issues under it.
fn render_decisions(decisions: &tribunal::Decisions) -> String {
    use std::fmt::Write as _;
    let printable = tribunal_base::text::printable;
    let mut out = String::new();
    if let Some(error) = &decisions.error {
        let _ = writeln!(out, "error: {}", printable(error));
    }
    for call in &decisions.decisions {
        let verdict = match call.decision {
            tribunal::Verdict::Allow => "ALLOW",
            tribunal::Verdict::Deny => "DENY ",
        };
        let _ = writeln!(
            out,
            "{verdict}  {}  (call {}, {})",
            printable(&call.name),
            call.call,
            call.path
        );
        for issue in &call.issues {
            let _ = writeln!(
                out,
                "  {:<7} {:<18} {}",
                issue.severity.as_str(),
                printable(&issue.code),
                printable(&issue.message)
            );
        }
    }
    // The past, apart: it decides nothing.
    for issue in &decisions.history {
        let _ = writeln!(
            out,
            "history  {:<18} {} ({})",
            printable(&issue.code),
            printable(&issue.message),
            issue.path.as_deref().unwrap_or("the record")
        );
    }
    out
}

/// `check`'s exit code once the result is written: 0 when the record passed.
fn verdict(written: io::Result<()>, report: &Report) -> Result<u8, String> {
    written.map_err(|e| format!("cannot write to stdout: {e}"))?;
    Ok(if report.passed() {
        EXIT_OK
    } else {
        EXIT_NOT_PASSED
    })
}

/// The record `check` evaluates: the output, `--expected`, `--meta`, and the
/// file's name as its id.
fn record(args: &CheckArgs, output: String, file: Option<&PathBuf>) -> Result<Input, String> {
    let expected = match &args.expected {
        None => Value::Null,
        Some(value) => json_arg("--expected", value)?,
    };
    let mut input = Input::new(output).with_expected(expected);
    if let Some(meta) = &args.meta {
        input.meta = json_arg("--meta", meta)?.into();
    }
    if let Some(file) = file {
        input.id = file.display().to_string().into();
    }
    Ok(input)
}

/// `check --stream`: the output read as it arrives, each violation printed
/// (and flushed) when it is certain, then the result as `check` prints it.
fn check_streaming(
    args: &CheckArgs,
    engine: &Engine,
    name: &str,
    file: Option<&PathBuf>,
) -> Result<u8, String> {
    use std::io::Read as _;
    let (mut reader, what): (Box<dyn io::Read>, String) = match file {
        Some(path) if path.as_os_str() != "-" => (
            Box::new(tribunal_base::files::open_stream(path).map_err(|e| e.to_string())?),
            path.display().to_string(),
        ),
        _ => (Box::new(io::stdin().lock()), "stdin".to_owned()),
    };
    let served = engine.find(name).map_err(|e| e.to_string())?;
    let mut session = engine.stream(&served, record(args, String::new(), file)?);
    let mut stdout = io::stdout().lock();
    let mut text = tribunal_base::text::Utf8Chunks::default();
    let (mut read, mut buffer) = (0usize, vec![0u8; 8192]);
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(format!("cannot read {what}: {err}")),
        };
        read += n;
        if read > args.max_record_bytes {
            return Err(format!(
                "{what} is larger than {} bytes (raise --max-record-bytes)",
                args.max_record_bytes
            ));
        }
        let chunk = text
            .push(&buffer[..n])
            .map_err(|at| format!("{what} is not valid UTF-8 (at byte {})", at + 1))?;
        for event in session.push(chunk) {
            let line = event_line(&event, args.json);
            writeln!(stdout, "{line}").map_err(|e| format!("cannot write to stdout: {e}"))?;
        }
        stdout
            .flush()
            .map_err(|e| format!("cannot write to stdout: {e}"))?;
    }
    if text.finish().is_err() {
        return Err(format!(
            "{what} is not valid UTF-8 (it ends inside a character)"
        ));
    }
    let Judged::Report(report) = engine.finish(session, None, None).into_judged() else {
        unreachable!("a stream's report");
    };
    let written = if args.json {
        writeln!(stdout, "{}", report.to_json_line())
    } else {
        write!(stdout, "{}", render_report(&report))
    };
    verdict(written, &report)
}

/// One streaming event as `check --stream` prints it.
fn event_line(event: &tribunal::StreamEvent, json: bool) -> String {
    use tribunal_base::text::one_line;
    match event {
        _ if json => event.to_json().to_string(),
        tribunal::StreamEvent::Violation(v) => format!(
            "violation at byte {}: {} {} {}  ({})",
            v.offset,
            v.severity.as_str(),
            one_line(v.path.as_deref().unwrap_or("-")),
            one_line(&v.message),
            v.code
        ),
        tribunal::StreamEvent::Release { up_to } => format!("release up to byte {up_to}"),
        tribunal::StreamEvent::Stopped { at, reason } => {
            format!("early checks stopped at byte {at}: {}", one_line(reason))
        }
        other => other.to_json().to_string(),
    }
}

/// The human-readable form of a report, as `check` prints it. What came from the
/// model's output or the pack is shown with control characters escaped.
pub(crate) fn render_report(report: &Report) -> String {
    use std::fmt::Write as _;
    use tribunal_base::text::{one_line, printable};
    let mut out = String::new();
    let score = report
        .score
        .map_or_else(|| "-".to_owned(), |s| format!("{s:.4}"));
    let tier = report.extraction.as_ref().map_or("-", |e| e.tier_name());
    let _ = writeln!(
        out,
        "{}  score {score}  extraction {tier}  ({})",
        report.status(),
        one_line(&report.pack)
    );
    if let Some(extraction) = &report.extraction {
        if !extraction.repairs.is_empty() {
            // The tier's repairs by kind, then each of the contract's at its path.
            let changes = &extraction.schema_repairs;
            let mut repairs: Vec<String> = extraction
                .repairs
                .iter()
                .filter(|kind| !changes.iter().any(|change| change.repair == **kind))
                .map(|kind| kind.as_str().to_owned())
                .collect();
            repairs.extend(
                changes
                    .iter()
                    .map(|change| format!("{} at {}", change.repair, one_line(&change.path))),
            );
            let _ = writeln!(out, "repairs: {}", repairs.join(", "));
        }
    }
    if let Some(error) = report.error() {
        let _ = writeln!(out, "error: {}", one_line(error));
    }
    if !report.metrics.is_empty() {
        let _ = writeln!(out, "metrics:");
        for (name, result) in &report.metrics {
            let score = match &result.skipped {
                Some(reason) => format!("skipped: {}", one_line(reason)),
                None => format!("{:.4}", result.score),
            };
            let _ = writeln!(
                out,
                "  {:<24} {score}  (weight {})",
                one_line(name),
                result.weight
            );
        }
    }
    if !report.issues.is_empty() {
        let _ = writeln!(out, "issues:");
        let path_of = |issue: &tribunal::Issue| {
            one_line(
                issue
                    .path
                    .as_deref()
                    .filter(|p| !p.is_empty())
                    .unwrap_or("-"),
            )
            .into_owned()
        };
        // The columns widen to the record's longest rule and path (within a
        // bound), so the messages line up.
        let width = |longest: usize, least: usize, most: usize| longest.clamp(least, most);
        let rules = report
            .issues
            .iter()
            .map(|i| one_line(&i.rule).chars().count());
        let rule_width = width(rules.max().unwrap_or(0), 18, 40);
        let paths = report.issues.iter().map(|i| path_of(i).chars().count());
        let path_width = width(paths.max().unwrap_or(0), 14, 48);
        for issue in &report.issues {
            let _ = writeln!(
                out,
                "  {:<7} {:<rule_width$} {:<path_width$} {}",
                issue.severity,
                one_line(&issue.rule),
                path_of(issue),
                one_line(&issue.message)
            );
        }
    }
    if let Some(feedback) = &report.feedback {
        let _ = writeln!(out, "feedback:");
        for line in feedback.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "  {}", printable(line));
            }
        }
    }
    out
}

/// A JSON value given on the command line: `@FILE`, or a path that exists, is
/// read as a JSON file (a device or a folder there is refused as such); text
/// that starts like a JSON object, array or string is inline JSON; anything else
/// is taken as a file name (so a typo says "no such file").
fn json_arg(flag: &str, value: &str) -> Result<Value, String> {
    let looks_inline = value.trim_start().starts_with(['{', '[', '"']);
    let file = value.strip_prefix('@').map(PathBuf::from).or_else(|| {
        let path = PathBuf::from(value);
        (path.exists() || !looks_inline && serde_json::from_str::<Value>(value).is_err())
            .then_some(path)
    });
    match file {
        Some(path) => {
            let text = tribunal_base::files::read_regular_text(
                &path,
                tribunal_base::files::MAX_VALUE_FILE_BYTES,
            )
            .map_err(|e| format!("{flag}: {e}"))?;
            serde_json::from_str(&text)
                .map_err(|e| format!("{flag}: {}: not valid JSON: {e}", path.display()))
        }
        None => serde_json::from_str(value).map_err(|e| {
            format!("{flag}: not valid JSON: {e} (give inline JSON, @FILE, or a JSON file)")
        }),
    }
}
