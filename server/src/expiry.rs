//! Held calls that nobody decided in time get the safe default: `expired`, not executed.
//! A task asks the ledger once a second; the ledger writes each expiry like a decision.

use crate::audit::NewEvent;
use crate::ledger::{Ledger, Tx};
use crate::store::{self, calls};
use app::api::{CallStatus, DecisionSource};
use serde_json::json;
use std::time::Duration;

/// Most calls expired in one write, so one batch never grows without bound.
const PER_WRITE: i64 = 500;

/// Expire pending calls whose time is up, once a second.
pub async fn run(ledger: Ledger) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = ledger.expire(store::now_ms()).await {
            tracing::warn!(error = %e, "expiring calls failed");
        }
    }
}

/// Expire the calls due at `now`; answers how many.
pub async fn expire(tx: &mut Tx<'_>, now: i64) -> Result<usize, sqlx::Error> {
    let due = calls::due_for_expiry(tx.conn, now, PER_WRITE).await?;
    let mut n = 0;
    for row in due {
        let why = Some("no decision before the expiry");
        if !calls::finish(tx.conn, &row.id, CallStatus::Expired, now, "system", why, None).await? {
            continue;
        }
        let ev = NewEvent {
            kind: "call_expired",
            actor: "system".into(),
            call_id: Some(row.id.clone()),
            session_id: Some(row.session_id.clone()),
            data: json!({"tool": row.tool, "expires_at_ms": row.expires_at_ms, "agent": row.agent_id,
                "source": DecisionSource::Expiry.as_str()}),
        };
        tx.audit(now, &ev).await?;
        tx.finished(&row.id, now).await?;
        n += 1;
    }
    Ok(n)
}
