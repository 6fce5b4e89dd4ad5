//! The ledger's handle: the commands handlers may send and the answers they wait for.

use crate::audit::NewEvent;
use crate::callbacks::CallbackAttempt;
use crate::ingest::record::{IngestJob, Ingested, Outcome};
use crate::review::{Review, ReviewError, Reviewed};
use crate::store::calls::CallRow;
use app::api::{BreakGlassView, CallStatus};
use tokio::sync::{mpsc, oneshot};

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
    /// Redact raw arguments of decided calls created before `before_ms` (one batch);
    /// answers how many calls were looked at.
    Retain {
        before_ms: i64,
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
    /// Start break-glass for `user` (checked and cleaned by the caller).
    StartBreakGlass {
        user: String,
        justification: String,
        minutes: i64,
        reply: oneshot::Sender<Result<BreakGlassView, ReviewError>>,
    },
    /// End break-glass `id` now; answers whether it was in force.
    EndBreakGlass {
        id: String,
        by: String,
        reason: String,
        reply: oneshot::Sender<bool>,
    },
    /// Release a held call under `user`'s break-glass.
    Override {
        call_id: String,
        user: String,
        reply: oneshot::Sender<Result<Reviewed, ReviewError>>,
    },
    /// Agree with or flag an override.
    Acknowledge {
        call_id: String,
        user: String,
        agree: bool,
        note: Option<String>,
        reply: oneshot::Sender<Result<(), ReviewError>>,
    },
    /// Escalate those of `ids` still held; answers how many.
    Escalate {
        ids: Vec<String>,
        now_ms: i64,
        reply: oneshot::Sender<usize>,
    },
    /// Record a change of the policy and put it in force once committed.
    ApplyPolicy(
        Box<crate::policies::Change>,
        oneshot::Sender<Result<crate::policies::Applied, String>>,
    ),
    /// Put in force a change another process recorded (nothing to write).
    AdoptPolicy {
        policy: std::sync::Arc<policy::Policy>,
        version_id: i64,
        change_id: i64,
        reply: oneshot::Sender<()>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error("this webhook-id was already used with a different body")]
    Conflict,
    #[error("no such tool call")]
    NotFound,
    #[error("the call is already {0}")]
    NotPending(CallStatus),
    #[error("a result was already reported for this call")]
    AlreadyReported,
    #[error("the call is {0}; only executable calls have results")]
    NotExecutable(CallStatus),
    #[error("this agent already has {0} held calls waiting for a decision")]
    TooManyPending(u32),
    #[error("this agent sends more than {per_second} proposals per second; retry after the pause")]
    RateLimited { per_second: u32, retry_after: u64 },
    #[error("the store is unavailable")]
    Unavailable,
}

/// A cloneable handle to the ledger task.
#[derive(Clone)]
pub struct Ledger {
    pub(super) tx: mpsc::Sender<Command>,
    /// The writer's connection, closed at shutdown.
    pub(super) write: crate::store::Db,
    /// Checkpoints beside the writer (SQLite), stopped at shutdown.
    pub(super) folder: Option<std::sync::Arc<crate::store::wal::Folder>>,
    /// The proposals' own connection (SQLite), closed at shutdown.
    pub(super) direct: Option<super::direct::Conn>,
}

impl Ledger {
    /// At shutdown: wait for the batch being written, then close the writer's connection
    /// (a later command is answered "unavailable").
    pub async fn close(&self) {
        if let Some(folder) = &self.folder {
            folder.close().await;
        }
        if let Some(direct) = &self.direct {
            super::direct::close(direct).await;
        }
        crate::store::close(&self.write).await;
    }

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

    pub async fn retain(&self, before_ms: i64) -> Result<usize, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Retain { before_ms, reply }).await?;
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

    pub async fn start_break_glass(
        &self,
        user: &str,
        justification: &str,
        minutes: i64,
    ) -> Result<BreakGlassView, ReviewError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::StartBreakGlass {
            user: user.into(),
            justification: justification.into(),
            minutes,
            reply,
        })
        .await
        .map_err(|_| ReviewError::Unavailable)?;
        rx.await.map_err(|_| ReviewError::Unavailable)?
    }

    pub async fn end_break_glass(&self, id: &str, by: &str, reason: &str) -> Result<bool, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::EndBreakGlass {
            id: id.into(),
            by: by.into(),
            reason: reason.into(),
            reply,
        })
        .await?;
        rx.await.map_err(|_| LedgerError::Unavailable)
    }

    pub async fn override_call(&self, call_id: &str, user: &str) -> Result<Reviewed, ReviewError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Override {
            call_id: call_id.into(),
            user: user.into(),
            reply,
        })
        .await
        .map_err(|_| ReviewError::Unavailable)?;
        rx.await.map_err(|_| ReviewError::Unavailable)?
    }

    pub async fn acknowledge(
        &self,
        call_id: &str,
        user: &str,
        agree: bool,
        note: Option<String>,
    ) -> Result<(), ReviewError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Acknowledge {
            call_id: call_id.into(),
            user: user.into(),
            agree,
            note,
            reply,
        })
        .await
        .map_err(|_| ReviewError::Unavailable)?;
        rx.await.map_err(|_| ReviewError::Unavailable)?
    }

    pub async fn escalate(&self, ids: Vec<String>, now_ms: i64) -> Result<usize, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Escalate { ids, now_ms, reply }).await?;
        rx.await.map_err(|_| LedgerError::Unavailable)
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
