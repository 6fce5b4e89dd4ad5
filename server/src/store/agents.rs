//! Agents and their sealed secrets.

use super::Db;
use sqlx::AnyConnection;

pub async fn exists(conn: &mut AnyConnection, id: &str) -> Result<bool, sqlx::Error> {
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM agents WHERE id = $1")
        .bind(id)
        .fetch_one(conn)
        .await?;
    Ok(n > 0)
}

pub async fn insert(
    conn: &mut AnyConnection,
    id: &str,
    description: &str,
    sealed: &[u8],
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO agents (id, description, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4)")
        .bind(id)
        .bind(description)
        .bind(now)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    add_secret(conn, id, sealed, now).await?;
    Ok(())
}

/// A new current secret for the agent.
async fn add_secret(conn: &mut AnyConnection, id: &str, sealed: &[u8], now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO agent_secrets (agent_id, sealed, created_at_ms) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(sealed)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(())
}

/// Retire every valid secret by `retires_at` at the latest and add a new current one.
pub async fn rotate(
    conn: &mut AnyConnection,
    id: &str,
    sealed: &[u8],
    now: i64,
    retires_at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE agent_secrets SET retires_at_ms = CASE WHEN retires_at_ms < $1 THEN retires_at_ms ELSE $1 END WHERE agent_id = $2")
        .bind(retires_at)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM agent_secrets WHERE agent_id = $1 AND retires_at_ms <= $2")
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    add_secret(conn, id, sealed, now).await?;
    sqlx::query("UPDATE agents SET updated_at_ms = $1 WHERE id = $2")
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub async fn set_disabled(conn: &mut AnyConnection, id: &str, disabled: bool, now: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query("UPDATE agents SET disabled = $1, updated_at_ms = $2 WHERE id = $3")
        .bind(i64::from(disabled))
        .bind(now)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// (disabled, sealed secrets valid at `now`), newest first; `None` for an unknown agent.
pub async fn credentials(db: &Db, id: &str, now: i64) -> Result<Option<(bool, Vec<Vec<u8>>)>, sqlx::Error> {
    let disabled: Option<i64> = sqlx::query_scalar("SELECT disabled FROM agents WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    let Some(disabled) = disabled.map(|d| d != 0) else {
        return Ok(None);
    };
    let sealed: Vec<Vec<u8>> = sqlx::query_scalar(
        "SELECT sealed FROM agent_secrets WHERE agent_id = $1 AND (retires_at_ms IS NULL OR retires_at_ms > $2)
         ORDER BY id DESC",
    )
    .bind(id)
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(Some((disabled, sealed)))
}

/// All agents, for listings: (id, description, disabled, created_at_ms).
pub async fn list(db: &Db) -> Result<Vec<(String, String, bool, i64)>, sqlx::Error> {
    let rows: Vec<(String, String, i64, i64)> =
        sqlx::query_as("SELECT id, description, disabled, created_at_ms FROM agents ORDER BY id")
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, d, disabled, at)| (id, d, disabled != 0, at))
        .collect())
}

/// Secrets valid at `now` for every agent: (agent id, created_at_ms, retires_at_ms),
/// newest first per agent.
pub async fn valid_secrets(db: &Db, now: i64) -> Result<Vec<(String, i64, Option<i64>)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT agent_id, created_at_ms, retires_at_ms FROM agent_secrets
         WHERE retires_at_ms IS NULL OR retires_at_ms > $1 ORDER BY agent_id, id DESC",
    )
    .bind(now)
    .fetch_all(db)
    .await
}
