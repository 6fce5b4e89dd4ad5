//! The ledger: the one task that writes calls, decisions, budget usage and audit events.
//!
//! Handlers send commands over a channel; the ledger takes whatever has queued up (up to
//! `MAX_BATCH`), applies each inside a savepoint of one `BEGIN IMMEDIATE` transaction,
//! commits once (group commit, `synchronous = FULL`) and only then answers. So nothing is
//! acknowledged before it is on disk, a slow disk is paid once per batch instead of once
//! per call, and budgets and the audit chain have a single, serial writer.

use crate::audit::{self, Head, NewEvent};
use crate::ingest::facts::{Facts, Recorded};
use crate::ingest::proposal::Proposal;
use crate::ingest::view::{call_view, executable};
use crate::realtime::{waiters::Waiters, Hub};
use crate::review::grants::GrantState;
use crate::review::{self, Action, GrantKind, Review, ReviewError, Reviewed};
use crate::store::calls::{self, CallRow, NewCall};
use crate::store::review::{self as reviews, GrantRow};
use crate::store::usage::UsageState;
use crate::store::{self, Db};
use policy::{Call, Inputs, Policy, UsageDelta};
use serde_json::{json, Value};
use sqlx::SqliteConnection;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Notify};

const MAX_BATCH: usize = 512;
const QUEUE: usize = 8192;

/// What a handler may ask the ledger to do.
pub enum Command {
    Ingest(Box<IngestJob>, oneshot::Sender<Result<Ingested, LedgerError>>),
    Cancel {
        agent: String,
        id: String,
        reply: oneshot::Sender<Result<CallRow, LedgerError>>,
    },
    Report {
        agent: String,
        id: String,
        outcome: Outcome,
        reply: oneshot::Sender<Result<CallRow, LedgerError>>,
    },
    /// Expire pending calls whose time is up; answers how many.
    Expire {
        now_ms: i64,
        reply: oneshot::Sender<usize>,
    },
    /// One delivery attempt of a callback finished.
    CallbackAttempt(CallbackAttempt, oneshot::Sender<()>),
    /// An event with nothing else to write (e.g. a refused signature).
    Audit(NewEvent),
    /// An event that must be on disk before its sender goes on (e.g. a secret shown).
    AuditNow(NewEvent, oneshot::Sender<Result<(), LedgerError>>),
    /// A reviewer's decision on a held call.
    Review(Review, oneshot::Sender<Result<Reviewed, ReviewError>>),
    RevokeGrant {
        id: String,
        by: String,
        reason: String,
        reply: oneshot::Sender<Result<(), ReviewError>>,
    },
}

pub struct IngestJob {
    pub agent: String,
    /// Redacted forms, prepared by the handler (redaction is the costliest step and
    /// needs no shared state, so it runs in parallel, not in the serial ledger).
    pub redacted: RedactedProposal,
    pub message_id: String,
    pub body_sha256: [u8; 32],
    pub proposal: Proposal,
    pub facts: Facts,
    pub received_at_ms: i64,
}

/// What may be stored and shown of a proposal.
pub struct RedactedProposal {
    pub arguments: Value,
    pub masked: Vec<policy::redact::Masked>,
    pub context: Option<String>,
    pub reason: Option<String>,
    pub plan: Option<String>,
}

impl RedactedProposal {
    pub fn of(p: &Proposal) -> RedactedProposal {
        let args = policy::redact::redact_value(&p.arguments);
        RedactedProposal {
            arguments: args.value,
            masked: args.masked,
            context: (!p.context.is_null()).then(|| policy::redact::redact_value(&p.context).value.to_string()),
            reason: p.reason.as_deref().map(|r| policy::redact::redact_text(r).value),
            plan: p.plan.as_deref().map(|r| policy::redact::redact_text(r).value),
        }
    }
}

/// The answer to an ingest: the JSON body, and whether it is a replay of an earlier one.
#[derive(Debug)]
pub struct Ingested {
    pub body: String,
    pub replay: bool,
}

pub struct Outcome {
    pub ok: bool,
    pub summary: Option<String>,
    pub duration_ms: Option<i64>,
}

pub struct CallbackAttempt {
    pub call_id: String,
    pub attempt: i64,
    /// HTTP status, or the error when nothing came back.
    pub result: Result<u16, String>,
    /// When to try again; `None` when this was the last attempt or it succeeded.
    pub retry_at_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error("this webhook-id was already used with a different body")]
    Conflict,
    #[error("no such tool call")]
    NotFound,
    #[error("the call is already {0}")]
    NotPending(String),
    #[error("a result was already reported for this call")]
    AlreadyReported,
    #[error("the call is {0}; only executable calls have results")]
    NotExecutable(String),
    #[error("this agent already has {0} held calls waiting for a decision")]
    TooManyPending(u32),
    #[error("the store is unavailable")]
    Unavailable,
}

/// A cloneable handle to the ledger task.
#[derive(Clone)]
pub struct Ledger {
    tx: mpsc::Sender<Command>,
}

impl Ledger {
    pub async fn send(&self, cmd: Command) -> Result<(), LedgerError> {
        self.tx.send(cmd).await.map_err(|_| LedgerError::Unavailable)
    }

    pub async fn ingest(&self, job: IngestJob) -> Result<Ingested, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Ingest(Box::new(job), reply)).await?;
        rx.await.map_err(|_| LedgerError::Unavailable)?
    }

    pub async fn cancel(&self, agent: &str, id: &str) -> Result<CallRow, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Cancel {
            agent: agent.into(),
            id: id.into(),
            reply,
        })
        .await?;
        rx.await.map_err(|_| LedgerError::Unavailable)?
    }

    pub async fn report(&self, agent: &str, id: &str, outcome: Outcome) -> Result<CallRow, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Report {
            agent: agent.into(),
            id: id.into(),
            outcome,
            reply,
        })
        .await?;
        rx.await.map_err(|_| LedgerError::Unavailable)?
    }

    pub async fn expire(&self, now_ms: i64) -> Result<usize, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Expire { now_ms, reply }).await?;
        rx.await.map_err(|_| LedgerError::Unavailable)
    }

    pub async fn callback_attempt(&self, a: CallbackAttempt) {
        let (reply, rx) = oneshot::channel();
        if self.send(Command::CallbackAttempt(a, reply)).await.is_ok() {
            let _ = rx.await;
        }
    }

    pub async fn review(&self, r: Review) -> Result<Reviewed, ReviewError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Review(r, reply))
            .await
            .map_err(|_| ReviewError::Unavailable)?;
        rx.await.map_err(|_| ReviewError::Unavailable)?
    }

    pub async fn revoke_grant(&self, id: &str, by: &str, reason: &str) -> Result<(), ReviewError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::RevokeGrant {
            id: id.into(),
            by: by.into(),
            reason: reason.into(),
            reply,
        })
        .await
        .map_err(|_| ReviewError::Unavailable)?;
        rx.await.map_err(|_| ReviewError::Unavailable)?
    }

    /// Record an event and wait until it is committed.
    pub async fn audit_now(&self, ev: NewEvent) -> Result<(), LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::AuditNow(ev, reply)).await?;
        rx.await.map_err(|_| LedgerError::Unavailable)?
    }

    /// Record an event without waiting; dropped (and logged) if the ledger is overloaded.
    pub fn audit(&self, ev: NewEvent) {
        if let Err(e) = self.tx.try_send(Command::Audit(ev)) {
            tracing::warn!(error = %e, "audit event dropped: ledger queue full");
        }
    }
}

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
    Revoke(oneshot::Sender<Result<(), ReviewError>>, Result<(), ReviewError>),
    Ack(oneshot::Sender<Result<(), LedgerError>>),
    None,
}

#[derive(Default)]
struct Effects {
    replies: Vec<Reply>,
    publish: Vec<(&'static str, Value)>,
    wake: Vec<String>,
    callbacks: bool,
}

/// Rules the ledger enforces beyond the policy.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Held calls one agent may have waiting at once (0: no cap).
    pub max_pending_per_agent: u32,
    /// `on_behalf_of` principal (lower-case) → user name (lower-case).
    pub principals: std::collections::HashMap<String, String>,
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
}

struct Writer {
    db: Db,
    policy: Arc<Policy>,
    usage: UsageState,
    grants: GrantState,
    shared: Shared,
    settings: Settings,
    /// Held calls per agent, for `max_pending_per_agent` (reloaded after a failed batch).
    pending: std::collections::HashMap<String, u32>,
}

/// Start the ledger task. Its handle is dropped when every `Ledger` clone is gone.
pub async fn start(
    db: Db,
    policy: Arc<Policy>,
    shared: Shared,
    settings: Settings,
) -> Result<(Ledger, tokio::task::JoinHandle<()>), String> {
    let mut conn = db.acquire().await.map_err(|e| format!("database: {e}"))?;
    let usage = UsageState::load(&mut conn)
        .await
        .map_err(|e| format!("loading budget usage: {e}"))?;
    let pending = calls::pending_per_agent(&mut conn)
        .await
        .map_err(|e| format!("counting held calls: {e}"))?;
    drop(conn);
    let grants = reviews::active_grants(&db, store::now_ms())
        .await
        .map_err(|e| format!("loading grants: {e}"))?;
    let (tx, rx) = mpsc::channel(QUEUE);
    let writer = Writer {
        db,
        policy,
        usage,
        grants: GrantState::from_rows(grants),
        shared,
        settings,
        pending,
    };
    let task = tokio::spawn(writer.run(rx));
    Ok((Ledger { tx }, task))
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
            self.commit_batch(std::mem::take(&mut batch)).await;
        }
        tracing::debug!("ledger stopped");
    }

    async fn commit_batch(&mut self, batch: Vec<Command>) {
        let mut fx = Effects::default();
        let outcome = self.apply_batch(batch, &mut fx).await;
        let committed = match outcome {
            Ok(tx) => tx.commit().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = committed {
            tracing::error!(error = %e, "ledger batch failed; nothing in it was stored");
            // In-memory budget state may hold deltas of the lost batch: reload it.
            if let Ok(mut conn) = self.db.acquire().await {
                if let Ok(u) = UsageState::load(&mut conn).await {
                    self.usage = u;
                }
                if let Ok(p) = calls::pending_per_agent(&mut conn).await {
                    self.pending = p;
                }
            }
            if let Ok(rows) = reviews::active_grants(&self.db, store::now_ms()).await {
                self.grants = GrantState::from_rows(rows);
            }
            for r in fx.replies {
                match r {
                    Reply::Ingest(tx, _) => drop(tx.send(Err(LedgerError::Unavailable))),
                    Reply::Row(tx, _) => drop(tx.send(Err(LedgerError::Unavailable))),
                    Reply::Count(tx, _) => drop(tx.send(0)),
                    Reply::Unit(tx) => drop(tx.send(())),
                    Reply::Review(tx, _) => drop(tx.send(Err(ReviewError::Unavailable))),
                    Reply::Revoke(tx, _) => drop(tx.send(Err(ReviewError::Unavailable))),
                    Reply::Ack(tx) => drop(tx.send(Err(LedgerError::Unavailable))),
                    Reply::None => {}
                }
            }
            return;
        }
        for r in fx.replies {
            match r {
                Reply::Ingest(tx, v) => drop(tx.send(v)),
                Reply::Row(tx, v) => drop(tx.send(*v)),
                Reply::Count(tx, v) => drop(tx.send(v)),
                Reply::Unit(tx) => drop(tx.send(())),
                Reply::Review(tx, v) => drop(tx.send(v)),
                Reply::Revoke(tx, v) => drop(tx.send(v)),
                Reply::Ack(tx) => drop(tx.send(Ok(()))),
                Reply::None => {}
            }
        }
        for id in &fx.wake {
            self.shared.waiters.wake(id);
        }
        for (kind, data) in fx.publish {
            self.shared.hub.publish(kind, data);
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
        batch: Vec<Command>,
        fx: &mut Effects,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
        let mut tx = store::begin_write(&self.db).await?;
        let mut head = audit::head(&mut tx).await?;
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
                self.ingest_group(&mut tx, &mut head, std::mem::take(&mut group), fx)
                    .await?;
            }
            match self.apply(&mut tx, &mut head, cmd, fx).await {
                // Later commands in this batch must see this one's budget use.
                Ok(deltas) => self.usage.apply(&deltas),
                Err((e, reply)) => {
                    fx.replies.push(reply);
                    return Err(e);
                }
            }
        }
        if !group.is_empty() {
            self.ingest_group(&mut tx, &mut head, group, fx).await?;
        }
        Ok(tx)
    }

    /// Apply one command. On error, the reply that tells its sender.
    async fn apply(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        cmd: Command,
        fx: &mut Effects,
    ) -> Result<Vec<UsageDelta>, (sqlx::Error, Reply)> {
        match cmd {
            // Proposals are stored in groups by `ingest_group`.
            Command::Ingest(_, reply) => Err((
                sqlx::Error::Protocol("ingest outside a group".into()),
                Reply::Ingest(reply, Err(LedgerError::Unavailable)),
            )),
            Command::Cancel { agent, id, reply } => match self.cancel(conn, head, &agent, &id, fx).await {
                Ok(r) => {
                    fx.replies.push(Reply::Row(reply, Box::new(r)));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Row(reply, Box::new(Err(LedgerError::Unavailable))))),
            },
            Command::Report {
                agent,
                id,
                outcome,
                reply,
            } => match self.report(conn, head, &agent, &id, &outcome).await {
                Ok(r) => {
                    fx.replies.push(Reply::Row(reply, Box::new(r)));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Row(reply, Box::new(Err(LedgerError::Unavailable))))),
            },
            Command::Expire { now_ms, reply } => match self.expire(conn, head, now_ms, fx).await {
                Ok(n) => {
                    fx.replies.push(Reply::Count(reply, n));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Count(reply, 0))),
            },
            Command::CallbackAttempt(a, reply) => match self.callback_attempt(conn, head, &a).await {
                Ok(()) => {
                    fx.replies.push(Reply::Unit(reply));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Unit(reply))),
            },
            Command::Audit(ev) => match audit::append(conn, head, store::now_ms(), &ev).await {
                Ok(_) => Ok(Vec::new()),
                Err(e) => Err((e, Reply::None)),
            },
            Command::AuditNow(ev, reply) => match audit::append(conn, head, store::now_ms(), &ev).await {
                Ok(_) => {
                    fx.replies.push(Reply::Ack(reply));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Ack(reply))),
            },
            Command::Review(r, reply) => match self.review(conn, head, &r, fx).await {
                Ok(v) => {
                    fx.replies.push(Reply::Review(reply, v));
                    Ok(Vec::new())
                }
                Err(e) => Err((e, Reply::Review(reply, Err(ReviewError::Unavailable)))),
            },
            Command::RevokeGrant { id, by, reason, reply } => {
                match self.revoke(conn, head, &id, &by, &reason, fx).await {
                    Ok(v) => {
                        let v = if v { Ok(()) } else { Err(ReviewError::GrantNotFound) };
                        fx.replies.push(Reply::Revoke(reply, v));
                        Ok(Vec::new())
                    }
                    Err(e) => Err((e, Reply::Revoke(reply, Err(ReviewError::Unavailable)))),
                }
            }
        }
    }

    /// Decide a run of proposals and store them with one statement per table: the
    /// ledger is serial, so per-call round trips to SQLite are what limits throughput.
    async fn ingest_group(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        group: Vec<(Box<IngestJob>, IngestReply)>,
        fx: &mut Effects,
    ) -> Result<(), sqlx::Error> {
        let keys: Vec<(&str, &str)> = group
            .iter()
            .map(|(j, _)| (j.agent.as_str(), j.message_id.as_str()))
            .collect();
        let mut known = calls::find_messages(conn, &keys).await?;
        let mut prepared: Vec<(Box<IngestJob>, Prepared)> = Vec::with_capacity(group.len());
        let mut deltas = Vec::new();
        for (job, reply) in group {
            let key = (job.agent.clone(), job.message_id.clone());
            if let Some((hash, response)) = known.get(&key) {
                // The idempotency key was used before (earlier, or earlier in this batch).
                let r = if hash[..] == job.body_sha256 {
                    Ok(Ingested {
                        body: response.clone(),
                        replay: true,
                    })
                } else {
                    // Same id, other body: a forgery attempt or a broken client; kept.
                    let ev = NewEvent {
                        kind: "agent_replay_refused",
                        actor: format!("agent:{}", job.agent),
                        call_id: None,
                        session_id: Some(job.proposal.session_id.clone()),
                        data: json!({
                            "message_id": job.message_id, "path": "/api/v1/tool-calls",
                            "tool": job.proposal.tool, "why": "webhook-id reused with a different body",
                        }),
                    };
                    audit::append(conn, head, store::now_ms(), &ev).await?;
                    Err(LedgerError::Conflict)
                };
                fx.replies.push(Reply::Ingest(reply, r));
                continue;
            }
            // A new trust context ends the session's grants before this call is decided.
            let trust = review::trust_of(&job.proposal.context);
            for (grant, was) in self.grants.stale(&job.agent, &job.proposal.session_id, &trust) {
                let why = format!("the session's trust context changed from {was} to {trust}");
                self.revoke(conn, head, &grant, "system", &why, fx).await?;
            }
            let mut p = self.prepare(&job, trust);
            if p.pending.is_some() {
                let held = self.pending.entry(job.agent.clone()).or_default();
                let cap = self.settings.max_pending_per_agent;
                if cap > 0 && *held >= cap {
                    // Nothing is stored or charged: the agent may retry the same message later.
                    fx.replies
                        .push(Reply::Ingest(reply, Err(LedgerError::TooManyPending(cap))));
                    continue;
                }
                *held += 1;
            }
            // Later calls in this batch must see this one's budget use.
            self.usage.apply(&p.deltas);
            deltas.append(&mut p.deltas);
            known.insert(key, (job.body_sha256.to_vec(), p.response.clone()));
            fx.replies.push(Reply::Ingest(
                reply,
                Ok(Ingested {
                    body: p.response.clone(),
                    replay: false,
                }),
            ));
            if let Some(ev) = p.pending.take() {
                fx.publish.push(("call_pending", ev));
            }
            prepared.push((job, p));
        }
        let rows: Vec<NewCall<'_>> = prepared.iter().map(|(job, p)| p.new_call(job)).collect();
        calls::insert_many(conn, &rows).await?;
        let events: Vec<audit::Chained<'_>> = prepared
            .iter()
            .map(|(_, p)| audit::chain(head, p.row.created_at_ms, &p.event))
            .collect();
        audit::insert_many(conn, &events).await?;
        UsageState::persist(conn, &deltas).await
    }

    /// Evaluate one proposal and build everything that will be stored and answered.
    fn prepare(&self, job: &IngestJob, trust: String) -> Prepared {
        let p = &job.proposal;
        let now = store::now_ms();
        let grants = self.grants.for_session(&job.agent, &p.session_id, now);
        let started = std::time::Instant::now();
        let call = p.call(&job.agent);
        let host = Recorded(&job.facts);
        let d = self.policy.evaluate(
            &call,
            &Inputs {
                now_ms: now,
                usage: &self.usage,
                grants: &grants,
                host: &host,
            },
        );
        let eval_us = started.elapsed().as_micros() as u64;
        let id = format!("tc_{}", uuid::Uuid::now_v7().simple());
        let redacted = &job.redacted;
        let mut details = json!({
            "shadow": d.shadow, "impact": d.impact, "pinned": d.pinned, "masked": redacted.masked,
            "destructive": d.destructive, "break_glass": d.break_glass, "grantable": d.grantable,
        });
        if d.status == policy::Status::Pending {
            // What a reviewer's modification must replace, and why no grant is offered.
            details["charged"] = json!(d.usage);
            details["not_grantable"] = json!(d.not_grantable);
        }
        let details = details.to_string();
        let status = d.status.as_str();
        let row = CallRow {
            id: id.clone(),
            agent_id: job.agent.clone(),
            session_id: p.session_id.clone(),
            trace_id: p.trace_id.clone(),
            tool: p.tool.clone(),
            server: p.server.clone(),
            arguments: p.arguments.to_string(),
            arguments_redacted: redacted.arguments.to_string(),
            status: status.to_string(),
            blocked_by: d.blocked_by.map(|l| l.as_str().to_string()),
            rule: d.rule.clone(),
            reason: d.reason.clone(),
            risk: d.risk.as_str().to_string(),
            approvers_required: i64::from(d.approvers_required),
            policy_version: d.policy_version.to_string(),
            created_at_ms: now,
            expires_at_ms: d.expires_at_ms,
            decided_at_ms: (status != "pending").then_some(now),
            decided_by: None,
            comment: None,
            final_arguments: None,
            callback_url: p.callback_url.clone(),
            result_outcome: None,
            pinned: (!d.pinned.is_empty()).then(|| json!(d.pinned).to_string()),
        };
        let response = call_view(&row).to_string();
        let source = match d.source {
            policy::Source::Policy => "policy",
            policy::Source::Grant => "grant",
        };
        let event = NewEvent {
            kind: "call_received",
            actor: format!("agent:{}", job.agent),
            call_id: Some(id.clone()),
            session_id: Some(p.session_id.clone()),
            data: json!({
                "tool": p.tool, "server": p.server, "trace_id": p.trace_id, "turn_id": p.turn_id,
                "arguments": redacted.arguments, "masked": redacted.masked,
                "reason": redacted.reason, "plan": redacted.plan,
                "on_behalf_of": p.on_behalf_of, "message_id": job.message_id,
                "decision": {
                    "status": status, "blocked_by": row.blocked_by, "rule": d.rule, "reason": d.reason,
                    "source": source, "grant_id": d.grant_id, "policy_version": row.policy_version,
                    "risk": row.risk, "approvers_required": row.approvers_required,
                    "expires_at_ms": d.expires_at_ms, "shadow": d.shadow,
                },
                "timings": {"received_at_ms": job.received_at_ms, "evaluate_us": eval_us},
            }),
        };
        let pending = (status == "pending")
            .then(|| serde_json::to_value(crate::backend::queue_item(&self.policy, &row)).unwrap_or(Value::Null));
        Prepared {
            row,
            details,
            response,
            event,
            pending,
            deltas: d.usage,
            trust,
        }
    }

    async fn cancel(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        agent: &str,
        id: &str,
        fx: &mut Effects,
    ) -> Result<Result<CallRow, LedgerError>, sqlx::Error> {
        let Some(row) = calls::get_in(conn, id).await?.filter(|r| r.agent_id == agent) else {
            return Ok(Err(LedgerError::NotFound));
        };
        if row.status != "pending" {
            return Ok(Err(LedgerError::NotPending(row.status)));
        }
        let now = store::now_ms();
        let by = format!("agent:{agent}");
        calls::finish(conn, id, "cancelled", now, &by, None, None).await?;
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "call_cancelled",
                actor: by,
                call_id: Some(id.to_string()),
                session_id: Some(row.session_id.clone()),
                data: json!({"tool": row.tool, "waited_ms": now - row.created_at_ms}),
            },
        )
        .await?;
        let row = calls::get_in(conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
        decided(fx, &mut self.pending, &row);
        Ok(Ok(row))
    }

    async fn report(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        agent: &str,
        id: &str,
        o: &Outcome,
    ) -> Result<Result<CallRow, LedgerError>, sqlx::Error> {
        let Some(row) = calls::get_in(conn, id).await?.filter(|r| r.agent_id == agent) else {
            return Ok(Err(LedgerError::NotFound));
        };
        if !executable(&row.status) {
            return Ok(Err(LedgerError::NotExecutable(row.status)));
        }
        let now = store::now_ms();
        let outcome = if o.ok { "ok" } else { "error" };
        let summary = o.summary.as_deref().map(|s| policy::redact::redact_text(s).value);
        if !calls::record_result(conn, id, outcome, summary.as_deref(), o.duration_ms, now).await? {
            return Ok(Err(LedgerError::AlreadyReported));
        }
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "call_result",
                actor: format!("agent:{agent}"),
                call_id: Some(id.to_string()),
                session_id: Some(row.session_id.clone()),
                data: json!({"tool": row.tool, "outcome": outcome, "summary": summary, "duration_ms": o.duration_ms}),
            },
        )
        .await?;
        let row = calls::get_in(conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
        Ok(Ok(row))
    }

    async fn expire(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        now: i64,
        fx: &mut Effects,
    ) -> Result<usize, sqlx::Error> {
        let due = calls::due_for_expiry(conn, now, 500).await?;
        let mut n = 0;
        for row in due {
            if !calls::finish(
                conn,
                &row.id,
                "expired",
                now,
                "system",
                Some("no decision before the expiry"),
                None,
            )
            .await?
            {
                continue;
            }
            audit::append(
                conn,
                head,
                now,
                &NewEvent {
                    kind: "call_expired",
                    actor: "system".into(),
                    call_id: Some(row.id.clone()),
                    session_id: Some(row.session_id.clone()),
                    data: json!({"tool": row.tool, "expires_at_ms": row.expires_at_ms, "agent": row.agent_id}),
                },
            )
            .await?;
            self.finished(conn, &row.id, now, fx).await?;
            n += 1;
        }
        Ok(n)
    }

    /// Apply a reviewer's decision. Only a pending, unexpired call can be decided; the
    /// first decision to reach the ledger wins and later ones are told who won.
    async fn review(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        r: &Review,
        fx: &mut Effects,
    ) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
        let Some(row) = calls::get_in(conn, &r.call_id).await? else {
            return Ok(Err(ReviewError::NotFound));
        };
        if row.status != "pending" {
            return Ok(Err(ReviewError::AlreadyDecided {
                status: row.status,
                by: row.decided_by.unwrap_or_else(|| "the policy".into()),
            }));
        }
        let now = store::now_ms();
        if row.expires_at_ms.is_some_and(|t| t <= now) {
            return Ok(Err(ReviewError::Expired));
        }
        let origin = calls::origin_in(conn, &row.id).await?.ok_or(sqlx::Error::RowNotFound)?;
        let releases = matches!(r.action, Action::Approve { .. } | Action::Modify { .. });
        // Separation of duties: nobody releases a call made on their own behalf.
        if let (true, Some(principal)) = (releases, origin.on_behalf_of.as_deref()) {
            let me = r.reviewer.strip_prefix("user:").unwrap_or(&r.reviewer);
            if self.settings.is_principal(principal, me) {
                let why = "this call was made on your behalf; another reviewer must decide it".to_string();
                return self
                    .refused(conn, head, now, &row, r, ReviewError::Forbidden(why))
                    .await;
            }
        }
        let recorded = reviews::approvals_in(conn, &row.id).await?;
        // Only approvals of people who may still decide count (disabled or moved to a
        // role that cannot decide: their earlier approvals lapse).
        let mut approvals = reviews::valid_approvals_in(conn, &row.id).await?;
        let mut grant_id = None;
        let base = json!({"tool": row.tool, "server": row.server, "agent": row.agent_id, "action": r.action.name()});
        let (status, comment, final_args, mut data) = match &r.action {
            Action::Reject { reason } => ("rejected", Some(reason.clone()), None, json!({"reason": reason})),
            Action::Skip { comment } => ("skipped", comment.clone(), None, json!({"comment": comment})),
            Action::Modify {
                arguments,
                comment,
                facts,
            } => {
                let m = match self.modification(conn, &row, &origin, arguments, facts, now).await? {
                    Ok(m) => m,
                    Err(e) => return self.refused(conn, head, now, &row, r, e).await,
                };
                // Earlier approvals were given to other arguments: only the modifier's counts.
                reviews::clear_approvals(conn, &row.id).await?;
                reviews::add_approval(conn, &row.id, &r.reviewer, now).await?;
                approvals = vec![r.reviewer.clone()];
                let before = row.final_arguments.as_deref().unwrap_or(&row.arguments);
                let data = json!({
                    "comment": comment,
                    "original": policy::redact::redact_value(&serde_json::from_str::<Value>(before).unwrap_or(Value::Null)).value,
                    "modified": policy::redact::redact_value(arguments).value,
                    "approvals": approvals, "required": m.required,
                    "rule": m.decision.rule, "reason": m.decision.reason,
                });
                if m.required > 1 {
                    let d = &m.decision;
                    calls::hold_modified(
                        conn,
                        &row.id,
                        &arguments.to_string(),
                        m.required,
                        d.blocked_by.map(|l| l.as_str()),
                        d.rule.as_deref(),
                        &d.reason,
                        comment.as_deref(),
                        &m.details,
                        m.pinned.as_deref(),
                    )
                    .await?;
                    let mut data = data;
                    if let (Value::Object(d), Value::Object(b)) = (&mut data, base) {
                        d.extend(b);
                    }
                    audit::append(
                        conn,
                        head,
                        now,
                        &NewEvent {
                            kind: "call_modification_recorded",
                            actor: r.reviewer.clone(),
                            call_id: Some(row.id.clone()),
                            session_id: Some(row.session_id.clone()),
                            data,
                        },
                    )
                    .await?;
                    fx.publish.push((
                        "call_updated",
                        json!({"id": row.id, "approvals": approvals, "approvers_required": m.required}),
                    ));
                    return Ok(Ok(Reviewed {
                        status: "pending".into(),
                        approvals,
                        approvers_required: m.required,
                        grant_id: None,
                    }));
                }
                calls::set_details(conn, &row.id, &m.details, m.pinned.as_deref()).await?;
                ("modified", comment.clone(), Some(arguments.to_string()), data)
            }
            Action::Approve { grant } => {
                if recorded.contains(&r.reviewer) {
                    return self
                        .refused(conn, head, now, &row, r, ReviewError::AlreadyApproved)
                        .await;
                }
                if grant.is_some() && row.approvers_required > 1 {
                    return Ok(Err(ReviewError::Invalid(
                        "calls that need several approvers cannot be answered with an approve-all grant".into(),
                    )));
                }
                // The grant is checked (and made) before anything else is written, so a
                // refused grant leaves no approval behind.
                if let Some(g) = grant {
                    match self.grant(conn, head, &row, r, *g, now, fx).await? {
                        Ok(id) => grant_id = Some(id),
                        Err(e) => return Ok(Err(e)),
                    }
                }
                reviews::add_approval(conn, &row.id, &r.reviewer, now).await?;
                approvals.push(r.reviewer.clone());
                if (approvals.len() as i64) < row.approvers_required {
                    audit::append(
                        conn,
                        head,
                        now,
                        &NewEvent {
                            kind: "call_approval_recorded",
                            actor: r.reviewer.clone(),
                            call_id: Some(row.id.clone()),
                            session_id: Some(row.session_id.clone()),
                            data: json!({"tool": row.tool, "approvals": approvals, "required": row.approvers_required}),
                        },
                    )
                    .await?;
                    fx.publish.push((
                        "call_updated",
                        json!({"id": row.id, "approvals": approvals, "approvers_required": row.approvers_required}),
                    ));
                    return Ok(Ok(Reviewed {
                        status: "pending".into(),
                        approvals,
                        approvers_required: row.approvers_required,
                        grant_id: None,
                    }));
                }
                match &row.final_arguments {
                    // The quorum for a reviewer's modification is complete.
                    Some(args) => (
                        "modified",
                        row.comment.clone(),
                        Some(args.clone()),
                        json!({"approvals": approvals}),
                    ),
                    None => ("approved", None, None, json!({"approvals": approvals})),
                }
            }
        };
        let decided_by = if status == "approved" || (status == "modified" && approvals.len() > 1) {
            approvals.join(", ")
        } else {
            r.reviewer.clone()
        };
        if !calls::finish(
            conn,
            &row.id,
            status,
            now,
            &decided_by,
            comment.as_deref(),
            final_args.as_deref(),
        )
        .await?
        {
            return Ok(Err(ReviewError::Unavailable));
        }
        if let (Value::Object(d), Value::Object(b)) = (&mut data, base) {
            d.extend(b);
            d.insert("status".into(), json!(status));
            d.insert("source".into(), json!("reviewer"));
            d.insert("waited_ms".into(), json!(now - row.created_at_ms));
            d.insert("grant_id".into(), json!(grant_id));
        }
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "call_decided",
                actor: r.reviewer.clone(),
                call_id: Some(row.id.clone()),
                session_id: Some(row.session_id.clone()),
                data,
            },
        )
        .await?;
        let row = self.finished(conn, &row.id, now, fx).await?;
        Ok(Ok(Reviewed {
            status: row.status,
            approvals,
            approvers_required: row.approvers_required,
            grant_id,
        }))
    }

    /// Judge a reviewer's modification on every layer, as if the agent had sent it, and
    /// charge budgets for it in place of what the held call had charged.
    async fn modification(
        &mut self,
        conn: &mut SqliteConnection,
        row: &CallRow,
        origin: &calls::Origin,
        arguments: &Value,
        facts: &Facts,
        now: i64,
    ) -> Result<Result<Modification, ReviewError>, sqlx::Error> {
        let mut details: Value = serde_json::from_str(&origin.details).unwrap_or_else(|_| json!({}));
        let charged: Vec<UsageDelta> = serde_json::from_value(details["charged"].clone()).unwrap_or_default();
        let context: Value = origin
            .context
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or(Value::Null);
        let call = Call {
            agent: &row.agent_id,
            tool: &row.tool,
            server: row.server.as_deref(),
            session_id: &row.session_id,
            turn_id: origin.turn_id.as_deref(),
            arguments,
            context: &context,
        };
        let policy::Reevaluated { decision, charges } = {
            let host = Recorded(facts);
            let inputs = Inputs {
                now_ms: now,
                usage: &self.usage,
                grants: &[],
                host: &host,
            };
            self.policy.reevaluate(&call, &inputs, &charged)
        };
        if decision.status == policy::Status::Denied {
            let layer = decision.blocked_by.map_or("policy", |l| l.as_str()).to_string();
            let reason = match &decision.rule {
                Some(rule) => format!("{rule}: {}", decision.reason),
                None => decision.reason.clone(),
            };
            return Ok(Err(ReviewError::Refused { layer, reason }));
        }
        UsageState::persist(conn, &decision.usage).await?;
        self.usage.apply(&decision.usage);
        details["charged"] = json!(charges);
        details["pinned"] = json!(decision.pinned);
        details["impact"] = json!(decision.impact);
        Ok(Ok(Modification {
            required: i64::from(decision.approvers_required.max(1)),
            details: details.to_string(),
            pinned: (!decision.pinned.is_empty()).then(|| json!(decision.pinned).to_string()),
            decision,
        }))
    }

    /// A refused review, audited: who tried what, and why it was refused.
    async fn refused(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        now: i64,
        row: &CallRow,
        r: &Review,
        e: ReviewError,
    ) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "review_refused",
                actor: r.reviewer.clone(),
                call_id: Some(row.id.clone()),
                session_id: Some(row.session_id.clone()),
                data: json!({"tool": row.tool, "agent": row.agent_id, "action": r.action.name(), "reason": e.to_string()}),
            },
        )
        .await?;
        Ok(Err(e))
    }

    /// After a call reached its final status (expiry or a reviewer's decision, i.e. not in
    /// the agent's first answer): queue its callback, wake long-polls, tell dashboards.
    async fn finished(
        &mut self,
        conn: &mut SqliteConnection,
        id: &str,
        now: i64,
        fx: &mut Effects,
    ) -> Result<CallRow, sqlx::Error> {
        let row = calls::get_in(conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
        if row.callback_url.is_some() {
            calls::queue_callback(conn, id, now).await?;
            fx.callbacks = true;
        }
        decided(fx, &mut self.pending, &row);
        Ok(row)
    }

    /// Create an approve-all grant from the call being approved.
    #[allow(clippy::too_many_arguments)]
    async fn grant(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        row: &CallRow,
        r: &Review,
        g: review::GrantRequest,
        now: i64,
        fx: &mut Effects,
    ) -> Result<Result<String, ReviewError>, sqlx::Error> {
        let extras = calls::extras_in(conn, &row.id).await?.ok_or(sqlx::Error::RowNotFound)?;
        let grantable = serde_json::from_str::<Value>(&extras.details)
            .ok()
            .and_then(|d| d.get("grantable").and_then(Value::as_bool))
            .unwrap_or(false);
        if !grantable {
            return Ok(Err(ReviewError::Invalid(
                "the policy does not allow approve-all grants for this call; approve it on its own".into(),
            )));
        }
        let scope_name = match g.scope {
            GrantKind::Tool => row.tool.clone(),
            GrantKind::Server => match &row.server {
                Some(s) => s.clone(),
                None => {
                    return Ok(Err(ReviewError::Invalid(
                        "this call names no MCP server; grant the tool instead".into(),
                    )))
                }
            },
        };
        let grant = GrantRow {
            id: format!("gr_{}", uuid::Uuid::now_v7().simple()),
            agent_id: row.agent_id.clone(),
            session_id: row.session_id.clone(),
            scope_kind: g.scope.as_str().into(),
            scope_name,
            trust: extras.trust.unwrap_or_else(|| "null".into()),
            created_by: r.reviewer.clone(),
            created_at_ms: now,
            expires_at_ms: now.saturating_add(g.minutes.saturating_mul(60_000)),
            source_call_id: Some(row.id.clone()),
            revoked_at_ms: None,
            revoked_by: None,
            revoke_reason: None,
        };
        reviews::insert_grant(conn, &grant).await?;
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "grant_created",
                actor: r.reviewer.clone(),
                call_id: Some(row.id.clone()),
                session_id: Some(row.session_id.clone()),
                data: json!({
                    "grant_id": grant.id, "agent": grant.agent_id, "scope": grant.scope_kind,
                    "name": grant.scope_name, "expires_at_ms": grant.expires_at_ms, "trust": grant.trust,
                }),
            },
        )
        .await?;
        self.grants.prune(now);
        self.grants.add(&grant);
        fx.publish
            .push(("grants_changed", json!({"id": grant.id, "active": true})));
        Ok(Ok(grant.id))
    }

    /// Revoke a grant (a reviewer, or the system on a trust change); false when none was active.
    async fn revoke(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        id: &str,
        by: &str,
        reason: &str,
        fx: &mut Effects,
    ) -> Result<bool, sqlx::Error> {
        let now = store::now_ms();
        if !reviews::revoke_grant(conn, id, by, reason, now).await? {
            return Ok(false);
        }
        let g = reviews::get_grant_in(conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "grant_revoked",
                actor: by.to_string(),
                call_id: g.source_call_id.clone(),
                session_id: Some(g.session_id.clone()),
                data: json!({"grant_id": id, "agent": g.agent_id, "scope": g.scope_kind, "name": g.scope_name, "reason": reason}),
            },
        )
        .await?;
        self.grants.remove(id);
        fx.publish.push(("grants_changed", json!({"id": id, "active": false})));
        Ok(true)
    }

    async fn callback_attempt(
        &mut self,
        conn: &mut SqliteConnection,
        head: &mut Head,
        a: &CallbackAttempt,
    ) -> Result<(), sqlx::Error> {
        let now = store::now_ms();
        let delivered = matches!(a.result, Ok(s) if (200..300).contains(&s));
        let (state, next) = match (delivered, a.retry_at_ms) {
            (true, _) => ("delivered", now),
            (false, Some(t)) => ("queued", t),
            (false, None) => ("failed", now),
        };
        let error = match &a.result {
            Ok(s) if !delivered => Some(format!("HTTP {s}")),
            Ok(_) => None,
            Err(e) => Some(e.clone()),
        };
        calls::update_callback(conn, &a.call_id, state, a.attempt, next, error.as_deref()).await?;
        let session: Option<String> = sqlx::query_scalar("SELECT session_id FROM tool_calls WHERE id = ?")
            .bind(&a.call_id)
            .fetch_optional(&mut *conn)
            .await?;
        audit::append(
            conn,
            head,
            now,
            &NewEvent {
                kind: "callback_attempt",
                actor: "system".into(),
                call_id: Some(a.call_id.clone()),
                session_id: session,
                data: json!({
                    "attempt": a.attempt, "delivered": delivered, "status": a.result.as_ref().ok(),
                    "error": error, "state": state, "retry_at_ms": a.retry_at_ms.filter(|_| !delivered),
                }),
            },
        )
        .await?;
        Ok(())
    }
}

type IngestReply = oneshot::Sender<Result<Ingested, LedgerError>>;

/// A decided proposal, ready to store.
struct Prepared {
    row: CallRow,
    details: String,
    response: String,
    event: NewEvent,
    /// The `call_pending` event for dashboards.
    pending: Option<Value>,
    deltas: Vec<UsageDelta>,
    trust: String,
}

/// A modification the policy accepts, and how many approvers it needs.
struct Modification {
    decision: policy::Decision,
    required: i64,
    details: String,
    pinned: Option<String>,
}

impl Prepared {
    fn new_call<'a>(&'a self, job: &'a IngestJob) -> NewCall<'a> {
        let (p, r) = (&job.proposal, &self.row);
        NewCall {
            id: &r.id,
            agent_id: &job.agent,
            message_id: &job.message_id,
            body_sha256: &job.body_sha256,
            session_id: &p.session_id,
            trace_id: p.trace_id.as_deref(),
            tool: &p.tool,
            server: p.server.as_deref(),
            arguments: &r.arguments,
            arguments_redacted: &r.arguments_redacted,
            agent_reason: job.redacted.reason.as_deref(),
            plan: job.redacted.plan.as_deref(),
            on_behalf_of: p.on_behalf_of.as_deref(),
            context: job.redacted.context.as_deref(),
            callback_url: p.callback_url.as_deref(),
            status: &r.status,
            blocked_by: r.blocked_by.as_deref(),
            rule: r.rule.as_deref(),
            reason: &r.reason,
            risk: &r.risk,
            approvers_required: r.approvers_required,
            policy_version: &r.policy_version,
            details: &self.details,
            response: &self.response,
            created_at_ms: r.created_at_ms,
            expires_at_ms: r.expires_at_ms,
            trust: &self.trust,
            turn_id: p.turn_id.as_deref(),
            pinned: r.pinned.as_deref(),
        }
    }
}

/// After a final decision: wake long-polls and tell the dashboards.
fn decided(fx: &mut Effects, pending: &mut std::collections::HashMap<String, u32>, row: &CallRow) {
    if let Some(n) = pending.get_mut(&row.agent_id) {
        *n = n.saturating_sub(1);
    }
    fx.wake.push(row.id.clone());
    fx.publish.push((
        "call_decided",
        json!({"id": row.id, "status": row.status, "decided_by": row.decided_by, "session_id": row.session_id,
            "tool": row.tool, "agent": row.agent_id, "risk": row.risk}),
    ));
}
