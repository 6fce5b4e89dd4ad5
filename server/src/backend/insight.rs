//! What the stats and audit pages read.

use super::*;

#[async_trait::async_trait]
impl Insight for ServerBackend {
    async fn shadow_report(&self, since: &str, agent: &str) -> Result<app::api::ShadowReport, AppError> {
        let now = store::now_ms();
        let since = if since.trim().is_empty() { "7d" } else { since };
        let since_ms = crate::audit::search::parse_time(since, now)
            .map_err(AppError::Invalid)?
            .unwrap_or(now - 7 * 86_400_000);
        if agent.chars().count() > 200 {
            return Err(AppError::Invalid("the agent id is too long".into()));
        }
        crate::shadow::report(&self.db, since_ms, agent.trim(), now)
            .await
            .map_err(|e| internal(e, "reading shadow findings"))
    }

    async fn stats_range(&self, range: &str) -> Result<app::api::StatsRange, AppError> {
        crate::stats::range(&self.db, range, store::now_ms())
            .await
            .map_err(|e| internal(e, "reading the stats"))?
            .map_err(AppError::Invalid)
    }

    async fn stats_summary(&self) -> Result<StatsSummary, AppError> {
        let r = store::queue::recent(&self.db, STATS_WINDOW as i64)
            .await
            .map_err(|e| internal(e, "reading the stats"))?;
        let (mut statuses, mut layers, mut tools) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        let mut window = 0u64;
        for (status, layer, tool, n) in r.groups {
            let n = n.max(0) as u64;
            window += n;
            // Held calls name the layer that held them: only denials count as "denied by".
            if let (Some(l), "denied") = (layer, status.as_str()) {
                *layers.entry(l).or_insert(0) += n;
            }
            *statuses.entry(status).or_insert(0) += n;
            *tools.entry(tool).or_insert(0) += n;
        }
        Ok(StatsSummary {
            calls: r.calls,
            waiting: r.waiting,
            window,
            statuses: Facet::ranked(statuses, usize::MAX),
            layers: Facet::ranked(layers, usize::MAX),
            tools: Facet::ranked(tools, 10),
            oldest_in_window_ms: r.oldest_ms,
            now_ms: store::now_ms(),
        })
    }

    fn audit_open_to(&self, role: Role) -> bool {
        role.may(Permission::ReadAudit) || (self.reviewers_read_audit && role == Role::Reviewer)
    }

    async fn audit_search(&self, query: &AuditQuery) -> Result<AuditPage, AppError> {
        let now = store::now_ms();
        let plan = crate::audit::search::plan(query, now).map_err(AppError::Invalid)?;
        // Whatever was recorded before the search is in its results.
        self.search
            .step()
            .await
            .map_err(|e| internal(e, "indexing the audit trail"))?;
        let (hits, next) = crate::audit::search::page(&self.search, &plan, crate::audit::search::PAGE)
            .await
            .map_err(|e| internal(e, "searching the audit trail"))?;
        let (indexed, chain_len) = self
            .search
            .progress()
            .await
            .map_err(|e| internal(e, "reading the audit trail"))?;
        Ok(AuditPage {
            hits,
            next,
            chain_len,
            indexed,
            verified: self.chain_check.lock().map(|c| c.clone()).unwrap_or_default(),
            now_ms: now,
        })
    }

    async fn trace(&self, kind: TraceKind, id: &str) -> Result<TraceView, AppError> {
        if id.is_empty() || id.len() > 200 {
            return Err(AppError::NotFound);
        }
        crate::audit::trace::build(&self.search, kind, id, store::now_ms())
            .await
            .map_err(|e| internal(e, "reading a timeline"))?
            .ok_or(AppError::NotFound)
    }

    async fn secret_fingerprint(&self, actor: &UserView, value: &str) -> Result<String, AppError> {
        if value.is_empty() || value.len() > 4096 {
            return Err(AppError::Invalid("give the secret value (at most 4096 bytes)".into()));
        }
        if self.lookups.check(&actor.username).await.is_err() {
            return Err(AppError::Conflict(
                "too many secret lookups in a short time; try again in a minute".into(),
            ));
        }
        let fingerprint = self.fingerprints.of(value);
        let ev = crate::audit::NewEvent {
            kind: "secret_looked_up",
            actor: format!("user:{}", actor.username),
            call_id: None,
            session_id: None,
            data: serde_json::json!({"fingerprint": fingerprint}),
        };
        store::record_audit(&self.db, store::now_ms(), &ev)
            .await
            .map_err(|e| internal(e, "recording a secret lookup"))?;
        Ok(fingerprint)
    }

    async fn verify_chain(&self, actor: &UserView) -> Result<ChainCheck, AppError> {
        let check = crate::audit::checkpoint::check(&self.db, &[self.signer.public_key()], &[])
            .await
            .map_err(|e| internal(e, "verifying the audit trail"))?;
        let ev = crate::audit::NewEvent {
            kind: "audit_verified",
            actor: format!("user:{}", actor.username),
            call_id: None,
            session_id: None,
            data: serde_json::json!({
                "up_to": check.up_to, "checkpoints": check.checkpoints,
                "problem": check.problem.as_ref().map(|(seq, why)| serde_json::json!({"seq": seq, "why": why})),
            }),
        };
        store::record_audit(&self.db, store::now_ms(), &ev)
            .await
            .map_err(|e| internal(e, "recording a verification"))?;
        if let Ok(mut c) = self.chain_check.lock() {
            *c = Some(check.clone());
        }
        Ok(check)
    }
}
