//! The policy file as written by people (TOML). Every table refuses unknown keys so a
//! typo (`aproval = "ask"`) is an error, not a silently ignored setting.
//! `load.rs` turns this into the compiled [`crate::Policy`].

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    pub policy: PolicyMeta,
    #[serde(default)]
    pub fences: BTreeMap<String, FenceConfig>,
    #[serde(default)]
    pub url_guards: BTreeMap<String, UrlGuardConfig>,
    #[serde(default)]
    pub command_guards: BTreeMap<String, CommandGuardConfig>,
    /// Budgets that apply to every call, whatever the tool.
    #[serde(default)]
    pub budgets: Vec<BudgetConfig>,
    pub tools: BTreeMap<String, ToolConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyMeta {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// How long a pending call waits for a human, e.g. "15m".
    #[serde(default = "default_expiry")]
    pub default_expiry: String,
    #[serde(default = "default_max_argument_bytes")]
    pub max_argument_bytes: usize,
    #[serde(default = "default_max_argument_depth")]
    pub max_argument_depth: usize,
}

fn default_expiry() -> String {
    "15m".into()
}
fn default_max_argument_bytes() -> usize {
    1024 * 1024
}
fn default_max_argument_depth() -> usize {
    32
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FenceConfig {
    /// Absolute directories inside which paths are allowed.
    pub roots: Vec<String>,
    /// Relative paths are joined to this directory; without it they are denied.
    pub relative_base: Option<String>,
    /// Whether a root itself may be named (false: `rm` of the root is never possible).
    #[serde(default = "yes")]
    pub allow_root: bool,
    /// Deny any non-ASCII character in paths.
    #[serde(default)]
    pub ascii_only: bool,
    /// Allow `*`, `?`, `[` in paths (never by default: a wildcard names unknown files).
    #[serde(default)]
    pub allow_wildcards: bool,
    /// Resolve symlinks (realpath) on this host before the containment check.
    #[serde(default = "yes")]
    pub resolve_symlinks: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlGuardConfig {
    #[serde(default = "default_schemes")]
    pub schemes: Vec<String>,
    /// Exact host names or `*.suffix` patterns that are always denied.
    #[serde(default)]
    pub deny_hosts: Vec<String>,
    /// When non-empty, only these hosts (exact or `*.suffix`) are allowed.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// When non-empty, only these ports are allowed.
    #[serde(default)]
    pub ports: Vec<u16>,
    /// Resolve host names on this host and judge every address (the executor must pin them).
    #[serde(default)]
    pub resolve: bool,
}

fn default_schemes() -> Vec<String> {
    vec!["http".into(), "https".into()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandGuardConfig {
    /// What to do with a command the guard cannot parse or understand.
    #[serde(default)]
    pub on_unknown: OnUnknown,
    /// Extra command names that are always denied.
    #[serde(default)]
    pub deny_commands: Vec<String>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnUnknown {
    /// Hold for a human (never auto-allow).
    #[default]
    Ask,
    Deny,
}

#[derive(Debug, Deserialize, serde::Serialize, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    #[default]
    Low,
    Medium,
    High,
    Critical,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }
}

impl TryFrom<String> for Risk {
    type Error = String;
    /// Read back a stored name (`as_str`).
    fn try_from(s: String) -> Result<Risk, String> {
        [Risk::Low, Risk::Medium, Risk::High, Risk::Critical]
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown risk {s:?}"))
    }
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    #[default]
    Auto,
    Ask,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub risk: Risk,
    /// Irreversible effects (deletion, payments, messages): marked in the dashboard.
    #[serde(default)]
    pub destructive: bool,
    /// MCP server this tool belongs to; a call naming another server is denied.
    pub server: Option<String>,
    /// JSON Schema (2020-12) of the arguments. `additionalProperties` defaults to false.
    pub arguments: toml::Value,
    #[serde(default)]
    pub approval: Approval,
    /// Distinct approvers needed when the tool asks.
    #[serde(default = "one")]
    pub approvers: u8,
    /// Overrides `policy.default_expiry`.
    pub expiry: Option<String>,
    /// May an on-call emergency override release this tool's held calls?
    #[serde(default = "yes")]
    pub break_glass: bool,
    /// May reviewers approve-all this tool (per session) or its server? Defaults to
    /// yes, except for destructive tools, which must say `grantable = true` explicitly.
    pub grantable: Option<bool>,
    #[serde(default)]
    pub path_guards: Vec<PathGuardUse>,
    #[serde(default)]
    pub command_guards: Vec<CommandGuardUse>,
    #[serde(default)]
    pub url_guards: Vec<UrlGuardUse>,
    #[serde(default)]
    pub budgets: Vec<BudgetConfig>,
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

fn one() -> u8 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathGuardUse {
    pub fence: String,
    /// Argument names holding a path or an array of paths.
    pub args: Vec<String>,
    /// Deny when the named paths hold more files than this (needs the root on this host).
    pub max_files: Option<u64>,
    #[serde(default)]
    pub shadow: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandGuardUse {
    pub guard: String,
    pub args: Vec<String>,
    /// Argument name holding the command's working directory (relative paths in the
    /// command are resolved against it).
    pub cwd: Option<String>,
    #[serde(default)]
    pub shadow: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlGuardUse {
    pub guard: String,
    pub args: Vec<String>,
    #[serde(default)]
    pub shadow: bool,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// At most `limit` calls per scope.
    Count,
    /// GCRA rate limit: `limit` calls per `window`, as a smooth rate with that burst.
    Rate,
    /// The sum of a numeric argument per scope stays within `limit`.
    Amount,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BudgetScope {
    /// The agent's turn (`turn_id`; the session when the agent sends none).
    Turn,
    Session,
    /// The UTC calendar day.
    Day,
    /// Everything, for ever (use with `rate`).
    Global,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum BudgetCounts {
    /// Every call that passes the budget (allowed or held).
    #[default]
    Accepted,
    /// Only calls the policy allowed without a human (auto-approval quotas).
    AutoAllowed,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnExceed {
    #[default]
    Deny,
    Ask,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub id: String,
    pub kind: BudgetKind,
    pub scope: BudgetScope,
    pub limit: f64,
    /// For `rate`: the window the limit refers to, e.g. "1m".
    pub window: Option<String>,
    /// For `amount`: the numeric argument that is summed.
    pub field: Option<String>,
    #[serde(default)]
    pub counts: BudgetCounts,
    #[serde(default)]
    pub on_exceed: OnExceed,
    #[serde(default)]
    pub shadow: bool,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    Ask,
    Deny,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub id: String,
    /// Condition on `args.*` and `context.*`, e.g. `args.amount > 5000`.
    pub when: String,
    pub action: RuleAction,
    /// Shown to reviewers and returned to the agent; defaults to the condition.
    pub reason: Option<String>,
    /// Distinct approvers for `ask` (defaults to the tool's).
    pub approvers: Option<u8>,
    /// False: approve-all grants cannot release calls this rule holds.
    #[serde(default = "yes")]
    pub grantable: bool,
    /// Evaluate and record, but do not enforce.
    #[serde(default)]
    pub shadow: bool,
}
