//! Tool names for the allowlist: matched exactly as the policy spells them.
//!
//! Nothing is folded, trimmed or "corrected": `Web_Fetch`, ` web_fetch` and
//! `web_fetch\n` are not `web_fetch`. Folding would let an agent reach a tool under a
//! spelling that its own executor may dispatch differently, and every spelling that
//! is not the policy's own is one more thing a reviewer has to recognise. A name with
//! any character outside `[a-z0-9_.:-]` cannot be on the allowlist, and the reason
//! says which character it was, so look-alikes (Cyrillic `а`, zero-width joiners,
//! full-width letters) are denied with a message that shows them.

/// Longest tool name accepted (MCP names are `mcp__server__tool`).
pub const MAX_TOOL_NAME: usize = 128;

/// Why a name cannot be an allowlisted tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    Empty,
    TooLong(usize),
    /// A character that is not allowed, with its position (in chars) and a description.
    Character {
        ch: char,
        index: usize,
        kind: &'static str,
    },
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameProblem::Empty => write!(f, "tool name is empty"),
            NameProblem::TooLong(n) => {
                write!(f, "tool name is {n} bytes; the limit is {MAX_TOOL_NAME}")
            }
            NameProblem::Character { ch, index, kind } => write!(
                f,
                "tool name has {kind} U+{:04X} at position {index}; tool names are matched exactly as the policy spells them",
                *ch as u32
            ),
        }
    }
}

/// Characters allowed in a tool name.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | ':')
}

fn describe(c: char) -> &'static str {
    match c {
        '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}' => {
            "a zero-width or invisible character"
        }
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => "a bidirectional control character",
        c if c.is_control() => "a control character",
        c if c.is_whitespace() => "a whitespace character",
        c if c.is_ascii_uppercase() => "an upper-case letter",
        '\u{FF01}'..='\u{FF5E}' => "a full-width character",
        c if !c.is_ascii() => "a non-ASCII character",
        _ => "a character that tool names do not use",
    }
}

/// Check that a proposed tool name could be on an allowlist, or say why it never can.
pub fn check(raw: &str) -> Result<&str, NameProblem> {
    if raw.is_empty() {
        return Err(NameProblem::Empty);
    }
    if raw.len() > MAX_TOOL_NAME {
        return Err(NameProblem::TooLong(raw.len()));
    }
    match raw.chars().enumerate().find(|(_, ch)| !is_name_char(*ch)) {
        Some((index, ch)) => Err(NameProblem::Character {
            ch,
            index,
            kind: describe(ch),
        }),
        None => Ok(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_taken_exactly() {
        assert_eq!(check("query_order").unwrap(), "query_order");
        assert_eq!(
            check("mcp__chrome-devtools__click").unwrap(),
            "mcp__chrome-devtools__click"
        );
    }

    #[test]
    fn case_and_blanks_are_not_folded() {
        let cases = [
            ("Web_Fetch", 0, 'W'),
            ("EXECUTE_COMMAND", 0, 'E'),
            ("web_fetcH", 8, 'H'),
            (" read_file", 0, ' '),
            ("read_file\t", 9, '\t'),
            ("read_file\n", 9, '\n'),
        ];
        for (name, index, ch) in cases {
            match check(name) {
                Err(NameProblem::Character { ch: c, index: i, .. }) => {
                    assert_eq!((c, i), (ch, index), "{name:?}")
                }
                other => panic!("{name:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn homoglyphs_and_invisible_characters_are_refused_with_their_code_point() {
        let cases = [
            ("query_оrder", 6, '\u{043E}'), // Cyrillic o
            ("query\u{200B}_order", 5, '\u{200B}'),
            ("query_order\u{0000}", 11, '\0'),
            ("ｑuery_order", 0, '\u{FF51}'),
            ("query\u{202E}_order", 5, '\u{202E}'),
            ("query order", 5, ' '),
            ("read_file\u{00A0}", 9, '\u{00A0}'),
            ("ſhell", 0, '\u{017F}'),         // long s: upper-cases to S
            ("\u{212A}_tool", 0, '\u{212A}'), // Kelvin sign: lower-cases to k
        ];
        for (name, index, ch) in cases {
            match check(name) {
                Err(NameProblem::Character { ch: c, index: i, .. }) => {
                    assert_eq!((c, i), (ch, index), "{name:?}")
                }
                other => panic!("{name:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn empty_and_overlong_names_are_refused() {
        assert_eq!(check("").unwrap_err(), NameProblem::Empty);
        assert!(matches!(check(&"a".repeat(200)), Err(NameProblem::TooLong(200))));
    }

    #[test]
    fn messages_name_the_problem() {
        let msg = check("query\u{200D}order").unwrap_err().to_string();
        assert!(msg.contains("zero-width"), "{msg}");
        assert!(msg.contains("U+200D"), "{msg}");
        let msg = check("Query_order").unwrap_err().to_string();
        assert!(msg.contains("upper-case"), "{msg}");
        assert!(msg.contains("exactly"), "{msg}");
    }
}
