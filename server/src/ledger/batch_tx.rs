//! A ledger batch's write transaction.
//!
//! On SQLite each statement is a trip to the connection's worker thread (two context
//! switches), and at moderate rates a batch holds a call or two, so the trips are most of
//! a call's cost. The transaction therefore begins in the same trip as the batch's first
//! read (`BEGIN IMMEDIATE; SELECT …`) and may end in the same trip as its last write
//! (`…; COMMIT`). PostgreSQL keeps sqlx's transaction and its advisory lock
//! (`store::begin_write`).

use super::Head;
use crate::store::{self, Backend, Db};
use sqlx::pool::PoolConnection;
use sqlx::Any;
use sqlx::AnyConnection;

/// The chain's head and the newest call's rowid: read at a batch's start.
macro_rules! heads {
    () => {
        "SELECT (SELECT seq FROM audit_events ORDER BY seq DESC LIMIT 1),
                (SELECT hash FROM audit_events ORDER BY seq DESC LIMIT 1),
                (SELECT coalesce(max(rowid), 0) FROM tool_calls)"
    };
}
pub(super) const HEADS: &str = heads!();
const BEGIN_AND_HEADS: &str = concat!("BEGIN IMMEDIATE; ", heads!());

pub enum BatchTx {
    Sqlite(SqliteTx),
    Postgres(sqlx::Transaction<'static, Any>),
}

/// A connection with a transaction begun by a statement. Dropped before it is committed
/// (an error, a panic), the connection is closed instead of going back to the pool:
/// closing rolls the transaction back, and the pool opens a fresh connection next time.
pub struct SqliteTx {
    conn: PoolConnection<Any>,
    committed: bool,
}

impl Drop for SqliteTx {
    fn drop(&mut self) {
        if !self.committed {
            self.conn.close_on_drop();
        }
    }
}

impl BatchTx {
    /// Begin the batch's transaction (holding the database's write lock) and read the
    /// chain's head and the newest call's rowid in it.
    pub async fn begin(db: &Db) -> Result<(BatchTx, Head, i64), sqlx::Error> {
        type Heads = (Option<i64>, Option<Vec<u8>>, i64);
        let (tx, (seq, hash, newest)): (BatchTx, Heads) = match Backend::of(db) {
            Backend::Sqlite => {
                let mut tx = SqliteTx {
                    conn: db.acquire().await?,
                    committed: false,
                };
                // `fetch_one` would read only the first result, `BEGIN`'s.
                let heads: Vec<Heads> = sqlx::query_as(BEGIN_AND_HEADS).fetch_all(&mut *tx.conn).await?;
                let heads = heads.into_iter().next().ok_or(sqlx::Error::RowNotFound)?;
                (BatchTx::Sqlite(tx), heads)
            }
            Backend::Postgres => {
                let mut tx = store::begin_write(db).await?;
                let heads = sqlx::query_as(HEADS).fetch_one(&mut *tx).await?;
                (BatchTx::Postgres(tx), heads)
            }
        };
        Ok((tx, Head::stored(seq.zip(hash)), newest))
    }

    pub fn conn(&mut self) -> &mut AnyConnection {
        match self {
            BatchTx::Sqlite(tx) => &mut tx.conn,
            BatchTx::Postgres(tx) => tx,
        }
    }

    /// Whether the last statement list of the batch may end with `COMMIT`.
    pub fn can_fuse_commit(&self) -> bool {
        matches!(self, BatchTx::Sqlite(_))
    }

    /// The last statement list ended with `COMMIT` and succeeded.
    pub fn committed_by_statement(&mut self) {
        if let BatchTx::Sqlite(tx) = self {
            tx.committed = true;
        }
    }

    /// Commit, unless a statement list already did.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            BatchTx::Sqlite(mut tx) => {
                if !tx.committed {
                    sqlx::query("COMMIT").execute(&mut *tx.conn).await?;
                    tx.committed = true;
                }
                Ok(())
            }
            BatchTx::Postgres(tx) => tx.commit().await,
        }
    }
}
