//! Calls released under break-glass, and the post-hoc review every one of them gets.
//!
//! An override releases a held call whatever approvals it still lacks, but nothing more:
//! only pending calls (the allowlist, schema and guards already let them through), only
//! tools that allow it both when the call was held and now, never a call made on the
//! on-call person's own behalf, and only while their break-glass is in force.

use crate::audit::NewEvent;
use crate::ledger::Tx;
use crate::review::decide::refusal;
use crate::review::{ReviewError, Reviewed};
use crate::store::calls;
use crate::store::details::CallDetails;
use crate::store::review as reviews;
use app::api::{CallStatus, DecisionSource, LiveEvent, OverridesChanged};
use serde_json::json;
use sqlx::AnyConnection;

/// Release held call `id` under `user`'s break-glass.
pub async fn release(
    tx: &mut Tx<'_>,
    id: &str,
    user: &str,
    now: i64,
) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
    let Some(row) = calls::get_in(tx.conn, id).await? else {
        return Ok(Err(ReviewError::NotFound));
    };
    if row.status != CallStatus::Pending {
        return Ok(Err(ReviewError::AlreadyDecided {
            status: row.status,
            by: row.decided_by.unwrap_or_else(|| "the policy".into()),
        }));
    }
    if row.expires_at_ms.is_some_and(|t| t <= now) {
        return Ok(Err(ReviewError::Expired));
    }
    let Some(bg) = tx.state.break_glass.of(user, now).cloned() else {
        let why = "no break-glass of yours is in force; start one on the On-call page".to_string();
        return refusal(tx, now, &row, user, "override", ReviewError::Forbidden(why)).await;
    };
    let origin = calls::origin_in(tx.conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
    let held_allows = CallDetails::parse(&origin.details).break_glass;
    let policy_allows = tx.state.policy.tool_info(&row.tool).is_some_and(|t| t.break_glass);
    if !(held_allows && policy_allows) {
        let why = format!(
            "the policy does not let break-glass release {} (break_glass = false); a reviewer must decide it",
            row.tool
        );
        return refusal(tx, now, &row, user, "override", ReviewError::Forbidden(why)).await;
    }
    if let Some(principal) = origin.on_behalf_of.as_deref() {
        let me = user.strip_prefix("user:").unwrap_or(user);
        if tx.state.settings.is_principal(principal, me) {
            let why = "this call was made on your behalf; break-glass does not release your own calls".to_string();
            return refusal(tx, now, &row, user, "override", ReviewError::Forbidden(why)).await;
        }
    }
    let approvals = reviews::valid_approvals_in(tx.conn, id).await?;
    // A modification still waiting for its quorum is released as modified (it passed
    // every layer when the reviewer made it); otherwise the agent's own arguments.
    if !calls::finish(
        tx.conn,
        id,
        CallStatus::Overridden,
        now,
        user,
        Some(&bg.justification),
        row.final_arguments.as_deref(),
    )
    .await?
    {
        return Ok(Err(ReviewError::Unavailable));
    }
    sqlx::query(
        "INSERT INTO override_reviews (call_id, break_glass_id, overridden_by, overridden_at_ms) VALUES ($1, $2, $3, $4)",
    )
    .bind(id)
    .bind(&bg.id)
    .bind(user)
    .bind(now)
    .execute(&mut *tx.conn)
    .await?;
    tx.audit(
        now,
        &NewEvent {
            kind: "call_decided",
            actor: user.to_string(),
            call_id: Some(row.id.clone()),
            session_id: Some(row.session_id.clone()),
            data: json!({
                "tool": row.tool, "server": row.server, "agent": row.agent_id, "action": "override",
                "status": CallStatus::Overridden, "source": DecisionSource::Override.as_str(),
                "justification": bg.justification, "break_glass_id": bg.id,
                "approvals": approvals, "required": row.approvers_required,
                "modified": row.final_arguments.is_some(), "waited_ms": now - row.created_at_ms,
            }),
        },
    )
    .await?;
    let done = tx.finished(id, now).await?;
    tx.state.overrides_awaiting += 1;
    tx.publish(LiveEvent::OverridesChanged(OverridesChanged {
        awaiting: tx.state.overrides_awaiting,
        call_id: Some(id.to_string()),
        by: Some(user.to_string()),
    }));
    Ok(Ok(Reviewed {
        status: done.status,
        approvals,
        approvers_required: done.approvers_required,
        grant_id: None,
    }))
}

/// Another person's word on an override: agree, or flag it with a note.
pub async fn acknowledge(
    tx: &mut Tx<'_>,
    call_id: &str,
    user: &str,
    agree: bool,
    note: Option<&str>,
    now: i64,
) -> Result<Result<(), ReviewError>, sqlx::Error> {
    let found: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT overridden_by, acknowledged_by FROM override_reviews WHERE call_id = $1")
            .bind(call_id)
            .fetch_optional(&mut *tx.conn)
            .await?;
    let Some((by, acknowledged)) = found else {
        return Ok(Err(ReviewError::NotFound));
    };
    if let Some(a) = acknowledged {
        return Ok(Err(ReviewError::Invalid(format!(
            "this override was already reviewed by {}",
            app::api::who(&a)
        ))));
    }
    let verdict = if agree { "agree" } else { "flag" };
    if by == user {
        let ev = NewEvent {
            kind: "override_review_refused",
            actor: user.to_string(),
            call_id: Some(call_id.to_string()),
            session_id: None,
            data: json!({"verdict": verdict, "reason": "own override"}),
        };
        tx.audit(now, &ev).await?;
        return Ok(Err(ReviewError::Forbidden(
            "you released this call; another reviewer or an admin must review your override".into(),
        )));
    }
    sqlx::query(
        "UPDATE override_reviews SET acknowledged_by = $1, acknowledged_at_ms = $2, verdict = $3, note = $4
         WHERE call_id = $5 AND acknowledged_at_ms IS NULL",
    )
    .bind(user)
    .bind(now)
    .bind(verdict)
    .bind(note)
    .bind(call_id)
    .execute(&mut *tx.conn)
    .await?;
    let session: Option<String> = sqlx::query_scalar("SELECT session_id FROM tool_calls WHERE id = $1")
        .bind(call_id)
        .fetch_optional(&mut *tx.conn)
        .await?;
    tx.audit(
        now,
        &NewEvent {
            kind: "override_acknowledged",
            actor: user.to_string(),
            call_id: Some(call_id.to_string()),
            session_id: session,
            data: json!({"verdict": verdict, "note": note, "overridden_by": by}),
        },
    )
    .await?;
    tx.state.overrides_awaiting = tx.state.overrides_awaiting.saturating_sub(1);
    tx.publish(LiveEvent::OverridesChanged(OverridesChanged {
        awaiting: tx.state.overrides_awaiting,
        call_id: None,
        by: None,
    }));
    Ok(Ok(()))
}

/// Overrides nobody has reviewed yet.
pub async fn awaiting(conn: &mut AnyConnection) -> Result<u64, sqlx::Error> {
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM override_reviews WHERE acknowledged_at_ms IS NULL")
        .fetch_one(conn)
        .await?;
    Ok(n.max(0) as u64)
}
