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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339(1_649_367_553_123), "2022-04-07T21:39:13.123Z");
    }
}
