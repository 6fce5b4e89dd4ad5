//! A signed client of Airlock's agent API, for what the `airlock` binary runs on an agent's
//! side (the Claude Code hook, the MCP proxy), and what a call's state means to that side:
//! run it (with which arguments), refuse it (why), or keep waiting.

use crate::agents::SigningSecret;
use crate::ingest::signature;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The server's longest long-poll.
pub const MAX_POLL_SECONDS: u64 = 60;
const PROPOSE: &str = "/api/v1/tool-calls";

pub struct AgentClient {
    http: reqwest::Client,
    base: String,
    agent: String,
    secret: SigningSecret,
}

/// What the agent's side may do with a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Run it with exactly these arguments; `why` names who or what released it.
    Run { arguments: Value, why: String },
    /// Never run it; why not.
    Refuse(String),
    /// Held for a person.
    Held,
}

/// What a call's state (as the API answers it) means to the agent.
pub fn outcome(call: &Value) -> Outcome {
    let status = call["status"].as_str().unwrap_or("");
    let by = call["decided_by"].as_str().unwrap_or("a reviewer");
    let id = call["id"].as_str().unwrap_or("?");
    let reason = call["reason"].as_str().unwrap_or("");
    match status {
        "pending" => Outcome::Held,
        "allowed" | "approved" | "modified" | "overridden" => {
            let arguments = call["arguments"].clone();
            if !arguments.is_object() {
                return Outcome::Refuse(format!("{status} call {id} came without arguments to run"));
            }
            let why = match status {
                "allowed" if call["source"] == "grant" => format!("allowed by an approve-all grant ({id})"),
                "allowed" => format!("allowed by policy ({id})"),
                "approved" => format!("approved by {by} ({id})"),
                "modified" => format!("modified and approved by {by} ({id}); run the reviewer's version"),
                _ => format!("released by {by} under break-glass ({id})"),
            };
            Outcome::Run { arguments, why }
        }
        "denied" => {
            let layer = call["blocked_by"].as_str().unwrap_or("policy");
            Outcome::Refuse(format!("denied by the {layer} layer: {reason}"))
        }
        "rejected" => {
            let comment = call["comment"].as_str().unwrap_or(reason);
            Outcome::Refuse(format!("rejected by {by}: {comment}"))
        }
        "expired" => Outcome::Refuse(format!("nobody decided call {id} in time; it expired")),
        "skipped" => Outcome::Refuse(format!("skipped by {by}; propose it again if it is still needed")),
        "cancelled" => Outcome::Refuse(format!("call {id} was cancelled")),
        other => Outcome::Refuse(format!("call {id} ended as {other:?}")),
    }
}

impl AgentClient {
    pub fn new(url: &str, agent: &str, secret: SigningSecret) -> Result<AgentClient, String> {
        Ok(AgentClient {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(MAX_POLL_SECONDS + 15))
                .build()
                .map_err(|e| e.to_string())?,
            base: url.trim_end_matches('/').to_string(),
            agent: agent.to_string(),
            secret,
        })
    }

    /// Propose a call under `webhook_id` (the same id and body again is the same call).
    pub async fn propose(&self, body: &Value, webhook_id: &str) -> Result<Value, String> {
        self.send(reqwest::Method::POST, PROPOSE, &body.to_string(), webhook_id)
            .await
    }

    /// The call, waiting up to `wait` seconds (at most a minute) for its decision.
    pub async fn get(&self, id: &str, wait: u64) -> Result<Value, String> {
        let path = format!("{PROPOSE}/{id}?wait={}", wait.min(MAX_POLL_SECONDS));
        self.send(reqwest::Method::GET, &path, "", &fresh_id()).await
    }

    pub async fn cancel(&self, id: &str) -> Result<Value, String> {
        self.send(
            reqwest::Method::POST,
            &format!("{PROPOSE}/{id}/cancel"),
            "",
            &fresh_id(),
        )
        .await
    }

    /// Report how running the call went: `ok` or `error`, with a short summary.
    pub async fn report(&self, id: &str, ok: bool, summary: &str, took: Duration) -> Result<Value, String> {
        let body = json!({
            "outcome": if ok { "ok" } else { "error" },
            "summary": summary.chars().take(500).collect::<String>(),
            "duration_ms": took.as_millis() as u64,
        });
        let path = format!("{PROPOSE}/{id}/result");
        self.send(reqwest::Method::POST, &path, &body.to_string(), &fresh_id())
            .await
    }

    /// Wait for `call` to be decided, until `until`; `tick` runs before each long-poll
    /// (for progress notices). Answers the call as it then stands.
    pub async fn wait_decided(&self, mut call: Value, until: Instant, mut tick: impl FnMut()) -> Result<Value, String> {
        let id = call["id"]
            .as_str()
            .ok_or("Airlock answered without a call id")?
            .to_string();
        while outcome(&call) == Outcome::Held {
            let left = until.saturating_duration_since(Instant::now()).as_secs();
            if left == 0 {
                break;
            }
            tick();
            // Short polls when someone is told about progress, so they hear every ~10 s.
            call = self.get(&id, left.min(10)).await?;
        }
        Ok(call)
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: &str, id: &str) -> Result<Value, String> {
        let payload = if path == PROPOSE && method == reqwest::Method::POST {
            body.as_bytes().to_vec()
        } else {
            signature::bound_payload(method.as_str(), path, body.as_bytes())
        };
        let req = self.http.request(method, format!("{}{}", self.base, path));
        let r = crate::demo_agent::signed(req, &self.agent, &self.secret, id, &payload)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("Airlock at {} did not answer ({})", self.base, e.without_url()))?;
        let status = r.status();
        let v: Value = r
            .json()
            .await
            .map_err(|_| format!("Airlock answered {status} without JSON"))?;
        if !status.is_success() {
            let code = v["error"]["code"].as_str().unwrap_or("error");
            let message = v["error"]["message"].as_str().unwrap_or("");
            return Err(format!("Airlock refused the request ({status} {code}): {message}"));
        }
        Ok(v)
    }
}

/// A webhook-id for a request that must never repeat (reads, cancels, results).
pub fn fresh_id() -> String {
    format!("msg_{}", uuid::Uuid::now_v7().simple())
}

/// A webhook-id built from the caller's own id for a call (Claude Code's `tool_use_id`, an
/// MCP request id), so a repeated request is the same call; a fresh one without it.
pub fn stable_id(prefix: &str, key: Option<&str>) -> String {
    let clean: String = key
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(180)
        .collect();
    if clean.is_empty() {
        fresh_id()
    } else {
        format!("msg_{prefix}_{clean}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_executable_calls_with_arguments_run() {
        let call = json!({"id": "tc_1", "status": "modified", "decided_by": "user:alice", "arguments": {"a": 1}});
        assert_eq!(
            outcome(&call),
            Outcome::Run {
                arguments: json!({"a": 1}),
                why: "modified and approved by user:alice (tc_1); run the reviewer's version".into()
            }
        );
        let call = json!({"id": "tc_1", "status": "allowed", "arguments": null});
        assert!(matches!(outcome(&call), Outcome::Refuse(_)));
        assert_eq!(outcome(&json!({"status": "pending"})), Outcome::Held);
        let call = json!({"id": "tc_1", "status": "rejected", "decided_by": "user:bob", "comment": "no"});
        assert_eq!(outcome(&call), Outcome::Refuse("rejected by user:bob: no".into()));
        assert!(matches!(outcome(&json!({"status": "weird"})), Outcome::Refuse(_)));
    }

    #[test]
    fn stable_ids_keep_only_safe_characters() {
        assert_eq!(stable_id("cc", Some("toolu_01/../ABC")), "msg_cc_toolu_01ABC");
        assert!(!stable_id("cc", Some("/../")).starts_with("msg_cc"));
        assert_ne!(stable_id("cc", None), stable_id("cc", None));
    }
}
