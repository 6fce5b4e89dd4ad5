//! What a server function (and the services behind it) may answer instead of its
//! result: one typed error, sent as JSON, so pages match on the kind of failure instead
//! of parsing messages. Internal failures carry no detail: the server logs them.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    #[error("sign in first")]
    Unauthenticated,
    /// The role may not do this.
    #[error("your role ({0}) may not do this")]
    Forbidden(String),
    /// The CSRF token did not match.
    #[error("the form has expired; reload the page and try again")]
    FormExpired,
    /// Refused for a reason about this person and this thing (e.g. reviewing their own
    /// override), not their role.
    #[error("{0}")]
    NotAllowed(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    /// A server-side failure; the reference finds it in the server's log.
    #[error("something went wrong on the server (reference {0})")]
    Internal(String),
    /// The browser could not reach the server.
    #[error("the server could not be reached; check your connection")]
    Unreachable,
    /// The request or answer could not be encoded or read (a version mismatch, a bug).
    #[error("something went wrong; try again")]
    Protocol(String),
}

impl AppError {
    /// The HTTP status the server answers with.
    pub fn status(&self) -> u16 {
        match self {
            AppError::Unauthenticated => 401,
            AppError::Forbidden(_) | AppError::NotAllowed(_) | AppError::FormExpired => 403,
            AppError::Invalid(_) | AppError::Conflict(_) => 400,
            AppError::NotFound => 404,
            AppError::Internal(_) | AppError::Protocol(_) => 500,
            AppError::Unreachable => 503,
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(e: ServerFnErrorErr) -> AppError {
        match e {
            ServerFnErrorErr::Request(_) => AppError::Unreachable,
            // The request's fields did not parse: the client's mistake, answered 400.
            ServerFnErrorErr::Args(m) | ServerFnErrorErr::MissingArg(m) => {
                crate::components::shell::set_status(400);
                AppError::Invalid(format!("the request's fields are not valid: {m}"))
            }
            other => AppError::Protocol(other.to_string()),
        }
    }
}

/// The sentence a person should read, in English.
pub fn error_text(e: &AppError) -> String {
    error_text_in(crate::i18n::Tr::default(), e)
}

/// The sentence a person should read, in the language of `tr`. The messages the server
/// wrote itself (refusals, invalid input, conflicts) are shown as they came.
pub fn error_text_in(tr: crate::i18n::Tr, e: &AppError) -> String {
    match e {
        AppError::Unauthenticated => tr.t("error.unauthenticated").to_string(),
        AppError::Forbidden(role) => {
            let role = match role.as_str() {
                "admin" => tr.t("role.admin"),
                "reviewer" => tr.t("role.reviewer"),
                "oncall" => tr.t("role.oncall"),
                "auditor" => tr.t("role.auditor"),
                other => other,
            };
            tr.f("error.forbidden", &[("role", role)])
        }
        AppError::FormExpired => tr.t("error.form_expired").to_string(),
        AppError::NotAllowed(m) | AppError::Invalid(m) | AppError::Conflict(m) => m.clone(),
        AppError::NotFound => tr.t("error.not_found").to_string(),
        AppError::Internal(reference) => tr.f("error.internal", &[("reference", reference)]),
        AppError::Unreachable => tr.t("error.unreachable").to_string(),
        AppError::Protocol(_) => tr.t("error.protocol").to_string(),
    }
}
