//! Tribunal's JSON reader (`tribunal_json::json_read`) against `serde_json`,
//! sonic-rs, simd-json and jiter, on the side-by-side benchmark's generated
//! records (issue 63: "measure jiter, simd-json and sonic-rs against our reader
//! before writing more of our own"). Three jobs, each the engine's own:
//!
//! - **record**: a JSONL line to its `id` (a value), its `output` (a string,
//!   unescaped, owned) and its `expected` (a value, when it has one), the
//!   other members skipped; what the engine's record reader does.
//! - **document**: an output's JSON document (the whole output when it is one;
//!   json-eval's, its first `json` fence) to a value tree; what the strict
//!   and fence tiers do.
//! - **compact**: the same document written again as compact JSON; what a pack
//!   none of whose steps reads the document does (`Written`). The others have
//!   no such writer: they read a tree and write it.
//!
//! Every reader is timed on the same inputs in the same run, alternating, best
//! of `--rounds`; each reader's figure is printed as nanoseconds an input and
//! as a multiple of Tribunal's. A reader that does not read an input as the
//! others do is counted, not hidden: the `read` column counts the inputs it
//! accepted, and for **compact** `same` counts those whose text is Tribunal's
//! (sonic-rs, for one, writes `3e10` as `30000000000.0`: it keeps numbers as
//! written only with its `arbitrary_precision` feature, `--features
//! sonic-exact` here). All allocate through the allocator the engine's front
//! ends install (mimalloc, counted).
//!
//! ```text
//! json-readers DATA_DIR [--records N] [--rounds R] [--job JOB] [--reader NAME]
//! ```
//! `DATA_DIR` holds `ksi-emission.jsonl`, `json-eval.jsonl` and
//! `context-agent.jsonl` (`scripts/bench` generates them); the first N records
//! (20,000) of each are read, 5 rounds. `--job` runs one job, `--reader` only
//! the readers whose name contains NAME besides Tribunal's (`--reader
//! tribunal`: Tribunal's alone, to profile it).

use std::borrow::Cow;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde::Deserialize;
use simd_json::prelude::Writable;
use tribunal_json::json::Json;
use tribunal_json::json_read;

/// The allocator every front end installs (the command line, the server, the
/// Python and Node.js packages): every reader's allocations go through it.
#[global_allocator]
static ALLOC: tribunal_component::alloc::Counting = tribunal_component::alloc::Counting;

const SETS: [&str; 3] = ["ksi-emission", "json-eval", "context-agent"];
const JOBS: [&str; 3] = ["record", "document", "compact"];

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("json-readers: {err}");
            ExitCode::from(2)
        }
    }
}

struct Args {
    data: String,
    records: usize,
    rounds: usize,
    job: Option<String>,
    reader: Option<String>,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let usage = "usage: json-readers DATA_DIR [--records N] [--rounds R] [--job record|document|compact] [--reader NAME]";
    let (mut data, mut job, mut reader) = (None, None, None);
    let (mut records, mut rounds) = (20_000, 5);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let value = args
                .next()
                .ok_or(format!("{name} wants a number; {usage}"))?;
            match value.parse() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{name} `{value}` is not a number above 0; {usage}")),
            }
        };
        match arg.as_str() {
            "--records" => records = number("--records")?,
            "--rounds" => rounds = number("--rounds")?,
            "--job" => match args.next() {
                Some(name) if JOBS.contains(&name.as_str()) => job = Some(name),
                _ => return Err(format!("--job wants one of {}; {usage}", JOBS.join(", "))),
            },
            "--reader" => {
                let name = args
                    .next()
                    .ok_or(format!("--reader wants a name; {usage}"))?;
                reader = Some(name);
            }
            _ if data.is_none() && !arg.starts_with('-') => data = Some(arg),
            _ => return Err(format!("unexpected argument `{arg}`; {usage}")),
        }
    }
    let data = data.ok_or(usage)?;
    Ok(Args {
        data,
        records,
        rounds,
        job,
        reader,
    })
}

fn run(args: Vec<String>) -> Result<(), String> {
    let args = parse_args(args)?;
    println!(
        "JSON readers, best of {} rounds, the first {} records of each set in {}",
        args.rounds, args.records, args.data
    );
    println!(
        "(ns an input; `× tribunal`: the reader's time over Tribunal's, above 1 when Tribunal is faster)\n"
    );
    println!(
        "{:<14} {:<9} {:<26} {:>9} {:>11} {:>8} {:>8}",
        "set", "job", "reader", "ns", "× tribunal", "read", "same"
    );
    for set in SETS {
        let path = format!("{}/{set}.jsonl", args.data);
        let text = std::fs::read_to_string(&path).map_err(|err| format!("{path}: {err}"))?;
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .take(args.records)
            .collect();
        let documents = documents(&lines, &path)?;
        for (job, readers) in
            JOBS.iter()
                .zip([record_readers(), document_readers(), compact_readers()])
        {
            if args.job.as_ref().is_some_and(|only| only != job) {
                continue;
            }
            // Tribunal's (the first) and those asked for.
            let readers: Vec<_> = readers
                .into_iter()
                .enumerate()
                .filter(|(i, (name, _))| {
                    *i == 0
                        || args
                            .reader
                            .as_ref()
                            .is_none_or(|r| name.contains(r.as_str()))
                })
                .map(|(_, reader)| reader)
                .collect();
            let rows = if *job == "record" {
                measure(&readers, &lines, args.rounds, false)
            } else {
                measure(&readers, &documents, args.rounds, *job == "compact")
            };
            print_rows(set, job, &rows, lines.len(), documents.len());
        }
    }
    Ok(())
}

/// Each line's JSON document: its whole `output` when that is one, else the
/// first `json` fence's body when that is one.
fn documents(lines: &[&str], path: &str) -> Result<Vec<String>, String> {
    let mut documents = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let record: serde_json::Value =
            serde_json::from_str(line).map_err(|err| format!("{path}:{}: {err}", i + 1))?;
        let Some(output) = record.get("output").and_then(|o| o.as_str()) else {
            continue;
        };
        let fenced = output
            .split_once("```json\n")
            .and_then(|(_, rest)| rest.split_once("\n```"))
            .map(|(body, _)| body);
        for candidate in [Some(output), fenced].into_iter().flatten() {
            let parsed = serde_json::from_str::<serde_json::Value>(candidate);
            if matches!(
                parsed,
                Ok(serde_json::Value::Object(_) | serde_json::Value::Array(_))
            ) {
                documents.push(candidate.to_owned());
                break;
            }
        }
    }
    Ok(documents)
}

/// What a reader does with one input: `false` when it refuses it. The first
/// buffer is its scratch (a copy of the input, for simd-json), the second
/// takes what the compact job writes.
type Read = fn(&str, &mut Vec<u8>, &mut Vec<u8>) -> bool;

struct Row {
    name: &'static str,
    best: Duration,
    read: usize,
    /// For the compact job: how many of its texts are Tribunal's.
    same: Option<usize>,
}

/// Times each reader on every input, `rounds` times, alternating readers;
/// with `compare`, counts the inputs each writes as Tribunal's reader (the
/// first) does.
fn measure(
    readers: &[(&'static str, Read)],
    inputs: &[impl AsRef<str>],
    rounds: usize,
    compare: bool,
) -> Vec<Row> {
    let mut rows: Vec<Row> = readers
        .iter()
        .map(|(name, _)| Row {
            name,
            best: Duration::MAX,
            read: 0,
            same: None,
        })
        .collect();
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for ((_, read), row) in readers.iter().zip(&mut rows) {
            let start = Instant::now();
            let mut accepted = 0;
            for input in inputs {
                out.clear();
                accepted += usize::from(read(input.as_ref(), &mut scratch, &mut out));
                black_box(&out);
            }
            row.best = row.best.min(start.elapsed());
            row.read = accepted;
        }
    }
    // What each writes, against Tribunal's (written once), untimed.
    if compare {
        let ours: Vec<Vec<u8>> = inputs
            .iter()
            .map(|input| {
                let mut text = Vec::new();
                readers[0].1(input.as_ref(), &mut scratch, &mut text);
                text
            })
            .collect();
        for ((_, read), row) in readers.iter().zip(&mut rows) {
            let mut same = 0;
            for (input, ours) in inputs.iter().zip(&ours) {
                out.clear();
                read(input.as_ref(), &mut scratch, &mut out);
                same += usize::from(out == *ours);
            }
            row.same = Some(same);
        }
    }
    for row in &mut rows {
        row.best /= u32::try_from(inputs.len().max(1)).unwrap_or(u32::MAX);
    }
    rows
}

fn print_rows(set: &str, job: &str, rows: &[Row], lines: usize, documents: usize) {
    let count = if job == "record" { lines } else { documents };
    let ours = rows[0].best.as_secs_f64();
    for row in rows {
        let ns = row.best.as_secs_f64() * 1e9;
        println!(
            "{:<14} {:<9} {:<26} {:>9.0} {:>11.2} {:>8} {:>8}",
            set,
            job,
            row.name,
            ns,
            row.best.as_secs_f64() / ours,
            format!("{}/{count}", row.read),
            row.same.map_or_else(|| "-".to_owned(), |s| s.to_string()),
        );
    }
}

/// `text` copied into `scratch`, for simd-json, which reads a text it may
/// write to (the copy is part of what its figures cost).
fn copied<'s>(scratch: &'s mut Vec<u8>, text: &str) -> &'s mut [u8] {
    scratch.clear();
    scratch.extend_from_slice(text.as_bytes());
    scratch
}

// ---- record: `id`, `output`, `expected` ------------------------------------

/// The members the engine keeps of a record, for the readers that read into a
/// type (`V`, their value).
#[derive(Deserialize)]
struct Record<'a, V> {
    #[serde(default)]
    id: Option<V>,
    #[serde(borrow, default)]
    output: Option<Cow<'a, str>>,
    #[serde(default)]
    expected: Option<V>,
}

impl<V> Record<'_, V> {
    /// The record as the engine keeps it: the output owned.
    fn keep(self) -> (Option<V>, Option<String>, Option<V>) {
        (self.id, self.output.map(Cow::into_owned), self.expected)
    }
}

fn record_readers() -> Vec<(&'static str, Read)> {
    vec![
        ("tribunal (parse_members)", |line, _, _| {
            let mut kept: [Option<Json>; 3] = Default::default();
            let read = json_read::parse_members(line, |name, value| {
                if let Some(at) = ["id", "output", "expected"].iter().position(|n| *n == name) {
                    kept[at] = Some(value);
                }
            });
            black_box(kept);
            read.is_some()
        }),
        ("serde_json (derive)", |line, _, _| {
            let record = serde_json::from_str::<Record<'_, serde_json::Value>>(line);
            record.map(|r| black_box(r.keep())).is_ok()
        }),
        ("sonic-rs (derive)", |line, _, _| {
            let record = sonic_rs::from_str::<Record<'_, sonic_rs::Value>>(line);
            record.map(|r| black_box(r.keep())).is_ok()
        }),
        ("simd-json (derive, copy)", |line, scratch, _| {
            let record = simd_json::serde::from_slice::<Record<'_, simd_json::OwnedValue>>(copied(
                scratch, line,
            ));
            record.map(|r| black_box(r.keep())).is_ok()
        }),
        ("jiter (Jiter)", |line, _, _| jiter_record(line).is_some()),
    ]
}

/// jiter has no typed reader: its `Jiter` walks the members (each name
/// matched where it lies, not copied).
fn jiter_record(line: &str) -> Option<()> {
    fn which(name: Option<&str>) -> Option<usize> {
        name.map(|name| match name {
            "id" => 0,
            "output" => 1,
            "expected" => 2,
            _ => 3,
        })
    }
    let mut jiter = jiter::Jiter::new(line.as_bytes());
    let mut kept: (
        Option<jiter::JsonValue<'static>>,
        Option<String>,
        Option<jiter::JsonValue<'static>>,
    ) = (None, None, None);
    let mut member = which(jiter.next_object().ok()?);
    while let Some(index) = member {
        match index {
            0 => kept.0 = Some(jiter.next_value_owned().ok()?),
            1 => kept.1 = Some(jiter.next_str().ok()?.to_owned()),
            2 => kept.2 = Some(jiter.next_value_owned().ok()?),
            _ => jiter.next_skip().ok()?,
        }
        member = which(jiter.next_key().ok()?);
    }
    jiter.finish().ok()?;
    black_box(kept);
    Some(())
}

// ---- document: a value tree ------------------------------------------------

fn document_readers() -> Vec<(&'static str, Read)> {
    vec![
        ("tribunal (parse)", |text, _, _| {
            json_read::parse(text).map(black_box).is_some()
        }),
        ("serde_json (Value)", |text, _, _| {
            serde_json::from_str::<serde_json::Value>(text)
                .map(black_box)
                .is_ok()
        }),
        ("sonic-rs (Value)", |text, _, _| {
            sonic_rs::from_str::<sonic_rs::Value>(text)
                .map(black_box)
                .is_ok()
        }),
        ("simd-json (owned, copy)", |text, scratch, _| {
            simd_json::to_owned_value(copied(scratch, text))
                .map(black_box)
                .is_ok()
        }),
        ("simd-json (borrowed, copy)", |text, scratch, _| {
            simd_json::to_borrowed_value(copied(scratch, text))
                .map(black_box)
                .is_ok()
        }),
        ("jiter (owned)", |text, _, _| {
            jiter::JsonValue::parse_owned(text.as_bytes(), false, jiter::PartialMode::Off)
                .map(black_box)
                .is_ok()
        }),
        ("jiter (borrowed)", |text, _, _| {
            jiter::JsonValue::parse(text.as_bytes(), false)
                .map(black_box)
                .is_ok()
        }),
    ]
}

// ---- compact: the document written again -------------------------------------

fn compact_readers() -> Vec<(&'static str, Read)> {
    vec![
        ("tribunal (write_container)", |text, _, out| {
            json_read::write_container(text, out).is_some()
        }),
        ("serde_json (Value, write)", |text, _, out| {
            serde_json::from_str::<serde_json::Value>(text)
                .is_ok_and(|value| serde_json::to_writer(out, &value).is_ok())
        }),
        ("sonic-rs (Value, write)", |text, _, out| {
            sonic_rs::from_str::<sonic_rs::Value>(text)
                .is_ok_and(|value| sonic_rs::to_writer(out, &value).is_ok())
        }),
        ("simd-json (borrowed, write)", |text, scratch, out| {
            simd_json::to_borrowed_value(copied(scratch, text))
                .is_ok_and(|value| value.write(out).is_ok())
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of every shape the generator makes and a few it does not
    /// (escapes of each kind, non-ASCII text, deep and empty containers):
    /// every reader of each job reads each one, and every writer
    /// writes Tribunal's text. A reader whose closure stopped doing its job
    /// (an error swallowed, an API changed) fails here, not in a table.
    #[test]
    fn every_reader_reads_each_record_and_writes_tribunals_text() {
        let documents = [
            r#"{"event": "agent:status", "data": {"id": "e2", "name": "index", "count": 65}}"#,
            r##"{"readme": "# plan\n\nTab\there, quote \" and \\ and \u00e9 \ud83d\ude00", "n": [1, -2.5, 30000000000, 0.1]}"##,
            r#"[[[[{"a": []}]]], {}, [], true, false, null, "ünïcödé"]"#,
            r#"{"type_examples": {"type1": {"yaml": "replicas: 11", "behavior": "PASS: ok."}}, "x": {"y": {"z": [{}]}}}"#,
        ];
        let lines: Vec<String> = documents
            .iter()
            .enumerate()
            .map(|(i, document)| {
                let record = serde_json::json!({"id": format!("r-{i}"), "output": document, "expected": serde_json::from_str::<serde_json::Value>(document).unwrap(), "other": [1, {"b": 2}]});
                record.to_string()
            })
            .collect();
        let (mut scratch, mut out, mut ours) = (Vec::new(), Vec::new(), Vec::new());
        for (name, read) in record_readers() {
            for line in &lines {
                assert!(read(line, &mut scratch, &mut out), "{name}: {line}");
            }
        }
        for (name, read) in document_readers() {
            for document in documents {
                assert!(read(document, &mut scratch, &mut out), "{name}: {document}");
            }
        }
        for (name, read) in compact_readers() {
            for document in documents {
                out.clear();
                ours.clear();
                assert!(compact_readers()[0].1(document, &mut scratch, &mut ours));
                assert!(read(document, &mut scratch, &mut out), "{name}: {document}");
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&ours),
                    "{name}"
                );
            }
        }
    }
}
