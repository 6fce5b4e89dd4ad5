//! What the queue, the session list and the stats page read of the calls.

use super::calls::{CallRow, COLUMNS};
use super::Db;

/// The queue's filters and order, as the store applies them (empty = any).
pub struct PendingFilter<'a> {
    pub tool: &'a str,
    pub agent: &'a str,
    pub risk: &'a str,
    pub session: &'a str,
    /// `expiry`, `risk`, anything else: oldest first.
    pub sort: &'a str,
}

const PENDING_WHERE: &str = "status = 'pending' AND ($1 = '' OR tool = $1) AND ($2 = '' OR agent_id = $2) \
     AND ($3 = '' OR risk = $3) AND ($4 = '' OR session_id = $4)";

/// One page of held calls matching `f`, in its order.
pub async fn pending_page(
    db: &Db,
    f: &PendingFilter<'_>,
    limit: i64,
    offset: i64,
) -> Result<Vec<CallRow>, sqlx::Error> {
    let order = match f.sort {
        "expiry" => "expires_at_ms IS NULL, expires_at_ms, created_at_ms, id",
        "risk" => {
            "CASE risk WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END, created_at_ms, id"
        }
        _ => "created_at_ms, id",
    };
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM tool_calls WHERE {PENDING_WHERE} ORDER BY {order} LIMIT $5 OFFSET $6"
    ))
    .bind(f.tool)
    .bind(f.agent)
    .bind(f.risk)
    .bind(f.session)
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await
}

/// How many held calls match `f`.
pub async fn pending_count(db: &Db, f: &PendingFilter<'_>) -> Result<u64, sqlx::Error> {
    let (n,): (i64,) = sqlx::query_as(&format!("SELECT count(*) FROM tool_calls WHERE {PENDING_WHERE}"))
        .bind(f.tool)
        .bind(f.agent)
        .bind(f.risk)
        .bind(f.session)
        .fetch_one(db)
        .await?;
    Ok(n.max(0) as u64)
}

/// Held calls counted per (tool, agent, risk): one pass gives the total, every filter's
/// values with their counts and, without a session filter, the matching count.
pub async fn pending_groups(db: &Db) -> Result<Vec<(String, String, String, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT tool, agent_id, risk, count(*) FROM tool_calls WHERE status = 'pending' GROUP BY tool, agent_id, risk",
    )
    .fetch_all(db)
    .await
}

/// What the stats page counts: all calls, the held ones, and per (status, blocked_by,
/// tool) the latest `window` calls (newest by insertion, so no index beyond the rowid).
pub struct Recent {
    pub calls: u64,
    pub waiting: u64,
    pub groups: Vec<(String, Option<String>, String, i64)>,
    pub oldest_ms: Option<i64>,
}

pub async fn recent(db: &Db, window: i64) -> Result<Recent, sqlx::Error> {
    let (calls,): (i64,) = sqlx::query_as("SELECT count(*) FROM tool_calls").fetch_one(db).await?;
    let (waiting,): (i64,) = sqlx::query_as("SELECT count(*) FROM tool_calls WHERE status = 'pending'")
        .fetch_one(db)
        .await?;
    // One pass over the window: the groups, each with its oldest call.
    let rows: Vec<(String, Option<String>, String, i64, i64)> = sqlx::query_as(
        "SELECT status, blocked_by, tool, count(*), min(created_at_ms) FROM \
         (SELECT status, blocked_by, tool, created_at_ms FROM tool_calls ORDER BY rowid DESC LIMIT $1) AS recent \
         GROUP BY 1, 2, 3",
    )
    .bind(window)
    .fetch_all(db)
    .await?;
    let oldest_ms = rows.iter().map(|r| r.4).min();
    Ok(Recent {
        calls: calls.max(0) as u64,
        waiting: waiting.max(0) as u64,
        groups: rows.into_iter().map(|(s, b, t, n, _)| (s, b, t, n)).collect(),
        oldest_ms,
    })
}

/// The most recent calls of one agent session, newest first.
pub async fn session_recent(db: &Db, agent: &str, session: &str, limit: i64) -> Result<Vec<CallRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM tool_calls WHERE agent_id = $1 AND session_id = $2 ORDER BY created_at_ms DESC, id DESC LIMIT $3"
    ))
    .bind(agent)
    .bind(session)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Which of `ids` were escalated (at most a page of ids).
pub async fn escalated_of(
    conn: &mut sqlx::AnyConnection,
    ids: &[String],
) -> Result<std::collections::HashSet<String>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let mut q = super::Sql::new(
        super::Backend::of_conn(conn),
        "SELECT call_id FROM escalations WHERE call_id IN (",
    );
    q.list(ids.iter().map(String::as_str)).push(")");
    let rows: Vec<(String,)> = q.fetch_all(conn).await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}
