//! The replay guard's memory on PostgreSQL, shared by every instance: a captured signed
//! read, cancel or result sent to another instance is refused there too. (One instance on
//! SQLite keeps it in memory: `ingest::replay`.)

use super::Db;
use crate::ingest::replay::Seen;
use std::sync::atomic::{AtomicI64, Ordering};

/// Remember `(agent, id)` with the hash of what it signed, at `now_ms`; ids older than
/// `window_ms` are forgotten (their timestamps are no longer accepted).
pub async fn check(
    db: &Db,
    agent: &str,
    id: &str,
    payload_sha256: &[u8; 32],
    now_ms: i64,
    window_ms: i64,
) -> Result<Seen, sqlx::Error> {
    static PRUNED_AT: AtomicI64 = AtomicI64::new(0);
    if now_ms - PRUNED_AT.load(Ordering::Relaxed) > 60_000 {
        PRUNED_AT.store(now_ms, Ordering::Relaxed);
        sqlx::query("DELETE FROM seen_messages WHERE at_ms < $1")
            .bind(now_ms - window_ms)
            .execute(db)
            .await?;
    }
    let added = sqlx::query(
        "INSERT INTO seen_messages (agent_id, message_id, payload_sha256, at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (agent_id, message_id) DO NOTHING",
    )
    .bind(agent)
    .bind(id)
    .bind(payload_sha256.as_slice())
    .bind(now_ms)
    .execute(db)
    .await?;
    if added.rows_affected() == 1 {
        return Ok(Seen::New);
    }
    // Taken by a request still within the window, unless that one has expired (then this
    // use is the new one: the row is taken over only if it is still the expired one).
    let taken = sqlx::query(
        "UPDATE seen_messages SET payload_sha256 = $1, at_ms = $2
         WHERE agent_id = $3 AND message_id = $4 AND at_ms < $5",
    )
    .bind(payload_sha256.as_slice())
    .bind(now_ms)
    .bind(agent)
    .bind(id)
    .bind(now_ms - window_ms)
    .execute(db)
    .await?;
    if taken.rows_affected() == 1 {
        return Ok(Seen::New);
    }
    let stored: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT payload_sha256 FROM seen_messages WHERE agent_id = $1 AND message_id = $2")
            .bind(agent)
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(match stored {
        Some(h) if h.as_slice() == payload_sha256.as_slice() => Seen::Replay,
        _ => Seen::Mismatch,
    })
}
