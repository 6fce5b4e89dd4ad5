//! What server functions need from the server, as small traits per area so this crate
//! does not depend on the server (which depends on it). The server provides them as
//! [`Services`] in the Leptos context of every request.

use super::{
    AgentView, AppError, AuditPage, AuditQuery, CallDetail, ChainCheck, DecisionOutcome, GrantList, GrantScopeKind,
    IssuedSecret, QueueQuery, QueueSnapshot, Role, StatsSummary, UserView, Verdict,
};
use super::{
    BreakGlassView, ChannelInput, ChannelView, LinkView, OverrideList, PolicyCheck, PolicyPage, ReplayReport,
    ShadowReport, StatsRange, TraceKind, TraceView,
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
    /// Remember the language `user` chose for themselves.
    async fn set_locale(&self, user: &UserView, locale: crate::i18n::Locale) -> Result<(), AppError>;
}

/// Agents and their signing secrets (the admin page). Every change is audited.
#[async_trait::async_trait]
pub trait AgentAdmin: Send + Sync + 'static {
    async fn agents(&self) -> Result<Vec<AgentView>, AppError>;
    /// Create an agent; its secret is in the answer and nowhere else.
    async fn add_agent(&self, actor: &UserView, id: &str, description: &str) -> Result<IssuedSecret, AppError>;
    /// Issue a new secret; the earlier ones stay valid for `grace_seconds` more.
    async fn rotate_agent(&self, actor: &UserView, id: &str, grace_seconds: i64) -> Result<IssuedSecret, AppError>;
    async fn set_agent_disabled(&self, actor: &UserView, id: &str, disabled: bool) -> Result<(), AppError>;
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
    /// The Stats page's charts over `range` (`24h`, `7d`, `30d`).
    async fn stats_range(&self, range: &str) -> Result<StatsRange, AppError>;
    /// What shadow rules would have done since `since` (`7d`, a date, …), for one agent or all.
    async fn shadow_report(&self, since: &str, agent: &str) -> Result<ShadowReport, AppError>;
    /// Whether a role may read the audit trail (auditors and admins; reviewers by config).
    fn audit_open_to(&self, role: Role) -> bool;
    /// One page of a search over the audit trail.
    async fn audit_search(&self, query: &AuditQuery) -> Result<AuditPage, AppError>;
    /// Everything recorded for one session or trace id.
    async fn trace(&self, kind: TraceKind, id: &str) -> Result<TraceView, AppError>;
    /// The fingerprint the trail records for a secret value, to search for where it was
    /// sent (the lookup is recorded; the value is not).
    async fn secret_fingerprint(&self, actor: &UserView, value: &str) -> Result<String, AppError>;
    /// Check the whole chain and its signed checkpoints now (recorded in the trail).
    async fn verify_chain(&self, actor: &UserView) -> Result<ChainCheck, AppError>;
}

/// On-call: break-glass, overrides and their post-hoc review.
#[async_trait::async_trait]
pub trait OnCall: Send + Sync + 'static {
    /// Overrides in force now (read on every page render for the banner: no I/O).
    fn break_glass_now(&self) -> Vec<BreakGlassView>;
    /// Start break-glass: the password again, a justification and a duration.
    async fn start_break_glass(
        &self,
        actor: &UserView,
        password: &str,
        justification: &str,
        minutes: i64,
    ) -> Result<BreakGlassView, AppError>;
    /// End a break-glass early (the person who started it, or an admin).
    async fn end_break_glass(&self, actor: &UserView, id: &str) -> Result<(), AppError>;
    /// Release a held call under the actor's break-glass.
    async fn override_call(&self, actor: &UserView, id: &str) -> DecisionOutcome;
    async fn overrides(&self) -> Result<OverrideList, AppError>;
    /// Agree with (`agree = true`) or flag an override; a flag needs a note.
    async fn acknowledge(&self, actor: &UserView, call_id: &str, agree: bool, note: &str) -> Result<(), AppError>;
    /// What a decision link proposes (it decides nothing by itself).
    async fn open_link(&self, token: &str) -> Result<LinkView, AppError>;
    /// Decide as the link proposes, once, as the signed-in actor with every usual check.
    async fn confirm_link(&self, actor: &UserView, token: &str, reason: &str) -> Result<DecisionOutcome, AppError>;
}

/// Outbound notification channels (the admin page).
#[async_trait::async_trait]
pub trait NotifyAdmin: Send + Sync + 'static {
    async fn channels(&self) -> Result<Vec<ChannelView>, AppError>;
    async fn add_channel(&self, actor: &UserView, input: ChannelInput) -> Result<(), AppError>;
    async fn remove_channel(&self, actor: &UserView, name: &str) -> Result<(), AppError>;
    /// Send a test notice now; the channel's error when it failed.
    async fn test_channel(&self, actor: &UserView, name: &str) -> Result<String, AppError>;
}

/// The policy in force: its text and history, changing it, and replays (admins).
#[async_trait::async_trait]
pub trait PolicyAdmin: Send + Sync + 'static {
    async fn policy_page(&self) -> Result<PolicyPage, AppError>;
    /// Does `source` compile, and to which version (nothing is stored).
    fn check_policy(&self, source: &str) -> PolicyCheck;
    /// Put `source` in force (and write it to the policy file); refused with its problems.
    async fn apply_policy(&self, actor: &UserView, source: &str, note: &str) -> PolicyCheck;
    /// Put a kept earlier version back in force.
    async fn rollback_policy(&self, actor: &UserView, version: &str, note: &str) -> PolicyCheck;
    /// Keep `source` as a version to replay (nothing is put in force).
    async fn draft_policy(&self, actor: &UserView, source: &str) -> PolicyCheck;
    /// What kept version `version` would have done to the calls since `since`.
    async fn replay(&self, actor: &UserView, version: &str, since: &str, agent: &str)
        -> Result<ReplayReport, AppError>;
}

/// The services server functions call, provided by the server in the Leptos context of
/// every request (tests may provide fakes of each).
#[derive(Clone)]
pub struct Services {
    pub users: Arc<dyn UserAdmin>,
    pub agents: Arc<dyn AgentAdmin>,
    pub review: Arc<dyn ReviewDesk>,
    pub insight: Arc<dyn Insight>,
    pub oncall: Arc<dyn OnCall>,
    pub notify: Arc<dyn NotifyAdmin>,
    pub policy: Arc<dyn PolicyAdmin>,
}
