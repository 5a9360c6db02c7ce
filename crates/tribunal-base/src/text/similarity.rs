//! Edit distance and similarity ratios over Unicode text (FUZZY, the script
//! helpers); the `_until` forms stop when their caller's budget says so.

/// Levenshtein distance over Unicode scalar values, however long it takes
/// (work with a deadline calls [`levenshtein_until`]).
pub fn levenshtein(a: &[char], b: &[char]) -> usize {
    levenshtein_until(a, b, &mut |_| true).unwrap_or(usize::MAX)
}

/// Above this many cells (`len(a) · len(b)`) the distance is computed row by
/// row, asking the caller between rows whether to go on; below it, in one go
/// with the bit-parallel algorithm (64 cells a word operation: about a
/// millisecond at the bound).
const UNWATCHED_CELLS: usize = 1 << 26;

/// [`levenshtein`] that may give up: on inputs past [`UNWATCHED_CELLS`] it asks
/// `keep_going(cells)` after each row of the table (`cells`: the row's length)
/// and returns `None` when it says no (a script's deadline: the work is
/// quadratic, and scripts may pass megabytes).
pub fn levenshtein_until(
    a: &[char],
    b: &[char],
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<usize> {
    if a.len().saturating_mul(b.len()) <= UNWATCHED_CELLS {
        // Myers' / Hyyrö's bit-parallel algorithm, as maintained by rapidfuzz.
        let distance =
            rapidfuzz::distance::levenshtein::distance(a.iter().copied(), b.iter().copied());
        return keep_going(a.len().min(b.len())).then_some(distance);
    }
    levenshtein_rows(a, b, keep_going)
}

/// The textbook dynamic programme, one row at a time in O(min) memory, asking
/// `keep_going` after each row.
pub(super) fn levenshtein_rows(
    a: &[char],
    b: &[char],
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<usize> {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, lc) in long.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, sc) in short.iter().enumerate() {
            let above = row[j + 1];
            let cost = usize::from(lc != sc);
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
            diagonal = above;
        }
        if !keep_going(short.len()) {
            return None;
        }
    }
    Some(row[short.len()])
}

/// Normalised similarity `1 - distance / longer length` of the lower-cased strings
/// (1.0 for two empty strings), however long it takes (work with a deadline
/// calls [`similarity_until`]).
pub fn similarity(a: &str, b: &str) -> f64 {
    similarity_until(a, b, &mut |_| true).unwrap_or(0.0)
}

/// [`similarity`] that can give up, as [`levenshtein_until`].
pub fn similarity_until(
    a: &str,
    b: &str,
    keep_going: &mut dyn FnMut(usize) -> bool,
) -> Option<f64> {
    let a = lowered_chars(a);
    let b = lowered_chars(b);
    let longer = a.len().max(b.len());
    if longer == 0 {
        return Some(1.0);
    }
    let distance = levenshtein_until(&a, &b, keep_going)?;
    Some(1.0 - distance as f64 / longer as f64)
}

/// The text's characters, lower-cased as a whole, as Python's `str.lower()` (the
/// final sigma depends on its context), in a vector sized once.
pub(super) fn lowered_chars(text: &str) -> Vec<char> {
    if text.is_ascii() {
        return text
            .bytes()
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    let lower = text.to_lowercase();
    // At least as many bytes as characters: never grown.
    let mut chars = Vec::with_capacity(lower.len());
    chars.extend(lower.chars());
    chars
}
