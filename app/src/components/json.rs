//! Read-only JSON, syntax-highlighted, strings shown whole, redaction markers shown as
//! markers (never as blanks). Input is pretty-printed JSON text in which the server has
//! escaped invisible characters (see the server's `visible`).

use leptos::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Key(String),
    Str(String),
    Num(String),
    Lit(String),
    Punct(String),
}

/// Split JSON text into tokens (whitespace kept as punctuation so layout survives).
pub fn tokens(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            let s = src[start..i].to_string();
            // A string followed by a colon is an object key.
            let rest = src[i..].trim_start();
            out.push(if rest.starts_with(':') {
                Token::Key(s)
            } else {
                Token::Str(s)
            });
        } else if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                i += 1;
            }
            out.push(Token::Num(src[start..i].to_string()));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            out.push(Token::Lit(src[start..i].to_string()));
        } else {
            let start = i;
            while i < b.len() && !matches!(b[i], b'"' | b'-' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z') {
                i += 1;
            }
            out.push(Token::Punct(src[start..i].to_string()));
        }
    }
    out
}

fn string_view(s: String) -> AnyView {
    // Strings are shown whole, however long: a reviewer approves exactly what runs,
    // and a folded tail is where a hostile agent would put the part that matters.
    let class = if s.contains("[redacted: ") {
        "j-str j-redacted"
    } else if s.contains("\\u") {
        // Invisible and direction-changing characters arrive escaped (`\u202e`).
        "j-str j-escaped"
    } else {
        "j-str"
    };
    view! { <span class=class>{s}</span> }.into_any()
}

#[component]
pub fn JsonView(json: String, #[prop(optional, into)] testid: String) -> impl IntoView {
    let parts = tokens(&json)
        .into_iter()
        .map(|t| match t {
            Token::Key(s) => view! { <span class="j-key">{s}</span> }.into_any(),
            Token::Str(s) => string_view(s),
            Token::Num(s) => view! { <span class="j-num">{s}</span> }.into_any(),
            Token::Lit(s) => view! { <span class="j-lit">{s}</span> }.into_any(),
            Token::Punct(s) => s.into_any(),
        })
        .collect_view();
    view! { <pre class="json" data-testid=testid>{parts}</pre> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_strings_numbers_and_literals_are_told_apart() {
        let t = tokens("{\n  \"a\": \"x\\\"y\",\n  \"n\": -1.5e3,\n  \"ok\": true\n}");
        assert!(t.contains(&Token::Key("\"a\"".into())));
        assert!(t.contains(&Token::Str("\"x\\\"y\"".into())));
        assert!(t.contains(&Token::Num("-1.5e3".into())));
        assert!(t.contains(&Token::Lit("true".into())));
        let text: String = t
            .iter()
            .map(|t| match t {
                Token::Key(s) | Token::Str(s) | Token::Num(s) | Token::Lit(s) | Token::Punct(s) => s.as_str(),
            })
            .collect();
        assert!(text.contains("\"n\": -1.5e3"), "nothing is lost: {text}");
    }
}
