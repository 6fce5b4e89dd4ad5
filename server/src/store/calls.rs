//! Proposed tool calls: the queue and each call's lifecycle.

use super::Db;
use app::api::CallStatus;
use policy::{Layer, Risk};
use sqlx::AnyConnection;

/// Columns every reader needs (not the raw request extras). What is stored once is filled
/// in here: the redacted arguments when redaction changed nothing, the policy's version.
pub(super) const COLUMNS: &str = "id, agent_id, session_id, trace_id, tool, server, arguments,
    coalesce(arguments_redacted, arguments) AS arguments_redacted, status, blocked_by, rule, reason, risk,
    approvers_required, (SELECT version FROM policy_versions v WHERE v.id = policy_id) AS policy_version,
    created_at_ms, expires_at_ms, decided_at_ms, decided_by, comment, final_arguments, callback_url,
    result_outcome, pinned";

/// A stored call as every reader sees it (`COLUMNS`), with its names read back as enums.
#[derive(Debug, Clone)]
pub struct CallRow {
    pub id: String,
    pub agent_id: String,
    pub session_id: String,
    pub trace_id: Option<String>,
    pub tool: String,
    pub server: Option<String>,
    pub arguments: String,
    pub arguments_redacted: String,
    pub status: CallStatus,
    pub blocked_by: Option<Layer>,
    pub rule: Option<String>,
    pub reason: String,
    pub risk: Risk,
    pub approvers_required: i64,
    pub policy_version: String,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub decided_at_ms: Option<i64>,
    pub decided_by: Option<String>,
    pub comment: Option<String>,
    pub final_arguments: Option<String>,
    pub callback_url: Option<String>,
    pub result_outcome: Option<String>,
    /// JSON array of the URL guard's checked addresses, when it resolved any.
    pub pinned: Option<String>,
}

impl CallRow {
    /// The row with its raw arguments (and a modification's) opened when sealed (see
    /// `store::sealed`). A value that cannot be opened reads as `null` and is logged.
    pub fn unsealed(mut self, sealer: &super::sealed::Sealer) -> CallRow {
        let open = |stored: &str| match sealer.open(stored, &self.agent_id) {
            Ok(text) => text.into_owned(),
            Err(e) => {
                tracing::error!(call = %self.id, error = %e, "sealed arguments");
                "null".to_string()
            }
        };
        let arguments = open(&self.arguments);
        let final_arguments = self.final_arguments.as_deref().map(open);
        self.arguments = arguments;
        self.final_arguments = final_arguments;
        self
    }
}

impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for CallRow {
    fn from_row(row: &'r sqlx::any::AnyRow) -> Result<CallRow, sqlx::Error> {
        use sqlx::Row;
        let bad = |column: &str, e: String| sqlx::Error::ColumnDecode {
            index: column.into(),
            source: e.into(),
        };
        Ok(CallRow {
            id: row.try_get("id")?,
            agent_id: row.try_get("agent_id")?,
            session_id: row.try_get("session_id")?,
            trace_id: row.try_get("trace_id")?,
            tool: row.try_get("tool")?,
            server: row.try_get("server")?,
            arguments: row.try_get("arguments")?,
            arguments_redacted: row.try_get("arguments_redacted")?,
            status: row
                .try_get::<String, _>("status")?
                .parse()
                .map_err(|e| bad("status", e))?,
            blocked_by: row
                .try_get::<Option<String>, _>("blocked_by")?
                .map(Layer::try_from)
                .transpose()
                .map_err(|e| bad("blocked_by", e))?,
            rule: row.try_get("rule")?,
            reason: row.try_get("reason")?,
            risk: Risk::try_from(row.try_get::<String, _>("risk")?).map_err(|e| bad("risk", e))?,
            approvers_required: row.try_get("approvers_required")?,
            policy_version: row.try_get("policy_version")?,
            created_at_ms: row.try_get("created_at_ms")?,
            expires_at_ms: row.try_get("expires_at_ms")?,
            decided_at_ms: row.try_get("decided_at_ms")?,
            decided_by: row.try_get("decided_by")?,
            comment: row.try_get("comment")?,
            final_arguments: row.try_get("final_arguments")?,
            callback_url: row.try_get("callback_url")?,
            result_outcome: row.try_get("result_outcome")?,
            pinned: row.try_get("pinned")?,
        })
    }
}

/// A call as the ledger stores it.
pub struct NewCall<'a> {
    pub id: &'a str,
    pub agent_id: &'a str,
    pub message_id: &'a str,
    pub body_sha256: &'a [u8],
    pub session_id: &'a str,
    pub trace_id: Option<&'a str>,
    pub tool: &'a str,
    pub server: Option<&'a str>,
    pub arguments: &'a str,
    /// `None` when redaction changed nothing.
    pub arguments_redacted: Option<&'a str>,
    pub agent_reason: Option<&'a str>,
    pub plan: Option<&'a str>,
    pub on_behalf_of: Option<&'a str>,
    pub context: Option<&'a str>,
    pub callback_url: Option<&'a str>,
    pub status: CallStatus,
    pub blocked_by: Option<&'a str>,
    pub rule: Option<&'a str>,
    pub reason: &'a str,
    pub risk: Risk,
    pub approvers_required: i64,
    pub policy_id: i64,
    /// `None` when the engine had nothing to add.
    pub details: Option<&'a str>,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub trust: Option<&'a str>,
    pub turn_id: Option<&'a str>,
    pub pinned: Option<&'a str>,
    /// `grant:ID` when an approve-all grant released the call; `None` otherwise.
    pub decided_by: Option<&'a str>,
    /// What the host answered (`ingest::facts`), for replays; `None` when nothing was asked.
    pub facts: Option<&'a str>,
}

/// The columns a new call fills, in the order both inserts bind them.
macro_rules! insert_calls {
    () => {
        "INSERT INTO tool_calls (id, agent_id, message_id, body_sha256, session_id, trace_id, tool, server,
           arguments, arguments_redacted, agent_reason, plan, on_behalf_of, context, callback_url, status,
           blocked_by, rule, reason, risk, approvers_required, policy_id, details,
           created_at_ms, expires_at_ms, decided_at_ms, trust, turn_id, pinned, decided_by, facts)"
    };
}

/// One call, for a prepared statement of its own (the ledger's SQLite connection,
/// `ledger::direct`).
pub const INSERT_ONE: &str = concat!(
    insert_calls!(),
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
);

impl NewCall<'_> {
    /// Insert this call with [`INSERT_ONE`], prepared.
    pub fn insert_one(&self, stmt: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
        let c = self;
        stmt.execute(rusqlite::params![
            c.id,
            c.agent_id,
            c.message_id,
            c.body_sha256,
            c.session_id,
            c.trace_id,
            c.tool,
            c.server,
            c.arguments,
            c.arguments_redacted,
            c.agent_reason,
            c.plan,
            c.on_behalf_of,
            c.context,
            c.callback_url,
            c.status.as_str(),
            c.blocked_by,
            c.rule,
            c.reason,
            c.risk.as_str(),
            c.approvers_required,
            c.policy_id,
            c.details,
            c.created_at_ms,
            c.expires_at_ms,
            (c.status != CallStatus::Pending).then_some(c.created_at_ms),
            c.trust,
            c.turn_id,
            c.pinned,
            c.decided_by,
            c.facts,
        ])
        .map(drop)
    }
}

/// Insert calls with one statement (the ledger has checked their idempotency keys; a
/// duplicate fails the statement, and with it the batch).
pub async fn insert_many(conn: &mut AnyConnection, calls: &[NewCall<'_>]) -> Result<(), sqlx::Error> {
    if calls.is_empty() {
        return Ok(());
    }
    let mut q = super::Sql::new(super::Backend::of_conn(conn), "");
    push_insert(&mut q, calls);
    q.execute(conn).await?;
    Ok(())
}

/// The statement of [`insert_many`], appended to `q` (which may hold others before it).
pub fn push_insert<'a>(q: &mut super::Sql<'a>, calls: &'a [NewCall<'a>]) {
    q.push(concat!(insert_calls!(), " VALUES "));
    q.rows(calls, |b, c| {
        b.bind(c.id)
            .bind(c.agent_id)
            .bind(c.message_id)
            .bind(c.body_sha256)
            .bind(c.session_id)
            .bind(c.trace_id)
            .bind(c.tool)
            .bind(c.server)
            .bind(c.arguments)
            .bind(c.arguments_redacted)
            .bind(c.agent_reason)
            .bind(c.plan)
            .bind(c.on_behalf_of)
            .bind(c.context)
            .bind(c.callback_url)
            .bind(c.status.as_str())
            .bind(c.blocked_by)
            .bind(c.rule)
            .bind(c.reason)
            .bind(c.risk.as_str())
            .bind(c.approvers_required)
            .bind(c.policy_id)
            .bind(c.details)
            .bind(c.created_at_ms)
            .bind(c.expires_at_ms)
            .bind((c.status != CallStatus::Pending).then_some(c.created_at_ms))
            .bind(c.trust)
            .bind(c.turn_id)
            .bind(c.pinned)
            .bind(c.decided_by)
            .bind(c.facts);
    });
}

/// A call id from its 128 bits: `tc_` and a ULID (26 characters). New ids take the bits
/// of a UUIDv7, so they follow arrival order and rows and index entries are appended.
pub fn call_id(bits: u128) -> String {
    format!("tc_{}", ulid::Ulid::from(bits))
}

/// Bytes of the body's SHA-256 a call keeps to recognise a retry (128 bits: finding
/// another body with the same prefix is as hard as breaking a 128-bit hash). Calls stored
/// before kept all 32.
pub const BODY_HASH_BYTES: usize = 16;

/// Is `sha256` the hash of the body a call was stored with (`stored`: its kept prefix)?
pub fn same_body(stored: &[u8], sha256: &[u8; 32]) -> bool {
    stored.len() >= BODY_HASH_BYTES && sha256.starts_with(stored)
}

/// These calls with their idempotency keys (a retry's candidates, see `ledger::recent`).
pub async fn with_messages(conn: &mut AnyConnection, ids: &[String]) -> Result<Vec<WithMessage>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = super::Sql::new(
        super::Backend::of_conn(conn),
        format!("SELECT message_id, body_sha256, {COLUMNS} FROM tool_calls WHERE id IN ("),
    );
    q.list(ids.iter().map(String::as_str)).push(")");
    q.fetch_all(conn).await
}

/// A call and the webhook-id and body hash it was proposed with.
#[derive(sqlx::FromRow)]
pub struct WithMessage {
    pub message_id: String,
    pub body_sha256: Vec<u8>,
    #[sqlx(flatten)]
    pub row: CallRow,
}

/// (agent, webhook-id, call id) of the calls created since `since_ms`, newest first: read
/// backwards in rowid (arrival) order, so only the recent rows are touched.
pub async fn recent_messages(
    conn: &mut AnyConnection,
    since_ms: i64,
) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    let mut out = Vec::new();
    let mut below = i64::MAX;
    loop {
        let rows: Vec<(i64, String, String, String, i64)> = sqlx::query_as(
            "SELECT rowid, agent_id, message_id, id, created_at_ms FROM tool_calls WHERE rowid < $1
             ORDER BY rowid DESC LIMIT 5000",
        )
        .bind(below)
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = rows.last() else { return Ok(out) };
        below = last.0;
        for (_, agent, message, id, at) in rows {
            if at < since_ms {
                return Ok(out);
            }
            out.push((agent, message, id));
        }
    }
}

/// (rowid, agent, webhook-id, call id, created_at_ms) of the calls stored after `rowid`,
/// oldest first, at most `limit`: what another writer stored since this one last looked.
/// (The limit also keeps PostgreSQL's plan for a prepared `rowid > $1` on the index.)
pub async fn messages_after(
    conn: &mut AnyConnection,
    rowid: i64,
    limit: i64,
) -> Result<Vec<(i64, String, String, String, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT rowid, agent_id, message_id, id, created_at_ms FROM tool_calls WHERE rowid > $1
         ORDER BY rowid LIMIT $2",
    )
    .bind(rowid)
    .bind(limit)
    .fetch_all(conn)
    .await
}

/// The newest call's rowid (0 when there is none).
pub async fn last_rowid(conn: &mut AnyConnection) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT coalesce(max(rowid), 0) FROM tool_calls")
        .fetch_one(conn)
        .await
}

pub async fn get(db: &Db, id: &str) -> Result<Option<CallRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tool_calls WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await
}

pub async fn get_in(conn: &mut AnyConnection, id: &str) -> Result<Option<CallRow>, sqlx::Error> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM tool_calls WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await
}

/// Move a pending call to a final status; false when it was no longer pending.
pub async fn finish(
    conn: &mut AnyConnection,
    id: &str,
    status: CallStatus,
    now: i64,
    decided_by: &str,
    comment: Option<&str>,
    final_arguments: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE tool_calls SET status = $1, decided_at_ms = $2, decided_by = $3, comment = $4, final_arguments = $5
         WHERE id = $6 AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(now)
    .bind(decided_by)
    .bind(comment)
    .bind(final_arguments)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// [`finish`] for several calls in one statement (no modified arguments); answers the
/// ids that were still pending and are now final.
pub async fn finish_many(
    conn: &mut AnyConnection,
    ids: &[&str],
    status: CallStatus,
    now: i64,
    decided_by: &str,
    comment: Option<&str>,
) -> Result<std::collections::HashSet<String>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let mut q = super::Sql::new(super::Backend::of_conn(conn), "UPDATE tool_calls SET status = ");
    q.bind(status.as_str())
        .push(", decided_at_ms = ")
        .bind(now)
        .push(", decided_by = ")
        .bind(decided_by)
        .push(", comment = ")
        .bind(comment)
        .push(", final_arguments = NULL WHERE status = 'pending' AND id IN (")
        .list(ids.iter().copied())
        .push(") RETURNING id");
    let rows: Vec<(String,)> = q.fetch_all(conn).await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Record what happened when the agent executed the call; false if already recorded.
pub async fn record_result(
    conn: &mut AnyConnection,
    id: &str,
    outcome: &str,
    summary: Option<&str>,
    duration_ms: Option<i64>,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE tool_calls SET result_outcome = $1, result_summary = $2, result_duration_ms = $3, result_at_ms = $4
         WHERE id = $5 AND result_outcome IS NULL",
    )
    .bind(outcome)
    .bind(summary)
    .bind(duration_ms)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Pending calls whose expiry has passed, oldest first (at most `limit`).
pub async fn due_for_expiry(conn: &mut AnyConnection, now: i64, limit: i64) -> Result<Vec<CallRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM tool_calls WHERE status = 'pending' AND expires_at_ms <= $1 ORDER BY expires_at_ms LIMIT $2"
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await
}

/// What reviewers read beyond the queue row (already redacted where it came from the agent).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CallExtras {
    pub agent_reason: Option<String>,
    pub plan: Option<String>,
    pub context: Option<String>,
    /// `{}` when none were stored.
    pub details: String,
    pub trust: Option<String>,
}

pub async fn extras_in(conn: &mut AnyConnection, id: &str) -> Result<Option<CallExtras>, sqlx::Error> {
    sqlx::query_as(
        "SELECT agent_reason, plan, context, coalesce(details, '{}') AS details, trust FROM tool_calls WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await
}

/// Held calls per agent (for the per-agent cap on waiting calls).
pub async fn pending_per_agent(
    conn: &mut AnyConnection,
) -> Result<std::collections::HashMap<String, u32>, sqlx::Error> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT agent_id, count(*) FROM tool_calls WHERE status = 'pending' GROUP BY agent_id")
            .fetch_all(conn)
            .await?;
    Ok(rows.into_iter().map(|(a, n)| (a, n.max(0) as u32)).collect())
}

/// What re-evaluating a held call needs beyond its row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Origin {
    pub turn_id: Option<String>,
    pub on_behalf_of: Option<String>,
    pub context: Option<String>,
    pub details: String,
}

pub async fn origin_in(conn: &mut AnyConnection, id: &str) -> Result<Option<Origin>, sqlx::Error> {
    sqlx::query_as(
        "SELECT turn_id, on_behalf_of, context, coalesce(details, '{}') AS details FROM tool_calls WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await
}

/// A reviewer's modification that needs more approvers than it has: the call stays
/// pending with the new arguments (to be released once the quorum is complete) and the
/// engine's answer for them.
#[allow(clippy::too_many_arguments)]
pub async fn hold_modified(
    conn: &mut AnyConnection,
    id: &str,
    final_arguments: &str,
    approvers_required: i64,
    blocked_by: Option<&str>,
    rule: Option<&str>,
    reason: &str,
    comment: Option<&str>,
    details: &str,
    pinned: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE tool_calls SET final_arguments = $1, approvers_required = $2, blocked_by = $3, rule = $4, reason = $5,
           comment = $6, details = $7, pinned = $8 WHERE id = $9 AND status = 'pending'",
    )
    .bind(final_arguments)
    .bind(approvers_required)
    .bind(blocked_by)
    .bind(rule)
    .bind(reason)
    .bind(comment)
    .bind(details)
    .bind(pinned)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Replace a call's engine details and pinned addresses (after a modification).
pub async fn set_details(
    conn: &mut AnyConnection,
    id: &str,
    details: &str,
    pinned: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE tool_calls SET details = $1, pinned = $2 WHERE id = $3")
        .bind(details)
        .bind(pinned)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A call as the retention sweep sees it.
#[derive(Debug, sqlx::FromRow)]
pub struct Retained {
    pub rowid: i64,
    pub agent_id: String,
    pub created_at_ms: i64,
    /// 1 while the call is held.
    pub pending: i64,
    pub arguments_redacted: Option<String>,
    pub final_arguments: Option<String>,
}

/// The next calls after `after_rowid`, oldest first.
pub async fn retention_batch(
    conn: &mut AnyConnection,
    after_rowid: i64,
    limit: i64,
) -> Result<Vec<Retained>, sqlx::Error> {
    sqlx::query_as(
        "SELECT rowid, agent_id, created_at_ms, CASE WHEN status = 'pending' THEN 1 ELSE 0 END AS pending, arguments_redacted, final_arguments
         FROM tool_calls WHERE rowid > $1 ORDER BY rowid LIMIT $2",
    )
    .bind(after_rowid)
    .bind(limit)
    .fetch_all(conn)
    .await
}

/// Keep only the redacted arguments of a decided call (and a reviewer's replacement,
/// redacted by the caller).
pub async fn purge_raw(conn: &mut AnyConnection, rowid: i64, final_redacted: Option<&str>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE tool_calls SET arguments = coalesce(arguments_redacted, arguments), arguments_redacted = NULL,
           final_arguments = $1 WHERE rowid = $2 AND status != 'pending'",
    )
    .bind(final_redacted)
    .bind(rowid)
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_is_recognised_by_the_kept_prefix_or_a_whole_older_hash_and_nothing_shorter() {
        let sha: [u8; 32] = std::array::from_fn(|i| i as u8);
        assert!(same_body(&sha[..BODY_HASH_BYTES], &sha));
        assert!(same_body(&sha, &sha), "calls stored before kept all 32 bytes");
        let mut other = sha;
        other[31] ^= 1;
        assert!(!same_body(&other, &sha));
        other = sha;
        other[0] ^= 1;
        assert!(!same_body(&other[..BODY_HASH_BYTES], &sha));
        assert!(!same_body(&sha[..8], &sha), "a shorter prefix is not enough");
        assert!(!same_body(&[], &sha));
    }
}
