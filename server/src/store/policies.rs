//! Policy versions and the changes of the policy in force. A version is its content hash;
//! its text is kept once (the first text seen with that hash). Changes are appended, never
//! edited: the latest one names the policy in force.

use sqlx::AnyConnection;

use super::Db;

/// One change of the policy in force.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ChangeRow {
    pub id: i64,
    pub version_id: i64,
    pub version: String,
    pub name: Option<String>,
    /// The version in force before (none for the first).
    pub previous: Option<String>,
    pub actor: String,
    pub via: String,
    pub note: Option<String>,
    pub at_ms: i64,
}

/// How a change came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The server started with a policy file other than the one last in force.
    Start,
    /// `airlock policy apply`.
    Cli,
    /// SIGHUP: the server read its policy file again.
    Signal,
    /// The admin page.
    Page,
    /// The admin page, back to an earlier version.
    Rollback,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Start => "start",
            Via::Cli => "cli",
            Via::Signal => "signal",
            Via::Page => "page",
            Via::Rollback => "rollback",
        }
    }
}

/// Keep `version` (with its name and text, when known) and answer its id. A version seen
/// before keeps its first text; a text learnt later fills one that was not kept.
pub async fn store_version(
    conn: &mut AnyConnection,
    version: &str,
    name: &str,
    source: Option<&str>,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query(
        "INSERT INTO policy_versions (version, first_used_ms, name, source) VALUES ($1, $2, $3, $4)
         ON CONFLICT (version) DO UPDATE SET name = coalesce(policy_versions.name, excluded.name),
             source = coalesce(policy_versions.source, excluded.source)",
    )
    .bind(version)
    .bind(now_ms)
    .bind(name)
    .bind(source)
    .execute(&mut *conn)
    .await?;
    sqlx::query_scalar("SELECT id FROM policy_versions WHERE version = $1")
        .bind(version)
        .fetch_one(conn)
        .await
}

/// Append a change: `version_id` is in force from now on.
pub async fn record_change(
    conn: &mut AnyConnection,
    version_id: i64,
    previous_id: Option<i64>,
    actor: &str,
    via: Via,
    note: Option<&str>,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO policy_changes (version_id, previous_id, actor, via, note, at_ms) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id",
    )
    .bind(version_id)
    .bind(previous_id)
    .bind(actor)
    .bind(via.as_str())
    .bind(note)
    .bind(now_ms)
    .fetch_one(conn)
    .await
}

const CHANGE: &str =
    "SELECT c.id, c.version_id, v.version, v.name, p.version AS previous, c.actor, c.via, c.note, c.at_ms
     FROM policy_changes c JOIN policy_versions v ON v.id = c.version_id
     LEFT JOIN policy_versions p ON p.id = c.previous_id";

/// The change that put the policy in force now in place.
pub async fn latest_change(conn: &mut AnyConnection) -> Result<Option<ChangeRow>, sqlx::Error> {
    sqlx::query_as(&format!("{CHANGE} ORDER BY c.id DESC LIMIT 1"))
        .fetch_optional(conn)
        .await
}

/// The id of the latest change (0 before the first): what instances watch.
pub async fn latest_change_id(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT coalesce(max(id), 0) FROM policy_changes")
        .fetch_one(db)
        .await
}

/// The latest changes, newest first.
pub async fn changes(db: &Db, limit: i64) -> Result<Vec<ChangeRow>, sqlx::Error> {
    sqlx::query_as(&format!("{CHANGE} ORDER BY c.id DESC LIMIT $1"))
        .bind(limit)
        .fetch_all(db)
        .await
}

/// A kept version's name and text.
pub async fn source(db: &Db, version: &str) -> Result<Option<(Option<String>, Option<String>)>, sqlx::Error> {
    sqlx::query_as("SELECT name, source FROM policy_versions WHERE version = $1")
        .bind(version)
        .fetch_optional(db)
        .await
}
