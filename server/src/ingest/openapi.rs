//! The OpenAPI 3.1 description of the agent API, served at `/api/v1/openapi.json`.
//! Generated from the types the API uses (`Proposal`, `ToolCall`) and the handlers'
//! `#[utoipa::path]` annotations; a test checks that the request schema names exactly the
//! fields the parser accepts. The structs here only describe JSON (never built).

use super::proposal::Proposal;
use super::record::Outcome;
use super::view::{PinnedUrl, ToolCall};
use axum::Json;
use utoipa::{IntoParams, OpenApi, ToSchema};

/// The headers every request carries (Standard Webhooks plus the agent id).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct SignedHeaders {
    /// The agent id.
    #[param(rename = "airlock-agent")]
    agent: String,
    /// Unique message id (the idempotency key of a proposal; one use elsewhere).
    #[param(rename = "webhook-id")]
    id: String,
    /// Unix seconds, within 300 s of the server's clock.
    #[param(rename = "webhook-timestamp")]
    timestamp: i64,
    /// `v1,<base64 HMAC-SHA256>`; several space-separated signatures are allowed (rotation).
    #[param(rename = "webhook-signature")]
    signature: String,
}

#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    error: ErrorDetail,
}

#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ErrorDetail {
    /// Stable machine-readable code (the list is `ApiError::code`'s, see `ingest/error.rs`).
    #[schema(value_type = String, example = "bad_signature")]
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
    components(schemas(Proposal, ToolCall, PinnedUrl, Outcome, ErrorBody, ErrorDetail))
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
        // The result body: the same struct parses it and describes it.
        let result = &doc["components"]["schemas"]["ResultRequest"];
        let mut fields: Vec<&str> = result["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        assert_eq!(fields, ["duration_ms", "outcome", "summary"]);
        let body = serde_json::json!({"outcome": "ok", "summary": "done", "duration_ms": 12});
        assert!(Outcome::from_json(&body).unwrap().ok);
    }
}
