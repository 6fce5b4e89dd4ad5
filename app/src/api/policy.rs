//! The policy page's types: checking and applying a policy, its history, and replays of
//! recorded calls under a proposed one.

use super::Facet;
use serde::{Deserialize, Serialize};

/// One problem of a policy that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyProblem {
    /// The line it is about (1-based), when it can be told.
    pub line: Option<u32>,
    /// `line L, column C`, or the key path (`tools.write_file.rules[0].when`).
    pub location: String,
    pub message: String,
    /// The text of that line.
    pub text: Option<String>,
}

/// What checking, applying or rolling back a policy answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyCheck {
    pub ok: bool,
    pub message: String,
    pub problems: Vec<PolicyProblem>,
    /// The version the text compiles to.
    pub version: Option<String>,
}

/// One change of the policy in force, with what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChangeView {
    pub id: i64,
    pub version: String,
    pub name: Option<String>,
    pub previous: Option<String>,
    /// `user:NAME`, `cli:NAME`, `system`, `system:signal`.
    pub actor: String,
    /// `start`, `cli`, `signal`, `page`, `rollback`.
    pub via: String,
    pub note: Option<String>,
    pub at_ms: i64,
    /// The text's changes from the version before: (`-`, `+` or ` `, line). Empty when
    /// either text was not kept.
    pub diff: Vec<(char, String)>,
    /// The version's text is kept: it can be rolled back to.
    pub kept: bool,
}

/// The policy page: what is in force, its text, and its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyPage {
    pub name: String,
    pub version: String,
    pub source: String,
    /// The file a change also writes (so a restart starts with it).
    pub file: String,
    pub changes: Vec<PolicyChangeView>,
    pub now_ms: i64,
}

/// How many recorded calls went from one decision to another under the proposed policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayShift {
    pub from: String,
    pub to: String,
    pub count: u64,
}

/// A recorded call whose decision would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayExample {
    pub call_id: String,
    pub at_ms: i64,
    pub agent: String,
    pub tool: String,
    pub from: String,
    pub to: String,
    /// Under the proposed policy: the layer and rule that decided, and why.
    pub layer: Option<String>,
    pub rule: Option<String>,
    pub reason: String,
}

/// What a proposed policy would have done to the recorded calls of a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    pub proposed_name: String,
    pub proposed_version: String,
    pub since_ms: i64,
    pub until_ms: i64,
    pub agent: String,
    /// Calls re-judged.
    pub replayed: u64,
    /// Calls whose decision (allowed, denied, held) would change.
    pub changed: u64,
    /// Calls with the same decision for another layer or rule.
    pub reasons_changed: u64,
    pub shifts: Vec<ReplayShift>,
    /// Changed calls per tool, per layer and per rule of the proposed policy.
    pub tools: Vec<Facet>,
    pub layers: Vec<Facet>,
    pub rules: Vec<Facet>,
    pub examples: Vec<ReplayExample>,
    /// Calls judged on their redacted arguments (the raw ones were past retention).
    pub redacted_only: u64,
    /// Calls for which the proposed policy asked the host something not recorded with them
    /// (judged lexically, as with any unknown answer).
    pub without_facts: u64,
    pub elapsed_ms: u64,
}
