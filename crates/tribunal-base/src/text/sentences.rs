//! Counting sentences the way the seeds' Python does (the contract's
//! `sentences:`), with the abbreviations that do not end one.

/// Words that end in a period without ending a sentence (compared without the
/// period, ignoring case): titles, months, and the usual Latin and business
/// abbreviations. A pack adds its own with `contract.sentence_abbreviations`.
pub const SENTENCE_ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "gen", "col", "capt", "lt", "sgt",
    "rev", "hon", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "e.g", "i.e",
    "vs", "cf", "approx", "est", "dept", "inc", "ltd", "co", "corp", "no", "vol", "fig", "ca",
    "al",
];

/// Counts sentences: runs of text ended by `.`, `!` or `?` (repeats such as `...`
/// or `?!` end one sentence) followed by whitespace or the end of the text. Text
/// after the last terminator counts as a sentence too. A period does not end a
/// sentence after an abbreviation ([`SENTENCE_ABBREVIATIONS`]), an initial (one
/// capital letter: `J. R. R. Tolkien`, `U.S.`) or inside a number (`3.14`).
pub fn count_sentences(text: &str) -> usize {
    count_sentences_with(text, &[])
}

/// [`count_sentences`], with `abbreviations` (without their period) added to
/// the list.
pub fn count_sentences_with(text: &str, abbreviations: &[String]) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut in_sentence = false;
    // The word being read (since the last whitespace), for the abbreviation
    // check: where it starts, and whether a run of closing marks skipped after a
    // terminator lies inside it (then it is not its text as written; rare).
    let (mut word_start, mut skipped_inside) = (0, false);
    let mut at = 0;
    while at < bytes.len() {
        // Runs of ASCII that is neither a terminator nor whitespace (most of
        // a text: letters, digits, commas) only say a sentence is open: one
        // step each, without decoding characters.
        if PLAIN_ASCII[usize::from(bytes[at])] {
            in_sentence = true;
            at += 1;
            while at < bytes.len() && PLAIN_ASCII[usize::from(bytes[at])] {
                at += 1;
            }
            continue;
        }
        let c = char_at(text, at).unwrap_or_default();
        let mut next = at + c.len_utf8();
        if is_terminator(c) {
            let abbreviated = c == '.'
                && char_at(text, next) != Some('.')
                && if skipped_inside {
                    is_abbreviation(&word_as_read(&text[word_start..at]), abbreviations)
                } else {
                    is_abbreviation(&text[word_start..at], abbreviations)
                };
            let mut skipped = false;
            while let Some(closing) = char_at(text, next).filter(|&n| is_closing(n)) {
                next += closing.len_utf8();
                skipped = true;
            }
            let at_boundary = char_at(text, next).is_none_or(char::is_whitespace);
            skipped_inside |= skipped && !at_boundary;
            if at_boundary && in_sentence && !abbreviated {
                count += 1;
                in_sentence = false;
            }
        } else if c.is_whitespace() {
            word_start = next;
            skipped_inside = false;
        } else {
            in_sentence = true;
        }
        at = next;
    }
    count + usize::from(in_sentence)
}

/// The ASCII bytes that are neither a terminator nor whitespace: where a
/// character is read, such a one only says that a sentence is open (closing
/// marks matter only right after a terminator, where they are read with it).
static PLAIN_ASCII: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8 as char;
        table[byte] = !(is_terminator(c) || c.is_whitespace());
        byte += 1;
    }
    table
};

/// The character starting at byte `at` of `text` (a character boundary), if any.
#[inline]
fn char_at(text: &str, at: usize) -> Option<char> {
    match text.as_bytes().get(at) {
        Some(&byte) if byte < 0x80 => Some(char::from(byte)),
        Some(_) => text[at..].chars().next(),
        None => None,
    }
}

/// A character that ends a sentence.
const fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// A character skipped after a terminator (repeats, closing quotes and brackets).
fn is_closing(c: char) -> bool {
    is_terminator(c) || matches!(c, '"' | '\'' | ')' | '”' | '’')
}

/// A word (no whitespace) as the sentence counter reads it: without the
/// closing marks that follow each terminator, which it skips.
fn word_as_read(text: &str) -> String {
    let mut word = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        word.push(c);
        if is_terminator(c) {
            while chars.next_if(|&n| is_closing(n)).is_some() {}
        }
    }
    word
}

/// Whether `word` (the text before a period, from the last whitespace) is an
/// abbreviation or an initial.
fn is_abbreviation(word: &str, extra: &[String]) -> bool {
    let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
    if word.is_empty() {
        return false;
    }
    // `J`, `U.S`, `R.R`: single capital letters between periods.
    let initial = |part: &str| {
        let mut chars = part.chars();
        matches!((chars.next(), chars.next()), (Some(c), None) if c.is_uppercase())
    };
    if word.split('.').all(initial) {
        return true;
    }
    // (No word longer than the longest spells one: most words are.)
    (word.len() <= LONGEST_ABBREVIATION
        && SENTENCE_ABBREVIATIONS
            .iter()
            .any(|known| spells(known, word)))
        || extra.iter().any(|known| spells(known, word))
}

/// The length of the longest of [`SENTENCE_ABBREVIATIONS`].
const LONGEST_ABBREVIATION: usize = {
    let mut longest = 0;
    let mut at = 0;
    while at < SENTENCE_ABBREVIATIONS.len() {
        if SENTENCE_ABBREVIATIONS[at].len() > longest {
            longest = SENTENCE_ABBREVIATIONS[at].len();
        }
        at += 1;
    }
    longest
};

/// Whether `known` less its final periods is `word`, ignoring ASCII case (the
/// lengths first: most words are longer than any abbreviation).
pub(super) fn spells(known: &str, word: &str) -> bool {
    let (known, word) = (known.as_bytes(), word.as_bytes());
    known.len() >= word.len()
        && word.last() != Some(&b'.')
        && known[..word.len()].eq_ignore_ascii_case(word)
        && known[word.len()..].iter().all(|&b| b == b'.')
}
