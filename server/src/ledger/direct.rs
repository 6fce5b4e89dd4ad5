//! Batches of proposals on SQLite, written through a synchronous connection the ledger
//! drives itself.
//!
//! Through sqlx a batch of proposals took two trips to the connection's own thread (the
//! transaction's start with the chain's head, then the inserts with the commit), each a
//! wake-up and a context switch both ways, and its statements were assembled anew for
//! each batch size, their values copied into sqlx's arguments. Here one hand-off to the
//! ledger's own thread carries the whole batch: begin, read the head, decide, insert through
//! prepared single-row statements, commit. The decisions are made inside the transaction,
//! as on the general path, so the state they use is the one the write lock protects.
//!
//! Only batches of proposals that need nothing read first take this way
//! (`record::needs_no_read`); anything else (reviews, expiry, retries, a head another
//! writer moved) takes the general one, `Writer::commit_batch`.

use super::{Effects, State};
use crate::audit::{self, Head};
use crate::ingest::record::{self, IngestJob, Ingested};
use crate::ledger::LedgerError;
use crate::store::calls;
use crate::store::usage::UsageState;
use crate::store::{Backend, Db};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::sync::{Arc, Mutex, PoisonError};

/// The connection, shared with the ledger's handle, which closes it at shutdown (`None`
/// from then on).
pub(super) type Conn = Arc<Mutex<Option<Connection>>>;

/// The thread the connection is used on: always the same one, so its caches stay warm (the
/// blocking pool wakes whichever of its threads waited longest).
pub(super) struct Thread {
    jobs: std::sync::mpsc::Sender<Box<dyn FnOnce() + Send>>,
}

impl Thread {
    pub(super) fn start() -> Result<Thread, String> {
        let (jobs, queue) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
        std::thread::Builder::new()
            .name("airlock-ledger".into())
            .spawn(move || {
                // Ends when the writer is dropped.
                for job in queue {
                    job();
                }
            })
            .map_err(|e| format!("ledger: {e}"))?;
        Ok(Thread { jobs })
    }

    /// Run `f` on the thread and wait for its answer (`None` if the thread is gone).
    pub(super) async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.jobs.send(Box::new(move || drop(answer.send(f())))).ok()?;
        answered.await.ok()
    }
}

/// Open the connection for the SQLite file of `db`; `None` on PostgreSQL and for an
/// in-memory database (another connection could not see it), which keep the general way.
pub(super) async fn open(db: &Db) -> Result<Option<Conn>, String> {
    if Backend::of(db) != Backend::Sqlite {
        return Ok(None);
    }
    let Some(file) = crate::store::sqlite_file(db)
        .await
        .map_err(|e| format!("ledger: {e}"))?
    else {
        return Ok(None);
    };
    let conn = tokio::task::spawn_blocking(move || open_file(&file))
        .await
        .map_err(|e| format!("ledger: {e}"))?
        .map_err(|e| format!("ledger: {e}"))?;
    Ok(Some(Arc::new(Mutex::new(Some(conn)))))
}

/// As the ledger's sqlx connection (`store::writer`): durable commits, foreign keys,
/// statement journals in memory, a busy timeout, and no checkpoints of its own
/// (`store::wal`). The file is already in WAL mode (the pool set it; it persists).
fn open_file(path: &str) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.execute_batch(
        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;
         PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0;",
    )?;
    Ok(conn)
}

/// Close the connection once the batch in progress is written.
pub(super) async fn close(conn: &Conn) {
    let conn = conn.clone();
    let _ = tokio::task::spawn_blocking(move || drop(conn.lock().unwrap_or_else(PoisonError::into_inner).take())).await;
}

/// How a batch went.
pub(super) enum Written {
    /// Committed: the chain's new head, and one answer per proposal, in order.
    Committed {
        head_seq: i64,
        answers: Vec<Result<Ingested, LedgerError>>,
    },
    /// Another writer appended to the chain since this writer's last batch: nothing was
    /// decided or written; the batch takes the general way, which reads back what changed.
    Moved,
    /// The connection was closed (shutdown): nothing was decided or written.
    Closed,
}

/// Decide and store `jobs` (which `record::needs_no_read` admitted) in one transaction, if
/// the chain's head is still `known_head`. Blocks: call on [`Thread`]. On an error
/// the transaction is rolled back, but `state` may hold the batch's decisions (the caller
/// reloads it, as after any failed batch).
pub(super) fn write(
    conn: &Conn,
    state: &mut State,
    fx: &mut Effects,
    known_head: i64,
    jobs: &[Box<IngestJob>],
) -> rusqlite::Result<Written> {
    let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(conn) = conn.as_mut() else {
        return Ok(Written::Closed);
    };
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Cached: parsing the three subqueries anew cost as much as storing a call.
    let (seq, hash, newest): (Option<i64>, Option<Vec<u8>>, i64) = tx
        .prepare_cached(super::batch_tx::HEADS)?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    let mut head = Head::stored(seq.zip(hash));
    if head.seq != known_head {
        return Ok(Written::Moved);
    }
    // Nobody else wrote since this writer's last batch (see `Writer::apply_batch`).
    state.seen_rowid = newest;
    let record::Decided {
        answers,
        calls: prepared,
        deltas,
    } = record::decide_new(state, fx, jobs);
    if !prepared.is_empty() {
        let mut insert = tx.prepare_cached(calls::INSERT_ONE)?;
        for (job, p) in &prepared {
            p.new_call(job).insert_one(&mut insert)?;
        }
        let mut insert = tx.prepare_cached(audit::INSERT_ONE)?;
        for (_, p) in &prepared {
            audit::chain(&mut head, p.row.created_at_ms, &p.event).insert_one(&mut insert)?;
        }
        UsageState::persist_sqlite(&tx, &deltas, head.seq + 1)?;
    }
    tx.commit()?;
    Ok(Written::Committed {
        head_seq: head.seq,
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the ledger's sqlx connection: an answer goes out only once its batch is synced
    /// (FULL), foreign keys hold, statement journals stay in memory, checkpoints are left
    /// to `store::wal`. An in-memory database keeps the general way.
    #[tokio::test]
    async fn the_direct_connection_commits_durably_and_leaves_checkpoints_to_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db", dir.path().display());
        let db = crate::store::connect(&secrecy::SecretString::from(url)).await.unwrap();
        let conn = open(&db).await.unwrap().expect("a file has a direct connection");
        {
            let guard = conn.lock().unwrap();
            let conn = guard.as_ref().unwrap();
            let pragma = |name: &str| -> String {
                conn.query_row(&format!("PRAGMA {name}"), [], |r| {
                    r.get::<_, i64>(0).map(|v| v.to_string()).or_else(|_| r.get(0))
                })
                .unwrap()
            };
            assert_eq!(pragma("journal_mode"), "wal");
            assert_eq!(pragma("synchronous"), "2", "FULL");
            assert_eq!(pragma("foreign_keys"), "1");
            assert_eq!(pragma("temp_store"), "2", "MEMORY");
            assert_eq!(pragma("wal_autocheckpoint"), "0");
            assert_eq!(pragma("busy_timeout"), "5000");
        }
        let memory = crate::store::connect(&secrecy::SecretString::from("sqlite::memory:".to_string()))
            .await
            .unwrap();
        assert!(open(&memory).await.unwrap().is_none());
    }
}
