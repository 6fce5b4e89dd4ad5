//! Held calls that nobody decided in time get the safe default: `expired`, not executed.
//! A task asks the ledger once a second; the ledger writes each expiry like a decision.

use crate::audit::NewEvent;
use crate::ledger::{Ledger, Tx};
use crate::store::{self, calls};
use app::api::{CallStatus, DecisionSource};
use serde_json::json;
use std::time::Duration;

/// Most calls expired in one ledger command. The ledger is serial: while it expires a
/// chunk, every agent's new call waits, so a backlog (reviewers away, the server down
/// over an expiry) is worked off in short chunks with new calls' batches in between.
pub const PER_WRITE: usize = 100;

/// Expire pending calls whose time is up, once a second. A backlog goes chunk by chunk,
/// each followed by a rest as long as it took: new calls get at least half the ledger.
pub async fn run(ledger: Ledger) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        loop {
            let started = std::time::Instant::now();
            match ledger.expire(store::now_ms()).await {
                Ok(n) if n >= PER_WRITE => tokio::time::sleep(started.elapsed()).await,
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "expiring calls failed");
                    break;
                }
            }
        }
    }
}

/// Expire the calls due at `now` (at most [`PER_WRITE`]); answers how many. One
/// statement per table for the chunk, not per call: a chunk is a round trip or two to the
/// database, not hundreds.
pub async fn expire(tx: &mut Tx<'_>, now: i64) -> Result<usize, sqlx::Error> {
    const WHY: &str = "no decision before the expiry";
    let due = calls::due_for_expiry(tx.conn, now, PER_WRITE as i64).await?;
    let ids: Vec<&str> = due.iter().map(|r| r.id.as_str()).collect();
    let expired = calls::finish_many(tx.conn, &ids, CallStatus::Expired, now, "system", Some(WHY)).await?;
    let rows: Vec<calls::CallRow> = due
        .into_iter()
        .filter(|r| expired.contains(&r.id))
        .map(|mut r| {
            // What the update wrote, without reading the rows again.
            r.status = CallStatus::Expired;
            r.decided_at_ms = Some(now);
            r.decided_by = Some("system".into());
            r.comment = Some(WHY.into());
            r.final_arguments = None;
            r
        })
        .collect();
    let events: Vec<NewEvent> = rows
        .iter()
        .map(|row| NewEvent {
            kind: "call_expired",
            actor: "system".into(),
            call_id: Some(row.id.clone()),
            session_id: Some(row.session_id.clone()),
            data: json!({"tool": row.tool, "expires_at_ms": row.expires_at_ms, "agent": row.agent_id,
                "source": DecisionSource::Expiry.as_str()}),
        })
        .collect();
    tx.audit_many(now, &events).await?;
    for row in &rows {
        tx.finished_row(row, now).await?;
    }
    Ok(rows.len())
}
