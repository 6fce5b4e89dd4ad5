//! The server's side of the dashboard's services (`app::api::{UserAdmin, ReviewDesk,
//! Insight}`): what server functions call. One module per service.

mod admin;
mod agents;
mod desk;
mod insight;
mod notify;
mod oncall;
mod policy_admin;

use crate::auth::{users as people, users::UserError, Password};
use crate::ledger::Ledger;
use crate::realtime::Hub;
use crate::review::{self, unredact::unredact, Action, GrantKind, GrantRequest, Review, ReviewError};
use crate::store::calls::{self, CallRow};
use crate::store::details::CallDetails;
use crate::store::review::{self as reviews, GrantRow};
use crate::store::{self, users, Db};
use app::api::{
    AppError, AuditPage, AuditQuery, CallDetail, CallStatus, ChainCheck, DecisionInput, DecisionOutcome, Facet,
    GrantList, GrantScopeKind, GrantView, ImpactView, Insight, LiveEvent, Permission, QueueQuery, QueueSnapshot,
    ReviewDesk, Role, SessionCall, StatsSummary, TraceKind, TraceView, UserAdmin, UserChanged, UserView, Verdict,
    QUEUE_PAGE, STATS_WINDOW,
};
use policy::Policy;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub struct ServerBackend {
    pub db: Db,
    pub hub: Arc<Hub>,
    pub ledger: Ledger,
    pub policy: crate::policies::InForce,
    pub search: crate::audit::index::SearchIndex,
    /// This instance's name among several on one PostgreSQL database.
    pub instance: Option<String>,
    pub chain_check: Arc<std::sync::Mutex<Option<ChainCheck>>>,
    pub reviewers_read_audit: bool,
    pub signer: crate::audit::checkpoint::Signer,
    pub fingerprints: crate::audit::fingerprint::Fingerprinter,
    pub sealer: crate::store::sealed::Sealer,
    /// Secret lookups per user: each answers whether a guessed value was ever sent, so
    /// they are few (a burst of 10, then one every 6 s) as well as audited.
    pub lookups: Arc<crate::auth::throttle::Limiter>,
    /// Password checks to start break-glass, per user (a burst of 5, then one a minute).
    pub password_checks: Arc<crate::auth::throttle::Limiter>,
    /// Break-glass in force, as the ledger last committed it.
    pub board: Arc<std::sync::RwLock<Vec<app::api::BreakGlassView>>>,
    pub break_glass_max_minutes: i64,
    /// Opens decision links from notifications.
    pub links: crate::notify::links::Linker,
    pub notifier: crate::notify::Notifier,
    pub channel_sealer: crate::notify::channels::ChannelSealer,
    /// Lexical URL check for channels added on the admin page.
    pub url_check: Arc<policy::guards::url::UrlGuard>,
    /// The policy file a change from the page also writes.
    pub policy_file: std::path::PathBuf,
    /// One replay at a time.
    pub replays: Arc<tokio::sync::Semaphore>,
    /// Seals agents' signing secrets.
    pub key: crate::agents::ServerKey,
    /// Forgotten for an agent whose secrets or status change, so the change holds at once.
    pub credentials: Arc<crate::agents::CredentialCache>,
}

/// Log an internal error and give the person a reference to quote.
fn internal(e: impl std::fmt::Display, what: &str) -> AppError {
    let reference = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    tracing::error!(error = %e, reference, "{what} failed");
    AppError::Internal(reference)
}

fn map(e: UserError) -> AppError {
    match e {
        UserError::Invalid(m) => AppError::Invalid(m),
        UserError::Conflict(m) => AppError::Conflict(m),
        UserError::NotFound => AppError::NotFound,
        UserError::Internal(m) => internal(m, "user administration"),
    }
}
