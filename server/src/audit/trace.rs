//! A timeline of one session or trace, read from the chain itself: every proposed call
//! with the agent's reason and plan, its decision and who or what made it, each reviewer
//! action (a modification as a before/after pair), grants, callbacks and the reported
//! result. Everything here was redacted before it was recorded.

use super::index::{summary_line, Event, SearchIndex};
use app::api::{TraceCall, TraceKind, TraceStep, TraceView};
use serde_json::Value;

/// The newest events a timeline shows (older ones are counted as left out).
pub const MAX_EVENTS: i64 = 5000;

type Row = (i64, i64, String, String, Option<String>, Option<String>, String);

/// Build the timeline of a session or trace; `None` when nothing was recorded for it.
pub async fn build(
    index: &SearchIndex,
    kind: TraceKind,
    id: &str,
    now_ms: i64,
) -> Result<Option<TraceView>, sqlx::Error> {
    // The chain has no index but its sequence numbers (each index entry would be written
    // for every call): the search index finds a session's or trace's events, and the
    // events themselves are read from the chain by sequence number.
    index.catch_up().await?;
    let seqs: Vec<i64> = match kind {
        TraceKind::Session => {
            sqlx::query_scalar("SELECT seq FROM search_events WHERE session = $1 ORDER BY seq DESC LIMIT $2")
                .bind(id)
                .bind(MAX_EVENTS + 1)
                .fetch_all(&index.pool)
                .await?
        }
        // Every event of each call the trace holds (reviewers' decisions carry no trace id).
        TraceKind::Trace => {
            sqlx::query_scalar(
                "SELECT seq FROM search_events WHERE call_id IN
                     (SELECT DISTINCT call_id FROM search_events WHERE trace = $1 AND call_id IS NOT NULL LIMIT $2)
                 ORDER BY seq DESC LIMIT $3",
            )
            .bind(id)
            .bind(MAX_EVENTS)
            .bind(MAX_EVENTS + 1)
            .fetch_all(&index.pool)
            .await?
        }
    };
    let mut rows: Vec<Row> = Vec::with_capacity(seqs.len());
    for chunk in seqs.chunks(1000) {
        let mut q = crate::store::Sql::new(
            crate::store::Backend::of(index.chain()),
            "SELECT seq, at_ms, kind, actor, call_id, session_id, data FROM audit_events WHERE seq IN (",
        );
        q.list(chunk.iter().copied()).push(") ORDER BY seq DESC");
        rows.extend(q.fetch_all::<Row, _>(index.chain()).await?);
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let truncated = rows.len() as i64 > MAX_EVENTS;
    rows.truncate(MAX_EVENTS as usize);
    rows.reverse();
    Ok(Some(assemble(kind, id, rows, truncated, now_ms)))
}

fn text(v: &Value, k: &str) -> Option<String> {
    match v.get(k)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn pretty(v: Option<&Value>) -> String {
    v.and_then(|v| serde_json::to_string_pretty(v).ok()).unwrap_or_default()
}

/// Group events into calls (pure).
fn assemble(kind: TraceKind, id: &str, rows: Vec<Row>, truncated: bool, now_ms: i64) -> TraceView {
    let mut calls: Vec<TraceCall> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut other = Vec::new();
    let mut agents: Vec<String> = Vec::new();
    let (first, last) = (rows.first().map(|r| r.1), rows.last().map(|r| r.1));
    let events = rows.len() as u64;
    for (seq, at_ms, ev_kind, actor, call_id, session, data) in rows {
        let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
        if ev_kind == "call_received" {
            let d = super::received_decision(&data);
            let agent = actor.strip_prefix("agent:").unwrap_or(&actor).to_string();
            if !agents.contains(&agent) {
                agents.push(agent.clone());
            }
            let status = text(&d, "status").unwrap_or_default();
            let source = text(&d, "source");
            let grant_id = text(&d, "grant_id");
            let call = TraceCall {
                id: call_id.clone().unwrap_or_default(),
                at_ms,
                agent,
                tool: text(&data, "tool").unwrap_or_default(),
                server: text(&data, "server"),
                trace: text(&data, "trace_id"),
                reason: text(&data, "reason"),
                plan: text(&data, "plan"),
                arguments: pretty(data.get("arguments")),
                pending: status == "pending",
                decided_by: match source.as_deref() {
                    Some("grant") => grant_id.as_ref().map(|g| format!("approve-all {g}")),
                    _ => Some("policy".into()),
                },
                status,
                source,
                blocked_by: text(&d, "blocked_by"),
                rule: text(&d, "rule"),
                why: text(&d, "reason"),
                grant_id,
                waited_ms: None,
                steps: Vec::new(),
            };
            if let Some(c) = call_id {
                at.insert(c, calls.len());
            }
            calls.push(call);
            continue;
        }
        let step_diff = match (data.get("original"), data.get("modified")) {
            (Some(a), Some(b)) => Some((pretty(Some(a)), pretty(Some(b)))),
            _ => None,
        };
        let ev = Event {
            seq,
            at_ms,
            kind: ev_kind,
            actor,
            call_id,
            session,
            data,
        };
        let line = summary_line(&ev);
        let Event {
            kind: ev_kind,
            actor,
            call_id,
            data,
            ..
        } = ev;
        let step = TraceStep {
            seq,
            at_ms,
            kind: ev_kind.clone(),
            actor: actor.clone(),
            text: line,
            diff: step_diff,
        };
        let Some(&i) = call_id.as_ref().and_then(|c| at.get(c)) else {
            other.push(step);
            continue;
        };
        let c = &mut calls[i];
        let final_status = match ev_kind.as_str() {
            "call_decided" => text(&data, "status"),
            "call_expired" => Some("expired".into()),
            "call_cancelled" => Some("cancelled".into()),
            _ => None,
        };
        if let Some(s) = final_status {
            c.status = s;
            c.pending = false;
            c.source = text(&data, "source").or(c.source.take());
            c.decided_by = Some(actor.clone());
            c.waited_ms = Some(data.get("waited_ms").and_then(Value::as_i64).unwrap_or(at_ms - c.at_ms));
            if let Some(g) = text(&data, "grant_id") {
                c.grant_id = Some(g);
            }
            if ev_kind == "call_decided" {
                c.why = text(&data, "comment")
                    .or_else(|| text(&data, "reason"))
                    .or(c.why.take());
            }
        }
        c.steps.push(step);
    }
    for c in calls.iter_mut().filter(|c| c.pending) {
        c.waited_ms = Some(now_ms - c.at_ms);
    }
    TraceView {
        kind,
        id: id.to_string(),
        agents,
        calls,
        other,
        events,
        truncated,
        first_at_ms: first,
        last_at_ms: last,
        now_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(seq: i64, at: i64, kind: &str, actor: &str, call: &str, data: Value) -> Row {
        (
            seq,
            at,
            kind.into(),
            actor.into(),
            Some(call.into()),
            Some("s".into()),
            data.to_string(),
        )
    }

    #[test]
    fn a_held_call_is_followed_to_its_modification_and_result() {
        let rows = vec![
            row(
                1,
                1_000,
                "call_received",
                "agent:bot",
                "tc_1",
                json!({"tool": "send", "reason": "tell bob",
                "arguments": {"to": "bob"}, "decision": {"status": "pending", "source": "policy", "blocked_by": "approval"}}),
            ),
            row(
                2,
                1_500,
                "call_received",
                "agent:bot",
                "tc_2",
                json!({"tool": "read",
                "decision": {"status": "allowed", "source": "policy"}}),
            ),
            row(
                3,
                4_000,
                "call_decided",
                "user:alice",
                "tc_1",
                json!({"status": "modified", "source": "reviewer",
                "waited_ms": 3_000, "original": {"to": "bob"}, "modified": {"to": "carol"}, "comment": "wrong person"}),
            ),
            row(
                4,
                5_000,
                "call_result",
                "agent:bot",
                "tc_1",
                json!({"tool": "send", "outcome": "ok", "duration_ms": 12}),
            ),
        ];
        let t = assemble(TraceKind::Session, "s", rows, false, 10_000);
        assert_eq!(t.agents, ["bot"]);
        assert_eq!(t.calls.len(), 2);
        let c = &t.calls[0];
        assert_eq!(
            (c.status.as_str(), c.pending, c.waited_ms),
            ("modified", false, Some(3_000))
        );
        assert_eq!(c.decided_by.as_deref(), Some("user:alice"));
        assert_eq!(c.why.as_deref(), Some("wrong person"));
        assert_eq!(c.steps.len(), 2);
        let (before, after) = c.steps[0].diff.clone().unwrap();
        assert!(before.contains("bob") && after.contains("carol"));
        assert!(c.steps[1].text.contains("result ok in 12 ms"), "{}", c.steps[1].text);
        assert_eq!(t.calls[1].decided_by.as_deref(), Some("policy"));
        assert!(t.active());
    }

    #[test]
    fn a_call_still_held_shows_how_long_it_has_waited() {
        let rows = vec![row(
            1,
            1_000,
            "call_received",
            "agent:bot",
            "tc_1",
            json!({"tool": "t", "decision": {"status": "pending", "source": "policy"}}),
        )];
        let t = assemble(TraceKind::Trace, "t-1", rows, false, 61_000);
        assert!(t.calls[0].pending);
        assert_eq!(t.calls[0].waited_ms, Some(60_000));
    }
}
