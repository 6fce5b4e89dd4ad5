//! The ledger: the one task that writes calls, decisions, budget usage and audit events.
//!
//! Handlers send commands over a channel; the ledger takes whatever has queued up (up to
//! `MAX_BATCH`), applies each inside one write transaction (`batch_tx`: SQLite's
//! `BEGIN IMMEDIATE`, PostgreSQL's advisory lock) on a connection of its own
//! (`store::writer`, whose caches stay warm), commits once (group commit,
//! `synchronous = FULL`) and only then answers. So nothing is acknowledged before it is on
//! disk, a slow disk is paid once per batch instead of once per call, and budgets and the
//! audit chain have a single, serial writer at a time. Several instances on one
//! PostgreSQL database take turns: a batch that finds the chain moved by another writer
//! first reads back what it changed (`State::refresh`). On a SQLite file, a batch of
//! proposals alone that needs nothing read first goes to the ledger's own thread instead,
//! which decides and writes it through a synchronous connection (`direct`).
//!
//! This module is only the writer: what each command writes lives with its concern
//! (`ingest::record`, `review::decide`, `review::grants`, `oncall`, `expiry`,
//! `callbacks`, `retention`) as plain functions over a [`Tx`], the writer's open transaction and
//! in-memory state. `handle` holds the commands and the handle that sends them.

use crate::audit::{self, Head, NewEvent};
use crate::callbacks;
use crate::expiry;
use crate::ingest::record::{self, IngestJob, Ingested};
use crate::oncall::{self, break_glass::Board};
use crate::realtime::{waiters::Waiters, Hub};
use crate::retention;
use crate::review::grants::{self, GrantState};
use crate::review::{decide, ReviewError, Reviewed};
use crate::store::calls::{self, CallRow};
use crate::store::review as reviews;
use crate::store::usage::UsageState;
use crate::store::{self, Db};
use app::api::{BreakGlassView, CallDecided, LiveEvent};
use batch_tx::BatchTx;
use policy::Policy;
use sqlx::AnyConnection;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Notify};

pub mod agent_rate;
mod batch_tx;
mod direct;
mod handle;
pub mod recent;

pub use handle::{Command, Ledger, LedgerError};

const MAX_BATCH: usize = 512;
const QUEUE: usize = 8192;

/// Who gets told what once a batch is committed.
enum Reply {
    Ingest(
        oneshot::Sender<Result<Ingested, LedgerError>>,
        Result<Ingested, LedgerError>,
    ),
    Row(
        oneshot::Sender<Result<CallRow, LedgerError>>,
        Box<Result<CallRow, LedgerError>>,
    ),
    Count(oneshot::Sender<usize>, usize),
    Unit(oneshot::Sender<()>),
    Review(
        oneshot::Sender<Result<Reviewed, ReviewError>>,
        Result<Reviewed, ReviewError>,
    ),
    /// A grant revoked, an override acknowledged.
    Done(oneshot::Sender<Result<(), ReviewError>>, Result<(), ReviewError>),
    BreakGlass(
        oneshot::Sender<Result<BreakGlassView, ReviewError>>,
        Result<BreakGlassView, ReviewError>,
    ),
    Flag(oneshot::Sender<bool>, bool),
    Ack(oneshot::Sender<Result<(), LedgerError>>),
    Policy(
        oneshot::Sender<Result<crate::policies::Applied, String>>,
        crate::policies::Applied,
    ),
    None,
}

impl Effects {
    /// Tell the dashboards, once committed.
    pub(crate) fn publish(&mut self, event: LiveEvent) {
        self.publish.push(event);
    }

    /// Count a decision in the metrics, once committed.
    pub(crate) fn count(
        &mut self,
        status: app::api::CallStatus,
        layer: Option<&'static str>,
        decided_by: Option<&str>,
    ) {
        let source = app::api::DecisionSource::of(status, decided_by).map_or("none", |s| s.as_str());
        self.decisions.push((status.as_str(), layer, source));
    }
}

impl Reply {
    /// Tell the sender: its answer when the batch committed, "unavailable" when it failed.
    fn send(self, committed: bool) {
        let gone = || LedgerError::Unavailable;
        match (self, committed) {
            (Reply::Ingest(tx, v), true) => drop(tx.send(v)),
            (Reply::Ingest(tx, _), false) => drop(tx.send(Err(gone()))),
            (Reply::Row(tx, v), true) => drop(tx.send(*v)),
            (Reply::Row(tx, _), false) => drop(tx.send(Err(gone()))),
            (Reply::Count(tx, v), true) => drop(tx.send(v)),
            (Reply::Count(tx, _), false) => drop(tx.send(0)),
            (Reply::Unit(tx), _) => drop(tx.send(())),
            (Reply::Review(tx, v), true) => drop(tx.send(v)),
            (Reply::Review(tx, _), false) => drop(tx.send(Err(ReviewError::Unavailable))),
            (Reply::Done(tx, v), true) => drop(tx.send(v)),
            (Reply::Done(tx, _), false) => drop(tx.send(Err(ReviewError::Unavailable))),
            (Reply::BreakGlass(tx, v), true) => drop(tx.send(v)),
            (Reply::BreakGlass(tx, _), false) => drop(tx.send(Err(ReviewError::Unavailable))),
            (Reply::Flag(tx, v), true) => drop(tx.send(v)),
            (Reply::Flag(tx, _), false) => drop(tx.send(false)),
            (Reply::Ack(tx), true) => drop(tx.send(Ok(()))),
            (Reply::Ack(tx), false) => drop(tx.send(Err(gone()))),
            (Reply::Policy(tx, v), true) => drop(tx.send(Ok(v))),
            (Reply::Policy(tx, _), false) => drop(tx.send(Err(gone().to_string()))),
            (Reply::None, _) => {}
        }
    }
}

/// What happens once a batch is committed, and only then: answers, woken long-polls,
/// live events, the callback dispatcher's wake-up.
#[derive(Default)]
pub struct Effects {
    replies: Vec<Reply>,
    publish: Vec<LiveEvent>,
    wake: Vec<String>,
    callbacks: bool,
    /// The break-glass board after this batch, when it changed.
    board: Option<Vec<BreakGlassView>>,
    /// Decisions to count in the metrics: (status, layer, source).
    decisions: Vec<(&'static str, Option<&'static str>, &'static str)>,
    /// A policy to put in force: (policy, its version's row, the change's row).
    policy: Option<(Arc<Policy>, i64, i64)>,
    /// The policy change was recorded here (not adopted from elsewhere): the other
    /// instances are told to look for it.
    policy_recorded: bool,
    /// Commands in the batch.
    commands: usize,
}

/// Rules the ledger enforces beyond the policy.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Held calls one agent may have waiting at once (0: no cap).
    pub max_pending_per_agent: u32,
    /// `on_behalf_of` principal (lower-case) → user name (lower-case).
    pub principals: HashMap<String, String>,
    /// Seals raw arguments that held a secret, and opens them (`store::sealed`).
    pub sealer: crate::store::sealed::Sealer,
    /// The per-agent proposal rate counted for all instances (PostgreSQL; one instance on
    /// SQLite counts it exactly at the door).
    pub agent_rate: Option<agent_rate::AgentRate>,
}

impl Settings {
    /// Is `user` (a dashboard user name) the person a principal stands for? A mapped
    /// principal names its user; otherwise `user:NAME`, a bare user name, and the local
    /// part of an e-mail address all count (when in doubt, another reviewer decides).
    pub fn is_principal(&self, principal: &str, user: &str) -> bool {
        let p = principal.trim().to_lowercase();
        let user = user.to_lowercase();
        if let Some(u) = self.principals.get(&p) {
            return *u == user;
        }
        let name = p.strip_prefix("user:").unwrap_or(&p);
        name == user || name.split_once('@').is_some_and(|(local, _)| local == user)
    }
}

pub struct Shared {
    pub hub: Arc<Hub>,
    pub waiters: Arc<Waiters>,
    /// Woken when a callback is queued.
    pub callbacks: Arc<Notify>,
    /// Break-glass in force, as committed (pages read it for the banner).
    pub board: Arc<std::sync::RwLock<Vec<BreakGlassView>>>,
    /// The policy every reader takes, swapped after a change is committed.
    pub policy: crate::policies::InForce,
    /// This instance's name among several on one PostgreSQL database: each batch's
    /// effects are recorded for the others (`realtime::cluster`). `None` on SQLite.
    pub cluster: Option<String>,
}

/// What the writer keeps in memory between batches (exact while it is the only writer,
/// and read back when another one wrote: `refresh`): budget usage, active grants, held
/// calls per agent.
pub struct State {
    pub policy: Arc<Policy>,
    /// The policy's row in `policy_versions` (calls refer to it).
    pub policy_id: i64,
    pub settings: Settings,
    pub usage: UsageState,
    pub grants: GrantState,
    /// Held calls per agent, for `max_pending_per_agent`.
    pub pending: HashMap<String, u32>,
    /// Proposals' webhook-ids of the last minutes (idempotent retries).
    pub recent: recent::RecentMessages,
    /// The last call (rowid) the retention sweep reached.
    pub retained_to: i64,
    /// Break-glass in force, by user.
    pub break_glass: Board,
    /// Overrides nobody has reviewed yet.
    pub overrides_awaiting: u64,
    /// A call (rowid) up to which `recent` holds every webhook-id, for `refresh`: set at
    /// each batch's start, so a refresh may read this writer's last batch again (inserting
    /// an id `recent` holds changes nothing).
    pub seen_rowid: i64,
}

impl State {
    async fn load(db: &Db, policy: Arc<Policy>, settings: Settings) -> Result<State, String> {
        let mut conn = db.acquire().await.map_err(|e| format!("database: {e}"))?;
        let usage = UsageState::load(&mut conn)
            .await
            .map_err(|e| format!("loading budget usage: {e}"))?;
        let pending = calls::pending_per_agent(&mut conn)
            .await
            .map_err(|e| format!("counting held calls: {e}"))?;
        let now = store::now_ms();
        let policy_id = store::policies::store_version(&mut conn, &policy.version, &policy.name, None, now)
            .await
            .map_err(|e| format!("recording the policy version: {e}"))?;
        // Both generations' worth, oldest first (so the newest land in the current one).
        let mut recent = recent::RecentMessages::new(now);
        let since = now - 2 * recent::GENERATION_MS;
        let messages = calls::recent_messages(&mut conn, since)
            .await
            .map_err(|e| format!("reading recent webhook-ids: {e}"))?;
        for (agent, message, id) in messages.iter().rev() {
            recent.insert(agent, message, id, now);
        }
        let seen_rowid = calls::last_rowid(&mut conn)
            .await
            .map_err(|e| format!("reading recent webhook-ids: {e}"))?;
        let break_glass = Board::load(&mut conn)
            .await
            .map_err(|e| format!("loading break-glass: {e}"))?;
        let overrides_awaiting = oncall::overrides::awaiting(&mut conn)
            .await
            .map_err(|e| format!("counting overrides: {e}"))?;
        drop(conn);
        let grants = reviews::active_grants(db, store::now_ms())
            .await
            .map_err(|e| format!("loading grants: {e}"))?;
        Ok(State {
            policy,
            policy_id,
            settings,
            usage,
            grants: GrantState::from_rows(grants),
            pending,
            recent,
            retained_to: 0,
            break_glass,
            overrides_awaiting,
            seen_rowid,
        })
    }

    /// Another writer (an instance on the same database, the CLI, an administrative
    /// write) appended to the chain since this writer's last batch: read back what it may
    /// have changed, inside this batch's transaction and before deciding anything in it.
    /// The policy stays: changes to it are followed by `policies` and adopted in order.
    async fn refresh(&mut self, conn: &mut AnyConnection, known: i64, fx: &mut Effects) -> Result<(), sqlx::Error> {
        let now = store::now_ms();
        self.usage.changed_since(conn, known).await?;
        // Counted only when capped: then there are at most the cap's worth per agent.
        if self.settings.max_pending_per_agent > 0 {
            self.pending = calls::pending_per_agent(conn).await?;
        }
        self.grants = GrantState::from_rows(reviews::active_grants(&mut *conn, now).await?);
        self.overrides_awaiting = oncall::overrides::awaiting(conn).await?;
        let board = Board::load(conn).await?;
        if board.list() != self.break_glass.list() {
            fx.board = Some(board.list());
        }
        self.break_glass = board;
        let since = now - 2 * recent::GENERATION_MS;
        loop {
            let rows = calls::messages_after(conn, self.seen_rowid, 5000).await?;
            let more = rows.len() == 5000;
            for (rowid, agent, message, id, at) in rows {
                if at >= since {
                    self.recent.insert(&agent, &message, &id, now);
                }
                self.seen_rowid = rowid;
            }
            if !more {
                break;
            }
        }
        crate::metrics::get().ledger_refreshes.inc();
        Ok(())
    }
}

/// One write in progress: the open transaction, the audit chain's head, the writer's
/// state and the effects to release after the commit.
pub struct Tx<'a> {
    pub conn: &'a mut AnyConnection,
    pub head: &'a mut Head,
    pub state: &'a mut State,
    pub(crate) fx: &'a mut Effects,
    /// The group being stored is the batch's last work: its statement list may end with
    /// `COMMIT` (`batch_tx`), saving the batch a trip to the database.
    pub commit_last: bool,
    /// Set by whoever ran that `COMMIT`.
    pub committed: bool,
}

impl Tx<'_> {
    /// Append an event to the audit chain.
    pub async fn audit(&mut self, now_ms: i64, ev: &NewEvent) -> Result<(), sqlx::Error> {
        audit::append(self.conn, self.head, now_ms, ev).await.map(drop)
    }

    /// Append several events, in order, with one statement.
    pub async fn audit_many(&mut self, now_ms: i64, events: &[NewEvent]) -> Result<(), sqlx::Error> {
        audit::append_many(self.conn, self.head, now_ms, events).await
    }

    /// Count a decision in the metrics, once committed.
    pub fn count(&mut self, status: app::api::CallStatus, layer: Option<&'static str>, decided_by: Option<&str>) {
        self.fx.count(status, layer, decided_by);
    }

    /// The break-glass board changed: pages read the new one once committed.
    pub fn set_board(&mut self, board: Vec<BreakGlassView>) {
        self.fx.board = Some(board);
    }

    /// Tell the dashboards, once committed.
    pub fn publish(&mut self, event: LiveEvent) {
        self.fx.publish(event);
    }

    /// After a call reached its final status (expiry or a reviewer's decision, i.e. not in
    /// the agent's first answer): queue its callback, wake long-polls, tell dashboards.
    pub async fn finished(&mut self, id: &str, now: i64) -> Result<CallRow, sqlx::Error> {
        let row = calls::get_in(self.conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
        self.finished_row(&row, now).await?;
        Ok(row)
    }

    /// [`Tx::finished`] for a row already read as it now stands.
    pub async fn finished_row(&mut self, row: &CallRow, now: i64) -> Result<(), sqlx::Error> {
        if row.callback_url.is_some() {
            crate::store::callbacks::queue(self.conn, &row.id, now).await?;
            self.fx.callbacks = true;
        }
        self.decided(row);
        Ok(())
    }

    /// A held call was decided: one fewer waiting, wake its long-polls, tell dashboards.
    pub fn decided(&mut self, row: &CallRow) {
        if let Some(n) = self.state.pending.get_mut(&row.agent_id) {
            *n = n.saturating_sub(1);
        }
        self.count(row.status, None, row.decided_by.as_deref());
        self.fx.wake.push(row.id.clone());
        self.fx.publish.push(LiveEvent::CallDecided(CallDecided {
            id: row.id.clone(),
            status: row.status.to_string(),
            decided_by: row.decided_by.clone(),
            session_id: row.session_id.clone(),
            tool: row.tool.clone(),
            agent: row.agent_id.clone(),
            risk: row.risk.as_str().to_string(),
        }));
    }
}

struct Writer {
    db: Db,
    /// The one connection the batches are written on (`store::writer`).
    write: Db,
    state: State,
    shared: Shared,
    /// The chain's head as this writer left it: another head means another writer wrote.
    head_seq: i64,
    /// Checkpoints beside the writer (SQLite); between batches the writer lets the log
    /// start over when it is due (`store::wal`).
    folder: Option<Arc<store::wal::Folder>>,
    /// The connection batches of proposals are written on, and its thread: SQLite's file
    /// alone (`direct`).
    direct: Option<(direct::Conn, Arc<direct::Thread>)>,
}

/// Start the ledger task. Its handle is dropped when every `Ledger` clone is gone.
pub async fn start(
    db: Db,
    policy: Arc<Policy>,
    shared: Shared,
    settings: Settings,
) -> Result<(Ledger, tokio::task::JoinHandle<()>), String> {
    // The head first: a write landing while the state loads makes the first batch refresh.
    let head_seq = {
        let mut conn = db.acquire().await.map_err(|e| format!("database: {e}"))?;
        audit::head(&mut conn)
            .await
            .map_err(|e| format!("reading the audit head: {e}"))?
            .seq
    };
    let state = State::load(&db, policy, settings).await?;
    let write = store::writer(&db).await?;
    let folder = match store::Backend::of(&db) {
        store::Backend::Sqlite => Some(Arc::new(store::wal::Folder::start(&db, Default::default()).await?)),
        store::Backend::Postgres => None,
    };
    // Several instances (PostgreSQL) record each batch's effects for the others: the
    // general way only.
    let direct = match shared.cluster {
        None => direct::open(&db).await?,
        Some(_) => None,
    };
    *shared.board.write().unwrap_or_else(|p| p.into_inner()) = state.break_glass.list();
    let (tx, rx) = mpsc::channel(QUEUE);
    let task = tokio::spawn(
        Writer {
            db,
            write: write.clone(),
            state,
            shared,
            head_seq,
            folder: folder.clone(),
            direct: match &direct {
                Some(conn) => Some((conn.clone(), Arc::new(direct::Thread::start()?))),
                None => None,
            },
        }
        .run(rx),
    );
    Ok((
        Ledger {
            tx,
            write,
            folder,
            direct,
        },
        task,
    ))
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            let mut batch = std::mem::take(&mut batch);
            if self.takes_direct(&batch) {
                match self.commit_direct(batch).await {
                    Some((writer, back)) => {
                        self = writer;
                        batch = back;
                    }
                    None => return,
                }
            }
            if !batch.is_empty() {
                self.commit_batch(batch, &mut rx).await;
            }
            if let Some(folder) = &self.folder {
                folder.restart_if_due(&self.write).await;
            }
        }
        tracing::debug!("ledger stopped");
    }

    /// Whether a batch may take the direct way: proposals alone, none needing a read first.
    fn takes_direct(&self, batch: &[Command]) -> bool {
        let jobs = batch.iter().map(|c| match c {
            Command::Ingest(job, _) => Some(&**job),
            _ => None,
        });
        self.direct.is_some() && jobs.clone().all(|j| j.is_some()) && record::needs_no_read(&self.state, jobs.flatten())
    }

    /// Write a batch of proposals on the direct connection, on its thread (the writer goes
    /// there and comes back). Answers the writer and what is left to write the
    /// general way: nothing, or the whole batch when the chain's head moved. `None` when
    /// the writer was lost (the ledger stops; every later command is answered
    /// "unavailable").
    async fn commit_direct(mut self, batch: Vec<Command>) -> Option<(Writer, Vec<Command>)> {
        let started = std::time::Instant::now();
        let (conn, thread) = self.direct.clone()?;
        let (jobs, replies): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .filter_map(|c| match c {
                Command::Ingest(job, reply) => Some((job, reply)),
                _ => None,
            })
            .unzip();
        let task = thread.run(move || {
            let mut fx = Effects {
                commands: jobs.len(),
                ..Effects::default()
            };
            let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                direct::write(&conn, &mut self.state, &mut fx, self.head_seq, &jobs)
            }));
            (self, fx, jobs, written)
        });
        let Some((mut writer, mut fx, jobs, written)) = task.await else {
            tracing::error!("ledger stopped: its thread is gone");
            return None;
        };
        let committed = match written {
            Ok(Ok(direct::Written::Committed { head_seq, answers })) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    fx.replies.push(Reply::Ingest(reply, answer));
                }
                Ok(head_seq)
            }
            Ok(Ok(direct::Written::Moved | direct::Written::Closed)) => {
                let back = jobs.into_iter().zip(replies).map(|(j, r)| Command::Ingest(j, r));
                return Some((writer, back.collect()));
            }
            failed => {
                for reply in replies {
                    fx.replies.push(Reply::Ingest(reply, Err(LedgerError::Unavailable)));
                }
                Err(match failed {
                    Ok(Err(e)) => e.to_string(),
                    _ => "the batch's writer panicked".to_string(),
                })
            }
        };
        writer.release(fx, started, committed).await;
        Some((writer, Vec::new()))
    }

    async fn commit_batch(&mut self, batch: Vec<Command>, rx: &mut mpsc::Receiver<Command>) {
        let mut fx = Effects::default();
        let started = std::time::Instant::now();
        let outcome = self.apply_batch(batch, rx, &mut fx).await;
        let committed = match outcome {
            Ok((tx, head_seq)) => tx.commit().await.map(|()| head_seq).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        self.release(fx, started, committed).await;
    }

    /// After a batch: on success (the chain's new head), its effects; on failure, the
    /// state reloaded and every sender told "unavailable".
    async fn release(&mut self, mut fx: Effects, started: std::time::Instant, committed: Result<i64, String>) {
        let size = fx.commands;
        let metrics = crate::metrics::get();
        metrics.batch_size.observe(size as f64);
        metrics.commit_seconds.observe(started.elapsed().as_secs_f64());
        self.head_seq = match committed {
            Ok(head_seq) => head_seq,
            Err(e) => {
                tracing::error!(error = %e, "ledger batch failed; nothing in it was stored");
                // The in-memory state may hold changes of the lost batch: reload it.
                let (policy, settings) = (self.state.policy.clone(), self.state.settings.clone());
                match State::load(&self.db, policy, settings).await {
                    Ok(s) => {
                        *self.shared.board.write().unwrap_or_else(|p| p.into_inner()) = s.break_glass.list();
                        self.state = s;
                    }
                    Err(e) => tracing::error!(error = %e, "ledger state not reloaded"),
                }
                for r in fx.replies {
                    r.send(false);
                }
                return;
            }
        };
        for (status, layer, source) in fx.decisions.drain(..) {
            metrics.decided(status, layer, source);
        }
        if let Some(board) = fx.board {
            *self.shared.board.write().unwrap_or_else(|p| p.into_inner()) = board;
        }
        if let Some((policy, version_id, change_id)) = fx.policy {
            // From the next batch on, every decision is made (and recorded) under it.
            self.state.policy = policy.clone();
            self.state.policy_id = version_id;
            fx.publish.push(LiveEvent::PolicyChanged(app::api::PolicyChanged {
                name: policy.name.clone(),
                version: policy.version.to_string(),
            }));
            self.shared.policy.set(policy, change_id);
        }
        for r in fx.replies {
            r.send(true);
        }
        for id in &fx.wake {
            self.shared.waiters.wake(id);
        }
        for event in fx.publish {
            self.shared.hub.publish(event);
        }
        if fx.callbacks {
            self.shared.callbacks.notify_one();
        }
    }

    /// Apply every command in one transaction. Any SQL error fails the whole batch:
    /// nothing in it was acknowledged, so every sender gets "unavailable" and may retry
    /// (ingest is idempotent per webhook-id). Savepoints per command would cost two more
    /// round trips to SQLite per call for a case that only a failing disk produces.
    async fn apply_batch(
        &mut self,
        mut batch: Vec<Command>,
        rx: &mut mpsc::Receiver<Command>,
        fx: &mut Effects,
    ) -> Result<(BatchTx, i64), sqlx::Error> {
        let (mut open, mut head, newest_call) = BatchTx::begin(&self.write).await?;
        // What arrived while waiting for the lock (another instance held it) joins this batch.
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(cmd) => batch.push(cmd),
                Err(_) => break,
            }
        }
        fx.commands = batch.len();
        // On one instance the last group of proposals may commit the batch itself.
        let fuse_commit = open.can_fuse_commit() && self.shared.cluster.is_none();
        let ends_with_ingest = fuse_commit && matches!(batch.last(), Some(Command::Ingest(..)));
        let conn = open.conn();
        if head.seq != self.head_seq {
            self.state.refresh(conn, self.head_seq, fx).await?;
        } else {
            // Nobody else wrote since this writer's last batch: every call stored so far is
            // one whose webhook-id `recent` holds (a later refresh reads only newer ones).
            self.state.seen_rowid = newest_call;
        }
        let mut tx = Tx {
            conn,
            head: &mut head,
            state: &mut self.state,
            fx,
            commit_last: false,
            committed: false,
        };
        let mut group = Vec::new();
        for cmd in batch {
            let cmd = match cmd {
                Command::Ingest(job, reply) => {
                    group.push((job, reply));
                    continue;
                }
                other => other,
            };
            // Keep the order of effects: proposals queued before this command go first.
            if !group.is_empty() {
                ingest_group(&mut tx, std::mem::take(&mut group)).await?;
            }
            if let Err((e, reply)) = apply(&mut tx, cmd).await {
                tx.fx.replies.push(reply);
                return Err(e);
            }
        }
        if !group.is_empty() {
            tx.commit_last = ends_with_ingest;
            ingest_group(&mut tx, group).await?;
        }
        if tx.committed {
            open.committed_by_statement();
        }
        if let Some(instance) = &self.shared.cluster {
            let batch = crate::realtime::cluster::Batch {
                events: &fx.publish,
                wake: &fx.wake,
                callbacks: fx.callbacks,
                policy: fx.policy_recorded,
            };
            crate::realtime::cluster::record(open.conn(), instance, batch).await?;
        }
        Ok((open, head.seq))
    }
}

/// Decide and store a run of proposals, queueing each sender's answer.
async fn ingest_group(tx: &mut Tx<'_>, group: Vec<(Box<IngestJob>, IngestReply)>) -> Result<(), sqlx::Error> {
    let (jobs, replies): (Vec<_>, Vec<_>) = group.into_iter().unzip();
    let answers = record::ingest(tx, jobs).await?;
    for (reply, answer) in replies.into_iter().zip(answers) {
        tx.fx.replies.push(Reply::Ingest(reply, answer));
    }
    Ok(())
}

/// Apply one command and queue its answer. On error, the reply that tells its sender.
async fn apply(tx: &mut Tx<'_>, cmd: Command) -> Result<(), (sqlx::Error, Reply)> {
    let reply = match cmd {
        // Proposals are stored in groups by `ingest_group`.
        Command::Ingest(_, reply) => {
            return Err((
                sqlx::Error::Protocol("ingest outside a group".into()),
                Reply::Ingest(reply, Err(LedgerError::Unavailable)),
            ))
        }
        Command::Cancel { agent, id, reply } => match record::cancel(tx, &agent, &id).await {
            Ok(r) => Reply::Row(reply, Box::new(r)),
            Err(e) => return Err((e, Reply::Row(reply, Box::new(Err(LedgerError::Unavailable))))),
        },
        Command::Report {
            agent,
            id,
            outcome,
            reply,
        } => match record::report(tx, &agent, &id, &outcome).await {
            Ok(r) => Reply::Row(reply, Box::new(r)),
            Err(e) => return Err((e, Reply::Row(reply, Box::new(Err(LedgerError::Unavailable))))),
        },
        Command::Expire { now_ms, reply } => match expire_all(tx, now_ms).await {
            Ok(n) => Reply::Count(reply, n),
            Err(e) => return Err((e, Reply::Count(reply, 0))),
        },
        Command::Retain { before_ms, reply } => match retention::purge(tx, before_ms).await {
            Ok(n) => Reply::Count(reply, n),
            Err(e) => return Err((e, Reply::Count(reply, 0))),
        },
        Command::CallbackAttempt(a, reply) => match callbacks::record_attempt(tx, &a).await {
            Ok(()) => Reply::Unit(reply),
            Err(e) => return Err((e, Reply::Unit(reply))),
        },
        Command::Audit(ev) => match tx.audit(store::now_ms(), &ev).await {
            Ok(()) => Reply::None,
            Err(e) => return Err((e, Reply::None)),
        },
        Command::AuditNow(ev, reply) => match tx.audit(store::now_ms(), &ev).await {
            Ok(()) => Reply::Ack(reply),
            Err(e) => return Err((e, Reply::Ack(reply))),
        },
        Command::Review(r, reply) => match decide::review(tx, &r).await {
            Ok(v) => Reply::Review(reply, v),
            Err(e) => return Err((e, Reply::Review(reply, Err(ReviewError::Unavailable)))),
        },
        Command::RevokeGrant { id, by, reason, reply } => match grants::revoke(tx, &id, &by, &reason).await {
            Ok(found) => Reply::Done(reply, if found { Ok(()) } else { Err(ReviewError::GrantNotFound) }),
            Err(e) => return Err((e, Reply::Done(reply, Err(ReviewError::Unavailable)))),
        },
        Command::StartBreakGlass {
            user,
            justification,
            minutes,
            reply,
        } => match oncall::break_glass::start(tx, &user, &justification, minutes, store::now_ms()).await {
            Ok(v) => Reply::BreakGlass(reply, v),
            Err(e) => return Err((e, Reply::BreakGlass(reply, Err(ReviewError::Unavailable)))),
        },
        Command::EndBreakGlass { id, by, reason, reply } => {
            match oncall::break_glass::end(tx, &id, &by, &reason, store::now_ms()).await {
                Ok(v) => Reply::Flag(reply, v),
                Err(e) => return Err((e, Reply::Flag(reply, false))),
            }
        }
        Command::Override { call_id, user, reply } => {
            match oncall::overrides::release(tx, &call_id, &user, store::now_ms()).await {
                Ok(v) => Reply::Review(reply, v),
                Err(e) => return Err((e, Reply::Review(reply, Err(ReviewError::Unavailable)))),
            }
        }
        Command::Acknowledge {
            call_id,
            user,
            agree,
            note,
            reply,
        } => match oncall::overrides::acknowledge(tx, &call_id, &user, agree, note.as_deref(), store::now_ms()).await {
            Ok(v) => Reply::Done(reply, v),
            Err(e) => return Err((e, Reply::Done(reply, Err(ReviewError::Unavailable)))),
        },
        Command::Escalate { ids, now_ms, reply } => match oncall::escalation::escalate(tx, &ids, now_ms).await {
            Ok(n) => Reply::Count(reply, n),
            Err(e) => return Err((e, Reply::Count(reply, 0))),
        },
        Command::ApplyPolicy(change, reply) => match record_policy(tx, &change).await {
            Ok(applied) => Reply::Policy(reply, applied),
            Err(e) => return Err((e, Reply::None)),
        },
        Command::AdoptPolicy {
            policy,
            version_id,
            change_id,
            reply,
        } => {
            tx.fx.policy = Some((policy, version_id, change_id));
            Reply::Unit(reply)
        }
    };
    tx.fx.replies.push(reply);
    Ok(())
}

/// Record a policy change in this batch; it is put in force once the batch is committed.
async fn record_policy(
    tx: &mut Tx<'_>,
    change: &crate::policies::Change,
) -> Result<crate::policies::Applied, sqlx::Error> {
    use crate::store::policies as rows;
    let now = store::now_ms();
    // A change queued earlier in this batch is the one this one follows.
    let (current, current_id) = match &tx.fx.policy {
        Some((p, id, _)) => (p.clone(), *id),
        None => (tx.state.policy.clone(), tx.state.policy_id),
    };
    let new = &change.policy;
    let version_id = rows::store_version(tx.conn, &new.version, &new.name, Some(&change.source), now).await?;
    let mut applied = crate::policies::Applied {
        name: new.name.clone(),
        version: new.version.to_string(),
        previous: current.version.to_string(),
        changed: false,
    };
    if new.version == current.version {
        return Ok(applied);
    }
    let change_id = rows::record_change(
        tx.conn,
        version_id,
        Some(current_id),
        &change.actor,
        change.via,
        change.note.as_deref(),
        now,
    )
    .await?;
    tx.audit(now, &crate::policies::applied_event(change, &current.version))
        .await?;
    tx.fx.policy = Some((new.clone(), version_id, change_id));
    tx.fx.policy_recorded = true;
    applied.changed = true;
    Ok(applied)
}

/// Held calls past their expiry, and break-glass past its end, both at `now`.
async fn expire_all(tx: &mut Tx<'_>, now: i64) -> Result<usize, sqlx::Error> {
    oncall::break_glass::end_due(tx, now).await?;
    expiry::expire(tx, now).await
}

type IngestReply = oneshot::Sender<Result<Ingested, LedgerError>>;
