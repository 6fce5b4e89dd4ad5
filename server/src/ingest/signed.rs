//! The `SignedRequest` extractor: every signed route of the agent API takes one, so
//! verification (headers, timestamp, signature, agent status), the body limit, the
//! one-use rule for webhook-ids and the audit of refusals live in one place.
//!
//! Two schemes, chosen by the handler's type:
//! - [`Webhook`] (`POST /api/v1/tool-calls`): Standard Webhooks over the body exactly; a
//!   retry with the same webhook-id is the idempotent replay the ledger answers.
//! - [`Bound`] (everything else): the signature covers `"{METHOD} {path?query}\n{body}"`,
//!   so it cannot be replayed against another call, and a webhook-id is good for one use.

use super::error::ApiError;
use super::replay::Seen;
use super::signature::{self, SignatureError};
use crate::agents::AgentId;
use crate::audit::NewEvent;
use crate::state::AppState;
use crate::store;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, Request};
use axum::http::{header, HeaderMap};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::net::{Ipv4Addr, SocketAddr};

/// Largest body of the requests other than a proposal.
const SMALL_BODY: usize = 64 * 1024;

/// How a route's requests are signed.
pub trait Scheme: Send + Sync + 'static {
    /// The bytes the signature covers.
    fn payload<'a>(method: &str, target: &str, body: &'a [u8]) -> Cow<'a, [u8]>;
    /// Largest body accepted.
    fn body_limit(state: &AppState) -> usize;
    /// Whether a webhook-id may be used only once (requests the ledger does not store).
    const ONE_USE: bool;
}

/// Standard Webhooks over the body: the proposal endpoint.
pub struct Webhook;

impl Scheme for Webhook {
    fn payload<'a>(_: &str, _: &str, body: &'a [u8]) -> Cow<'a, [u8]> {
        Cow::Borrowed(body)
    }
    fn body_limit(state: &AppState) -> usize {
        state.config.max_body_bytes
    }
    const ONE_USE: bool = false;
}

/// Bound to method and target: reads, cancellations, results.
pub struct Bound;

impl Scheme for Bound {
    fn payload<'a>(method: &str, target: &str, body: &'a [u8]) -> Cow<'a, [u8]> {
        Cow::Owned(signature::bound_payload(method, target, body))
    }
    fn body_limit(_: &AppState) -> usize {
        SMALL_BODY
    }
    const ONE_USE: bool = true;
}

/// A request whose signature checked out: who sent it, its message id and its body.
pub struct SignedRequest<S: Scheme = Bound> {
    pub agent: AgentId,
    pub message_id: String,
    pub body: Bytes,
    /// SHA-256 of the body (a proposal's idempotency check).
    pub body_sha256: [u8; 32],
    pub received_at_ms: i64,
    scheme: PhantomData<S>,
}

impl<S: Scheme> FromRequest<AppState> for SignedRequest<S> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let received_at_ms = store::now_ms();
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)), |c| c.0);
        let (parts, body) = req.into_parts();
        let body = read_body(body, &parts.headers, S::body_limit(state)).await?;
        let target = parts.uri.path_and_query().map_or(parts.uri.path(), |p| p.as_str());
        let payload = S::payload(parts.method.as_str(), target, &body);
        let path = parts.uri.path();
        let (agent, message_id) = authenticate(state, peer, path, &parts.headers, &payload).await?;
        if S::ONE_USE {
            once(state, peer, &agent, &message_id, path, &payload).await?;
        }
        Ok(SignedRequest {
            agent,
            message_id,
            body_sha256: Sha256::digest(&body).into(),
            body,
            received_at_ms,
            scheme: PhantomData,
        })
    }
}

/// Read the body, refusing more than `limit` bytes with 413.
async fn read_body(body: axum::body::Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ApiError::PayloadTooLarge(limit));
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge(limit))
}

/// Verify the agent headers and signature over `payload`. Failures are audited
/// (rate-limited per address, so a flood cannot fill the disk) and answered with 401.
async fn authenticate(
    state: &AppState,
    peer: SocketAddr,
    path: &str,
    headers: &HeaderMap,
    payload: &[u8],
) -> Result<(AgentId, String), ApiError> {
    let result = verify(state, headers, payload).await;
    if let Err(e) = &result {
        if e.status() == axum::http::StatusCode::UNAUTHORIZED {
            let claimed = headers.get("airlock-agent").and_then(|v| v.to_str().ok()).unwrap_or("");
            tracing::warn!(agent = %claimed, code = e.code(), %peer, "agent request refused");
            if state.auth_failures.check_key(&peer.ip()).is_ok() {
                state.ledger.audit(NewEvent {
                    kind: "agent_auth_failed",
                    actor: format!("address:{}", peer.ip()),
                    call_id: None,
                    session_id: None,
                    data: json!({
                        "agent": claimed.chars().take(64).collect::<String>(),
                        "code": e.code(), "path": path.chars().take(256).collect::<String>(),
                        "message_id": headers.get("webhook-id").and_then(|v| v.to_str().ok())
                            .map(|s| s.chars().take(128).collect::<String>()),
                    }),
                });
            }
        }
    }
    result
}

fn header_str<'a>(h: &'a HeaderMap, name: &'static str) -> Result<&'a str, SignatureError> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .ok_or(SignatureError::MissingHeader(name))
}

async fn verify(state: &AppState, headers: &HeaderMap, payload: &[u8]) -> Result<(AgentId, String), ApiError> {
    let agent = header_str(headers, "airlock-agent")?;
    let id = header_str(headers, "webhook-id")?;
    let ts = header_str(headers, "webhook-timestamp")?;
    let sig = header_str(headers, "webhook-signature")?;
    if id.len() > 256 {
        return Err(ApiError::InvalidMessageId);
    }
    signature::check_timestamp(ts, store::now_ms() / 1000)?;
    let agent = AgentId::parse(agent).map_err(|_| ApiError::UnknownAgent)?;
    let lookup = |fresh: bool| {
        let agent = &agent;
        async move {
            state
                .credentials
                .get(&state.db, &state.key, agent, fresh)
                .await
                .map_err(|e| ApiError::internal(&e))?
                .ok_or(ApiError::UnknownAgent)
        }
    };
    // Credentials are cached; a mismatch re-reads them once (the secret may just have
    // been rotated by another process).
    let mut creds = lookup(false).await?;
    let mut checked = (!creds.disabled).then(|| signature::verify(&creds.secrets, id, ts, payload, sig));
    if checked == Some(Err(SignatureError::Mismatch)) {
        creds = lookup(true).await?;
        checked = None;
    }
    if creds.disabled {
        return Err(ApiError::AgentDisabled);
    }
    // Checked once per set of secrets: the MAC is over the whole body.
    checked.unwrap_or_else(|| signature::verify(&creds.secrets, id, ts, payload, sig))?;
    Ok((agent, id.to_string()))
}

/// Refuse a second use of a webhook-id (see `replay`). A reused id with another payload
/// is audited: it is a forgery attempt or a broken client.
async fn once(
    state: &AppState,
    peer: SocketAddr,
    agent: &AgentId,
    message_id: &str,
    path: &str,
    payload: &[u8],
) -> Result<(), ApiError> {
    let window_ms = 2 * signature::TOLERANCE_SECS * 1000;
    let hash: [u8; 32] = Sha256::digest(payload).into();
    // Several instances share PostgreSQL: the guard's memory is there, so a request
    // replayed to another instance is refused too.
    let seen = match store::Backend::of(&state.db) {
        store::Backend::Postgres => {
            store::seen::check(&state.db, agent.as_str(), message_id, &hash, store::now_ms(), window_ms)
                .await
                .map_err(|e| ApiError::internal(&e))?
        }
        store::Backend::Sqlite => state
            .seen
            .check(agent.as_str(), message_id, hash, store::now_ms(), window_ms),
    };
    match seen {
        Seen::New => Ok(()),
        Seen::Replay => Err(ApiError::Replayed),
        Seen::Mismatch => {
            state.ledger.audit(NewEvent {
                kind: "agent_replay_refused",
                actor: format!("agent:{}", agent.as_str()),
                call_id: None,
                session_id: None,
                data: json!({
                    "message_id": message_id, "path": path.chars().take(256).collect::<String>(),
                    "address": peer.ip().to_string(), "why": "webhook-id reused with a different request",
                }),
            });
            Err(ApiError::ReplayMismatch)
        }
        Seen::Full => Err(ApiError::RateLimited {
            message: "this agent sent too many requests in the last ten minutes; retry after the pause".into(),
            retry_after: 5,
        }),
    }
}
