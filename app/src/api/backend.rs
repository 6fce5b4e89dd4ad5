//! What server functions need from the server, as small traits per area so this crate
//! does not depend on the server (which depends on it). The server provides them as
//! [`Services`] in the Leptos context of every request.

use super::{
    AppError, AuditSummary, CallDetail, DecisionOutcome, GrantList, GrantScopeKind, QueueQuery, QueueSnapshot, Role,
    StatsSummary, UserView, Verdict,
};
use std::sync::Arc;

/// A decision as a reviewer submitted it (free text not yet checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionInput {
    pub verdict: Verdict,
    /// Reject reason, or comment for modify / skip.
    pub text: String,
    /// The edited (redacted) arguments as JSON text, for modify.
    pub arguments: String,
    /// Approve-all for the rest of the session.
    pub grant: Option<(GrantScopeKind, i64)>,
}

/// Managing people (the admin page).
#[async_trait::async_trait]
pub trait UserAdmin: Send + Sync + 'static {
    async fn list_users(&self) -> Result<Vec<UserView>, AppError>;
    async fn add_user(
        &self,
        actor: &UserView,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserView, AppError>;
    async fn set_role(&self, actor: &UserView, user_id: i64, role: Role) -> Result<(), AppError>;
    async fn set_disabled(&self, actor: &UserView, user_id: i64, disabled: bool) -> Result<(), AppError>;
}

/// The reviewer's desk: the queue, a call, decisions and grants.
#[async_trait::async_trait]
pub trait ReviewDesk: Send + Sync + 'static {
    async fn queue(&self, query: &QueueQuery) -> Result<QueueSnapshot, AppError>;
    async fn call_detail(&self, id: &str) -> Result<CallDetail, AppError>;
    /// Apply one decision; the outcome says whether it worked and why not.
    async fn decide(&self, actor: &UserView, id: &str, input: DecisionInput) -> DecisionOutcome;
    async fn grants(&self) -> Result<GrantList, AppError>;
    async fn revoke_grant(&self, actor: &UserView, id: &str) -> Result<(), AppError>;
    /// The held call's arguments with nothing redacted (pretty JSON), for someone allowed
    /// to see secrets who must retype one into a modification. Audited before it is returned.
    async fn reveal_arguments(&self, actor: &UserView, id: &str) -> Result<String, AppError>;
}

/// What the stats and audit pages read.
#[async_trait::async_trait]
pub trait Insight: Send + Sync + 'static {
    async fn stats_summary(&self) -> Result<StatsSummary, AppError>;
    /// The chain's length and its `limit` latest events.
    async fn audit_latest(&self, limit: u32) -> Result<AuditSummary, AppError>;
}

/// The services server functions call, provided by the server in the Leptos context of
/// every request (tests may provide fakes of each).
#[derive(Clone)]
pub struct Services {
    pub users: Arc<dyn UserAdmin>,
    pub review: Arc<dyn ReviewDesk>,
    pub insight: Arc<dyn Insight>,
}
