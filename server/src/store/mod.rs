//! The database. SQL lives here (and the audit chain's in `audit`), behind plain async
//! functions, so a PostgreSQL backend can implement the same interface. Queries are checked at run
//! time (not `query!` macros) so neither backend's compile-time checks bind the other.

pub mod agents;
pub mod callbacks;
pub mod calls;
pub mod details;
pub mod policies;
pub mod queue;
pub mod review;
pub mod sealed;
pub mod sessions;
pub mod usage;
pub mod users;

use secrecy::ExposeSecret;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::time::Duration;

pub type Db = SqlitePool;

/// Open (creating if needed) the SQLite file with explicit pragmas: WAL, FULL sync
/// (an acknowledged write survives power loss), foreign keys, a busy timeout.
pub async fn connect(url: &secrecy::SecretString) -> Result<Db, String> {
    let url = url.expose_secret();
    if !url.starts_with("sqlite:") {
        return Err("only sqlite:// database URLs are supported by this build".into());
    }
    let opts = SqliteConnectOptions::from_str(url)
        .map_err(|e| format!("database_url: {e}"))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(5));
    if let Some(dir) = opts.get_filename().parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        }
    }
    SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(opts)
        .await
        .map_err(|e| format!("open database: {e}"))
}

/// Apply pending migrations; any failure stops the start. Foreign keys are off while they
/// run (SQLite's way to rebuild a table others refer to; it cannot be switched inside the
/// migration's transaction) and checked afterwards.
pub async fn migrate(db: &Db) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("migrations failed: {e}");
    let mut conn = db.acquire().await.map_err(|e| fail(&e))?;
    sqlx::query("PRAGMA foreign_keys = OFF")
        .execute(&mut *conn)
        .await
        .map_err(|e| fail(&e))?;
    let ran = sqlx::migrate!("../migrations/sqlite").run(&mut *conn).await;
    let broken: Vec<(String, i64)> = sqlx::query_as("SELECT \"table\", rowid FROM pragma_foreign_key_check")
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| fail(&e))?;
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await
        .map_err(|e| fail(&e))?;
    ran.map_err(|e| fail(&e))?;
    match broken.first() {
        Some((table, rowid)) => Err(fail(&format!("row {rowid} of {table} refers to nothing"))),
        None => Ok(()),
    }
}

/// Is the database answering?
pub async fn ping(db: &Db) -> bool {
    sqlx::query("SELECT 1").execute(db).await.is_ok()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A write transaction that takes SQLite's write lock at once, so reading the audit
/// head and appending after it cannot interleave with another writer (CLI or server).
pub async fn begin_write(db: &Db) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
    db.begin_with("BEGIN IMMEDIATE").await
}

/// Record one audit event on its own, in its own write transaction (what is audited
/// outside the ledger and changes nothing else: a verification, a lookup, an export).
pub async fn record_audit(db: &Db, at_ms: i64, ev: &crate::audit::NewEvent) -> Result<i64, sqlx::Error> {
    let mut tx = begin_write(db).await?;
    let seq = append_audit(&mut tx, at_ms, ev).await?;
    tx.commit().await?;
    Ok(seq)
}

/// Append one audit event in a write transaction (admin changes made outside the ledger).
pub async fn append_audit(
    conn: &mut sqlx::SqliteConnection,
    at_ms: i64,
    ev: &crate::audit::NewEvent,
) -> Result<i64, sqlx::Error> {
    let mut head = crate::audit::head(conn).await?;
    crate::audit::append(conn, &mut head, at_ms, ev).await
}
