//! The writer of SQLite's search index: one thread reads a batch of events from the chain,
//! derives each event's row and words, and writes them through prepared single-row
//! statements, holding a synchronous connection to each file.
//!
//! Through sqlx every statement was built anew, its values converted through the `Any`
//! driver and handed to the connection's own thread and back (a wake-up and a context
//! switch each way), and the words were made on the blocking pool, one more hand-off per
//! chunk: about a third of what the index cost per event (docs/performance.md, "The search
//! index on one thread"). Searches still read the index through sqlx.

use super::index::{derive, Call, Event, READ_CHAIN, SET_HEAD};
use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};
use serde_json::Value;
use std::path::Path;
use std::time::Instant;

/// The two connections of the one writer.
pub(super) struct Indexer {
    /// The database holding the chain, read only.
    chain: Connection,
    /// The index's own file.
    index: Connection,
}

/// An event as read from the chain, with its call's facts and its hash.
struct Raw {
    event: Event,
    call: Call,
    hash: Vec<u8>,
}

const INSERT_EVENT: &str = "INSERT INTO search_events (seq, at_ms, kind, actor, agent, session, trace, call_id,
        tool, status, layer, rule, source, reviewer, summary)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) ON CONFLICT (seq) DO NOTHING";

const INSERT_WORDS: &str = "INSERT INTO search_fts (rowid, text, facets) VALUES (?1, ?2, ?3)";

impl Indexer {
    /// Connect to the database file `chain` and the index file `index` (already created).
    pub(super) fn open(chain: &Path, index: &Path) -> rusqlite::Result<Indexer> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let chain = Connection::open_with_flags(chain, flags)?;
        // The ledger alone writes the chain: this connection cannot.
        chain.execute_batch("PRAGMA query_only = 1; PRAGMA busy_timeout = 5000;")?;
        let index = Connection::open_with_flags(index, flags)?;
        // As the index's pool (`index::open_sqlite`): derived data, statement journals in memory.
        index.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY;")?;
        Ok(Indexer { chain, index })
    }

    /// Index up to `batch` events after the index's end, in one transaction; answers how
    /// many. With `rest`, the thread sleeps after each `rows` events as long as they took:
    /// the background indexer takes at most half of a core, in bursts short enough that the
    /// ledger's commits never queue long behind them.
    pub(super) fn step(&mut self, batch: i64, rows: usize, rest: bool) -> rusqlite::Result<usize> {
        // The write lock first, then where the index ends: another process (the CLI) adds
        // the same batch before or after this one, never at once.
        let tx = self.index.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let after: i64 = tx.query_row("SELECT coalesce(max(seq), 0) FROM search_events", [], |r| r.get(0))?;
        let events = read_chain(&self.chain, after, batch)?;
        let Some(last) = events.last().map(|r| (r.event.seq, r.hash.clone())) else {
            return Ok(0);
        };
        let count = events.len();
        let mut words: Vec<(i64, String, String)> = Vec::with_capacity(count);
        {
            let mut insert = tx.prepare_cached(INSERT_EVENT)?;
            let mut events = events.into_iter().peekable();
            while events.peek().is_some() {
                let started = Instant::now();
                for raw in events.by_ref().take(rows) {
                    let d = derive(raw.event, raw.call);
                    insert.execute(params![
                        d.seq, d.at_ms, d.kind, d.actor, d.agent, d.session, d.trace, d.call_id, d.tool, d.status,
                        d.layer, d.rule, d.source, d.reviewer, d.summary
                    ])?;
                    let facets = d.facets();
                    words.push((d.seq, d.text, facets));
                }
                pace(started, rest);
            }
        }
        tx.execute(SET_HEAD, params![last.0, last.1])?;
        // The words last: FTS5 writes what it holds as a segment whenever a statement opens
        // a savepoint. Single-row statements open none, but the words' statements coming
        // last keeps one segment per batch, written at the commit, whatever comes before.
        {
            let mut insert = tx.prepare_cached(INSERT_WORDS)?;
            for chunk in words.chunks(rows) {
                let started = Instant::now();
                for (seq, text, facets) in chunk {
                    insert.execute(params![seq, text, facets])?;
                }
                pace(started, rest);
            }
        }
        tx.commit()?;
        Ok(count)
    }
}

/// Up to `limit` events of the chain after `after`, in order. Read whole before any is
/// indexed: the chain's snapshot is held for the read only, never across the rests.
fn read_chain(chain: &Connection, after: i64, limit: i64) -> rusqlite::Result<Vec<Raw>> {
    let mut read = chain.prepare_cached(READ_CHAIN)?;
    let rows = read.query_map(params![after, limit], |r| {
        // A malformed event is indexed by its columns (it still shows, and `verify` names it).
        let data: Value = serde_json::from_str(r.get_ref(6)?.as_str()?).unwrap_or(Value::Null);
        Ok(Raw {
            event: Event {
                seq: r.get(0)?,
                at_ms: r.get(1)?,
                kind: r.get(2)?,
                actor: r.get(3)?,
                call_id: r.get(4)?,
                session: r.get(5)?,
                data,
            },
            call: Call {
                agent: r.get(7)?,
                tool: r.get(8)?,
                trace: r.get(9)?,
            },
            hash: r.get(10)?,
        })
    })?;
    rows.collect()
}

fn pace(started: Instant, rest: bool) {
    if rest {
        std::thread::sleep(started.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's connections: the chain's cannot write; the index's keeps temporary data
    /// in memory and leaves durability to the chain it can be rebuilt from.
    #[test]
    fn the_chain_is_read_only_and_the_index_keeps_temporary_data_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (chain, index) = (dir.path().join("c.db"), dir.path().join("c-search.db"));
        Connection::open(&chain)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        Connection::open(&index).unwrap();
        let w = Indexer::open(&chain, &index).unwrap();
        let refused = w.chain.execute("INSERT INTO t VALUES (1)", []).unwrap_err();
        assert!(refused.to_string().contains("readonly"), "{refused}");
        let pragma = |name: &str| -> i64 { w.index.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0)).unwrap() };
        assert_eq!(pragma("temp_store"), 2, "MEMORY");
        assert_eq!(pragma("synchronous"), 1, "NORMAL");
    }
}
