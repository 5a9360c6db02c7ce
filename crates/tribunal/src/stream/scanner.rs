//! The incremental scanner of a streaming session: where the document starts
//! (the ladder's view: leading whitespace then JSON, or prose then a JSON-like
//! fence), then the document token by token, with the contract's checks run
//! on each value as it completes. Each byte is looked at once, so a chunk
//! costs work proportional to its length; a container is parsed again (for
//! its own checks) only when the contract has a rule for it.

use crate::codes;
use crate::contract::{Contract, FieldRule, Seg, Variant, RAW_FALLBACK_KEY};
use crate::extract::{fence::is_json_info, Tier};
use crate::json::Json;
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
    /// Nothing more to learn early: the document ended, or the text is not
    /// one this scanner can be certain about (`finish()` decides).
    Done,
}

/// A container being read.
#[derive(Debug)]
struct Frame<'p> {
    object: bool,
    start: usize,
    /// The rules of its members or items.
    shape: Shape<'p>,
    /// Its own rule, checked when it closes.
    own: Own<'p>,
    state: State,
    /// The member being read (objects).
    key: Option<String>,
    /// The value of its kind member, once read (objects with variants).
    kind: Option<String>,
    /// Items read (arrays).
    count: usize,
    /// Items read, for `unique_items`.
    items: Vec<Json>,
    /// Where the current member's or item's value starts.
    value_start: usize,
    /// From here on, its bytes may still be flagged when it closes.
    hold: Option<usize>,
}

#[derive(Debug, Clone, Copy)]
enum Shape<'p> {
    /// The top-level object of a pack with a contract.
    Top(&'p Contract),
    /// A value with a field rule: its members (`fields`, `variants`) or items.
    Field(&'p FieldRule),
    /// Nothing to check inside.
    Free,
}

#[derive(Debug, Clone, Copy)]
enum Own<'p> {
    Top(&'p Contract),
    Field(&'p FieldRule),
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
    /// A string (a key when `key`).
    Str {
        start: usize,
        escape: bool,
        key: bool,
    },
    /// A number, `true`, `false` or `null`.
    Bare { start: usize },
}

/// An issue the text made certain, and the bytes that did: `start..end`.
pub(super) type Found = (Issue, usize, usize);

#[derive(Debug)]
pub(super) struct Scanner<'p> {
    contract: Option<&'p Contract>,
    /// Whether the ladder reads a document at the start of the text.
    doc_at_start: bool,
    /// Whether the ladder reads fences.
    fences: bool,
    mode: Mode,
    stack: Vec<Frame<'p>>,
    /// Path of the innermost open container.
    path: Vec<Seg>,
    token: Option<Token>,
}

impl<'p> Scanner<'p> {
    pub(super) fn new(contract: Option<&'p Contract>, ladder: &[Tier]) -> Self {
        let has = |tier| ladder.contains(&tier);
        Self {
            contract,
            doc_at_start: has(Tier::Strict) || has(Tier::Embedded) || has(Tier::Repair),
            fences: has(Tier::Fence),
            // Without a contract there is nothing to check early.
            mode: if contract.is_some() {
                Mode::Start
            } else {
                Mode::Done
            },
            stack: Vec::new(),
            path: Vec::new(),
            token: None,
        }
    }

    /// Reads `text[from..]` (the new chunk) and returns the issues it made
    /// certain, each with the offset just past the token that did.
    pub(super) fn scan(&mut self, text: &str, from: usize) -> Vec<Found> {
        let mut found = Vec::new();
        let bytes = text.as_bytes();
        let mut at = from;
        while at < bytes.len() && self.mode != Mode::Done {
            if self.mode == Mode::Doc {
                // Runs of plain string content are skipped in one step.
                if let Some(Token::Str { escape: false, .. }) = self.token {
                    let rest = &bytes[at..];
                    let skip = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                    at += skip;
                    if at == bytes.len() {
                        break;
                    }
                }
                self.doc_byte(text, at, &mut found);
            } else {
                self.outside_byte(text, at);
            }
            at += 1;
        }
        found
    }

    /// How far the text is safe to pass on: up to the first byte that a later
    /// chunk may still flag.
    pub(super) fn safe_until(&self, len: usize) -> usize {
        if self.mode != Mode::Doc {
            return len;
        }
        let mut safe = len;
        for frame in &self.stack {
            if let Some(hold) = frame.hold {
                safe = safe.min(hold);
            }
        }
        if let Some(token) = self.token {
            let (start, key) = match token {
                Token::Str { start, key, .. } => (start, key),
                Token::Bare { start } => (start, false),
            };
            let flaggable = if key {
                self.stack.last().is_some_and(|f| closed(f.shape))
            } else {
                self.value_rule().is_some()
            };
            if flaggable {
                safe = safe.min(start);
            }
        }
        safe
    }

    /// Before the document: whitespace, prose and fences.
    fn outside_byte(&mut self, text: &str, at: usize) {
        let b = text.as_bytes()[at];
        match self.mode {
            Mode::Start => {
                if b.is_ascii_whitespace() {
                    return;
                }
                if (b == b'{' || b == b'[') && self.doc_at_start {
                    self.mode = Mode::Doc;
                    self.open(at, b == b'{', &mut Vec::new());
                } else {
                    self.mode = Mode::Prose {
                        run: 0,
                        ch: 0,
                        line_start: true,
                    };
                    self.outside_byte(text, at);
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
                    self.outside_byte(text, at);
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
                    self.open(at, b == b'{', &mut Vec::new());
                } else {
                    self.mode = Mode::Done;
                }
            }
            Mode::Doc | Mode::Done => {}
        }
    }

    /// One byte of the document.
    fn doc_byte(&mut self, text: &str, at: usize, found: &mut Vec<Found>) {
        let b = text.as_bytes()[at];
        match self.token {
            Some(Token::Str { start, escape, key }) => {
                if escape {
                    self.token = Some(Token::Str {
                        start,
                        escape: false,
                        key,
                    });
                } else if b == b'\\' {
                    self.token = Some(Token::Str {
                        start,
                        escape: true,
                        key,
                    });
                } else if b == b'"' {
                    self.token = None;
                    if key {
                        self.key_done(text, start, at + 1, found);
                    } else {
                        self.scalar_done(text, start, at + 1, found);
                    }
                }
                return;
            }
            Some(Token::Bare { start }) => {
                if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.') {
                    return;
                }
                self.token = None;
                self.scalar_done(text, start, at, found);
                if self.mode != Mode::Doc {
                    return;
                }
            }
            None => {}
        }
        if b.is_ascii_whitespace() {
            return;
        }
        let Some(frame) = self.stack.last_mut() else {
            self.mode = Mode::Done;
            return;
        };
        match (frame.state, b) {
            (State::ObjectFirst | State::ObjectKey, b'"') => {
                self.token = Some(Token::Str {
                    start: at,
                    escape: false,
                    key: true,
                });
            }
            (State::Colon, b':') => frame.state = State::Value { first: false },
            (State::Value { .. }, b'{' | b'[') => {
                frame.value_start = at;
                self.note_value_start(at);
                self.open(at, b == b'{', found);
            }
            (State::Value { .. }, b'"') => {
                frame.value_start = at;
                self.note_value_start(at);
                self.token = Some(Token::Str {
                    start: at,
                    escape: false,
                    key: false,
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
                self.close(text, at, found);
            }
            (State::Value { first: true } | State::Comma, b']') if !frame.object => {
                self.close(text, at, found);
            }
            // Not JSON the strict reader takes (a trailing comma, a quote
            // of the wrong kind): the repair tier may read it otherwise.
            _ => self.mode = Mode::Done,
        }
    }

    /// The rule of the value being read in the innermost container.
    fn value_rule(&self) -> Option<&'p FieldRule> {
        let frame = self.stack.last()?;
        if frame.object {
            member_rule(frame, frame.key.as_deref()?)
        } else {
            match frame.shape {
                Shape::Field(rule) => rule.item.as_deref(),
                Shape::Top(_) | Shape::Free => None,
            }
        }
    }

    /// A member or item starts at `at`: when its rule depends on a kind not
    /// read yet, or it is an item that may repeat an earlier one, its
    /// container holds the release from here until it closes.
    fn note_value_start(&mut self, at: usize) {
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        let uncertain = frame.object
            && frame.kind.is_none()
            && frame.key.as_deref().is_some_and(|key| {
                member_rule(frame, key).is_none() && in_some_variant(frame.shape, key)
            });
        let repeatable =
            !frame.object && matches!(frame.shape, Shape::Field(r) if r.spec.unique_items);
        if uncertain || repeatable {
            frame.hold = Some(frame.hold.map_or(at, |h| h.min(at)));
        }
    }

    /// A container opens at `at`.
    fn open(&mut self, at: usize, object: bool, found: &mut Vec<Found>) {
        let (shape, own) = match self.stack.last() {
            // The document itself.
            None => match self.contract {
                Some(contract) if object => (Shape::Top(contract), Own::Top(contract)),
                // The contract wants an object: an array is judged at its end.
                Some(contract) => (Shape::Free, Own::Top(contract)),
                None => (Shape::Free, Own::None),
            },
            Some(_) => match self.value_rule() {
                None => (Shape::Free, Own::None),
                Some(rule) => {
                    let path = self.child_path();
                    match self
                        .contract
                        .and_then(|c| c.container_type_at(rule, object, &path))
                    {
                        Some(issue) => {
                            found.push((issue, at, at + 1));
                            (Shape::Free, Own::Field(rule))
                        }
                        None => (Shape::Field(rule), Own::Field(rule)),
                    }
                }
            },
        };
        // A whole value that may still be flagged when it closes: an allowed
        // value (`enum`) or a map whose values are checked then.
        let hold = match own {
            Own::Field(rule) if rule.spec.one_of.is_some() || rule.spec.values.is_some() => {
                Some(at)
            }
            Own::Top(_) if !object => Some(at),
            _ => None,
        };
        if let Some(parent) = self.stack.last() {
            let seg = self.child_seg(parent);
            self.path.push(seg);
        }
        self.stack.push(Frame {
            object,
            start: at,
            shape,
            own,
            state: if object {
                State::ObjectFirst
            } else {
                State::Value { first: true }
            },
            key: None,
            kind: None,
            count: 0,
            items: Vec::new(),
            value_start: at,
            hold,
        });
    }

    /// The path segment of the value being read in `parent`.
    fn child_seg(&self, parent: &Frame<'_>) -> Seg {
        if parent.object {
            Seg::Member(parent.key.clone().unwrap_or_default())
        } else {
            Seg::Item(parent.count)
        }
    }

    /// The path of the value being read in the innermost container.
    fn child_path(&self) -> Vec<Seg> {
        let mut path = self.path.clone();
        if let Some(parent) = self.stack.last() {
            path.push(self.child_seg(parent));
        }
        path
    }

    /// A key is complete (`text[start..end]`): an unknown member of an object
    /// that takes no other members is reported now.
    fn key_done(&mut self, text: &str, start: usize, end: usize, found: &mut Vec<Found>) {
        let Ok(key) = serde_json::from_str::<String>(&text[start..end]) else {
            self.mode = Mode::Done;
            return;
        };
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        frame.state = State::Colon;
        let unexpected = closed(frame.shape) && key != RAW_FALLBACK_KEY && !may_hold(frame, &key);
        // A member only some variants have, before the kind is read: judged
        // when the object closes, so held from its key.
        if closed(frame.shape)
            && frame.kind.is_none()
            && member_rule(frame, &key).is_none()
            && !unexpected
        {
            frame.hold = Some(frame.hold.map_or(start, |h| h.min(start)));
        }
        frame.key = Some(key);
        if unexpected {
            if let (Some(contract), Some(key)) = (self.contract, &frame.key) {
                found.push((contract.unexpected_member_at(key, &self.path), start, end));
            }
        }
    }

    /// A string, number, `true`, `false` or `null` is complete.
    fn scalar_done(&mut self, text: &str, start: usize, end: usize, found: &mut Vec<Found>) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text[start..end]) else {
            self.mode = Mode::Done;
            return;
        };
        let value = Json::from(value);
        if let (Some(rule), Some(contract)) = (self.value_rule(), self.contract) {
            let path = self.child_path();
            for issue in contract.check_value_at(rule, &value, &path) {
                found.push((issue, start, end));
            }
        }
        self.value_done(value, start, end, found);
    }

    /// A member's or item's value is complete: its container notes it (the
    /// kind, an item that repeats an earlier one).
    fn value_done(&mut self, value: Json, start: usize, end: usize, found: &mut Vec<Found>) {
        let contract = self.contract;
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        frame.state = State::Comma;
        if frame.object {
            let is_kind = frame
                .key
                .as_deref()
                .is_some_and(|k| Some(k) == kind_field(frame.shape));
            if let (true, Json::String(kind)) = (is_kind, &value) {
                frame.kind = Some(kind.to_string());
                if let Shape::Top(contract) = frame.shape {
                    for issue in contract.kind_issues(kind) {
                        found.push((issue, start, end));
                    }
                }
            }
            return;
        }
        if let (Shape::Field(rule), Some(contract)) = (frame.shape, contract) {
            if rule.spec.unique_items {
                frame.items.push(value);
                let so_far = Json::Array(frame.items.clone());
                let mut item = self.path.clone();
                item.push(Seg::Item(frame.count));
                let item = pointer_of(&item);
                for issue in contract.check_value_at(rule, &so_far, &self.path) {
                    let this_item = issue.code == codes::CONTRACT_UNIQUE_ITEMS
                        && issue.path.as_deref() == Some(item.as_str());
                    if this_item {
                        found.push((issue, frame.value_start, end));
                    }
                }
            }
        }
        frame.count += 1;
    }

    /// The innermost container closes at `at`: its own checks, then it is a
    /// completed value of its parent.
    fn close(&mut self, text: &str, at: usize, found: &mut Vec<Found>) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let end = at + 1;
        let span = &text[frame.start..end];
        let parent_unique = self.stack.last().is_some_and(|p| {
            !p.object && matches!(p.shape, Shape::Field(r) if r.spec.unique_items)
        });
        let needs_value = !matches!(frame.own, Own::None) || parent_unique;
        let value = if needs_value {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(span) else {
                self.mode = Mode::Done;
                return;
            };
            Some(Json::from(value))
        } else {
            None
        };
        if let (Some(contract), Some(value)) = (self.contract, &value) {
            let issues = match frame.own {
                Own::Top(contract) => contract.validate(value, span).0,
                Own::Field(rule) => contract.check_value_at(rule, value, &self.path),
                Own::None => Vec::new(),
            };
            // Flagged from the first byte the container held back, else its
            // closing bracket.
            let from = frame.hold.unwrap_or(at);
            found.extend(issues.into_iter().map(|issue| (issue, from, end)));
        }
        if self.stack.is_empty() {
            // The document is complete: what follows is not checked early.
            self.mode = Mode::Done;
            return;
        }
        self.path.pop();
        self.value_done(value.unwrap_or(Json::Null), frame.start, end, found);
    }
}

/// Whether an object of this shape takes no members but those it lists.
fn closed(shape: Shape<'_>) -> bool {
    match shape {
        Shape::Top(contract) => !contract.additional_fields,
        Shape::Field(rule) => rule.spec.additional_fields == Some(false),
        Shape::Free => false,
    }
}

/// The common fields and variants of an object of this shape, and its kind member.
fn members(shape: Shape<'_>) -> Option<(&[FieldRule], &[Variant], &str)> {
    match shape {
        Shape::Top(contract) => Some((&contract.fields, &contract.variants, &contract.kind_field)),
        Shape::Field(rule) => Some((&rule.children, &rule.variants, &rule.kind_field)),
        Shape::Free => None,
    }
}

/// The member that holds an object's kind: the contract's kind field when it
/// has `may_emit` or variants, a field's when it has variants.
fn kind_field(shape: Shape<'_>) -> Option<&str> {
    match shape {
        Shape::Top(contract) if contract.may_emit.is_some() || !contract.variants.is_empty() => {
            Some(&contract.kind_field)
        }
        Shape::Field(rule) if !rule.variants.is_empty() => Some(&rule.kind_field),
        _ => None,
    }
}

/// The rule of member `key` in `frame`, when it is certain: a common field,
/// or a field of the variant its kind (already read) selects.
fn member_rule<'p>(frame: &Frame<'p>, key: &str) -> Option<&'p FieldRule> {
    let (common, variants, _) = members(frame.shape)?;
    if let Some(rule) = common.iter().find(|f| f.name == key) {
        return Some(rule);
    }
    let kind = frame.kind.as_deref()?;
    variants
        .iter()
        .find(|v| v.kind == kind)?
        .fields
        .iter()
        .find(|f| f.name == key)
}

/// Whether some variant of this shape has a member `key`.
fn in_some_variant(shape: Shape<'_>, key: &str) -> bool {
    members(shape).is_some_and(|(_, variants, _)| {
        variants
            .iter()
            .any(|v| v.fields.iter().any(|f| f.name == key))
    })
}

/// Whether `key` may be a member of `frame`'s object: a common field, a field
/// of its kind's variant, or (kind not read yet, or not a variant) of any.
fn may_hold(frame: &Frame<'_>, key: &str) -> bool {
    let Some((common, variants, _)) = members(frame.shape) else {
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
        None => in_some_variant(frame.shape, key),
    }
}

/// The JSON pointer of a path.
fn pointer_of(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        out.push('/');
        match seg {
            Seg::Item(index) => out.push_str(&index.to_string()),
            Seg::Member(key) => out.push_str(&crate::json::escape_pointer(key)),
        }
    }
    out
}
