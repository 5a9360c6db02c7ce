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
    let mut count = 0;
    let mut in_sentence = false;
    // The word being read (since the last whitespace), for the abbreviation
    // check: where it starts, and whether a run of closing marks skipped after a
    // terminator lies inside it (then it is not its text as written; rare).
    let (mut word_start, mut skipped_inside) = (0, false);
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if is_terminator(c) {
            let abbreviated = c == '.'
                && chars.peek().map(|&(_, n)| n) != Some('.')
                && if skipped_inside {
                    is_abbreviation(&word_as_read(&text[word_start..at]), abbreviations)
                } else {
                    is_abbreviation(&text[word_start..at], abbreviations)
                };
            let mut skipped = false;
            while chars.next_if(|&(_, n)| is_closing(n)).is_some() {
                skipped = true;
            }
            let at_boundary = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
            skipped_inside |= skipped && !at_boundary;
            if at_boundary && in_sentence && !abbreviated {
                count += 1;
                in_sentence = false;
            }
        } else if c.is_whitespace() {
            word_start = at + c.len_utf8();
            skipped_inside = false;
        } else {
            in_sentence = true;
        }
    }
    count + usize::from(in_sentence)
}

/// A character that ends a sentence.
fn is_terminator(c: char) -> bool {
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
pub(super) fn is_abbreviation(word: &str, extra: &[String]) -> bool {
    let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
    if word.is_empty() {
        return false;
    }
    // `J`, `U.S`, `R.R`: single capital letters between periods.
    if word
        .split('.')
        .all(|part| part.chars().count() == 1 && part.chars().all(char::is_uppercase))
    {
        return true;
    }
    SENTENCE_ABBREVIATIONS
        .iter()
        .any(|known| spells(known, word))
        || extra.iter().any(|known| spells(known, word))
}

/// Whether `known` less its final periods is `word`, ignoring ASCII case (the
/// lengths first: most words are longer than any abbreviation).
pub(super) fn spells(known: &str, word: &str) -> bool {
    let (known, word) = (known.as_bytes(), word.as_bytes());
    known.len() >= word.len()
        && word.last() != Some(&b'.')
        && known[..word.len()].eq_ignore_ascii_case(word)
        && known[word.len()..].iter().all(|&b| b == b'.')
}
