//! On-call: starting and ending break-glass, overrides, and their post-hoc review.

use super::*;
use crate::oncall::MIN_JUSTIFICATION_CHARS;
use app::api::{BreakGlassView, DecisionInput, LinkView, OnCall, OverrideList, OverrideView};

/// Overrides shown on the list, each way.
const LISTED: i64 = 200;

#[async_trait::async_trait]
impl OnCall for ServerBackend {
    fn break_glass_now(&self) -> Vec<BreakGlassView> {
        let now = store::now_ms();
        let board = self.board.read().unwrap_or_else(|p| p.into_inner());
        board.iter().filter(|b| b.ends_at_ms > now).cloned().collect()
    }

    async fn start_break_glass(
        &self,
        actor: &UserView,
        password: &str,
        justification: &str,
        minutes: i64,
    ) -> Result<BreakGlassView, AppError> {
        if !actor.role.may(Permission::BreakGlass) {
            return Err(AppError::Forbidden(actor.role.to_string()));
        }
        let tr = app::api::request_tr();
        let justification = clean(justification, "justification")?.unwrap_or_default();
        if justification.chars().count() < MIN_JUSTIFICATION_CHARS {
            let n = MIN_JUSTIFICATION_CHARS.to_string();
            return Err(AppError::Invalid(tr.f("srv.bg_justify", &[("n", &n)])));
        }
        if !(1..=self.break_glass_max_minutes).contains(&minutes) {
            let max = self.break_glass_max_minutes.to_string();
            return Err(AppError::Invalid(tr.f("srv.bg_minutes", &[("max", &max)])));
        }
        // The password again: a session left open on a phone is not enough. Few tries.
        if self.password_checks.check(&actor.username).await.is_err() {
            return Err(AppError::Invalid(tr.t("srv.bg_too_many").into()));
        }
        let stored = users::by_username(&self.db, &actor.username)
            .await
            .map_err(|e| internal(e, "reading a user"))?
            .filter(|u| !u.view.disabled)
            .map(|u| u.password_hash);
        if !crate::auth::password::verify(Password::new(password), stored).await {
            let ev = crate::audit::NewEvent {
                kind: "break_glass_refused",
                actor: format!("user:{}", actor.username),
                call_id: None,
                session_id: None,
                data: serde_json::json!({"reason": "wrong password"}),
            };
            self.ledger.audit(ev);
            return Err(AppError::NotAllowed(tr.t("srv.bg_password").into()));
        }
        let user = format!("user:{}", actor.username);
        match self.ledger.start_break_glass(&user, &justification, minutes).await {
            Ok(v) => {
                tracing::warn!(user = %actor.username, minutes, "break-glass started");
                Ok(v)
            }
            Err(ReviewError::Invalid(m)) => Err(AppError::Invalid(m)),
            Err(e) => Err(internal(e, "starting break-glass")),
        }
    }

    async fn end_break_glass(&self, actor: &UserView, id: &str) -> Result<(), AppError> {
        let tr = app::api::request_tr();
        let owner = self.break_glass_now().into_iter().find(|b| b.id == id).map(|b| b.user);
        let Some(owner) = owner else {
            return Err(AppError::Conflict(tr.t("srv.bg_over").into()));
        };
        let me = format!("user:{}", actor.username);
        if owner != me && actor.role != Role::Admin {
            return Err(AppError::NotAllowed(tr.t("srv.bg_only_owner").into()));
        }
        let reason = if owner == me {
            "ended early by its owner".to_string()
        } else {
            format!("ended by admin {}", actor.username)
        };
        match self.ledger.end_break_glass(id, &me, &reason).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(AppError::Conflict(tr.t("srv.bg_over").into())),
            Err(e) => Err(internal(e, "ending break-glass")),
        }
    }

    async fn override_call(&self, actor: &UserView, id: &str) -> DecisionOutcome {
        let fail = |message: String| DecisionOutcome {
            id: id.to_string(),
            ok: false,
            status: None,
            message,
        };
        let tr = app::api::request_tr();
        if !actor.role.may(Permission::BreakGlass) {
            return fail(tr.f(
                "srv.may_not_break_glass",
                &[("role", tr.t(app::components::shell::role_key(actor.role)))],
            ));
        }
        match self.ledger.override_call(id, &format!("user:{}", actor.username)).await {
            Ok(r) => {
                tracing::warn!(actor = %actor.username, call = id, "call released under break-glass");
                DecisionOutcome {
                    id: id.to_string(),
                    ok: true,
                    status: Some(r.status.to_string()),
                    message: tr.t("srv.released_break_glass").into(),
                }
            }
            Err(e) => fail(super::desk::refusal(tr, e)),
        }
    }

    async fn overrides(&self) -> Result<OverrideList, AppError> {
        let read = |e: sqlx::Error| internal(e, "reading overrides");
        let list = |awaiting: bool| {
            let order = if awaiting {
                "o.overridden_at_ms ASC"
            } else {
                "o.acknowledged_at_ms DESC"
            };
            let filter = if awaiting { "IS NULL" } else { "IS NOT NULL" };
            format!(
                "SELECT o.call_id, c.tool, c.agent_id, c.risk, o.overridden_by, o.overridden_at_ms, b.justification,
                        o.acknowledged_by, o.acknowledged_at_ms, o.verdict, o.note
                 FROM override_reviews o JOIN tool_calls c ON c.id = o.call_id JOIN break_glass b ON b.id = o.break_glass_id
                 WHERE o.acknowledged_at_ms {filter} ORDER BY {order} LIMIT {LISTED}"
            )
        };
        let awaiting: Vec<OverrideRow> = sqlx::query_as(&list(true)).fetch_all(&self.db).await.map_err(read)?;
        let acknowledged: Vec<OverrideRow> = sqlx::query_as(&list(false)).fetch_all(&self.db).await.map_err(read)?;
        let mut conn = self.db.acquire().await.map_err(read)?;
        let awaiting_total = crate::oncall::overrides::awaiting(&mut conn).await.map_err(read)?;
        Ok(OverrideList {
            awaiting: awaiting.into_iter().map(OverrideRow::view).collect(),
            awaiting_total,
            acknowledged: acknowledged.into_iter().map(OverrideRow::view).collect(),
            now_ms: store::now_ms(),
        })
    }

    async fn acknowledge(&self, actor: &UserView, call_id: &str, agree: bool, note: &str) -> Result<(), AppError> {
        if !actor.role.may(Permission::AcknowledgeOverrides) {
            return Err(AppError::Forbidden(actor.role.to_string()));
        }
        let note = clean(note, "note")?;
        if !agree && note.is_none() {
            return Err(AppError::Invalid(
                app::api::request_tr().t("srv.flag_needs_note").into(),
            ));
        }
        match self
            .ledger
            .acknowledge(call_id, &format!("user:{}", actor.username), agree, note)
            .await
        {
            Ok(()) => Ok(()),
            Err(ReviewError::NotFound) => Err(AppError::NotFound),
            Err(ReviewError::Forbidden(m)) => Err(AppError::NotAllowed(m)),
            Err(ReviewError::Invalid(m)) => Err(AppError::Conflict(m)),
            Err(e) => Err(internal(e, "acknowledging an override")),
        }
    }

    async fn open_link(&self, token: &str) -> Result<LinkView, AppError> {
        let link = self.link(token)?;
        let row = calls::get(&self.db, &link.call_id)
            .await
            .map_err(|e| internal(e, "reading a call"))?
            .ok_or(AppError::NotFound)?;
        Ok(LinkView {
            call_id: row.id,
            verdict: link.verdict,
            tool: row.tool,
            agent: row.agent_id,
            risk: row.risk.as_str().to_string(),
            reason: row.reason,
            status: row.status.to_string(),
        })
    }

    async fn confirm_link(&self, actor: &UserView, token: &str, reason: &str) -> Result<DecisionOutcome, AppError> {
        if !actor.role.may(Permission::Decide) {
            return Err(AppError::Forbidden(actor.role.to_string()));
        }
        let link = self.link(token)?;
        let verdict = if link.verdict == "approve" {
            Verdict::Approve
        } else {
            Verdict::Reject
        };
        if verdict == Verdict::Reject && reason.trim().is_empty() {
            return Err(AppError::Invalid(
                app::api::request_tr().t("srv.reject_needs_reason").into(),
            ));
        }
        // Spent before deciding: a link is good for one confirmation, whatever it finds.
        let spent = sqlx::query(
            "INSERT INTO decision_links (nonce, call_id, used_by, used_at_ms) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(&link.nonce)
        .bind(&link.call_id)
        .bind(format!("user:{}", actor.username))
        .bind(store::now_ms())
        .execute(&self.db)
        .await
        .map_err(|e| internal(e, "spending a decision link"))?;
        if spent.rows_affected() == 0 {
            return Err(AppError::Conflict(app::api::request_tr().t("srv.link_used").into()));
        }
        let input = DecisionInput {
            verdict,
            text: reason.to_string(),
            arguments: String::new(),
            grant: None,
        };
        Ok(self.decide(actor, &link.call_id, input).await)
    }
}

impl ServerBackend {
    fn link(&self, token: &str) -> Result<crate::notify::links::Link, AppError> {
        self.links.open(token, store::now_ms()).map_err(AppError::Invalid)
    }
}

/// Free text that is audited and shown to everyone, as reviewers' comments are:
/// trimmed, bounded and redacted (`review::clean_text`); `None` when empty.
fn clean(text: &str, what: &str) -> Result<Option<String>, AppError> {
    review::clean_text(text, what).map_err(|e| AppError::Invalid(e.to_string()))
}

#[derive(sqlx::FromRow)]
struct OverrideRow {
    call_id: String,
    tool: String,
    agent_id: String,
    risk: String,
    overridden_by: String,
    overridden_at_ms: i64,
    justification: String,
    acknowledged_by: Option<String>,
    acknowledged_at_ms: Option<i64>,
    verdict: Option<String>,
    note: Option<String>,
}

impl OverrideRow {
    fn view(self) -> OverrideView {
        OverrideView {
            call_id: self.call_id,
            tool: self.tool,
            agent: self.agent_id,
            risk: self.risk,
            by: self.overridden_by,
            at_ms: self.overridden_at_ms,
            justification: self.justification,
            acknowledged_by: self.acknowledged_by,
            acknowledged_at_ms: self.acknowledged_at_ms,
            verdict: self.verdict,
            note: self.note,
        }
    }
}
