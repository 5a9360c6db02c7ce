//! The scanner inside the document: containers opened and closed, keys,
//! scalars and strings completed and attached to what holds them, and each
//! container's own checks; and what the contract says of a container's shape.

use std::borrow::Cow;

use super::{Found, Frame, Mode, Own, Scanner, Shape, Span, State};
use crate::contract::{Contract, FieldRule, Last, Members, RuleId, Variant, RAW_FALLBACK_KEY};
use crate::json::{Json, Number, Str};
use crate::report::Issue;

impl Scanner {
    /// The innermost open container.
    pub(super) fn top(&self) -> Option<&Frame> {
        self.stack[..self.depth].last()
    }

    /// The rule of the value being read in the innermost container.
    pub(super) fn value_rule(&self) -> Option<RuleId> {
        self.top()?.member
    }

    /// A member or item starts at `at`: when its rule depends on a kind not
    /// read yet, or it is an item that may repeat an earlier one, its
    /// container holds the release from here until it closes.
    pub(super) fn note_value_start(&mut self, at: usize) {
        let Some(frame) = self.stack[..self.depth].last_mut() else {
            return;
        };
        if (frame.object && frame.waits) || frame.unique {
            frame.hold = Some(frame.hold.map_or(at, |h| h.min(at)));
        }
    }

    /// A container opens at `at`.
    pub(super) fn open(
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
    pub(super) fn key_done(
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
    pub(super) fn scalar_done(
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
                // (Most values have none: no drain to make and drop.)
                if !issues.is_empty() {
                    found.extend(issues.drain(..).map(|issue| (issue, start, end)));
                }
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
    pub(super) fn attach(&mut self, value: Json) {
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
    pub(super) fn string_done(
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
    pub(super) fn value_done(
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
    pub(super) fn close(
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
    pub(super) fn own_checks(&self, contract: &Contract, frame: &Frame, text: &str) -> Vec<Issue> {
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
#[allow(clippy::inline_always)]
#[inline(always)]
fn string_at(text: &str, (start, end, plain): Span) -> Option<Cow<'_, str>> {
    if plain {
        return Some(Cow::Borrowed(&text[start + 1..end - 1]));
    }
    escaped_string_at(text, start, end)
}

/// [`string_at`] of a string with an escape (or a control byte): read by the
/// JSON reader. (Apart, so that the usual string is a slice where it is
/// asked for, without a call.)
#[inline(never)]
fn escaped_string_at(text: &str, start: usize, end: usize) -> Option<Cow<'_, str>> {
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
        // (Read from the token's bytes alone: a number ends where they do.)
        _ => match Number::read_at(&text[..end], start) {
            Some((number, read)) if read == end => Some(Json::Number(number)),
            _ => None,
        },
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
