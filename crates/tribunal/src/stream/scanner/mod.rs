//! The incremental scanner of a streaming session: where the document starts
//! (the ladder's view: leading whitespace then JSON, or prose then a JSON-like
//! fence), then the document token by token, with the contract's checks run
//! on each value as it completes. Each byte is looked at once, so a chunk
//! costs work proportional to its length; a container is parsed again (for
//! its own checks) only when the contract has a rule for it.

mod values;

use std::collections::HashSet;
use std::sync::Arc;

use crate::component::EarlyStrings;
use crate::contract::{Contract, Last, RuleId, Seg, Uniques};
use crate::extract::{fence::is_json_info, Tier};
use crate::json::{Json, Object, Str};
use crate::json_write::{plain_run, plain_run_from};
use crate::report::Issue;

/// What the scanner is reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Leading whitespace.
    Start,
    /// Prose, looking for a fence; `run` counts the fence characters in a
    /// row, `line_start` whether only indentation precedes them on the line.
    Prose { run: u8, ch: u8, line_start: bool },
    /// A fence's info string, from `from`.
    FenceInfo { from: usize, ch: u8 },
    /// After a JSON-like fence's first line, before its document.
    FenceBody,
    /// In the document.
    Doc,
    /// After the document: only whitespace (then, in a fence, its closing
    /// fence) keeps it the one its tier reads whole.
    After,
    /// Nothing more to learn early: the document ended, or the text is not
    /// one this scanner can be certain about (`finish()` decides).
    Done,
}

/// A container being read.
#[derive(Debug)]
struct Frame {
    object: bool,
    start: usize,
    /// The rules of its members or items.
    shape: Shape,
    /// Its own rule, checked when it closes.
    own: Own,
    /// An object that takes no members but those it lists.
    closed: bool,
    /// An array that takes no item twice.
    unique: bool,
    /// An object with a kind member (variants, or the top-level `may_emit`).
    has_kind: bool,
    state: State,
    /// The member being read (objects).
    key: Option<Str>,
    /// The rule of the member being read (found once, when its key
    /// completes), or of every item (arrays).
    member: Option<RuleId>,
    /// Whether the member being read has a rule only some variants give, and
    /// the kind is not read yet: it is checked when the object closes.
    waits: bool,
    /// The value of its kind member, once read (objects with variants).
    kind: Option<Str>,
    /// Items read (arrays).
    count: usize,
    /// Items read, for `unique_items`.
    uniques: Uniques<'static>,
    /// Where the current member's or item's value starts.
    value_start: usize,
    /// From here on, its bytes may still be flagged when it closes.
    hold: Option<usize>,
    /// Which of its common fields it has (objects with a shape).
    common_seen: Vec<bool>,
    /// The common field after the last one read.
    next_common: usize,
    /// Its other members' distinct keys so far (objects with a shape): a
    /// set, so that an object of many members is read in linear time.
    seen: HashSet<Str>,
    /// Members whose rule waited for a kind not read yet: key and value span,
    /// checked when the object closes.
    deferred: Vec<(Str, usize, usize)>,
    /// Its values so far, while the scanner builds the document.
    items: Vec<Json>,
    members: Object,
}

impl Frame {
    fn new() -> Self {
        Self {
            object: false,
            start: 0,
            shape: Shape::Free,
            own: Own::None,
            closed: false,
            unique: false,
            has_kind: false,
            state: State::Comma,
            key: None,
            member: None,
            waits: false,
            kind: None,
            count: 0,
            uniques: Uniques::default(),
            value_start: 0,
            hold: None,
            common_seen: Vec::new(),
            next_common: 0,
            seen: HashSet::new(),
            deferred: Vec::new(),
            items: Vec::new(),
            members: Object::new(),
        }
    }

    /// The frame of a container opening at `at`, from a closed one (keeping
    /// what its lists hold room for).
    fn reset(&mut self, object: bool, at: usize, shape: Shape, own: Own, hold: Option<usize>) {
        self.object = object;
        self.start = at;
        self.shape = shape;
        self.own = own;
        self.closed = false;
        self.unique = false;
        self.has_kind = false;
        self.state = if object {
            State::ObjectFirst
        } else {
            State::Value { first: true }
        };
        self.key = None;
        self.member = None;
        self.waits = false;
        self.kind = None;
        self.count = 0;
        if !self.uniques.is_empty() {
            self.uniques = Uniques::default();
        }
        self.value_start = at;
        self.hold = hold;
        self.common_seen.clear();
        self.next_common = 0;
        self.seen.clear();
        self.deferred.clear();
        self.items.clear();
        self.members = Object::new();
    }

    /// The container it built (and it holds nothing more).
    fn take_built(&mut self) -> Json {
        if self.object {
            Json::Object(std::mem::take(&mut self.members))
        } else {
            Json::Array(std::mem::take(&mut self.items))
        }
    }

    /// The last step of the path of the value being read in it.
    fn last(&self) -> Last<'_> {
        if self.object {
            Last::Member(self.key.as_deref().unwrap_or_default())
        } else {
            Last::Item(self.count)
        }
    }

    /// The path segment of the value being read in it.
    fn seg(&self) -> Seg {
        match self.last() {
            Last::Member(key) => Seg::Member(key.to_owned()),
            Last::Item(index) => Seg::Item(index),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    /// The top-level object of a pack with a contract.
    Top,
    /// A value with a field rule: its members (`fields`, `variants`) or items.
    Field(RuleId),
    /// Nothing to check inside.
    Free,
}

#[derive(Debug, Clone, Copy)]
enum Own {
    Top,
    Field(RuleId),
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    ObjectKey,
    /// After a key: `:`.
    Colon,
    /// After `:`, or after `[` or `,` in an array: a value (`]` too, right after `[`).
    Value { first: bool },
    /// After a value: `,` or the closing bracket.
    Comma,
}

/// A token being read.
#[derive(Debug, Clone, Copy)]
enum Token {
    /// A string (a key when `key`); `escape`: the last byte began an
    /// escape; `plain`: no escape or control byte so far (the string is
    /// then its bytes as they are, not read again).
    Str {
        start: usize,
        escape: bool,
        key: bool,
        plain: bool,
    },
    /// A number, `true`, `false` or `null`.
    Bare { start: usize },
}

/// A token's bytes, `text[start..end]`, and whether it is a string with no
/// escape or control byte (its content is then its bytes as they are).
type Span = (usize, usize, bool);

/// An issue the text made certain, and the bytes that did: `start..end`.
pub(super) type Found = (Issue, usize, usize);

/// What a session checks early, found once from the pack's postprocessors.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// The contract and its step's name, when every step before it leaves
    /// the document as written.
    pub contract: Option<(Arc<Contract>, String)>,
    /// The string checks, likewise, with their steps' names and whether the
    /// contract's step comes before them (a kind it replaces is then the
    /// replacement).
    pub strings: Vec<(String, Arc<dyn EarlyStrings>, bool)>,
}

/// A step's check of each string value, and the fields it reported.
#[derive(Debug)]
struct StringCheck {
    rule: String,
    check: Arc<dyn EarlyStrings>,
    after_contract: bool,
    done: Vec<bool>,
}

#[derive(Debug)]
pub(super) struct Scanner {
    contract: Option<Arc<Contract>>,
    /// The name the contract's step reports under.
    contract_rule: String,
    strings: Vec<StringCheck>,
    /// Whether the ladder reads a document at the start of the text.
    doc_at_start: bool,
    /// Whether the ladder reads fences.
    fences: bool,
    mode: Mode,
    /// The open containers, innermost last: the first `depth` frames (those
    /// past it are closed ones', kept for the next containers to open).
    stack: Vec<Frame>,
    depth: usize,
    /// The tier whose document the session reads: `Strict` at the start,
    /// `Fence` in a fence.
    committed: Option<Tier>,
    /// Whether that document was read whole, well formed and with nothing but
    /// whitespace (or its closing fence) after it.
    whole: bool,
    /// Whether a checked object repeated a member: JSON readers keep the last
    /// value, so what was reported about the first may not be in the report.
    repeated: bool,
    /// Path of the innermost open container.
    path: Vec<Seg>,
    token: Option<Token>,
    /// Whether it builds the document's value as it reads it: while the
    /// value can be the one the ladder's first tier, `strict`, reads (no
    /// fence, no name given twice, not too deep).
    build: bool,
    /// The document's value, once read whole.
    tree: Option<Json>,
    /// How many issues of the contract's it found.
    contract_issues: usize,
    /// A value's issues, as its checks find them (kept for its room).
    issues: Vec<Issue>,
    /// Where the early checks stopped because the document nests too deep:
    /// the container's offset, how far the text was safe then, and whether
    /// the session has said so.
    stopped: Option<(usize, usize, bool)>,
}

impl Scanner {
    pub(super) fn new(plan: Plan, ladder: &[Tier]) -> Self {
        let has = |tier| ladder.contains(&tier);
        let (contract, contract_rule) = plan.contract.unzip();
        let strings: Vec<StringCheck> = plan
            .strings
            .into_iter()
            .map(|(rule, check, after_contract)| StringCheck {
                done: vec![false; check.fields()],
                rule,
                check,
                after_contract,
            })
            .collect();
        let mode = if contract.is_some() || !strings.is_empty() {
            Mode::Start
        } else {
            // Nothing to check early.
            Mode::Done
        };
        Self {
            contract,
            contract_rule: contract_rule.unwrap_or_default(),
            strings,
            doc_at_start: has(Tier::Strict) || has(Tier::Embedded) || has(Tier::Repair),
            fences: has(Tier::Fence),
            mode,
            stack: Vec::new(),
            depth: 0,
            committed: None,
            whole: false,
            repeated: false,
            path: Vec::new(),
            token: None,
            build: mode != Mode::Done && ladder.first() == Some(&Tier::Strict),
            tree: None,
            contract_issues: 0,
            issues: Vec::new(),
            stopped: None,
        }
    }

    /// Reads `text[from..]` (the new chunk) and appends the issues it made
    /// certain to `found`, each with the offset just past the token that did.
    /// (Into the session's buffer, not a vector returned: most chunks find
    /// nothing, and a returned vector's copy was a fifth of a small chunk's
    /// scan.)
    #[inline]
    pub(super) fn scan(&mut self, text: &str, from: usize, found: &mut Vec<Found>) {
        // Most small chunks fall inside a string, with nothing in them to
        // judge: skipped here, without the whole scan's set-up (a tenth of a
        // 4-byte chunk's cost).
        // (The plain bytes before the first that is not are skipped once,
        // here: the byte-by-byte scan starts after them.)
        let mut from = from;
        if self.mode == Mode::Doc {
            if let Some(Token::Str { escape: false, .. }) = self.token {
                from += plain_run_from(text.as_bytes(), from);
                if from == text.len() {
                    return;
                }
            }
        }
        self.scan_chunk(text, from, found);
    }

    /// [`scan`](Self::scan), byte by byte.
    #[inline(never)]
    fn scan_chunk(&mut self, text: &str, from: usize, found: &mut Vec<Found>) {
        let first = found.len();
        let bytes = text.as_bytes();
        // The contract, held apart for the chunk (its checks borrow it while
        // the scanner changes; moved out and back, not cloned: no count to
        // keep for each chunk).
        let held = self.contract.take();
        let contract = held.as_deref();
        let mut at = from;
        while at < bytes.len() && self.mode != Mode::Done {
            if self.mode == Mode::After {
                self.after_byte(bytes[at]);
            } else if self.mode == Mode::Doc {
                // Runs of plain string content (up to a quote, a backslash
                // or a control byte) are skipped in one step.
                if let Some(Token::Str { escape: false, .. }) = self.token {
                    at += plain_run_from(bytes, at);
                    if at == bytes.len() {
                        break;
                    }
                }
                at = self.doc_run(contract, text, at, found);
                continue;
            } else {
                self.outside_byte(contract, text, at);
            }
            at += 1;
        }
        self.contract = held;
        // The contract's issues come without their step's name.
        for (issue, ..) in &mut found[first..] {
            if issue.rule.is_empty() {
                self.contract_issues += 1;
                issue.rule.clone_from(&self.contract_rule);
            }
        }
    }

    /// The document, when the session has read it whole as the strict tier
    /// reads it (the text is that document, with only whitespace around it):
    /// its value, and whether the contract's checks ran on it and found
    /// nothing.
    pub(super) fn take_document(&mut self) -> Option<(Json, bool)> {
        let read = self.build && self.document() == Some(Tier::Strict);
        let json = self.tree.take().filter(|_| read)?;
        Some((json, self.contract.is_some() && self.contract_issues == 0))
    }

    /// The tier whose document the early events are about, once the session
    /// has read it whole: `Strict` for a document at the start with nothing
    /// after it, `Fence` for one in the first JSON-like fence.
    pub(super) fn document(&self) -> Option<Tier> {
        self.committed.filter(|_| self.whole && !self.repeated)
    }

    /// Where the early checks stopped because the document nests deeper than
    /// the JSON reader accepts (the offset of the container past the limit):
    /// once, the first time it is asked after it happened.
    pub(super) fn take_stop(&mut self) -> Option<usize> {
        match &mut self.stopped {
            Some((at, _, told)) if !*told => {
                *told = true;
                Some(*at)
            }
            _ => None,
        }
    }

    /// After the document: whitespace, or a fence's closing run, keep it whole.
    fn after_byte(&mut self, b: u8) {
        if b.is_ascii_whitespace() {
            return;
        }
        if self.committed == Some(Tier::Fence) && (b == b'`' || b == b'~') {
            self.mode = Mode::Done;
            return;
        }
        self.whole = false;
        self.mode = Mode::Done;
    }

    /// How far the text is safe to pass on: up to the first byte that a later
    /// chunk may still flag.
    pub(super) fn safe_until(&self, len: usize) -> usize {
        if let Some((_, safe, _)) = self.stopped {
            return safe;
        }
        if self.mode != Mode::Doc {
            return len;
        }
        let mut safe = len;
        for frame in &self.stack[..self.depth] {
            if let Some(hold) = frame.hold {
                safe = safe.min(hold);
            }
        }
        if let Some(token) = self.token {
            let (start, key, string) = match token {
                Token::Str { start, key, .. } => (start, key, true),
                Token::Bare { start } => (start, false, false),
            };
            let flaggable = if key {
                self.top().is_some_and(|f| f.closed)
            } else {
                self.value_rule().is_some() || (string && !self.strings.is_empty())
            };
            if flaggable {
                safe = safe.min(start);
            }
        }
        safe
    }

    /// Before the document: whitespace, prose and fences.
    fn outside_byte(&mut self, contract: Option<&Contract>, text: &str, at: usize) {
        let b = text.as_bytes()[at];
        match self.mode {
            Mode::Start => {
                if b.is_ascii_whitespace() {
                    return;
                }
                if (b == b'{' || b == b'[') && self.doc_at_start {
                    self.mode = Mode::Doc;
                    self.committed = Some(Tier::Strict);
                    self.open(contract, at, b == b'{', &mut Vec::new());
                } else {
                    self.mode = Mode::Prose {
                        run: 0,
                        ch: 0,
                        line_start: true,
                    };
                    self.outside_byte(contract, text, at);
                }
            }
            Mode::Prose {
                run,
                ch,
                line_start,
            } => {
                // A fence: three or more backticks (anywhere on a line, as the
                // fence tier reads them), or tildes at the start of one.
                let continues = run > 0 && b == ch;
                let opens = b == b'`' || (b == b'~' && line_start);
                if continues || opens {
                    let run = if continues { run.saturating_add(1) } else { 1 };
                    self.mode = Mode::Prose {
                        run,
                        ch: b,
                        line_start,
                    };
                    return;
                }
                if run >= 3 && self.fences {
                    self.mode = Mode::FenceInfo { from: at, ch };
                    self.outside_byte(contract, text, at);
                    return;
                }
                self.mode = Mode::Prose {
                    run: 0,
                    ch: 0,
                    line_start: b == b'\n' || (line_start && (b == b' ' || b == b'\t')),
                };
            }
            Mode::FenceInfo { from, ch } => {
                if b == b'`' && ch == b'`' {
                    // Inline code, not a fence.
                    self.mode = Mode::Prose {
                        run: 0,
                        ch: 0,
                        line_start: false,
                    };
                } else if b == b'\n' {
                    // The first fence the fence tier would read: JSON-like, or
                    // nothing can be known early.
                    self.mode = if is_json_info(text[from..at].trim()) {
                        Mode::FenceBody
                    } else {
                        Mode::Done
                    };
                }
            }
            Mode::FenceBody => {
                if b.is_ascii_whitespace() {
                    return;
                }
                if b == b'{' || b == b'[' {
                    self.mode = Mode::Doc;
                    self.committed = Some(Tier::Fence);
                    self.build = false;
                    self.open(contract, at, b == b'{', &mut Vec::new());
                } else {
                    self.mode = Mode::Done;
                }
            }
            Mode::Doc | Mode::After | Mode::Done => {}
        }
    }

    /// The document from byte `at` on, as far as one step takes it: the byte
    /// an open token takes; with no token open, whitespace and structure up
    /// to the next token left open, a change of mode or the chunk's end (a
    /// token the chunk holds whole is read as it starts). The offset of the
    /// next byte to read.
    fn doc_run(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        mut at: usize,
        found: &mut Vec<Found>,
    ) -> usize {
        let bytes = text.as_bytes();
        if self.token.is_some() && self.token_byte(contract, text, at, found) {
            return at + 1;
        }
        // Outside tokens a document is punctuation and the spaces after it:
        // read here, a byte after another, without going round the scan's
        // loop (its checks of the mode and the token) for each.
        loop {
            // (JSON's whitespace: a form feed, which text around the document
            // may hold, is not JSON inside it.)
            while bytes.get(at).is_some_and(|b| is_json_space(*b)) {
                at += 1;
            }
            if at == bytes.len() {
                return at;
            }
            at = self.structure_byte(contract, text, at, found);
            if self.token.is_some() || self.mode != Mode::Doc || at >= bytes.len() {
                return at;
            }
        }
    }

    /// One byte while a string or a bare token (a number, a literal) is open:
    /// whether the token took it. A byte that ends a bare token is not taken
    /// by it: it is read next as the document's, unless the token's value
    /// ended the document.
    fn token_byte(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        found: &mut Vec<Found>,
    ) -> bool {
        let b = text.as_bytes()[at];
        match self.token {
            Some(Token::Str {
                start,
                escape,
                key,
                plain,
            }) => {
                if escape || b == b'\\' {
                    self.token = Some(Token::Str {
                        start,
                        escape: !escape,
                        key,
                        plain: false,
                    });
                } else if b == b'"' {
                    self.token = None;
                    self.string_closed(contract, text, (start, at + 1, plain), key, found);
                } else if b < 0x20 {
                    // (The strict reader refuses the string: `finish()`
                    // will say so.)
                    self.token = Some(Token::Str {
                        start,
                        escape,
                        key,
                        plain: false,
                    });
                }
                true
            }
            Some(Token::Bare { start }) => {
                if in_bare(b) {
                    return true;
                }
                self.token = None;
                self.scalar_done(contract, text, (start, at, false), found);
                self.mode != Mode::Doc
            }
            None => false,
        }
    }

    /// One byte of the document's structure outside any token: a key or a
    /// value starting, a colon, a comma, a container closing. The offset of
    /// the next byte to read: past the token it starts, when the chunk holds
    /// the token's end.
    fn structure_byte(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        found: &mut Vec<Found>,
    ) -> usize {
        let b = text.as_bytes()[at];
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            self.mode = Mode::Done;
            return at + 1;
        };
        match (frame.state, b) {
            (State::ObjectFirst | State::ObjectKey, b'"') => {
                return self.string_starts(contract, text, at, true, found);
            }
            (State::Colon, b':') => frame.state = State::Value { first: false },
            (State::Value { .. }, b'{' | b'[') => {
                frame.value_start = at;
                self.note_value_start(at);
                self.open(contract, at, b == b'{', found);
            }
            (State::Value { .. }, b'"') => {
                frame.value_start = at;
                self.note_value_start(at);
                return self.string_starts(contract, text, at, false, found);
            }
            (State::Value { .. }, b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                frame.value_start = at;
                self.note_value_start(at);
                return self.bare_starts(contract, text, at, found);
            }
            (State::Comma, b',') => {
                frame.state = if frame.object {
                    State::ObjectKey
                } else {
                    State::Value { first: false }
                };
            }
            (State::ObjectFirst | State::Comma, b'}') if frame.object => {
                self.close(contract, text, at, found);
            }
            (State::Value { first: true } | State::Comma, b']') if !frame.object => {
                self.close(contract, text, at, found);
            }
            // Not JSON the strict reader takes (a trailing comma, a quote
            // of the wrong kind): the repair tier may read it otherwise.
            _ => self.mode = Mode::Done,
        }
        at + 1
    }

    /// A string (a key when `key`) starts at `at`: read to its closing quote
    /// at once when the chunk holds it with nothing but plain bytes before
    /// it (most strings), else left open for the bytes to come. The offset
    /// of the next byte to read.
    fn string_starts(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        key: bool,
        found: &mut Vec<Found>,
    ) -> usize {
        let bytes = text.as_bytes();
        let end = at + 1 + plain_run(&bytes[at + 1..]);
        if bytes.get(end) == Some(&b'"') {
            self.string_closed(contract, text, (at, end + 1, true), key, found);
            return end + 1;
        }
        self.token = Some(Token::Str {
            start: at,
            escape: false,
            key,
            plain: true,
        });
        end
    }

    /// A string (`span`) has closed: a key, or a value.
    #[inline]
    fn string_closed(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        span: Span,
        key: bool,
        found: &mut Vec<Found>,
    ) {
        if key {
            self.key_done(contract, text, span, found);
        } else {
            self.scalar_done(contract, text, span, found);
        }
    }

    /// A number, `true`, `false` or `null` starts at `at`: read to its end at
    /// once when the chunk holds a byte after it, else left open. The offset
    /// of the next byte to read (the one that ended it, which is read as the
    /// document's).
    fn bare_starts(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        found: &mut Vec<Found>,
    ) -> usize {
        let bytes = text.as_bytes();
        let end = at + 1 + bytes[at + 1..].iter().take_while(|b| in_bare(**b)).count();
        if end < bytes.len() {
            self.scalar_done(contract, text, (at, end, false), found);
        } else {
            self.token = Some(Token::Bare { start: at });
        }
        end
    }
}

/// JSON's whitespace.
fn is_json_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether a byte continues a number, `true`, `false` or `null` (as the
/// strict reader would go on reading it: a byte it then refuses makes the
/// token no JSON value, and the scanner stops).
fn in_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}
