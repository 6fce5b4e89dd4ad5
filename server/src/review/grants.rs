//! Approve-all grants: created and revoked through the ledger (their only writer), and
//! the active ones held in memory so each proposal is evaluated against its session's
//! grants without a query.

use super::{GrantKind, GrantRequest, Review, ReviewError};
use crate::audit::NewEvent;
use crate::ledger::Tx;
use crate::store;
use crate::store::calls::{self, CallRow};
use crate::store::details::CallDetails;
use crate::store::review::{self as reviews, GrantRow};
use app::api::{GrantChanged, LiveEvent};
use policy::{Grant, GrantScope};
use serde_json::json;
use std::collections::HashMap;

#[derive(Debug, Clone)]
struct Active {
    grant: Grant,
    trust: String,
}

#[derive(Debug, Default)]
pub struct GrantState {
    /// agent → session → grants (nested so a lookup borrows `&str` keys).
    by_session: HashMap<String, HashMap<String, Vec<Active>>>,
}

impl GrantState {
    pub fn from_rows(rows: Vec<GrantRow>) -> GrantState {
        let mut s = GrantState::default();
        for r in rows {
            s.add(&r);
        }
        s
    }

    pub fn add(&mut self, r: &GrantRow) {
        let scope = if r.scope_kind == "server" {
            GrantScope::Server(r.scope_name.clone())
        } else {
            GrantScope::Tool(r.scope_name.clone())
        };
        self.by_session
            .entry(r.agent_id.clone())
            .or_default()
            .entry(r.session_id.clone())
            .or_default()
            .push(Active {
                grant: Grant {
                    id: r.id.clone(),
                    scope,
                    expires_at_ms: r.expires_at_ms,
                },
                trust: r.trust.clone(),
            });
    }

    pub fn remove(&mut self, id: &str) {
        self.retain(|a| a.grant.id != id);
    }

    fn retain(&mut self, keep: impl Fn(&Active) -> bool) {
        for sessions in self.by_session.values_mut() {
            for v in sessions.values_mut() {
                v.retain(&keep);
            }
            sessions.retain(|_, v| !v.is_empty());
        }
        self.by_session.retain(|_, s| !s.is_empty());
    }

    /// Grants of a session that were made under another trust context: they must go.
    pub fn stale(&self, agent: &str, session: &str, trust: &str) -> Vec<(String, String)> {
        self.session(agent, session)
            .filter(|a| a.trust != trust)
            .map(|a| (a.grant.id.clone(), a.trust.clone()))
            .collect()
    }

    /// The session's grants that are still in force at `now`.
    pub fn for_session(&self, agent: &str, session: &str, now: i64) -> Vec<Grant> {
        self.session(agent, session)
            .filter(|a| a.grant.expires_at_ms > now)
            .map(|a| a.grant.clone())
            .collect()
    }

    fn session<'a>(&'a self, agent: &str, session: &str) -> impl Iterator<Item = &'a Active> + 'a {
        self.by_session
            .get(agent)
            .and_then(|s| s.get(session))
            .into_iter()
            .flatten()
    }

    /// Forget grants that have expired (they no longer match anyway).
    pub fn prune(&mut self, now: i64) {
        self.retain(|a| a.grant.expires_at_ms > now);
    }
}
/// Create an approve-all grant from the call being approved.
pub async fn create(
    tx: &mut Tx<'_>,
    row: &CallRow,
    r: &Review,
    g: GrantRequest,
    now: i64,
) -> Result<Result<String, ReviewError>, sqlx::Error> {
    let extras = calls::extras_in(tx.conn, &row.id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    let grantable = CallDetails::parse(&extras.details).grantable;
    if !grantable {
        return Ok(Err(ReviewError::Invalid(
            "the policy does not allow approve-all grants for this call; approve it on its own".into(),
        )));
    }
    let scope_name = match g.scope {
        GrantKind::Tool => row.tool.clone(),
        GrantKind::Server => match &row.server {
            Some(s) => s.clone(),
            None => {
                return Ok(Err(ReviewError::Invalid(
                    "this call names no MCP server; grant the tool instead".into(),
                )))
            }
        },
    };
    let grant = GrantRow {
        id: format!("gr_{}", uuid::Uuid::now_v7().simple()),
        agent_id: row.agent_id.clone(),
        session_id: row.session_id.clone(),
        scope_kind: g.scope.as_str().into(),
        scope_name,
        trust: extras.trust.unwrap_or_else(|| "null".into()),
        created_by: r.reviewer.clone(),
        created_at_ms: now,
        expires_at_ms: now.saturating_add(g.minutes.saturating_mul(60_000)),
        source_call_id: Some(row.id.clone()),
        revoked_at_ms: None,
        revoked_by: None,
        revoke_reason: None,
    };
    reviews::insert_grant(tx.conn, &grant).await?;
    tx.audit(
        now,
        &NewEvent {
            kind: "grant_created",
            actor: r.reviewer.clone(),
            call_id: Some(row.id.clone()),
            session_id: Some(row.session_id.clone()),
            data: json!({
                "grant_id": grant.id, "agent": grant.agent_id, "scope": grant.scope_kind,
                "name": grant.scope_name, "expires_at_ms": grant.expires_at_ms, "trust": grant.trust,
            }),
        },
    )
    .await?;
    tx.state.grants.prune(now);
    tx.state.grants.add(&grant);
    tx.publish(LiveEvent::GrantsChanged(GrantChanged {
        id: grant.id.clone(),
        active: true,
    }));
    Ok(Ok(grant.id))
}

/// Revoke a grant (a reviewer, or the system on a trust change); false when none was active.
pub async fn revoke(tx: &mut Tx<'_>, id: &str, by: &str, reason: &str) -> Result<bool, sqlx::Error> {
    let now = store::now_ms();
    if !reviews::revoke_grant(tx.conn, id, by, reason, now).await? {
        return Ok(false);
    }
    let g = reviews::get_grant_in(tx.conn, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    tx.audit(
            now,
        &NewEvent {
            kind: "grant_revoked",
            actor: by.to_string(),
            call_id: g.source_call_id.clone(),
            session_id: Some(g.session_id.clone()),
            data: json!({"grant_id": id, "agent": g.agent_id, "scope": g.scope_kind, "name": g.scope_name, "reason": reason}),
        },
    )
    .await?;
    tx.state.grants.remove(id);
    tx.publish(LiveEvent::GrantsChanged(GrantChanged {
        id: id.to_string(),
        active: false,
    }));
    Ok(true)
}
