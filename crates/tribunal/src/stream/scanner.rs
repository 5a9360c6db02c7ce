//! The incremental scanner of a streaming session: where the document starts
//! (the ladder's view: leading whitespace then JSON, or prose then a JSON-like
//! fence), then the document token by token, with the contract's checks run
//! on each value as it completes. Each byte is looked at once, so a chunk
//! costs work proportional to its length; a container is parsed again (for
//! its own checks) only when the contract has a rule for it.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use crate::component::EarlyStrings;
use crate::contract::{
    Contract, FieldRule, Last, Members, RuleId, Seg, Uniques, Variant, RAW_FALLBACK_KEY,
};
use crate::extract::{fence::is_json_info, Tier};
use crate::json::{Json, Number, Object, Str};
use crate::json_write::plain_run;
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

    /// Reads `text[from..]` (the new chunk) and returns the issues it made
    /// certain, each with the offset just past the token that did.
    pub(super) fn scan(&mut self, text: &str, from: usize) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
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
                    at += plain_run(&bytes[at..]);
                    if at == bytes.len() {
                        break;
                    }
                }
                self.doc_byte(contract, text, at, &mut found);
            } else {
                self.outside_byte(contract, text, at);
            }
            at += 1;
        }
        self.contract = held;
        // The contract's issues come without their step's name.
        for (issue, ..) in &mut found {
            if issue.rule.is_empty() {
                self.contract_issues += 1;
                issue.rule.clone_from(&self.contract_rule);
            }
        }
        found
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

    /// One byte of the document.
    fn doc_byte(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        found: &mut Vec<Found>,
    ) {
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
                    let span = (start, at + 1, plain);
                    if key {
                        self.key_done(contract, text, span, found);
                    } else {
                        self.scalar_done(contract, text, span, found);
                    }
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
                return;
            }
            Some(Token::Bare { start }) => {
                if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.') {
                    return;
                }
                self.token = None;
                self.scalar_done(contract, text, (start, at, false), found);
                if self.mode != Mode::Doc {
                    return;
                }
            }
            None => {}
        }
        // (JSON's whitespace: a form feed, which text around the document
        // may hold, is not JSON inside it.)
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            return;
        }
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            self.mode = Mode::Done;
            return;
        };
        match (frame.state, b) {
            (State::ObjectFirst | State::ObjectKey, b'"') => {
                self.token = Some(Token::Str {
                    start: at,
                    escape: false,
                    key: true,
                    plain: true,
                });
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
                self.token = Some(Token::Str {
                    start: at,
                    escape: false,
                    key: false,
                    plain: true,
                });
            }
            (State::Value { .. }, b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                frame.value_start = at;
                self.note_value_start(at);
                self.token = Some(Token::Bare { start: at });
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
    }

    /// The innermost open container.
    fn top(&self) -> Option<&Frame> {
        self.stack[..self.depth].last()
    }

    /// The rule of the value being read in the innermost container.
    fn value_rule(&self) -> Option<RuleId> {
        self.top()?.member
    }

    /// A member or item starts at `at`: when its rule depends on a kind not
    /// read yet, or it is an item that may repeat an earlier one, its
    /// container holds the release from here until it closes.
    fn note_value_start(&mut self, at: usize) {
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            return;
        };
        if (frame.object && frame.waits) || frame.unique {
            frame.hold = Some(frame.hold.map_or(at, |h| h.min(at)));
        }
    }

    /// A container opens at `at`.
    fn open(
        &mut self,
        contract: Option<&Contract>,
        at: usize,
        object: bool,
        found: &mut Vec<Found>,
    ) {
        // Past the deepest nesting the JSON reader accepts, no tier reads this
        // document as written: the early checks stop here (their memory stays
        // bounded by the limit, not by the text), and the release stays where
        // it was, since `finish()` may still judge a value inside.
        if self.depth + 1 >= crate::json::NESTING_LIMIT {
            let safe = self.safe_until(at);
            self.stopped = Some((at, safe, false));
            self.build = false;
            self.mode = Mode::Done;
            return;
        }
        let (shape, own) = match (self.top(), contract) {
            (_, None) => (Shape::Free, Own::None),
            // The document itself.
            (None, Some(_)) if object => (Shape::Top, Own::Top),
            // The contract wants an object: an array is judged at its end.
            (None, Some(_)) => (Shape::Free, Own::Top),
            (Some(parent), Some(contract)) => match parent.member {
                None => (Shape::Free, Own::None),
                Some(id) => {
                    let issue = contract.container_type_at(
                        contract.rule(id),
                        object,
                        &self.path,
                        Some(parent.last()),
                    );
                    match issue {
                        Some(issue) => {
                            found.push((issue, at, at + 1));
                            (Shape::Free, Own::Field(id))
                        }
                        None => (Shape::Field(id), Own::Field(id)),
                    }
                }
            },
        };
        // A whole value that may still be flagged when it closes: an allowed
        // value (`enum`) or a map whose values are checked then.
        let hold = match (own, contract) {
            (Own::Field(id), Some(contract)) => Some(at).filter(|_| whole_rule(contract, id)),
            (Own::Top, _) if !object => Some(at),
            _ => None,
        };
        if let Some(parent) = self.top() {
            self.path.push(parent.seg());
        }
        if self.depth == self.stack.len() {
            self.stack.push(Frame::new());
        }
        let frame = &mut self.stack[self.depth];
        self.depth += 1;
        frame.reset(object, at, shape, own, hold);
        if let Some(contract) = contract {
            if let (true, Some((common, ..))) = (object, members(contract, shape)) {
                frame.common_seen.resize(common.len(), false);
            }
            frame.closed = object && closed(contract, shape);
            frame.unique = !object && unique(contract, shape);
            frame.has_kind = object && kind_field(contract, shape).is_some();
        }
        // An array's items all have its items' rule.
        if let (Shape::Field(id), Some(contract), false) = (shape, contract, object) {
            frame.member = contract.item_id(id);
        }
    }

    /// A key is complete (`text[start..end]` of `span`; see [`Span`]): an
    /// unknown member of an object that takes no other members is reported
    /// now.
    fn key_done(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        span: Span,
        found: &mut Vec<Found>,
    ) {
        let (start, end, _) = span;
        let Some(key) = string_at(text, span) else {
            self.mode = Mode::Done;
            return;
        };
        let key = &*key;
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            return;
        };
        frame.state = State::Colon;
        let Some(contract) = contract else {
            frame.key = Some(Str::from(key));
            return;
        };
        // (Members usually come in the contract's order: the one after the
        // last found is looked at first.)
        let common_at = members(contract, frame.shape).and_then(|(common, ..)| {
            let next = frame.next_common;
            match common.get(next) {
                Some(f) if f.name == key => Some(next),
                _ => common.iter().position(|f| f.name == key),
            }
        });
        if let Some(i) = common_at {
            frame.next_common = i + 1;
        }
        frame.member = match common_at {
            Some(i) => Some(ids(contract, frame.shape).fields[i]),
            None => variant_rule(contract, frame, key),
        };
        frame.waits = frame.kind.is_none()
            && frame.member.is_none()
            && in_some_variant(contract, frame.shape, key);
        // A member with a rule is one the object may hold.
        let unexpected = frame.closed
            && frame.member.is_none()
            && key != RAW_FALLBACK_KEY
            && !may_hold(contract, frame, key);
        // A member only some variants have, before the kind is read: judged
        // when the object closes, so held from its key.
        if frame.closed && frame.waits {
            frame.hold = Some(frame.hold.map_or(start, |h| h.min(start)));
        }
        if unexpected {
            found.push((contract.unexpected_member_at(key, &self.path), start, end));
        }
        if let Some(i) = common_at {
            if std::mem::replace(&mut frame.common_seen[i], true) {
                self.repeated = true;
            }
        } else if !matches!(frame.shape, Shape::Free) {
            if frame.seen.contains(key) {
                self.repeated = true;
            } else {
                frame.seen.insert(Str::from(key));
            }
        }
        frame.key = Some(Str::from(key));
    }

    /// A string, number, `true`, `false` or `null` is complete (`span`).
    fn scalar_done(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        span: Span,
        found: &mut Vec<Found>,
    ) {
        let (start, end, _) = span;
        let Some(value) = scalar_at(text, span) else {
            self.mode = Mode::Done;
            return;
        };
        if let (Some(contract), Some(parent)) = (contract, self.stack[..self.depth].last()) {
            if let Some(id) = parent.member {
                let last = Some(parent.last());
                let issues = &mut self.issues;
                contract.check_value_into(contract.rule(id), &value, &self.path, last, issues);
                found.extend(issues.drain(..).map(|issue| (issue, start, end)));
            }
        }
        if let Json::String(string) = &value {
            self.string_done(contract, string, start, end, found);
        }
        self.value_done(contract, &value, start, end, found);
        self.attach(value);
    }

    /// A member's or item's value is complete: it goes into its container,
    /// while the scanner builds the document.
    fn attach(&mut self, value: Json) {
        if !self.build {
            return;
        }
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            return;
        };
        if frame.object {
            // (The value's key is not needed once it is complete.)
            let key = frame.key.take().unwrap_or_default();
            if matches!(frame.shape, Shape::Free) {
                if frame.members.insert(key, value).is_some() {
                    // A name given twice: `finish()` reads the text itself.
                    self.build = false;
                }
            } else if self.repeated {
                // Found by the key's own checks.
                self.build = false;
            } else {
                frame.members.push_new(key, value);
            }
        } else {
            frame.items.push(value);
        }
    }

    /// A string value is complete: the steps that check strings check it, as
    /// the value they will see (a top-level kind the contract replaces is the
    /// replacement for the steps after the contract's).
    fn string_done(
        &mut self,
        contract: Option<&Contract>,
        string: &str,
        start: usize,
        end: usize,
        found: &mut Vec<Found>,
    ) {
        let Some(parent) = self.top() else {
            return;
        };
        if self.strings.is_empty() {
            return;
        }
        let replaced = match (contract, parent.key.as_deref()) {
            (Some(contract), Some(key))
                if self.depth == 1 && parent.object && key == contract.kind_field =>
            {
                contract.replaced_kind(string)
            }
            _ => None,
        };
        self.path.push(parent.seg());
        let mut issues = Vec::new();
        for check in &mut self.strings {
            let seen = match &replaced {
                Some(replacement) if check.after_contract => replacement.as_str(),
                _ => string,
            };
            let from = issues.len();
            check
                .check
                .string(&self.path, seen, &mut check.done, &mut issues);
            for issue in &mut issues[from..] {
                issue.rule.clone_from(&check.rule);
            }
        }
        self.path.pop();
        found.extend(issues.into_iter().map(|issue| (issue, start, end)));
    }

    /// A member's or item's value is complete: its container notes it (the
    /// kind, an item that repeats an earlier one).
    fn value_done(
        &mut self,
        contract: Option<&Contract>,
        value: &Json,
        start: usize,
        end: usize,
        found: &mut Vec<Found>,
    ) {
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            return;
        };
        frame.state = State::Comma;
        let Some(contract) = contract else {
            frame.count += 1;
            return;
        };
        if frame.object {
            if let (true, Some(key)) = (frame.waits, &frame.key) {
                frame.deferred.push((key.clone(), start, end));
            }
            let is_kind =
                frame.has_kind && frame.key.as_deref() == kind_field(contract, frame.shape);
            if let (true, Json::String(kind)) = (is_kind, value) {
                if matches!(frame.shape, Shape::Top) {
                    for issue in contract.kind_issues(kind) {
                        found.push((issue, start, end));
                    }
                }
                frame.kind = Some(kind.clone());
            }
            return;
        }
        if frame.unique {
            if let Some(first) = frame.uniques.add(Cow::Owned(value.clone())) {
                let issue = contract.repeated_item_at(&self.path, frame.count, first);
                found.push((issue, frame.value_start, end));
            }
        }
        frame.count += 1;
    }

    /// The innermost container closes at `at`: its own checks, then it is a
    /// completed value of its parent.
    fn close(
        &mut self,
        contract: Option<&Contract>,
        text: &str,
        at: usize,
        found: &mut Vec<Found>,
    ) {
        let Some(depth) = self.depth.checked_sub(1) else {
            return;
        };
        self.depth = depth;
        let building = self.build;
        let built = building.then(|| self.stack[depth].take_built());
        let frame = &self.stack[depth];
        let end = at + 1;
        let span = &text[frame.start..end];
        let parent_unique = self.top().is_some_and(|p| p.unique);
        // A container's own checks are its counts, its required members and
        // its members that waited for the kind; a value rule on the whole
        // container (`enum`, `values`) or an array where the contract wants an
        // object needs the value itself.
        let whole = contract.is_some_and(|c| match frame.own {
            Own::Top => !frame.object,
            Own::Field(id) => whole_rule(c, id),
            Own::None => false,
        });
        let value = match built {
            // (What the scanner built as it read is what the JSON reader
            // reads: not read again.)
            Some(built) => built,
            None if whole || parent_unique => {
                let Some(value) = crate::json_read::parse(span) else {
                    self.mode = Mode::Done;
                    return;
                };
                value
            }
            None => Json::Null,
        };
        if let Some(contract) = contract {
            let issues = match (whole, frame.own) {
                (true, Own::Top) => contract.validate(&value, span).0,
                (true, Own::Field(id)) => {
                    contract.check_value_at(contract.rule(id), &value, &self.path, None)
                }
                (true, Own::None) => Vec::new(),
                (false, _) => self.own_checks(contract, frame, text),
            };
            // Flagged from the first byte the container held back, else its
            // closing bracket.
            let from = frame.hold.unwrap_or(at);
            found.extend(issues.into_iter().map(|issue| (issue, from, end)));
        }
        let start = frame.start;
        if depth == 0 {
            // The document is complete: what follows is not checked early,
            // only whether the tier still reads this document whole.
            self.mode = Mode::After;
            self.whole = true;
            self.tree = building.then_some(value);
            return;
        }
        self.path.pop();
        self.value_done(contract, &value, start, end, found);
        if building {
            self.attach(value);
        }
    }

    /// The checks of a closing container (at `self.path`) that its members'
    /// own checks did not make: required members missing, members that
    /// waited for the kind, item and member counts.
    fn own_checks(&self, contract: &Contract, frame: &Frame, text: &str) -> Vec<Issue> {
        let mut issues = Vec::new();
        let own = match frame.own {
            Own::Field(id) => Some(contract.rule(id)),
            Own::Top | Own::None => None,
        };
        let Some((common, variants, _)) = members(contract, frame.shape) else {
            return issues;
        };
        if !frame.object {
            if let Some(field) = own {
                issues.extend(contract.counts_at(field, frame.count, true, &self.path));
            }
            return issues;
        }
        let chosen = frame
            .kind
            .as_deref()
            .and_then(|kind| variants.iter().find(|v| v.kind == kind));
        let has_common = |i: usize| frame.common_seen.get(i).copied().unwrap_or(false);
        let has_other = |name: &str| frame.seen.contains(name);
        let common = common.iter().enumerate().map(|(i, f)| (f, has_common(i)));
        let variant = chosen.map_or(&[][..], |v| &v.fields[..]);
        for (field, has) in common.chain(variant.iter().map(|f| (f, has_other(&f.name)))) {
            if field.spec.required && !has {
                issues.push(contract.missing_member_at(&field.name, &self.path));
            }
        }
        for (key, start, end) in &frame.deferred {
            // (A member waits only when no common field has its name.)
            match variant_rule(contract, frame, key) {
                Some(id) => {
                    let Some(value) = crate::json_read::parse(&text[*start..*end]) else {
                        continue;
                    };
                    let last = Some(Last::Member(key));
                    let rule = contract.rule(id);
                    contract.check_value_into(rule, &value, &self.path, last, &mut issues);
                }
                None if frame.closed && !may_hold(contract, frame, key) => {
                    issues.push(contract.unexpected_member_at(key, &self.path));
                }
                None => {}
            }
        }
        if let Some(field) = own {
            let common = frame.common_seen.iter().filter(|has| **has).count();
            let distinct = common + frame.seen.len();
            issues.extend(contract.counts_at(field, distinct, false, &self.path));
        }
        issues
    }
}

/// The string whose JSON text (quotes included) is the span, as the JSON
/// reader reads it (borrowed when it has no escape): a plain one as it is.
/// `None` when it is not a JSON string (a control character in it, a bad
/// escape).
fn string_at(text: &str, (start, end, plain): Span) -> Option<Cow<'_, str>> {
    if plain {
        return Some(Cow::Borrowed(&text[start + 1..end - 1]));
    }
    crate::json_read::string(&text[..end], start + 1)
        .filter(|(_, after)| *after == end)
        .map(|(string, _)| string)
}

/// The string, number, `true`, `false` or `null` whose JSON text is the
/// span, as the JSON reader reads it; `None` when it is not one.
fn scalar_at(text: &str, span: Span) -> Option<Json> {
    let (start, end, _) = span;
    let bytes = &text.as_bytes()[..end];
    match &bytes[start..] {
        [b'"', ..] => string_at(text, span).map(|s| Json::String(Str::from(s))),
        b"true" => Some(Json::Bool(true)),
        b"false" => Some(Json::Bool(false)),
        b"null" => Some(Json::Null),
        _ => (crate::json::number_end(bytes, start) == Some(end))
            .then(|| Json::Number(Number::from_json_text(&text[start..end]))),
    }
}

/// Whether values of rule `id` are judged whole when they close: an allowed
/// value (`enum`) or a map whose values are checked then.
fn whole_rule(contract: &Contract, id: RuleId) -> bool {
    let spec = &contract.rule(id).spec;
    spec.one_of.is_some() || spec.values.is_some()
}

/// Whether an array of this shape takes no item twice.
fn unique(contract: &Contract, shape: Shape) -> bool {
    matches!(shape, Shape::Field(id) if contract.rule(id).spec.unique_items)
}

/// Whether an object of this shape takes no members but those it lists.
fn closed(contract: &Contract, shape: Shape) -> bool {
    match shape {
        Shape::Top => !contract.additional_fields,
        Shape::Field(id) => contract.rule(id).spec.additional_fields == Some(false),
        Shape::Free => false,
    }
}

/// The common fields and variants of an object of this shape, and its kind member.
fn members(contract: &Contract, shape: Shape) -> Option<(&[FieldRule], &[Variant], &str)> {
    match shape {
        Shape::Top => Some((&contract.fields, &contract.variants, &contract.kind_field)),
        Shape::Field(id) => {
            let field = contract.rule(id);
            Some((&field.children, &field.variants, &field.kind_field))
        }
        Shape::Free => None,
    }
}

/// The member that holds an object's kind: the contract's kind field when it
/// has `may_emit` or variants, a field's when it has variants.
fn kind_field(contract: &Contract, shape: Shape) -> Option<&str> {
    match shape {
        Shape::Top if contract.may_emit.is_some() || !contract.variants.is_empty() => {
            Some(&contract.kind_field)
        }
        Shape::Field(id) => {
            let field = contract.rule(id);
            Some(field.kind_field.as_str()).filter(|_| !field.variants.is_empty())
        }
        _ => None,
    }
}

/// The rule of member `key` of `frame` that the variant its kind (already
/// read) selects, when that variant has one.
fn variant_rule(contract: &Contract, frame: &Frame, key: &str) -> Option<RuleId> {
    let (_, variants, _) = members(contract, frame.shape)?;
    let kind = frame.kind.as_deref()?;
    let v = variants.iter().position(|v| v.kind == kind)?;
    let i = variants[v].fields.iter().position(|f| f.name == key)?;
    Some(ids(contract, frame.shape).variants[v][i])
}

/// The rules of the members of an object of this shape, by number.
fn ids(contract: &Contract, shape: Shape) -> &Members {
    contract.member_ids(match shape {
        Shape::Field(id) => Some(id),
        Shape::Top | Shape::Free => None,
    })
}

/// Whether some variant of this shape has a member `key`.
fn in_some_variant(contract: &Contract, shape: Shape, key: &str) -> bool {
    members(contract, shape).is_some_and(|(_, variants, _)| {
        variants
            .iter()
            .any(|v| v.fields.iter().any(|f| f.name == key))
    })
}

/// Whether `key` may be a member of `frame`'s object: a common field, a field
/// of its kind's variant, or (kind not read yet, or not a variant) of any.
fn may_hold(contract: &Contract, frame: &Frame, key: &str) -> bool {
    let Some((common, variants, _)) = members(contract, frame.shape) else {
        return true;
    };
    if common.iter().any(|f| f.name == key) {
        return true;
    }
    let chosen = frame
        .kind
        .as_deref()
        .and_then(|kind| variants.iter().find(|v| v.kind == kind));
    match chosen {
        Some(variant) => variant.fields.iter().any(|f| f.name == key),
        None => in_some_variant(contract, frame.shape, key),
    }
}
