//! The OpenAPI 3.1 description of the agent API, served at `/api/v1/openapi.json`.
//! Generated from these types and the handlers' `#[utoipa::path]` annotations; a test
//! checks that the request schema names exactly the fields the parser accepts.

#![allow(dead_code)] // the structs exist to describe JSON, not to be built

use axum::Json;
use serde_json::Value;
use utoipa::{OpenApi, ToSchema};

/// A proposed tool call.
#[derive(ToSchema)]
#[schema(example = json!({
    "session_id": "s-42", "trace_id": "t-9f1c", "tool": "move_to_trash", "server": "filesystem",
    "arguments": {"paths": ["/data/shared/uploads/2024/05/export.csv"]},
    "reason": "user asked to clean last week's exports", "plan": "1. list dir 2. trash exports",
    "on_behalf_of": "user-17", "context": {"trust": "isolated"},
    "callback_url": "https://agent.example/hooks/airlock"
}))]
pub struct ToolCallRequest {
    /// The agent conversation or run (1–200 characters).
    session_id: String,
    /// Distributed trace id.
    trace_id: Option<String>,
    /// The agent's turn within the session (per-turn budgets count by it).
    turn_id: Option<String>,
    /// Tool name, matched exactly against the policy's allowlist.
    tool: String,
    /// MCP server the tool belongs to.
    server: Option<String>,
    /// The tool's arguments (a JSON object; validated strictly against the tool's schema).
    #[schema(value_type = Object)]
    arguments: Value,
    /// Why the agent wants this (audit only).
    reason: Option<String>,
    /// The agent's plan text (audit and review only).
    plan: Option<String>,
    /// The end user the agent acts for.
    on_behalf_of: Option<String>,
    /// Context the policy may use; a change of `context.trust` clears approve-all grants.
    #[schema(value_type = Option<Object>)]
    context: Option<Value>,
    /// Public http(s) URL that receives the final decision (signed, retried).
    callback_url: Option<String>,
}

/// A call and its decision.
#[derive(ToSchema)]
pub struct ToolCall {
    /// `tc_…`
    id: String,
    /// allowed | denied | pending | approved | modified | rejected | skipped | expired | cancelled | overridden
    status: String,
    /// allowlist | schema | path_guard | command_guard | url_guard | budget | rule
    blocked_by: Option<String>,
    /// The policy rule that decided or held the call.
    rule: Option<String>,
    /// Human-readable reason.
    reason: String,
    /// The arguments the agent may execute with (`null` unless the status allows execution;
    /// the reviewer's version when `modified`).
    #[schema(value_type = Option<Object>)]
    arguments: Option<Value>,
    /// `sha256:…` of the policy that decided.
    policy_version: String,
    /// When a pending call expires (RFC 3339).
    expires_at: Option<String>,
    /// Where to long-poll for the decision.
    poll_url: String,
    session_id: String,
    trace_id: Option<String>,
    tool: String,
    server: Option<String>,
    /// low | medium | high | critical
    risk: String,
    /// Distinct approvals needed.
    approvers_required: i64,
    created_at: String,
    decided_at: Option<String>,
    /// `user:<name>`, `agent:<id>` (cancel) or `system` (expiry); `null` for policy decisions.
    decided_by: Option<String>,
    /// The reviewer's comment (the reason of a rejection).
    comment: Option<String>,
    /// ok | error once the agent reported the outcome.
    result: Option<String>,
    /// URL guards with `resolve = true`: the normalised URLs and the addresses that were
    /// checked. Connect to exactly these (no second lookup). Empty when nothing was resolved.
    pinned: Vec<PinnedUrl>,
}

/// A URL the guard resolved and checked.
#[derive(ToSchema)]
pub struct PinnedUrl {
    /// The normalised (WHATWG) URL to fetch.
    url: String,
    host: String,
    port: u16,
    /// The checked addresses: connect only to these.
    addresses: Vec<String>,
}

/// The outcome of an executed call.
#[derive(ToSchema)]
pub struct ResultRequest {
    /// ok | error
    outcome: String,
    /// What happened (redacted before it is stored).
    summary: Option<String>,
    duration_ms: Option<i64>,
}

#[derive(ToSchema)]
pub struct ErrorBody {
    error: ErrorDetail,
}

#[derive(ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code, e.g. `bad_signature`, `stale_timestamp`,
    /// `replay_mismatch`, `malformed_json`, `duplicate_key`, `json_too_deep`,
    /// `payload_too_large`, `missing_field`, `invalid_field`, `unknown_field`,
    /// `invalid_callback_url`, `not_found`, `not_pending`, `invalid_wait`.
    code: String,
    message: String,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Airlock agent API",
        version = "1",
        description = "Agents propose tool calls; Airlock decides (allow, deny, or hold for a human).\n\n\
Every request is signed (Standard Webhooks): headers `airlock-agent`, `webhook-id` (unique per \
message; the idempotency key of a proposal), `webhook-timestamp` (unix seconds, ±300 s) and \
`webhook-signature` = `v1,<base64 HMAC-SHA256(secret, \"{id}.{timestamp}.{payload}\")>`, where the \
key is the base64-decoded part of the agent's `whsec_…` secret and several space-separated \
signatures are allowed (rotation). The payload is the body for `POST /api/v1/tool-calls`; for the \
other endpoints it is `\"{METHOD} {path?query}\\n{body}\"` so a signature cannot be replayed \
against another call. Refused signatures answer 401 with a code."
    ),
    paths(super::propose, super::get_call, super::cancel, super::result),
    components(schemas(ToolCallRequest, ToolCall, PinnedUrl, ResultRequest, ErrorBody, ErrorDetail))
)]
pub struct ApiDoc;

/// `GET /api/v1/openapi.json`
pub async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_openapi_3_1_with_every_endpoint() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        for p in [
            "/api/v1/tool-calls",
            "/api/v1/tool-calls/{id}",
            "/api/v1/tool-calls/{id}/cancel",
            "/api/v1/tool-calls/{id}/result",
        ] {
            assert!(doc["paths"][p].is_object(), "{p} missing");
        }
    }

    #[test]
    fn the_request_schema_names_exactly_the_accepted_fields() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let props = doc["components"]["schemas"]["ToolCallRequest"]["properties"]
            .as_object()
            .unwrap();
        let mut documented: Vec<&str> = props.keys().map(String::as_str).collect();
        let mut accepted = super::super::proposal::FIELDS.to_vec();
        documented.sort_unstable();
        accepted.sort_unstable();
        assert_eq!(documented, accepted);
        let example = doc["components"]["schemas"]["ToolCallRequest"]["example"].clone();
        assert!(super::super::proposal::Proposal::from_json(example).is_ok());
    }
}
