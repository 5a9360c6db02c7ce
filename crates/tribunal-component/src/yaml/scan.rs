//! A bounded first pass over a YAML text, before it is deserialised.
//!
//! YAML aliases let a 15 KB file stand for millions of nodes ("billion laughs"),
//! and deserialising loads every node. This pass reads the text as a stream of
//! events with the same parser `serde_yaml` uses (libyaml, so the two agree on
//! every document and every position), keeps only the size of each anchored node
//! and the keys of the maps still open, and stops at the first node past
//! [`MAX_YAML_NODES`] (aliases counted at their expanded size) or at the first
//! key written twice in one map. A syntax error ends the pass quietly: the
//! deserialiser then reports it, before it expands anything.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::mem::MaybeUninit;

/// The most nodes (scalars, lists and maps, each alias counted as the nodes it
/// stands for) one YAML text may expand to: a pack file, a test file, a schema or
/// a `--set` value.
pub const MAX_YAML_NODES: u64 = 1_000_000;

/// What the pass found wrong, at a 1-based line and column of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// The document expands to more than [`MAX_YAML_NODES`] nodes.
    TooManyNodes { line: usize, column: usize },
    /// A map has the same key twice; `first_line` is where it was first written.
    DuplicateKey {
        key: String,
        line: usize,
        column: usize,
        first_line: usize,
    },
    /// A plain `.nan`, `.inf` or `-.inf`: a float JSON cannot hold (`serde_json`
    /// would turn it into `null`, and a config key into its default).
    NotFinite {
        text: String,
        line: usize,
        column: usize,
    },
    /// A plain value YAML reads as a 64-bit float whose value is not the one
    /// written (`1.0000000000000000000001` reads as `1`, an integer past
    /// 2^128 loses its last digits): `read_as` is the float's text.
    Rounded {
        text: String,
        read_as: String,
        line: usize,
        column: usize,
    },
}

/// Reads `text` as YAML events and checks its expanded size and its maps' keys.
pub fn scan(text: &str) -> Result<(), ScanError> {
    scan_with_limit(text, MAX_YAML_NODES)
}

fn scan_with_limit(text: &str, limit: u64) -> Result<(), ScanError> {
    let mut parser = Parser::new(text);
    let mut state = State::default();
    while let Some(event) = parser.next() {
        if state.event(event, limit)? {
            break;
        }
    }
    Ok(())
}

/// One event, copied out of libyaml's structure.
enum Event {
    /// A scalar, with its anchor, its value and whether it is plain (unquoted).
    Scalar(Option<Vec<u8>>, Vec<u8>, bool),
    Alias(Vec<u8>),
    /// The start of a list or a map (true), with its anchor.
    Start(Option<Vec<u8>>, bool),
    End,
    StreamEnd,
    Other,
}

/// An event and the 0-based line and column where it starts.
struct Located {
    event: Event,
    line: usize,
    column: usize,
}

/// A list or map still open.
struct Frame {
    anchor: Option<Vec<u8>>,
    /// The node count when it started (its size is the count at its end minus this).
    started_at: u64,
    /// For a map: its keys so far (with the line of each) and whether the next
    /// node is a key. `None` for a list.
    map: Option<MapKeys>,
}

#[derive(Default)]
struct MapKeys {
    seen: HashMap<Vec<u8>, usize>,
    next_is_key: bool,
}

#[derive(Default)]
struct State {
    nodes: u64,
    /// The expanded size of each anchored node seen so far.
    anchors: HashMap<Vec<u8>, u64>,
    open: Vec<Frame>,
}

impl State {
    /// Takes one event; `Ok(true)` once the stream has ended.
    fn event(&mut self, located: Located, limit: u64) -> Result<bool, ScanError> {
        let Located {
            event,
            line,
            column,
        } = located;
        let too_many = || ScanError::TooManyNodes {
            line: line + 1,
            column: column + 1,
        };
        match event {
            Event::Scalar(anchor, value, plain) => {
                if plain && is_not_finite(&value) {
                    return Err(ScanError::NotFinite {
                        text: String::from_utf8_lossy(&value).into_owned(),
                        line: line + 1,
                        column: column + 1,
                    });
                }
                let is_key = self.innermost_map_expecting_key().is_some();
                if plain && !is_key {
                    if let Some(read_as) = rounded(&value) {
                        return Err(ScanError::Rounded {
                            text: String::from_utf8_lossy(&value).into_owned(),
                            read_as,
                            line: line + 1,
                            column: column + 1,
                        });
                    }
                }
                self.check_key(&value, line, column)?;
                self.add(1, limit).map_err(|()| too_many())?;
                if let Some(anchor) = anchor {
                    self.anchors.insert(anchor, 1);
                }
                self.node_done();
            }
            Event::Alias(anchor) => {
                // An alias used as a key cannot be compared here; the
                // deserialiser still sees it.
                self.skip_key();
                let size = self.anchors.get(&anchor).copied().unwrap_or(1);
                self.add(size, limit).map_err(|()| too_many())?;
                self.node_done();
            }
            Event::Start(anchor, is_map) => {
                self.skip_key();
                self.add(1, limit).map_err(|()| too_many())?;
                self.open.push(Frame {
                    anchor,
                    started_at: self.nodes - 1,
                    map: is_map.then(|| MapKeys {
                        next_is_key: true,
                        ..MapKeys::default()
                    }),
                });
            }
            Event::End => {
                if let Some(frame) = self.open.pop() {
                    if let Some(anchor) = frame.anchor {
                        self.anchors.insert(anchor, self.nodes - frame.started_at);
                    }
                }
                self.node_done();
            }
            Event::StreamEnd => return Ok(true),
            Event::Other => {}
        }
        Ok(false)
    }

    fn add(&mut self, size: u64, limit: u64) -> Result<(), ()> {
        self.nodes = self.nodes.saturating_add(size);
        if self.nodes > limit {
            Err(())
        } else {
            Ok(())
        }
    }

    /// A scalar that is a key of the innermost map: an error if written before.
    fn check_key(&mut self, value: &[u8], line: usize, column: usize) -> Result<(), ScanError> {
        let Some(keys) = self.innermost_map_expecting_key() else {
            return Ok(());
        };
        if let Some(&first_line) = keys.seen.get(value) {
            return Err(ScanError::DuplicateKey {
                key: String::from_utf8_lossy(value).into_owned(),
                line: line + 1,
                column: column + 1,
                first_line: first_line + 1,
            });
        }
        keys.seen.insert(value.to_vec(), line);
        Ok(())
    }

    /// A key that is not a scalar: nothing to compare.
    fn skip_key(&mut self) {
        let _ = self.innermost_map_expecting_key();
    }

    fn innermost_map_expecting_key(&mut self) -> Option<&mut MapKeys> {
        let keys = self.open.last_mut()?.map.as_mut()?;
        keys.next_is_key.then_some(keys)
    }

    /// A node has ended: in a map, keys and values alternate.
    fn node_done(&mut self) {
        if let Some(keys) = self.open.last_mut().and_then(|frame| frame.map.as_mut()) {
            keys.next_is_key = !keys.next_is_key;
        }
    }
}

/// Whether a plain scalar is one YAML reads as a float that is not finite.
fn is_not_finite(value: &[u8]) -> bool {
    let unsigned = value
        .strip_prefix(b"+")
        .or_else(|| value.strip_prefix(b"-"))
        .unwrap_or(value);
    matches!(
        unsigned,
        b".inf" | b".Inf" | b".INF" | b".nan" | b".NaN" | b".NAN"
    )
}

/// The float a plain value is read as, when `serde_yaml` reads it as a 64-bit
/// float (not as null, a boolean or an integer it holds exactly, up to 128
/// bits) and that float is not the value written: its shortest text. Mirrors
/// `serde_yaml`'s resolution of plain scalars (0.9).
fn rounded(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?;
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    // Only decimal texts: `0x…`, `.inf`, words and the like are integers,
    // refused, or strings.
    if unsigned.is_empty()
        || !unsigned
            .bytes()
            .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
        || !unsigned.bytes().any(|b| b.is_ascii_digit())
    {
        return None;
    }
    // Leading zeros before digits only: YAML 1.2 makes that a string.
    if unsigned.len() > 1
        && unsigned.starts_with('0')
        && unsigned.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let integer = unsigned.bytes().all(|b| b.is_ascii_digit());
    let held = if text.starts_with('-') {
        text.parse::<i128>().is_ok()
    } else {
        unsigned.parse::<u128>().is_ok()
    };
    if integer && held {
        return None;
    }
    let float = text.strip_prefix('+').unwrap_or(text).parse::<f64>().ok()?;
    if !float.is_finite() {
        // A string to `serde_yaml` (`1e400`): a type error where a number is wanted.
        return None;
    }
    // As a JSON number, to compare exactly: `.5` → `0.5`, `5.` → `5.0`, no `+`.
    let sign = if text.starts_with('-') { "-" } else { "" };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => unsigned.split_at(at),
        None => (unsigned, ""),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = if int.is_empty() { "0" } else { int };
    let json = if mantissa.contains('.') {
        let frac = if frac.is_empty() { "0" } else { frac };
        format!("{sign}{int}.{frac}{exponent}")
    } else {
        format!("{sign}{int}{exponent}")
    };
    (crate::decimal::compare_f64(&json, float) != Some(std::cmp::Ordering::Equal))
        .then(|| format!("{float:?}"))
}

/// libyaml's parser over a borrowed text. Boxed: libyaml keeps pointers into
/// the structure, which must not move once initialised.
struct Parser<'text> {
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    _text: &'text str,
    /// Whether `yaml_parser_initialize` succeeded (then the parser is deleted on drop).
    initialised: bool,
    /// Set at a syntax error: no more events.
    failed: bool,
}

impl<'text> Parser<'text> {
    fn new(text: &'text str) -> Self {
        let mut sys = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        let raw = sys.as_mut_ptr();
        // SAFETY: `raw` points to writable, boxed (so never moved) memory, which
        // `yaml_parser_initialize` fully initialises before anything reads it. The
        // input pointer stays valid for `'text`, which outlives the parser.
        let initialised = unsafe {
            if unsafe_libyaml::yaml_parser_initialize(raw).ok {
                unsafe_libyaml::yaml_parser_set_encoding(raw, unsafe_libyaml::YAML_UTF8_ENCODING);
                unsafe_libyaml::yaml_parser_set_input_string(raw, text.as_ptr(), text.len() as u64);
                true
            } else {
                false
            }
        };
        Self {
            sys,
            _text: text,
            initialised,
            failed: !initialised,
        }
    }

    /// The next event, or `None` at a syntax error (or after one).
    fn next(&mut self) -> Option<Located> {
        if self.failed {
            return None;
        }
        let raw = self.sys.as_mut_ptr();
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new` (else `failed` is set) and is
        // used from this one place. A successful `yaml_parser_parse` initialises
        // `event`, which is read only then and deleted exactly once.
        unsafe {
            if unsafe_libyaml::yaml_parser_parse(raw, event.as_mut_ptr()).fail {
                self.failed = true;
                return None;
            }
            let event = event.as_mut_ptr();
            let located = Located {
                event: copy_event(&*event),
                line: (*event).start_mark.line as usize,
                column: (*event).start_mark.column as usize,
            };
            unsafe_libyaml::yaml_event_delete(event);
            Some(located)
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        if self.initialised {
            // SAFETY: the parser was initialised in `new`, and is deleted once.
            unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
        }
    }
}

/// Copies what the scan needs out of an event.
///
/// # Safety
/// `event` must be an event `yaml_parser_parse` produced and not yet deleted.
unsafe fn copy_event(event: &unsafe_libyaml::yaml_event_t) -> Event {
    // SAFETY (each union read): the field read is the one the event's type says
    // libyaml filled in.
    unsafe {
        match event.type_ {
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let scalar = &event.data.scalar;
                let value = if scalar.value.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(scalar.value, scalar.length as usize).to_vec()
                };
                let plain = scalar.style == unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE;
                Event::Scalar(c_bytes(scalar.anchor), value, plain)
            }
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                Event::Alias(c_bytes(event.data.alias.anchor).unwrap_or_default())
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                Event::Start(c_bytes(event.data.sequence_start.anchor), false)
            }
            unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                Event::Start(c_bytes(event.data.mapping_start.anchor), true)
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT | unsafe_libyaml::YAML_MAPPING_END_EVENT => {
                Event::End
            }
            unsafe_libyaml::YAML_STREAM_END_EVENT => Event::StreamEnd,
            _ => Event::Other,
        }
    }
}

/// The bytes of a NUL-terminated string libyaml owns, if any.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string.
unsafe fn c_bytes(ptr: *const u8) -> Option<Vec<u8>> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr.cast()) };
    Some(text.to_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn ordinary_documents_pass() {
        scan("name: a\nlist: [1, 2, {b: 3}]\nmap: {x: 1, y: 2}\n").unwrap();
        scan("a: &x [1, 2]\nb: *x\n").unwrap();
        scan("").unwrap();
        // The same key in different maps is fine.
        scan("- {a: 1}\n- {a: 2}\n").unwrap();
    }

    #[test]
    fn syntax_errors_are_left_to_the_deserialiser() {
        scan("a: [1, 2\n").unwrap();
        scan("a: *undefined\n").unwrap();
    }

    #[test]
    fn aliases_count_at_their_expanded_size() {
        // 1 map + 1 key + list (1 + 10) + key + alias (11) = 25 nodes.
        let text = "a: &l [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: *l\n";
        scan_with_limit(text, 25).unwrap();
        let err = scan_with_limit(text, 24).unwrap_err();
        assert_eq!(err, ScanError::TooManyNodes { line: 2, column: 4 });
    }

    #[test]
    fn a_billion_laughs_stops_early() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..40 {
            let prev = i - 1;
            let aliases = vec![format!("*a{prev}"); 10].join(", ");
            writeln!(text, "a{i}: &a{i} [{aliases}]").unwrap();
        }
        let err = scan(&text).unwrap_err();
        assert!(
            matches!(err, ScanError::TooManyNodes { line: 6, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_duplicate_key_is_found_at_its_line() {
        let text = "contract:\n  fields:\n    a: 1\n    b: 2\n    a: 3\n";
        assert_eq!(
            scan(text).unwrap_err(),
            ScanError::DuplicateKey {
                key: "a".into(),
                line: 5,
                column: 5,
                first_line: 3
            }
        );
        // Keys in flow style, and keys after a nested value.
        assert!(scan("{a: 1, a: 2}").is_err());
        assert!(scan("a: {x: 1}\nb: [1]\na: 2\n").is_err());
        // Values equal to keys are not keys.
        scan("a: a\nb: a\n").unwrap();
    }

    #[test]
    fn non_finite_floats_are_refused_unless_quoted() {
        for text in [".nan", ".NaN", ".inf", "-.inf", "+.INF"] {
            let err = scan(&format!("x: [1, {text}]")).unwrap_err();
            assert_eq!(
                err,
                ScanError::NotFinite {
                    text: text.into(),
                    line: 1,
                    column: 8
                }
            );
            scan(&format!("x: '{text}'")).unwrap();
        }
        scan("x: nan\ny: inf\nz: 1e400\n").unwrap();
    }

    #[test]
    fn numbers_a_float_would_change_are_refused_unless_quoted() {
        for (text, read_as) in [
            ("1.0000000000000000000001", "1.0"),
            ("0.30000000000000000001", "0.3"),
            ("-2.50000000000000000001", "-2.5"),
            ("+1.00000000000000000001e2", "100.0"),
            // Past 2^128: no longer an integer `serde_yaml` holds.
            (
                "1234567890123456789012345678901234567891",
                "1.2345678901234568e39",
            ),
            (
                "-1234567890123456789012345678901234567891",
                "-1.2345678901234568e39",
            ),
            ("1e-400", "0.0"),
        ] {
            let err = scan(&format!("x: [1, {text}]")).unwrap_err();
            assert_eq!(
                err,
                ScanError::Rounded {
                    text: text.into(),
                    read_as: read_as.into(),
                    line: 1,
                    column: 8
                },
                "{text}"
            );
            scan(&format!("x: '{text}'")).unwrap();
        }
        // What a float holds exactly (as its shortest text), integers up to
        // 128 bits, and what is not a decimal number, pass.
        for text in [
            "0.1",
            "1.10",
            "25",
            "25.0",
            "2.5e1",
            ".5",
            "5.",
            "-0",
            "1e308",
            "1e400",
            "0x1F",
            "007",
            "1.2.3",
            "e5",
            "123456789012345678901234567890",
            "-170141183460469231731687303715884105728",
            "0.8339285714285715",
            "1_000",
        ] {
            scan(&format!("x: {text}")).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        }
        // A key is a name, never read as a number.
        scan("1.0000000000000000000001: x\n").unwrap();
    }
}
