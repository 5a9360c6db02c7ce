//! Where a value is: the place validation descends through, written out as a
//! JSON pointer and as the name messages use, and the paths the streaming
//! scanner keeps.

use crate::json::escape_pointer;

/// Where a value is in the extracted JSON, built as validation descends and
/// written out only for an issue: its JSON pointer (`/citations/2/doc_id`)
/// and the name messages use (`citations[2].doc_id`).
#[derive(Clone, Copy)]
pub(super) enum Place<'a> {
    Root,
    Member(&'a Place<'a>, &'a str),
    Item(&'a Place<'a>, usize),
}

impl Place<'_> {
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        self.write_pointer(&mut out);
        out
    }

    pub(super) fn write_pointer(&self, out: &mut String) {
        match self {
            Place::Root => {}
            Place::Member(parent, key) => {
                parent.write_pointer(out);
                out.push('/');
                out.push_str(&escape_pointer(key));
            }
            Place::Item(parent, index) => {
                parent.write_pointer(out);
                out.push('/');
                out.push_str(&index.to_string());
            }
        }
    }

    pub(super) fn label(&self) -> String {
        let mut out = String::new();
        self.write_label(&mut out);
        out
    }

    pub(super) fn write_label(&self, out: &mut String) {
        match self {
            Place::Root => {}
            Place::Member(parent, key) => {
                parent.write_label(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Place::Item(parent, index) => {
                parent.write_label(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
}

pub use crate::json::Seg;

/// The last step of a path, kept apart from the path (so that a reader need
/// not copy a key into it to check the key's value): a member, by its key, or
/// an item, by its index.
#[derive(Debug, Clone, Copy)]
pub enum Last<'a> {
    Member(&'a str),
    Item(usize),
}

/// Calls `then` with the [`Place`] of `path`, then `last` when given.
pub(super) fn with_place<R>(
    path: &[Seg],
    last: Option<Last<'_>>,
    then: &mut dyn FnMut(Place<'_>) -> R,
) -> R {
    fn go<R>(
        place: Place<'_>,
        rest: &[Seg],
        last: Option<Last<'_>>,
        then: &mut dyn FnMut(Place<'_>) -> R,
    ) -> R {
        match (rest.split_first(), last) {
            (None, None) => then(place),
            (None, Some(Last::Member(key))) => then(Place::Member(&place, key)),
            (None, Some(Last::Item(index))) => then(Place::Item(&place, index)),
            (Some((Seg::Member(key), tail)), _) => go(Place::Member(&place, key), tail, last, then),
            (Some((Seg::Item(index), tail)), _) => {
                go(Place::Item(&place, *index), tail, last, then)
            }
        }
    }
    go(Place::Root, path, last, then)
}

/// The JSON pointer of `path` (`/citations/2/doc_id`), as issues give it.
pub fn pointer_of(path: &[Seg]) -> String {
    with_place(path, None, &mut |place| place.pointer())
}
