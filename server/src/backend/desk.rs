//! The reviewer's desk: the queue, a call, decisions, grants, revealing a secret.

use super::*;
use app::components::shell::role_key;
use app::i18n::Tr;

#[async_trait::async_trait]
impl ReviewDesk for ServerBackend {
    async fn reveal_arguments(&self, actor: &UserView, id: &str) -> Result<String, AppError> {
        self.reveal(actor, id).await
    }

    async fn queue(&self, q: &QueueQuery) -> Result<QueueSnapshot, AppError> {
        let seq = self.hub.head();
        let read = |e: sqlx::Error| internal(e, "reading the queue");
        let filter = store::queue::PendingFilter {
            tool: &q.tool,
            agent: &q.agent,
            risk: &q.risk,
            session: &q.session,
            sort: &q.sort,
        };
        let groups = store::queue::pending_groups(&self.db).await.map_err(read)?;
        let (mut tools, mut agents, mut risks) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        let (mut total, mut matching) = (0u64, 0u64);
        for (tool, agent, risk, n) in groups {
            let n = n.max(0) as u64;
            total += n;
            if q.matches_fields(&tool, &agent, &risk, None) {
                matching += n;
            }
            *tools.entry(tool).or_insert(0) += n;
            *agents.entry(agent).or_insert(0) += n;
            *risks.entry(risk).or_insert(0) += n;
        }
        if !q.session.is_empty() {
            matching = store::queue::pending_count(&self.db, &filter).await.map_err(read)?;
        }
        let page_size = QUEUE_PAGE;
        // A page past the end shows the last one (a bookmark after the queue shrank).
        let last_page = (matching.saturating_sub(1) / u64::from(page_size)) as u32;
        let page = q.page.min(last_page);
        let rows = store::queue::pending_page(
            &self.db,
            &filter,
            i64::from(page_size),
            i64::from(page) * i64::from(page_size),
        )
        .await
        .map_err(read)?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let mut approvals: HashMap<String, Vec<String>> = HashMap::new();
        for (call, user) in reviews::approvals_of(&self.db, &ids)
            .await
            .map_err(|e| internal(e, "reading approvals"))?
        {
            approvals.entry(call).or_default().push(user);
        }
        let mut conn = self.db.acquire().await.map_err(read)?;
        let escalated = store::queue::escalated_of(&mut conn, &ids).await.map_err(read)?;
        let overrides_awaiting = crate::oncall::overrides::awaiting(&mut conn).await.map_err(read)?;
        drop(conn);
        let items = rows
            .iter()
            .map(|r| {
                let mut item = review::view::queue_item(&self.policy.get(), r);
                item.approvals = approvals.remove(&r.id).unwrap_or_default();
                item.escalated = escalated.contains(&r.id);
                item
            })
            .collect();
        let facets = |m: BTreeMap<String, u64>| -> Vec<Facet> {
            m.into_iter().map(|(value, count)| Facet { value, count }).collect()
        };
        Ok(QueueSnapshot {
            items,
            now_ms: store::now_ms(),
            seq,
            total,
            matching,
            page,
            page_size,
            tools: facets(tools),
            agents: facets(agents),
            risks: facets(risks),
            overrides_awaiting,
        })
    }

    async fn call_detail(&self, id: &str) -> Result<CallDetail, AppError> {
        let read = |e: sqlx::Error| internal(e, "reading a call");
        let row = calls::get(&self.db, id)
            .await
            .map_err(read)?
            .ok_or(AppError::NotFound)?
            .unsealed(&self.sealer);
        let mut conn = self.db.acquire().await.map_err(read)?;
        let extras = calls::extras_in(&mut conn, id)
            .await
            .map_err(read)?
            .ok_or(AppError::NotFound)?;
        let approvals = reviews::approvals_in(&mut conn, id).await.map_err(read)?;
        drop(conn);
        let session = store::queue::session_recent(&self.db, &row.agent_id, &row.session_id, 20)
            .await
            .map_err(read)?;
        let details = CallDetails::parse(&extras.details);
        let impact = details.impact.map(|i| ImpactView {
            paths: i.paths,
            files: i.stats.as_ref().map(|s| s.files),
            bytes: i.stats.as_ref().map(|s| s.bytes),
            complete: i.stats.is_none_or(|s| s.complete),
        });
        let shadow = details
            .shadow
            .iter()
            .map(|f| format!("{} ({}): would be {} — {}", f.rule, f.layer, f.would, f.reason))
            .collect();
        let mut item = review::view::queue_item(&self.policy.get(), &row);
        item.approvals = approvals;
        Ok(CallDetail {
            status: row.status.to_string(),
            decided_by: row.decided_by.clone(),
            decided_at_ms: row.decided_at_ms,
            comment: row.comment.clone(),
            arguments: review::view::pretty(&review::view::arguments(
                &self.policy.get(),
                &row.tool,
                &serde_json::from_str(&row.arguments).unwrap_or(Value::Null),
            )),
            final_arguments: row.final_arguments.as_deref().map(|a| {
                let v: Value = serde_json::from_str(a).unwrap_or(Value::Null);
                review::view::pretty(&review::view::arguments(&self.policy.get(), &row.tool, &v))
            }),
            agent_reason: extras.agent_reason,
            plan: extras.plan,
            context: extras
                .context
                .as_deref()
                .map(|c| review::view::pretty(&serde_json::from_str(c).unwrap_or(Value::Null))),
            trace_id: row.trace_id.clone(),
            tool_description: self
                .policy
                .get()
                .tool_info(&row.tool)
                .map(|t| t.description)
                .unwrap_or_default(),
            impact,
            shadow,
            // Guarded values are shown whole (see `review::view`), so they are not "redacted".
            masked: {
                let policy = self.policy.get();
                let guarded = policy.guarded_args(&row.tool);
                details
                    .masked
                    .into_iter()
                    .map(|m| m.path)
                    .filter(|p| {
                        let top = p.trim_start_matches('/').split('/').next().unwrap_or("");
                        !guarded.contains(&top)
                    })
                    .collect()
            },
            break_glass: details.break_glass && self.policy.get().tool_info(&row.tool).is_some_and(|t| t.break_glass),
            grantable: details.grantable && row.approvers_required <= 1,
            not_grantable: details.not_grantable.or_else(|| {
                (row.approvers_required > 1).then(|| {
                    format!(
                        "it needs {} distinct approvers; a grant is one reviewer's word",
                        row.approvers_required
                    )
                })
            }),
            session: session
                .into_iter()
                .map(|c| SessionCall {
                    id: c.id,
                    tool: c.tool,
                    status: c.status.to_string(),
                    created_at_ms: c.created_at_ms,
                })
                .collect(),
            result: row.result_outcome.clone(),
            now_ms: store::now_ms(),
            item,
        })
    }

    async fn decide(&self, actor: &UserView, id: &str, input: DecisionInput) -> DecisionOutcome {
        let fail = |message: String| DecisionOutcome {
            id: id.to_string(),
            ok: false,
            status: None,
            message,
        };
        let tr = app::api::request_tr();
        if !actor.role.may(Permission::Decide) {
            return fail(tr.f("srv.may_not_decide", &[("role", tr.t(role_key(actor.role)))]));
        }
        let verdict = input.verdict;
        let action = match self.action(id, input).await {
            Ok(a) => a,
            Err(e) => {
                // Refused before reaching the ledger (e.g. a secret sent somewhere new):
                // recorded like the ledger's own refusals.
                if matches!(e, ReviewError::Invalid(_) | ReviewError::Refused { .. }) {
                    if let Ok(Some(row)) = calls::get(&self.db, id).await {
                        let ev = crate::audit::NewEvent {
                            kind: "review_refused",
                            actor: format!("user:{}", actor.username),
                            call_id: Some(row.id.clone()),
                            session_id: Some(row.session_id.clone()),
                            data: serde_json::json!({"tool": row.tool, "agent": row.agent_id,
                                "action": format!("{verdict:?}").to_lowercase(), "reason": e.to_string()}),
                        };
                        if let Err(err) = self.ledger.audit_now(ev).await {
                            tracing::warn!(error = %err, "auditing a refused decision failed");
                        }
                    }
                }
                return fail(refusal(tr, e));
            }
        };
        let grant = match &action {
            Action::Approve { grant: Some(g) } => Some(*g),
            _ => None,
        };
        let modifies = matches!(action, Action::Modify { .. });
        let review = Review {
            call_id: id.to_string(),
            reviewer: format!("user:{}", actor.username),
            action,
        };
        match self.ledger.review(review).await {
            Ok(r) => {
                let n = |v: i64| v.to_string();
                let message = match r.status {
                    CallStatus::Pending if modifies => tr.f(
                        "srv.modified_needs_more",
                        &[
                            ("required", &n(r.approvers_required)),
                            ("more", &n(r.approvers_required - r.approvals.len() as i64)),
                        ],
                    ),
                    CallStatus::Pending => tr.f(
                        "srv.approval_recorded",
                        &[
                            ("have", &n(r.approvals.len() as i64)),
                            ("need", &n(r.approvers_required)),
                        ],
                    ),
                    CallStatus::Approved => match (grant, &r.grant_id) {
                        (Some(g), Some(gid)) => {
                            let scope = if g.scope == GrantKind::Server {
                                tr.t("srv.scope_server")
                            } else {
                                tr.t("srv.scope_tool")
                            };
                            tr.f(
                                "srv.approved_grant",
                                &[("scope", scope), ("minutes", &n(g.minutes)), ("grant", gid)],
                            )
                        }
                        _ => tr.t("srv.approved").into(),
                    },
                    CallStatus::Modified => tr.t("srv.modified").into(),
                    CallStatus::Rejected => tr.t("srv.rejected").into(),
                    CallStatus::Skipped => tr.t("srv.skipped").into(),
                    other => tr.f("srv.now_status", &[("status", tr.word("status", other.as_str()))]),
                };
                tracing::info!(actor = %actor.username, call = id, status = %r.status, "call decided");
                DecisionOutcome {
                    id: id.to_string(),
                    ok: true,
                    status: Some(r.status.to_string()),
                    message,
                }
            }
            Err(e) => fail(refusal(tr, e)),
        }
    }

    async fn grants(&self) -> Result<GrantList, AppError> {
        let now = store::now_ms();
        let read = |e: sqlx::Error| internal(e, "reading grants");
        let active = reviews::active_grants(&self.db, now).await.map_err(read)?;
        let ended = reviews::recent_ended_grants(&self.db, now, 20).await.map_err(read)?;
        Ok(GrantList {
            active: active.into_iter().map(grant_view).collect(),
            ended: ended.into_iter().map(grant_view).collect(),
            now_ms: now,
        })
    }

    async fn revoke_grant(&self, actor: &UserView, id: &str) -> Result<(), AppError> {
        if !actor.role.may(Permission::Decide) {
            return Err(AppError::Invalid(format!(
                "your role ({}) may not revoke grants",
                actor.role
            )));
        }
        match self
            .ledger
            .revoke_grant(id, &format!("user:{}", actor.username), "revoked by a reviewer")
            .await
        {
            Ok(()) => Ok(()),
            Err(ReviewError::GrantNotFound) => Err(AppError::Conflict(
                "this grant is no longer active (revoked or expired)".into(),
            )),
            Err(e) => Err(internal(e, "revoking a grant")),
        }
    }
}

impl ServerBackend {
    async fn reveal(&self, actor: &UserView, id: &str) -> Result<String, AppError> {
        if !actor.role.may(Permission::RevealSecrets) {
            return Err(AppError::Invalid(format!(
                "your role ({}) may not see redacted values",
                actor.role
            )));
        }
        let row = self
            .pending_row(id)
            .await
            .map_err(|e| AppError::Conflict(refusal(app::api::request_tr(), e)))?;
        let raw: Value = serde_json::from_str(row.final_arguments.as_deref().unwrap_or(&row.arguments))
            .map_err(|e| internal(e, "reading arguments"))?;
        let masked: Vec<String> = policy::redact::redact_value(&raw)
            .masked
            .into_iter()
            .map(|m| m.path)
            .collect();
        if masked.is_empty() {
            return Err(AppError::Invalid("nothing in this call is redacted".into()));
        }
        // On disk before anything is shown: who saw which values of which call.
        self.ledger
            .audit_now(crate::audit::NewEvent {
                kind: "secret_revealed",
                actor: format!("user:{}", actor.username),
                call_id: Some(row.id.clone()),
                session_id: Some(row.session_id.clone()),
                data: serde_json::json!({"tool": row.tool, "agent": row.agent_id, "paths": masked}),
            })
            .await
            .map_err(|e| internal(e, "auditing a reveal"))?;
        tracing::warn!(actor = %actor.username, call = id, "redacted values revealed");
        Ok(review::view::pretty(&raw))
    }

    /// Turn what the reviewer submitted into a checked action: free text bounded and
    /// redacted, modified arguments un-redacted and re-validated by the policy engine,
    /// approvals re-checked against the current policy.
    async fn action(&self, id: &str, input: DecisionInput) -> Result<Action, ReviewError> {
        match input.verdict {
            Verdict::Reject => {
                let reason = review::clean_text(&input.text, "reason")?
                    .ok_or_else(|| ReviewError::Invalid(app::api::request_tr().t("srv.reject_needs_reason").into()))?;
                Ok(Action::Reject { reason })
            }
            Verdict::Skip => Ok(Action::Skip {
                comment: review::clean_text(&input.text, "comment")?,
            }),
            Verdict::Approve => {
                let grant = match input.grant {
                    None => None,
                    Some((scope, minutes)) => {
                        if !(1..=review::MAX_GRANT_MINUTES).contains(&minutes) {
                            return Err(ReviewError::Invalid(format!(
                                "a grant lasts between 1 and {} minutes",
                                review::MAX_GRANT_MINUTES
                            )));
                        }
                        let scope = match scope {
                            GrantScopeKind::Tool => GrantKind::Tool,
                            GrantScopeKind::Server => GrantKind::Server,
                        };
                        Some(GrantRequest { scope, minutes })
                    }
                };
                let row = self.pending_row(id).await?;
                // A reviewer's modification awaiting its quorum releases its own arguments.
                let to_release = row.final_arguments.as_deref().unwrap_or(&row.arguments);
                let raw: Value = serde_json::from_str(to_release).unwrap_or(Value::Null);
                self.check(&row, raw).await?;
                Ok(Action::Approve { grant })
            }
            Verdict::Modify => {
                let row = self.pending_row(id).await?;
                let edited = policy::parse_strict(input.arguments.as_bytes(), self.policy.get().limits)
                    .map_err(|e| ReviewError::Invalid(format!("the arguments are not valid JSON: {e}")))?;
                let (raw, redacted) = current_arguments(&self.policy.get(), &row);
                if edited == redacted {
                    return Err(ReviewError::Invalid(
                        "the arguments are unchanged; approve the call instead".into(),
                    ));
                }
                let arguments = unredact(&edited, &redacted, &raw).map_err(ReviewError::Invalid)?;
                // The ledger judges every layer with the facts gathered here, once
                // (filesystem, DNS: on the blocking pool, never in the writer).
                let (policy, args) = (self.policy.get(), arguments.clone());
                let (agent, tool, server, session) = (
                    row.agent_id.clone(),
                    row.tool.clone(),
                    row.server.clone(),
                    row.session_id.clone(),
                );
                let facts = tokio::task::spawn_blocking(move || {
                    let call = policy::Call {
                        agent: &agent,
                        tool: &tool,
                        server: server.as_deref(),
                        session_id: &session,
                        turn_id: None,
                        arguments: &args,
                        context: &Value::Null,
                    };
                    crate::ingest::facts::gather_call(&policy, &call)
                })
                .await
                .map_err(|_| ReviewError::Unavailable)?;
                Ok(Action::Modify {
                    arguments,
                    comment: review::clean_text(&input.text, "comment")?,
                    facts,
                })
            }
        }
    }

    /// The call, when it can still be decided (the ledger checks again, atomically).
    async fn pending_row(&self, id: &str) -> Result<CallRow, ReviewError> {
        let row = calls::get(&self.db, id)
            .await
            .map_err(|_| ReviewError::Unavailable)?
            .ok_or(ReviewError::NotFound)?
            .unsealed(&self.sealer);
        if row.status != CallStatus::Pending {
            return Err(ReviewError::AlreadyDecided {
                by: row.decided_by.unwrap_or_else(|| "the policy".into()),
                status: row.status,
            });
        }
        Ok(row)
    }

    /// Layers 1–3 of the policy on the arguments to release. Guards may look at this
    /// host (symlinks, DNS), so the check runs on the blocking pool.
    async fn check(&self, row: &CallRow, arguments: Value) -> Result<(), ReviewError> {
        let policy = self.policy.get();
        let (tool, server, session) = (row.tool.clone(), row.server.clone(), row.session_id.clone());
        tokio::task::spawn_blocking(move || {
            let call = policy::Call {
                agent: "",
                tool: &tool,
                server: server.as_deref(),
                session_id: &session,
                turn_id: None,
                arguments: &arguments,
                context: &Value::Null,
            };
            policy.check_arguments(&call, &crate::host::LocalHost)
        })
        .await
        .map_err(|_| ReviewError::Unavailable)?
        .map_err(|r| ReviewError::Refused {
            layer: r.layer.as_str().to_string(),
            reason: r.reason,
        })
    }
}

/// The arguments a decision on this call would release, raw and as reviewers see them:
/// a reviewer's modification awaiting its quorum, or else what the agent sent.
fn current_arguments(policy: &Policy, row: &CallRow) -> (Value, Value) {
    let raw: Value =
        serde_json::from_str(row.final_arguments.as_deref().unwrap_or(&row.arguments)).unwrap_or(Value::Null);
    let shown = review::view::arguments(policy, &row.tool, &raw);
    (raw, shown)
}

/// Why a decision was refused, as the reviewer reads it.
/// Why a decision was refused, for the person who tried (in their language; the reasons
/// a rule or a check wrote itself stay as written).
pub(super) fn refusal(tr: Tr, e: ReviewError) -> String {
    match e {
        ReviewError::AlreadyDecided { status, by } => tr.f(
            "srv.already_decided",
            &[
                ("status", tr.word("status", status.as_str())),
                ("who", &app::api::who(&by)),
            ],
        ),
        ReviewError::NotFound => tr.t("srv.no_such_call").into(),
        ReviewError::Expired => tr.t("srv.expired_first").into(),
        ReviewError::AlreadyApproved => tr.t("srv.already_approved").into(),
        ReviewError::Refused { layer, reason } => tr.f(
            "srv.policy_refuses",
            &[("layer", tr.word("layer", &layer)), ("reason", &reason)],
        ),
        ReviewError::GrantNotFound => tr.t("srv.no_such_grant").into(),
        ReviewError::Unavailable => tr.t("srv.unavailable").into(),
        ReviewError::Invalid(m) | ReviewError::Forbidden(m) => tr.sentence(&m),
    }
}

/// The queue's view of a call row (approvals are filled in by the caller).
fn grant_view(g: GrantRow) -> GrantView {
    GrantView {
        id: g.id,
        agent: g.agent_id,
        session_id: g.session_id,
        scope: g.scope_kind,
        name: g.scope_name,
        created_by: g.created_by,
        created_at_ms: g.created_at_ms,
        expires_at_ms: g.expires_at_ms,
        revoked_at_ms: g.revoked_at_ms,
        revoked_by: g.revoked_by,
        revoke_reason: g.revoke_reason,
        source_call_id: g.source_call_id,
    }
}
