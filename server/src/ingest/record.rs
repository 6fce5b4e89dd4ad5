//! What the ledger writes for an agent: a proposal decided and stored, a cancellation,
//! a reported result. Plain functions over the writer's transaction ([`Tx`]).

use super::facts::{Facts, Recorded};
use super::proposal::Proposal;
use super::view::call_view;
use crate::audit::{self, NewEvent};
use crate::ledger::{agent_rate, Effects, LedgerError, State, Tx};
use crate::review;
use crate::store;
use crate::store::calls::{self, CallRow, NewCall};
use crate::store::details::CallDetails;
use crate::store::usage::UsageState;
use app::api::{CallStatus, DecisionSource, LiveEvent};
use policy::{Inputs, UsageDelta};
use serde_json::{json, Value};
use utoipa::ToSchema;

/// A proposal whose signature checked out, with what the handler prepared for it.
pub struct IngestJob {
    pub agent: String,
    /// Redacted forms, prepared by the handler (redaction is the costliest step and
    /// needs no shared state, so it runs in parallel, not in the serial ledger).
    pub redacted: RedactedProposal,
    pub message_id: String,
    pub body_sha256: [u8; 32],
    pub proposal: Proposal,
    /// The raw arguments sealed, when redaction masked something (`store::sealed`).
    pub sealed_arguments: Option<String>,
    pub facts: Facts,
}

/// What may be stored and shown of a proposal.
pub struct RedactedProposal {
    pub arguments: Value,
    pub masked: Vec<policy::redact::Masked>,
    pub context: Option<String>,
    pub reason: Option<String>,
    pub plan: Option<String>,
    /// Fingerprints of every masked value (see `audit::fingerprint`).
    pub fingerprints: Vec<String>,
}

impl RedactedProposal {
    pub fn of(p: &Proposal, prints: &crate::audit::fingerprint::Fingerprinter) -> RedactedProposal {
        use policy::redact::{redact_text_keyed, redact_value_keyed};
        let fp = |s: &str| prints.of(s);
        let fp: policy::redact::Fingerprint<'_> = &fp;
        let args = redact_value_keyed(&p.arguments, Some(fp));
        let mut fingerprints = args.fingerprints;
        let mut keep = |more: Vec<String>| {
            for f in more {
                if !fingerprints.contains(&f) {
                    fingerprints.push(f);
                }
            }
        };
        let context = (!p.context.is_null()).then(|| {
            let r = redact_value_keyed(&p.context, Some(fp));
            keep(r.fingerprints);
            r.value.to_string()
        });
        let mut text = |t: &Option<String>| {
            t.as_deref().map(|t| {
                let r = redact_text_keyed(t, Some(fp));
                keep(r.fingerprints);
                r.value
            })
        };
        let (reason, plan) = (text(&p.reason), text(&p.plan));
        RedactedProposal {
            arguments: args.value,
            masked: args.masked,
            context,
            reason,
            plan,
            fingerprints,
        }
    }
}

/// The answer to an ingest: the JSON body, and whether it is a replay of an earlier one.
#[derive(Debug)]
pub struct Ingested {
    pub body: String,
    pub replay: bool,
}

/// What the agent reports after executing a call: the body of
/// `POST /api/v1/tool-calls/{id}/result`, also its OpenAPI schema (`from_json` parses it
/// strictly, with a stable code per problem).
#[derive(Debug, Clone, PartialEq, ToSchema)]
#[schema(as = ResultRequest)]
pub struct Outcome {
    /// `ok` or `error`.
    #[schema(rename = "outcome", value_type = String, example = "ok")]
    pub ok: bool,
    /// What happened (at most 16 KiB; redacted before it is stored).
    pub summary: Option<String>,
    /// How long the execution took.
    #[schema(minimum = 0)]
    pub duration_ms: Option<i64>,
}

impl Outcome {
    pub fn from_json(v: &Value) -> Result<Outcome, (&'static str, String)> {
        let Value::Object(m) = v else {
            return Err(("invalid_body", "the body must be a JSON object".into()));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["outcome", "summary", "duration_ms"].contains(&k.as_str()))
        {
            return Err(("unknown_field", format!("unknown field \"{k}\"")));
        }
        let ok = match m.get("outcome").and_then(Value::as_str) {
            Some("ok") => true,
            Some("error") => false,
            Some(_) => return Err(("invalid_field", "outcome must be \"ok\" or \"error\"".into())),
            None => return Err(("missing_field", "outcome is required".into())),
        };
        let summary = match m.get("summary") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.len() <= 16 * 1024 => Some(s.clone()),
            Some(_) => return Err(("invalid_field", "summary must be a string of at most 16 KiB".into())),
        };
        let duration_ms = match m.get("duration_ms") {
            None | Some(Value::Null) => None,
            Some(d) => Some(d.as_i64().filter(|d| *d >= 0).ok_or((
                "invalid_field",
                "duration_ms must be a non-negative integer".to_string(),
            ))?),
        };
        Ok(Outcome {
            ok,
            summary,
            duration_ms,
        })
    }
}

/// Decide a run of proposals and store them with one statement per table: the ledger is
/// serial, so per-call round trips to SQLite are what limits throughput. Answers one
/// result per job, in order.
pub async fn ingest(
    tx: &mut Tx<'_>,
    jobs: Vec<Box<IngestJob>>,
) -> Result<Vec<Result<Ingested, LedgerError>>, sqlx::Error> {
    // Webhook-ids used recently (see `ledger::recent`): their calls, confirmed by the row's
    // own agent and webhook-id, answer a retry as they stand now (built from the row).
    let earlier: Vec<String> = jobs
        .iter()
        .filter_map(|j| tx.state.recent.get(&j.agent, &j.message_id).map(|s| s.call_id()))
        .collect();
    let mut known: std::collections::HashMap<(String, String), (Vec<u8>, String)> =
        calls::with_messages(tx.conn, &earlier)
            .await?
            .into_iter()
            .map(|m| {
                (
                    (m.row.agent_id.clone(), m.message_id),
                    (m.body_sha256, call_view(&m.row, &tx.state.settings.sealer).to_json()),
                )
            })
            .collect();
    let mut answers = Vec::with_capacity(jobs.len());
    let mut prepared: Vec<(&IngestJob, Prepared)> = Vec::with_capacity(jobs.len());
    let mut deltas = Vec::new();
    for job in &jobs {
        let key = (job.agent.clone(), job.message_id.clone());
        if let Some((hash, response)) = known.get(&key) {
            // The idempotency key was used before (earlier, or earlier in this batch).
            let r = if calls::same_body(hash, &job.body_sha256) {
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
                tx.audit(store::now_ms(), &ev).await?;
                Err(LedgerError::Conflict)
            };
            answers.push(r);
            continue;
        }
        let admitted = match rate(tx.state, job) {
            Ok(tat) => tat,
            Err(refused) => {
                answers.push(Err(refused));
                continue;
            }
        };
        // A new trust context ends the session's grants before this call is decided.
        let trust = review::trust_of(&job.proposal.context);
        for (grant, was) in tx.state.grants.stale(&job.agent, &job.proposal.session_id, &trust) {
            let why = format!("the session's trust context changed from {was} to {trust}");
            review::grants::revoke(tx, &grant, "system", &why).await?;
        }
        match admit(tx.state, tx.fx, job, trust, admitted, &mut deltas) {
            Ok(p) => {
                known.insert(key, (job.body_sha256.to_vec(), p.response.clone()));
                answers.push(Ok(Ingested {
                    body: p.response.clone(),
                    replay: false,
                }));
                prepared.push((job, p));
            }
            Err(refused) => answers.push(Err(refused)),
        }
    }
    let rows: Vec<NewCall<'_>> = prepared.iter().map(|(job, p)| p.new_call(job)).collect();
    let events: Vec<audit::Chained<'_>> = prepared
        .iter()
        .map(|(_, p)| audit::chain(tx.head, p.row.created_at_ms, &p.event))
        .collect();
    let backend = store::Backend::of_conn(tx.conn);
    if backend == store::Backend::Sqlite && !rows.is_empty() {
        // The inserts, the budgets and (when this is the batch's last work) the commit in
        // one statement list: each trip to SQLite's thread is two context switches, and at
        // moderate rates a batch holds only a call or two.
        let mut q = store::Sql::new(backend, "");
        calls::push_insert(&mut q, &rows);
        q.push(";\n");
        audit::push_insert(&mut q, &events);
        UsageState::push_persist(&mut q, &deltas, tx.head.seq + 1);
        if tx.commit_last {
            q.push(";\nCOMMIT");
        }
        q.execute(&mut *tx.conn).await?;
        tx.committed = tx.commit_last;
    } else {
        // PostgreSQL prepares one statement per query.
        calls::insert_many(tx.conn, &rows).await?;
        audit::insert_many(tx.conn, &events).await?;
        UsageState::persist(tx.conn, &deltas, tx.head.seq + 1).await?;
    }
    Ok(answers)
}

/// Can these proposals be decided without reading anything first? Not when a webhook-id
/// may have been used before (in the last minutes, or twice among them: the retry's
/// answer or refusal is built from what was stored), nor when a new trust context ends
/// grants of the session (the grant is revoked and recorded first). Such batches take
/// [`ingest`]; the others may take [`decide_new`].
pub(crate) fn needs_no_read<'a>(state: &State, mut jobs: impl Iterator<Item = &'a IngestJob>) -> bool {
    let mut ids = std::collections::HashSet::new();
    jobs.all(|j| {
        state.recent.get(&j.agent, &j.message_id).is_none()
            && ids.insert((j.agent.as_str(), j.message_id.as_str()))
            && state
                .grants
                .stale(&j.agent, &j.proposal.session_id, &review::trust_of(&j.proposal.context))
                .is_empty()
    })
}

/// What [`decide_new`] decided.
pub(crate) struct Decided<'j> {
    /// One per job, in order.
    pub(crate) answers: Vec<Result<Ingested, LedgerError>>,
    /// The calls to store, with their jobs.
    pub(crate) calls: Vec<(&'j IngestJob, Prepared)>,
    /// The budget changes to store.
    pub(crate) deltas: Vec<UsageDelta>,
}

/// [`ingest`]'s decisions for proposals that [`needs_no_read`] admits: each decided in
/// order and applied to the writer's state, nothing written.
pub(crate) fn decide_new<'j>(state: &mut State, fx: &mut Effects, jobs: &'j [Box<IngestJob>]) -> Decided<'j> {
    let mut answers = Vec::with_capacity(jobs.len());
    let mut prepared = Vec::with_capacity(jobs.len());
    let mut deltas = Vec::new();
    for job in jobs {
        let decided = rate(state, job).and_then(|admitted| {
            let trust = review::trust_of(&job.proposal.context);
            admit(state, fx, job, trust, admitted, &mut deltas)
        });
        match decided {
            Ok(mut p) => {
                answers.push(Ok(Ingested {
                    body: std::mem::take(&mut p.response),
                    replay: false,
                }));
                prepared.push((&**job, p));
            }
            Err(refused) => answers.push(Err(refused)),
        }
    }
    Decided {
        answers,
        calls: prepared,
        deltas,
    }
}

/// The agent's rate, shared by every instance (see `ledger::agent_rate`): the rate state
/// to store once the call is accepted, or the refusal.
fn rate(state: &State, job: &IngestJob) -> Result<Option<i64>, LedgerError> {
    let Some(rate) = state.settings.agent_rate else {
        return Ok(None);
    };
    let tat = policy::Usage::tat_ms(&state.usage, agent_rate::BUDGET, &job.agent);
    rate.admit(tat, store::now_us())
        .map(Some)
        .map_err(|wait_us| LedgerError::RateLimited {
            per_second: rate.per_second,
            retry_after: (wait_us as u64).div_ceil(1_000_000),
        })
}

/// Decide a new proposal (its webhook-id unused so far, its session's grants current) and
/// apply it to the writer's state: budgets, held calls, recent webhook-ids, what to tell
/// once committed. Its budget changes are added to `deltas`. Nothing is written here.
pub(crate) fn admit(
    state: &mut State,
    fx: &mut Effects,
    job: &IngestJob,
    trust: String,
    admitted: Option<i64>,
    deltas: &mut Vec<UsageDelta>,
) -> Result<Prepared, LedgerError> {
    let mut p = prepare(state, job, trust);
    if p.pending.is_some() {
        let cap = state.settings.max_pending_per_agent;
        let held = state.pending.entry(job.agent.clone()).or_default();
        if cap > 0 && *held >= cap {
            // Nothing is stored or charged: the agent may retry the same message later.
            return Err(LedgerError::TooManyPending(cap));
        }
        *held += 1;
    }
    if let Some(tat) = admitted {
        let d = UsageDelta {
            budget: agent_rate::BUDGET.into(),
            scope: job.agent.clone(),
            change: policy::UsageChange::Tat(tat),
        };
        state.usage.apply(std::slice::from_ref(&d));
        deltas.push(d);
    }
    // Later calls in this batch must see this one's budget use.
    state.usage.apply(&p.deltas);
    deltas.append(&mut p.deltas);
    state
        .recent
        .insert(&job.agent, &job.message_id, &p.row.id, p.row.created_at_ms);
    if let Some(item) = p.pending.take() {
        fx.publish(LiveEvent::CallPending(item));
    }
    fx.count(
        p.row.status,
        p.row.blocked_by.map(policy::Layer::as_str),
        p.row.decided_by.as_deref(),
    );
    Ok(p)
}

/// A decided proposal, ready to store.
pub(crate) struct Prepared {
    pub(crate) row: CallRow,
    details: String,
    response: String,
    pub(crate) event: NewEvent,
    /// The queue entry for dashboards, when the call is held.
    pending: Option<app::api::QueueItem>,
    deltas: Vec<UsageDelta>,
    trust: String,
    policy_id: i64,
    /// The host's answers, kept for replays (never for arguments that held a secret).
    facts: Option<String>,
}

/// Evaluate one proposal and build everything that will be stored and answered.
fn prepare(state: &State, job: &IngestJob, trust: String) -> Prepared {
    let p = &job.proposal;
    let now = store::now_ms();
    let grants = state.grants.for_session(&job.agent, &p.session_id, now);
    let started = std::time::Instant::now();
    let call = p.call(&job.agent);
    let host = Recorded(&job.facts);
    let d = state.policy.evaluate(
        &call,
        &Inputs {
            now_ms: now,
            usage: &state.usage,
            grants: &grants,
            host: &host,
        },
    );
    let eval_us = started.elapsed().as_micros() as u64;
    let id = calls::call_id(uuid::Uuid::now_v7().as_u128());
    let redacted = &job.redacted;
    let details = CallDetails::of(&d, &redacted.masked).to_json();
    let status = match d.status {
        policy::Status::Allowed => CallStatus::Allowed,
        policy::Status::Denied => CallStatus::Denied,
        policy::Status::Pending => CallStatus::Pending,
    };
    let row = CallRow {
        id: id.clone(),
        agent_id: job.agent.clone(),
        session_id: p.session_id.clone(),
        trace_id: p.trace_id.clone(),
        tool: p.tool.clone(),
        server: p.server.clone(),
        arguments: p.arguments.to_string(),
        arguments_redacted: redacted.arguments.to_string(),
        status,
        blocked_by: d.blocked_by,
        rule: d.rule.clone(),
        reason: d.reason.clone(),
        risk: d.risk,
        approvers_required: i64::from(d.approvers_required),
        policy_version: d.policy_version.to_string(),
        created_at_ms: now,
        expires_at_ms: d.expires_at_ms,
        decided_at_ms: (status != CallStatus::Pending).then_some(now),
        decided_by: d.grant_id.as_ref().map(|g| format!("grant:{g}")),
        comment: None,
        final_arguments: None,
        callback_url: p.callback_url.clone(),
        result_outcome: None,
        pinned: (!d.pinned.is_empty()).then(|| json!(d.pinned).to_string()),
    };
    let response = call_view(&row, &state.settings.sealer).to_json();
    let source = match d.source {
        policy::Source::Policy => DecisionSource::Policy,
        policy::Source::Grant => DecisionSource::Grant,
    };
    let event = NewEvent {
        kind: "call_received",
        actor: format!("agent:{}", job.agent),
        call_id: Some(id.clone()),
        session_id: Some(p.session_id.clone()),
        // Written for every call, so it holds each fact once and briefly: absent fields are
        // left out (nulls and empty lists), and so are the decision's usual values (readers
        // fill them back in, see `audit::without_usual`). The policy is named by its
        // version's first 16 hex digits (`policy_versions` has the whole); the webhook-id
        // stays with the call row.
        data: received_data(p, redacted, &d, status, source, eval_us),
    };
    let pending = (status == CallStatus::Pending).then(|| review::view::queue_item(&state.policy, &row));
    Prepared {
        row,
        details,
        response,
        event,
        pending,
        deltas: d.usage,
        trust,
        policy_id: state.policy_id,
        facts: if redacted.masked.is_empty() {
            job.facts.to_json()
        } else {
            None
        },
    }
}

/// A `call_received` event's data, as [`received_data_reference`] builds it, without the
/// absent fields it then drops: built for every call in the serial ledger.
fn received_data(
    p: &Proposal,
    redacted: &RedactedProposal,
    d: &policy::Decision,
    status: CallStatus,
    source: DecisionSource,
    eval_us: u64,
) -> Value {
    use serde_json::Map;
    /// `audit::compact`'s rule, applied as the fields are added.
    fn put(m: &mut Map<String, Value>, key: &str, v: Value) {
        if !audit::absent(&v) {
            m.insert(key.into(), v);
        }
    }
    fn text(s: &Option<String>) -> Value {
        s.as_ref().map_or(Value::Null, |s| Value::String(s.clone()))
    }
    fn value<T: serde::Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap_or(Value::Null)
    }
    let mut decision = Map::new();
    put(&mut decision, "status", value(&status));
    put(&mut decision, "blocked_by", value(&d.blocked_by));
    put(&mut decision, "rule", text(&d.rule));
    put(&mut decision, "reason", Value::String(d.reason.clone()));
    put(&mut decision, "source", source.as_str().into());
    put(&mut decision, "grant_id", text(&d.grant_id));
    put(&mut decision, "policy", audit::policy_ref(&d.policy_version).into());
    put(&mut decision, "risk", value(&d.risk));
    put(
        &mut decision,
        "approvers_required",
        i64::from(d.approvers_required).into(),
    );
    put(&mut decision, "expires_at_ms", d.expires_at_ms.into());
    put(&mut decision, "shadow", value(&d.shadow));
    let mut data = Map::new();
    put(&mut data, "tool", Value::String(p.tool.clone()));
    put(&mut data, "server", text(&p.server));
    put(&mut data, "trace_id", text(&p.trace_id));
    put(&mut data, "turn_id", text(&p.turn_id));
    put(&mut data, "arguments", redacted.arguments.clone());
    put(&mut data, "masked", value(&redacted.masked));
    put(&mut data, "fingerprints", value(&redacted.fingerprints));
    put(&mut data, "reason", text(&redacted.reason));
    put(&mut data, "plan", text(&redacted.plan));
    put(&mut data, "on_behalf_of", text(&p.on_behalf_of));
    data.insert("decision".into(), Value::Object(decision));
    data.insert("timings".into(), json!({"evaluate_us": eval_us}));
    // The decision's usual values, which readers put back, are left out in one place.
    audit::without_usual(Value::Object(data))
}

/// [`received_data`] as first written: every field, then `audit::compact` and
/// `audit::without_usual`. Kept for the test that holds the two to the same result (the
/// audit chain hashes what they build).
#[cfg(test)]
fn received_data_reference(
    p: &Proposal,
    redacted: &RedactedProposal,
    d: &policy::Decision,
    status: CallStatus,
    source: DecisionSource,
    eval_us: u64,
) -> Value {
    audit::without_usual(audit::compact(json!({
        "tool": p.tool, "server": p.server, "trace_id": p.trace_id, "turn_id": p.turn_id,
        "arguments": redacted.arguments, "masked": redacted.masked, "fingerprints": redacted.fingerprints,
        "reason": redacted.reason, "plan": redacted.plan,
        "on_behalf_of": p.on_behalf_of,
        "decision": {
            "status": status, "blocked_by": d.blocked_by, "rule": d.rule, "reason": d.reason,
            "source": source.as_str(), "grant_id": d.grant_id,
            "policy": audit::policy_ref(&d.policy_version),
            "risk": d.risk, "approvers_required": i64::from(d.approvers_required),
            "expires_at_ms": d.expires_at_ms, "shadow": d.shadow,
        },
        "timings": {"evaluate_us": eval_us},
    })))
}

impl Prepared {
    pub(crate) fn new_call<'a>(&'a self, job: &'a IngestJob) -> NewCall<'a> {
        let (p, r) = (&job.proposal, &self.row);
        NewCall {
            id: &r.id,
            agent_id: &job.agent,
            message_id: &job.message_id,
            body_sha256: &job.body_sha256[..calls::BODY_HASH_BYTES],
            session_id: &p.session_id,
            trace_id: p.trace_id.as_deref(),
            tool: &p.tool,
            server: p.server.as_deref(),
            arguments: job.sealed_arguments.as_deref().unwrap_or(&r.arguments),
            arguments_redacted: (job.sealed_arguments.is_some() || r.arguments_redacted != r.arguments)
                .then_some(r.arguments_redacted.as_str()),
            agent_reason: job.redacted.reason.as_deref(),
            plan: job.redacted.plan.as_deref(),
            on_behalf_of: p.on_behalf_of.as_deref(),
            context: job.redacted.context.as_deref(),
            callback_url: p.callback_url.as_deref(),
            status: r.status,
            blocked_by: r.blocked_by.map(policy::Layer::as_str),
            rule: r.rule.as_deref(),
            reason: &r.reason,
            risk: r.risk,
            approvers_required: r.approvers_required,
            policy_id: self.policy_id,
            details: (self.details != "{}").then_some(self.details.as_str()),
            created_at_ms: r.created_at_ms,
            expires_at_ms: r.expires_at_ms,
            // No trust context is stored as NULL (read back as `null`, see `review::grants`).
            trust: (self.trust != "null").then_some(self.trust.as_str()),
            turn_id: p.turn_id.as_deref(),
            pinned: r.pinned.as_deref(),
            decided_by: r.decided_by.as_deref(),
            facts: self.facts.as_deref(),
        }
    }
}

/// The agent no longer needs a held call.
pub async fn cancel(tx: &mut Tx<'_>, agent: &str, id: &str) -> Result<Result<CallRow, LedgerError>, sqlx::Error> {
    let Some(row) = calls::get_in(tx.conn, id).await?.filter(|r| r.agent_id == agent) else {
        return Ok(Err(LedgerError::NotFound));
    };
    if row.status != CallStatus::Pending {
        return Ok(Err(LedgerError::NotPending(row.status)));
    }
    let now = store::now_ms();
    let by = format!("agent:{agent}");
    calls::finish(tx.conn, id, CallStatus::Cancelled, now, &by, None, None).await?;
    let ev = NewEvent {
        kind: "call_cancelled",
        actor: by,
        call_id: Some(id.to_string()),
        session_id: Some(row.session_id.clone()),
        data: json!({"tool": row.tool, "waited_ms": now - row.created_at_ms, "source": DecisionSource::Agent.as_str()}),
    };
    tx.audit(now, &ev).await?;
    let row = calls::get_in(tx.conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
    tx.decided(&row);
    Ok(Ok(row))
}

/// The agent reports what happened when it executed a call.
pub async fn report(
    tx: &mut Tx<'_>,
    agent: &str,
    id: &str,
    o: &Outcome,
) -> Result<Result<CallRow, LedgerError>, sqlx::Error> {
    let Some(row) = calls::get_in(tx.conn, id).await?.filter(|r| r.agent_id == agent) else {
        return Ok(Err(LedgerError::NotFound));
    };
    if !row.status.executable() {
        return Ok(Err(LedgerError::NotExecutable(row.status)));
    }
    let now = store::now_ms();
    let outcome = if o.ok { "ok" } else { "error" };
    let summary = o.summary.as_deref().map(|s| policy::redact::redact_text(s).value);
    if !calls::record_result(tx.conn, id, outcome, summary.as_deref(), o.duration_ms, now).await? {
        return Ok(Err(LedgerError::AlreadyReported));
    }
    let ev = NewEvent {
        kind: "call_result",
        actor: format!("agent:{agent}"),
        call_id: Some(id.to_string()),
        session_id: Some(row.session_id.clone()),
        data: json!({"tool": row.tool, "outcome": outcome, "summary": summary, "duration_ms": o.duration_ms}),
    };
    tx.audit(now, &ev).await?;
    let row = calls::get_in(tx.conn, id).await?.ok_or(sqlx::Error::RowNotFound)?;
    Ok(Ok(row))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The received call's event is hashed into the audit chain: the direct builder must
    /// give exactly what every field followed by `audit::compact` and `audit::without_usual`
    /// gave, for calls allowed, refused at each layer, held (with approvers and risk), with
    /// masked secrets, with a grant and without optional fields.
    #[test]
    fn a_received_calls_event_data_is_what_the_compacted_document_was() {
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo.toml")).unwrap();
        let policy = policy::Policy::from_toml(&src).unwrap();
        let prints =
            audit::fingerprint::Fingerprinter::from_server_key(&crate::agents::ServerKey::from_bytes(&[3; 32]));
        let usage = UsageState::default();
        let proposals = [
            json!({"session_id": "s", "tool": "read_file", "arguments": {"path": "notes/a.txt"}}),
            json!({"session_id": "s", "tool": "read_file", "arguments": {"path": "/etc/shadow"}, "trace_id": "t1",
                   "turn_id": "u1", "reason": "look at password=hunter2", "plan": "p", "on_behalf_of": "bob"}),
            json!({"session_id": "s", "tool": "execute_command", "arguments": {"command": "rm -rf /"}}),
            json!({"session_id": "s", "tool": "execute_command", "arguments": {"command": "ls", "env": {"API_KEY": "sk-live-0123456789abcdef"}}}),
            json!({"session_id": "s", "tool": "no_such_tool", "arguments": {}}),
            json!({"session_id": "s", "tool": "read_file", "arguments": {"path": 5}}),
            json!({"session_id": "s", "tool": "send_email", "arguments": {"to": "x@example.com", "subject": "s", "body": "b"}, "server": "mail"}),
            json!({"session_id": "s", "tool": "refund", "arguments": {"amount": 5000, "order_id": "o-1"}}),
            json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "q"}}),
            json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "ABCDEF1234", "amount": 60000}}),
            json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "ABCDEF1234", "amount": 10}}),
            json!({"session_id": "s", "tool": "execute_command", "arguments": {"command": "ls -la"}, "turn_id": "u2"}),
            json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "notes/a.md", "content": "password=hunter2"}}),
        ];
        let grant = policy::Grant {
            id: "gr_1".into(),
            scope: policy::GrantScope::Tool("execute_command".into()),
            expires_at_ms: i64::MAX,
        };
        let mut seen = std::collections::HashSet::new();
        for body in proposals {
            let p = Proposal::from_json(body.clone()).unwrap();
            let redacted = RedactedProposal::of(&p, &prints);
            for grants in [&[][..], std::slice::from_ref(&grant)] {
                let inputs = policy::Inputs {
                    now_ms: 1_000,
                    usage: &usage,
                    grants,
                    host: &policy::PureHost,
                };
                let d = policy.evaluate(&p.call("a1"), &inputs);
                let status = match d.status {
                    policy::Status::Allowed => CallStatus::Allowed,
                    policy::Status::Denied => CallStatus::Denied,
                    policy::Status::Pending => CallStatus::Pending,
                };
                for source in [DecisionSource::Policy, DecisionSource::Grant] {
                    let built = received_data(&p, &redacted, &d, status, source, 17);
                    let reference = received_data_reference(&p, &redacted, &d, status, source, 17);
                    assert_eq!(built, reference, "{body}");
                    seen.insert((
                        status,
                        d.blocked_by,
                        d.approvers_required > 0,
                        redacted.masked.is_empty(),
                    ));
                }
            }
        }
        // The cases above reach allowed, held and refused calls, approver counts and masks.
        let statuses: std::collections::HashSet<_> = seen.iter().map(|s| s.0).collect();
        assert_eq!(statuses.len(), 3, "{seen:?}");
        assert!(seen.iter().any(|s| s.2) && seen.iter().any(|s| !s.3), "{seen:?}");
    }
}
