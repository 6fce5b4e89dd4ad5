//! Delivery of final decisions to agents' `callback_url`s.
//!
//! The ledger queues a delivery in the same transaction as the decision; this task
//! sends it, signed with the agent's current secret (Standard Webhooks headers), with
//! exponential backoff. Every attempt is audited through the ledger. Before each attempt
//! the host name is resolved and every address judged by the URL guard; the request is
//! then pinned to those addresses, so DNS cannot be re-bound between check and connect.

use crate::agents::{self, AgentId};
use crate::audit::NewEvent;
use crate::ingest::{signature, view};
use crate::ledger::{Ledger, Tx};
use crate::store::{self, calls, Db};
use policy::guards::url::UrlGuard;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub struct Dispatcher {
    pub db: Db,
    pub key: agents::ServerKey,
    /// Opens sealed arguments for the payload (`store::sealed`).
    pub sealer: crate::store::sealed::Sealer,
    pub ledger: Ledger,
    pub wake: Arc<Notify>,
    /// Checks every resolved address (built with `resolve = true`).
    pub guard: Arc<UrlGuard>,
    pub allow_private: bool,
    pub max_attempts: i64,
    pub backoff_ms: i64,
    /// Other instances may deliver from the same database (PostgreSQL): claim each first.
    pub shared_database: bool,
}

/// One delivery attempt that finished, for the ledger to record.
pub struct CallbackAttempt {
    pub call_id: String,
    pub attempt: i64,
    /// HTTP status, or the error when nothing came back.
    pub result: Result<u16, String>,
    /// When to try again; `None` when this was the last attempt or it succeeded.
    pub retry_at_ms: Option<i64>,
}

/// Deliveries in flight at once, and per agent: one slow receiver holds up only its
/// own agent's callbacks, never everyone's.
const MAX_IN_FLIGHT: usize = 64;
const PER_AGENT: usize = 4;
/// How long a claimed delivery is this instance's alone (longer than an attempt takes).
const CLAIM_MS: i64 = 120_000;

impl Dispatcher {
    pub async fn run(self) {
        let this = Arc::new(self);
        let mut running: tokio::task::JoinSet<String> = tokio::task::JoinSet::new();
        let mut in_flight: std::collections::HashSet<String> = Default::default();
        let mut per_agent: std::collections::HashMap<String, usize> = Default::default();
        loop {
            let now = store::now_ms();
            let mut waiting = false;
            match store::callbacks::due(&this.db, now, 256).await {
                Ok(due) => {
                    for (id, agent, attempts) in due {
                        let busy = per_agent.get(&agent).copied().unwrap_or(0);
                        if in_flight.contains(&id) || busy >= PER_AGENT || running.len() >= MAX_IN_FLIGHT {
                            waiting = true;
                            continue;
                        }
                        // With other instances on the database, only one sends it; the
                        // claim lapses after a while if this one dies meanwhile.
                        if this.shared_database {
                            match store::callbacks::claim(&this.db, &id, now, now + CLAIM_MS).await {
                                Ok(true) => {}
                                Ok(false) => continue,
                                Err(e) => {
                                    tracing::warn!(error = %e, "claiming a callback failed");
                                    continue;
                                }
                            }
                        }
                        in_flight.insert(id.clone());
                        *per_agent.entry(agent.clone()).or_default() += 1;
                        let d = this.clone();
                        running.spawn(async move {
                            d.attempt(&id, attempts + 1).await;
                            format!("{id}\n{agent}")
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reading due callbacks failed"),
            }
            let next = store::callbacks::next_at(&this.db).await.ok().flatten();
            let mut sleep = match next {
                Some(t) => Duration::from_millis((t - store::now_ms()).clamp(10, 60_000) as u64),
                None => Duration::from_secs(60),
            };
            if waiting {
                // What is due is in flight or held back: a finished delivery wakes us.
                sleep = sleep.max(Duration::from_secs(1));
            }
            tokio::select! {
                _ = this.wake.notified() => {}
                _ = tokio::time::sleep(sleep) => {}
                Some(done) = running.join_next(), if !running.is_empty() => {
                    if let Ok(key) = done {
                        let (id, agent) = key.split_once('\n').unwrap_or((&key, ""));
                        in_flight.remove(id);
                        if let Some(n) = per_agent.get_mut(agent) {
                            *n = n.saturating_sub(1);
                            if *n == 0 {
                                per_agent.remove(agent);
                            }
                        }
                    }
                    // A panicked delivery is retried when its row comes due again.
                    while let Some(done) = running.try_join_next() {
                        if let Ok(key) = done {
                            let (id, agent) = key.split_once('\n').unwrap_or((&key, ""));
                            in_flight.remove(id);
                            if let Some(n) = per_agent.get_mut(agent) {
                                *n = n.saturating_sub(1);
                            }
                        }
                    }
                }
            }
        }
    }

    async fn attempt(&self, id: &str, attempt: i64) {
        let result = self.deliver(id).await;
        let delivered = matches!(result, Ok(s) if (200..300).contains(&s));
        let retry_at_ms = (!delivered && attempt < self.max_attempts)
            .then(|| store::now_ms() + self.backoff_ms.saturating_mul(1 << (attempt - 1).clamp(0, 16)));
        if let Err(e) = &result {
            tracing::info!(call = %id, attempt, error = %e, "callback delivery failed");
        }
        let outcome = match (delivered, retry_at_ms) {
            (true, _) => "delivered",
            (false, Some(_)) => "retry",
            (false, None) => "failed",
        };
        crate::metrics::Metrics::outcome(&crate::metrics::get().callbacks, outcome);
        // Waits for the commit, so the next round does not pick the same delivery again.
        self.ledger
            .callback_attempt(CallbackAttempt {
                call_id: id.to_string(),
                attempt,
                result,
                retry_at_ms,
            })
            .await;
    }

    async fn deliver(&self, id: &str) -> Result<u16, String> {
        let row = calls::get(&self.db, id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the call is gone")?;
        let url_text = row.callback_url.clone().ok_or("the call has no callback_url")?;
        let (pinned, url) = pinned_client(&self.guard, self.allow_private, &url_text).await?;
        let agent = AgentId::parse(&row.agent_id)?;
        let creds = agents::credentials(&self.db, &self.key, &agent)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the agent is gone")?;
        let secret = creds.secrets.first().ok_or("the agent has no valid secret")?;
        let body =
            serde_json::json!({"type": "tool_call.decided", "data": view::call_view(&row, &self.sealer)}).to_string();
        let msg_id = format!("cb_{}_{}", row.id, row.decided_at_ms.unwrap_or(0));
        let ts = (store::now_ms() / 1000).to_string();
        let sig = signature::sign(secret, &msg_id, &ts, body.as_bytes());
        let resp = pinned
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", msg_id)
            .header("webhook-timestamp", ts)
            .header("webhook-signature", sig)
            .header("airlock-agent", agent.as_str())
            .body(body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        Ok(resp.status().as_u16())
    }
}

/// A client for one URL whose host was resolved once and every address judged by
/// `guard` (unless `allow_private`, for local testing), pinned to those addresses, with
/// no redirects and a 10 s timeout. Used for callbacks and outbound notifications.
pub(crate) async fn pinned_client(
    guard: &Arc<UrlGuard>,
    allow_private: bool,
    url_text: &str,
) -> Result<(reqwest::Client, url::Url), String> {
    let url = url::Url::parse(url_text).map_err(|e| e.to_string())?;
    let host = url.host_str().ok_or("the URL has no host")?.to_string();
    let port = url.port_or_known_default().unwrap_or(443);
    // Resolve once, judge every address, then connect only to those addresses.
    let guard = guard.clone();
    let target = url_text.to_string();
    let addrs = tokio::task::spawn_blocking(move || {
        if allow_private {
            use std::net::ToSocketAddrs;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            return (host, port)
                .to_socket_addrs()
                .map(|a| a.collect())
                .map_err(|e| format!("resolving {host}: {e}"));
        }
        checked_addresses(&guard, &target, port, &crate::host::LocalHost)
    })
    .await
    .map_err(|e| e.to_string())??;
    let mut builder = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("airlock/", env!("CARGO_PKG_VERSION")));
    if let Some(domain) = url.domain() {
        builder = builder.resolve_to_addrs(domain, &addrs);
    }
    Ok((builder.build().map_err(|e| e.to_string())?, url))
}

/// Resolve the callback's host once through the URL guard, which judges every address,
/// and return exactly those addresses: the connection uses them, so DNS cannot answer
/// differently between the check and the connection.
fn checked_addresses(
    guard: &UrlGuard,
    url: &str,
    port: u16,
    host: &dyn policy::Host,
) -> Result<Vec<std::net::SocketAddr>, String> {
    let checked = guard.check(url, host)?;
    if checked.pinned.is_empty() {
        return Err(format!("{} did not resolve to any address", checked.host));
    }
    Ok(checked
        .pinned
        .into_iter()
        .map(|ip| std::net::SocketAddr::new(ip, port))
        .collect())
}

/// Record one delivery attempt: the delivery's new state and an audit event.
pub async fn record_attempt(tx: &mut Tx<'_>, a: &CallbackAttempt) -> Result<(), sqlx::Error> {
    let now = store::now_ms();
    let delivered = matches!(a.result, Ok(s) if (200..300).contains(&s));
    let (state, next) = match (delivered, a.retry_at_ms) {
        (true, _) => ("delivered", now),
        (false, Some(t)) => ("queued", t),
        (false, None) => ("failed", now),
    };
    let error = match &a.result {
        Ok(s) if !delivered => Some(format!("HTTP {s}")),
        Ok(_) => None,
        Err(e) => Some(e.clone()),
    };
    store::callbacks::update(tx.conn, &a.call_id, state, a.attempt, next, error.as_deref()).await?;
    let session = calls::get_in(tx.conn, &a.call_id).await?.map(|r| r.session_id);
    tx.audit(
        now,
        &NewEvent {
            kind: "callback_attempt",
            actor: "system".into(),
            call_id: Some(a.call_id.clone()),
            session_id: session,
            data: json!({
                "attempt": a.attempt, "delivered": delivered, "status": a.result.as_ref().ok(),
                "error": error, "state": state, "retry_at_ms": a.retry_at_ms.filter(|_| !delivered),
            }),
        },
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A resolver that rebinds: a public address first, loopback on every later lookup.
    #[derive(Default)]
    struct Rebinding(AtomicUsize);

    impl policy::Host for Rebinding {
        fn resolve_path(&self, _: &std::path::Path) -> Option<std::path::PathBuf> {
            None
        }
        fn tree_stats(&self, _: &std::path::Path, _: u64) -> Option<policy::TreeStats> {
            None
        }
        fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            Some(vec![if n == 0 { "93.184.215.14" } else { "127.0.0.1" }
                .parse()
                .unwrap()])
        }
    }

    fn guard() -> UrlGuard {
        crate::startup::callback_guard(true).unwrap()
    }

    #[test]
    fn the_addresses_checked_are_the_addresses_used_after_one_lookup() {
        let dns = Rebinding::default();
        let addrs = checked_addresses(&guard(), "https://hooks.example.com/x", 443, &dns).unwrap();
        assert_eq!(addrs, vec!["93.184.215.14:443".parse().unwrap()]);
        assert_eq!(dns.0.load(Ordering::SeqCst), 1, "one lookup, no second answer to trust");
        // Had the name been looked up again, the rebound answer is refused.
        assert!(checked_addresses(&guard(), "https://hooks.example.com/x", 443, &dns)
            .unwrap_err()
            .contains("127.0.0.1"));
    }
}
