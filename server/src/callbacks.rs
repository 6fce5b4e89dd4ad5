//! Delivery of final decisions to agents' `callback_url`s.
//!
//! The ledger queues a delivery in the same transaction as the decision; this task
//! sends it, signed with the agent's current secret (Standard Webhooks headers), with
//! exponential backoff. Every attempt is audited through the ledger. Before each attempt
//! the host name is resolved and every address judged by the URL guard; the request is
//! then pinned to those addresses, so DNS cannot be re-bound between check and connect.

use crate::agents::{self, AgentId};
use crate::ingest::{signature, view};
use crate::ledger::{CallbackAttempt, Ledger};
use crate::store::{self, calls, Db};
use policy::guards::url::UrlGuard;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub struct Dispatcher {
    pub db: Db,
    pub key: agents::ServerKey,
    pub ledger: Ledger,
    pub wake: Arc<Notify>,
    /// Checks every resolved address (built with `resolve = true`).
    pub guard: Arc<UrlGuard>,
    pub allow_private: bool,
    pub max_attempts: i64,
    pub backoff_ms: i64,
}

impl Dispatcher {
    pub async fn run(self) {
        loop {
            let now = store::now_ms();
            match calls::due_callbacks(&self.db, now, 32).await {
                Ok(due) => {
                    for (id, attempts) in due {
                        self.attempt(&id, attempts + 1).await;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reading due callbacks failed"),
            }
            let next = calls::next_callback_at(&self.db).await.ok().flatten();
            let sleep = match next {
                Some(t) => Duration::from_millis((t - store::now_ms()).clamp(10, 60_000) as u64),
                None => Duration::from_secs(60),
            };
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(sleep) => {}
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
        let url = url::Url::parse(&url_text).map_err(|e| e.to_string())?;
        let host = url.host_str().ok_or("callback_url has no host")?.to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        // Resolve once, judge every address, then connect only to those addresses.
        let guard = self.guard.clone();
        let allow_private = self.allow_private;
        let target = url_text.clone();
        let addrs = tokio::task::spawn_blocking(move || -> Result<Vec<std::net::SocketAddr>, String> {
            use std::net::ToSocketAddrs;
            if !allow_private {
                guard.check(&target, &policy::LocalHost)?;
            }
            let host = host.trim_start_matches('[').trim_end_matches(']');
            (host, port)
                .to_socket_addrs()
                .map(|a| a.collect())
                .map_err(|e| format!("resolving {host}: {e}"))
        })
        .await
        .map_err(|e| e.to_string())??;
        let agent = AgentId::parse(&row.agent_id)?;
        let creds = agents::credentials(&self.db, &self.key, &agent)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the agent is gone")?;
        let secret = creds.secrets.first().ok_or("the agent has no valid secret")?;
        let body = serde_json::json!({"type": "tool_call.decided", "data": view::call_view(&row)}).to_string();
        let msg_id = format!("cb_{}_{}", row.id, row.decided_at_ms.unwrap_or(0));
        let ts = (store::now_ms() / 1000).to_string();
        let sig = signature::sign(secret, &msg_id, &ts, body.as_bytes());
        let mut builder = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("airlock/", env!("CARGO_PKG_VERSION")));
        if let Some(domain) = url.domain() {
            builder = builder.resolve_to_addrs(domain, &addrs);
        }
        let pinned = builder.build().map_err(|e| e.to_string())?;
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
