//! Tool-name normalisation for the allowlist.
//!
//! The one documented normalisation: trim ASCII whitespace at both ends, then
//! lower-case ASCII letters. Nothing else is folded or "corrected": a name with any
//! other character outside `[a-z0-9_.:-]` after that step cannot be on the
//! allowlist, and the reason says which character it was, so look-alikes
//! (Cyrillic `а`, zero-width joiners, full-width letters) are denied, never mapped.

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
                "tool name has {kind} U+{:04X} at position {index}; look-alike names are denied",
                *ch as u32
            ),
        }
    }
}

/// Characters allowed in a normalised tool name.
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
        '\u{FF01}'..='\u{FF5E}' => "a full-width character",
        c if !c.is_ascii() => "a non-ASCII character",
        _ => "a character that tool names do not use",
    }
}

/// Normalise a proposed tool name, or say why it can never match.
///
/// Returns a borrowed slice when nothing had to change (the common case: no allocation).
pub fn normalize(raw: &str) -> Result<std::borrow::Cow<'_, str>, NameProblem> {
    let trimmed = raw.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.is_empty() {
        return Err(NameProblem::Empty);
    }
    if trimmed.len() > MAX_TOOL_NAME {
        return Err(NameProblem::TooLong(trimmed.len()));
    }
    let mut needs_lowering = false;
    for (index, ch) in trimmed.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            needs_lowering = true;
        } else if !is_name_char(ch) {
            return Err(NameProblem::Character {
                ch,
                index,
                kind: describe(ch),
            });
        }
    }
    Ok(if needs_lowering {
        std::borrow::Cow::Owned(trimmed.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(trimmed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_ascii_whitespace_and_lowercases_ascii() {
        assert_eq!(normalize("  Query_Order\t").unwrap(), "query_order");
        assert_eq!(
            normalize("mcp__chrome-devtools__click").unwrap(),
            "mcp__chrome-devtools__click"
        );
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
            ("read_file\u{00A0}", 9, '\u{00A0}'), // NBSP is not ASCII whitespace: not trimmed
        ];
        for (name, index, ch) in cases {
            match normalize(name) {
                Err(NameProblem::Character { ch: c, index: i, .. }) => {
                    assert_eq!((c, i), (ch, index), "{name:?}")
                }
                other => panic!("{name:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn empty_and_overlong_names_are_refused() {
        assert_eq!(normalize("   ").unwrap_err(), NameProblem::Empty);
        assert!(matches!(normalize(&"a".repeat(200)), Err(NameProblem::TooLong(200))));
    }

    #[test]
    fn messages_name_the_problem() {
        let msg = normalize("query\u{200D}order").unwrap_err().to_string();
        assert!(msg.contains("zero-width"), "{msg}");
        assert!(msg.contains("U+200D"), "{msg}");
    }
}
