//! The agent API (`/api/v1/…`): signature check, parse at the edge, hand to the ledger.
//!
//! What is signed: `POST /api/v1/tool-calls` follows Standard Webhooks exactly
//! (`{id}.{timestamp}.{body}`). Requests without their own body to bind (GET, cancel)
//! and `result` sign `"{METHOD} {path?query}\n{body}"` in place of the body, so a captured
//! signature cannot be replayed against another call.

pub mod facts;
pub mod openapi;
pub mod proposal;
pub mod record;
pub mod replay;
pub mod signature;
pub mod view;

use crate::agents::AgentId;
use crate::audit::NewEvent;
use crate::ledger::LedgerError;
use crate::state::AppState;
use crate::store::{self, calls};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use policy::JsonLimits;
use proposal::Proposal;
use record::{IngestJob, Outcome, RedactedProposal};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use signature::SignatureError;
use std::net::SocketAddr;
use std::time::Duration;

/// Longest long-poll, seconds.
pub const MAX_WAIT_SECS: u64 = 60;

/// An error as agents see it: status + `{"error": {"code", "message"}}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds to wait before retrying (429 and 503), sent as `Retry-After`.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    fn retry_after(mut self, secs: u64) -> ApiError {
        self.retry_after = Some(secs.max(1));
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = crate::error::json_error(self.status, self.code, &self.message).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(s));
        }
        r
    }
}

impl From<LedgerError> for ApiError {
    fn from(e: LedgerError) -> ApiError {
        let (status, code) = match &e {
            LedgerError::Conflict => (StatusCode::UNAUTHORIZED, "replay_mismatch"),
            LedgerError::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            LedgerError::NotPending(_) => (StatusCode::CONFLICT, "not_pending"),
            LedgerError::AlreadyReported => (StatusCode::CONFLICT, "result_already_reported"),
            LedgerError::NotExecutable(_) => (StatusCode::CONFLICT, "not_executable"),
            LedgerError::TooManyPending(_) => {
                return ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too_many_pending",
                    format!("{e}; retry this request (same webhook-id) once some are decided"),
                )
                .retry_after(30)
            }
            LedgerError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

fn header_str<'a>(h: &'a HeaderMap, name: &'static str) -> Result<&'a str, SignatureError> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .ok_or(SignatureError::MissingHeader(name))
}

/// A request whose signature checked out.
pub struct Signed {
    pub agent: AgentId,
    pub message_id: String,
}

/// Verify the agent headers and signature over `payload`. Failures are audited
/// (rate-limited per address, so a flood cannot fill the disk) and answered with 401.
async fn authenticate(
    state: &AppState,
    peer: SocketAddr,
    path: &str,
    headers: &HeaderMap,
    payload: &[u8],
) -> Result<Signed, ApiError> {
    let claimed = headers.get("airlock-agent").and_then(|v| v.to_str().ok()).unwrap_or("");
    let result = verify_request(state, headers, payload).await;
    if let Err(e) = &result {
        if e.status == StatusCode::UNAUTHORIZED {
            tracing::warn!(agent = %claimed, code = e.code, %peer, "agent request refused");
            if state.auth_failures.check_key(&peer.ip()).is_ok() {
                state.ledger.audit(NewEvent {
                    kind: "agent_auth_failed",
                    actor: format!("address:{}", peer.ip()),
                    call_id: None,
                    session_id: None,
                    data: json!({
                        "agent": claimed.chars().take(64).collect::<String>(),
                        "code": e.code, "path": path.chars().take(256).collect::<String>(),
                        "message_id": headers.get("webhook-id").and_then(|v| v.to_str().ok())
                            .map(|s| s.chars().take(128).collect::<String>()),
                    }),
                });
            }
        }
    }
    result
}

async fn verify_request(state: &AppState, headers: &HeaderMap, payload: &[u8]) -> Result<Signed, ApiError> {
    let unauthorized = |e: SignatureError| ApiError::new(StatusCode::UNAUTHORIZED, e.code(), e.message());
    let agent = header_str(headers, "airlock-agent").map_err(unauthorized)?;
    let id = header_str(headers, "webhook-id").map_err(unauthorized)?;
    let ts = header_str(headers, "webhook-timestamp").map_err(unauthorized)?;
    let sig = header_str(headers, "webhook-signature").map_err(unauthorized)?;
    if id.len() > 256 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_message_id",
            "webhook-id is longer than 256 bytes",
        ));
    }
    signature::check_timestamp(ts, store::now_ms() / 1000).map_err(unauthorized)?;
    let agent = AgentId::parse(agent)
        .map_err(|_| ApiError::new(StatusCode::UNAUTHORIZED, "unknown_agent", "no agent with this id"))?;
    let lookup = |fresh: bool| {
        let agent = &agent;
        async move {
            state
                .credentials
                .get(&state.db, &state.key, agent, fresh)
                .await
                .map_err(|e| internal(&e))?
                .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unknown_agent", "no agent with this id"))
        }
    };
    let mut creds = lookup(false).await?;
    if !creds.disabled && signature::verify(&creds.secrets, id, ts, payload, sig) == Err(SignatureError::Mismatch) {
        creds = lookup(true).await?;
    }
    if creds.disabled {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "agent_disabled",
            "this agent is disabled",
        ));
    }
    signature::verify(&creds.secrets, id, ts, payload, sig).map_err(unauthorized)?;
    Ok(Signed {
        agent,
        message_id: id.to_string(),
    })
}

fn internal(e: &dyn std::fmt::Display) -> ApiError {
    let reference = uuid::Uuid::new_v4().simple().to_string();
    tracing::error!(error = %e, %reference, "agent API internal error");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        format!("temporarily unavailable (reference {reference})"),
    )
}

/// Read the body, refusing more than `limit` bytes with 413.
async fn read_body(body: Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than {limit} bytes"),
        )
    };
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > limit as u64 {
            return Err(too_large());
        }
    }
    axum::body::to_bytes(body, limit).await.map_err(|_| too_large())
}

/// Read a small body (at most 64 KiB) and check the signature bound to method, path and body.
async fn signed_body(
    state: &AppState,
    peer: SocketAddr,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Signed, Bytes), ApiError> {
    let bytes = read_body(body, headers, 64 * 1024).await?;
    let payload = bound_payload(method, uri, &bytes);
    let signed = authenticate(state, peer, uri.path(), headers, &payload).await?;
    once(state, peer, &signed, uri.path(), &payload)?;
    Ok((signed, bytes))
}

/// Refuse a second use of a webhook-id on requests that are not stored (see `replay`).
/// A reused id with another payload is audited: it is a forgery attempt or a broken client.
fn once(state: &AppState, peer: SocketAddr, signed: &Signed, path: &str, payload: &[u8]) -> Result<(), ApiError> {
    use replay::Seen;
    let window_ms = 2 * signature::TOLERANCE_SECS * 1000;
    let hash: [u8; 32] = Sha256::digest(payload).into();
    match state.seen.check(
        signed.agent.as_str(),
        &signed.message_id,
        hash,
        store::now_ms(),
        window_ms,
    ) {
        Seen::New => Ok(()),
        Seen::Replay => Err(ApiError::new(
            StatusCode::CONFLICT,
            "replayed",
            "this webhook-id was already used; sign every request with a new webhook-id",
        )),
        Seen::Mismatch => {
            state.ledger.audit(NewEvent {
                kind: "agent_replay_refused",
                actor: format!("agent:{}", signed.agent.as_str()),
                call_id: None,
                session_id: None,
                data: json!({
                    "message_id": signed.message_id, "path": path.chars().take(256).collect::<String>(),
                    "address": peer.ip().to_string(), "why": "webhook-id reused with a different request",
                }),
            });
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "replay_mismatch",
                "this webhook-id was already used for a different request",
            ))
        }
        Seen::Full => Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "this agent sent too many requests in the last ten minutes; retry after the pause",
        )
        .retry_after(5)),
    }
}

/// The payload that requests other than the ingest POST sign.
fn bound_payload(method: &Method, uri: &Uri, body: &[u8]) -> Vec<u8> {
    let target = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    signature::bound_payload(method.as_str(), target, body)
}

fn json_response(status: StatusCode, body: String, replay: bool) -> Response {
    let mut r = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if replay {
        r.headers_mut()
            .insert("idempotent-replayed", header::HeaderValue::from_static("true"));
    }
    r
}

/// `POST /api/v1/tool-calls`: propose a tool call; the decision is in the body.
#[utoipa::path(
    post, path = "/api/v1/tool-calls", tag = "tool calls",
    summary = "Propose a tool call",
    description = "The decision is in the body whatever it is. A retry with the same webhook-id and body \
returns the original answer (header `idempotent-replayed: true`).",
    request_body = openapi::ToolCallRequest,
    params(
        ("airlock-agent" = String, Header, description = "The agent id"),
        ("webhook-id" = String, Header, description = "Unique message id"),
        ("webhook-timestamp" = i64, Header, description = "Unix seconds"),
        ("webhook-signature" = String, Header, description = "v1,<base64 HMAC-SHA256>"),
    ),
    responses(
        (status = 200, description = "Decided or held", body = openapi::ToolCall),
        (status = 400, description = "Malformed body", body = openapi::ErrorBody),
        (status = 401, description = "Signature refused, or webhook-id reused with another body", body = openapi::ErrorBody),
        (status = 413, description = "Body over the size limit", body = openapi::ErrorBody),
        (status = 429, description = "Over the agent's rate limit or held-call cap; retry the same request after `Retry-After`", body = openapi::ErrorBody),
        (status = 503, description = "Temporarily unavailable; retry with the same webhook-id", body = openapi::ErrorBody),
    )
)]
pub async fn propose(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let received_at_ms = store::now_ms();
    let bytes = read_body(body, &headers, state.config.max_body_bytes).await?;
    let signed = authenticate(&state, peer, "/api/v1/tool-calls", &headers, &bytes).await?;
    if let Some(limiter) = &state.agent_rate {
        if let Err(not_until) = limiter.check_key(&signed.agent.as_str().to_string()) {
            let clock = governor::clock::DefaultClock::default();
            let wait = not_until.wait_time_from(governor::clock::Clock::now(&clock));
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "this agent sends more than {} proposals per second; retry after the pause",
                    state.config.agent_rate_per_second
                ),
            )
            .retry_after(wait.as_secs_f64().ceil() as u64));
        }
    }
    let limits = JsonLimits {
        max_bytes: state.config.max_body_bytes,
        max_depth: state.policy.limits.max_depth,
    };
    let value = policy::parse_strict(&bytes, limits).map_err(|e| {
        let status = match e {
            policy::JsonError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, e.code(), e.to_string())
    })?;
    let proposal =
        Proposal::from_json(value).map_err(|(code, msg)| ApiError::new(StatusCode::BAD_REQUEST, code, msg))?;
    if let Some(url) = &proposal.callback_url {
        check_callback_url(&state, url).map_err(|why| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_callback_url",
                format!("callback_url refused: {why}"),
            )
        })?;
    }
    // Gather host facts here, in parallel with other requests (see `facts`): from recent
    // answers when they cover the call (no I/O), else on the blocking pool, where
    // filesystem and DNS lookups may wait without holding up the async runtime.
    let agent = signed.agent.as_str();
    let facts = match facts::cached(&state.path_cache, &state.policy, &proposal, agent, received_at_ms) {
        Some(f) => f,
        None => {
            let (st, p, agent) = (state.clone(), proposal.clone(), agent.to_string());
            tokio::task::spawn_blocking(move || facts::gather(&st.path_cache, &st.policy, &p, &agent, received_at_ms))
                .await
                .map_err(|_| ApiError::from(LedgerError::Unavailable))?
        }
    };
    let job = IngestJob {
        redacted: RedactedProposal::of(&proposal),
        agent: signed.agent.to_string(),
        message_id: signed.message_id,
        body_sha256: Sha256::digest(&bytes).into(),
        proposal,
        facts,
        received_at_ms,
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
        ("airlock-agent" = String, Header, description = "The agent id"),
        ("webhook-id" = String, Header, description = "Unique message id"),
        ("webhook-timestamp" = i64, Header, description = "Unix seconds"),
        ("webhook-signature" = String, Header, description = "v1,<base64 HMAC-SHA256>"),
    ),
    responses(
        (status = 200, body = openapi::ToolCall),
        (status = 400, body = openapi::ErrorBody),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, description = "No such call of this agent", body = openapi::ErrorBody),
        (status = 409, description = "This webhook-id was already used (`replayed`)", body = openapi::ErrorBody),
    )
)]
pub async fn get_call(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    Query(q): Query<WaitQuery>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let payload = bound_payload(&method, &uri, b"");
    let signed = authenticate(&state, peer, uri.path(), &headers, &payload).await?;
    once(&state, peer, &signed, uri.path(), &payload)?;
    let wait = match q.wait.as_deref() {
        None | Some("") => 0,
        Some(w) => w.parse::<u64>().ok().filter(|w| *w <= MAX_WAIT_SECS).ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_wait",
                format!("wait must be whole seconds from 0 to {MAX_WAIT_SECS}"),
            )
        })?,
    };
    // Register before reading, so a decision committed in between still wakes us.
    let waiting = state.waiters.register(&id);
    let notified = waiting.notify.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    let row = own_call(&state, &signed, &id).await?;
    if row.status != "pending" || wait == 0 {
        return Ok(json_response(StatusCode::OK, view::call_view(&row).to_string(), false));
    }
    let deadline = Duration::from_secs(wait);
    let mut stopping = state.hub.shutdown_signal();
    tokio::select! {
        _ = tokio::time::sleep(deadline) => {}
        _ = &mut notified => {}
        _ = stopping.wait_for(|s| *s) => {}
    }
    let row = own_call(&state, &signed, &id).await?;
    Ok(json_response(StatusCode::OK, view::call_view(&row).to_string(), false))
}

/// A call of this agent; another agent's call is reported as not found.
async fn own_call(state: &AppState, signed: &Signed, id: &str) -> Result<calls::CallRow, ApiError> {
    calls::get(&state.db, id)
        .await
        .map_err(|e| internal(&e))?
        .filter(|r| r.agent_id == signed.agent.as_str())
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such tool call"))
}

/// `POST /api/v1/tool-calls/{id}/cancel`: the agent no longer needs the call.
#[utoipa::path(
    post, path = "/api/v1/tool-calls/{id}/cancel", tag = "tool calls",
    summary = "Cancel a pending call",
    params(
        ("id" = String, Path, description = "The call id"),
        ("airlock-agent" = String, Header, description = "The agent id"),
        ("webhook-id" = String, Header, description = "Unique message id"),
        ("webhook-timestamp" = i64, Header, description = "Unix seconds"),
        ("webhook-signature" = String, Header, description = "v1,<base64 HMAC-SHA256>"),
    ),
    responses(
        (status = 200, body = openapi::ToolCall),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, body = openapi::ErrorBody),
        (status = 409, description = "Not pending any more, or the webhook-id was already used", body = openapi::ErrorBody),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (signed, _) = signed_body(&state, peer, &method, &uri, &headers, body).await?;
    let row = state.ledger.cancel(signed.agent.as_str(), &id).await?;
    Ok(json_response(StatusCode::OK, view::call_view(&row).to_string(), false))
}

/// `POST /api/v1/tool-calls/{id}/result`: what happened when the agent executed it.
#[utoipa::path(
    post, path = "/api/v1/tool-calls/{id}/result", tag = "tool calls",
    summary = "Report the outcome of an executed call",
    request_body = openapi::ResultRequest,
    params(
        ("id" = String, Path, description = "The call id"),
        ("airlock-agent" = String, Header, description = "The agent id"),
        ("webhook-id" = String, Header, description = "Unique message id"),
        ("webhook-timestamp" = i64, Header, description = "Unix seconds"),
        ("webhook-signature" = String, Header, description = "v1,<base64 HMAC-SHA256>"),
    ),
    responses(
        (status = 200, body = openapi::ToolCall),
        (status = 400, body = openapi::ErrorBody),
        (status = 401, body = openapi::ErrorBody),
        (status = 404, body = openapi::ErrorBody),
        (status = 409, description = "Already reported, the call was not executable, or the webhook-id was already used", body = openapi::ErrorBody),
    )
)]
pub async fn result(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (signed, bytes) = signed_body(&state, peer, &method, &uri, &headers, body).await?;
    let v = policy::parse_strict(
        &bytes,
        JsonLimits {
            max_bytes: 64 * 1024,
            max_depth: 4,
        },
    )
    .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.code(), e.to_string()))?;
    let outcome = parse_outcome(&v).map_err(|(code, m)| ApiError::new(StatusCode::BAD_REQUEST, code, m))?;
    let row = state.ledger.report(signed.agent.as_str(), &id, outcome).await?;
    Ok(json_response(StatusCode::OK, view::call_view(&row).to_string(), false))
}

fn parse_outcome(v: &Value) -> Result<Outcome, (&'static str, String)> {
    let Value::Object(m) = v else {
        return Err(("invalid_body", "the body must be a JSON object".into()));
    };
    if let Some(k) = m
        .keys()
        .find(|k| !["outcome", "summary", "duration_ms"].contains(&k.as_str()))
    {
        return Err(("unknown_field", format!("unknown field \"{k}\"")));
    }
    let ok = match m.get("outcome").and_then(Value::as_str) {
        Some("ok") => true,
        Some("error") => false,
        Some(_) => return Err(("invalid_field", "outcome must be \"ok\" or \"error\"".into())),
        None => return Err(("missing_field", "outcome is required".into())),
    };
    let summary = match m.get("summary") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() <= 16 * 1024 => Some(s.clone()),
        Some(_) => return Err(("invalid_field", "summary must be a string of at most 16 KiB".into())),
    };
    let duration_ms = match m.get("duration_ms") {
        None | Some(Value::Null) => None,
        Some(d) => Some(d.as_i64().filter(|d| *d >= 0).ok_or((
            "invalid_field",
            "duration_ms must be a non-negative integer".to_string(),
        ))?),
    };
    Ok(Outcome {
        ok,
        summary,
        duration_ms,
    })
}
