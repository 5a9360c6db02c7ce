//! Text that arrives as bytes in chunks (standard input, an HTTP body).

/// Decodes UTF-8 that arrives in chunks: a character cut between two chunks
/// waits for its other bytes, and a byte-order mark at the very start (the
/// file's or the body's encoding, not the text) is left out.
#[derive(Debug, Default)]
pub struct Utf8Chunks {
    /// The start of a character cut by the last chunk (at most 3 bytes).
    pending: Vec<u8>,
    /// `pending` and the next chunk, when there was a cut.
    joined: Vec<u8>,
    /// Bytes taken so far.
    read: usize,
    /// Whether any text came out yet (a byte-order mark after it is text).
    started: bool,
}

impl Utf8Chunks {
    /// The text `bytes` complete (maybe empty: a character not finished yet).
    /// `Err(at)`: the text is not UTF-8, the byte offset (0-based, in
    /// everything pushed) of the first byte that is not.
    pub fn push<'a>(&'a mut self, bytes: &'a [u8]) -> Result<&'a str, usize> {
        let base = self.read - self.pending.len();
        self.read += bytes.len();
        let whole: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            self.joined.clear();
            self.joined.append(&mut self.pending);
            self.joined.extend_from_slice(bytes);
            &self.joined
        };
        let valid = match std::str::from_utf8(whole) {
            Ok(_) => whole.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(err) => return Err(base + err.valid_up_to()),
        };
        self.pending.extend_from_slice(&whole[valid..]);
        // Valid up to `valid`, checked above.
        let mut text = std::str::from_utf8(&whole[..valid]).unwrap_or_default();
        if !self.started && !text.is_empty() {
            self.started = true;
            text = text.strip_prefix('\u{feff}').unwrap_or(text);
        }
        Ok(text)
    }

    /// `Err(at)` when the bytes ended inside a character (the offset of its
    /// first byte).
    pub fn finish(&self) -> Result<(), usize> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(self.read - self.pending.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split of a text into chunks gives the text back, a leading
    /// byte-order mark left out; a bad byte is found where it is.
    #[test]
    fn every_chunking_gives_the_text_back() {
        let text = "\u{feff}é😀 a\u{feff}ü";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            for second in cut..=bytes.len() {
                let mut chunks = Utf8Chunks::default();
                let mut out = String::new();
                for part in [&bytes[..cut], &bytes[cut..second], &bytes[second..]] {
                    out.push_str(chunks.push(part).unwrap());
                }
                assert_eq!(out, &text[3..], "cut at {cut}, {second}");
                assert_eq!(chunks.finish(), Ok(()));
            }
        }
        let mut chunks = Utf8Chunks::default();
        assert_eq!(chunks.push(b"ab\xc3"), Ok("ab"));
        assert_eq!(chunks.push(b"\xa9c"), Ok("\u{e9}c"));
        assert_eq!(chunks.push(b"d\xff"), Err(6));
        let mut cut = Utf8Chunks::default();
        assert_eq!(cut.push(b"abc\xf0\x9f"), Ok("abc"));
        assert_eq!(cut.finish(), Err(3));
        let mut bad_join = Utf8Chunks::default();
        assert_eq!(bad_join.push(b"a\xc3"), Ok("a"));
        assert_eq!(bad_join.push(b"x"), Err(1));
    }
}
