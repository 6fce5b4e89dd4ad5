//! The shape of a call as agents see it (POST answer, GET, callbacks).

use crate::store::calls::CallRow;
use app::api::{CallStatus, DecisionSource};
use policy::{Layer, Risk};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// RFC 3339 UTC with milliseconds.
pub fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

/// A call and its decision, as agents see it: the answer to every agent API request and
/// the `data` of a callback. This struct is also the OpenAPI schema (one definition).
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCall {
    /// `tc_…`
    pub id: String,
    /// allowed | denied | pending | approved | modified | rejected | skipped | expired | cancelled | overridden
    #[schema(value_type = String)]
    pub status: CallStatus,
    /// allowlist | schema | path_guard | command_guard | url_guard | budget | rule
    #[schema(value_type = Option<String>)]
    pub blocked_by: Option<Layer>,
    /// The policy rule that decided or held the call.
    pub rule: Option<String>,
    /// Human-readable reason.
    pub reason: String,
    /// The arguments the agent may execute with (`null` unless the status allows execution;
    /// the reviewer's version when `modified`).
    #[schema(value_type = Option<Object>)]
    pub arguments: Value,
    /// `sha256:…` of the policy that decided.
    pub policy_version: String,
    /// When a pending call expires (RFC 3339).
    pub expires_at: Option<String>,
    /// Where to long-poll for the decision.
    pub poll_url: String,
    pub session_id: String,
    pub trace_id: Option<String>,
    pub tool: String,
    pub server: Option<String>,
    /// low | medium | high | critical
    #[schema(value_type = String)]
    pub risk: Risk,
    /// Distinct approvals needed.
    pub approvers_required: i64,
    pub created_at: String,
    pub decided_at: Option<String>,
    /// `user:<name>`, `agent:<id>` (cancel), `grant:<id>` (an approve-all grant) or
    /// `system` (expiry); `null` for policy decisions.
    pub decided_by: Option<String>,
    /// Who or what decided: policy | grant | reviewer | override (on-call under
    /// break-glass) | expiry | agent; `null` while pending.
    #[schema(value_type = Option<String>)]
    pub source: Option<DecisionSource>,
    /// The reviewer's comment (the reason of a rejection).
    pub comment: Option<String>,
    /// ok | error once the agent reported the outcome.
    pub result: Option<String>,
    /// URL guards with `resolve = true`: the normalised URLs and the addresses that were
    /// checked. Connect to exactly these (no second lookup). Empty when nothing was resolved.
    #[schema(value_type = Vec<PinnedUrl>)]
    pub pinned: Value,
}

/// A URL the guard resolved and checked (as stored by the policy engine).
#[derive(ToSchema)]
#[allow(dead_code)] // describes `pinned` entries, which are stored as the engine wrote them
pub struct PinnedUrl {
    /// The normalised (WHATWG) URL to fetch.
    url: String,
    host: String,
    port: u16,
    /// The checked addresses: connect only to these.
    addresses: Vec<String>,
}

impl ToolCall {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

/// `arguments` is present only when the agent may execute: the reviewer's version for
/// `modified`, otherwise what the agent proposed; `null` for everything else.
/// Stored arguments are opened with `sealer` (see `store::sealed`).
pub fn call_view(row: &CallRow, sealer: &crate::store::sealed::Sealer) -> ToolCall {
    let open = |stored: &str| match sealer.open(stored, &row.agent_id) {
        Ok(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
        Err(e) => {
            tracing::error!(call = %row.id, error = %e, "sealed arguments");
            Value::Null
        }
    };
    let arguments = if !row.status.executable() {
        Value::Null
    } else if row.status == CallStatus::Modified
        || (row.status == CallStatus::Overridden && row.final_arguments.is_some())
    {
        row.final_arguments.as_deref().map_or(Value::Null, open)
    } else {
        open(&row.arguments)
    };
    ToolCall {
        id: row.id.clone(),
        status: row.status,
        blocked_by: row.blocked_by,
        rule: row.rule.clone(),
        reason: row.reason.clone(),
        arguments,
        policy_version: row.policy_version.clone(),
        expires_at: row
            .expires_at_ms
            .filter(|_| row.status == CallStatus::Pending)
            .map(rfc3339),
        poll_url: format!("/api/v1/tool-calls/{}", row.id),
        session_id: row.session_id.clone(),
        trace_id: row.trace_id.clone(),
        tool: row.tool.clone(),
        server: row.server.clone(),
        risk: row.risk,
        approvers_required: row.approvers_required,
        created_at: rfc3339(row.created_at_ms),
        decided_at: row.decided_at_ms.map(rfc3339),
        decided_by: row.decided_by.clone(),
        source: DecisionSource::of(row.status, row.decided_by.as_deref()),
        comment: row.comment.clone(),
        result: row.result_outcome.clone(),
        pinned: row
            .pinned
            .as_deref()
            .and_then(|p| serde_json::from_str::<Value>(p).ok())
            .unwrap_or_else(|| Value::Array(Vec::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            status: CallStatus::Allowed,
            blocked_by: None,
            rule: None,
            reason: "allowed by policy".into(),
            risk: Risk::Low,
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
        let sealer = crate::store::sealed::Sealer::from_server_key(&crate::agents::ServerKey::from_bytes(&[1u8; 32]));
        assert_eq!(call_view(&row, &sealer).pinned, json!([]));
        let pinned = json!([{"host": "example.com", "url": "https://example.com/", "port": 443,
                             "addresses": ["93.184.215.14"]}]);
        row.pinned = Some(pinned.to_string());
        assert_eq!(call_view(&row, &sealer).pinned, pinned);
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339(1_649_367_553_123), "2022-04-07T21:39:13.123Z");
    }
}
