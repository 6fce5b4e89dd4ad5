//! The auditor's desk: a search over the audit trail, its pages, and per-session or
//! per-trace timelines. The query is plain strings so it round-trips through the URL
//! unchanged; the server validates it.

use serde::{Deserialize, Serialize};

/// A search, exactly as it appears in the page's URL (`/audit?q=…&agent=…`), in the export
/// API's and in the CLI's options. Empty fields are no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditQuery {
    /// Free text over the redacted events; `"a phrase"`, `prefix*`, `-exclude`.
    pub q: String,
    /// From (inclusive) and until (exclusive): `2026-12-01`, `2026-12-01T09:30`, RFC 3339,
    /// or a span back from now (`15m`, `24h`, `7d`).
    pub since: String,
    pub until: String,
    pub agent: String,
    pub session: String,
    pub trace: String,
    pub tool: String,
    /// A call status the event recorded (`allowed`, `denied`, `approved`, …).
    pub status: String,
    /// The layer that blocked or held (`allowlist`, `schema`, `path_guard`, `budget`, `rule`, …).
    pub layer: String,
    pub rule: String,
    /// Who or what decided: `policy`, `grant`, `reviewer`, `override`, `expiry`, `agent`.
    pub source: String,
    /// A reviewer's user name.
    pub reviewer: String,
    /// An event kind (`call_received`, `call_decided`, `grant_created`, …).
    pub kind: String,
    /// `newest` (default) or `oldest`.
    pub sort: String,
    /// Continue after this event (the cursor of the previous page).
    pub after: String,
}

impl AuditQuery {
    /// The URL parameter names, in URL order.
    pub const NAMES: [&'static str; 15] = [
        "q", "since", "until", "agent", "session", "trace", "tool", "status", "layer", "rule", "source", "reviewer",
        "kind", "sort", "after",
    ];

    /// The query's fields as (name, value) pairs in URL order.
    pub fn fields(&self) -> [(&'static str, &str); 15] {
        [
            ("q", &self.q),
            ("since", &self.since),
            ("until", &self.until),
            ("agent", &self.agent),
            ("session", &self.session),
            ("trace", &self.trace),
            ("tool", &self.tool),
            ("status", &self.status),
            ("layer", &self.layer),
            ("rule", &self.rule),
            ("source", &self.source),
            ("reviewer", &self.reviewer),
            ("kind", &self.kind),
            ("sort", &self.sort),
            ("after", &self.after),
        ]
    }

    /// Read a query from URL parameters (unknown names are ignored).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> AuditQuery {
        let mut q = AuditQuery::default();
        for (k, v) in pairs {
            let slot = match k {
                "q" => &mut q.q,
                "since" => &mut q.since,
                "until" => &mut q.until,
                "agent" => &mut q.agent,
                "session" => &mut q.session,
                "trace" => &mut q.trace,
                "tool" => &mut q.tool,
                "status" => &mut q.status,
                "layer" => &mut q.layer,
                "rule" => &mut q.rule,
                "source" => &mut q.source,
                "reviewer" => &mut q.reviewer,
                "kind" => &mut q.kind,
                "sort" => &mut q.sort,
                "after" => &mut q.after,
                _ => continue,
            };
            *slot = v.to_string();
        }
        q
    }

    /// The query string (without `?`), empty values left out, values percent-encoded.
    pub fn to_query_string(&self) -> String {
        self.fields()
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The same search from its first page.
    pub fn first_page(&self) -> AuditQuery {
        AuditQuery {
            after: String::new(),
            ..self.clone()
        }
    }

    /// Whether anything narrows the search.
    pub fn narrowed(&self) -> bool {
        self.fields()
            .iter()
            .any(|(k, v)| !v.is_empty() && !matches!(*k, "sort" | "after"))
    }
}

/// Percent-encode a URL query value (RFC 3986 unreserved characters stay).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One event in a search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditHit {
    pub seq: i64,
    pub at_ms: i64,
    pub kind: String,
    pub actor: String,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub trace: Option<String>,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub status: Option<String>,
    pub source: Option<String>,
    pub layer: Option<String>,
    pub rule: Option<String>,
    pub reviewer: Option<String>,
    /// One line saying what happened (redacted).
    pub summary: String,
}

/// One page of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditPage {
    pub hits: Vec<AuditHit>,
    /// The cursor of the next page, if there is one.
    pub next: Option<String>,
    /// Events in the chain, and how many of them the search index holds.
    pub chain_len: i64,
    pub indexed: i64,
    /// The latest verification of the chain, if any ran since the server started.
    pub verified: Option<ChainCheck>,
    pub now_ms: i64,
}

/// The outcome of checking the chain (and its signed checkpoints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainCheck {
    /// Events checked: verified from the first event up to this one.
    pub up_to: i64,
    pub checked_at_ms: i64,
    /// Signed checkpoints whose signature and hash matched.
    pub checkpoints: u64,
    /// The first problem: the event and what is wrong with it.
    pub problem: Option<(i64, String)>,
}

impl ChainCheck {
    /// The outcome as a sentence.
    pub fn describe(&self) -> String {
        match &self.problem {
            None => format!(
                "Verified up to event {} at {}, with {} signed checkpoints",
                crate::api::grouped(self.up_to.max(0) as u64),
                crate::components::clock::utc(self.checked_at_ms),
                self.checkpoints
            ),
            Some((seq, why)) => format!("Broken at event {seq}: {why}"),
        }
    }
}

/// What checking the chain from the page answers: whether it held, in a sentence, and
/// the check itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainReport {
    pub ok: bool,
    pub message: String,
    pub check: ChainCheck,
}

impl From<ChainCheck> for ChainReport {
    fn from(check: ChainCheck) -> ChainReport {
        ChainReport {
            ok: check.problem.is_none(),
            message: check.describe(),
            check,
        }
    }
}

/// Whose timeline: one agent session, or one trace id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TraceKind {
    Session,
    Trace,
}

/// Everything that happened in one session or trace, call by call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceView {
    pub kind: TraceKind,
    pub id: String,
    pub agents: Vec<String>,
    pub calls: Vec<TraceCall>,
    /// Events that belong to no call of this timeline (grants without a call, …).
    pub other: Vec<TraceStep>,
    /// Events shown, and whether older ones were left out (first page only).
    pub events: u64,
    pub truncated: bool,
    pub first_at_ms: Option<i64>,
    pub last_at_ms: Option<i64>,
    pub now_ms: i64,
}

impl TraceView {
    /// Recently active: the page keeps itself up to date.
    pub fn active(&self) -> bool {
        self.calls.iter().any(|c| c.pending) || self.last_at_ms.is_some_and(|t| self.now_ms - t < 10 * 60_000)
    }
}

/// One proposed call and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceCall {
    pub id: String,
    pub at_ms: i64,
    pub agent: String,
    pub tool: String,
    pub server: Option<String>,
    pub trace: Option<String>,
    pub reason: Option<String>,
    pub plan: Option<String>,
    /// Redacted arguments, pretty JSON.
    pub arguments: String,
    /// The latest status and who or what set it.
    pub status: String,
    pub source: Option<String>,
    pub decided_by: Option<String>,
    pub blocked_by: Option<String>,
    pub rule: Option<String>,
    pub why: Option<String>,
    pub grant_id: Option<String>,
    pub pending: bool,
    /// Time held before the decision, or so far while pending.
    pub waited_ms: Option<i64>,
    pub steps: Vec<TraceStep>,
}

/// One event on a call's timeline after it was received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    pub seq: i64,
    pub at_ms: i64,
    pub kind: String,
    pub actor: String,
    /// One line (redacted).
    pub text: String,
    /// A reviewer's modification: redacted arguments before and after, pretty JSON.
    pub diff: Option<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_round_trips_through_its_query_string() {
        let q = AuditQuery {
            q: "rm -rf \"/tmp x\" & é".into(),
            agent: "bot".into(),
            since: "7d".into(),
            after: "120".into(),
            ..AuditQuery::default()
        };
        let qs = q.to_query_string();
        assert_eq!(qs.matches('&').count(), 3, "{qs}");
        let pairs: Vec<(String, String)> = qs
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), decode(v))
            })
            .collect();
        let back = AuditQuery::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        assert_eq!(back, q);
        assert!(q.narrowed());
        assert!(!AuditQuery {
            sort: "oldest".into(),
            ..AuditQuery::default()
        }
        .narrowed());
    }

    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }
}
