//! Python's formatting of values (`repr` of strings and lists, `json.dumps`,
//! float text), which the seeds' messages and feedback reproduce byte for byte,
//! and the lone surrogate escapes Python writes.

use std::fmt::Write as _;

use crate::json::Json;

/// Python's `str.isspace()`: Unicode `White_Space` and the information
/// separators U+001C–U+001F.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Writes Python's `repr()` of `s` to `out`, so feedback reads exactly like the
/// seeds' `f"Previous issues: {issues}"`: quoted with `'` (with `"` when
/// only `'` occurs), `\\`, `\n`, `\r`, `\t` and the quote escaped, and every
/// other character Python does not print (`str.isprintable()`: control and
/// format characters, separators but the space, private-use and unassigned code
/// points, by the `regex` crate's Unicode tables) as `\xhh`, `\uhhhh` or
/// `\Uhhhhhhhh`. Runs of printable text are copied whole.
fn write_python_repr_str(out: &mut String, s: &str) {
    let quote_byte = if s.contains('\'') && !s.contains('"') {
        b'"'
    } else {
        b'\''
    };
    let quote = char::from(quote_byte);
    out.push(quote);
    // Only ASCII controls, DEL, the backslash, the quote and characters outside
    // ASCII can need an escape.
    let bytes = s.as_bytes();
    let special = |b: &u8| *b < b' ' || *b >= 0x7f || *b == b'\\' || *b == quote_byte;
    let (mut run, mut at) = (0, 0);
    while let Some(offset) = bytes[at..].iter().position(special) {
        at += offset;
        let c = s[at..]
            .chars()
            .next()
            .expect("a special byte starts a character");
        let next = at + c.len_utf8();
        if c.is_ascii() || python_unprintable(c) {
            out.push_str(&s[run..at]);
            run = next;
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c => {
                    let code = u32::from(c);
                    let _ = match code {
                        0..=0xff => write!(out, "\\x{code:02x}"),
                        0x100..=0xffff => write!(out, "\\u{code:04x}"),
                        _ => write!(out, "\\U{code:08x}"),
                    };
                }
            }
        }
        at = next;
    }
    out.push_str(&s[run..]);
    out.push(quote);
}

/// A character outside ASCII that Python's `repr()` escapes.
fn python_unprintable(c: char) -> bool {
    static UNPRINTABLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$").expect("a valid class")
    });
    UNPRINTABLE.is_match(c.encode_utf8(&mut [0; 4]))
}

/// Writes Python's `repr()` of a list of strings to `out`.
pub fn write_python_repr_list<'a>(out: &mut String, items: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_python_repr_str(out, item);
    }
    out.push(']');
}

/// JSON text in Python's `json.dumps` default layout (`", "` and `": "`
/// separators, non-ASCII kept), as the seeds' prompts print it.
pub fn python_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_python_json(&Json::from(value), &mut out, PythonJson::default());
    out
}

/// How [`write_python_json`] lays out keys and numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct PythonJson {
    /// Keys in case-insensitive order (ties: as written) instead of as given.
    pub sort_keys: bool,
    /// Integral floats written as integers (`2.0` → `2`), so that numerically
    /// equal numbers have one spelling; a decimal a double cannot hold exactly
    /// in its exact canonical form ([`crate::decimal::canonical`]).
    pub canonical_numbers: bool,
}

/// Writes `value` in Python's `json.dumps` layout, styled by `style`.
pub fn write_python_json(value: &Json, out: &mut String, style: PythonJson) {
    match value {
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python_json(item, out, style);
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut entries: Vec<(&crate::json::Str, &Json)> = map.iter().collect();
            if style.sort_keys {
                entries.sort_by_cached_key(|(k, _)| (k.to_lowercase(), (*k).clone()));
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Json::String(key.clone()).to_string());
                out.push_str(": ");
                write_python_json(item, out, style);
            }
            out.push('}');
        }
        Json::Number(n) if style.canonical_numbers && n.is_f64() => match n.as_f64() {
            // A decimal a double does not hold exactly keeps its exact value
            // (`0.1000000000000000000001` is not `0.1`), in one spelling.
            Some(f)
                if crate::decimal::compare_f64(n.as_str(), f)
                    != Some(std::cmp::Ordering::Equal) =>
            {
                out.push_str(&crate::decimal::canonical(n.as_str()));
            }
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                let _ = write!(out, "{f:.0}");
            }
            _ => out.push_str(&python_number(n)),
        },
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Python's `str()` of a JSON number: integers as digits, floats as `repr(float)`
/// (`2.0`, `1e-05`, `1.5e+16`).
pub fn python_number(n: &crate::json::Number) -> String {
    if !n.is_f64() {
        // An integer (Python's `str(-0)` is `0`), or a number beyond a float.
        return if n.as_str() == "-0" {
            "0".to_owned()
        } else {
            n.to_string()
        };
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Shortest round-trip digits, then Python's layout: positional for exponents
    // in [-4, 16), scientific with a signed two-digit exponent otherwise.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let text = format!("{f}");
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// Rewrites each `\uD800`–`\uDFFF` escape of a JSON text that is not half of a
/// surrogate pair as `\uFFFD`; `None` when there is none. Python's `json.dumps`
/// writes such escapes for strings it cannot encode; JSON parsers that build
/// Unicode strings (`serde_json`) refuse them.
pub fn replace_lone_surrogates(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    let surrogate_at = |at: usize| -> Option<u32> {
        let hex = json.get(at + 2..at + 6)?;
        if bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        u32::from_str_radix(hex, 16)
            .ok()
            .filter(|code| (0xD800..=0xDFFF).contains(code))
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = bytes.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        at += offset;
        let Some(code) = surrogate_at(at) else {
            at += 2; // any other escape, `\\` included
            continue;
        };
        let paired = (0xD800..0xDC00).contains(&code)
            && bytes.get(at + 6) == Some(&b'\\')
            && surrogate_at(at + 6).is_some_and(|low| low >= 0xDC00);
        if paired {
            at += 12;
            continue;
        }
        let text = out.get_or_insert_with(|| String::with_capacity(json.len()));
        text.push_str(&json[copied..at]);
        text.push_str("\\ufffd");
        at += 6;
        copied = at;
    }
    let mut text = out?;
    text.push_str(&json[copied..]);
    Some(text)
}
