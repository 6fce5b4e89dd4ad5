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

/// The words of `text`, in order, as FTS5's `unicode61 remove_diacritics 2` makes them:
/// letters and digits make words; the combining accents
/// U+0300–U+0331 belong to the word they follow and are dropped; any other character
/// (punctuation, spaces, other combining marks) separates words; Latin letters lose their
/// accents and every letter is lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_accent(c) {
            continue;
        }
        if is_word_char(c) {
            if word.len() < MAX_WORD_BYTES {
                fold(c, &mut word);
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

/// The combining accents FTS5 counts as part of a word (and removes).
fn is_accent(c: char) -> bool {
    ('\u{300}'..='\u{331}').contains(&c)
}

/// FTS5's token characters: letters and numbers (not combining marks).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_combining_mark(c)
}

/// Lower-case; a Latin letter without its accents (FTS5 removes them from Latin only).
fn fold(c: char, out: &mut String) {
    let latin = matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF);
    if latin {
        for d in std::iter::once(c).nfd().filter(|d| !is_combining_mark(*d)) {
            out.extend(d.to_lowercase());
        }
    } else {
        out.extend(c.to_lowercase());
    }
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

    /// Each text with the words SQLite's FTS5 (`unicode61 remove_diacritics 2`) makes of
    /// it, as its `fts5vocab` table lists them.
    #[test]
    fn words_are_the_words_fts5_makes() {
        let cases: &[(&str, &[&str])] = &[
            ("が й Ёлка", &["が", "й", "ёлка"]),
            ("नमस्ते", &["नमस", "त"]),
            ("İSTANBUL Ǆ", &["istanbul", "ǆ"]),
            ("cafe\u{301} x\u{308}y", &["cafe", "xy"]),
            ("Café Crème Ångström Łódź", &["cafe", "creme", "angstrom", "łodz"]),
            ("读取 文件", &["读取", "文件"]),
            ("write_file /etc/passwd", &["write", "file", "etc", "passwd"]),
            ("a\u{338}b", &["a", "b"]),
            ("\u{E000}x", &["x"]),
            ("ǅungla ŉ ß ﬁ", &["ǆungla", "ŉ", "ß", "ﬁ"]),
            ("Ωμέγα ΣΊΣΥΦΟΣ", &["ωμέγα", "σίσυφοσ"]),
            ("Ｆｕｌｌ ｗｉｄｔｈ", &["ｆｕｌｌ", "ｗｉｄｔｈ"]),
            ("١٢٣ ٤", &["١٢٣", "٤"]),
            ("한국어 하", &["한국어", "하"]),
            ("Ǻǻ ǖ ṩ", &["aa", "u", "s"]),
            ("x²³ ½ Ⅻ", &["x²³", "½", "ⅻ"]),
            ("rm -rf / && echo 'hi'", &["rm", "rf", "echo", "hi"]),
            ("αβγ-δ_ε", &["αβγ", "δ", "ε"]),
            ("naïve coöperate", &["naive", "cooperate"]),
            ("e\u{301}\u{327}", &["e"]),
            ("' \\ : & | ! <-> *", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(words(text), *want, "{text:?}");
        }
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
