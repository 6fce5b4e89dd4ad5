//! Several instances on one PostgreSQL database behave as one. What a ledger batch makes
//! happen on its own instance (live events, long-poll wake-ups, the callback dispatcher's
//! wake-up) is written in the batch's transaction to `live_batches` and announced with
//! `NOTIFY airlock_live, '<seq>'`, which PostgreSQL delivers at the commit: only the
//! sequence number travels. Every other instance reads the rows after the last one it
//! replayed and replays them here. A lost notification or a reconnect costs nothing but
//! time: the follower also looks once a second and always resumes from its sequence number.

use super::{waiters::Waiters, Hub};
use crate::store::{self, Db};
use app::api::{BreakGlassView, LiveEvent};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{json, Value};
use sqlx::AnyConnection;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::Notify;

const CHANNEL: &str = "airlock_live";
/// Rows older than this are deleted (an instance further behind reloads its pages anyway).
const KEEP_MS: i64 = 10 * 60 * 1000;
const POLL: Duration = Duration::from_secs(1);
const ROWS_PER_READ: i64 = 200;

/// What a batch makes happen beyond its own instance.
#[derive(Default)]
pub struct Batch<'a> {
    pub events: &'a [LiveEvent],
    /// Calls whose long-polls wake.
    pub wake: &'a [String],
    /// A callback was queued.
    pub callbacks: bool,
    /// A policy was put in force: the others look for it now, not at their next poll.
    pub policy: bool,
}

/// In the batch's transaction: what the other instances replay once it is committed.
pub async fn record(conn: &mut AnyConnection, instance: &str, b: Batch<'_>) -> Result<(), sqlx::Error> {
    if b.events.is_empty() && b.wake.is_empty() && !b.callbacks && !b.policy {
        return Ok(());
    }
    let events: Vec<[String; 2]> = b.events.iter().map(|e| [e.kind().to_string(), e.data()]).collect();
    let data = json!({ "events": events, "wake": b.wake, "callbacks": b.callbacks, "policy": b.policy }).to_string();
    let seq: i64 =
        sqlx::query_scalar("INSERT INTO live_batches (instance, at_ms, data) VALUES ($1, $2, $3) RETURNING seq")
            .bind(instance)
            .bind(store::now_ms())
            .bind(data)
            .fetch_one(&mut *conn)
            .await?;
    sqlx::query("SELECT 1 FROM pg_notify($1, $2) AS sent")
        .bind(CHANNEL)
        .bind(seq.to_string())
        .execute(conn)
        .await?;
    Ok(())
}

/// Live events made outside the ledger (the people an administrator changed), announced
/// to the other instances in a transaction of their own. It takes the one write lock, as
/// every batch does: followers read `seq > last`, so sequence numbers must become visible
/// in order (a later number committed before an earlier one would be skipped).
pub async fn announce(db: &Db, instance: &str, events: &[LiveEvent]) -> Result<(), sqlx::Error> {
    let mut tx = store::begin_write(db).await?;
    record(
        &mut tx,
        instance,
        Batch {
            events,
            ..Batch::default()
        },
    )
    .await?;
    tx.commit().await
}

/// Replays the other instances' batches on this one.
pub struct Follower {
    pub db: Db,
    pub url: SecretString,
    pub instance: String,
    pub hub: Arc<Hub>,
    pub waiters: Arc<Waiters>,
    pub callbacks: Arc<Notify>,
    pub board: Arc<RwLock<Vec<BreakGlassView>>>,
    /// Wakes the policy watcher (`policies::watch`).
    pub policy: Arc<Notify>,
}

impl Follower {
    /// The sequence number to follow from: what is there now has been seen.
    pub async fn start_at(db: &Db) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM live_batches")
            .fetch_one(db)
            .await
    }

    pub async fn run(self, mut last: i64) {
        let mut shutdown = self.hub.shutdown_signal();
        let mut listener: Option<sqlx::postgres::PgListener> = None;
        let mut pruned_at = 0;
        loop {
            if listener.is_none() {
                listener = self.listen().await;
            }
            let lost = match listener.as_mut() {
                Some(l) => tokio::select! {
                    n = l.recv() => n.is_err(),
                    _ = tokio::time::sleep(POLL) => false,
                    _ = shutdown.changed() => return,
                },
                None => tokio::select! {
                    _ = tokio::time::sleep(POLL) => false,
                    _ = shutdown.changed() => return,
                },
            };
            if lost {
                tracing::warn!("the live-event listener lost its connection; following by polling until it is back");
                listener = None;
            }
            match self.catch_up(last).await {
                Ok(seq) => last = seq,
                Err(e) => tracing::warn!(error = %e, "reading other instances' live events failed"),
            }
            let now = store::now_ms();
            if now - pruned_at > 60_000 {
                pruned_at = now;
                let _ = sqlx::query("DELETE FROM live_batches WHERE at_ms < $1")
                    .bind(now - KEEP_MS)
                    .execute(&self.db)
                    .await;
            }
        }
    }

    async fn listen(&self) -> Option<sqlx::postgres::PgListener> {
        let mut l = sqlx::postgres::PgListener::connect(self.url.expose_secret())
            .await
            .map_err(|e| tracing::warn!(error = %e, "live-event listener: cannot connect"))
            .ok()?;
        l.listen(CHANNEL)
            .await
            .map_err(|e| tracing::warn!(error = %e, "live-event listener: LISTEN failed"))
            .ok()?;
        Some(l)
    }

    /// Replay every batch after `last` that another instance committed; the new position.
    async fn catch_up(&self, mut last: i64) -> Result<i64, sqlx::Error> {
        loop {
            let rows: Vec<(i64, String, String)> =
                sqlx::query_as("SELECT seq, instance, data FROM live_batches WHERE seq > $1 ORDER BY seq LIMIT $2")
                    .bind(last)
                    .bind(ROWS_PER_READ)
                    .fetch_all(&self.db)
                    .await?;
            let n = rows.len() as i64;
            for (seq, instance, data) in rows {
                last = seq;
                if instance != self.instance {
                    self.replay(&data);
                }
            }
            if n < ROWS_PER_READ {
                return Ok(last);
            }
        }
    }

    fn replay(&self, data: &str) {
        let Ok(batch) = serde_json::from_str::<Value>(data) else {
            tracing::warn!("a live batch that does not parse was skipped");
            return;
        };
        for pair in batch["events"].as_array().into_iter().flatten() {
            let (Some(kind), Some(data)) = (pair[0].as_str(), pair[1].as_str()) else {
                continue;
            };
            let Some(event) = LiveEvent::parse(kind, data) else {
                continue;
            };
            if let LiveEvent::BreakGlass(b) = &event {
                *self.board.write().unwrap_or_else(|p| p.into_inner()) = b.active.clone();
            }
            self.hub.publish_remote(event);
        }
        for id in batch["wake"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            self.waiters.wake(id);
        }
        if batch["callbacks"].as_bool() == Some(true) {
            self.callbacks.notify_one();
        }
        if batch["policy"].as_bool() == Some(true) {
            self.policy.notify_one();
        }
    }
}
