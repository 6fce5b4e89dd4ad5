//! `airlock mcp-proxy`: an MCP server on stdio in front of another one, for any MCP client.
//!
//! The client sees the downstream server's tools unchanged. Every `tools/call` is first
//! proposed to Airlock as `mcp__<server>__<tool>` (with `server` set, so approve-all per
//! MCP server works) and forwarded only once Airlock releases it, with the released
//! arguments (a reviewer's edits included). Refusals answer an MCP tool error whose text
//! says why; held calls wait, sending progress notifications when the client asked for
//! them, so it does not time out. How the forwarded call went is reported to Airlock.
//! Anything that keeps Airlock from answering refuses the call: the proxy fails closed.

use crate::agent_client::{fresh_id, outcome, AgentClient, Outcome};
use crate::agents::SigningSecret;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How often a waiting client hears that its call is still held.
const PROGRESS_EVERY: u64 = 10;

pub struct Settings {
    pub url: String,
    pub agent: String,
    pub secret: SigningSecret,
    /// The MCP server's name in Airlock's policy (`mcp__<server>__<tool>`).
    pub server: String,
    /// The Airlock session the calls belong to.
    pub session: String,
    /// Longest wait for a held call (then it is withdrawn); `None`: until it is decided or
    /// expires.
    pub wait: Option<Duration>,
    /// The command that starts the downstream MCP server.
    pub command: Vec<String>,
}

/// A server name a policy can spell (the allowlist's characters).
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.'))
}

struct Proxy {
    downstream: RunningService<RoleClient, ()>,
    airlock: AgentClient,
    server: String,
    session: String,
    wait: Option<Duration>,
    instructions: Option<String>,
}

fn refused(why: impl AsRef<str>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(format!("Airlock: {}", why.as_ref()))]).into()
}

impl Proxy {
    /// Propose, wait, and answer what the agent may do, or why not (already an MCP answer).
    async fn decide(
        &self,
        tool: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<(String, Value, String), CallToolResponse> {
        let body = json!({
            "session_id": self.session,
            "tool": format!("mcp__{}__{}", self.server, tool),
            "server": self.server,
            "arguments": arguments,
            "context": {"client": "mcp-proxy"},
        });
        let call = self.airlock.propose(&body, &fresh_id()).await.map_err(refused)?;
        let id = call["id"].as_str().unwrap_or_default().to_string();
        let call = tokio::select! {
            c = self.wait_for(call, context) => c.map_err(refused)?,
            _ = context.ct.cancelled() => {
                // The client gave up: nobody should approve what will never run.
                let _ = self.airlock.cancel(&id).await;
                return Err(refused(format!("the client cancelled the request; call {id} was withdrawn")));
            }
        };
        match outcome(&call) {
            Outcome::Run { arguments, why } => Ok((id, arguments, why)),
            Outcome::Refuse(why) => Err(refused(why)),
            Outcome::Held => {
                let waited = self.wait.map(|w| w.as_secs()).unwrap_or_default();
                let _ = self.airlock.cancel(&id).await;
                // A decision may have landed meanwhile: then it counts.
                if let Ok(call) = self.airlock.get(&id, 0).await {
                    if let Outcome::Run { arguments, why } = outcome(&call) {
                        return Ok((id, arguments, why));
                    }
                }
                Err(refused(format!(
                    "call {id} was held for review and nobody decided within {waited} s; it was withdrawn"
                )))
            }
        }
    }

    /// Long-poll until the call is decided (or the wait is over), telling the client.
    async fn wait_for(&self, mut call: Value, context: &RequestContext<RoleServer>) -> Result<Value, String> {
        let id = call["id"].as_str().unwrap_or_default().to_string();
        let until = self.wait.map(|w| Instant::now() + w);
        let token = context.meta.get_progress_token();
        let mut polls = 0u32;
        while outcome(&call) == Outcome::Held {
            let left = until.map_or(PROGRESS_EVERY, |u| {
                u.saturating_duration_since(Instant::now()).as_secs()
            });
            if left == 0 {
                break;
            }
            if let Some(token) = &token {
                polls += 1;
                let note = ProgressNotificationParam::new(token.clone(), polls as f64)
                    .with_message(format!("held for review in Airlock ({id}); waiting for a reviewer"));
                let _ = context.peer.notify_progress(note).await;
            }
            call = self.airlock.get(&id, left.min(PROGRESS_EVERY)).await?;
        }
        Ok(call)
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new(format!("airlock-mcp-proxy:{}", self.server), env!("CARGO_PKG_VERSION")),
        );
        if let Some(i) = &self.instructions {
            info = info.with_instructions(i.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .downstream
            .list_all_tools()
            .await
            .map_err(|e| ErrorData::internal_error(format!("the MCP server behind Airlock: {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let proposed = Value::Object(request.arguments.clone().unwrap_or_default());
        let (id, arguments, why) = match self.decide(&tool, &proposed, &context).await {
            Ok(run) => run,
            Err(answer) => return Ok(answer),
        };
        let Value::Object(arguments) = arguments else {
            return Ok(refused(format!("call {id} came without arguments to run")));
        };
        let started = Instant::now();
        let forwarded = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
        let result = self.downstream.call_tool(forwarded).await;
        // Only the outcome is reported: the result's content may hold anything.
        let (ok, summary) = match &result {
            Ok(r) if r.is_error != Some(true) => (true, format!("{tool}: done ({why})")),
            Ok(_) => (false, format!("{tool}: the MCP server answered an error")),
            Err(_) => (false, format!("{tool}: the MCP server did not answer")),
        };
        if let Err(e) = self.airlock.report(&id, ok, &summary, started.elapsed()).await {
            eprintln!("airlock mcp-proxy: reporting the result of {id}: {e}");
        }
        match result {
            Ok(r) => Ok(r.into()),
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "the MCP server behind Airlock failed: {e}"
            ))])
            .into()),
        }
    }
}

/// Start the downstream server, serve MCP on stdin/stdout until the client leaves.
pub async fn run(settings: Settings) -> Result<(), String> {
    let Some((program, args)) = settings.command.split_first() else {
        return Err("name the MCP server's command after --".into());
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {program}: {e}"))?;
    let downstream = ().serve(transport).await.map_err(|e| format!("the MCP server {program} did not start: {e}"))?;
    let instructions = downstream.peer_info().and_then(|i| i.instructions.clone());
    let proxy = Proxy {
        downstream,
        airlock: AgentClient::new(&settings.url, &settings.agent, settings.secret)?,
        server: settings.server,
        session: settings.session,
        wait: settings.wait,
        instructions,
    };
    let service = proxy
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("serving MCP on stdio: {e}"))?;
    service.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn server_names_are_what_a_policy_can_spell() {
        for ok in ["fs", "chrome-devtools", "github_2", "a.b"] {
            assert!(super::valid_server_name(ok), "{ok}");
        }
        for bad in ["", "Fs", "my server", "fs__x/", "ｆｓ"] {
            assert!(!super::valid_server_name(bad), "{bad}");
        }
    }
}
