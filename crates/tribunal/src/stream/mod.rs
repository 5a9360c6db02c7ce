//! Streaming validation: judge an output while the model is still writing it.
//!
//! [`Pack::stream`] opens a session. [`Stream::push`] takes the next chunk of
//! text and returns the [`StreamEvent`]s it made certain; [`Stream::finish`] returns
//! the record's [`Report`], which is exactly the one [`Pack::evaluate`] gives
//! for the whole text (it *is* that evaluation), whatever the chunking. (A
//! document the session read whole as the `strict` tier reads it is not read
//! again, and the contract's checks, when they found nothing in it as it
//! streamed, do not run again.)
//!
//! Early events come from an incremental scanner that follows the extraction
//! ladder's view of the stream: leading whitespace then a JSON document, or
//! prose then a JSON-like fence holding one. Once it has committed to that
//! document it reads it token by token, each chunk's work proportional to the
//! chunk, and runs the contract's checks on each value as it completes: the
//! value's type (a container's as soon as it opens), range, allowed values,
//! length and sentences, the kind of the top-level object and of each
//! variant-bearing object, an unknown member under `additional_fields: false`
//! as soon as its key is complete, a repeated item under `unique_items`, and,
//! when a container closes, its own checks (required members, item counts).
//! A `no_placeholders` step checks each string value as it completes. Each
//! violation is reported with the rule, code, path and message the final
//! report gives it. A step judges early only while every step before it
//! leaves the document as written.
//!
//! What is certain is certain about that document. The report is what
//! counts: when the document turns out not to be the one extraction takes (a
//! model that writes a second one in a fence after it, or JSON the strict
//! reader refuses, which the repair tier then rewrites), `finish` says so and
//! the early events may not all be in it. Rhai scripts, plugins and the other
//! built-ins judge at `finish`.
//!
//! A session may also report [`StreamEvent::Release`]: the bytes before an offset
//! can be passed on, because no later chunk can make them part of a
//! violation. A value that may still be flagged (a string being written, a
//! key under `additional_fields: false`, a member whose rule depends on a kind
//! not yet seen) holds the release back until it is judged.

mod scanner;

use std::collections::HashSet;
use std::ops::Deref;

use crate::json::{Json, Object};
use crate::pack::Pack;
use crate::pipeline::{Input, Prepared};
use crate::report::{Issue, Report, Severity};

use crate::component::Early;
use scanner::{Plan, Scanner};

/// Something a session learnt from a chunk.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A violation that no continuation of the text can undo (in the
    /// document being written).
    Violation(Violation),
    /// The text before byte `up_to` can be passed on: no later chunk can make
    /// any of it part of a violation. Only from a session with
    /// [`Stream::with_release`]; each is past the one before.
    Release {
        /// The end of the safe prefix (a byte offset into the whole text).
        up_to: usize,
    },
    /// The session stopped judging early, once and for good: the document
    /// opens a container at byte `at` deeper than the JSON reader accepts
    /// ([`STREAM_DEPTH_LIMIT`] levels), so no tier reads it as written. The
    /// session's memory stays bounded (it keeps the text, not a frame per
    /// level), releases stop where they were, and [`Stream::finish`] still
    /// judges the whole text, as [`Pack::evaluate`] would.
    Stopped {
        /// The offset of the first container past the limit.
        at: usize,
        /// Why, in words a front end can print.
        reason: String,
    },
}

/// The deepest nesting a session judges early: the JSON reader's own limit.
pub const STREAM_DEPTH_LIMIT: usize = crate::json::NESTING_LIMIT - 1;

/// A rule broken by the text so far, as the final report will word it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The pipeline step that reports it: its name (`contract`,
    /// `no_placeholders`, or its `as:`).
    pub rule: String,
    /// Its stable code (`contract.type`).
    pub code: String,
    /// As the step reports it (`error` for the contract's).
    pub severity: Severity,
    /// What is wrong, in the final report's words.
    pub message: String,
    /// JSON pointer of the value, as the final report gives it.
    pub path: Option<String>,
    /// Where the bytes that made it certain start (a byte offset into the
    /// whole text): the value or key at fault, or the closing bracket of a
    /// container that ended without what it needed.
    pub start: usize,
    /// The byte offset just past them: the chunk that held this byte made
    /// the violation certain.
    pub offset: usize,
}

/// A streaming session over one output: see the module documentation. `P` is
/// how it holds its pack: `&Pack` from [`Pack::stream`], or an owner such as
/// `Arc<Pack>` ([`Stream::new`]) for a session that outlives the borrow.
#[derive(Debug)]
pub struct Stream<P: Deref<Target = Pack>> {
    pack: P,
    record: Input,
    scanner: Scanner,
    release: bool,
    released: usize,
    /// (code, path, message) of every violation reported, so that none is
    /// reported twice (a container's checks at its close repeat its members').
    reported: HashSet<(String, Option<String>, String)>,
    /// A note on how the record was read, first in the report's issues.
    note: Option<crate::report::Issue>,
    /// What the last chunk made certain (kept for the next: no vector made
    /// per chunk).
    found: Vec<scanner::Found>,
}

impl Pack {
    /// A streaming session for an output this pack judges: [`Stream::push`]
    /// its chunks as they arrive, then [`Stream::finish`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::write(dir.path().join("pack.yaml"), "name: t\ncontract:\n  fields:\n    n: { type: integer }\n").unwrap();
    /// use tribunal::{Pack, StreamEvent};
    ///
    /// let pack = Pack::load(dir.path())?;
    /// let mut session = pack.stream();
    /// assert!(session.push(r#"{"n": "#).is_empty());
    /// let events = session.push(r#""seven", "#);           // the value is complete: it is wrong
    /// assert!(matches!(&events[0], StreamEvent::Violation(v) if v.path.as_deref() == Some("/n")));
    /// session.push("\"rest\": 1}");
    /// let report = session.finish();                        // = pack.evaluate(the whole text)
    /// assert_eq!(report.issues[0].message, "`n` must be an integer, got a string");
    /// # Ok::<(), tribunal::LoadErrors>(())
    /// ```
    pub fn stream(&self) -> Stream<&Pack> {
        Stream::new(self, Input::default())
    }

    /// A session for the record `record` (its id, expected value and meta;
    /// its `output`, usually empty, is the start of the text).
    pub fn stream_for(&self, record: Input) -> Stream<&Pack> {
        Stream::new(self, record)
    }
}

impl<P: Deref<Target = Pack>> Stream<P> {
    /// A session of `pack` for the record `record` (its id, expected value and
    /// meta; its `output`, usually empty, is the start of the text).
    pub fn new(pack: P, mut record: Input) -> Self {
        let start = std::mem::take(&mut record.output);
        let scanner = Scanner::new(plan(&pack), &pack.pipeline.ladder);
        let mut stream = Self {
            pack,
            scanner,
            record,
            release: false,
            released: 0,
            reported: HashSet::new(),
            note: None,
            found: Vec::new(),
        };
        if !start.is_empty() {
            let _ = stream.push(&start);
        }
        stream
    }

    /// How the session holds its pack.
    pub(crate) fn pack_ref(&self) -> &P {
        &self.pack
    }

    /// The same session, reporting [`StreamEvent::Release`] too.
    #[must_use]
    pub fn with_release(mut self) -> Self {
        self.release = true;
        self
    }

    /// The same session, its report's issues starting with `note` (how the
    /// record was read: the warning reading a record line gives).
    #[must_use]
    pub fn with_note(mut self, note: Option<crate::report::Issue>) -> Self {
        self.note = note;
        self
    }

    /// Takes the next chunk and returns what it made certain: violations in
    /// the order they were found, then (with [`with_release`](Self::with_release))
    /// how far the text may be passed on, when that moved.
    pub fn push(&mut self, chunk: &str) -> Vec<StreamEvent> {
        let start = self.record.output.len();
        self.record.output.push_str(chunk);
        self.scanner
            .scan(&self.record.output, start, &mut self.found);
        let mut events = Vec::new();
        let stopped = self.scanner.take_stop();
        if self.found.is_empty() && !self.release && stopped.is_none() {
            // Most chunks: nothing to say.
            return events;
        }
        for (issue, start, offset) in self.found.drain(..) {
            let key = (
                issue.code.to_string(),
                issue.path.clone(),
                issue.message.clone(),
            );
            if self.reported.insert(key) {
                events.push(StreamEvent::Violation(violation(issue, start, offset)));
            }
        }
        if let Some(at) = stopped {
            events.push(StreamEvent::Stopped {
                at,
                reason: format!(
                    "the document nests deeper than {STREAM_DEPTH_LIMIT} levels, the most the JSON \
                     reader accepts: early checks stop here, and the result judges the whole text"
                ),
            });
        }
        if self.release {
            let safe = self.scanner.safe_until(self.record.output.len());
            if safe > self.released {
                self.released = safe;
                events.push(StreamEvent::Release { up_to: safe });
            }
        }
        events
    }

    /// The tier whose document the early events were about, once the session
    /// has read it whole (well formed, no member written twice, nothing but
    /// whitespace or its closing fence after it): `Tier::Strict` for a document at the start,
    /// `Tier::Fence` for one in the first JSON-like fence; `None` before, or
    /// when the text is not such a document. When the report's extraction
    /// tier is this one, every violation reported early is in the report.
    pub fn document(&self) -> Option<crate::extract::Tier> {
        self.scanner.document()
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.record.output
    }

    /// The record's report: exactly [`Pack::evaluate`] of the whole text.
    /// (When the session read the text whole as one document, that document
    /// is not read again, and when the contract's checks found nothing in it
    /// as it streamed, they do not run again.)
    pub fn finish(self) -> Report {
        self.finish_within(None)
    }

    /// [`finish`](Self::finish) by the caller's `deadline`.
    fn finish_within(mut self, deadline: Option<std::time::Instant>) -> Report {
        let prepared = self
            .scanner
            .take_document()
            .map(|(json, contract_clean)| Prepared {
                json,
                contract_clean,
            });
        let mut report = self.pack.evaluate_within(&self.record, prepared, deadline);
        report.note_first(self.note);
        report
    }

    /// [`finish`](Self::finish) by the caller's `deadline` (a server's request
    /// deadline: the steps still to run end by it as by their own limits), with
    /// the report's result record written to `out` as `eval` writes it.
    pub fn finish_into(self, deadline: Option<std::time::Instant>, out: &mut Vec<u8>) -> Report {
        self.finish_writing(deadline, out, &[])
    }

    /// [`finish_into`](Self::finish_into), the record ending with the string
    /// members `tail` (the engine's answer: `bundle`, `decision_id`).
    pub(crate) fn finish_writing(
        self,
        deadline: Option<std::time::Instant>,
        out: &mut Vec<u8>,
        tail: &[(&'static str, &str)],
    ) -> Report {
        let report = self.finish_within(deadline);
        report.write_record(out, crate::report::Fields::ALL, None, tail);
        report
    }
}

impl StreamEvent {
    /// The event as one JSON object, as the front ends write it:
    /// `{"event": "violation", "rule", "code", "severity", "message", "path",
    /// "start", "offset"}` or `{"event": "release", "up_to"}`.
    pub fn to_json(&self) -> Json {
        let mut event = Object::with_capacity(8);
        match self {
            Self::Violation(v) => {
                event.push_new("event", "violation".into());
                event.push_new("rule", v.rule.as_str().into());
                event.push_new("code", v.code.as_str().into());
                event.push_new("severity", v.severity.as_str().into());
                event.push_new("message", v.message.as_str().into());
                event.push_new("path", v.path.as_deref().into());
                event.push_new("start", v.start.into());
                event.push_new("offset", v.offset.into());
            }
            Self::Release { up_to } => {
                event.push_new("event", "release".into());
                event.push_new("up_to", (*up_to).into());
            }
            Self::Stopped { at, reason } => {
                event.push_new("event", "stopped".into());
                event.push_new("at", (*at).into());
                event.push_new("reason", reason.as_str().into());
            }
        }
        Json::Object(event)
    }
}

/// What a session of `pack` checks early: the steps that judge the document
/// while it streams, each while every step before it leaves the document as
/// written (the contract rewrites only a top-level kind it replaces).
fn plan(pack: &Pack) -> Plan {
    let mut plan = Plan::default();
    // `repair: schema` may change the document before any step sees it: what
    // the text holds so far is not what the steps will judge.
    let mut intact = !pack
        .pipeline
        .contract
        .as_ref()
        .is_some_and(|contract| contract.repairs_schema());
    for step in &pack.pipeline.postprocessors {
        if !intact {
            break;
        }
        match step.run.early() {
            Early::Contract => {
                plan.contract = pack
                    .pipeline
                    .contract
                    .clone()
                    .map(|contract| (contract, step.name.clone()));
                intact = plan.contract.is_some();
            }
            Early::Strings(check) => {
                let after_contract = plan.contract.is_some();
                plan.strings
                    .push((step.name.clone(), check, after_contract));
            }
            Early::AtFinish { keeps_json } => intact = keeps_json,
        }
    }
    plan
}

/// The event for one of the steps' issues.
fn violation(issue: Issue, start: usize, offset: usize) -> Violation {
    Violation {
        rule: issue.rule,
        code: issue.code.into_owned(),
        severity: issue.severity,
        message: issue.message,
        path: issue.path,
        start,
        offset,
    }
}

#[cfg(test)]
mod tests {
    use crate::pack::Pack;

    fn pack(extract: &str) -> (tempfile::TempDir, Pack) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pack.yaml"),
            format!(
                "name: t\ncontract:\n  extract: {extract}\n  fields:\n    n: {{ type: integer, min: 1 }}\n    tags: {{ type: array, items: string }}\npipeline:\n  postprocessors: [contract]\n"
            ),
        )
        .unwrap();
        let pack = Pack::load(dir.path()).unwrap();
        (dir, pack)
    }

    /// What `finish()` takes from the session for `text`: the document, and
    /// whether the contract's checks found nothing in it.
    fn handed_on(pack: &Pack, text: &str) -> Option<bool> {
        let mut session = pack.stream();
        for chunk in text.as_bytes().chunks(3) {
            session.push(std::str::from_utf8(chunk).unwrap());
        }
        let handed = session.scanner.take_document().map(|(json, clean)| {
            assert_eq!(Some(json), crate::json_read::parse(text.trim()));
            clean
        });
        let report = session.finish();
        assert_eq!(report, pack.evaluate(&super::Input::new(text)));
        handed
    }

    #[test]
    fn finish_takes_the_document_only_when_the_strict_tier_reads_that_one() {
        let (_dir, strict_first) = pack("[strict, fence, repair]");
        // The text is the document: handed on, checked or not.
        assert_eq!(
            handed_on(&strict_first, " {\"n\": 2, \"tags\": [\"a\"]}\n"),
            Some(true)
        );
        assert_eq!(
            handed_on(&strict_first, "{\"n\": 0, \"tags\": [\"a\", {}]}"),
            Some(false)
        );
        // Anything else is read by `finish()` itself.
        for text in [
            "{\"n\": 2, \"n\": 3}",
            "{\"n\": 2, \"x\": {\"a\": 1, \"a\": 2}}",
            "{\"n\": 2} and more",
            "Here:\n```json\n{\"n\": 2}\n```\n",
            "{\"n\": 2,}",
            "\u{feff}{\"n\": 2}",
            "{\"n\":\u{c} 2}",
        ] {
            assert_eq!(handed_on(&strict_first, text), None, "{text:?}");
        }
        let deep = format!("{{\"x\": {}{}}}", "[".repeat(127), "]".repeat(127));
        assert_eq!(handed_on(&strict_first, &deep), None);
        let deep_enough = format!("{{\"x\": {}{}}}", "[".repeat(125), "]".repeat(125));
        assert_eq!(handed_on(&strict_first, &deep_enough), Some(true));
        // A ladder that does not start with `strict` may read the text otherwise.
        let (_dir, fence_first) = pack("[fence, strict]");
        assert_eq!(handed_on(&fence_first, "{\"n\": 2}"), None);
    }
}
