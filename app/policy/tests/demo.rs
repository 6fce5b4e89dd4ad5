//! The shipped demo policy loads and enforces every line of docs `demo-policy.md`.

use policy::{cases, Call, Grant, GrantScope, Inputs, Layer, MemoryUsage, Policy, PureHost, Status};
use serde_json::{json, Value};

const DEMO: &str = include_str!("../../../policies/demo.toml");
const CASES: &str = include_str!("../../../policies/demo.cases.toml");
const T0: i64 = 1_767_225_600_000;

fn demo() -> Policy {
    Policy::from_toml(DEMO).unwrap_or_else(|e| panic!("demo policy must load:\n{e}"))
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

#[test]
fn demo_cases_all_pass() {
    let report = cases::run(&demo(), CASES).expect("cases file parses");
    assert!(
        report.results.len() >= 60,
        "the cases file covers the demo policy widely"
    );
    assert_eq!(report.failed(), 0, "\n{}", report.render());
}

#[test]
fn demo_version_is_stable_and_content_addressed() {
    let a = demo();
    let b = Policy::from_toml(&format!("# a comment changes nothing\n{DEMO}")).unwrap();
    assert_eq!(a.version, b.version);
    assert!(a.version.starts_with("sha256:"));
    let c = Policy::from_toml(&DEMO.replace("limit = 30", "limit = 31")).unwrap();
    assert_ne!(a.version, c.version);
}

#[test]
fn demo_tools_are_exactly_the_documented_ones() {
    let p = demo();
    let mut names = p.tool_names();
    names.sort_unstable();
    assert_eq!(
        names,
        vec![
            // Claude Code's tools (docs/integrations.md), apart from the generic ones.
            "claude_code.bash",
            "claude_code.edit",
            "claude_code.glob",
            "claude_code.grep",
            "claude_code.multi_edit",
            "claude_code.read",
            "claude_code.web_fetch",
            "claude_code.web_search",
            "claude_code.write",
            "create_reply_draft",
            "execute_command",
            "list_dir",
            "mcp__chrome-devtools__click",
            "mcp__chrome-devtools__evaluate_script",
            "mcp__chrome-devtools__fill_form",
            "mcp__chrome-devtools__navigate_page",
            "mcp__chrome-devtools__take_snapshot",
            "move_to_trash",
            "query_order",
            "read_file",
            "refund_order",
            "send_email",
            "web_fetch",
            "web_search",
            "write_file",
        ]
    );
    assert!(!p.tool_info("refund_order").unwrap().break_glass);
}

#[test]
fn web_fetch_allows_30_per_session_per_minute() {
    let p = demo();
    let args = json!({"url": "https://example.com/"});
    let mut usage = MemoryUsage::default();
    let mut statuses = Vec::new();
    for i in 0..31 {
        let d = p.evaluate(
            &call("web_fetch", &args),
            &Inputs {
                now_ms: T0 + i,
                usage: &usage,
                grants: &[],
                host: &PureHost,
            },
        );
        usage.apply(&d.usage);
        statuses.push((d.status, d.blocked_by));
    }
    assert!(statuses[..30].iter().all(|s| s.0 == Status::Allowed), "{statuses:?}");
    assert_eq!(statuses[30], (Status::Denied, Some(Layer::Budget)));
    // Another session has its own budget.
    let other = Call {
        session_id: "s2",
        ..call("web_fetch", &args)
    };
    let d = p.evaluate(
        &other,
        &Inputs {
            now_ms: T0 + 31,
            usage: &usage,
            grants: &[],
            host: &PureHost,
        },
    );
    assert_eq!(d.status, Status::Allowed);
    // A minute later the first session may fetch again.
    let d = p.evaluate(
        &call("web_fetch", &args),
        &Inputs {
            now_ms: T0 + 60_000,
            usage: &usage,
            grants: &[],
            host: &PureHost,
        },
    );
    assert_eq!(d.status, Status::Allowed, "{}", d.reason);
}

#[test]
fn write_file_content_is_limited_to_one_mebibyte() {
    let p = demo();
    let ok = json!({"path": "a.txt", "content": "x".repeat(1 << 20)});
    let big = json!({"path": "a.txt", "content": "x".repeat((1 << 20) + 1)});
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    assert_eq!(p.evaluate(&call("write_file", &ok), &inputs).status, Status::Pending);
    let d = p.evaluate(&call("write_file", &big), &inputs);
    assert_eq!((d.status, d.blocked_by), (Status::Denied, Some(Layer::Schema)));
}

#[test]
fn execute_command_is_limited_to_4_kib() {
    let p = demo();
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    let ok = json!({"command": format!("echo {}", "a".repeat(4091))});
    let big = json!({"command": format!("echo {}", "a".repeat(4092))});
    assert_eq!(
        p.evaluate(&call("execute_command", &ok), &inputs).status,
        Status::Pending
    );
    let d = p.evaluate(&call("execute_command", &big), &inputs);
    assert_eq!((d.status, d.blocked_by), (Status::Denied, Some(Layer::Schema)));
}

#[test]
fn move_to_trash_accepts_up_to_50_paths() {
    let p = demo();
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    let paths = |n: usize| (0..n).map(|i| format!("/data/shared/uploads/f{i}")).collect::<Vec<_>>();
    let ok = json!({ "paths": paths(50) });
    let big = json!({ "paths": paths(51) });
    let d = p.evaluate(&call("move_to_trash", &ok), &inputs);
    assert_eq!(d.status, Status::Pending);
    assert_eq!(
        d.impact.as_ref().unwrap().paths.len(),
        50,
        "the review screen gets the paths"
    );
    let d = p.evaluate(&call("move_to_trash", &big), &inputs);
    assert_eq!((d.status, d.blocked_by), (Status::Denied, Some(Layer::Schema)));
}

#[test]
fn refund_holds_are_not_released_by_money_overrides_and_quorum_is_two_above_50000() {
    let p = demo();
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    let args = json!({"order_id": "AB12345678", "amount": 50000.5});
    let d = p.evaluate(&call("refund_order", &args), &inputs);
    assert_eq!((d.status, d.approvers_required), (Status::Pending, 2));
    assert!(!d.break_glass);
    let args = json!({"order_id": "AB12345678", "amount": 50000});
    let d = p.evaluate(&call("refund_order", &args), &inputs);
    assert_eq!(
        (d.status, d.approvers_required, d.rule.as_deref()),
        (Status::Pending, 1, Some("refund_over_5000"))
    );
    let args = json!({"order_id": "AB12345678", "amount": 5000});
    let d = p.evaluate(&call("refund_order", &args), &inputs);
    // 5000 is within the single-call limit but above the 1000/day auto total.
    assert_eq!((d.status, d.blocked_by), (Status::Pending, Some(Layer::Budget)));
}

#[test]
fn grants_for_one_server_do_not_release_another_servers_tools() {
    let p = demo();
    let grants = [Grant {
        id: "g".into(),
        scope: GrantScope::Server("other".into()),
        expires_at_ms: i64::MAX,
    }];
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &grants,
        host: &PureHost,
    };
    let args = json!({});
    let c = Call {
        server: Some("chrome-devtools"),
        ..call("mcp__chrome-devtools__take_snapshot", &args)
    };
    assert_eq!(p.evaluate(&c, &inputs).status, Status::Pending);
    // An expired grant is ignored.
    let grants = [Grant {
        id: "g".into(),
        scope: GrantScope::Server("chrome-devtools".into()),
        expires_at_ms: T0 - 1,
    }];
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &grants,
        host: &PureHost,
    };
    assert_eq!(p.evaluate(&c, &inputs).status, Status::Pending);
}

#[test]
fn every_pending_demo_call_gets_an_expiry() {
    let p = demo();
    let inputs = Inputs {
        now_ms: T0,
        usage: &policy::NoUsage,
        grants: &[],
        host: &PureHost,
    };
    let args = json!({"path": "a", "content": ""});
    let d = p.evaluate(&call("write_file", &args), &inputs);
    assert_eq!(d.expires_at_ms, Some(T0 + 15 * 60_000));
    let args = json!({"paths": ["/data/shared/uploads/a"]});
    let d = p.evaluate(&call("move_to_trash", &args), &inputs);
    assert_eq!(d.expires_at_ms, Some(T0 + 30 * 60_000));
}

#[test]
fn demo_validates_against_the_published_policy_schema() {
    let schema: Value = serde_json::from_str(include_str!("../../../policies/policy.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("policy.schema.json compiles");
    let demo: toml::Value = toml::from_str(DEMO).unwrap();
    let demo = serde_json::to_value(demo).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&demo)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And it catches a typo the loader also refuses.
    let typo = DEMO.replace("approval = \"ask\"\nexpiry", "aproval = \"ask\"\nexpiry");
    assert_ne!(typo, DEMO);
    let typo = serde_json::to_value(toml::from_str::<toml::Value>(&typo).unwrap()).unwrap();
    assert!(!validator.is_valid(&typo));
    assert!(Policy::from_toml(&DEMO.replace("approval = \"ask\"\nexpiry", "aproval = \"ask\"\nexpiry")).is_err());
}

/// A host that answers nothing and counts what it was asked.
#[derive(Default)]
struct Asked(std::sync::atomic::AtomicUsize);

impl policy::Host for Asked {
    fn resolve_path(&self, _: &std::path::Path) -> Option<std::path::PathBuf> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        None
    }
    fn tree_stats(&self, _: &std::path::Path, _: u64) -> Option<policy::TreeStats> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        None
    }
    fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<std::net::IpAddr>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        None
    }
}

/// The server gathers host facts (symlinks, DNS) before deciding only for calls that
/// `asks_host` names: any call whose decision asks the host must be one of them, or it
/// would be decided on a host that knows nothing.
#[test]
fn every_call_whose_decision_asks_the_host_is_said_to() {
    let p = demo();
    let cases: toml::Table = CASES.parse().unwrap();
    let mut asking = 0;
    for case in cases["case"].as_array().unwrap() {
        let tool = case["tool"].as_str().unwrap();
        let args: Value = case
            .get("arguments")
            .map_or(json!({}), |a| serde_json::to_value(a).unwrap());
        let mut c = call(tool, &args);
        c.server = case.get("server").and_then(|s| s.as_str());
        let host = Asked::default();
        p.evaluate(
            &c,
            &Inputs {
                now_ms: T0,
                usage: &MemoryUsage::default(),
                grants: &[],
                host: &host,
            },
        );
        let asked = host.0.into_inner() > 0;
        asking += usize::from(asked);
        assert!(!asked || p.asks_host(&c), "{}: asked the host", case["name"]);
    }
    assert!(asking >= 5, "the cases include calls that ask the host ({asking})");
    let path = json!({"path": "notes/a.md", "url": "https://example.com/", "command": "ls"});
    assert!(p.asks_host(&call("read_file", &path)), "path guard");
    assert!(p.asks_host(&call("web_fetch", &path)), "URL guard");
    assert!(
        !p.asks_host(&call("execute_command", &path)),
        "no cwd: the command guard only"
    );
    let cwd = json!({"command": "ls", "cwd": "/srv"});
    assert!(p.asks_host(&call("execute_command", &cwd)), "cwd under a path guard");
    assert!(
        !p.asks_host(&call("read_file", &json!({"path": null}))),
        "nothing to resolve"
    );
    assert!(!p.asks_host(&call("web_search", &path)));
    assert!(!p.asks_host(&call("Read_File", &path)), "not on the allowlist");
}
