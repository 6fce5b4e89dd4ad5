//! Held calls nobody answered in time are escalated: marked on the queue, recorded, and
//! announced (`call_escalated`, which notification channels pass on to on-call). At
//! their expiry they still get the safe default (`expired`, see `crate::expiry`).
//!
//! Finding them reads the database outside the ledger (one pass over the held calls
//! every few seconds); the ledger then checks each is still held and not yet escalated.

use crate::audit::NewEvent;
use crate::config::Escalation;
use crate::ledger::{Ledger, Tx};
use crate::store::{self, calls, Db};
use app::api::{CallEscalated, CallStatus, LiveEvent};
use serde_json::json;
use std::time::Duration;

/// Most calls escalated in one ledger command: while the ledger works through a chunk
/// (a few statements per call), every agent's new call waits (see `crate::expiry`).
const PER_WRITE: usize = 100;

/// Look for calls to escalate every few seconds.
pub async fn run(db: Db, ledger: Ledger, rules: Escalation) {
    if rules.shortest_ms().is_none() {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = escalate_due(&db, &ledger, &rules, store::now_ms()).await {
            tracing::warn!(error = %e, "escalating held calls failed");
        }
    }
}

/// Escalate the held calls due at `now` (tests pass a later `now`); answers how many.
pub async fn escalate_due(db: &Db, ledger: &Ledger, rules: &Escalation, now: i64) -> Result<usize, String> {
    let due = due(db, rules, now).await.map_err(|e| e.to_string())?;
    let mut n = 0;
    let mut took = Duration::ZERO;
    for (i, chunk) in due.chunks(PER_WRITE).enumerate() {
        if i > 0 {
            // A rest as long as the last chunk took: new calls get at least half the ledger.
            tokio::time::sleep(took).await;
        }
        let started = std::time::Instant::now();
        n += ledger.escalate(chunk.to_vec(), now).await.map_err(|e| e.to_string())?;
        took = started.elapsed();
    }
    Ok(n)
}

/// Held, not yet escalated, waiting longer than their tool's or risk's time, and not yet
/// past their expiry (those are expired, not escalated: reading them again every few
/// seconds until the expiry sweep reaches them would keep the ledger busy for nothing).
pub async fn due(db: &Db, rules: &Escalation, now: i64) -> Result<Vec<String>, sqlx::Error> {
    let Some(shortest) = rules.shortest_ms() else {
        return Ok(Vec::new());
    };
    let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT id, tool, risk, created_at_ms FROM tool_calls t
         WHERE status = 'pending' AND created_at_ms <= $1
           AND (expires_at_ms IS NULL OR expires_at_ms > $2)
           AND NOT EXISTS (SELECT 1 FROM escalations e WHERE e.call_id = t.id)
         ORDER BY created_at_ms",
    )
    .bind(now.saturating_sub(shortest))
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, tool, risk, created)| rules.after_ms(tool, risk).is_some_and(|a| now - created >= a))
        .map(|(id, ..)| id)
        .collect())
}

/// In the ledger: escalate those of `ids` still held and not yet escalated.
pub async fn escalate(tx: &mut Tx<'_>, ids: &[String], now: i64) -> Result<usize, sqlx::Error> {
    let mut n = 0;
    for id in ids {
        let Some(row) = calls::get_in(tx.conn, id).await? else {
            continue;
        };
        if row.status != CallStatus::Pending || row.expires_at_ms.is_some_and(|t| t <= now) {
            continue;
        }
        let added =
            sqlx::query("INSERT INTO escalations (call_id, escalated_at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(id)
                .bind(now)
                .execute(&mut *tx.conn)
                .await?
                .rows_affected();
        if added == 0 {
            continue;
        }
        tx.audit(
            now,
            &NewEvent {
                kind: "call_escalated",
                actor: "system".into(),
                call_id: Some(row.id.clone()),
                session_id: Some(row.session_id.clone()),
                data: json!({"tool": row.tool, "agent": row.agent_id, "risk": row.risk.as_str(),
                    "waited_ms": now - row.created_at_ms, "expires_at_ms": row.expires_at_ms}),
            },
        )
        .await?;
        let mut item = crate::review::view::queue_item(&tx.state.policy, &row);
        item.escalated = true;
        tx.publish(LiveEvent::CallEscalated(CallEscalated { item }));
        n += 1;
    }
    Ok(n)
}
