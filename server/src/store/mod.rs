//! The database. SQL lives here and only here, behind plain async functions, so a
//! PostgreSQL backend can implement the same interface. Queries are checked at run
//! time (not `query!` macros) so neither backend's compile-time checks bind the other.

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

/// Apply pending migrations; any failure stops the start.
pub async fn migrate(db: &Db) -> Result<(), String> {
    sqlx::migrate!("../migrations/sqlite")
        .run(db)
        .await
        .map_err(|e| format!("migrations failed: {e}"))
}

/// Is the database answering?
pub async fn ping(db: &Db) -> bool {
    sqlx::query("SELECT 1").execute(db).await.is_ok()
}
