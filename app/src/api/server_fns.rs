//! Server functions: every one is a public endpoint, so each authorises inside itself.
//! Read-only ones are GET (no CSRF token needed); every state-changing one takes the
//! CSRF token as its first argument (forms carry it as a hidden field) and checks it.

use super::{
    AgentView, AppError, AuditPage, AuditQuery, BreakGlassView, CallDetail, ChainReport, ChannelInput, ChannelView,
    DecisionOutcome, GrantList, GrantScopeKind, IssuedSecret, LinkView, OverrideList, PolicyCheck, PolicyPage,
    QueueQuery, QueueSnapshot, ReplayReport, Role, SessionInfo, ShadowReport, StatsRange, StatsSummary, TraceKind,
    TraceView, UserView, Verdict,
};
// Only the server-side bodies check permissions.
#[cfg(feature = "ssr")]
use super::Permission;
use leptos::prelude::*;
use leptos::server_fn::codec::GetUrl;

/// Most calls one batch decision may name.
pub const MAX_BATCH: usize = 200;

#[cfg(feature = "ssr")]
mod guard {
    use crate::api::{AppError, Permission, RequestAuth, Services, UserView};
    use leptos::prelude::*;

    pub fn auth() -> RequestAuth {
        use_context::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<RequestAuth>().cloned())
            .unwrap_or_default()
    }

    pub fn services() -> Result<Services, AppError> {
        use_context::<Services>().ok_or_else(|| fail(AppError::Internal("server is not ready".into())))
    }

    /// Answer with `e`, with its HTTP status (pages rendered without JavaScript see it too),
    /// its sentence in the reader's language when the catalogue knows it.
    pub fn fail(e: AppError) -> AppError {
        crate::components::shell::set_status(e.status());
        let tr = crate::i18n::Tr(auth().locale);
        match e {
            AppError::Invalid(m) => AppError::Invalid(tr.sentence(&m)),
            AppError::Conflict(m) => AppError::Conflict(tr.sentence(&m)),
            AppError::NotAllowed(m) => AppError::NotAllowed(tr.sentence(&m)),
            other => other,
        }
    }

    /// The signed-in user, if their role has permission `p` ([`Role::may`]).
    pub fn require(p: Permission) -> Result<UserView, AppError> {
        let Some(user) = auth().user else {
            return Err(fail(AppError::Unauthenticated));
        };
        if !user.role.may(p) {
            return Err(fail(AppError::Forbidden(user.role.to_string())));
        }
        Ok(user)
    }

    /// [`require`] plus the CSRF token check for state-changing calls.
    pub fn require_csrf(p: Permission, token: &str) -> Result<UserView, AppError> {
        let user = require(p)?;
        check_csrf(token)?;
        Ok(user)
    }

    /// The form's token is this session's (compared in constant time); signed in or not.
    pub fn check_csrf(token: &str) -> Result<(), AppError> {
        let expected = auth().csrf_token.unwrap_or_default();
        if expected.is_empty() || !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), token.as_bytes())) {
            return Err(fail(AppError::FormExpired));
        }
        Ok(())
    }

    /// A service's error, answered with its HTTP status.
    /// Someone who may read the audit trail (their role, or reviewers by configuration).
    pub fn require_audit() -> Result<UserView, AppError> {
        let user = require(Permission::ReadCalls)?;
        if !services()?.insight.audit_open_to(user.role) {
            return Err(fail(AppError::Forbidden(user.role.to_string())));
        }
        Ok(user)
    }

    pub fn map_err(e: AppError) -> AppError {
        fail(e)
    }
}

/// Who is signed in, and the CSRF token for forms (for API clients; pages get it
/// written into the document, see `components::shell::use_session`).
#[server(endpoint = "session", input = GetUrl)]
pub async fn get_session() -> Result<SessionInfo, AppError> {
    Ok(session_from_request())
}

/// The language of the request being served (server only): for the sentences the server
/// writes into its answers (a decision's outcome, say).
#[cfg(feature = "ssr")]
pub fn request_tr() -> crate::i18n::Tr {
    crate::i18n::Tr(guard::auth().locale)
}

/// The session of the request being served (server only).
#[cfg(feature = "ssr")]
pub fn session_from_request() -> SessionInfo {
    let a = guard::auth();
    let reads_audit = a.user.as_ref().is_some_and(|u| {
        guard::services()
            .map(|s| s.insight.audit_open_to(u.role))
            .unwrap_or_else(|_| u.role.may(Permission::ReadAudit))
    });
    let break_glass = match (&a.user, guard::services()) {
        (Some(_), Ok(s)) => s.oncall.break_glass_now(),
        _ => Vec::new(),
    };
    SessionInfo {
        user: a.user,
        csrf_token: a.csrf_token.unwrap_or_default(),
        reads_audit,
        break_glass,
        locale: a.locale,
    }
}

#[server(endpoint = "users/list", input = GetUrl)]
pub async fn list_users() -> Result<Vec<UserView>, AppError> {
    guard::require(Permission::ManageUsers)?;
    guard::services()?.users.list_users().await.map_err(guard::map_err)
}

#[server(endpoint = "users/add")]
pub async fn add_user(
    csrf_token: String,
    username: String,
    password: String,
    role: Role,
) -> Result<UserView, AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .users
        .add_user(&actor, &username, &password, role)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "users/role")]
pub async fn set_role(csrf_token: String, user_id: i64, role: Role) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .users
        .set_role(&actor, user_id, role)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "users/disabled")]
pub async fn set_disabled(csrf_token: String, user_id: i64, disabled: bool) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .users
        .set_disabled(&actor, user_id, disabled)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "agents/list", input = GetUrl)]
pub async fn list_agents() -> Result<Vec<AgentView>, AppError> {
    guard::require(Permission::ManageAgents)?;
    guard::services()?.agents.agents().await.map_err(guard::map_err)
}

/// Add an agent: the answer carries its signing secret, shown once.
#[server(endpoint = "agents/add")]
pub async fn add_agent(
    csrf_token: String,
    id: String,
    #[server(default)] description: String,
) -> Result<IssuedSecret, AppError> {
    let actor = guard::require_csrf(Permission::ManageAgents, &csrf_token)?;
    guard::services()?
        .agents
        .add_agent(&actor, &id, &description)
        .await
        .map_err(guard::map_err)
}

/// A new signing secret for an agent; earlier ones stay valid for `grace_seconds`.
#[server(endpoint = "agents/rotate")]
pub async fn rotate_agent(csrf_token: String, id: String, grace_seconds: i64) -> Result<IssuedSecret, AppError> {
    let actor = guard::require_csrf(Permission::ManageAgents, &csrf_token)?;
    guard::services()?
        .agents
        .rotate_agent(&actor, &id, grace_seconds)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "agents/disabled")]
pub async fn set_agent_disabled(csrf_token: String, id: String, disabled: bool) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ManageAgents, &csrf_token)?;
    guard::services()?
        .agents
        .set_agent_disabled(&actor, &id, disabled)
        .await
        .map_err(guard::map_err)
}

/// Choose the dashboard's language: remembered with the account of someone signed in, and
/// in a cookie (for the sign-in page and signed-out visits).
#[server(endpoint = "locale")]
pub async fn set_locale(csrf_token: String, locale: String) -> Result<(), AppError> {
    use crate::i18n::{Locale, COOKIE};
    let Some(chosen) = Locale::from_tag(&locale) else {
        return Err(guard::map_err(AppError::Invalid(format!(
            "unknown language {locale:?}; use en or zh-CN"
        ))));
    };
    guard::check_csrf(&csrf_token)?;
    let auth = guard::auth();
    if let Some(user) = &auth.user {
        guard::services()?
            .users
            .set_locale(user, chosen)
            .await
            .map_err(guard::map_err)?;
    }
    let cookie = format!("{COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax", chosen.code());
    if let (Some(resp), Ok(v)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        http::HeaderValue::from_str(&cookie),
    ) {
        resp.append_header(http::header::SET_COOKIE, v);
    }
    Ok(())
}

/// One page of the held calls with the true counts (filters, order and page in `query`).
#[server(endpoint = "queue", input = GetUrl)]
pub async fn get_queue(#[server(default)] query: QueueQuery) -> Result<QueueSnapshot, AppError> {
    guard::require(Permission::ReadCalls)?;
    guard::services()?.review.queue(&query).await.map_err(guard::map_err)
}

/// The stats page's counts.
#[server(endpoint = "stats/summary", input = GetUrl)]
pub async fn get_stats() -> Result<StatsSummary, AppError> {
    guard::require(Permission::ReadStats)?;
    guard::services()?.insight.stats_summary().await.map_err(guard::map_err)
}

/// One page of a search over the audit trail (the page's URL query, as is).
#[server(endpoint = "audit/search", input = GetUrl)]
pub async fn search_audit(#[server(default)] query: AuditQuery) -> Result<AuditPage, AppError> {
    guard::require_audit()?;
    guard::services()?
        .insight
        .audit_search(&query)
        .await
        .map_err(guard::map_err)
}

/// The timeline of one session (`kind` = session) or trace id.
#[server(endpoint = "audit/trace", input = GetUrl)]
pub async fn get_trace(kind: TraceKind, id: String) -> Result<TraceView, AppError> {
    guard::require_audit()?;
    guard::services()?
        .insight
        .trace(kind, &id)
        .await
        .map_err(guard::map_err)
}

/// The fingerprint of a secret value (a leaked token, say): the trail records one for
/// every value it redacted, so searching for it shows where the value was sent.
#[server(endpoint = "audit/secret")]
pub async fn look_up_secret(csrf_token: String, value: String) -> Result<String, AppError> {
    let user = guard::require_csrf(Permission::ReadCalls, &csrf_token)?;
    let services = guard::services()?;
    if !services.insight.audit_open_to(user.role) {
        return Err(guard::map_err(AppError::Forbidden(user.role.to_string())));
    }
    services
        .insight
        .secret_fingerprint(&user, &value)
        .await
        .map_err(guard::map_err)
}

/// Check the audit chain and its signed checkpoints now.
#[server(endpoint = "audit/verify")]
pub async fn verify_audit(csrf_token: String) -> Result<ChainReport, AppError> {
    let user = guard::require_csrf(Permission::ReadCalls, &csrf_token)?;
    let services = guard::services()?;
    if !services.insight.audit_open_to(user.role) {
        return Err(guard::map_err(AppError::Forbidden(user.role.to_string())));
    }
    services
        .insight
        .verify_chain(&user)
        .await
        .map(ChainReport::from)
        .map_err(guard::map_err)
}

/// One call with everything a reviewer reads before deciding.
#[server(endpoint = "calls/get", input = GetUrl)]
pub async fn get_call(id: String) -> Result<CallDetail, AppError> {
    guard::require(Permission::ReadCalls)?;
    guard::services()?.review.call_detail(&id).await.map_err(guard::map_err)
}

/// Decide one held call. `text` is the reject reason (required) or a comment; `arguments`
/// the edited JSON for `modify`; `grant_scope` + `grant_minutes` turn an approval into an
/// approve-all grant for the rest of the session.
#[server(endpoint = "calls/decide")]
pub async fn decide(
    csrf_token: String,
    id: String,
    verdict: Verdict,
    #[server(default)] text: String,
    #[server(default)] arguments: String,
    #[server(default)] grant_scope: Option<GrantScopeKind>,
    #[server(default)] grant_minutes: Option<i64>,
) -> Result<DecisionOutcome, AppError> {
    let actor = guard::require_csrf(Permission::Decide, &csrf_token)?;
    let input = super::DecisionInput {
        verdict,
        text,
        arguments,
        grant: grant_scope.map(|s| (s, grant_minutes.unwrap_or(60))),
    };
    let out = guard::services()?.review.decide(&actor, &id, input).await;
    Ok(out)
}

/// Approve or reject many calls; each is decided (and re-checked) on its own, and the
/// answer says for each whether it worked and why not.
#[server(endpoint = "calls/batch")]
pub async fn decide_batch(
    csrf_token: String,
    ids: Vec<String>,
    verdict: Verdict,
    reason: String,
) -> Result<Vec<DecisionOutcome>, AppError> {
    let actor = guard::require_csrf(Permission::Decide, &csrf_token)?;
    if !matches!(verdict, Verdict::Approve | Verdict::Reject) {
        return Err(guard::fail(AppError::Invalid(
            "a batch can only approve or reject".into(),
        )));
    }
    if ids.is_empty() || ids.len() > MAX_BATCH {
        return Err(guard::fail(AppError::Invalid(format!(
            "select between 1 and {MAX_BATCH} calls"
        ))));
    }
    let review = guard::services()?.review;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let input = super::DecisionInput {
            verdict,
            text: reason.clone(),
            arguments: String::new(),
            grant: None,
        };
        out.push(review.decide(&actor, &id, input).await);
    }
    Ok(out)
}

/// Show a held call's redacted values (audited as `secret_revealed` first), so that a
/// modification sends a secret somewhere new only by someone allowed to know it.
#[server(endpoint = "calls/reveal")]
pub async fn reveal_arguments(csrf_token: String, id: String) -> Result<String, AppError> {
    let actor = guard::require_csrf(Permission::RevealSecrets, &csrf_token)?;
    guard::services()?
        .review
        .reveal_arguments(&actor, &id)
        .await
        .map_err(guard::map_err)
}

/// Active grants and the most recently ended ones.
#[server(endpoint = "grants/list", input = GetUrl)]
pub async fn list_grants() -> Result<GrantList, AppError> {
    guard::require(Permission::ReadCalls)?;
    guard::services()?.review.grants().await.map_err(guard::map_err)
}

#[server(endpoint = "grants/revoke")]
pub async fn revoke_grant(csrf_token: String, id: String) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::Decide, &csrf_token)?;
    guard::services()?
        .review
        .revoke_grant(&actor, &id)
        .await
        .map_err(guard::map_err)
}

/// Start break-glass: re-enter the password, say why, and for how long (minutes, at most
/// the configured maximum). Every signed-in person sees the banner at once.
#[server(endpoint = "oncall/start")]
pub async fn start_break_glass(
    csrf_token: String,
    password: String,
    justification: String,
    minutes: i64,
) -> Result<BreakGlassView, AppError> {
    let actor = guard::require_csrf(Permission::BreakGlass, &csrf_token)?;
    guard::services()?
        .oncall
        .start_break_glass(&actor, &password, &justification, minutes)
        .await
        .map_err(guard::map_err)
}

/// End a break-glass now (its owner, or an admin).
#[server(endpoint = "oncall/end")]
pub async fn end_break_glass(csrf_token: String, id: String) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ReadCalls, &csrf_token)?;
    guard::services()?
        .oncall
        .end_break_glass(&actor, &id)
        .await
        .map_err(guard::map_err)
}

/// Release a held call under the caller's break-glass (recorded as an override).
#[server(endpoint = "oncall/override")]
pub async fn override_call(csrf_token: String, id: String) -> Result<DecisionOutcome, AppError> {
    let actor = guard::require_csrf(Permission::BreakGlass, &csrf_token)?;
    Ok(guard::services()?.oncall.override_call(&actor, &id).await)
}

/// Overrides awaiting acknowledgement and the latest acknowledged ones.
#[server(endpoint = "oncall/overrides", input = GetUrl)]
pub async fn list_overrides() -> Result<OverrideList, AppError> {
    guard::require(Permission::ReadCalls)?;
    guard::services()?.oncall.overrides().await.map_err(guard::map_err)
}

/// Agree with or flag (with a note) someone else's override.
#[server(endpoint = "oncall/acknowledge")]
pub async fn acknowledge_override(
    csrf_token: String,
    call_id: String,
    agree: bool,
    #[server(default)] note: String,
) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::AcknowledgeOverrides, &csrf_token)?;
    guard::services()?
        .oncall
        .acknowledge(&actor, &call_id, agree, &note)
        .await
        .map_err(guard::map_err)
}

/// What a decision link from a notification proposes (opening it decides nothing).
#[server(endpoint = "links/open", input = GetUrl)]
pub async fn open_link(token: String) -> Result<LinkView, AppError> {
    guard::require(Permission::ReadCalls)?;
    guard::services()?
        .oncall
        .open_link(&token)
        .await
        .map_err(guard::map_err)
}

/// Decide as a decision link proposes: signed in, with the form's token, once per link.
#[server(endpoint = "links/confirm")]
pub async fn confirm_link(
    csrf_token: String,
    token: String,
    #[server(default)] reason: String,
) -> Result<DecisionOutcome, AppError> {
    let actor = guard::require_csrf(Permission::Decide, &csrf_token)?;
    guard::services()?
        .oncall
        .confirm_link(&actor, &token, &reason)
        .await
        .map_err(guard::map_err)
}

/// Notification channels: from the configuration file and added here.
#[server(endpoint = "channels/list", input = GetUrl)]
pub async fn list_channels() -> Result<Vec<ChannelView>, AppError> {
    guard::require(Permission::ManageUsers)?;
    guard::services()?.notify.channels().await.map_err(guard::map_err)
}

#[server(endpoint = "channels/add")]
pub async fn add_channel(csrf_token: String, channel: ChannelInput) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .notify
        .add_channel(&actor, channel)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "channels/remove")]
pub async fn remove_channel(csrf_token: String, name: String) -> Result<(), AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .notify
        .remove_channel(&actor, &name)
        .await
        .map_err(guard::map_err)
}

/// Send a test notice to one channel now.
#[server(endpoint = "channels/test")]
pub async fn test_channel(csrf_token: String, name: String) -> Result<String, AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    guard::services()?
        .notify
        .test_channel(&actor, &name)
        .await
        .map_err(guard::map_err)
}

/// What rules in shadow mode would have done (since `7d` by default), to promote them
/// with confidence.
#[server(endpoint = "stats/shadow", input = GetUrl)]
pub async fn get_shadow_report(
    #[server(default)] since: String,
    #[server(default)] agent: String,
) -> Result<ShadowReport, AppError> {
    guard::require(Permission::ReadStats)?;
    guard::services()?
        .insight
        .shadow_report(&since, &agent)
        .await
        .map_err(guard::map_err)
}

/// The Stats page's charts over a range (`24h`, `7d` or `30d`).
#[server(endpoint = "stats/range", input = GetUrl)]
pub async fn get_stats_range(#[server(default)] range: String) -> Result<StatsRange, AppError> {
    guard::require(Permission::ReadStats)?;
    guard::services()?
        .insight
        .stats_range(&range)
        .await
        .map_err(guard::map_err)
}

/// The policy in force: its text and the history of changes.
#[server(endpoint = "policy", input = GetUrl)]
pub async fn get_policy() -> Result<PolicyPage, AppError> {
    guard::require(Permission::ManageUsers)?;
    guard::services()?.policy.policy_page().await.map_err(guard::map_err)
}

/// Whether a policy text compiles (every problem with its line); nothing changes.
#[server(endpoint = "policy/check")]
pub async fn check_policy(csrf_token: String, source: String) -> Result<PolicyCheck, AppError> {
    guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    Ok(guard::services()?.policy.check_policy(&source))
}

/// Put a policy text in force now, without dropping a request.
#[server(endpoint = "policy/apply")]
pub async fn apply_policy(
    csrf_token: String,
    source: String,
    #[server(default)] note: String,
) -> Result<PolicyCheck, AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    Ok(guard::services()?.policy.apply_policy(&actor, &source, &note).await)
}

/// Put an earlier version back in force.
#[server(endpoint = "policy/rollback")]
pub async fn rollback_policy(
    csrf_token: String,
    version: String,
    #[server(default)] note: String,
) -> Result<PolicyCheck, AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    Ok(guard::services()?.policy.rollback_policy(&actor, &version, &note).await)
}

/// Keep a proposed policy text to replay recorded calls under it.
#[server(endpoint = "policy/draft")]
pub async fn draft_policy(csrf_token: String, source: String) -> Result<PolicyCheck, AppError> {
    let actor = guard::require_csrf(Permission::ManageUsers, &csrf_token)?;
    Ok(guard::services()?.policy.draft_policy(&actor, &source).await)
}

/// What a kept version would have done to the calls recorded since `since`.
#[server(endpoint = "policy/replay", input = GetUrl)]
pub async fn replay_policy(
    version: String,
    #[server(default)] since: String,
    #[server(default)] agent: String,
) -> Result<ReplayReport, AppError> {
    let actor = guard::require(Permission::ManageUsers)?;
    guard::services()?
        .policy
        .replay(&actor, &version, &since, &agent)
        .await
        .map_err(guard::map_err)
}
