//! The database. SQL lives here (and the audit chain's in `audit`), behind plain async
//! functions over sqlx's Any driver: one text per statement serves SQLite and PostgreSQL
//! (`$n` placeholders, portable SQL), and the few statements that must differ ask
//! [`Backend`]. Queries are checked at run time (not `query!` macros), and values are
//! bound and read as `i64`, text and bytes only, which both databases store alike.

pub mod agents;
pub mod callbacks;
pub mod calls;
pub mod details;
pub mod policies;
pub mod queue;
pub mod review;
pub mod sealed;
pub mod seen;
pub mod sessions;
pub mod usage;
pub mod users;
pub mod wal;

pub mod sql;

pub use sql::Sql;

use secrecy::ExposeSecret;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyConnection, AnyPool, Executor};
use std::str::FromStr;

pub type Db = AnyPool;

/// Which database a pool or connection talks to: SQL that differs between them asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of(db: &Db) -> Backend {
        Backend::of_url(db.connect_options().database_url.as_str())
    }

    pub fn of_conn(conn: &AnyConnection) -> Backend {
        if conn.backend_name() == "PostgreSQL" {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }

    fn of_url(url: &str) -> Backend {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// Open the database named by the URL: a SQLite file (created if needed; WAL, FULL sync
/// so an acknowledged write survives power loss, foreign keys, a busy timeout) or a
/// PostgreSQL database.
pub async fn connect(url: &secrecy::SecretString) -> Result<Db, String> {
    sqlx::any::install_default_drivers();
    let url = url.expose_secret();
    match Backend::of_url(url) {
        Backend::Sqlite => connect_sqlite(url).await,
        Backend::Postgres => connect_postgres(url).await,
    }
}

async fn connect_sqlite(url: &str) -> Result<Db, String> {
    if !url.starts_with("sqlite:") {
        return Err("database_url: use sqlite://PATH or postgres://…".into());
    }
    let file = sqlx::sqlite::SqliteConnectOptions::from_str(url).map_err(|e| format!("database_url: {e}"))?;
    if let Some(dir) = file.get_filename().parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        }
    }
    // Foreign keys on and a 5 s busy timeout are the driver's defaults for every
    // connection; the journal mode and sync level are set here.
    let create = if url.contains("mode=") {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    };
    let opts = AnyConnectOptions::from_str(&create).map_err(|e| format!("database_url: {e}"))?;
    pool_options(Backend::Sqlite, 8, wal::FALLBACK_PAGES)
        .connect_with(opts)
        .await
        .map_err(|e| format!("open database: {e}"))
}

async fn connect_postgres(url: &str) -> Result<Db, String> {
    let opts = AnyConnectOptions::from_str(url).map_err(|e| format!("database_url: {e}"))?;
    pool_options(Backend::Postgres, 16, 0)
        .connect_with(opts)
        .await
        .map_err(|e| format!("open database: {e}"))
}

/// A pool of `max` connections, each set up for the backend. On SQLite a connection folds
/// the write-ahead log into the file after a commit of its own that left the log longer than
/// `checkpoint_pages` (0: never; see `wal`).
fn pool_options(backend: Backend, max: u32, checkpoint_pages: i64) -> AnyPoolOptions {
    let options = AnyPoolOptions::new().max_connections(max);
    match backend {
        // A SQLite connection does not go stale: no test query (a round trip to its worker
        // thread) before each use. Temporary data in memory: a multi-row statement inside a
        // transaction keeps a statement journal, which SQLite otherwise spills to a new file
        // under /var/tmp (created, written and deleted dozens of times a second under load).
        Backend::Sqlite => options.test_before_acquire(false).after_connect(move |conn, _| {
            Box::pin(async move {
                conn.execute(
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
                     PRAGMA temp_store = MEMORY",
                )
                .await?;
                conn.execute(format!("PRAGMA wal_autocheckpoint = {checkpoint_pages}").as_str())
                    .await?;
                Ok(())
            })
        }),
        Backend::Postgres => options,
    }
}

/// Close a pool and every connection it opened. sqlx's `close` can miss one that is given
/// back while it closes (the connection goes idle after the idle ones were closed) and
/// leave it open: close again until none is left. On SQLite the last connection to close
/// folds the write-ahead log into the file and removes it.
pub async fn close(db: &Db) {
    for _ in 0..100 {
        db.close().await;
        if db.size() == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tracing::warn!(open = db.size(), "database connections still open at shutdown");
}

/// The ledger's own connection to the database of `db`, as a pool of one (replaced if it
/// breaks). One writer on one connection keeps that connection's caches warm: SQLite drops
/// a connection's page cache whenever another connection wrote, and both databases keep
/// prepared statements per connection, so a writer that took the next idle connection of a
/// shared pool for each batch read its pages and prepared its statements again. On SQLite
/// it does not checkpoint: `wal::Folder` does, beside it.
pub async fn writer(db: &Db) -> Result<Db, String> {
    single(db, 0).await
}

/// A pool of one connection to the database of `db`.
async fn single(db: &Db, checkpoint_pages: i64) -> Result<Db, String> {
    let options = (*db.connect_options()).clone();
    pool_options(Backend::of(db), 1, checkpoint_pages)
        .connect_with(options)
        .await
        .map_err(|e| format!("open database: {e}"))
}

/// The file of the SQLite database `db` opened; `None` for an in-memory database, which
/// another connection could not read.
pub async fn sqlite_file(db: &Db) -> Result<Option<String>, sqlx::Error> {
    let file: String = sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
        .fetch_one(db)
        .await?;
    Ok((!file.is_empty()).then_some(file))
}

/// Apply pending migrations; any failure stops the start.
pub async fn migrate(db: &Db) -> Result<(), String> {
    match Backend::of(db) {
        Backend::Sqlite => migrate_sqlite(db).await,
        Backend::Postgres => {
            let mut conn = db.acquire().await.map_err(|e| format!("migrations failed: {e}"))?;
            sqlx::migrate!("../migrations/postgres")
                .run(&mut *conn)
                .await
                .map_err(|e| format!("migrations failed: {e}"))
        }
    }
}

/// Foreign keys are off while SQLite's migrations run (its way to rebuild a table others
/// refer to; it cannot be switched inside the migration's transaction) and checked
/// afterwards.
async fn migrate_sqlite(db: &Db) -> Result<(), String> {
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

/// The time as the users table writes it (`2026-12-03T18:00:00.000Z`).
pub fn now_text() -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::now_utc().format(&format).unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Microseconds since the Unix epoch.
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A write transaction that holds the database's one write lock from its start, so
/// reading the audit head and appending after it cannot interleave with another writer
/// (the CLI, or another instance): SQLite's `BEGIN IMMEDIATE`; on PostgreSQL a
/// transaction-scoped advisory lock that every writer takes first.
pub async fn begin_write(db: &Db) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    match Backend::of(db) {
        Backend::Sqlite => db.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => {
            let mut tx = db.begin().await?;
            sqlx::query("SELECT 1 FROM pg_advisory_xact_lock($1) AS locked")
                .bind(WRITE_LOCK)
                .execute(&mut *tx)
                .await?;
            Ok(tx)
        }
    }
}

/// The advisory lock key of the one writer on PostgreSQL ("airlock" in ASCII).
const WRITE_LOCK: i64 = 0x0061_6972_6c6f_636b;

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
    conn: &mut AnyConnection,
    at_ms: i64,
    ev: &crate::audit::NewEvent,
) -> Result<i64, sqlx::Error> {
    let mut head = crate::audit::head(conn).await?;
    crate::audit::append(conn, &mut head, at_ms, ev).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn pragma(db: &Db, name: &str) -> String {
        let mut conn = db.acquire().await.unwrap();
        let row = sqlx::query(&format!("PRAGMA {name}"))
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        use sqlx::Row;
        row.try_get::<i64, _>(0)
            .map(|v| v.to_string())
            .or_else(|_| row.try_get::<String, _>(0))
            .unwrap()
    }

    /// Durable commits, and temporary data (statement journals) kept in memory: never
    /// spilled as page images to files under /var/tmp, on the pool, the ledger's own
    /// connection and the search index's file alike.
    #[tokio::test]
    async fn sqlite_connections_commit_durably_and_keep_temporary_data_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db", dir.path().display());
        let db = connect(&secrecy::SecretString::from(url)).await.unwrap();
        let writer = writer(&db).await.unwrap();
        for (what, db) in [("pool", &db), ("writer", &writer)] {
            assert_eq!(pragma(db, "journal_mode").await, "wal", "{what}");
            assert_eq!(pragma(db, "synchronous").await, "2", "{what}: FULL");
            assert_eq!(pragma(db, "temp_store").await, "2", "{what}: MEMORY");
        }
        // The ledger's connection leaves checkpoints to `wal::Folder`; the pool's only far
        // beyond the log's length the folder keeps.
        assert_eq!(pragma(&writer, "wal_autocheckpoint").await, "0", "writer");
        let fallback = wal::FALLBACK_PAGES.to_string();
        assert_eq!(pragma(&db, "wal_autocheckpoint").await, fallback, "pool");
        let index = crate::audit::index::SearchIndex::open(&dir.path().join("t-search.db"), db.clone())
            .await
            .unwrap();
        assert_eq!(pragma(&index.pool, "temp_store").await, "2", "search index: MEMORY");
    }

    /// Storing a call builds no temporary index (migration 0014): SQLite checks an IN list
    /// of more than two values through one, built again for every row written. The status
    /// check accepts the same values as before, and only those.
    #[tokio::test]
    async fn storing_a_call_builds_no_temporary_index_and_checks_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let db = connect(&secrecy::SecretString::from(format!("sqlite://{}", path.display())))
            .await
            .unwrap();
        migrate(&db).await.unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut explain = conn.prepare(&format!("EXPLAIN {}", calls::INSERT_ONE)).unwrap();
        // Unbound parameters are NULL: EXPLAIN only compiles the statement.
        let mut rows = explain.raw_query();
        let mut ops: Vec<String> = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            ops.push(row.get(1).unwrap());
        }
        assert!(ops.iter().any(|o| o == "Insert"), "the call's insert: {ops:?}");
        assert!(!ops.iter().any(|o| o == "OpenEphemeral"), "{ops:?}");
        // Foreign keys off on this connection: only the status decides.
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        let insert = |id: &str, status: &str| {
            conn.execute(
                "INSERT INTO tool_calls (id, agent_id, message_id, body_sha256, session_id, tool, arguments,
                   status, reason, risk, approvers_required, policy_id, created_at_ms)
                 VALUES (?1, 'a', ?1, x'00', 's', 't', '{}', ?2, 'r', 'low', 0, 1, 1)",
                rusqlite::params![id, status],
            )
        };
        let statuses = app::api::CallStatus::ALL.map(app::api::CallStatus::as_str);
        for s in statuses {
            insert(s, s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        for s in ["Allowed", "allowed ", "", "bogus"] {
            let refused = insert(&format!("x{s}"), s).unwrap_err();
            assert!(
                refused.to_string().contains("CHECK constraint failed"),
                "{s:?}: {refused}"
            );
        }
    }

    /// SQLite is built without memory statistics (`scripts/env.sh` sets `LIBSQLITE3_FLAGS`):
    /// with them every allocation of every connection takes one shared mutex.
    #[tokio::test]
    async fn sqlite_is_built_without_memory_statistics() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db", dir.path().display());
        let db = connect(&secrecy::SecretString::from(url)).await.unwrap();
        let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
            .fetch_all(&db)
            .await
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "build through the scripts, which source scripts/env.sh: {options:?}"
        );
    }
}
