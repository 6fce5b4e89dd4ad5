//! The agent API (`/api/v1/…`): signature check, parse at the edge, hand to the ledger.
//!
//! What is signed: `POST /api/v1/tool-calls` follows Standard Webhooks exactly
//! (`{id}.{timestamp}.{body}`). Requests without their own body to bind (GET, cancel)
//! and `result` sign `"{METHOD} {path?query}\n{body}"` in place of the body, so a captured
//! signature cannot be replayed against another call.

pub mod error;
pub mod facts;
pub mod openapi;
pub mod proposal;
pub mod record;
pub mod replay;
pub mod signature;
pub mod signed;
pub mod view;

pub use error::ApiError;

use crate::ledger::LedgerError;
use crate::state::AppState;
use crate::store::calls;
use app::api::CallStatus;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use openapi::SignedHeaders;
use policy::JsonLimits;
use proposal::Proposal;
use record::{IngestJob, Outcome, RedactedProposal};
use signed::{SignedRequest, Webhook};
use std::time::Duration;

/// Longest long-poll, seconds.
pub const MAX_WAIT_SECS: u64 = 60;

/// The agent API's routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/tool-calls", post(propose))
        .route("/api/v1/tool-calls/{id}", get(get_call))
        .route("/api/v1/tool-calls/{id}/cancel", post(cancel))
        .route("/api/v1/tool-calls/{id}/result", post(result))
        .route("/api/v1/openapi.json", get(openapi::openapi_json))
}

fn json_response(status: StatusCode, body: String, replay: bool) -> Response {
    let mut r = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if replay {
        r.headers_mut()
            .insert("idempotent-replayed", header::HeaderValue::from_static("true"));
    }
    r
}

fn call_response(state: &AppState, row: &calls::CallRow) -> Response {
    json_response(StatusCode::OK, view::call_view(row, &state.sealer).to_json(), false)
}

/// `POST /api/v1/tool-calls`: propose a tool call; the decision is in the body.
#[utoipa::path(
    post, path = "/api/v1/tool-calls", tag = "tool calls",
    summary = "Propose a tool call",
    description = "The decision is in the body whatever it is. A retry with the same webhook-id and body \
returns the original answer (header `idempotent-replayed: true`).",
    request_body = Proposal,
    params(SignedHeaders),
    responses(
        (status = 200, description = "Decided or held", body = view::ToolCall),
        (status = 400, description = "Malformed body", body = openapi::ErrorBody),
        (status = 401, description = "Signature refused, or webhook-id reused with another body", body = openapi::ErrorBody),
        (status = 413, description = "Body over the size limit", body = openapi::ErrorBody),
        (status = 429, description = "Over the agent's rate limit or held-call cap; retry the same request after `Retry-After`", body = openapi::ErrorBody),
        (status = 503, description = "Temporarily unavailable; retry with the same webhook-id", body = openapi::ErrorBody),
    )
)]
pub async fn propose(State(state): State<AppState>, req: SignedRequest<Webhook>) -> Result<Response, ApiError> {
    let agent = req.agent.as_str();
    if let Some(limiter) = &state.agent_rate {
        if let Err(not_until) = limiter.check_key(&agent.to_string()) {
            let clock = governor::clock::DefaultClock::default();
            let wait = not_until.wait_time_from(governor::clock::Clock::now(&clock));
            // The same refusal as the ledger's count shared by instances (`ledger::agent_rate`).
            return Err(ApiError::Ledger(LedgerError::RateLimited {
                per_second: state.config.agent_rate_per_second,
                retry_after: wait.as_secs_f64().ceil() as u64,
            }));
        }
    }
    // One policy for the whole request, whatever a reload does meanwhile.
    let policy = state.policy.get();
    let limits = JsonLimits {
        max_bytes: state.config.max_body_bytes,
        max_depth: policy.limits.max_depth,
    };
    let value = policy::parse_strict(&req.body, limits)?;
    let proposal = Proposal::from_json(value).map_err(|(code, message)| ApiError::InvalidBody { code, message })?;
    if let Some(url) = &proposal.callback_url {
        check_callback_url(&state, url).map_err(ApiError::InvalidCallbackUrl)?;
    }
    // Gather host facts here, in parallel with other requests (see `facts`): from recent
    // answers when they cover the call (no I/O), else on the blocking pool, where
    // filesystem and DNS lookups may wait without holding up the async runtime.
    let received_at_ms = req.received_at_ms;
    let facts = match facts::cached(&state.path_cache, &policy, &proposal, agent, received_at_ms) {
        Some(f) => f,
        None => {
            let (st, p, agent) = (state.clone(), proposal.clone(), agent.to_string());
            tokio::task::spawn_blocking(move || facts::gather(&st.path_cache, &policy, &p, &agent, received_at_ms))
                .await
                .map_err(|_| ApiError::from(LedgerError::Unavailable))?
        }
    };
    let redacted = RedactedProposal::of(&proposal, &state.fingerprints);
    // Arguments that held a secret are stored sealed (`store::sealed`).
    let sealed_arguments =
        (!redacted.masked.is_empty()).then(|| state.sealer.seal(&proposal.arguments.to_string(), agent));
    let job = IngestJob {
        redacted,
        sealed_arguments,
        agent: req.agent.to_string(),
        message_id: req.message_id,
        body_sha256: req.body_sha256,
        proposal,
        facts,
    };
    let out = state.ledger.ingest(job).await?;
    Ok(json_response(StatusCode::OK, out.body, out.replay))
}

/// The URL guard (lexical here; delivery resolves and pins), or with
/// `callback_allow_private` only the scheme and absence of credentials.
fn check_callback_url(state: &AppState, url: &str) -> Result<(), String> {
    if !state.config.callback_allow_private {
        return state.callback_guard.check(url, &policy::PureHost).map(|_| ());
    }
    let u = url::Url::parse(url).map_err(|e| format!("not a valid absolute URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || !u.username().is_empty() || u.password().is_some() {
        return Err("only http(s) URLs without credentials".into());
    }
    Ok(())
}

#[derive(serde::Deserialize)]
pub struct WaitQuery {
    wait: Option<String>,
}

/// `GET /api/v1/tool-calls/{id}?wait=N`: the call's state, waiting up to N s for a decision.
#[utoipa::path(
    get, path = "/api/v1/tool-calls/{id}", tag = "tool calls",
    summary = "Read a call, optionally waiting for its decision",
    description = "Long-polls up to `wait` seconds (at most 60) while the call is pending. Signed payload: \
`GET {path?query}\\n`.",
    params(
        ("id" = String, Path, description = "The call id (tc_…)"),
        ("wait" = Option<u64>, Query, description = "Seconds to wait for a decision, 0–60"),
        SignedHeaders,
    ),
    responses(
        (status = 200, body = view::ToolCall),
        (status = 400, body = openapi::ErrorBody),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, description = "No such call of this agent", body = openapi::ErrorBody),
        (status = 409, description = "This webhook-id was already used (`replayed`)", body = openapi::ErrorBody),
    )
)]
pub async fn get_call(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<WaitQuery>,
    req: SignedRequest,
) -> Result<Response, ApiError> {
    let wait = match q.wait.as_deref() {
        None | Some("") => 0,
        Some(w) => w
            .parse::<u64>()
            .ok()
            .filter(|w| *w <= MAX_WAIT_SECS)
            .ok_or(ApiError::InvalidWait(MAX_WAIT_SECS))?,
    };
    // Register before reading, so a decision committed in between still wakes us.
    let waiting = state.waiters.register(&id);
    let notified = waiting.notify.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    let row = own_call(&state, &req, &id).await?;
    if row.status != CallStatus::Pending || wait == 0 {
        return Ok(call_response(&state, &row));
    }
    let deadline = Duration::from_secs(wait);
    let mut stopping = state.hub.shutdown_signal();
    tokio::select! {
        _ = tokio::time::sleep(deadline) => {}
        _ = &mut notified => {}
        _ = stopping.wait_for(|s| *s) => {}
    }
    let row = own_call(&state, &req, &id).await?;
    Ok(call_response(&state, &row))
}

/// A call of this agent; another agent's call is reported as not found.
async fn own_call(state: &AppState, req: &SignedRequest, id: &str) -> Result<calls::CallRow, ApiError> {
    calls::get(&state.db, id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .filter(|r| r.agent_id == req.agent.as_str())
        .ok_or(ApiError::Ledger(LedgerError::NotFound))
}

/// `POST /api/v1/tool-calls/{id}/cancel`: the agent no longer needs the call.
#[utoipa::path(
    post, path = "/api/v1/tool-calls/{id}/cancel", tag = "tool calls",
    summary = "Cancel a pending call",
    params(
        ("id" = String, Path, description = "The call id"),
        SignedHeaders,
    ),
    responses(
        (status = 200, body = view::ToolCall),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, body = openapi::ErrorBody),
        (status = 409, description = "Not pending any more, or the webhook-id was already used", body = openapi::ErrorBody),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    req: SignedRequest,
) -> Result<Response, ApiError> {
    let row = state.ledger.cancel(req.agent.as_str(), &id).await?;
    Ok(call_response(&state, &row))
}

/// `POST /api/v1/tool-calls/{id}/result`: what happened when the agent executed it.
#[utoipa::path(
    post, path = "/api/v1/tool-calls/{id}/result", tag = "tool calls",
    summary = "Report the outcome of an executed call",
    request_body = Outcome,
    params(
        ("id" = String, Path, description = "The call id"),
        SignedHeaders,
    ),
    responses(
        (status = 200, body = view::ToolCall),
        (status = 400, body = openapi::ErrorBody),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, body = openapi::ErrorBody),
        (status = 409, description = "Already reported, the call was not executable, or the webhook-id was already used", body = openapi::ErrorBody),
    )
)]
pub async fn result(
    State(state): State<AppState>,
    Path(id): Path<String>,
    req: SignedRequest,
) -> Result<Response, ApiError> {
    let limits = JsonLimits {
        max_bytes: 64 * 1024,
        max_depth: 4,
    };
    let v = policy::parse_strict(&req.body, limits)?;
    let outcome = Outcome::from_json(&v).map_err(|(code, message)| ApiError::InvalidBody { code, message })?;
    let row = state.ledger.report(req.agent.as_str(), &id, outcome).await?;
    Ok(call_response(&state, &row))
}
