//! Every way the agent API refuses a request: one enum, each variant with its HTTP
//! status and a stable machine-readable code (part of the API contract), answered as
//! `{"error": {"code", "message"}}` with `Retry-After` where a retry helps.

use super::signature::SignatureError;
use crate::ledger::LedgerError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// A signature header is missing, malformed, stale or does not match.
    #[error("{}", .0.message())]
    Signature(SignatureError),
    #[error("no agent with this id")]
    UnknownAgent,
    #[error("this agent is disabled")]
    AgentDisabled,
    #[error("webhook-id is longer than 256 bytes")]
    InvalidMessageId,
    /// A second use of a webhook-id on a request that is not stored (GET, cancel, result).
    #[error("this webhook-id was already used; sign every request with a new webhook-id")]
    Replayed,
    /// A webhook-id used again with another payload: a forgery attempt or a broken client.
    #[error("this webhook-id was already used for a different request")]
    ReplayMismatch,
    #[error("the body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// The body is not what the endpoint accepts; `code` names the problem
    /// (`malformed_json`, `duplicate_key`, `missing_field`, `unknown_field`, …).
    #[error("{message}")]
    InvalidBody { code: &'static str, message: String },
    #[error("callback_url refused: {0}")]
    InvalidCallbackUrl(String),
    #[error("wait must be whole seconds from 0 to {0}")]
    InvalidWait(u64),
    #[error("{message}")]
    RateLimited { message: String, retry_after: u64 },
    /// What the ledger refused (not found, not pending, held-call cap, …).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// Something inside failed; the reference finds it in the server's log.
    #[error("temporarily unavailable (reference {0})")]
    Internal(String),
}

impl ApiError {
    /// Log an internal failure and answer with a reference to the log line only.
    pub fn internal(e: &dyn std::fmt::Display) -> ApiError {
        let reference = uuid::Uuid::new_v4().simple().to_string();
        tracing::error!(error = %e, %reference, "agent API internal error");
        ApiError::Internal(reference)
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Signature(_) | ApiError::UnknownAgent | ApiError::AgentDisabled | ApiError::ReplayMismatch => {
                StatusCode::UNAUTHORIZED
            }
            ApiError::InvalidMessageId
            | ApiError::InvalidBody { .. }
            | ApiError::InvalidCallbackUrl(_)
            | ApiError::InvalidWait(_) => StatusCode::BAD_REQUEST,
            ApiError::Replayed => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Ledger(e) => match e {
                LedgerError::Conflict => StatusCode::UNAUTHORIZED,
                LedgerError::NotFound => StatusCode::NOT_FOUND,
                LedgerError::NotPending(_) | LedgerError::AlreadyReported | LedgerError::NotExecutable(_) => {
                    StatusCode::CONFLICT
                }
                LedgerError::TooManyPending(_) | LedgerError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
                LedgerError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            },
        }
    }

    /// The stable code agents match on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Signature(e) => e.code(),
            ApiError::UnknownAgent => "unknown_agent",
            ApiError::AgentDisabled => "agent_disabled",
            ApiError::InvalidMessageId => "invalid_message_id",
            ApiError::Replayed => "replayed",
            ApiError::ReplayMismatch => "replay_mismatch",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::InvalidBody { code, .. } => code,
            ApiError::InvalidCallbackUrl(_) => "invalid_callback_url",
            ApiError::InvalidWait(_) => "invalid_wait",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::Internal(_) => "unavailable",
            ApiError::Ledger(e) => match e {
                LedgerError::Conflict => "replay_mismatch",
                LedgerError::NotFound => "not_found",
                LedgerError::NotPending(_) => "not_pending",
                LedgerError::AlreadyReported => "result_already_reported",
                LedgerError::NotExecutable(_) => "not_executable",
                LedgerError::TooManyPending(_) => "too_many_pending",
                LedgerError::RateLimited { .. } => "rate_limited",
                LedgerError::Unavailable => "unavailable",
            },
        }
    }

    /// Seconds to wait before retrying, sent as `Retry-After`.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after, .. } => Some((*retry_after).max(1)),
            ApiError::Ledger(LedgerError::TooManyPending(_)) => Some(30),
            ApiError::Ledger(LedgerError::RateLimited { retry_after, .. }) => Some((*retry_after).max(1)),
            _ => None,
        }
    }

    fn message(&self) -> String {
        match self {
            ApiError::Ledger(e @ LedgerError::TooManyPending(_)) => {
                format!("{e}; retry this request (same webhook-id) once some are decided")
            }
            other => other.to_string(),
        }
    }
}

impl From<SignatureError> for ApiError {
    fn from(e: SignatureError) -> ApiError {
        ApiError::Signature(e)
    }
}

impl From<policy::JsonError> for ApiError {
    fn from(e: policy::JsonError) -> ApiError {
        match e {
            policy::JsonError::TooLarge { limit, .. } => ApiError::PayloadTooLarge(limit),
            e => ApiError::InvalidBody {
                code: e.code(),
                message: e.to_string(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = crate::error::json_error(self.status(), self.code(), &self.message()).into_response();
        if let Some(s) = self.retry_after() {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

/// Every code the agent API answers with, for its documentation.
pub const CODES: &[&str] = &[
    "missing_signature",
    "bad_timestamp",
    "stale_timestamp",
    "future_timestamp",
    "malformed_signature",
    "bad_signature",
    "unknown_agent",
    "agent_disabled",
    "invalid_message_id",
    "replayed",
    "replay_mismatch",
    "payload_too_large",
    "invalid_body",
    "malformed_json",
    "duplicate_key",
    "json_too_deep",
    "missing_field",
    "invalid_field",
    "unknown_field",
    "invalid_callback_url",
    "invalid_wait",
    "rate_limited",
    "not_found",
    "not_pending",
    "result_already_reported",
    "not_executable",
    "too_many_pending",
    "unavailable",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_listed_code_and_a_client_or_retry_status() {
        let all = [
            ApiError::Signature(SignatureError::Stale),
            ApiError::UnknownAgent,
            ApiError::AgentDisabled,
            ApiError::InvalidMessageId,
            ApiError::Replayed,
            ApiError::ReplayMismatch,
            ApiError::PayloadTooLarge(10),
            ApiError::InvalidCallbackUrl("x".into()),
            ApiError::InvalidWait(60),
            ApiError::RateLimited {
                message: "slow down".into(),
                retry_after: 0,
            },
            ApiError::Ledger(LedgerError::TooManyPending(3)),
            ApiError::Ledger(LedgerError::AlreadyReported),
            ApiError::Internal("r".into()),
        ];
        for e in all {
            assert!(CODES.contains(&e.code()), "{} not listed", e.code());
            let s = e.status();
            assert!(s.is_client_error() || s == StatusCode::SERVICE_UNAVAILABLE, "{s}");
            let wants_retry = s == StatusCode::TOO_MANY_REQUESTS;
            assert_eq!(e.retry_after().is_some(), wants_retry, "{}", e.code());
            if let Some(r) = e.retry_after() {
                assert!(r >= 1);
            }
        }
    }
}
