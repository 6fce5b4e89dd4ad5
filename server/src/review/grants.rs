//! Active approve-all grants, held in memory by the ledger (its only writer) so each
//! proposal is evaluated against its session's grants without a query.

use crate::store::review::GrantRow;
use policy::{Grant, GrantScope};
use std::collections::HashMap;

#[derive(Debug, Clone)]
struct Active {
    grant: Grant,
    trust: String,
}

#[derive(Debug, Default)]
pub struct GrantState {
    /// agent → session → grants (nested so a lookup borrows `&str` keys).
    by_session: HashMap<String, HashMap<String, Vec<Active>>>,
}

impl GrantState {
    pub fn from_rows(rows: Vec<GrantRow>) -> GrantState {
        let mut s = GrantState::default();
        for r in rows {
            s.add(&r);
        }
        s
    }

    pub fn add(&mut self, r: &GrantRow) {
        let scope = if r.scope_kind == "server" {
            GrantScope::Server(r.scope_name.clone())
        } else {
            GrantScope::Tool(r.scope_name.clone())
        };
        self.by_session
            .entry(r.agent_id.clone())
            .or_default()
            .entry(r.session_id.clone())
            .or_default()
            .push(Active {
                grant: Grant {
                    id: r.id.clone(),
                    scope,
                    expires_at_ms: r.expires_at_ms,
                },
                trust: r.trust.clone(),
            });
    }

    pub fn remove(&mut self, id: &str) {
        self.retain(|a| a.grant.id != id);
    }

    fn retain(&mut self, keep: impl Fn(&Active) -> bool) {
        for sessions in self.by_session.values_mut() {
            for v in sessions.values_mut() {
                v.retain(&keep);
            }
            sessions.retain(|_, v| !v.is_empty());
        }
        self.by_session.retain(|_, s| !s.is_empty());
    }

    /// Grants of a session that were made under another trust context: they must go.
    pub fn stale(&self, agent: &str, session: &str, trust: &str) -> Vec<(String, String)> {
        self.session(agent, session)
            .filter(|a| a.trust != trust)
            .map(|a| (a.grant.id.clone(), a.trust.clone()))
            .collect()
    }

    /// The session's grants that are still in force at `now`.
    pub fn for_session(&self, agent: &str, session: &str, now: i64) -> Vec<Grant> {
        self.session(agent, session)
            .filter(|a| a.grant.expires_at_ms > now)
            .map(|a| a.grant.clone())
            .collect()
    }

    fn session<'a>(&'a self, agent: &str, session: &str) -> impl Iterator<Item = &'a Active> + 'a {
        self.by_session
            .get(agent)
            .and_then(|s| s.get(session))
            .into_iter()
            .flatten()
    }

    /// Forget grants that have expired (they no longer match anyway).
    pub fn prune(&mut self, now: i64) {
        self.retain(|a| a.grant.expires_at_ms > now);
    }
}
