//! Words as audit search sees them, for PostgreSQL's full-text search: the same words
//! SQLite's FTS5 `unicode61 remove_diacritics 2` tokenizer makes (runs of letters and
//! digits, lower-cased, accents dropped), so a query finds the same events on both.
//!
//! PostgreSQL's own parser is not used: it keeps `/etc/passwd` or `a-b` whole and splits
//! `write_file` differently. The index stores a `tsvector` literal built here and a
//! query is a `tsquery` literal built here; both hold only these words, quoted, so no
//! event or user text is ever read as tsvector or tsquery syntax.

use std::collections::BTreeMap;
use std::fmt::Write;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// PostgreSQL keeps positions 1..=16383 and at most 256 of them per word.
const MAX_POSITION: usize = 16_383;
const MAX_POSITIONS_PER_WORD: usize = 256;
/// A word longer than PostgreSQL's 2 KB lexeme limit is cut (no real query types one).
const MAX_WORD_BYTES: usize = 2_000;

/// The words of `text`, in order.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.nfd() {
        if is_combining_mark(c) {
            continue;
        }
        if c.is_alphanumeric() {
            if word.len() < MAX_WORD_BYTES {
                word.extend(c.to_lowercase());
            }
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn quoted(out: &mut String, word: &str) {
    // Only letters and digits reach here; doubling quotes and backslashes keeps it so.
    out.push('\'');
    for c in word.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
}

/// A `tsvector` literal of `text`: each word with its positions (phrases need them).
pub fn tsvector(text: &str) -> String {
    let mut at: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, w) in words(text).into_iter().enumerate() {
        let positions = at.entry(w).or_default();
        if positions.len() < MAX_POSITIONS_PER_WORD {
            positions.push((i + 1).min(MAX_POSITION));
        }
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (w, positions) in &at {
        if !out.is_empty() {
            out.push(' ');
        }
        quoted(&mut out, w);
        out.push(':');
        let mut last = 0;
        for (k, p) in positions.iter().enumerate() {
            if *p == last {
                continue; // past the last position, PostgreSQL would merge them anyway
            }
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
            last = *p;
        }
    }
    out
}

/// A `tsquery` literal for search terms (text, prefix): every term must match; a term of
/// several words is a phrase; a prefix applies to its last word. `None` when some term
/// has no word (it could match nothing).
pub fn tsquery(terms: &[(String, bool)]) -> Option<String> {
    let mut out = String::new();
    for (text, prefix) in terms {
        let ws = words(text);
        if ws.is_empty() {
            return None;
        }
        if !out.is_empty() {
            out.push_str(" & ");
        }
        out.push('(');
        for (i, w) in ws.iter().enumerate() {
            if i > 0 {
                out.push_str(" <-> ");
            }
            quoted(&mut out, w);
            if *prefix && i + 1 == ws.len() {
                out.push_str(":*");
            }
        }
        out.push(')');
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_of_letters_and_digits_folded_like_fts5() {
        assert_eq!(words("write_file /etc/passwd"), ["write", "file", "etc", "passwd"]);
        assert_eq!(
            words("Café NAÏVE rm -rf n7.md"),
            ["cafe", "naive", "rm", "rf", "n7", "md"]
        );
        assert_eq!(words("读取 文件"), ["读取", "文件"]);
        assert_eq!(words("' \\ : & | ! <-> *"), Vec::<String>::new());
    }

    #[test]
    fn vectors_hold_each_word_once_with_its_positions() {
        assert_eq!(tsvector("b a B"), "'a':2 'b':1,3");
        assert_eq!(tsvector(""), "");
    }

    #[test]
    fn queries_are_quoted_phrases_joined_by_and() {
        let t = |s: &str, p: bool| (s.to_string(), p);
        assert_eq!(
            tsquery(&[t("send email", false), t("bob", true)]).as_deref(),
            Some("('send' <-> 'email') & ('bob':*)")
        );
        assert_eq!(
            tsquery(&[t("/etc/passwd", false)]).as_deref(),
            Some("('etc' <-> 'passwd')")
        );
        assert_eq!(
            tsquery(&[t("') OR 1=1 --", false)]).as_deref(),
            Some("('or' <-> '1' <-> '1')")
        );
        assert_eq!(tsquery(&[t("--", false)]), None);
        assert_eq!(tsquery(&[]), None);
    }
}
