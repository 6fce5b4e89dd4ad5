//! The policy in force and how it changes without a restart.
//!
//! Every reader takes the policy from [`InForce`], swapped whole, so a request sees one
//! policy from start to end. A change (the admin page, a rollback, SIGHUP, `airlock policy
//! apply`) is a row in `policy_changes` with the version's text kept beside it; the ledger
//! writes the rows of changes made in this process and puts the new policy in force after
//! the commit, so every decision is made under the version it records. Changes written by
//! another process (the CLI, another instance) are followed by [`watch`]. A file that does
//! not compile changes nothing; the refusal is recorded.
//!
//! Held calls keep what they were held under (their version, their approvers); a
//! reviewer's modification is judged by the policy in force when it is made.

pub mod replay;

use crate::audit::NewEvent;
use crate::ledger::{Command, Ledger};
use crate::store::policies::{self as rows, Via};
use crate::store::{self, Db};
use arc_swap::ArcSwap;
use policy::Policy;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The policy in force, and the change that put it there.
#[derive(Clone)]
pub struct InForce {
    policy: Arc<ArcSwap<Policy>>,
    change: Arc<AtomicI64>,
}

impl InForce {
    pub fn new(policy: Arc<Policy>, change_id: i64) -> InForce {
        InForce {
            policy: Arc::new(ArcSwap::new(policy)),
            change: Arc::new(AtomicI64::new(change_id)),
        }
    }

    /// The policy for this request (or this page, this report).
    pub fn get(&self) -> Arc<Policy> {
        self.policy.load_full()
    }

    /// The id of the change in force (what [`watch`] compares).
    pub fn change_id(&self) -> i64 {
        self.change.load(Ordering::Acquire)
    }

    /// Put `policy` in force as of change `change_id` (the ledger, after its commit).
    pub(crate) fn set(&self, policy: Arc<Policy>, change_id: i64) {
        self.policy.store(policy);
        self.change.fetch_max(change_id, Ordering::AcqRel);
    }
}

/// What applying a policy came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub name: String,
    pub version: String,
    /// The version in force before.
    pub previous: String,
    /// False when this version was already in force (nothing was recorded).
    pub changed: bool,
}

/// A change asked of the ledger.
pub struct Change {
    pub policy: Arc<Policy>,
    pub source: String,
    pub actor: String,
    pub via: Via,
    pub note: Option<String>,
}

/// Compile `source`; on failure, every problem with its line.
pub fn compile(source: &str) -> Result<Policy, Vec<Problem>> {
    Policy::from_toml(source).map_err(|e| {
        e.0.iter()
            .map(|p| Problem {
                line: p.line(source),
                location: p.location.clone(),
                message: p.message.clone(),
            })
            .collect()
    })
}

/// One problem of a policy that does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<usize>,
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) if !self.location.starts_with("line ") => {
                write!(f, "line {l} ({}): {}", self.location, self.message)
            }
            _ => write!(f, "{}: {}", self.location, self.message),
        }
    }
}

/// Ask the ledger to put `change` in force (this process): recorded, then swapped.
pub async fn apply(ledger: &Ledger, change: Change) -> Result<Applied, String> {
    let (reply, rx) = oneshot::channel();
    ledger
        .send(Command::ApplyPolicy(Box::new(change), reply))
        .await
        .map_err(|e| e.to_string())?;
    rx.await.map_err(|_| "the store is unavailable".to_string())?
}

/// Replace `path` with `source` atomically (a new file renamed over it), so a restart
/// starts with what is in force and a reader never sees half a file.
pub fn write_file(path: &Path, source: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.new", std::process::id()));
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(source.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("the policy file {} cannot be written: {e}", path.display())
    })
}

/// The event a change records.
pub fn applied_event(change: &Change, previous: &str) -> NewEvent {
    NewEvent {
        kind: "policy_applied",
        actor: change.actor.clone(),
        call_id: None,
        session_id: None,
        data: serde_json::json!({
            "name": change.policy.name, "version": &*change.policy.version, "previous": previous,
            "via": change.via.as_str(), "note": change.note, "tools": change.policy.tool_names().len(),
        }),
    }
}

/// The event a refused policy records (nothing changed).
pub fn refused_event(actor: &str, via: Via, problems: &[Problem]) -> NewEvent {
    NewEvent {
        kind: "policy_refused",
        actor: actor.to_string(),
        call_id: None,
        session_id: None,
        data: serde_json::json!({
            "via": via.as_str(),
            "problems": problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
        }),
    }
}

/// At start: keep the loaded version's text and, when it is not the one last in force,
/// record the change. Answers the id of the change in force.
pub async fn record_start(db: &Db, policy: &Policy, source: &str, file: &Path) -> Result<i64, sqlx::Error> {
    let now = store::now_ms();
    let mut tx = store::begin_write(db).await?;
    let id = rows::store_version(&mut tx, &policy.version, &policy.name, Some(source), now).await?;
    let latest = rows::latest_change(&mut tx).await?;
    let change = match latest {
        Some(c) if c.version == *policy.version => c.id,
        latest => {
            let previous = latest.as_ref().map(|c| c.version_id);
            let change = rows::record_change(&mut tx, id, previous, "system", Via::Start, None, now).await?;
            // The first version, or another file than the one last in force.
            let ev = NewEvent {
                kind: "policy_loaded",
                actor: "system".into(),
                call_id: None,
                session_id: None,
                data: serde_json::json!({
                    "name": policy.name, "version": &*policy.version,
                    "previous": latest.map(|c| c.version),
                    "file": file.display().to_string(), "tools": policy.tool_names().len(),
                }),
            };
            store::append_audit(&mut tx, now, &ev).await?;
            change
        }
    };
    tx.commit().await?;
    Ok(change)
}

/// `airlock policy apply`: record the change in the database (running servers follow it
/// within a second) and make the configured policy file say the same.
pub async fn apply_from_cli(
    db: &Db,
    policy_file: &Path,
    policy: Arc<Policy>,
    source: &str,
    actor: &str,
    note: Option<&str>,
) -> Result<Applied, String> {
    let now = store::now_ms();
    let fail = |e: sqlx::Error| format!("recording the change: {e}");
    let mut tx = store::begin_write(db).await.map_err(fail)?;
    let latest = rows::latest_change(&mut tx).await.map_err(fail)?;
    let previous = latest.as_ref().map(|c| c.version.clone()).unwrap_or_default();
    let mut applied = Applied {
        name: policy.name.clone(),
        version: policy.version.to_string(),
        previous: previous.clone(),
        changed: previous != *policy.version,
    };
    let same_file = std::fs::read_to_string(policy_file).is_ok_and(|s| s == source);
    if !same_file {
        write_file(policy_file, source)?;
    }
    if !applied.changed {
        return Ok(applied);
    }
    let id = rows::store_version(&mut tx, &policy.version, &policy.name, Some(source), now)
        .await
        .map_err(fail)?;
    rows::record_change(&mut tx, id, latest.map(|c| c.version_id), actor, Via::Cli, note, now)
        .await
        .map_err(fail)?;
    let change = Change {
        policy,
        source: source.to_string(),
        actor: actor.to_string(),
        via: Via::Cli,
        note: note.map(str::to_string),
    };
    store::append_audit(&mut tx, now, &applied_event(&change, &previous))
        .await
        .map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    applied.changed = true;
    Ok(applied)
}

/// Follow changes recorded by other processes (the CLI, other instances): once a second,
/// or at once when `wake` says another instance put one in force, a newer change than the
/// one in force is compiled and handed to the ledger.
pub async fn watch(db: Db, ledger: Ledger, in_force: InForce, wake: Arc<tokio::sync::Notify>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = wake.notified() => {}
        }
        let Ok(latest) = rows::latest_change_id(&db).await else {
            continue;
        };
        if latest <= in_force.change_id() {
            continue;
        }
        if let Err(e) = follow(&db, &ledger, &in_force).await {
            tracing::error!(error = %e, "following a policy change");
        }
    }
}

async fn follow(db: &Db, ledger: &Ledger, in_force: &InForce) -> Result<(), String> {
    let mut conn = db.acquire().await.map_err(|e| e.to_string())?;
    let Some(change) = rows::latest_change(&mut conn).await.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    drop(conn);
    let source = rows::source(db, &change.version)
        .await
        .map_err(|e| e.to_string())?
        .and_then(|(_, s)| s)
        .ok_or_else(|| format!("version {} has no kept text", change.version))?;
    let policy = compile(&source).map_err(|p| format!("version {} does not compile: {:?}", change.version, p))?;
    let (reply, rx) = oneshot::channel();
    ledger
        .send(Command::AdoptPolicy {
            policy: Arc::new(policy),
            version_id: change.version_id,
            change_id: change.id,
            reply,
        })
        .await
        .map_err(|e| e.to_string())?;
    let _ = rx.await;
    tracing::info!(version = %change.version, by = %change.actor, via = %change.via, "policy changed elsewhere is in force");
    let _ = in_force;
    Ok(())
}

/// SIGHUP: read the policy file again and put it in force; a file that does not compile
/// is refused (and recorded) and the policy in force stays.
pub async fn reload_on_hangup(ledger: Ledger, policy_file: std::path::PathBuf) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            match reload_file(&ledger, &policy_file).await {
                Ok(a) if a.changed => tracing::info!(version = %a.version, "policy file read again and in force"),
                Ok(_) => tracing::info!("policy file read again: no change"),
                Err(e) => tracing::error!(error = %e, "policy file refused; the policy in force stays"),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (ledger, policy_file);
}

/// Read `policy_file` and apply it (`via signal`).
pub async fn reload_file(ledger: &Ledger, policy_file: &Path) -> Result<Applied, String> {
    let actor = "system:signal";
    let source = std::fs::read_to_string(policy_file).map_err(|e| format!("{}: {e}", policy_file.display()))?;
    match compile(&source) {
        Ok(p) => {
            apply(
                ledger,
                Change {
                    policy: Arc::new(p),
                    source,
                    actor: actor.into(),
                    via: Via::Signal,
                    note: None,
                },
            )
            .await
        }
        Err(problems) => {
            let _ = ledger
                .send(Command::Audit(refused_event(actor, Via::Signal, &problems)))
                .await;
            Err(problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
        }
    }
}
