//! A reviewer's decision as the ledger writes it: separation of duties, quorum,
//! modification (re-judged on every layer), approve-all grants, and refusals audited.

use super::{grants, Action, Review, ReviewError, Reviewed};
use crate::audit::NewEvent;
use crate::ingest::facts::{Facts, Recorded};
use crate::ledger::Tx;
use crate::store;
use crate::store::calls::{self, CallRow};
use crate::store::details::CallDetails;
use crate::store::review as reviews;
use crate::store::usage::UsageState;
use app::api::{CallStatus, CallUpdated, DecisionSource, LiveEvent};
use policy::{Call, Inputs};
use serde_json::{json, Value};

/// Apply a reviewer's decision. Only a pending, unexpired call can be decided; the
/// first decision to reach the ledger wins and later ones are told who won.
pub async fn review(tx: &mut Tx<'_>, r: &Review) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
    let Some(row) = calls::get_in(tx.conn, &r.call_id).await? else {
        return Ok(Err(ReviewError::NotFound));
    };
    if row.status != CallStatus::Pending {
        return Ok(Err(ReviewError::AlreadyDecided {
            status: row.status,
            by: row.decided_by.unwrap_or_else(|| "the policy".into()),
        }));
    }
    let now = store::now_ms();
    if row.expires_at_ms.is_some_and(|t| t <= now) {
        return Ok(Err(ReviewError::Expired));
    }
    let origin = calls::origin_in(tx.conn, &row.id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    let releases = matches!(r.action, Action::Approve { .. } | Action::Modify { .. });
    // Separation of duties: nobody releases a call made on their own behalf.
    if let (true, Some(principal)) = (releases, origin.on_behalf_of.as_deref()) {
        let me = r.reviewer.strip_prefix("user:").unwrap_or(&r.reviewer);
        if tx.state.settings.is_principal(principal, me) {
            let why = "this call was made on your behalf; another reviewer must decide it".to_string();
            return refused(tx, now, &row, r, ReviewError::Forbidden(why)).await;
        }
    }
    let recorded = reviews::approvals_in(tx.conn, &row.id).await?;
    // Only approvals of people who may still decide count (disabled or moved to a
    // role that cannot decide: their earlier approvals lapse).
    let mut approvals = reviews::valid_approvals_in(tx.conn, &row.id).await?;
    let mut grant_id = None;
    let base = json!({"tool": row.tool, "server": row.server, "agent": row.agent_id, "action": r.action.name()});
    let (status, comment, final_args, mut data) = match &r.action {
        Action::Reject { reason } => (
            CallStatus::Rejected,
            Some(reason.clone()),
            None,
            json!({"reason": reason}),
        ),
        Action::Skip { comment } => (CallStatus::Skipped, comment.clone(), None, json!({"comment": comment})),
        Action::Modify {
            arguments,
            comment,
            facts,
        } => {
            let m = match modification(tx, &row, &origin, arguments, facts, now).await? {
                Ok(m) => m,
                Err(e) => return refused(tx, now, &row, r, e).await,
            };
            // Earlier approvals were given to other arguments: only the modifier's counts.
            reviews::clear_approvals(tx.conn, &row.id).await?;
            reviews::add_approval(tx.conn, &row.id, &r.reviewer, now).await?;
            approvals = vec![r.reviewer.clone()];
            let opened = row.clone().unsealed(&tx.state.settings.sealer);
            let before = opened.final_arguments.as_deref().unwrap_or(&opened.arguments);
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
                    tx.conn,
                    &row.id,
                    &stored_final(tx, &row, arguments),
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
                tx.audit(
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
                tx.publish(LiveEvent::CallUpdated(CallUpdated {
                    id: row.id.clone(),
                    approvals: approvals.clone(),
                    approvers_required: m.required,
                }));
                return Ok(Ok(Reviewed {
                    status: CallStatus::Pending,
                    approvals,
                    approvers_required: m.required,
                    grant_id: None,
                }));
            }
            calls::set_details(tx.conn, &row.id, &m.details, m.pinned.as_deref()).await?;
            (
                CallStatus::Modified,
                comment.clone(),
                Some(stored_final(tx, &row, arguments)),
                data,
            )
        }
        Action::Approve { grant } => {
            if recorded.contains(&r.reviewer) {
                return refused(tx, now, &row, r, ReviewError::AlreadyApproved).await;
            }
            if grant.is_some() && row.approvers_required > 1 {
                return Ok(Err(ReviewError::Invalid(
                    "calls that need several approvers cannot be answered with an approve-all grant".into(),
                )));
            }
            // The grant is checked (and made) before anything else is written, so a
            // refused grant leaves no approval behind.
            if let Some(g) = grant {
                match grants::create(tx, &row, r, *g, now).await? {
                    Ok(id) => grant_id = Some(id),
                    Err(e) => return Ok(Err(e)),
                }
            }
            reviews::add_approval(tx.conn, &row.id, &r.reviewer, now).await?;
            approvals.push(r.reviewer.clone());
            if (approvals.len() as i64) < row.approvers_required {
                tx.audit(
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
                tx.publish(LiveEvent::CallUpdated(CallUpdated {
                    id: row.id.clone(),
                    approvals: approvals.clone(),
                    approvers_required: row.approvers_required,
                }));
                return Ok(Ok(Reviewed {
                    status: CallStatus::Pending,
                    approvals,
                    approvers_required: row.approvers_required,
                    grant_id: None,
                }));
            }
            match &row.final_arguments {
                // The quorum for a reviewer's modification is complete.
                Some(args) => (
                    CallStatus::Modified,
                    row.comment.clone(),
                    Some(args.clone()),
                    json!({"approvals": approvals}),
                ),
                None => (CallStatus::Approved, None, None, json!({"approvals": approvals})),
            }
        }
    };
    let decided_by = if status == CallStatus::Approved || (status == CallStatus::Modified && approvals.len() > 1) {
        approvals.join(", ")
    } else {
        r.reviewer.clone()
    };
    if !calls::finish(
        tx.conn,
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
        d.insert("source".into(), json!(DecisionSource::Reviewer.as_str()));
        d.insert("waited_ms".into(), json!(now - row.created_at_ms));
        d.insert("grant_id".into(), json!(grant_id));
    }
    tx.audit(
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
    let row = tx.finished(&row.id, now).await?;
    Ok(Ok(Reviewed {
        status: row.status,
        approvals,
        approvers_required: row.approvers_required,
        grant_id,
    }))
}

/// A modification as stored: sealed when it carries a secret (one the reviewer kept or
/// was allowed to retype), like the agent's own arguments (`store::sealed`).
fn stored_final(tx: &Tx<'_>, row: &CallRow, arguments: &Value) -> String {
    let raw = arguments.to_string();
    let redacted = policy::redact::redact_value(arguments).value.to_string();
    tx.state
        .settings
        .sealer
        .seal_if_secret(&raw, &redacted, &row.agent_id)
        .unwrap_or(raw)
}

/// Judge a reviewer's modification on every layer, as if the agent had sent it, and
/// charge budgets for it in place of what the held call had charged.
async fn modification(
    tx: &mut Tx<'_>,
    row: &CallRow,
    origin: &calls::Origin,
    arguments: &Value,
    facts: &Facts,
    now: i64,
) -> Result<Result<Modification, ReviewError>, sqlx::Error> {
    let mut details = CallDetails::parse(&origin.details);
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
            usage: &tx.state.usage,
            grants: &[],
            host: &host,
        };
        tx.state.policy.reevaluate(&call, &inputs, &details.charged)
    };
    if decision.status == policy::Status::Denied {
        let layer = decision.blocked_by.map_or("policy", |l| l.as_str()).to_string();
        let reason = match &decision.rule {
            Some(rule) => format!("{rule}: {}", decision.reason),
            None => decision.reason.clone(),
        };
        return Ok(Err(ReviewError::Refused { layer, reason }));
    }
    UsageState::persist(tx.conn, &decision.usage, tx.head.seq + 1).await?;
    tx.state.usage.apply(&decision.usage);
    details.modified(&decision, charges);
    Ok(Ok(Modification {
        required: i64::from(decision.approvers_required.max(1)),
        details: details.to_json(),
        pinned: (!decision.pinned.is_empty()).then(|| json!(decision.pinned).to_string()),
        decision,
    }))
}

/// A refused review, audited: who tried what, and why it was refused.
async fn refused(
    tx: &mut Tx<'_>,
    now: i64,
    row: &CallRow,
    r: &Review,
    e: ReviewError,
) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
    refusal(tx, now, row, &r.reviewer, r.action.name(), e).await
}

/// Record that `actor`'s `action` on a held call was refused (reviews and overrides).
pub(crate) async fn refusal(
    tx: &mut Tx<'_>,
    now: i64,
    row: &CallRow,
    actor: &str,
    action: &str,
    e: ReviewError,
) -> Result<Result<Reviewed, ReviewError>, sqlx::Error> {
    tx.audit(
        now,
        &NewEvent {
            kind: "review_refused",
            actor: actor.to_string(),
            call_id: Some(row.id.clone()),
            session_id: Some(row.session_id.clone()),
            data: json!({"tool": row.tool, "agent": row.agent_id, "action": action, "reason": e.to_string()}),
        },
    )
    .await?;
    Ok(Err(e))
}

/// A modification the policy accepts, and how many approvers it needs.
struct Modification {
    decision: policy::Decision,
    required: i64,
    details: String,
    pinned: Option<String>,
}
