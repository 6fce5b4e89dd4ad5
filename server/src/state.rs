//! What every handler shares: the application state, built once by `startup`.

use crate::agents::ServerKey;
use crate::auth::throttle::LoginThrottle;
use crate::config::Config;
use crate::ledger::Ledger;
use crate::realtime::waiters::Waiters;
use crate::realtime::Hub;
use crate::store::Db;
use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;
use policy::guards::url::UrlGuard;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What every handler shares. Extractors clone it per request, so it is one reference
/// count (its fields, cloned one by one, were ~2 % of the server's CPU under load).
#[derive(Clone)]
pub struct AppState(pub(crate) Arc<StateParts>);

impl std::ops::Deref for AppState {
    type Target = StateParts;
    fn deref(&self) -> &StateParts {
        &self.0
    }
}

pub struct StateParts {
    pub db: Db,
    pub hub: Arc<Hub>,
    pub throttle: Arc<LoginThrottle>,
    /// The policy in force (swapped whole by a reload).
    pub policy: crate::policies::InForce,
    pub config: Arc<Config>,
    pub leptos: LeptosOptions,
    pub stopping: Arc<AtomicBool>,
    pub ledger: Ledger,
    pub waiters: Arc<Waiters>,
    pub key: ServerKey,
    pub credentials: Arc<crate::agents::CredentialCache>,
    /// Audit at most a burst of refused agent requests per address, then one a second.
    pub auth_failures: Arc<governor::DefaultKeyedRateLimiter<std::net::IpAddr>>,
    /// Proposals per agent (GCRA); `None` when `agent_rate_per_second` is 0.
    pub agent_rate: Option<Arc<governor::DefaultKeyedRateLimiter<String>>>,
    /// Recent symlink answers of path guards (see `ingest::facts`).
    pub path_cache: crate::ingest::facts::PathCache,
    /// Webhook-ids of signed reads, cancels and results, for replay refusal.
    pub seen: Arc<crate::ingest::replay::SeenMessages>,
    /// Judges `callback_url`s at ingest (lexically; delivery also resolves and pins).
    pub callback_guard: Arc<UrlGuard>,
    /// Wakes the callback dispatcher when the ledger queued a delivery.
    pub callbacks_wake: Arc<tokio::sync::Notify>,
    /// Wakes the policy watcher when another instance put a policy in force.
    pub policy_wake: Arc<tokio::sync::Notify>,
    /// This instance's name among several on one PostgreSQL database (`realtime::cluster`).
    pub instance: Option<String>,
    /// What auditors search, kept a moment behind the chain by a background task.
    pub search: crate::audit::index::SearchIndex,
    /// Seals raw arguments that held a secret (`store::sealed`).
    pub sealer: crate::store::sealed::Sealer,
    /// Fingerprints redacted values (a key derived from `key`).
    pub fingerprints: crate::audit::fingerprint::Fingerprinter,
    /// Signs checkpoints of the audit chain (a key derived from `key`).
    pub signer: crate::audit::checkpoint::Signer,
    /// Sends notices to the configured channels (follows the hub).
    pub notifier: crate::notify::Notifier,
    /// Signs and opens one-time decision links in notifications.
    pub links: crate::notify::links::Linker,
    /// Break-glass in force, as the ledger last committed it (the banner on every page).
    pub board: Arc<std::sync::RwLock<Vec<app::api::BreakGlassView>>>,
    /// The latest check of the audit chain (from the audit page or a scheduled run).
    pub chain_check: Arc<std::sync::Mutex<Option<app::api::ChainCheck>>>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos.clone()
    }
}
