//! Agents: programs that propose tool calls. Each has an id and a signing secret that is
//! shown once; rotation keeps the previous secret valid for a grace period.

pub mod secret;

pub use secret::{ServerKey, SigningSecret};

use crate::audit::NewEvent;
use crate::store::{self, Db};
use serde_json::json;

/// An agent id: 1–64 of `a-z 0-9 . _ -`, starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentId(String);

impl AgentId {
    pub fn parse(s: &str) -> Result<AgentId, String> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(AgentId(s.to_string()))
        } else {
            Err(format!(
                "agent id {s:?} must be 1-64 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit"
            ))
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for AgentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an agent may sign with right now.
#[derive(Debug)]
pub struct Credentials {
    pub disabled: bool,
    pub secrets: Vec<SigningSecret>,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Invalid(String),
    #[error("agent {0} already exists")]
    Exists(String),
    #[error("no agent named {0}")]
    NotFound(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

/// Create an agent; returns its secret, to be shown once.
pub async fn add(db: &Db, key: &ServerKey, id: &str, description: &str, by: &str) -> Result<SigningSecret, AgentError> {
    let id = AgentId::parse(id).map_err(AgentError::Invalid)?;
    let secret = SigningSecret::generate();
    let sealed = key.seal(&secret, id.as_str());
    let now = store::now_ms();
    let mut tx = store::begin_write(db).await?;
    if store::agents::exists(&mut tx, id.as_str()).await? {
        return Err(AgentError::Exists(id.to_string()));
    }
    store::agents::insert(&mut tx, id.as_str(), description, &sealed, now).await?;
    store::append_audit(
        &mut tx,
        now,
        &admin_event("agent_added", by, &id, json!({"description": description})),
    )
    .await?;
    tx.commit().await?;
    Ok(secret)
}

/// Issue a new secret; the current one stays valid for `grace_secs` more seconds.
pub async fn rotate(
    db: &Db,
    key: &ServerKey,
    id: &str,
    grace_secs: i64,
    by: &str,
) -> Result<SigningSecret, AgentError> {
    let id = AgentId::parse(id).map_err(AgentError::Invalid)?;
    let secret = SigningSecret::generate();
    let sealed = key.seal(&secret, id.as_str());
    let now = store::now_ms();
    let mut tx = store::begin_write(db).await?;
    if !store::agents::exists(&mut tx, id.as_str()).await? {
        return Err(AgentError::NotFound(id.to_string()));
    }
    store::agents::rotate(&mut tx, id.as_str(), &sealed, now, now + grace_secs.max(0) * 1000).await?;
    store::append_audit(
        &mut tx,
        now,
        &admin_event("agent_secret_rotated", by, &id, json!({"grace_seconds": grace_secs})),
    )
    .await?;
    tx.commit().await?;
    Ok(secret)
}

pub async fn set_disabled(db: &Db, id: &str, disabled: bool, by: &str) -> Result<(), AgentError> {
    let id = AgentId::parse(id).map_err(AgentError::Invalid)?;
    let now = store::now_ms();
    let mut tx = store::begin_write(db).await?;
    if !store::agents::set_disabled(&mut tx, id.as_str(), disabled, now).await? {
        return Err(AgentError::NotFound(id.to_string()));
    }
    let kind = if disabled { "agent_disabled" } else { "agent_enabled" };
    store::append_audit(&mut tx, now, &admin_event(kind, by, &id, json!({}))).await?;
    tx.commit().await?;
    Ok(())
}

/// The agent's usable secrets (current and those in their grace period), or `None`.
pub async fn credentials(db: &Db, key: &ServerKey, id: &AgentId) -> Result<Option<Credentials>, sqlx::Error> {
    let Some((disabled, sealed)) = store::agents::credentials(db, id.as_str(), store::now_ms()).await? else {
        return Ok(None);
    };
    let mut secrets = Vec::with_capacity(sealed.len());
    for s in sealed {
        match key.open(&s, id.as_str()) {
            Ok(secret) => secrets.push(secret),
            Err(e) => tracing::error!(agent = %id, error = %e, "an agent secret cannot be opened"),
        }
    }
    Ok(Some(Credentials { disabled, secrets }))
}

/// Credentials by agent id, kept for a second: verifying a signature then costs no
/// database round trip and no decryption. Changes made by the CLI (another process)
/// therefore take effect within `ttl`.
pub struct CredentialCache {
    ttl: std::time::Duration,
    map: std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, std::sync::Arc<Credentials>)>>,
}

impl CredentialCache {
    const MAX_ENTRIES: usize = 10_000;

    pub fn new(ttl: std::time::Duration) -> CredentialCache {
        CredentialCache {
            ttl,
            map: Default::default(),
        }
    }

    /// Drop what is kept for `id` (its secrets or status just changed here).
    pub fn forget(&self, id: &str) {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }

    /// `fresh` skips the cache (after a signature mismatch: the agent may hold a secret
    /// issued in the last second).
    pub async fn get(
        &self,
        db: &Db,
        key: &ServerKey,
        id: &AgentId,
        fresh: bool,
    ) -> Result<Option<std::sync::Arc<Credentials>>, sqlx::Error> {
        if !fresh {
            let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((at, c)) = map.get(id.as_str()) {
                if at.elapsed() < self.ttl {
                    return Ok(Some(c.clone()));
                }
            }
        }
        // Unknown agents are not cached: they are answered from the database every time.
        let Some(c) = credentials(db, key, id).await? else {
            return Ok(None);
        };
        let c = std::sync::Arc::new(c);
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= Self::MAX_ENTRIES {
            map.clear();
        }
        map.insert(id.to_string(), (std::time::Instant::now(), c.clone()));
        Ok(Some(c))
    }
}

fn admin_event(kind: &'static str, by: &str, id: &AgentId, data: serde_json::Value) -> NewEvent {
    let mut data = data;
    data["agent"] = json!(id.as_str());
    NewEvent {
        kind,
        actor: by.to_string(),
        call_id: None,
        session_id: None,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_are_plain_lowercase_names() {
        for ok in ["demo", "support-bot", "a", "bot_2.prod"] {
            assert!(AgentId::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-x", "Demo", "a b", "bot/1", &"x".repeat(65), "ağent"] {
            assert!(AgentId::parse(bad).is_err(), "{bad}");
        }
    }
}
