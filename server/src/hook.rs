//! `airlock hook claude-code`: Claude Code's `PreToolUse` hook, answered by Airlock.
//!
//! Reads one hook event (JSON on stdin), proposes the tool call as the configured agent,
//! waits up to `wait` for a held call's decision, and prints the hook's answer: `allow`
//! (with `updatedInput` when what Airlock released differs from what Claude proposed, as
//! after a reviewer's modification), `deny` with why, or — when nobody decided in time —
//! `ask` (the held call is withdrawn from the queue first, so no reviewer later approves
//! what the person at the terminal already decided) or `deny`, as `on_timeout` says.
//! Anything that goes wrong answers `deny`: the hook fails closed.

use crate::agent_client::{outcome, stable_id, AgentClient, Outcome};
use crate::agents::SigningSecret;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Largest hook event read from stdin (a Write of a large file included).
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// What to answer when a held call is still undecided after the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnTimeout {
    /// Claude Code asks the person at the terminal (the held call is withdrawn).
    Ask,
    /// Refuse the call; the held call stays in the queue for a reviewer.
    Deny,
}

pub struct Settings {
    pub url: String,
    pub agent: String,
    pub secret: SigningSecret,
    pub wait: Duration,
    pub on_timeout: OnTimeout,
}

/// The part of a `PreToolUse` event Airlock reads.
#[derive(Debug, Deserialize)]
pub struct Event {
    pub session_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
}

/// The hook's answer, as Claude Code reads it on stdout.
pub fn answer(decision: &str, reason: &str, updated_input: Option<&Value>) -> Value {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let Some(v) = updated_input {
        out["updatedInput"] = v.clone();
    }
    json!({ "hookSpecificOutput": out })
}

fn deny(reason: impl AsRef<str>) -> Value {
    answer("deny", &format!("Airlock: {}", reason.as_ref()), None)
}

/// Airlock's name for a Claude Code tool. Built-in tools are CamelCase (`Bash`,
/// `WebFetch`), which a policy's allowlist never matches (names are lower case): they
/// become `claude_code.` + snake case (`claude_code.bash`, `claude_code.web_fetch`), tools
/// of their own that no other agent's `bash` or `web_fetch` stands in for. MCP tools
/// (`mcp__server__tool`) and anything else are sent as they are, for the allowlist to judge.
pub fn tool_name(claude: &str) -> String {
    // Only proper CamelCase words (`Web` `Fetch`: a capital, then lower case or digits), so
    // the mapping folds no case: `BASH` or `bAsh` are sent as they are, and denied.
    match claude_words(claude) {
        Some(words) => format!("claude_code.{}", words.join("_")),
        None => claude.to_string(),
    }
}

/// `WebFetch` → `["web", "fetch"]`: each word a capital followed by at least one lower-case
/// letter or digit; `None` for anything else.
fn claude_words(name: &str) -> Option<Vec<String>> {
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if words.last().is_some_and(|w| w.len() < 2) {
                return None;
            }
            words.push(c.to_ascii_lowercase().to_string());
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            words.last_mut()?.push(c);
        } else {
            return None;
        }
    }
    words.last().is_some_and(|w| w.len() >= 2).then_some(words)
}

/// The MCP server of an `mcp__server__tool` name.
fn mcp_server(tool: &str) -> Option<&str> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some(server)
}

/// The proposal for `event`, and the webhook-id that makes a repeated event (same
/// `tool_use_id`) the same call.
pub fn proposal(event: &Event) -> (Value, String) {
    let tool = tool_name(&event.tool_name);
    let mut context = serde_json::Map::new();
    context.insert("client".into(), json!("claude-code"));
    if let Some(cwd) = &event.cwd {
        context.insert("cwd".into(), json!(cwd));
    }
    if let Some(mode) = &event.permission_mode {
        context.insert("permission_mode".into(), json!(mode));
    }
    let arguments = if event.tool_input.is_null() {
        json!({})
    } else {
        event.tool_input.clone()
    };
    let mut body = json!({
        "session_id": event.session_id,
        "tool": tool,
        "arguments": arguments,
        "context": context,
    });
    if let Some(server) = mcp_server(&tool) {
        body["server"] = json!(server);
    }
    (body, stable_id("cc", event.tool_use_id.as_deref()))
}

/// The answer for a decided call, or `None` while it is pending: `updatedInput` whenever
/// what Airlock released differs from what Claude proposed.
pub fn decided(call: &Value, proposed: &Value) -> Option<Value> {
    match outcome(call) {
        Outcome::Held => None,
        Outcome::Run { arguments, why } => {
            let changed = arguments != *proposed;
            Some(answer(
                "allow",
                &format!("Airlock: {why}"),
                changed.then_some(&arguments),
            ))
        }
        Outcome::Refuse(why) => Some(deny(why)),
    }
}

/// Answer one hook event (its raw text): always an answer, never an error.
pub async fn run(settings: &Settings, input: &[u8]) -> Value {
    if input.len() > MAX_EVENT_BYTES {
        return deny(format!("the hook event is over {} MiB", MAX_EVENT_BYTES >> 20));
    }
    let event: Event = match serde_json::from_slice(input) {
        Ok(e) => e,
        Err(e) => return deny(format!("the hook event could not be read ({e})")),
    };
    if event.hook_event_name.as_deref().is_some_and(|n| n != "PreToolUse") {
        return deny(format!(
            "this hook answers PreToolUse events, not {}",
            event.hook_event_name.as_deref().unwrap_or_default()
        ));
    }
    match ask_airlock(settings, &event).await {
        Ok(a) => a,
        Err(e) => deny(e),
    }
}

async fn ask_airlock(settings: &Settings, event: &Event) -> Result<Value, String> {
    let c = AgentClient::new(&settings.url, &settings.agent, settings.secret.clone())?;
    let (body, id) = proposal(event);
    let proposed = body["arguments"].clone();
    let call = c.propose(&body, &id).await?;
    let call = c.wait_decided(call, Instant::now() + settings.wait, || ()).await?;
    if let Some(a) = decided(&call, &proposed) {
        return Ok(a);
    }
    let call_id = call["id"].as_str().unwrap_or("?").to_string();
    let waited = settings.wait.as_secs();
    match settings.on_timeout {
        OnTimeout::Deny => Ok(deny(format!(
            "call {call_id} is held for review and nobody decided within {waited} s; it stays in the queue"
        ))),
        // Withdraw it, unless a decision landed meanwhile (then that decision counts).
        OnTimeout::Ask => match c.cancel(&call_id).await {
            Ok(_) => Ok(answer(
                "ask",
                &format!(
                    "Airlock: call {call_id} was held for review and nobody decided within {waited} s; it was \
                     withdrawn from the queue, so you decide here"
                ),
                None,
            )),
            Err(_) => {
                let call = c.get(&call_id, 0).await?;
                Ok(decided(&call, &proposed).unwrap_or_else(|| deny(format!("call {call_id} could not be withdrawn"))))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_tools_get_their_own_names_and_others_are_sent_as_they_are() {
        for (claude, airlock) in [
            ("Bash", "claude_code.bash"),
            ("WebFetch", "claude_code.web_fetch"),
            ("NotebookEdit", "claude_code.notebook_edit"),
            ("MultiEdit", "claude_code.multi_edit"),
            ("Read", "claude_code.read"),
            ("bash", "bash"),
            ("mcp__github__create_issue", "mcp__github__create_issue"),
            ("mcp__Fs__read", "mcp__Fs__read"),
            ("Web Fetch", "Web Fetch"),
            ("", ""),
            // No case folding, no look-alikes: these stay as they are (and the allowlist,
            // which takes lower case only, denies them).
            ("BASH", "BASH"),
            ("bAsh", "bAsh"),
            ("WebFETCH", "WebFETCH"),
            ("B", "B"),
            ("Bash\u{200b}", "Bash\u{200b}"),
            ("\u{ff22}ash", "\u{ff22}ash"),
            ("Bash_", "Bash_"),
            ("Bash2", "claude_code.bash2"),
        ] {
            assert_eq!(tool_name(claude), airlock, "{claude}");
        }
        assert_eq!(mcp_server("mcp__github__create_issue"), Some("github"));
        assert_eq!(mcp_server("mcp____x"), None);
        assert_eq!(mcp_server("bash"), None);
    }

    #[test]
    fn a_repeated_event_is_the_same_proposal_under_the_same_id() {
        let e = |id: &str| Event {
            session_id: "s".into(),
            tool_name: "mcp__github__create_issue".into(),
            tool_input: json!({"title": "x"}),
            tool_use_id: Some(id.into()),
            cwd: Some("/srv/projects/shop".into()),
            hook_event_name: Some("PreToolUse".into()),
            permission_mode: Some("default".into()),
        };
        let (a, id_a) = proposal(&e("toolu_01/../ABC"));
        let (b, id_b) = proposal(&e("toolu_01/../ABC"));
        assert_eq!((a.to_string(), &id_a), (b.to_string(), &id_b));
        assert_eq!(id_a, "msg_cc_toolu_01ABC");
        assert_eq!(a["server"], "github");
        assert_eq!(a["context"]["cwd"], "/srv/projects/shop");
    }

    #[test]
    fn an_oversized_event_is_denied_before_anything_is_sent() {
        let settings = Settings {
            url: "http://127.0.0.1:9".into(),
            agent: "claude-code".into(),
            secret: SigningSecret::generate(),
            wait: Duration::from_secs(0),
            on_timeout: OnTimeout::Ask,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let a = rt.block_on(run(&settings, &vec![b' '; MAX_EVENT_BYTES + 1]));
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            a["hookSpecificOutput"]["permissionDecisionReason"],
            "Airlock: the hook event is over 4 MiB"
        );
    }

    #[test]
    fn released_arguments_that_differ_from_the_proposal_are_the_updated_input() {
        let proposed = json!({"command": "rm -rf build"});
        let call = json!({"id": "tc_1", "status": "modified", "decided_by": "user:alice",
                          "arguments": {"command": "rm -rf build/tmp"}});
        let a = decided(&call, &proposed).unwrap();
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(
            a["hookSpecificOutput"]["updatedInput"],
            json!({"command": "rm -rf build/tmp"})
        );
        let call = json!({"id": "tc_1", "status": "approved", "decided_by": "user:alice", "arguments": proposed});
        let a = decided(&call, &proposed).unwrap();
        assert!(a["hookSpecificOutput"].get("updatedInput").is_none());
        // Executable without arguments never allows.
        let call = json!({"id": "tc_1", "status": "allowed", "arguments": null});
        assert_eq!(
            decided(&call, &proposed).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert!(decided(&json!({"status": "pending"}), &proposed).is_none());
    }
}
