//! The decision core: allowlist → schema → guards → budgets → approval rules → grants.
//!
//! Pure: everything the engine needs from the world (the time, budget usage, active
//! grants, what the host's filesystem says) comes in through [`Inputs`].
//!
//! Longer than most modules (~700 lines): the layers in their order, read top to bottom,
//! are the policy's meaning; splitting them apart would hide the order.

use crate::budget::{Budget, Usage};
use crate::config::{Approval, BudgetCounts, OnExceed, OnUnknown, Risk, RuleAction};
use crate::decision::{
    Call, Decision, Grant, GrantScope, Impact, Layer, Pinned, ShadowFinding, Source, Status, UsageDelta,
};
use crate::expr::Expr;
use crate::guards::command::{CommandGuard, Verdict};
use crate::guards::path::Fence;
use crate::guards::url::UrlGuard;
use crate::host::{Host, TreeStats};
use crate::json::JsonLimits;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A compiled, validated policy. Cheap to share (`Arc<Policy>`); evaluation is `&self`.
pub struct Policy {
    pub name: String,
    pub description: String,
    /// `sha256:…` of the canonical policy content.
    pub version: Arc<str>,
    /// Size and depth limits for agent arguments.
    pub limits: JsonLimits,
    pub(crate) tools: HashMap<String, Tool>,
    pub(crate) budgets: Vec<Budget>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.tools.len())
            .finish()
    }
}

pub(crate) struct Tool {
    pub name: String,
    pub description: String,
    pub risk: Risk,
    pub destructive: bool,
    pub server: Option<String>,
    pub validator: jsonschema::Validator,
    pub schema: Value,
    pub approval: Approval,
    pub approvers: u8,
    pub expiry_ms: i64,
    pub break_glass: bool,
    pub grantable: bool,
    pub path_guards: Vec<PathUse>,
    pub command_guards: Vec<CommandUse>,
    pub url_guards: Vec<UrlUse>,
    pub budgets: Vec<Budget>,
    pub rules: Vec<Rule>,
}

pub(crate) struct PathUse {
    pub fence: Arc<Fence>,
    pub args: Vec<String>,
    pub max_files: Option<u64>,
    pub shadow: bool,
}

pub(crate) struct CommandUse {
    pub guard: Arc<CommandGuard>,
    pub args: Vec<String>,
    /// Argument holding the working directory, if any.
    pub cwd: Option<String>,
    pub shadow: bool,
}

pub(crate) struct UrlUse {
    pub guard: Arc<UrlGuard>,
    pub args: Vec<String>,
    pub shadow: bool,
}

pub(crate) struct Rule {
    pub id: String,
    pub reason: String,
    pub expr: Expr,
    pub action: RuleAction,
    pub approvers: u8,
    pub grantable: bool,
    pub shadow: bool,
}

/// Public facts about a tool, for dashboards and API docs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub risk: Risk,
    pub destructive: bool,
    pub server: Option<String>,
    pub approval: &'static str,
    pub approvers: u8,
    pub expiry_ms: i64,
    pub break_glass: bool,
    pub grantable: bool,
    pub arguments_schema: Value,
}

/// Everything from the outside world that a decision depends on.
pub struct Inputs<'a> {
    pub now_ms: i64,
    pub usage: &'a dyn Usage,
    /// Active grants of this call's session.
    pub grants: &'a [Grant],
    pub host: &'a dyn Host,
}

/// Why layers 1–3 refused arguments (used when a reviewer modifies a call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub layer: Layer,
    pub rule: Option<String>,
    pub reason: String,
}

/// A modification judged again: the decision (its `usage` is the net change to apply)
/// and what the modified call now has charged in all (to replace on a later change).
#[derive(Debug, Clone)]
pub struct Reevaluated {
    pub decision: Decision,
    pub charges: Vec<UsageDelta>,
}

/// A hold: the call needs a human, and why.
struct Hold {
    layer: Layer,
    rule: String,
    reason: String,
    approvers: u8,
    grantable: bool,
    /// The tool's own `approval = "ask"` (less specific than any matching rule).
    tool_default: bool,
}

impl Hold {
    /// Why an approve-all grant cannot release this hold, for the reviewer.
    fn not_grantable(&self, tool: &Tool) -> Option<String> {
        if self.grantable {
            return None;
        }
        Some(match self.layer {
            Layer::CommandGuard | Layer::PathGuard | Layer::UrlGuard => {
                format!(
                    "a guard holds it ({}); each such call needs its own decision",
                    self.rule
                )
            }
            Layer::Budget => format!(
                "budget {} is exceeded; each such call needs its own decision",
                self.rule
            ),
            _ if !tool.grantable && tool.destructive => {
                format!("{} is destructive and the policy does not mark it grantable", tool.name)
            }
            _ if !tool.grantable => format!("the policy does not allow approve-all for {}", tool.name),
            _ => format!("rule {} asks for single-step approval", self.rule),
        })
    }
}

/// What layers 1–3 found for an admissible call.
struct Checked<'p> {
    tool: &'p Tool,
    holds: Vec<Hold>,
    shadow: Vec<ShadowFinding>,
    impact: Option<Impact>,
    pinned: Vec<Pinned>,
}

fn string_args<'v>(args: &'v Value, names: &'v [String]) -> Result<Vec<(&'v str, &'v str)>, String> {
    let mut out = Vec::new();
    for n in names {
        match args.get(n) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push((n.as_str(), s.as_str())),
            Some(Value::Array(a)) => {
                for v in a {
                    match v {
                        Value::String(s) => out.push((n.as_str(), s.as_str())),
                        _ => return Err(format!("argument {n} must hold strings")),
                    }
                }
            }
            Some(_) => return Err(format!("argument {n} must be a string or an array of strings")),
        }
    }
    Ok(out)
}

impl Policy {
    pub fn tool_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.tools.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    pub fn tool_info(&self, name: &str) -> Option<ToolInfo> {
        let t = self.tools.get(name)?;
        Some(ToolInfo {
            name: t.name.clone(),
            description: t.description.clone(),
            risk: t.risk,
            destructive: t.destructive,
            server: t.server.clone(),
            approval: match t.approval {
                Approval::Auto => "auto",
                Approval::Ask => "ask",
            },
            approvers: t.approvers,
            expiry_ms: t.expiry_ms,
            break_glass: t.break_glass,
            grantable: t.grantable,
            arguments_schema: t.schema.clone(),
        })
    }

    /// Arguments a guard of this tool checks (paths, commands, URLs). Reviewers must see
    /// these exactly as they will run: they are never value-redacted in the review view.
    pub fn guarded_args(&self, name: &str) -> Vec<&str> {
        let Some(t) = self.tools.get(name) else {
            return Vec::new();
        };
        let mut v: Vec<&str> = t
            .path_guards
            .iter()
            .flat_map(|g| g.args.iter())
            .chain(t.command_guards.iter().flat_map(|g| g.args.iter()))
            .chain(t.url_guards.iter().flat_map(|g| g.args.iter()))
            .map(String::as_str)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Layer 1: the allowlist.
    fn allowlisted(&self, call: &Call) -> Result<&Tool, Refusal> {
        let refuse = |reason: String| Refusal {
            layer: Layer::Allowlist,
            rule: None,
            reason,
        };
        let name = crate::name::check(call.tool).map_err(|p| refuse(p.to_string()))?;
        let tool = self
            .tools
            .get(name)
            .ok_or_else(|| refuse(format!("tool {name:?} is not on the allowlist")))?;
        if let Some(s) = call.server {
            if tool.server.as_deref() != Some(s) {
                return Err(refuse(format!("tool {} does not belong to server {s:?}", tool.name)));
            }
        }
        Ok(tool)
    }

    /// Layers 1–3. `Err` is a refusal; `Ok` may still carry holds (a guard wants a human).
    fn check<'p>(&'p self, call: &Call, host: &dyn Host) -> Result<Checked<'p>, Refusal> {
        let tool = self.allowlisted(call)?;
        // Layer 2: schema. Depth is re-checked for values that did not come through the parser.
        let schema_err = |reason: String| Refusal {
            layer: Layer::Schema,
            rule: None,
            reason,
        };
        if !call.arguments.is_object() {
            return Err(schema_err("arguments must be a JSON object".into()));
        }
        if crate::json::depth(call.arguments) > self.limits.max_depth {
            return Err(schema_err(format!(
                "arguments nest deeper than {} levels",
                self.limits.max_depth
            )));
        }
        if let Err(e) = tool.validator.validate(call.arguments) {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() {
                "arguments".to_string()
            } else {
                format!("arguments{at}")
            };
            // `masked` leaves the offending value out: it may be a secret.
            return Err(schema_err(format!("{at}: {}", e.masked())));
        }

        let mut checked = Checked {
            tool,
            holds: Vec::new(),
            shadow: Vec::new(),
            impact: None,
            pinned: Vec::new(),
        };
        // Layer 3: guards. A shadow guard records what it would have done.
        let refuse_or_shadow =
            |checked: &mut Checked, layer: Layer, rule: &str, shadow: bool, reason: String| -> Result<(), Refusal> {
                if shadow {
                    checked.shadow.push(ShadowFinding {
                        layer,
                        rule: rule.to_string(),
                        would: Status::Denied,
                        reason,
                    });
                    Ok(())
                } else {
                    Err(Refusal {
                        layer,
                        rule: Some(rule.to_string()),
                        reason,
                    })
                }
            };

        for g in &tool.path_guards {
            let rule = format!("fence:{}", g.fence.name);
            let values = string_args(call.arguments, &g.args).map_err(|m| Refusal {
                layer: Layer::PathGuard,
                rule: Some(rule.clone()),
                reason: m,
            })?;
            let mut paths = Vec::with_capacity(values.len());
            let mut failed = false;
            for (arg, raw) in &values {
                match g.fence.check(raw, host) {
                    Ok(p) => paths.push(p),
                    Err(m) => {
                        refuse_or_shadow(&mut checked, Layer::PathGuard, &rule, g.shadow, format!("{arg}: {m}"))?;
                        failed = true;
                    }
                }
            }
            if let Some(max) = g.max_files {
                if !failed {
                    let stats = tree_stats(&paths, max, host);
                    if let Some(s) = stats {
                        if s.files > max {
                            let m = format!("would affect more than {max} files ({}+ found)", s.files);
                            refuse_or_shadow(&mut checked, Layer::PathGuard, &rule, g.shadow, m)?;
                        }
                    }
                    checked.impact = Some(Impact {
                        paths: paths.iter().map(|p| p.display().to_string()).collect(),
                        stats,
                    });
                }
            }
        }
        for g in &tool.command_guards {
            let rule = format!("command:{}", g.guard.name);
            let values = string_args(call.arguments, &g.args).map_err(|m| Refusal {
                layer: Layer::CommandGuard,
                rule: Some(rule.clone()),
                reason: m,
            })?;
            let cwd = g
                .cwd
                .as_ref()
                .and_then(|k| call.arguments.get(k))
                .and_then(Value::as_str);
            for (_, cmd) in values {
                match g.guard.check(cmd, cwd) {
                    Verdict::Understood => {}
                    Verdict::Dangerous(m) => refuse_or_shadow(&mut checked, Layer::CommandGuard, &rule, g.shadow, m)?,
                    Verdict::Unknown(m) => match g.guard.on_unknown {
                        OnUnknown::Deny => refuse_or_shadow(&mut checked, Layer::CommandGuard, &rule, g.shadow, m)?,
                        OnUnknown::Ask if g.shadow => checked.shadow.push(ShadowFinding {
                            layer: Layer::CommandGuard,
                            rule: rule.clone(),
                            would: Status::Pending,
                            reason: m,
                        }),
                        OnUnknown::Ask => checked.holds.push(Hold {
                            layer: Layer::CommandGuard,
                            rule: rule.clone(),
                            reason: format!("not understood, needs a human: {m}"),
                            approvers: tool.approvers,
                            grantable: false,
                            tool_default: false,
                        }),
                    },
                }
            }
        }
        for g in &tool.url_guards {
            let rule = format!("url:{}", g.guard.name);
            let values = string_args(call.arguments, &g.args).map_err(|m| Refusal {
                layer: Layer::UrlGuard,
                rule: Some(rule.clone()),
                reason: m,
            })?;
            for (arg, raw) in values {
                match g.guard.check(raw, host) {
                    Ok(c) => {
                        if !c.pinned.is_empty() {
                            checked.pinned.push(Pinned {
                                url: c.url,
                                host: c.host,
                                port: c.port,
                                addresses: c.pinned,
                            });
                        }
                    }
                    Err(m) => refuse_or_shadow(&mut checked, Layer::UrlGuard, &rule, g.shadow, format!("{arg}: {m}"))?,
                }
            }
        }
        Ok(checked)
    }

    /// Can deciding `call` ask the host anything? Only path guards (symlinks, file counts)
    /// and URL guards (DNS) do, and only about the arguments they guard: a call that gives
    /// none of those (or whose tool is not on the allowlist) is decided without the host,
    /// so nothing need be gathered for it first.
    pub fn asks_host(&self, call: &Call) -> bool {
        // The values a guard reads, read as it reads them (a call whose values it refuses
        // is refused before the host is asked).
        let reads = |names: &[String]| string_args(call.arguments, names).is_ok_and(|v| !v.is_empty());
        self.allowlisted(call)
            .is_ok_and(|t| t.path_guards.iter().any(|g| reads(&g.args)) || t.url_guards.iter().any(|g| reads(&g.args)))
    }

    /// Run layers 1–3 only: for arguments a reviewer modified, and for re-checks at
    /// release time. Guard holds are fine here (a human is already deciding).
    pub fn check_arguments(&self, call: &Call, host: &dyn Host) -> Result<(), Refusal> {
        self.check(call, host).map(|_| ())
    }

    /// Decide one call.
    pub fn evaluate(&self, call: &Call, inputs: &Inputs) -> Decision {
        self.decide(call, inputs, false)
    }

    /// Decide a reviewer's modification of a held call as if the agent had sent the new
    /// arguments, on every layer: the answer says whether the new arguments are refused
    /// and how many approvers they need. `charged` is what the held call already added to
    /// budgets (its decision's `usage`): it is taken out before the check, so the call is
    /// not counted twice, and the decision's `usage` is the net change (new charges
    /// minus `charged`). Rates count proposals and are neither checked nor charged
    /// again. Grants in `inputs` are ignored: a modification is one reviewer's decision.
    pub fn reevaluate(&self, call: &Call, inputs: &Inputs, charged: &[UsageDelta]) -> Reevaluated {
        let without = crate::budget::Without {
            usage: inputs.usage,
            charges: charged,
        };
        let inputs = Inputs {
            now_ms: inputs.now_ms,
            usage: &without,
            grants: &[],
            host: inputs.host,
        };
        let mut decision = self.decide(call, &inputs, true);
        let charges: Vec<UsageDelta> = std::mem::take(&mut decision.usage)
            .into_iter()
            .filter(|d| !matches!(d.change, crate::decision::UsageChange::Tat(_)))
            .collect();
        if decision.status != Status::Denied {
            decision.usage = net_usage(charges.clone(), charged);
        }
        Reevaluated { decision, charges }
    }

    fn decide(&self, call: &Call, inputs: &Inputs, modification: bool) -> Decision {
        let mut checked = match self.check(call, inputs.host) {
            Ok(c) => c,
            Err(r) => return self.refused(r, None, Vec::new()),
        };
        let tool = checked.tool;
        let mut shadow = std::mem::take(&mut checked.shadow);
        let mut holds = std::mem::take(&mut checked.holds);

        // Layer 4: budgets (policy-wide first, then the tool's).
        let mut accepted_deltas: Vec<UsageDelta> = Vec::new();
        let mut auto_deltas: Vec<UsageDelta> = Vec::new();
        for b in self.budgets.iter().chain(tool.budgets.iter()) {
            if modification && b.is_rate() {
                continue;
            }
            let r = b.check(call, inputs.now_ms, inputs.usage);
            match (r.exceeded, b.shadow) {
                (Some(reason), true) => shadow.push(ShadowFinding {
                    layer: Layer::Budget,
                    rule: b.id.clone(),
                    would: match b.on_exceed {
                        OnExceed::Deny => Status::Denied,
                        OnExceed::Ask => Status::Pending,
                    },
                    reason,
                }),
                (Some(reason), false) => match b.on_exceed {
                    OnExceed::Deny => {
                        let r = Refusal {
                            layer: Layer::Budget,
                            rule: Some(b.id.clone()),
                            reason,
                        };
                        return self.refused(r, Some(tool), shadow);
                    }
                    OnExceed::Ask => holds.push(Hold {
                        layer: Layer::Budget,
                        rule: b.id.clone(),
                        reason,
                        approvers: tool.approvers,
                        grantable: false,
                        tool_default: false,
                    }),
                },
                (None, _) => {
                    if let Some(d) = r.delta {
                        match b.counts {
                            BudgetCounts::Accepted => accepted_deltas.push(d),
                            BudgetCounts::AutoAllowed => auto_deltas.push(d),
                        }
                    }
                }
            }
        }

        // Layer 5: approval rules. The strictest matching rule wins.
        for r in &tool.rules {
            if !r.expr.eval(call.arguments, call.context) {
                continue;
            }
            if r.shadow {
                shadow.push(ShadowFinding {
                    layer: Layer::Rule,
                    rule: r.id.clone(),
                    would: match r.action {
                        RuleAction::Deny => Status::Denied,
                        RuleAction::Ask => Status::Pending,
                    },
                    reason: r.reason.clone(),
                });
                continue;
            }
            match r.action {
                RuleAction::Deny => {
                    let refusal = Refusal {
                        layer: Layer::Rule,
                        rule: Some(r.id.clone()),
                        reason: r.reason.clone(),
                    };
                    return self.refused(refusal, Some(tool), shadow);
                }
                RuleAction::Ask => holds.push(Hold {
                    layer: Layer::Rule,
                    rule: r.id.clone(),
                    reason: r.reason.clone(),
                    approvers: r.approvers,
                    grantable: r.grantable && tool.grantable,
                    tool_default: false,
                }),
            }
        }
        if tool.approval == Approval::Ask {
            holds.push(Hold {
                layer: Layer::Rule,
                rule: format!("{}:ask", tool.name),
                reason: format!("{} always needs a human decision", tool.name),
                approvers: tool.approvers,
                grantable: tool.grantable,
                tool_default: true,
            });
        }

        let mut d = Decision {
            status: Status::Allowed,
            blocked_by: None,
            rule: None,
            reason: "allowed by policy".to_string(),
            tool: Some(tool.name.clone()),
            risk: tool.risk,
            destructive: tool.destructive,
            approvers_required: 0,
            expires_at_ms: None,
            break_glass: tool.break_glass,
            grantable: false,
            not_grantable: None,
            policy_version: self.version.clone(),
            source: Source::Policy,
            grant_id: None,
            shadow,
            usage: Vec::new(),
            impact: checked.impact.take(),
            pinned: std::mem::take(&mut checked.pinned),
        };

        if holds.is_empty() {
            d.usage = accepted_deltas;
            d.usage.extend(auto_deltas);
            return d;
        }

        // Layer 6: grants release only holds that are all grantable (never guards or
        // budgets), and only when one approver would have been enough: a grant is one
        // reviewer's word, so it never stands in for a quorum.
        let approvers = holds.iter().map(|h| h.approvers).max().unwrap_or(1);
        let not_grantable = holds.iter().find_map(|h| h.not_grantable(tool)).or_else(|| {
            (approvers > 1).then(|| format!("it needs {approvers} distinct approvers; a grant is one reviewer's word"))
        });
        let all_grantable = not_grantable.is_none();
        if all_grantable {
            if let Some(g) = matching_grant(tool, inputs.grants, inputs.now_ms) {
                d.source = Source::Grant;
                d.grant_id = Some(g.id.clone());
                d.reason = format!("allowed by approve-all grant {}", g.id);
                d.usage = accepted_deltas;
                return d;
            }
        }

        // Pending: report the hold a reviewer most needs to see first.
        let main = holds
            .iter()
            .max_by_key(|h| (hold_rank(h.layer), h.approvers, !h.grantable, !h.tool_default))
            .expect("holds is not empty");
        d.status = Status::Pending;
        d.blocked_by = Some(main.layer);
        d.rule = Some(main.rule.clone());
        d.reason = if approvers > 1 {
            format!("{} (needs {approvers} distinct approvers)", main.reason)
        } else {
            main.reason.clone()
        };
        d.approvers_required = approvers;
        d.expires_at_ms = Some(inputs.now_ms.saturating_add(tool.expiry_ms));
        d.grantable = all_grantable;
        d.not_grantable = not_grantable;
        d.usage = accepted_deltas;
        d
    }

    fn refused(&self, r: Refusal, tool: Option<&Tool>, shadow: Vec<ShadowFinding>) -> Decision {
        Decision {
            status: Status::Denied,
            blocked_by: Some(r.layer),
            rule: r.rule,
            reason: r.reason,
            tool: tool.map(|t| t.name.clone()),
            risk: tool.map_or(Risk::Low, |t| t.risk),
            destructive: tool.is_some_and(|t| t.destructive),
            approvers_required: 0,
            expires_at_ms: None,
            break_glass: false,
            grantable: false,
            not_grantable: None,
            policy_version: self.version.clone(),
            source: Source::Policy,
            grant_id: None,
            shadow,
            usage: Vec::new(),
            impact: None,
            pinned: Vec::new(),
        }
    }
}

/// New charges minus what was charged before, one delta per change (rates excluded).
fn net_usage(new: Vec<UsageDelta>, charged: &[UsageDelta]) -> Vec<UsageDelta> {
    use crate::decision::UsageChange;
    let mut out: Vec<UsageDelta> = new
        .into_iter()
        .filter(|d| !matches!(d.change, UsageChange::Tat(_)))
        .collect();
    for old in charged {
        let change = match old.change {
            UsageChange::Count => UsageChange::Uncount,
            UsageChange::Uncount => UsageChange::Count,
            UsageChange::Amount(a) => UsageChange::Amount(-a),
            UsageChange::Tat(_) => continue,
        };
        // A count charged again for the same key cancels out.
        let same = |d: &UsageDelta| d.budget == old.budget && d.scope == old.scope;
        if change == UsageChange::Uncount {
            if let Some(i) = out.iter().position(|d| same(d) && d.change == UsageChange::Count) {
                out.remove(i);
                continue;
            }
        }
        out.push(UsageDelta {
            budget: old.budget.clone(),
            scope: old.scope.clone(),
            change,
        });
    }
    out
}

/// Guards first (the reviewer must know the command was not understood), then rules
/// (they carry the approver count), then budgets.
fn hold_rank(l: Layer) -> u8 {
    match l {
        Layer::CommandGuard | Layer::PathGuard | Layer::UrlGuard => 3,
        Layer::Rule => 2,
        _ => 1,
    }
}

fn matching_grant<'g>(tool: &Tool, grants: &'g [Grant], now_ms: i64) -> Option<&'g Grant> {
    grants.iter().find(|g| {
        g.expires_at_ms > now_ms
            && match &g.scope {
                GrantScope::Tool(t) => *t == tool.name,
                GrantScope::Server(s) => tool.server.as_deref() == Some(s.as_str()),
            }
    })
}

fn tree_stats(paths: &[std::path::PathBuf], max: u64, host: &dyn Host) -> Option<TreeStats> {
    let mut total = TreeStats {
        files: 0,
        bytes: 0,
        complete: true,
    };
    let mut any = false;
    for p in paths {
        if let Some(s) = host.tree_stats(Path::new(p), max.saturating_sub(total.files)) {
            any = true;
            total.files += s.files;
            total.bytes += s.bytes;
            total.complete &= s.complete;
            if total.files > max {
                total.complete = false;
                break;
            }
        }
    }
    any.then_some(total)
}
