//! The JSON that crosses the boundary between the engine and a plugin, read the
//! same way on both sides: the SDK reads requests with [`from_slice_deep`] and the
//! engine reads replies with it, so one depth rule holds both ways. The types that
//! cross it ([`Kind`](crate::Kind), [`Severity`](crate::Severity),
//! [`ABI_VERSION`](crate::ABI_VERSION)) are this crate's, and the engine uses them
//! as they are.

/// The deepest nesting of arrays and objects accepted across the boundary, both
/// ways. The engine extracts JSON up to `serde_json`'s own limit (128 levels) and
/// wraps it in `{"context": {"json": ...}}` (a reply in `{"ok": {"details": ...}}`),
/// which that limit would refuse.
pub const MAX_DEPTH: usize = 256;

/// Why [`from_slice_deep`] read nothing.
#[derive(Debug)]
#[non_exhaustive]
pub enum WireError {
    /// Arrays and objects nested deeper than [`MAX_DEPTH`]: how deep.
    TooDeep(usize),
    /// Not the JSON of a `T` (`serde_json`'s error, with line and column).
    Json(serde_json::Error),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooDeep(depth) => write!(f, "nested {depth} levels deep, more than {MAX_DEPTH}"),
            Self::Json(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for WireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::TooDeep(_) => None,
            Self::Json(err) => Some(err),
        }
    }
}

/// `serde_json::from_slice`, allowing nesting up to [`MAX_DEPTH`] levels.
///
/// ```
/// let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
/// assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
/// let value: serde_json::Value = tribunal_plugin::wire::from_slice_deep(deep.as_bytes()).unwrap();
/// assert!(value.is_array());
/// let deeper = format!("{}{}", "[".repeat(300), "]".repeat(300));
/// let err = tribunal_plugin::wire::from_slice_deep::<serde_json::Value>(deeper.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "nested 300 levels deep, more than 256");
/// ```
pub fn from_slice_deep<T: serde::de::DeserializeOwned>(input: &[u8]) -> Result<T, WireError> {
    // The depth is measured first, not read off serde_json's error message:
    // deeper than the limit is refused, anything else is read with serde_json's
    // own recursion limit lifted, which the check keeps bounded.
    let depth = nesting_depth(input);
    if depth > MAX_DEPTH {
        return Err(WireError::TooDeep(depth));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(input);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer).map_err(WireError::Json)?;
    deserializer.end().map_err(WireError::Json)?;
    Ok(value)
}

/// The deepest nesting of `[` and `{` in a JSON text, outside strings.
fn nesting_depth(input: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in input {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}
