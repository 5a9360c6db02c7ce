//! String similarities offered to scripts (besides `crate::text`'s Levenshtein):
//! Jaro-Winkler and a token-set ratio. All work on Unicode scalar values and
//! return a similarity in [0, 1]. The quadratic ones take a `keep_going(cells)`
//! callback, asked after each row of work, and give up with `None` when it says
//! no (a script's deadline).

use std::collections::BTreeSet;

/// Jaro similarity: matching characters within half the longer length, minus
/// transpositions. Case-sensitive; 1.0 for two empty strings.
pub fn jaro(a: &str, b: &str, keep_going: &mut dyn FnMut(usize) -> bool) -> Option<f64> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() && b.is_empty() {
        return Some(1.0);
    }
    if a.is_empty() || b.is_empty() {
        return Some(0.0);
    }
    let window = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut a_matched = vec![false; a.len()];
    let mut b_matched = vec![false; b.len()];
    let mut matches = 0usize;
    for (i, ca) in a.iter().enumerate() {
        let lo = i.saturating_sub(window);
        let hi = (i + window + 1).min(b.len());
        for j in lo..hi {
            if !b_matched[j] && b[j] == *ca {
                a_matched[i] = true;
                b_matched[j] = true;
                matches += 1;
                break;
            }
        }
        if !keep_going(hi.saturating_sub(lo)) {
            return None;
        }
    }
    if matches == 0 {
        return Some(0.0);
    }
    let a_seq = a
        .iter()
        .zip(&a_matched)
        .filter(|(_, m)| **m)
        .map(|(c, _)| c);
    let b_seq = b
        .iter()
        .zip(&b_matched)
        .filter(|(_, m)| **m)
        .map(|(c, _)| c);
    let half_transpositions = a_seq.zip(b_seq).filter(|(x, y)| x != y).count();
    let m = matches as f64;
    let t = (half_transpositions / 2) as f64;
    Some((m / a.len() as f64 + m / b.len() as f64 + (m - t) / m) / 3.0)
}

/// Jaro-Winkler similarity: Jaro plus a bonus for a common prefix of up to four
/// characters (scaling factor 0.1). Case-sensitive.
pub fn jaro_winkler(a: &str, b: &str, keep_going: &mut dyn FnMut(usize) -> bool) -> Option<f64> {
    let j = jaro(a, b, keep_going)?;
    let prefix = a
        .chars()
        .zip(b.chars())
        .take(4)
        .take_while(|(x, y)| x == y)
        .count();
    Some(j + prefix as f64 * 0.1 * (1.0 - j))
}

/// Lower-cased words: runs of letters and digits.
fn tokens(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Indel similarity `1 - (insertions + deletions) / (len a + len b)`, i.e.
/// `2 · LCS / (len a + len b)` (1.0 for two empty strings).
pub fn indel_ratio(a: &str, b: &str, keep_going: &mut dyn FnMut(usize) -> bool) -> Option<f64> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let total = a.len() + b.len();
    if total == 0 {
        return Some(1.0);
    }
    let mut row = vec![0usize; b.len() + 1];
    for ca in &a {
        let mut diagonal = 0;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
        if !keep_going(b.len()) {
            return None;
        }
    }
    Some(2.0 * row[b.len()] as f64 / total as f64)
}

/// Token-set ratio (as popularised by fuzzywuzzy): the words both texts share,
/// compared with each text's sorted words, so word order and repeated words do
/// not matter and a text that contains all of the other's words scores 1.0.
/// Case- and punctuation-insensitive; 1.0 for two texts without words.
pub fn token_set_ratio(a: &str, b: &str, keep_going: &mut dyn FnMut(usize) -> bool) -> Option<f64> {
    let ta = tokens(a);
    let tb = tokens(b);
    if ta.is_empty() && tb.is_empty() {
        return Some(1.0);
    }
    if ta.is_empty() || tb.is_empty() {
        return Some(0.0);
    }
    let common: Vec<&str> = ta.intersection(&tb).map(String::as_str).collect();
    let only_a: Vec<&str> = ta.difference(&tb).map(String::as_str).collect();
    let only_b: Vec<&str> = tb.difference(&ta).map(String::as_str).collect();
    if !common.is_empty() && (only_a.is_empty() || only_b.is_empty()) {
        return Some(1.0);
    }
    let base = common.join(" ");
    let join = |rest: &[&str]| {
        if base.is_empty() {
            rest.join(" ")
        } else {
            format!("{base} {}", rest.join(" "))
        }
    };
    let with_a = join(&only_a);
    let with_b = join(&only_b);
    let mut best = indel_ratio(&with_a, &with_b, keep_going)?;
    if !base.is_empty() {
        best = best
            .max(indel_ratio(&base, &with_a, keep_going)?)
            .max(indel_ratio(&base, &with_b, keep_going)?);
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(_: usize) -> bool {
        true
    }
    fn t_jaro(a: &str, b: &str) -> f64 {
        jaro(a, b, &mut go).unwrap()
    }
    fn t_jaro_winkler(a: &str, b: &str) -> f64 {
        jaro_winkler(a, b, &mut go).unwrap()
    }
    fn t_indel_ratio(a: &str, b: &str) -> f64 {
        indel_ratio(a, b, &mut go).unwrap()
    }
    fn t_token_set_ratio(a: &str, b: &str) -> f64 {
        token_set_ratio(a, b, &mut go).unwrap()
    }

    #[test]
    fn quadratic_work_gives_up_when_told() {
        let long = "ab".repeat(500);
        let mut rows = 0;
        let mut stop_after_three = |_: usize| {
            rows += 1;
            rows < 3
        };
        assert_eq!(jaro(&long, &long, &mut stop_after_three), None);
        assert_eq!(rows, 3);
        assert_eq!(indel_ratio(&long, "abc", &mut |_| false), None);
        assert_eq!(
            token_set_ratio("a b c", "a d e", &mut |_| false),
            None,
            "token_set_ratio passes the callback on"
        );
        assert_eq!(
            jaro_winkler("", "", &mut |_| false),
            Some(1.0),
            "no work, no question"
        );
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn jaro_winkler_known_values() {
        // The textbook examples (Winkler 1990; Wikipedia).
        assert!(
            close(t_jaro("MARTHA", "MARHTA"), 0.944_444),
            "{}",
            t_jaro("MARTHA", "MARHTA")
        );
        assert!(close(t_jaro_winkler("MARTHA", "MARHTA"), 0.961_111));
        assert!(close(t_jaro_winkler("DWAYNE", "DUANE"), 0.84));
        assert!(close(t_jaro_winkler("DIXON", "DICKSONX"), 0.813_333));
        assert!(close(t_jaro("CRATE", "TRACE"), 0.733_333));
        assert!(close(t_jaro_winkler("", ""), 1.0));
        assert!(close(t_jaro_winkler("abc", ""), 0.0));
        assert!(close(t_jaro_winkler("abc", "xyz"), 0.0));
        assert!(close(t_jaro_winkler("same", "same"), 1.0));
    }

    #[test]
    fn indel_ratio_known_values() {
        // rapidfuzz.fuzz.ratio("this is a test", "this is a test!") == 96.55...
        assert!(close(
            t_indel_ratio("this is a test", "this is a test!"),
            28.0 / 29.0
        ));
        assert!(close(t_indel_ratio("abc", "abc"), 1.0));
        assert!(close(t_indel_ratio("abc", "xyz"), 0.0));
        assert!(close(t_indel_ratio("", ""), 1.0));
    }

    #[test]
    fn token_set_ratio_known_values() {
        // fuzzywuzzy's README: t_token_set_ratio("fuzzy was a bear", "fuzzy fuzzy was a bear") == 100
        assert!(close(
            t_token_set_ratio("fuzzy was a bear", "fuzzy fuzzy was a bear"),
            1.0
        ));
        assert!(close(
            t_token_set_ratio("New York Mets", "mets, new york"),
            1.0
        ));
        assert!(close(t_token_set_ratio("", "  "), 1.0));
        assert!(close(t_token_set_ratio("abc", ""), 0.0));
        // common "a", only_a "b", only_b "c": max(ratio("a b","a c")=2/3·..., ratio("a","a b"), ratio("a","a c"))
        // ratio("a","a b") = 2·1/(1+3) = 0.5; ratio("a b","a c") = 2·2/6 = 0.667
        assert!(close(t_token_set_ratio("a b", "a c"), 2.0 / 3.0));
        // nothing in common: plain ratio of the sorted words
        assert!(close(t_token_set_ratio("cat", "dog"), 0.0));
    }
}
