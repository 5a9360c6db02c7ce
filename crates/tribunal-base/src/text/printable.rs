//! Text safe to show: clipped by characters, and with whatever a terminal would
//! act on (control characters, bidirectional overrides) escaped.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The first `max` characters of `s` (not bytes: never splits a character).
pub fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// `s` cut to at most `max` characters, with `…` after a cut (borrowed, not
/// copied, when it is short enough).
pub fn clip_chars(s: &str, max: usize) -> Cow<'_, str> {
    let prefix = prefix_chars(s, max);
    if prefix.len() == s.len() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("{prefix}…"))
    }
}

/// Text safe to show on a terminal: control characters (C0 but newline and tab,
/// DEL, C1) and bidirectional overrides are written as escapes (`\u{1b}`), so
/// a model's output or a pack's name cannot move the cursor, clear the screen,
/// set the window title or reorder what is shown.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, true)
}

/// [`printable`] that also escapes newlines and tabs: for a value shown inside
/// one line of a report (an issue's message, a path, a name).
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, false)
}

/// Appends `c`, escaped when a terminal would act on it.
pub fn push_printable(out: &mut String, c: char, keep_lines: bool) {
    if is_unsafe(c, keep_lines) {
        let _ = write!(out, "{}", c.escape_default());
    } else {
        out.push(c);
    }
}

fn is_unsafe(c: char, keep_lines: bool) -> bool {
    if keep_lines && matches!(c, '\n' | '\t') {
        return false;
    }
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_unsafe(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push_printable(&mut out, c, keep_lines);
    }
    Cow::Owned(out)
}
