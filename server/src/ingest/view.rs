//! The shape of a call as agents see it (POST answer, GET, callbacks).

use crate::store::calls::CallRow;
use serde_json::{json, Value};

/// RFC 3339 UTC with milliseconds.
pub fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

/// Statuses that allow the agent to execute the call.
pub fn executable(status: &str) -> bool {
    matches!(status, "allowed" | "approved" | "modified" | "overridden")
}

pub fn is_final(status: &str) -> bool {
    status != "pending"
}

/// `arguments` is present only when the agent may execute: the reviewer's version for
/// `modified`, otherwise what the agent proposed; `null` for everything else.
pub fn call_view(row: &CallRow) -> Value {
    let arguments = if !executable(&row.status) {
        Value::Null
    } else if row.status == "modified" {
        row.final_arguments
            .as_deref()
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&row.arguments).unwrap_or(Value::Null)
    };
    json!({
        "id": row.id,
        "status": row.status,
        "blocked_by": row.blocked_by,
        "rule": row.rule,
        "reason": row.reason,
        "arguments": arguments,
        "policy_version": row.policy_version,
        "expires_at": row.expires_at_ms.filter(|_| row.status == "pending").map(rfc3339),
        "poll_url": format!("/api/v1/tool-calls/{}", row.id),
        "session_id": row.session_id,
        "trace_id": row.trace_id,
        "tool": row.tool,
        "server": row.server,
        "risk": row.risk,
        "approvers_required": row.approvers_required,
        "created_at": rfc3339(row.created_at_ms),
        "decided_at": row.decided_at_ms.map(rfc3339),
        "decided_by": row.decided_by,
        "comment": row.comment,
        "result": row.result_outcome,
        // With `resolve = true` URL guards: the normalised URL and the addresses that were
        // checked; the executor must connect to exactly these (no second lookup).
        "pinned": row.pinned.as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()).unwrap_or_else(|| json!([])),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_addresses_reach_the_agent() {
        let mut row = CallRow {
            id: "tc_1".into(),
            agent_id: "a".into(),
            session_id: "s".into(),
            trace_id: None,
            tool: "web_fetch".into(),
            server: None,
            arguments: r#"{"url":"https://example.com/"}"#.into(),
            arguments_redacted: r#"{"url":"https://example.com/"}"#.into(),
            status: "allowed".into(),
            blocked_by: None,
            rule: None,
            reason: "allowed by policy".into(),
            risk: "low".into(),
            approvers_required: 0,
            policy_version: "sha256:x".into(),
            created_at_ms: 0,
            expires_at_ms: None,
            decided_at_ms: Some(0),
            decided_by: None,
            comment: None,
            final_arguments: None,
            callback_url: None,
            result_outcome: None,
            pinned: None,
        };
        assert_eq!(call_view(&row)["pinned"], json!([]));
        let pinned = json!([{"host": "example.com", "url": "https://example.com/", "port": 443,
                             "addresses": ["93.184.215.14"]}]);
        row.pinned = Some(pinned.to_string());
        assert_eq!(call_view(&row)["pinned"], pinned);
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339(1_649_367_553_123), "2022-04-07T21:39:13.123Z");
    }
}
