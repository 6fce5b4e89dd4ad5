//! What the engine is asked and what it answers.

use crate::config::Risk;
use crate::host::TreeStats;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;

/// One proposed tool call, as the engine sees it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The authenticated agent that proposes it: session and turn budgets are its own.
    pub agent: &'a str,
    pub tool: &'a str,
    /// MCP server the agent says the tool belongs to.
    pub server: Option<&'a str>,
    pub session_id: &'a str,
    /// The agent's turn within the session; budgets `per turn` fall back to the session.
    pub turn_id: Option<&'a str>,
    pub arguments: &'a Value,
    /// Free-form context from the agent (`Value::Null` when absent).
    pub context: &'a Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Allowed,
    Denied,
    Pending,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Allowed => "allowed",
            Status::Denied => "denied",
            Status::Pending => "pending",
        }
    }
}

/// The layer that stopped or held a call. The names are part of the agent API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Allowlist,
    Schema,
    PathGuard,
    CommandGuard,
    UrlGuard,
    Budget,
    Rule,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Allowlist => "allowlist",
            Layer::Schema => "schema",
            Layer::PathGuard => "path_guard",
            Layer::CommandGuard => "command_guard",
            Layer::UrlGuard => "url_guard",
            Layer::Budget => "budget",
            Layer::Rule => "rule",
        }
    }
}

impl TryFrom<String> for Layer {
    type Error = String;
    /// Read back a stored name (`as_str`).
    fn try_from(s: String) -> Result<Layer, String> {
        use Layer::*;
        [Allowlist, Schema, PathGuard, CommandGuard, UrlGuard, Budget, Rule]
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown layer {s:?}"))
    }
}

/// Who made the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Policy,
    Grant,
}

/// What a rule in shadow mode would have done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShadowFinding {
    pub layer: Layer,
    pub rule: String,
    pub would: Status,
    pub reason: String,
}

/// A change to budget state that the caller applies once it stores the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageDelta {
    pub budget: String,
    pub scope: String,
    pub change: UsageChange,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageChange {
    /// One more call.
    Count,
    /// One call fewer: a reviewer's modification replaced the call that was counted.
    Uncount,
    /// Add this amount.
    Amount(f64),
    /// New GCRA theoretical arrival time (unix ms).
    Tat(i64),
}

/// What a call would affect (file-moving tools), for the review screen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Impact {
    pub paths: Vec<String>,
    /// Present when the paths are on this host.
    pub stats: Option<TreeStats>,
}

/// A URL the URL guard passed with the addresses it judged: the executor must fetch `url`
/// and connect only to `addresses` on `port` (no second DNS lookup, which could be re-bound).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pinned {
    /// The normalised (WHATWG) URL that was judged.
    pub url: String,
    pub host: String,
    pub port: u16,
    pub addresses: Vec<IpAddr>,
}

/// An approve-all grant, as the caller passes it in (already filtered to the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub id: String,
    pub scope: GrantScope,
    /// Unix ms after which the grant no longer applies.
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum GrantScope {
    Tool(String),
    Server(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub status: Status,
    pub blocked_by: Option<Layer>,
    pub rule: Option<String>,
    pub reason: String,
    /// The normalised tool name when it is on the allowlist.
    pub tool: Option<String>,
    pub risk: Risk,
    pub destructive: bool,
    pub approvers_required: u8,
    pub expires_at_ms: Option<i64>,
    /// May an on-call override release this call?
    pub break_glass: bool,
    /// May reviewers answer this call with an approve-all grant?
    pub grantable: bool,
    /// Why not, for a held call that is not grantable (shown on the review page).
    pub not_grantable: Option<String>,
    pub policy_version: Arc<str>,
    pub source: Source,
    pub grant_id: Option<String>,
    pub shadow: Vec<ShadowFinding>,
    pub usage: Vec<UsageDelta>,
    pub impact: Option<Impact>,
    pub pinned: Vec<Pinned>,
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        self.status == Status::Allowed
    }
}
