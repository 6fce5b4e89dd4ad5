//! The body of `POST /api/v1/tool-calls`, parsed at the edge into checked fields.

use serde_json::{Map, Value};
use utoipa::ToSchema;

/// Longest accepted identifier-like field (session, trace, tool, server, turn, user).
pub const MAX_ID: usize = 200;
/// Longest accepted free text (reason, plan).
pub const MAX_TEXT: usize = 16 * 1024;

/// A proposed tool call as the agent sent it, after validation: the body of
/// `POST /api/v1/tool-calls`. This struct is also the request's OpenAPI schema; `from_json`
/// is its parser (strict, with a stable code per problem).
#[derive(Debug, Clone, PartialEq, ToSchema)]
#[schema(as = ToolCallRequest, example = json!({
    "session_id": "s-42", "trace_id": "t-9f1c", "tool": "move_to_trash", "server": "filesystem",
    "arguments": {"paths": ["/data/shared/uploads/2024/05/export.csv"]},
    "reason": "user asked to clean last week's exports", "plan": "1. list dir 2. trash exports",
    "on_behalf_of": "user-17", "context": {"trust": "isolated"},
    "callback_url": "https://agent.example/hooks/airlock"
}))]
pub struct Proposal {
    /// The agent conversation or run (1–200 characters).
    pub session_id: String,
    /// Distributed trace id.
    pub trace_id: Option<String>,
    /// The agent's turn within the session (per-turn budgets count by it).
    pub turn_id: Option<String>,
    /// Tool name, matched exactly against the policy's allowlist.
    pub tool: String,
    /// MCP server the tool belongs to.
    pub server: Option<String>,
    /// The tool's arguments (a JSON object; validated strictly against the tool's schema).
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// Why the agent wants this (audit only).
    pub reason: Option<String>,
    /// The agent's plan text (audit and review only).
    pub plan: Option<String>,
    /// The end user the agent acts for.
    pub on_behalf_of: Option<String>,
    /// Context the policy may use; a change of `context.trust` clears approve-all grants.
    /// `Value::Null` when absent.
    #[schema(value_type = Option<Object>)]
    pub context: Value,
    /// Public http(s) URL that receives the final decision (signed, retried).
    pub callback_url: Option<String>,
}

/// A field-level problem: (code, message). Codes are part of the agent API.
pub type Invalid = (&'static str, String);

pub const FIELDS: &[&str] = &[
    "session_id",
    "trace_id",
    "turn_id",
    "tool",
    "server",
    "arguments",
    "reason",
    "plan",
    "on_behalf_of",
    "context",
    "callback_url",
];

impl Proposal {
    /// The call as the policy engine sees it, proposed by `agent`.
    pub fn call<'a>(&'a self, agent: &'a str) -> policy::Call<'a> {
        policy::Call {
            agent,
            tool: &self.tool,
            server: self.server.as_deref(),
            session_id: &self.session_id,
            turn_id: self.turn_id.as_deref(),
            arguments: &self.arguments,
            context: &self.context,
        }
    }

    pub fn from_json(v: Value) -> Result<Proposal, Invalid> {
        let Value::Object(mut m) = v else {
            return Err(("invalid_body", "the body must be a JSON object".into()));
        };
        if let Some(k) = m.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(("unknown_field", format!("unknown field \"{k}\"")));
        }
        let session_id = id_field(&mut m, "session_id")?.ok_or(missing("session_id"))?;
        let tool = id_field(&mut m, "tool")?.ok_or(missing("tool"))?;
        let arguments = match m.remove("arguments") {
            Some(a @ Value::Object(_)) => a,
            Some(_) => return Err(("invalid_field", "arguments must be a JSON object".into())),
            None => return Err(missing("arguments")),
        };
        let context = match m.remove("context") {
            None | Some(Value::Null) => Value::Null,
            Some(c @ Value::Object(_)) => c,
            Some(_) => return Err(("invalid_field", "context must be a JSON object".into())),
        };
        Ok(Proposal {
            session_id,
            trace_id: id_field(&mut m, "trace_id")?,
            turn_id: id_field(&mut m, "turn_id")?,
            tool,
            server: id_field(&mut m, "server")?,
            arguments,
            reason: text_field(&mut m, "reason")?,
            plan: text_field(&mut m, "plan")?,
            on_behalf_of: id_field(&mut m, "on_behalf_of")?,
            context,
            callback_url: text_field(&mut m, "callback_url")?,
        })
    }
}

fn missing(field: &str) -> Invalid {
    ("missing_field", format!("{field} is required"))
}

fn string_field(m: &mut Map<String, Value>, field: &str, max: usize) -> Result<Option<String>, Invalid> {
    match m.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            if s.len() > max {
                return Err(("invalid_field", format!("{field} is longer than {max} bytes")));
            }
            Ok(Some(s))
        }
        Some(_) => Err(("invalid_field", format!("{field} must be a string"))),
    }
}

/// Identifiers: non-blank, bounded, no control characters.
fn id_field(m: &mut Map<String, Value>, field: &str) -> Result<Option<String>, Invalid> {
    let Some(s) = string_field(m, field, MAX_ID)? else {
        return Ok(None);
    };
    if s.trim().is_empty() {
        return Err(("invalid_field", format!("{field} must not be blank")));
    }
    if s.chars().any(char::is_control) {
        return Err(("invalid_field", format!("{field} must not contain control characters")));
    }
    Ok(Some(s))
}

fn text_field(m: &mut Map<String, Value>, field: &str) -> Result<Option<String>, Invalid> {
    string_field(m, field, MAX_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_proposal_parses() {
        let p = Proposal::from_json(json!({
            "session_id": "s-42", "trace_id": "t-1", "tool": "move_to_trash", "server": "filesystem",
            "arguments": {"paths": ["/data/shared/uploads/a.csv"]}, "reason": "cleanup", "plan": "1. 2.",
            "on_behalf_of": "user-17", "context": {"trust": "isolated"},
            "callback_url": "https://agent.example/hooks"
        }))
        .unwrap();
        assert_eq!(p.tool, "move_to_trash");
        assert_eq!(p.context["trust"], "isolated");
        assert_eq!(p.callback_url.as_deref(), Some("https://agent.example/hooks"));
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let cases = [
            (json!({"tool": "x", "arguments": {}}), "missing_field", "session_id"),
            (json!({"session_id": "s", "arguments": {}}), "missing_field", "tool"),
            (json!({"session_id": "s", "tool": "x"}), "missing_field", "arguments"),
            (
                json!({"session_id": "s", "tool": "x", "arguments": []}),
                "invalid_field",
                "arguments",
            ),
            (
                json!({"session_id": 5, "tool": "x", "arguments": {}}),
                "invalid_field",
                "session_id",
            ),
            (
                json!({"session_id": " ", "tool": "x", "arguments": {}}),
                "invalid_field",
                "session_id",
            ),
            (
                json!({"session_id": "s\n", "tool": "x", "arguments": {}}),
                "invalid_field",
                "session_id",
            ),
            (
                json!({"session_id": "s", "tool": "x", "arguments": {}, "context": "x"}),
                "invalid_field",
                "context",
            ),
            (
                json!({"session_id": "s", "tool": "x", "arguments": {}, "tools": "y"}),
                "unknown_field",
                "tools",
            ),
            (json!(["not", "an", "object"]), "invalid_body", "object"),
        ];
        for (body, code, word) in cases {
            let (c, msg) = Proposal::from_json(body.clone()).unwrap_err();
            assert_eq!(c, code, "{body}");
            assert!(msg.contains(word), "{msg}");
        }
    }
}
