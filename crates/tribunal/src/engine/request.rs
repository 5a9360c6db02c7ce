//! One request to the engine and its decision: what a front end sends (the
//! bytes it received) and what it answers with (the bytes written here).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::decision::Decisions;
use crate::pipeline::Input;
use crate::report::{Issue, Report};

use super::{Engine, Served};

/// What a request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ask {
    /// Judge the record: its result record.
    Check,
    /// Decide the tool calls its transcript's last assistant message
    /// proposes, before they run: `allow` or `deny` each.
    Decide,
}

/// One request: a pack's name, and the bytes of a record (JSON, as a line of
/// `eval` input; for [`Ask::Decide`] the list of messages alone too), or a
/// record a front end has read itself.
#[derive(Debug, Clone)]
pub struct Request {
    pack: String,
    ask: Ask,
    body: Body,
    deadline: Option<Instant>,
    max_record_bytes: usize,
    keep_input: bool,
    anonymous: bool,
    answer_unreadable: bool,
    unwritten: bool,
}

/// What a request holds: bytes, or a record read by the front end and the
/// warning reading it gave.
#[derive(Debug, Clone)]
enum Body {
    Bytes(Vec<u8>),
    Record(Box<Input>, Option<Issue>),
}

impl Request {
    /// Judge the record `body` with the pack `pack`.
    pub fn check(pack: impl Into<String>, body: Vec<u8>) -> Self {
        Self::new(pack.into(), Ask::Check, Body::Bytes(body))
    }

    /// Judge `record` (read by the front end) with the pack `pack`.
    pub fn check_record(pack: impl Into<String>, record: Input) -> Self {
        Self::new(
            pack.into(),
            Ask::Check,
            Body::Record(Box::new(record), None),
        )
    }

    /// Decide the tool calls that `record`'s transcript proposes.
    pub fn decide_record(pack: impl Into<String>, record: Input) -> Self {
        Self::new(
            pack.into(),
            Ask::Decide,
            Body::Record(Box::new(record), None),
        )
    }

    /// Decide the tool calls that the transcript of `body` (a record with
    /// `messages`, or the list of messages) proposes, with the pack `pack`.
    pub fn decide(pack: impl Into<String>, body: Vec<u8>) -> Self {
        Self::new(pack.into(), Ask::Decide, Body::Bytes(body))
    }

    fn new(pack: String, ask: Ask, body: Body) -> Self {
        Self {
            pack,
            ask,
            body,
            deadline: None,
            max_record_bytes: crate::jsonl::DEFAULT_MAX_RECORD_BYTES,
            keep_input: false,
            anonymous: false,
            answer_unreadable: false,
            unwritten: false,
        }
    }

    /// No decision id: the answer's bytes are the result record alone (as
    /// `eval` writes it, without `line`), for a front end that keeps no
    /// decisions (the command line's `check`).
    #[must_use]
    pub fn anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// A check whose body is not a record (not JSON, not an object, too
    /// long) is answered with that record's `ERROR` result (kind `input`,
    /// its `id` when one could be read), as `eval` answers a line it cannot
    /// read, instead of a [`RequestError`]: for a front end whose callers
    /// want a result for every record (a library call).
    #[must_use]
    pub fn answer_unreadable(mut self) -> Self {
        self.answer_unreadable = true;
        self
    }

    /// The record's answer starts its issues with `note` (a warning the
    /// front end's reading of the record gave: lone surrogates read as
    /// U+FFFD), as `eval`'s does. For a record read by the front end.
    #[must_use]
    pub fn note(mut self, note: Option<Issue>) -> Self {
        if let Body::Record(_, slot) = &mut self.body {
            *slot = note;
        }
        self
    }

    /// The answer is not written ([`Decision::bytes`] is empty): for a
    /// front end that answers from what was judged ([`Decision::judged`]),
    /// writing it only if asked.
    #[must_use]
    pub fn unwritten(mut self) -> Self {
        self.unwritten = true;
        self
    }

    /// Judged by `deadline`: a step still running then stops there (the
    /// record is `ERROR`, kind `timeout`; a proposal denies every call), and
    /// a request that has not started by then is not judged.
    #[must_use]
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// A longer body is refused (`RequestErrorKind::TooLarge`; default
    /// 4 MiB, as `eval`'s `--max-record-bytes`).
    #[must_use]
    pub fn max_record_bytes(mut self, bytes: usize) -> Self {
        self.max_record_bytes = bytes;
        self
    }

    /// Keep the record read in the decision ([`Decision::input`]), for a
    /// log that records what was judged.
    #[must_use]
    pub fn keep_input(mut self, keep: bool) -> Self {
        self.keep_input = keep;
        self
    }

    /// The pack it names.
    pub fn pack(&self) -> &str {
        &self.pack
    }

    /// What it asks.
    pub fn ask(&self) -> Ask {
        self.ask
    }

    /// Why it is no longer to be judged: its deadline passed.
    pub(super) fn expired(&self) -> Option<RequestError> {
        self.deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
            .then(|| {
                RequestError::new(
                    RequestErrorKind::Expired,
                    "the deadline passed before the request was judged".to_owned(),
                )
            })
    }
}

/// What a decision judged: a record's report, or a proposal's decisions.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Judged {
    /// The record's report ([`Ask::Check`]).
    Report(Report),
    /// The decisions on the proposed calls ([`Ask::Decide`]).
    Calls(Decisions),
}

impl Judged {
    /// The record's report, if a record was judged.
    pub fn into_report(self) -> Option<Report> {
        match self {
            Self::Report(report) => Some(report),
            Self::Calls(_) => None,
        }
    }

    /// The decisions on the proposed calls, if a proposal was decided.
    pub fn into_calls(self) -> Option<Decisions> {
        match self {
            Self::Calls(decisions) => Some(decisions),
            Self::Report(_) => None,
        }
    }

    /// Why it could not be judged (a step failed, a deadline passed), if so.
    pub fn error(&self) -> Option<&str> {
        match self {
            Self::Report(report) => report.error(),
            Self::Calls(decisions) => decisions.error.as_deref(),
        }
    }
}

/// A request's answer: what was judged, the bytes written for it (one JSON
/// object and a newline for a proposal; the result record, without newline,
/// for a check), its decision id (the answer's last member), the pack that
/// judged it.
#[derive(Debug, Clone)]
pub struct Decision {
    id: String,
    pack: Arc<Served>,
    judged: Judged,
    bytes: Vec<u8>,
    input: Option<Input>,
}

impl Decision {
    /// Its decision id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The pack (the revision) that judged it.
    pub fn pack(&self) -> &crate::pack::Pack {
        self.served().pack()
    }

    /// The pack as served.
    pub fn served(&self) -> &Arc<Served> {
        &self.pack
    }

    /// What was judged.
    pub fn judged(&self) -> &Judged {
        &self.judged
    }

    /// The answer, as written.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// What was judged, taken.
    pub fn into_judged(self) -> Judged {
        self.judged
    }

    /// The answer's bytes, taken.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// What was judged and the answer's bytes, taken.
    pub fn into_parts(self) -> (Judged, Vec<u8>) {
        (self.judged, self.bytes)
    }

    /// The record read, when the request asked to keep it.
    pub fn input(&self) -> Option<&Input> {
        self.input.as_ref()
    }
}

/// Why a request got no decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    kind: RequestErrorKind,
    message: String,
}

impl RequestError {
    fn new(kind: RequestErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What kind of error.
    pub fn kind(&self) -> RequestErrorKind {
        self.kind
    }

    /// Its stable code ([`RequestErrorKind::code`]).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// It, in words, saying where (`not valid JSON: … at line 1 column 15`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The kinds of [`RequestError`], each with a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestErrorKind {
    /// No pack of that name is served.
    UnknownPack,
    /// The body is not UTF-8.
    NotUtf8,
    /// The body is not JSON.
    BadJson,
    /// JSON, but not a record (not an object, no `output`, …).
    InvalidRecord,
    /// A proposal to decide without `messages`.
    NoMessages,
    /// The body is longer than the request's `max_record_bytes`.
    TooLarge,
    /// Its deadline passed before it was judged.
    Expired,
}

impl RequestErrorKind {
    /// The stable code: `pack.unknown`, `request.not-utf8`,
    /// `request.bad-json`, `request.invalid-record`, `request.no-messages`,
    /// `request.too-large`, `request.timeout`.
    pub fn code(self) -> &'static str {
        match self {
            Self::UnknownPack => "pack.unknown",
            Self::NotUtf8 => "request.not-utf8",
            Self::BadJson => "request.bad-json",
            Self::InvalidRecord => "request.invalid-record",
            Self::NoMessages => "request.no-messages",
            Self::TooLarge => "request.too-large",
            Self::Expired => "request.timeout",
        }
    }
}

/// Decision ids: 32 hex digits, a random start per process and a counter,
/// unique within a process and across restarts.
#[derive(Debug)]
pub(super) struct DecisionIds {
    prefix: u64,
    next: AtomicU64,
}

impl DecisionIds {
    pub(super) fn new() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        hasher.write_u32(std::process::id());
        Self {
            prefix: hasher.finish(),
            next: AtomicU64::new(1),
        }
    }

    pub(super) fn next(&self) -> String {
        format!(
            "{:016x}{:016x}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// [`Engine::decide`].
pub(super) fn decide(engine: &Engine, request: Request) -> Result<Decision, RequestError> {
    let served = engine.find(&request.pack)?;
    // (A record read by the front end is judged as `Pack::evaluate` judges
    // it: its report holds the extracted JSON, whichever steps read it.)
    let id = if request.anonymous {
        String::new()
    } else {
        engine.next_decision_id()
    };
    let tail = if request.anonymous {
        Vec::new()
    } else {
        tail(&served, &id)
    };
    // A report's answer, as `eval` writes it (empty when `unwritten`).
    let written = |report: &Report| {
        let mut bytes = Vec::new();
        if !request.unwritten {
            bytes.reserve(1024);
            report.write_record(&mut bytes, crate::report::Fields::ALL, None, &tail);
        }
        bytes
    };
    let (input, note, whole) = match request.body {
        Body::Record(record, note) => (*record, note, true),
        Body::Bytes(body) => match read(request.ask, &body, request.max_record_bytes) {
            Ok((input, note)) => (input, note, false),
            Err((_, err)) if request.answer_unreadable && request.ask == Ask::Check => {
                let report =
                    served
                        .pack()
                        .errored(err.id, crate::report::ErrorKind::Input, err.message);
                let bytes = written(&report);
                return Ok(decision(id, served, report, bytes));
            }
            Err((kind, err)) => return Err(RequestError::new(kind, err.message)),
        },
    };
    if request.ask == Ask::Decide && input.messages.is_null() {
        return Err(RequestError::new(
            RequestErrorKind::NoMessages,
            "the body has no `messages`: decide judges the tool calls a transcript's last assistant message proposes (send the messages, or a record with them)".to_owned(),
        ));
    }
    let kept = request.keep_input.then(|| input.clone());
    let (judged, bytes) = match request.ask {
        Ask::Check if whole => {
            let mut report = served
                .pack()
                .evaluate_within(&input, None, request.deadline);
            report.note_first(note);
            let bytes = written(&report);
            (Judged::Report(report), bytes)
        }
        Ask::Check => {
            let mut bytes = Vec::with_capacity(256 + input.output.len());
            let report = crate::jsonl::judge_record(
                served.pack(),
                input,
                note,
                request.deadline,
                &mut bytes,
                &tail,
            );
            if request.unwritten {
                bytes = Vec::new();
            }
            (Judged::Report(report), bytes)
        }
        Ask::Decide => {
            let decisions = served.pack().decide_within(&input, request.deadline);
            let mut bytes = Vec::new();
            if !request.unwritten {
                // Written straight from the decisions (no value built), the
                // tail's members after theirs.
                if serde_json::to_writer(&mut bytes, &decisions).is_err() {
                    bytes.clear();
                }
                if let Some(mut object) = crate::json_write::Object::reopen(&mut bytes) {
                    for (name, member) in &tail {
                        crate::json_write::write_str(object.key(name), member);
                    }
                    object.close();
                }
                bytes.push(b'\n');
            }
            (Judged::Calls(decisions), bytes)
        }
    };
    Ok(Decision {
        id,
        pack: served,
        judged,
        bytes,
        input: kept,
    })
}

/// The record in a request's bytes: a list of messages is the record of
/// those messages (for a decision). Or why it is not one, and what kind of
/// error that is.
fn read(
    ask: Ask,
    body: &[u8],
    max_record_bytes: usize,
) -> Result<(Input, Option<crate::report::Issue>), (RequestErrorKind, crate::jsonl::LineError)> {
    if body.len() > max_record_bytes {
        let message = format!(
            "the body is {} bytes, above the limit of {max_record_bytes} bytes",
            body.len()
        );
        return Err((
            RequestErrorKind::TooLarge,
            crate::jsonl::LineError::new(crate::json::Json::Null, message),
        ));
    }
    let read = match ask {
        Ask::Decide if body.trim_ascii_start().starts_with(b"[") => {
            let mut record = Vec::with_capacity(body.len() + 14);
            record.extend_from_slice(b"{\"messages\":");
            record.extend_from_slice(body);
            record.push(b'}');
            crate::jsonl::read_call_record(&record)
        }
        _ => crate::jsonl::read_call_record(body),
    };
    read.map_err(|err| (unread_kind(body), err))
}

/// The members an answer ends with: the bundle's revision (when the pack
/// came from one) and the decision id.
pub(super) fn tail<'a>(served: &'a Served, id: &'a str) -> Vec<(&'static str, &'a str)> {
    served
        .pack()
        .bundle_revision()
        .map(|revision| ("bundle", revision))
        .into_iter()
        .chain([("decision_id", id)])
        .collect()
}

/// A decision made apart from a request (a stream's).
pub(super) fn decision(id: String, pack: Arc<Served>, report: Report, bytes: Vec<u8>) -> Decision {
    Decision {
        id,
        pack,
        judged: Judged::Report(report),
        bytes,
        input: None,
    }
}

/// The error of a pack name not served: the nearest name, and those served.
pub(super) fn unknown_pack(engine: &Engine, name: &str) -> RequestError {
    let names = engine.names();
    let hint = crate::suggest::nearest(name, &names).map_or_else(String::new, |near| {
        format!(": {}", crate::suggest::did_you_mean(&near))
    });
    let known = if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    };
    RequestError::new(
        RequestErrorKind::UnknownPack,
        format!("no pack named `{name}`{hint} (served: {known})"),
    )
}

/// What kind of error a body that is not a record is: not UTF-8, bad JSON
/// (its message says where: the byte; line and column), or JSON that is not
/// a record.
fn unread_kind(body: &[u8]) -> RequestErrorKind {
    match std::str::from_utf8(body) {
        Err(_) => RequestErrorKind::NotUtf8,
        Ok(text) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() => {
            RequestErrorKind::BadJson
        }
        Ok(_) => RequestErrorKind::InvalidRecord,
    }
}
