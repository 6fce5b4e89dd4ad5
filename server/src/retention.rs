//! Retention of unredacted arguments: once a decided call is older than
//! `raw_arguments_days`, its arguments (and a reviewer's replacement) are overwritten with
//! their redacted form, so secrets an agent sent do not stay in the database for ever.
//! The audit trail only ever held the redacted form, so its chain is not touched. The
//! sweep goes through the ledger (the one writer), hourly, oldest calls first, remembering
//! where it stopped.

use crate::audit::NewEvent;
use crate::ledger::{Ledger, Tx};
use crate::store::{self, calls};
use serde_json::json;
use std::time::Duration;

/// Calls looked at per ledger command: while the ledger works through them (a statement
/// per call with secrets), every agent's new call waits (see `crate::expiry`).
const PER_WRITE: i64 = 500;

/// Sweep now and then every hour.
pub async fn run(ledger: Ledger, days: u32) {
    if days == 0 {
        return;
    }
    let keep_ms = i64::from(days) * 86_400_000;
    let mut tick = tokio::time::interval(Duration::from_secs(3600));
    loop {
        tick.tick().await;
        loop {
            let started = std::time::Instant::now();
            match ledger.retain(store::now_ms() - keep_ms).await {
                Ok(0) => break,
                // A rest as long as the chunk took: new calls get at least half the ledger.
                Ok(_) => tokio::time::sleep(started.elapsed()).await,
                Err(e) => {
                    tracing::warn!(error = %e, "purging old raw arguments failed");
                    break;
                }
            }
        }
    }
}

/// Redact the arguments of decided calls created before `before_ms`, starting after the
/// last call a sweep reached. Answers how many calls were looked at (0: nothing left).
pub async fn purge(tx: &mut Tx<'_>, before_ms: i64) -> Result<usize, sqlx::Error> {
    let after = tx.state.retained_to;
    let rows = calls::retention_batch(tx.conn, after, PER_WRITE).await?;
    let mut purged = 0u64;
    let mut last = after;
    for r in &rows {
        if r.created_at_ms >= before_ms || r.pending != 0 {
            break;
        }
        last = r.rowid;
        if r.arguments_redacted.is_none() && r.final_arguments.is_none() {
            continue; // Nothing secret was found in it: nothing to purge.
        }
        let final_redacted = r.final_arguments.as_deref().map(|f| {
            let raw = tx.state.settings.sealer.open(f, &r.agent_id).unwrap_or_default();
            let v: serde_json::Value = serde_json::from_str(&raw).unwrap_or(serde_json::Value::Null);
            policy::redact::redact_value(&v).value.to_string()
        });
        calls::purge_raw(tx.conn, r.rowid, final_redacted.as_deref()).await?;
        purged += 1;
    }
    let looked = rows.iter().take_while(|r| r.rowid <= last).count();
    tx.state.retained_to = last;
    if purged > 0 {
        let ev = NewEvent {
            kind: "raw_arguments_purged",
            actor: "system".into(),
            call_id: None,
            session_id: None,
            data: json!({"calls": purged, "created_before_ms": before_ms}),
        };
        tx.audit(store::now_ms(), &ev).await?;
    }
    Ok(looked)
}
