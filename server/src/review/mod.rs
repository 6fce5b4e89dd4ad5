//! Reviewer decisions on held calls: approve (towards a quorum), reject, modify, skip,
//! approve-all grants and their revocation.
//!
//! Checks that need the policy engine or the host (re-validating modified arguments)
//! run in [`crate::backend`] before a decision reaches the ledger; the ledger applies it
//! serially, so of two reviewers acting at once exactly one wins.

pub mod decide;
pub mod grants;
pub mod unredact;
pub mod view;

use app::api::CallStatus;
use serde_json::Value;

/// What a reviewer decided.
#[derive(Debug, Clone)]
pub enum Action {
    Approve {
        grant: Option<GrantRequest>,
    },
    Reject {
        reason: String,
    },
    /// `arguments` are the raw arguments to release, already un-redacted; `facts` are
    /// what the guards learnt about them from this host (gathered off the writer). The
    /// ledger judges them on every layer.
    Modify {
        arguments: Value,
        comment: Option<String>,
        facts: crate::ingest::facts::Facts,
    },
    Skip {
        comment: Option<String>,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Approve { .. } => "approve",
            Action::Reject { .. } => "reject",
            Action::Modify { .. } => "modify",
            Action::Skip { .. } => "skip",
        }
    }
}

/// "Approve all" for the rest of the call's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantRequest {
    pub scope: GrantKind,
    pub minutes: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantKind {
    Tool,
    Server,
}

impl GrantKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GrantKind::Tool => "tool",
            GrantKind::Server => "server",
        }
    }
}

/// Longest grant a reviewer may give (a working day).
pub const MAX_GRANT_MINUTES: i64 = 8 * 60;
/// Longest reject reason or comment kept.
pub const MAX_COMMENT_CHARS: usize = 2000;

/// A decision request as the ledger receives it.
#[derive(Debug, Clone)]
pub struct Review {
    pub call_id: String,
    /// `user:NAME`.
    pub reviewer: String,
    pub action: Action,
}

/// What a review did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewed {
    /// The call's status afterwards (`pending` while a quorum is incomplete).
    pub status: CallStatus,
    pub approvals: Vec<String>,
    pub approvers_required: i64,
    pub grant_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("no such call")]
    NotFound,
    #[error("already {status} by {by}")]
    AlreadyDecided { status: CallStatus, by: String },
    #[error("this call expired before the decision; the agent was told it expired")]
    Expired,
    #[error("you have already approved this call; it needs another reviewer")]
    AlreadyApproved,
    #[error("{0}")]
    Invalid(String),
    #[error("the policy refuses the arguments ({layer}): {reason}")]
    Refused { layer: String, reason: String },
    #[error("{0}")]
    Forbidden(String),
    #[error("no such active grant")]
    GrantNotFound,
    #[error("the store is unavailable; try again")]
    Unavailable,
}

/// Trim a free-text field, refuse it when too long, and redact it (it is audited and shown).
pub fn clean_text(s: &str, what: &str) -> Result<Option<String>, ReviewError> {
    let t = s.trim();
    if t.chars().count() > MAX_COMMENT_CHARS {
        return Err(ReviewError::Invalid(format!(
            "the {what} is longer than {MAX_COMMENT_CHARS} characters"
        )));
    }
    Ok((!t.is_empty()).then(|| policy::redact::redact_text(t).value))
}

/// The JSON of `context.trust` as stored with calls and grants (`null` when absent).
pub fn trust_of(context: &Value) -> String {
    context.get("trust").unwrap_or(&Value::Null).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comments_are_trimmed_bounded_and_redacted() {
        assert_eq!(clean_text("  ", "reason").unwrap(), None);
        assert_eq!(clean_text(" no ", "reason").unwrap().as_deref(), Some("no"));
        assert!(clean_text(&"x".repeat(MAX_COMMENT_CHARS + 1), "reason").is_err());
        let r = clean_text("use key AKIAIOSFODNN7EXAMPLE instead", "reason")
            .unwrap()
            .unwrap();
        assert!(!r.contains("AKIAIOSFODNN7EXAMPLE"), "{r}");
    }

    #[test]
    fn trust_is_the_json_of_context_trust() {
        assert_eq!(trust_of(&json!({"trust": "isolated"})), "\"isolated\"");
        assert_eq!(trust_of(&json!({})), "null");
        assert_eq!(trust_of(&Value::Null), "null");
    }
}
