//! Folding SQLite's write-ahead log into the database file (a checkpoint), off the
//! ledger's path.
//!
//! By default SQLite checkpoints at the end of the commit that takes the log past 1,000
//! pages, on the committing connection: the ledger's. There every proposal waits while
//! the pages are copied and the database file is synced (1.3–3.5 ms each time, several
//! times a second at 2,000 calls/s, when small batches rewrite the same pages). So the
//! ledger's connection does not checkpoint by itself (`wal_autocheckpoint = 0`,
//! `store::writer`), the pool's connections only far beyond the length the log is kept to
//! ([`FALLBACK_PAGES`]: a command-line process writing alone, without a folder), and:
//!
//! - this task checkpoints `PASSIVE` every [`Folding::every`] on a connection of its own:
//!   it copies what is committed beside the writer, never holding it up, and a page
//!   rewritten many times in between is copied once;
//! - once the log holds [`Folding::restart_pages`], the ledger checkpoints once between
//!   two batches ([`Folder::restart_if_due`]). A checkpoint beside a writer that keeps
//!   appending never finishes the log, and SQLite starts the log over only when a write
//!   begins on a log copied to its end; the ledger's checkpoint copies the little the last
//!   passive one left, so its next batch writes the log from its start again, and the
//!   file's size stays bounded. (`RESTART` from this task would do the same but hold the
//!   writer up for as long as any reader is still on the old log.)
//!
//! Nothing about durability changes: commits are on disk when the log is synced, and a
//! crash at any point of a checkpoint is recovered by SQLite as usual.

use super::Db;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The log's length at which it is started over: 64 MiB with 4 KiB pages; at 15,000
/// calls/s about every 1.5 s, at 2,000 calls/s every few seconds.
const RESTART_PAGES: i64 = 16_384;

/// Pages past which a pool connection still checkpoints after a commit of its own (SQLite's
/// default is 1,000): four times the length at which the folder starts the log over, so a
/// dashboard's write does not copy a log the folder is about to copy anyway.
pub const FALLBACK_PAGES: i64 = 4 * RESTART_PAGES;

/// When to checkpoint.
#[derive(Debug, Clone, Copy)]
pub struct Folding {
    pub every: Duration,
    pub restart_pages: i64,
}

impl Default for Folding {
    /// A quarter second, and [`RESTART_PAGES`].
    fn default() -> Folding {
        Folding {
            every: Duration::from_millis(250),
            restart_pages: RESTART_PAGES,
        }
    }
}

/// The checkpointing task and its connection.
pub struct Folder {
    conn: Db,
    task: tokio::task::JoinHandle<()>,
    /// The log is long enough to start over: the writer checkpoints once.
    due: Arc<AtomicBool>,
}

impl Folder {
    /// Start checkpointing the SQLite database of `db` on a connection of its own.
    pub async fn start(db: &Db, folding: Folding) -> Result<Folder, String> {
        let conn = super::single(db, 0).await?;
        let due = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(run(conn.clone(), folding, due.clone()));
        Ok(Folder { conn, task, due })
    }

    /// On the writer's connection, outside a transaction: when the log is due to start
    /// over, copy what the last passive checkpoint left, so the next write starts it over.
    pub async fn restart_if_due(&self, writer: &Db) {
        if self.due.swap(false, Ordering::Relaxed) {
            if let Err(e) = checkpoint(writer, "PASSIVE").await {
                tracing::warn!(error = %e, "checkpointing the write-ahead log");
            }
        }
    }

    /// Stop, then close the connection (before the last one closes, which folds the log
    /// in and removes it).
    pub async fn close(&self) {
        self.task.abort();
        super::close(&self.conn).await;
    }
}

/// `(busy, pages in the log, pages copied)`, as `PRAGMA wal_checkpoint` reports them.
type Report = (i64, i64, i64);

async fn checkpoint(conn: &Db, mode: &str) -> Result<Report, sqlx::Error> {
    sqlx::query_as(&format!("PRAGMA wal_checkpoint({mode})"))
        .fetch_one(conn)
        .await
}

async fn run(conn: Db, folding: Folding, due: Arc<AtomicBool>) {
    let mut tick = tokio::time::interval(folding.every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match checkpoint(&conn, "PASSIVE").await {
            Ok((_, log, _)) if log >= folding.restart_pages => due.store(true, Ordering::Relaxed),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "checkpointing the write-ahead log"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Executor;

    /// A commit of about two pages, preceded (as the ledger's batches are) by the folder's
    /// check.
    async fn insert(writer: &Db, n: i64, folder: Option<&Folder>) {
        if let Some(f) = folder {
            f.restart_if_due(writer).await;
        }
        sqlx::query("INSERT INTO t (id, body) VALUES (?, zeroblob(6000))")
            .bind(n)
            .execute(writer)
            .await
            .unwrap();
    }

    /// The ledger's connection leaves checkpoints to the folder; the folder keeps the log
    /// bounded while that connection writes without pause (checking between writes, as the
    /// ledger does between batches), and every row is in the file.
    #[tokio::test]
    async fn the_folder_keeps_the_log_bounded_while_the_writer_never_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.db");
        let url = format!("sqlite://{}", file.display());
        let db = super::super::connect(&secrecy::SecretString::from(url)).await.unwrap();
        let writer = super::super::writer(&db).await.unwrap();
        writer
            .execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            .await
            .unwrap();
        let wal = dir.path().join("t.db-wal");
        // Without the folder the log only grows: 2,000 commits, more than 4,000 pages.
        for n in 0..2000 {
            insert(&writer, n, None).await;
        }
        let grown = std::fs::metadata(&wal).unwrap().len();
        assert!(grown > 4000 * 4096, "the log grew to {grown} bytes");

        let folding = Folding {
            every: Duration::from_millis(10),
            restart_pages: 500,
        };
        let folder = Folder::start(&db, folding).await.unwrap();
        // Three times as many commits again: without the folder the log would triple.
        for n in 2000..8000 {
            insert(&writer, n, Some(&folder)).await;
        }
        // The log started over instead of growing: the file is reused from its start (it
        // grows a little while the first checkpoint copies the pages already there).
        let after = std::fs::metadata(&wal).unwrap().len();
        assert!(after < grown + grown / 2, "the log grew from {grown} to {after} bytes");
        folder.close().await;
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(count, 8000);
        super::super::close(&writer).await;
        super::super::close(&db).await;
        assert!(!wal.exists(), "the last connection folded the log in and removed it");
    }
}
