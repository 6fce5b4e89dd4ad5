//! Reviewer decisions: approvals towards a quorum, and approve-all grants.

use super::Db;
use sqlx::AnyConnection;

/// Record `reviewer`'s approval; false when they had already approved this call.
pub async fn add_approval(
    conn: &mut AnyConnection,
    call_id: &str,
    reviewer: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let r =
        sqlx::query("INSERT INTO call_approvals (call_id, reviewer, at_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(call_id)
            .bind(reviewer)
            .bind(now)
            .execute(conn)
            .await?;
    Ok(r.rows_affected() == 1)
}

/// Who approved a call so far, in order.
pub async fn approvals_in(conn: &mut AnyConnection, call_id: &str) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT reviewer FROM call_approvals WHERE call_id = $1 ORDER BY at_ms, reviewer")
        .bind(call_id)
        .fetch_all(conn)
        .await
}

/// Approvals that still count: their reviewer is enabled and in a role that decides.
pub async fn valid_approvals_in(conn: &mut AnyConnection, call_id: &str) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT a.reviewer FROM call_approvals a JOIN users u ON lower(substr(a.reviewer, 6)) = lower(u.username)
         WHERE a.call_id = $1 AND a.reviewer LIKE 'user:%' AND u.disabled = 0
           AND u.role IN ('admin', 'reviewer', 'oncall')
         ORDER BY a.at_ms, a.reviewer",
    )
    .bind(call_id)
    .fetch_all(conn)
    .await
}

/// Forget a call's approvals (they were given to arguments a reviewer then changed).
pub async fn clear_approvals(conn: &mut AnyConnection, call_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM call_approvals WHERE call_id = $1")
        .bind(call_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Approvals of many calls: (call id, reviewer).
pub async fn approvals_of(db: &Db, call_ids: &[String]) -> Result<Vec<(String, String)>, sqlx::Error> {
    if call_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = super::Sql::new(
        super::Backend::of(db),
        "SELECT call_id, reviewer FROM call_approvals WHERE call_id IN (",
    );
    q.list(call_ids.iter().map(String::as_str))
        .push(") ORDER BY at_ms, reviewer");
    q.fetch_all(db).await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct GrantRow {
    pub id: String,
    pub agent_id: String,
    pub session_id: String,
    pub scope_kind: String,
    pub scope_name: String,
    pub trust: String,
    pub created_by: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub source_call_id: Option<String>,
    pub revoked_at_ms: Option<i64>,
    pub revoked_by: Option<String>,
    pub revoke_reason: Option<String>,
}

const GRANT_COLUMNS: &str = "id, agent_id, session_id, scope_kind, scope_name, trust, created_by, created_at_ms,
    expires_at_ms, source_call_id, revoked_at_ms, revoked_by, revoke_reason";

pub async fn insert_grant(conn: &mut AnyConnection, g: &GrantRow) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO grants (id, agent_id, session_id, scope_kind, scope_name, trust, created_by, created_at_ms,
           expires_at_ms, source_call_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&g.id)
    .bind(&g.agent_id)
    .bind(&g.session_id)
    .bind(&g.scope_kind)
    .bind(&g.scope_name)
    .bind(&g.trust)
    .bind(&g.created_by)
    .bind(g.created_at_ms)
    .bind(g.expires_at_ms)
    .bind(&g.source_call_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Revoke a grant; false when it was already revoked (or does not exist).
pub async fn revoke_grant(
    conn: &mut AnyConnection,
    id: &str,
    by: &str,
    reason: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE grants SET revoked_at_ms = $1, revoked_by = $2, revoke_reason = $3 WHERE id = $4 AND revoked_at_ms IS NULL",
    )
    .bind(now)
    .bind(by)
    .bind(reason)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn get_grant_in(conn: &mut AnyConnection, id: &str) -> Result<Option<GrantRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {GRANT_COLUMNS} FROM grants WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await
}

/// Grants neither revoked nor expired at `now`, newest first.
pub async fn active_grants<'c>(
    on: impl sqlx::Executor<'c, Database = sqlx::Any>,
    now: i64,
) -> Result<Vec<GrantRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {GRANT_COLUMNS} FROM grants WHERE revoked_at_ms IS NULL AND expires_at_ms > $1 ORDER BY created_at_ms DESC"
    ))
    .bind(now)
    .fetch_all(on)
    .await
}

/// Grants in force at some moment of `[from_ms, until_ms)`, oldest first (replays).
pub async fn grants_during(db: &Db, from_ms: i64, until_ms: i64) -> Result<Vec<GrantRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {GRANT_COLUMNS} FROM grants WHERE created_at_ms < $1 AND expires_at_ms > $2
           AND (revoked_at_ms IS NULL OR revoked_at_ms > $3) ORDER BY created_at_ms"
    ))
    .bind(until_ms)
    .bind(from_ms)
    .bind(from_ms)
    .fetch_all(db)
    .await
}

/// Grants that ended (revoked or expired) most recently, for the grants page's history.
pub async fn recent_ended_grants(db: &Db, now: i64, limit: i64) -> Result<Vec<GrantRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {GRANT_COLUMNS} FROM grants WHERE revoked_at_ms IS NOT NULL OR expires_at_ms <= $1
         ORDER BY coalesce(revoked_at_ms, expires_at_ms) DESC LIMIT $2"
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(db)
    .await
}
