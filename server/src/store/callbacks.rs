//! Callback deliveries: queued with a final decision, then sent and retried.

use super::Db;
use sqlx::AnyConnection;

/// Queue the final decision for delivery to the agent's callback URL.
pub async fn queue(conn: &mut AnyConnection, id: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO callbacks (call_id, state, next_at_ms) VALUES ($1, 'queued', $2) ON CONFLICT DO NOTHING")
        .bind(id)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(())
}

/// Callbacks due now: (call id, agent, attempts so far).
pub async fn due(db: &Db, now: i64, limit: i64) -> Result<Vec<(String, String, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT c.call_id, t.agent_id, c.attempts FROM callbacks c JOIN tool_calls t ON t.id = c.call_id
         WHERE c.state = 'queued' AND c.next_at_ms <= $1 ORDER BY c.next_at_ms LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Take a due delivery for this instance until `until_ms` (several instances on one
/// PostgreSQL database see the same due rows: only the one whose update lands sends it).
/// False when another instance took it first.
pub async fn claim(db: &Db, id: &str, now: i64, until_ms: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE callbacks SET next_at_ms = $1 WHERE call_id = $2 AND state = 'queued' AND next_at_ms <= $3",
    )
    .bind(until_ms)
    .bind(id)
    .bind(now)
    .execute(db)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// The earliest time a queued callback is due.
pub async fn next_at(db: &Db) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT min(next_at_ms) FROM callbacks WHERE state = 'queued'")
        .fetch_one(db)
        .await
}

pub async fn update(
    conn: &mut AnyConnection,
    id: &str,
    state: &str,
    attempts: i64,
    next_at_ms: i64,
    last_error: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE callbacks SET state = $1, attempts = $2, next_at_ms = $3, last_error = $4 WHERE call_id = $5")
        .bind(state)
        .bind(attempts)
        .bind(next_at_ms)
        .bind(last_error)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
