//! Line diff of original → modified arguments, shown before a modification is released.

use leptos::prelude::*;
use similar::{ChangeTag, TextDiff};

/// (tag, line) pairs: '-' removed, '+' added, ' ' unchanged.
pub fn lines(before: &str, after: &str) -> Vec<(char, String)> {
    TextDiff::from_lines(before, after)
        .iter_all_changes()
        .map(|c| {
            let tag = match c.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            (tag, c.value().trim_end_matches('\n').to_string())
        })
        .collect()
}

#[component]
pub fn Diff(before: String, after: String) -> impl IntoView {
    let rows = lines(&before, &after)
        .into_iter()
        .map(|(tag, line)| {
            let (class, label) = match tag {
                '-' => ("d-del", "removed"),
                '+' => ("d-add", "added"),
                _ => ("d-eq", "unchanged"),
            };
            view! { <div class=class><span class="d-tag" aria-label=label>{tag.to_string()}</span>{line}</div> }
        })
        .collect_view();
    view! { <div class="diff" data-testid="diff" role="region" aria-label="Changes">{rows}</div> }
}

#[cfg(test)]
mod tests {
    #[test]
    fn changed_lines_are_marked() {
        let d = super::lines("{\n  \"a\": 1\n}", "{\n  \"a\": 2\n}");
        assert!(d.contains(&('-', "  \"a\": 1".into())));
        assert!(d.contains(&('+', "  \"a\": 2".into())));
        assert!(d.contains(&(' ', "{".into())));
    }
}
