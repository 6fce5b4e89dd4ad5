//! The search index: what auditors search, derived from the chain.
//!
//! It is written by a background task in batches, never on the ingest path: the
//! ledger's write lock and its per-call pages stay as they are, and the index can be
//! deleted at any time (it is rebuilt from the chain). One row per event holds the facts
//! auditors filter on (agent, session, trace, tool, status, layer, rule, decision source,
//! reviewer) and a one-line summary, plus the event's redacted words for full-text search.
//! The chain stays the record: exports and traces read events from it.
//!
//! With SQLite it lives in its own file beside the database (`<name>-search.db`), its
//! words in an FTS5 table, written by [`super::sqlite_indexer`]. With PostgreSQL it lives
//! in the shared database (migration 0005): the words are a `tsvector` column under a GIN
//! index, built by [`super::words`] so that queries mean the same on both; every instance
//! searches the one index, and an advisory lock lets one instance at a time add a batch.

use super::sqlite_indexer::Indexer;
use crate::store::{Backend, Db, Sql};
use serde_json::Value;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::Executor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};
use std::time::Duration;
use tokio::sync::Mutex;

/// Bumped when what a SQLite index holds changes: an index of another version is rebuilt.
/// (PostgreSQL's index changes by migration.)
const SCHEMA_VERSION: i64 = 6;
/// The filters that SQLite's index answers from full-text search instead of a B-tree index
/// of their own: each is one token of the `facets` column ([`facet_token`]), added to the
/// segment FTS5 writes per batch anyway. A B-tree index per filter cost an insert into each
/// per event, about half of the indexer's time (docs/performance.md, "The search index's
/// filters"). Session, trace and call keep theirs (traces read them directly), and so
/// does the time (windows are bounded by it).
pub(crate) const FACETS: [&str; 8] = ["agent", "tool", "status", "layer", "rule", "source", "reviewer", "kind"];

/// A filter's value as one full-text token: the column's name, `z`, and the value's bytes
/// in hex. Only letters and digits (the tokenizer keeps it whole, already lower case), so it
/// matches exactly this column and value, never a word of the text or a longer value.
pub(crate) fn facet_token(column: &str, value: &str) -> String {
    let mut token = String::new();
    push_facet_token(&mut token, column, value);
    token
}

/// [`facet_token`] written onto `out`: the indexer makes eight per event.
fn push_facet_token(out: &mut String, column: &str, value: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(column.len() + 1 + 2 * value.len());
    out.push_str(column);
    out.push('z');
    for b in value.bytes() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
}

/// Events read and written per batch.
const BATCH: i64 = 4000;
/// Characters of an event's text given to full-text search.
const MAX_TEXT: usize = 16 * 1024;
/// Segments of one size FTS5 lets accumulate before merging them (see `open_sqlite`).
const FTS_AUTOMERGE: i64 = 16;
/// The advisory lock key of the one indexer on PostgreSQL ("airlock search", shortened).
const INDEX_LOCK: i64 = 0x0061_6972_7365_6172;
/// Events per statement of the background indexer on PostgreSQL, where its writes share
/// the ledger's database: each statement a short burst.
const PACED_ROWS: usize = 25;
/// Events per burst of the background indexer on SQLite, where a burst costs one rest (a
/// timer and a wake-up).
const PACED_ROWS_SQLITE: usize = 100;
/// Events per batch of the background indexer: a search waits for at most one such batch.
const PACED_BATCH: i64 = 500;

/// The chain's events after `$1` (at most `$2`), each with its call's agent, tool and
/// trace: what both writers index (SQLite numbers `$1`, `$2` in order of appearance).
pub(super) const READ_CHAIN: &str = "SELECT e.seq, e.at_ms, e.kind, e.actor, e.call_id, e.session_id, e.data,
        c.agent_id, c.tool, c.trace_id, e.hash
 FROM audit_events e LEFT JOIN tool_calls c ON c.id = e.call_id
 WHERE e.seq > $1 ORDER BY e.seq LIMIT $2";

/// Where the index ends: the last event indexed (`$1`) and its hash (`$2`).
pub(super) const SET_HEAD: &str = "INSERT INTO search_head (id, seq, hash) VALUES (1, $1, $2)
 ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash";

/// How a batch is written: as fast as it goes (a search waits for it) or in short bursts
/// with rests between them (the background task, beside live traffic).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pace {
    Full,
    Yield,
}

const SQLITE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS search_events (
    seq      INTEGER PRIMARY KEY,
    at_ms    INTEGER NOT NULL,
    kind     TEXT    NOT NULL,
    actor    TEXT    NOT NULL,
    agent    TEXT,
    session  TEXT,
    trace    TEXT,
    call_id  TEXT,
    tool     TEXT,
    status   TEXT,
    layer    TEXT,
    rule     TEXT,
    source   TEXT,
    reviewer TEXT,
    summary  TEXT    NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS search_events_at ON search_events (at_ms);
CREATE INDEX IF NOT EXISTS search_events_session ON search_events (session, seq) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS search_events_trace ON search_events (trace, seq) WHERE trace IS NOT NULL;
CREATE INDEX IF NOT EXISTS search_events_call ON search_events (call_id, seq) WHERE call_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS search_head (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    seq   INTEGER NOT NULL,
    hash  BLOB    NOT NULL
) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5 (text, facets, content = '', tokenize = 'unicode61 remove_diacritics 2');
";

/// The index file beside a SQLite database: `<dir>/<name>-search.db` (unused with
/// PostgreSQL, whose index is in the database).
pub fn path_for(config: &crate::config::Config) -> Result<PathBuf, String> {
    use secrecy::ExposeSecret;
    use std::str::FromStr;
    let url = config.database_url.expose_secret();
    if url.starts_with("postgres") {
        return Ok(PathBuf::new());
    }
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url).map_err(|e| format!("database_url: {e}"))?;
    let db = opts.get_filename();
    let stem = db.file_stem().and_then(|s| s.to_str()).unwrap_or("airlock");
    Ok(db.with_file_name(format!("{stem}-search.db")))
}

/// The search index and the one writer that keeps it up to date.
#[derive(Clone)]
pub struct SearchIndex {
    /// The index's own SQLite file, or the PostgreSQL database of the chain.
    pub(crate) pool: Db,
    chain: Db,
    /// One catch-up at a time in this process (the background task, a search that wants
    /// the newest).
    writer: Arc<Mutex<()>>,
    /// SQLite's writer, on a blocking thread; `None` with PostgreSQL and once closed.
    sqlite: Arc<std::sync::Mutex<Option<Indexer>>>,
}

/// `sqlite://` URL of a file path (the characters a URL gives a meaning escaped).
fn sqlite_url(path: &Path) -> String {
    let mut url = String::from("sqlite://");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => url.push_str("%25"),
            '?' => url.push_str("%3F"),
            '#' => url.push_str("%23"),
            ' ' => url.push_str("%20"),
            c => url.push(c),
        }
    }
    url.push_str("?mode=rwc");
    url
}

impl SearchIndex {
    /// Open (creating or rebuilding as needed) the index of the chain in `chain`: in the
    /// file `path` beside a SQLite database; in the database itself with PostgreSQL.
    pub async fn open(path: &Path, chain: Db) -> Result<SearchIndex, String> {
        let fail = |e: sqlx::Error| format!("search index: {e}");
        let pool = match Backend::of(&chain) {
            Backend::Postgres => chain.clone(),
            Backend::Sqlite => open_sqlite(path).await?,
        };
        let index = SearchIndex {
            pool,
            chain,
            writer: Arc::new(Mutex::new(())),
            sqlite: Arc::default(),
        };
        // An index that does not end where the chain has the same event (another database,
        // a restored backup) is not this chain's: start again.
        let head: Option<(i64, Vec<u8>)> = sqlx::query_as("SELECT seq, hash FROM search_head")
            .fetch_optional(&index.pool)
            .await
            .map_err(fail)?;
        let same = match &head {
            None => true,
            Some((seq, hash)) => super::hash_in(&index.chain, *seq).await.map_err(fail)? == Some(hex::encode(hash)),
        };
        if !same {
            tracing::warn!("the search index does not match the audit chain; rebuilding it");
            let clear = match index.backend() {
                // A contentless FTS5 table is emptied with its 'delete-all' command.
                Backend::Sqlite => {
                    "DELETE FROM search_events; INSERT INTO search_fts (search_fts) VALUES ('delete-all'); \
                     DELETE FROM search_head;"
                }
                Backend::Postgres => "TRUNCATE search_events, search_head",
            };
            sqlx::raw_sql(clear).execute(&index.pool).await.map_err(fail)?;
        }
        if index.backend() == Backend::Sqlite {
            let Some(file) = crate::store::sqlite_file(&index.chain).await.map_err(fail)? else {
                return Err("search index: the database must be a file".into());
            };
            let path = path.to_path_buf();
            let indexer = tokio::task::spawn_blocking(move || Indexer::open(Path::new(&file), &path))
                .await
                .map_err(|e| format!("search index: {e}"))?
                .map_err(|e| format!("search index: {e}"))?;
            *index.sqlite.lock().unwrap_or_else(PoisonError::into_inner) = Some(indexer);
        }
        Ok(index)
    }

    /// Which database holds the index (its SQL differs).
    pub fn backend(&self) -> Backend {
        Backend::of(&self.pool)
    }

    /// The database whose chain this index follows.
    pub fn chain(&self) -> &crate::store::Db {
        &self.chain
    }

    /// (latest event indexed, latest event in the chain).
    pub async fn progress(&self) -> Result<(i64, i64), sqlx::Error> {
        let indexed: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM search_events")
            .fetch_one(&self.pool)
            .await?;
        let chain: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM audit_events")
            .fetch_one(&self.chain)
            .await?;
        Ok((indexed, chain))
    }

    /// Index one batch of events not yet indexed; answers how many.
    pub async fn step(&self) -> Result<usize, sqlx::Error> {
        Ok(self.step_if(true, Pace::Full).await?.unwrap_or(0))
    }

    /// One batch; on PostgreSQL, when another instance is adding one and `wait` is false,
    /// `None` at once (the background task comes back later; a search waits).
    async fn step_if(&self, wait: bool, pace: Pace) -> Result<Option<usize>, sqlx::Error> {
        let _one = self.writer.lock().await;
        match self.backend() {
            Backend::Sqlite => self.step_sqlite(pace).await.map(Some),
            Backend::Postgres => self.step_postgres(wait, pace).await,
        }
    }

    /// One batch on PostgreSQL: read from the chain, written in paced multi-row statements.
    async fn step_postgres(&self, wait: bool, pace: Pace) -> Result<Option<usize>, sqlx::Error> {
        // The transaction holds the advisory lock before it reads where the index ends:
        // another instance or process adds the same batch first or after, never at once.
        let mut tx = self.pool.begin().await?;
        let locked: bool = if wait {
            sqlx::query_scalar("SELECT true FROM pg_advisory_xact_lock($1) AS locked")
        } else {
            sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1) AS locked")
        }
        .bind(INDEX_LOCK)
        .fetch_one(&mut *tx)
        .await?;
        if !locked {
            return Ok(None);
        }
        let after: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM search_events")
            .fetch_one(&mut *tx)
            .await?;
        type Row = (
            i64,
            i64,
            String,
            String,
            Option<String>,
            Option<String>,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Vec<u8>,
        );
        let rows: Vec<Row> = sqlx::query_as(READ_CHAIN)
            .bind(after)
            .bind(if pace == Pace::Full { BATCH } else { PACED_BATCH })
            .fetch_all(&self.chain)
            .await?;
        let Some(last) = rows.last().map(|r| (r.0, r.10.clone())) else {
            return Ok(Some(0));
        };
        let count = rows.len();
        let rows_per_statement = if pace == Pace::Full { 100 } else { PACED_ROWS };
        let mut rows = rows.into_iter();
        loop {
            let chunk: Vec<Row> = rows.by_ref().take(rows_per_statement).collect();
            if chunk.is_empty() {
                break;
            }
            let started = std::time::Instant::now();
            // Parsing events and making their words is CPU work: off the async workers,
            // which serve requests meanwhile.
            let derived: Vec<(Derived, String)> = tokio::task::spawn_blocking(move || {
                chunk
                    .into_iter()
                    .map(
                        |(seq, at_ms, kind, actor, call_id, session, data, agent, tool, trace, _)| {
                            let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
                            let d = derive(
                                Event {
                                    seq,
                                    at_ms,
                                    kind,
                                    actor,
                                    call_id,
                                    session,
                                    data,
                                },
                                Call { agent, tool, trace },
                            );
                            let words = super::words::tsvector(&d.text);
                            (d, words)
                        },
                    )
                    .collect()
            })
            .await
            .map_err(|e| sqlx::Error::Protocol(format!("indexing a batch: {e}")))?;
            let mut q = Sql::new(
                Backend::Postgres,
                "INSERT INTO search_events (seq, at_ms, kind, actor, agent, session, trace, call_id, tool, status,
                 layer, rule, source, reviewer, summary, words) VALUES ",
            );
            q.rows(&derived, |r, (d, words)| {
                r.bind(d.seq)
                    .bind(d.at_ms)
                    .bind(d.kind.as_str())
                    .bind(d.actor.as_str())
                    .bind(d.agent.as_deref())
                    .bind(d.session.as_deref())
                    .bind(d.trace.as_deref())
                    .bind(d.call_id.as_deref())
                    .bind(d.tool.as_deref())
                    .bind(d.status.as_deref())
                    .bind(d.layer.as_deref())
                    .bind(d.rule.as_deref())
                    .bind(d.source.as_deref())
                    .bind(d.reviewer.as_deref())
                    .bind(d.summary.as_str())
                    .bind_as(words.as_str(), "tsvector");
            });
            q.push(" ON CONFLICT (seq) DO NOTHING");
            q.execute(&mut *tx).await?;
            if pace == Pace::Yield {
                // As long again at rest: the index takes at most half of a core, in bursts
                // short enough that the ledger's commits never queue long behind them.
                tokio::time::sleep(started.elapsed()).await;
            }
        }
        sqlx::query(SET_HEAD)
            .bind(last.0)
            .bind(last.1)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(count))
    }

    /// One batch on SQLite, on a blocking thread (the work is synchronous throughout).
    async fn step_sqlite(&self, pace: Pace) -> Result<usize, sqlx::Error> {
        let (batch, rows, rest) = match pace {
            Pace::Full => (BATCH, 500, false),
            Pace::Yield => (PACED_BATCH, PACED_ROWS_SQLITE, true),
        };
        let sqlite = self.sqlite.clone();
        let fail = |e: String| sqlx::Error::Protocol(format!("search index: {e}"));
        tokio::task::spawn_blocking(move || {
            let mut indexer = sqlite.lock().unwrap_or_else(PoisonError::into_inner);
            match indexer.as_mut() {
                Some(indexer) => indexer.step(batch, rows, rest).map_err(|e| e.to_string()),
                None => Err("closed".into()),
            }
        })
        .await
        .map_err(|e| fail(e.to_string()))?
        .map_err(fail)
    }

    /// Index everything the chain holds now.
    pub async fn catch_up(&self) -> Result<usize, sqlx::Error> {
        let mut n = 0;
        loop {
            let k = self.step().await?;
            n += k;
            if k < BATCH as usize {
                return Ok(n);
            }
        }
    }

    /// Close the index's connections (the writer's once its batch is done).
    pub async fn close(&self) {
        let sqlite = self.sqlite.clone();
        let closed =
            tokio::task::spawn_blocking(move || drop(sqlite.lock().unwrap_or_else(PoisonError::into_inner).take()));
        if let Err(e) = closed.await {
            tracing::warn!(error = %e, "closing the search index's writer");
        }
        crate::store::close(&self.pool).await;
    }

    /// The background task: follow the chain a moment behind (on PostgreSQL, whichever
    /// instance finds the index free adds the next batch).
    pub async fn run(self) {
        loop {
            match self.step_if(false, Pace::Yield).await {
                Ok(Some(k)) if k >= PACED_BATCH as usize => continue,
                Ok(_) => tokio::time::sleep(Duration::from_millis(300)).await,
                Err(e) => {
                    tracing::warn!(error = %e, "indexing the audit trail for search");
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
            }
        }
    }
}

/// The SQLite file of an index: WAL, created and (at another schema version) rebuilt.
async fn open_sqlite(path: &Path) -> Result<Db, String> {
    let fail = |e: sqlx::Error| format!("search index {}: {e}", path.display());
    let opts: AnyConnectOptions = sqlite_url(path).parse().map_err(fail)?;
    let pool = AnyPoolOptions::new()
        .max_connections(4)
        .after_connect(|conn, _| {
            Box::pin(async move {
                // Derived data: losing the last batch to a power cut only means indexing it
                // again. Statement journals in memory, as on the database (`store`).
                conn.execute(
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; \
                     PRAGMA temp_store = MEMORY",
                )
                .await?;
                Ok(())
            })
        })
        .connect_with(opts)
        .await
        .map_err(fail)?;
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&pool)
        .await
        .map_err(fail)?;
    if version != SCHEMA_VERSION {
        sqlx::raw_sql(
            "DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS events_fts; DROP TABLE IF EXISTS indexed_head;
             DROP TABLE IF EXISTS search_events; DROP TABLE IF EXISTS search_fts; DROP TABLE IF EXISTS search_head;",
        )
        .execute(&pool)
        .await
        .map_err(fail)?;
    }
    sqlx::raw_sql(SQLITE_SCHEMA).execute(&pool).await.map_err(fail)?;
    // FTS5 merges a level's segments once it holds `automerge` of them (default 4). The
    // background indexer adds a segment per batch, several a second under load, and those
    // merges were about a quarter of its time; at 16 a word's postings are rewritten about
    // half as often, and a search reads a few more segments (still milliseconds).
    sqlx::query(&format!(
        "INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', {FTS_AUTOMERGE})"
    ))
    .execute(&pool)
    .await
    .map_err(fail)?;
    sqlx::raw_sql(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
        .execute(&pool)
        .await
        .map_err(fail)?;
    Ok(pool)
}

/// An event as stored in the chain.
pub struct Event {
    pub seq: i64,
    pub at_ms: i64,
    pub kind: String,
    pub actor: String,
    pub call_id: Option<String>,
    pub session: Option<String>,
    pub data: Value,
}

/// What the call an event belongs to says about it (the event may not repeat it).
#[derive(Default)]
pub struct Call {
    pub agent: Option<String>,
    pub tool: Option<String>,
    pub trace: Option<String>,
}

/// One row of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub seq: i64,
    pub at_ms: i64,
    pub kind: String,
    pub actor: String,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub trace: Option<String>,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub status: Option<String>,
    pub layer: Option<String>,
    pub rule: Option<String>,
    pub source: Option<String>,
    pub reviewer: Option<String>,
    pub summary: String,
    pub text: String,
}

impl Derived {
    /// The value of a filter of [`FACETS`].
    fn facet(&self, column: &str) -> Option<&str> {
        match column {
            "agent" => self.agent.as_deref(),
            "tool" => self.tool.as_deref(),
            "status" => self.status.as_deref(),
            "layer" => self.layer.as_deref(),
            "rule" => self.rule.as_deref(),
            "source" => self.source.as_deref(),
            "reviewer" => self.reviewer.as_deref(),
            "kind" => Some(&self.kind),
            _ => None,
        }
    }

    /// The `facets` column of SQLite's full-text table: a token per filter the event has.
    pub fn facets(&self) -> String {
        let mut out = String::with_capacity(256);
        for (column, value) in FACETS.iter().filter_map(|c| Some((c, self.facet(c)?))) {
            if !out.is_empty() {
                out.push(' ');
            }
            push_facet_token(&mut out, column, value);
        }
        out
    }
}

fn text_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    match cur {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The user name in an actor (`user:alice` → `alice`).
fn user_of(actor: &str) -> Option<String> {
    actor.strip_prefix("user:").map(str::to_string)
}

/// The facts, summary and searchable text of one event (pure; unit-tested).
pub fn derive(ev: Event, call: Call) -> Derived {
    let d = &ev.data;
    let decision = &decision_of(&ev);
    let first = |paths: &[&[&str]]| paths.iter().find_map(|p| text_at(d, p));
    let agent = call
        .agent
        .or_else(|| first(&[&["agent"]]))
        .or_else(|| ev.actor.strip_prefix("agent:").map(str::to_string));
    let tool = first(&[&["tool"]]).or(call.tool);
    let trace = first(&[&["trace_id"]]).or(call.trace);
    let status = status_of(&ev, decision);
    let source = text_at(decision, &["source"]).or_else(|| first(&[&["source"]]));
    let layer = text_at(decision, &["blocked_by"]).or_else(|| first(&[&["blocked_by"]]));
    let rule = text_at(decision, &["rule"]).or_else(|| first(&[&["rule"]]));
    let reviewer = user_of(&ev.actor);
    let summary = summary(&ev, tool.as_deref(), status.as_deref(), decision);
    let mut text = String::with_capacity(256);
    for part in [
        Some(ev.kind.as_str()),
        Some(ev.actor.as_str()),
        agent.as_deref(),
        ev.session.as_deref(),
        trace.as_deref(),
        ev.call_id.as_deref(),
        tool.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        text.push_str(part);
        text.push(' ');
    }
    let said = [
        ("tool", tool.as_deref()),
        ("trace_id", trace.as_deref()),
        ("agent", agent.as_deref()),
    ];
    flatten_data(d, &mut text, &said);
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    Derived {
        seq: ev.seq,
        at_ms: ev.at_ms,
        kind: ev.kind,
        actor: ev.actor,
        agent,
        session: ev.session,
        trace,
        call_id: ev.call_id,
        tool,
        status,
        layer,
        rule,
        source,
        reviewer,
        summary,
        text,
    }
}

/// The decision a received call's event recorded, with its usual values filled back in.
fn decision_of(ev: &Event) -> Value {
    match ev.kind.as_str() {
        "call_received" => super::received_decision(&ev.data),
        _ => ev.data.get("decision").cloned().unwrap_or(Value::Null),
    }
}

/// The call status an event recorded, if it recorded one.
fn status_of(ev: &Event, decision: &Value) -> Option<String> {
    match ev.kind.as_str() {
        "call_received" => text_at(decision, &["status"]),
        "call_decided" => text_at(&ev.data, &["status"]),
        "call_expired" => Some("expired".into()),
        "call_cancelled" => Some("cancelled".into()),
        _ => None,
    }
}

/// The one-line summary of an event on its own (a timeline's steps), without the
/// searchable text [`derive`] also builds.
pub fn summary_line(ev: &Event) -> String {
    let decision = &decision_of(ev);
    let tool = text_at(&ev.data, &["tool"]);
    summary(ev, tool.as_deref(), status_of(ev, decision).as_deref(), decision)
}

/// The words of an event's data: its values, and the keys of what they nest (the arguments
/// an agent sent, say). Not the event's own field names (`decision`, `status`, `reason`…),
/// the same on every event of a kind, which found every event of the kind; its filters
/// answer those. Not its timings (numbers that would match searches for numbers), nor a
/// value the words already began with (`said`: the tool, the trace, the agent). Together
/// these were two fifths of the words written (docs/performance.md, machine Q).
fn flatten_data(data: &Value, out: &mut String, said: &[(&str, Option<&str>)]) {
    let Value::Object(fields) = data else {
        return flatten(data, out);
    };
    for (key, value) in fields {
        let repeated = said
            .iter()
            .any(|(k, v)| k == key && v.is_some() && value.as_str() == *v);
        match (key.as_str(), value) {
            ("timings", _) => {}
            _ if repeated => {}
            ("decision", Value::Object(decision)) => decision.values().for_each(|v| flatten(v, out)),
            _ => flatten(value, out),
        }
    }
}

/// Every key and scalar of a JSON value, space-separated (the words full-text search sees).
fn flatten(v: &Value, out: &mut String) {
    if out.len() > MAX_TEXT {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push_str(k);
                out.push(' ');
                flatten(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| flatten(v, out)),
        Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push(' ');
        }
        Value::Bool(b) => {
            out.push_str(if *b { "true " } else { "false " });
        }
        Value::Null => {}
    }
}

/// One line, at most ~160 characters, saying what happened.
fn summary(ev: &Event, tool: Option<&str>, status: Option<&str>, decision: &Value) -> String {
    let d = &ev.data;
    let tool = tool.unwrap_or("?");
    let get = |k: &str| text_at(d, &[k]);
    let line = match ev.kind.as_str() {
        "call_received" => {
            let why = text_at(decision, &["reason"]).unwrap_or_default();
            format!("{tool}: {} — {why}", status.unwrap_or("?"))
        }
        "call_decided" => {
            let mut s = format!("{tool}: {} by {}", status.unwrap_or("?"), who(&ev.actor));
            if let Some(c) = get("comment").or_else(|| get("reason")) {
                s.push_str(&format!(" — {c}"));
            }
            s
        }
        "call_approval_recorded" => format!(
            "{tool}: approval {} of {} by {}",
            d.get("approvals").and_then(Value::as_array).map_or(0, Vec::len),
            get("required").unwrap_or_else(|| "?".into()),
            who(&ev.actor)
        ),
        "call_modification_recorded" => format!("{tool}: arguments modified by {}", who(&ev.actor)),
        "call_expired" => format!("{tool}: expired without a decision"),
        "call_cancelled" => format!("{tool}: cancelled by the agent"),
        "call_result" => {
            let mut s = format!("{tool}: result {}", get("outcome").unwrap_or_default());
            if let Some(ms) = get("duration_ms") {
                s.push_str(&format!(" in {ms} ms"));
            }
            if let Some(sum) = get("summary") {
                s.push_str(&format!(" — {sum}"));
            }
            s
        }
        "callback_attempt" => format!(
            "callback attempt {}: {}",
            get("attempt").unwrap_or_default(),
            get("state").unwrap_or_default()
        ),
        "grant_created" => format!(
            "approve-all for {} {} until {}",
            get("scope").unwrap_or_default(),
            get("name").unwrap_or_default(),
            get("expires_at_ms").map_or_else(String::new, |t| crate::audit::search::rfc3339(t.parse().unwrap_or(0)))
        ),
        "grant_revoked" => format!(
            "approve-all {} ended — {}",
            get("grant_id").unwrap_or_default(),
            get("reason").unwrap_or_default()
        ),
        "review_refused" => format!(
            "{tool}: refused — {}",
            get("reason").or_else(|| get("error")).unwrap_or_default()
        ),
        "policy_loaded" => format!("policy {} loaded", get("version").unwrap_or_default()),
        other => {
            let extra = get("username").or_else(|| get("agent")).or_else(|| get("reason"));
            match extra {
                Some(x) => format!("{} — {x}", other.replace('_', " ")),
                None => other.replace('_', " "),
            }
        }
    };
    let mut line = line.replace(['\n', '\r', '\t'], " ");
    if line.chars().count() > 160 {
        line = line.chars().take(159).collect::<String>() + "…";
    }
    line
}

fn who(actor: &str) -> String {
    actor
        .split(", ")
        .map(|a| a.split_once(':').map_or(a, |(_, n)| n))
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(kind: &str, actor: &str, data: Value) -> Event {
        Event {
            seq: 7,
            at_ms: 1_000,
            kind: kind.into(),
            actor: actor.into(),
            call_id: Some("tc_1".into()),
            session: Some("s-1".into()),
            data,
        }
    }

    #[test]
    fn a_received_call_is_indexed_with_its_decision() {
        let d = derive(
            ev(
                "call_received",
                "agent:bot",
                json!({"tool": "run_command", "trace_id": "t-9", "arguments": {"command": "rm -rf /"},
                       "decision": {"status": "denied", "blocked_by": "guard", "rule": "no-rm", "source": "policy",
                                    "reason": "destructive command"}}),
            ),
            Call::default(),
        );
        assert_eq!(d.agent.as_deref(), Some("bot"));
        assert_eq!(d.tool.as_deref(), Some("run_command"));
        assert_eq!(d.trace.as_deref(), Some("t-9"));
        assert_eq!(d.status.as_deref(), Some("denied"));
        assert_eq!(d.layer.as_deref(), Some("guard"));
        assert_eq!(d.rule.as_deref(), Some("no-rm"));
        assert_eq!(d.source.as_deref(), Some("policy"));
        assert_eq!(d.reviewer, None);
        assert_eq!(d.summary, "run_command: denied — destructive command");
        assert!(d.text.contains("rm -rf /") && d.text.contains("command"), "{}", d.text);
        // The event's own field names are not words, nor are values said once already.
        let words = crate::audit::words::words(&d.text);
        for name in [
            "decision",
            "status",
            "blocked",
            "reason",
            "rule",
            "source",
            "timings",
            "arguments",
        ] {
            assert!(!words.iter().any(|w| w == name), "{name}: {}", d.text);
        }
        let count = |w: &str| words.iter().filter(|x| *x == w).count();
        assert_eq!((count("run"), count("t"), count("bot")), (1, 1, 2), "{}", d.text);
        assert_eq!(count("destructive"), 1, "{}", d.text);
    }

    /// What an agent sent keeps its keys (a search for a field of the arguments finds the
    /// call), at any depth; timings are left out.
    #[test]
    fn the_arguments_keys_are_words_and_timings_are_not() {
        let d = derive(
            ev(
                "call_received",
                "agent:bot",
                json!({"tool": "send", "arguments": {"recipient": "x", "headers": {"priority": 1}},
                       "context": {"tenant": "acme"}, "timings": {"evaluate_us": 4242}}),
            ),
            Call::default(),
        );
        let words = crate::audit::words::words(&d.text);
        for w in ["recipient", "headers", "priority", "tenant", "acme", "x", "1"] {
            assert!(words.iter().any(|x| x == w), "{w}: {}", d.text);
        }
        for w in ["evaluate", "us", "4242"] {
            assert!(!words.iter().any(|x| x == w), "{w}: {}", d.text);
        }
    }

    #[test]
    fn a_reviewer_decision_names_the_reviewer_and_takes_the_call_facts_from_the_call() {
        let d = derive(
            ev(
                "call_decided",
                "user:alice",
                json!({"status": "rejected", "source": "reviewer", "comment": "not today\nplease"}),
            ),
            Call {
                agent: Some("bot".into()),
                tool: Some("send_email".into()),
                trace: Some("t-1".into()),
            },
        );
        assert_eq!(d.reviewer.as_deref(), Some("alice"));
        assert_eq!(d.agent.as_deref(), Some("bot"));
        assert_eq!(d.tool.as_deref(), Some("send_email"));
        assert_eq!(d.trace.as_deref(), Some("t-1"));
        assert_eq!(d.status.as_deref(), Some("rejected"));
        assert_eq!(d.summary, "send_email: rejected by alice — not today please");
    }

    /// Fewer merges of the full-text segments the background indexer adds (see
    /// `open_sqlite`): set on a new index and kept when it is opened again.
    #[tokio::test]
    async fn full_text_segments_merge_sixteen_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db", dir.path().display());
        let chain = crate::store::connect(&secrecy::SecretString::from(url)).await.unwrap();
        let path = dir.path().join("t-search.db");
        for _ in 0..2 {
            let index = SearchIndex::open(&path, chain.clone()).await.unwrap();
            let automerge: i64 = sqlx::query_scalar("SELECT v FROM search_fts_config WHERE k = 'automerge'")
                .fetch_one(&index.pool)
                .await
                .unwrap();
            assert_eq!(automerge, FTS_AUTOMERGE);
            index.close().await;
        }
    }

    /// A filter's token: the column, `z`, the value's bytes in lower-case hex; one token per
    /// filter the event has, in `FACETS` order.
    #[test]
    fn facet_tokens_spell_the_value_in_hex() {
        assert_eq!(facet_token("tool", "rm é"), "toolz726d20c3a9");
        let d = derive(
            ev(
                "call_received",
                "agent:a1",
                json!({"tool": "t", "decision": {"status": "denied"}}),
            ),
            Call::default(),
        );
        assert_eq!(
            d.facets(),
            "agentz6131 toolz74 statusz64656e696564 sourcez706f6c696379 kindz63616c6c5f7265636569766564"
        );
    }

    #[test]
    fn summaries_are_one_short_line() {
        let d = derive(
            ev(
                "call_result",
                "agent:bot",
                json!({"tool": "t", "outcome": "ok", "summary": "x".repeat(500)}),
            ),
            Call::default(),
        );
        assert!(d.summary.chars().count() <= 160);
        assert!(!d.summary.contains('\n'));
    }
}
