//! `policy test`: run example calls against a policy and compare with expectations.
//!
//! A cases file (TOML) lists calls in order; they share budget state, so limits such
//! as "2 emails per turn" can be tested by sending three. The host is [`PureHost`]:
//! results do not depend on the machine the test runs on.

use crate::budget::MemoryUsage;
use crate::decision::{Call, Grant, GrantScope, Layer, Status};
use crate::engine::{Inputs, Policy};
use crate::host::PureHost;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesFile {
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub tool: String,
    pub server: Option<String>,
    #[serde(default = "empty_object")]
    pub arguments: toml::Value,
    pub context: Option<toml::Value>,
    /// The agent that proposes the call (budgets per session and turn are per agent).
    #[serde(default = "default_agent")]
    pub agent: String,
    #[serde(default = "default_session")]
    pub session: String,
    pub turn: Option<String>,
    /// Milliseconds after the start of the run (non-decreasing).
    #[serde(default)]
    pub at_ms: i64,
    /// Active grants, written `tool:<name>` or `server:<name>`.
    #[serde(default)]
    pub grants: Vec<String>,
    pub expect: Status,
    pub blocked_by: Option<Layer>,
    pub rule: Option<String>,
    pub approvers: Option<u8>,
    /// A substring the reason must contain.
    pub reason_contains: Option<String>,
    /// The shadow rules that must have fired, exactly (ids); absent: not checked.
    pub shadow: Option<Vec<String>>,
}

fn empty_object() -> toml::Value {
    toml::Value::Table(Default::default())
}
fn default_agent() -> String {
    "case-agent".into()
}
fn default_session() -> String {
    "case-session".into()
}

#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub tool: String,
    pub expected: String,
    pub got: String,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub results: Vec<CaseResult>,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.ok).count()
    }
    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// A plain-text table, one line per case, then a summary line.
    pub fn render(&self) -> String {
        let w_name = self
            .results
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 48);
        let w_tool = self
            .results
            .iter()
            .map(|r| r.tool.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 36);
        let w_exp = self.results.iter().map(|r| r.expected.len()).max().unwrap_or(8).max(8);
        let mut out = format!(
            "{:<4} {:<w_name$} {:<w_tool$} {:<w_exp$} {}\n",
            "", "case", "tool", "expected", "got"
        );
        for r in &self.results {
            let name: String = r.name.chars().take(w_name).collect();
            let tool: String = r.tool.chars().take(w_tool).collect();
            out.push_str(&format!(
                "{:<4} {:<w_name$} {:<w_tool$} {:<w_exp$} {}{}\n",
                if r.ok { "ok" } else { "FAIL" },
                name,
                tool,
                r.expected,
                r.got,
                if r.ok || r.detail.is_empty() {
                    String::new()
                } else {
                    format!("  <- {}", r.detail)
                }
            ));
        }
        out.push_str(&format!("{} passed, {} failed\n", self.passed(), self.failed()));
        out
    }
}

fn to_json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn describe(status: Status, layer: Option<Layer>, rule: Option<&str>, approvers: Option<u8>) -> String {
    let mut s = status.as_str().to_string();
    if let Some(l) = layer {
        s.push_str(&format!(" by {}", l.as_str()));
    }
    if let Some(r) = rule {
        s.push_str(&format!(" ({r})"));
    }
    if let Some(a) = approvers.filter(|a| *a > 1) {
        s.push_str(&format!(" x{a}"));
    }
    s
}

/// Parse a cases file and run it. `Err` is a problem with the file itself.
pub fn run(policy: &Policy, cases_src: &str) -> Result<Report, String> {
    let file: CasesFile = toml::from_str(cases_src).map_err(|e| e.to_string())?;
    let mut usage = MemoryUsage::default();
    let start = 1_767_225_600_000; // 2026-01-01T00:00:00Z, fixed so runs are repeatable
    let mut last_at = 0;
    let mut results = Vec::new();
    for (i, c) in file.cases.iter().enumerate() {
        if c.at_ms < last_at {
            return Err(format!("case {} ({}): at_ms goes backwards", i + 1, c.name));
        }
        last_at = c.at_ms;
        let mut grants = Vec::new();
        for g in &c.grants {
            let scope = match g.split_once(':') {
                Some(("tool", n)) => GrantScope::Tool(n.to_string()),
                Some(("server", n)) => GrantScope::Server(n.to_string()),
                _ => {
                    return Err(format!(
                        "case {} ({}): grant {g:?} must be tool:<name> or server:<name>",
                        i + 1,
                        c.name
                    ))
                }
            };
            grants.push(Grant {
                id: format!("case-grant-{}", grants.len() + 1),
                scope,
                expires_at_ms: i64::MAX,
            });
        }
        let args = to_json(&c.arguments);
        let ctx = c.context.as_ref().map_or(Value::Null, to_json);
        let call = Call {
            agent: &c.agent,
            tool: &c.tool,
            server: c.server.as_deref(),
            session_id: &c.session,
            turn_id: c.turn.as_deref(),
            arguments: &args,
            context: &ctx,
        };
        let d = policy.evaluate(
            &call,
            &Inputs {
                now_ms: start + c.at_ms,
                usage: &usage,
                grants: &grants,
                host: &PureHost,
            },
        );
        usage.apply(&d.usage);

        let mut problems = Vec::new();
        if d.status != c.expect {
            problems.push(format!("status {}", d.status.as_str()));
        }
        if let Some(l) = c.blocked_by {
            if d.blocked_by != Some(l) {
                problems.push(format!("blocked_by {}", d.blocked_by.map_or("none", |l| l.as_str())));
            }
        }
        if let Some(r) = &c.rule {
            if d.rule.as_deref() != Some(r.as_str()) {
                problems.push(format!("rule {}", d.rule.as_deref().unwrap_or("none")));
            }
        }
        if let Some(a) = c.approvers {
            if d.approvers_required != a {
                problems.push(format!("approvers {}", d.approvers_required));
            }
        }
        if let Some(s) = &c.reason_contains {
            if !d.reason.contains(s.as_str()) {
                problems.push("reason differs".to_string());
            }
        }
        if let Some(want) = &c.shadow {
            let fired: Vec<&str> = d.shadow.iter().map(|f| f.rule.as_str()).collect();
            if fired != want.iter().map(String::as_str).collect::<Vec<_>>() {
                problems.push(format!("shadow rules fired: {fired:?}"));
            }
        }
        let detail = if problems.is_empty() {
            String::new()
        } else {
            format!("{}; reason: {}", problems.join(", "), d.reason)
        };
        results.push(CaseResult {
            name: c.name.clone(),
            tool: c.tool.clone(),
            expected: describe(c.expect, c.blocked_by, c.rule.as_deref(), c.approvers),
            got: describe(
                d.status,
                d.blocked_by,
                d.rule.as_deref(),
                (d.status == Status::Pending).then_some(d.approvers_required),
            ),
            ok: problems.is_empty(),
            detail,
        });
    }
    Ok(Report { results })
}
