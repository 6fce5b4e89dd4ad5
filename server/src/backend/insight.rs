//! What the stats and audit pages read.

use super::*;

#[async_trait::async_trait]
impl Insight for ServerBackend {
    async fn stats_summary(&self) -> Result<StatsSummary, AppError> {
        let r = store::queue::recent(&self.db, STATS_WINDOW as i64)
            .await
            .map_err(|e| internal(e, "reading the stats"))?;
        let (mut statuses, mut layers, mut tools) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        let mut window = 0u64;
        for (status, layer, tool, n) in r.groups {
            let n = n.max(0) as u64;
            window += n;
            *statuses.entry(status).or_insert(0) += n;
            if let Some(l) = layer {
                *layers.entry(l).or_insert(0) += n;
            }
            *tools.entry(tool).or_insert(0) += n;
        }
        let ranked = |m: BTreeMap<String, u64>, keep: usize| -> Vec<Facet> {
            let mut v: Vec<Facet> = m.into_iter().map(|(value, count)| Facet { value, count }).collect();
            v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
            v.truncate(keep);
            v
        };
        Ok(StatsSummary {
            calls: r.calls,
            waiting: r.waiting,
            window,
            statuses: ranked(statuses, usize::MAX),
            layers: ranked(layers, usize::MAX),
            tools: ranked(tools, 10),
            oldest_in_window_ms: r.oldest_ms,
            now_ms: store::now_ms(),
        })
    }

    async fn audit_latest(&self, limit: u32) -> Result<AuditSummary, AppError> {
        let (events, rows) = crate::audit::latest(&self.db, i64::from(limit.min(500)))
            .await
            .map_err(|e| internal(e, "reading the audit trail"))?;
        Ok(AuditSummary {
            events: events.max(0) as u64,
            latest: rows
                .into_iter()
                .map(|(seq, at_ms, kind, actor, call_id, session_id)| AuditEventView {
                    seq,
                    at_ms,
                    kind,
                    actor,
                    call_id,
                    session_id,
                })
                .collect(),
            now_ms: store::now_ms(),
        })
    }
}
