//! Decision integrity: grants never stand in for a quorum, destructive tools are not
//! grantable by default, names match exactly, and a reviewer's modification is judged
//! on every layer as if the agent had sent it.

use policy::{Call, Grant, GrantScope, Inputs, Layer, MemoryUsage, Policy, PureHost, Status, UsageChange};
use serde_json::{json, Value};

const T0: i64 = 1_767_225_600_000;

const POLICY: &str = r#"
[policy]
name = "integrity"

[tools.refund]
description = "money"
risk = "high"
destructive = true
approval = "auto"
arguments = { type = "object", required = ["amount"], properties = { amount = { type = "number" }, to = { type = "string" } } }
budgets = [
  { id = "refund_session_total", kind = "amount", field = "amount", scope = "session", limit = 10000, on_exceed = "deny" },
  { id = "refunds_per_session", kind = "count", scope = "session", limit = 3, on_exceed = "deny" },
  { id = "refund_rate", kind = "rate", scope = "session", limit = 1, window = "1h", on_exceed = "deny" },
]
rules = [
  { id = "over_5000", when = "args.amount > 5000", action = "ask", reason = "above 5000" },
  { id = "over_9000", when = "args.amount > 9000", action = "ask", approvers = 2, reason = "above 9000" },
  { id = "no_offshore", when = 'args.to == "offshore"', action = "deny", reason = "never offshore" },
]

[tools.wipe]
description = "destructive, silent about grants"
destructive = true
approval = "ask"
arguments = { type = "object" }

[tools.wipe_ok]
description = "destructive, explicitly grantable"
destructive = true
grantable = true
approval = "ask"
arguments = { type = "object" }

[tools.note]
description = "harmless"
approval = "ask"
arguments = { type = "object" }

[tools.pair]
description = "always two people"
approval = "ask"
approvers = 2
arguments = { type = "object" }
"#;

fn policy() -> Policy {
    Policy::from_toml(POLICY).unwrap_or_else(|e| panic!("{e}"))
}

fn call<'a>(tool: &'a str, args: &'a Value) -> Call<'a> {
    Call {
        agent: "a1",
        tool,
        server: None,
        session_id: "s1",
        turn_id: None,
        arguments: args,
        context: &Value::Null,
    }
}

fn grant(tool: &str) -> Grant {
    Grant {
        id: format!("g-{tool}"),
        scope: GrantScope::Tool(tool.into()),
        expires_at_ms: i64::MAX,
    }
}

#[test]
fn a_grant_releases_only_calls_that_one_approver_could_release() {
    let p = policy();
    let grants = [grant("note"), grant("pair"), grant("refund")];
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &grants,
        host: &PureHost,
    };
    let empty = json!({});
    let d = p.evaluate(&call("note", &empty), &inputs);
    assert_eq!((d.status, d.grant_id.as_deref()), (Status::Allowed, Some("g-note")));

    let d = p.evaluate(&call("pair", &empty), &inputs);
    assert_eq!((d.status, d.approvers_required), (Status::Pending, 2));
    assert!(!d.grantable);
    assert!(
        d.not_grantable.as_deref().unwrap().contains("2 distinct approvers"),
        "{d:?}"
    );
}

#[test]
fn destructive_tools_are_not_grantable_unless_the_policy_says_so() {
    let p = policy();
    let grants = [grant("wipe"), grant("wipe_ok"), grant("refund")];
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &grants,
        host: &PureHost,
    };
    let empty = json!({});
    let d = p.evaluate(&call("wipe", &empty), &inputs);
    assert_eq!(d.status, Status::Pending);
    assert!(!d.grantable);
    assert!(d.not_grantable.as_deref().unwrap().contains("destructive"), "{d:?}");
    assert!(!p.tool_info("wipe").unwrap().grantable);

    let d = p.evaluate(&call("wipe_ok", &empty), &inputs);
    assert_eq!(d.status, Status::Allowed);
    assert!(p.tool_info("note").unwrap().grantable);

    // A held refund (rule, one approver) of a destructive tool is not released either.
    let args = json!({"amount": 6000});
    let d = p.evaluate(&call("refund", &args), &inputs);
    assert_eq!((d.status, d.grantable), (Status::Pending, false));
}

#[test]
fn tool_names_are_matched_exactly() {
    let p = policy();
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    let empty = json!({});
    for name in ["Note", "NOTE", " note", "note ", "note\n", "nοte"] {
        let d = p.evaluate(&call(name, &empty), &inputs);
        assert_eq!(
            (d.status, d.blocked_by),
            (Status::Denied, Some(Layer::Allowlist)),
            "{name:?}"
        );
    }
}

/// Ingest a refund, then judge a reviewer's modification of it.
fn held_then_modified(first: f64, modified: Value) -> (policy::Decision, MemoryUsage) {
    let p = policy();
    let mut usage = MemoryUsage::default();
    let args = json!({"amount": first});
    let d = p.evaluate(
        &call("refund", &args),
        &Inputs {
            now_ms: T0,
            usage: &usage,
            grants: &[],
            host: &PureHost,
        },
    );
    assert_eq!(d.status, Status::Pending, "{d:?}");
    usage.apply(&d.usage);
    let charged = d.usage.clone();
    let m = p
        .reevaluate(
            &call("refund", &modified),
            &Inputs {
                now_ms: T0 + 1000,
                usage: &usage,
                grants: &[grant("refund")],
                host: &PureHost,
            },
            &charged,
        )
        .decision;
    if m.status != Status::Denied {
        usage.apply(&m.usage);
    }
    (m, usage)
}

#[test]
fn a_modification_that_crosses_the_quorum_rule_needs_the_quorum() {
    let (m, _) = held_then_modified(6000.0, json!({"amount": 9999}));
    assert_eq!((m.status, m.approvers_required), (Status::Pending, 2));
    assert_eq!(m.rule.as_deref(), Some("over_9000"));
    // Smaller stays at one approver.
    let (m, _) = held_then_modified(6000.0, json!({"amount": 5500}));
    assert_eq!((m.status, m.approvers_required), (Status::Pending, 1));
}

#[test]
fn a_modification_refused_by_a_rule_or_the_schema_is_denied_with_the_engines_reason() {
    let (m, _) = held_then_modified(6000.0, json!({"amount": 6000, "to": "offshore"}));
    assert_eq!((m.status, m.blocked_by), (Status::Denied, Some(Layer::Rule)));
    assert_eq!(m.reason, "never offshore");
    let (m, _) = held_then_modified(6000.0, json!({"amount": "6000"}));
    assert_eq!((m.status, m.blocked_by), (Status::Denied, Some(Layer::Schema)));
}

#[test]
fn budgets_are_charged_for_what_is_released_and_the_call_is_not_counted_twice() {
    // 6000 was charged at ingest; 9999 replaces it: 9999 <= 10000 passes only if the
    // first charge is taken out, and the rate (1 per hour) is not spent twice.
    let (m, usage) = held_then_modified(6000.0, json!({"amount": 9999}));
    assert_ne!(m.status, Status::Denied, "{m:?}");
    use policy::Usage;
    let scope = "session:a1\u{1f}s1";
    assert_eq!(usage.amount("refund_session_total", scope), 9999.0);
    assert_eq!(usage.count("refunds_per_session", scope), 1);
    assert!(m.usage.iter().all(|d| !matches!(d.change, UsageChange::Tat(_))));
    // Over the session total: refused by the budget.
    let (m, usage) = held_then_modified(6000.0, json!({"amount": 10001}));
    assert_eq!((m.status, m.blocked_by), (Status::Denied, Some(Layer::Budget)));
    assert_eq!(usage.amount("refund_session_total", scope), 6000.0);
    // Smaller: the difference goes back.
    let (_, usage) = held_then_modified(6000.0, json!({"amount": 5500}));
    assert_eq!(usage.amount("refund_session_total", scope), 5500.0);
}

#[test]
fn session_budgets_belong_to_the_agent() {
    let p = policy();
    let mut usage = MemoryUsage::default();
    let args = json!({"amount": 10});
    for agent in ["a1", "a2"] {
        // Each agent gets its own count of 3 per session id "s1", and its own rate.
        let c = Call {
            agent,
            ..call("refund", &args)
        };
        let d = p.evaluate(
            &c,
            &Inputs {
                now_ms: T0,
                usage: &usage,
                grants: &[],
                host: &PureHost,
            },
        );
        assert_eq!(d.status, Status::Allowed, "{agent}: {d:?}");
        usage.apply(&d.usage);
        // The second one within the hour is over the agent's own rate.
        let d = p.evaluate(
            &c,
            &Inputs {
                now_ms: T0 + 1,
                usage: &usage,
                grants: &[],
                host: &PureHost,
            },
        );
        assert_eq!(
            (d.status, d.blocked_by),
            (Status::Denied, Some(Layer::Budget)),
            "{agent}"
        );
    }
}
