//! Line diff of original → modified arguments, shown before a modification is released.

use crate::i18n::{use_tr, Tr};
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

/// [`lines`] with runs of unchanged lines folded to `context` lines on either side of a
/// change: each fold is one `('…', "N unchanged lines")` entry. For long texts (a policy),
/// where a reader wants the changes, not the whole file again.
pub fn hunks(before: &str, after: &str, context: usize) -> Vec<(char, String)> {
    let all = lines(before, after);
    let changed: Vec<usize> = (0..all.len()).filter(|&i| all[i].0 != ' ').collect();
    // Distance from each line to the nearest change, within `context`.
    let near = |i: usize| {
        changed.binary_search(&i).map(|_| true).unwrap_or_else(|at| {
            let before = at.checked_sub(1).map(|j| i - changed[j] <= context);
            let after = changed.get(at).map(|&c| c - i <= context);
            before.unwrap_or(false) || after.unwrap_or(false)
        })
    };
    let mut out = Vec::new();
    let mut folded = 0;
    for (i, line) in all.into_iter().enumerate() {
        if near(i) {
            if folded > 0 {
                out.push((
                    '…',
                    format!("{folded} unchanged line{}", if folded == 1 { "" } else { "s" }),
                ));
                folded = 0;
            }
            out.push(line);
        } else {
            folded += 1;
        }
    }
    if folded > 0 {
        out.push((
            '…',
            format!("{folded} unchanged line{}", if folded == 1 { "" } else { "s" }),
        ));
    }
    out
}

#[component]
pub fn Diff(before: String, after: String) -> impl IntoView {
    view! { <DiffLines lines=lines(&before, &after)/> }
}

/// A fold's text from [`hunks`] ("7 unchanged lines", written where the lines were
/// computed, possibly the server) in the page's language; any other text as it is.
fn fold_text(tr: Tr, line: &str) -> String {
    match line
        .split_once(' ')
        .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)))
    {
        Some((1, "unchanged line")) => tr.t("diff.unchanged_one").to_string(),
        Some((n, "unchanged lines")) => tr.f("diff.unchanged_many", &[("n", n.to_string().as_str())]),
        _ => line.to_string(),
    }
}

/// Lines from [`lines`] (computed here or by the server), marked.
#[component]
pub fn DiffLines(lines: Vec<(char, String)>) -> impl IntoView {
    let tr = use_tr();
    let rows = lines
        .into_iter()
        .map(|(tag, line)| {
            let (class, label) = match tag {
                '-' => ("d-del", tr.t("diff.removed")),
                '+' => ("d-add", tr.t("diff.added")),
                '…' => ("d-gap", tr.t("diff.folded")),
                _ => ("d-eq", tr.t("diff.unchanged")),
            };
            let line = if tag == '…' { fold_text(tr, &line) } else { line };
            view! { <div class=class><span class="d-tag" aria-label=label>{tag.to_string()}</span>{line}</div> }
        })
        .collect_view();
    view! { <div class="diff" data-testid="diff" role="region" aria-label=tr.t("diff.changes")>{rows}</div> }
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

    #[test]
    fn unchanged_runs_fold_to_their_context() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let d = super::hunks(&before, &after, 2);
        let shown: Vec<String> = d.iter().map(|(t, l)| format!("{t}{l}")).collect();
        assert_eq!(
            shown,
            [
                "…7 unchanged lines",
                " line 8",
                " line 9",
                "-line 10",
                "+line ten",
                " line 11",
                " line 12",
                "…8 unchanged lines"
            ]
        );
        // Nothing to fold: everything shown.
        assert_eq!(super::hunks("a\nb\n", "a\nc\n", 3), super::lines("a\nb\n", "a\nc\n"));
    }
}
