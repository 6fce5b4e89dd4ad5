//! `airlock hook claude-code`, the real binary fed recorded Claude Code `PreToolUse` events
//! (tests/fixtures/claude-code) against a running server: the answer's format exactly,
//! held calls released, modified or rejected by a reviewer while the hook waits, the
//! timeout, and failing closed.

use crate::common::*;
use app::api::Role;
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/claude-code/{name}.json"));
    std::fs::read_to_string(path).unwrap()
}

struct Hooked {
    answer: Value,
    stdout: String,
    code: i32,
}

/// Run the hook as Claude Code does: the event on stdin, the answer on stdout.
fn run_hook(base: &str, agent: &TestAgent, event: &str, args: &[&str]) -> Hooked {
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["hook", "claude-code", "--url", base, "--agent", &agent.id])
        .args(args)
        .env("AIRLOCK_SECRET", agent.secret.reveal())
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    Hooked {
        answer: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stdout,
        code: out.status.code().unwrap_or(-1),
    }
}

/// The hook running in the background (a reviewer decides meanwhile).
fn hook_later(app: &TestApp, agent: &TestAgent, event: &str, args: &[&str]) -> tokio::task::JoinHandle<Hooked> {
    let (base, agent, event) = (app.url(""), agent.clone(), event.to_string());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_hook(base.trim_end_matches('/'), &agent, &event, &args)
    })
}

async fn hook(app: &TestApp, agent: &TestAgent, event: &str, args: &[&str]) -> Hooked {
    hook_later(app, agent, event, args).await.unwrap()
}

/// The answer, checked to be exactly one line of JSON with exactly Claude Code's fields.
fn decision(h: &Hooked) -> (String, String, Option<Value>) {
    assert_eq!(h.code, 0, "{}", h.stdout);
    assert_eq!(h.stdout.lines().count(), 1, "{}", h.stdout);
    let top = h.answer.as_object().unwrap_or_else(|| panic!("not JSON: {}", h.stdout));
    assert_eq!(top.keys().collect::<Vec<_>>(), ["hookSpecificOutput"]);
    let out = top["hookSpecificOutput"].as_object().unwrap();
    let mut keys: Vec<&str> = out.keys().map(String::as_str).collect();
    keys.sort();
    let updated = out.get("updatedInput").cloned();
    let want: &[&str] = if updated.is_some() {
        &[
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
        ]
    } else {
        &["hookEventName", "permissionDecision", "permissionDecisionReason"]
    };
    assert_eq!(keys, want, "{}", h.stdout);
    assert_eq!(out["hookEventName"], "PreToolUse");
    (
        out["permissionDecision"].as_str().unwrap().to_string(),
        out["permissionDecisionReason"].as_str().unwrap().to_string(),
        updated,
    )
}

async fn latest_call(app: &TestApp) -> (String, String, String, Option<String>) {
    sqlx::query_as("SELECT id, tool, status, server FROM tool_calls ORDER BY rowid DESC LIMIT 1")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_hook_answers_allow_and_deny_in_claude_codes_format_and_fails_closed() {
    let app = spawn_app().await;
    let agent = app.agent("claude-code").await;

    let h = hook(&app, &agent, &fixture("read"), &[]).await;
    let (id, tool, status, _) = latest_call(&app).await;
    assert_eq!((tool.as_str(), status.as_str()), ("claude_code.read", "allowed"));
    assert_eq!(
        decision(&h),
        ("allow".into(), format!("Airlock: allowed by policy ({id})"), None)
    );

    let h = hook(&app, &agent, &fixture("bash-dangerous"), &[]).await;
    let (d, why, _) = decision(&h);
    assert_eq!(d, "deny");
    assert!(why.starts_with("Airlock: denied by the command_guard layer: "), "{why}");
    assert_eq!(latest_call(&app).await.1, "claude_code.bash");

    // An MCP tool keeps its name and names its server; still held after no wait, `deny`
    // leaves it in the queue.
    let h = hook(&app, &agent, &fixture("mcp"), &["--wait", "0", "--on-timeout", "deny"]).await;
    let (id, tool, status, server) = latest_call(&app).await;
    assert_eq!(
        (tool.as_str(), status.as_str(), server.as_deref()),
        (
            "mcp__chrome-devtools__navigate_page",
            "pending",
            Some("chrome-devtools")
        )
    );
    assert_eq!(
        decision(&h),
        (
            "deny".into(),
            format!("Airlock: call {id} is held for review and nobody decided within 0 s; it stays in the queue"),
            None
        )
    );

    // Anything wrong answers deny.
    for (event, want) in [
        ("{not json", "the hook event could not be read"),
        (
            r#"{"session_id":"s","tool_input":{}}"#,
            "the hook event could not be read",
        ),
        (
            r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{}}"#,
            "answers PreToolUse events",
        ),
    ] {
        let (d, why, _) = decision(&hook(&app, &agent, event, &[]).await);
        assert_eq!(d, "deny");
        assert!(why.contains(want), "{event}: {why}");
    }
    let nobody = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let h = tokio::task::spawn_blocking({
        let agent = agent.clone();
        move || run_hook(&nobody, &agent, &fixture("read"), &[])
    })
    .await
    .unwrap();
    let (d, why, _) = decision(&h);
    assert_eq!(d, "deny");
    assert!(why.contains("did not answer"), "{why}");
    // A wrong secret: Airlock's refusal, as a deny.
    let mut impostor = agent.clone();
    impostor.secret = server::agents::SigningSecret::generate();
    let (d, why, _) = decision(&hook(&app, &impostor, &fixture("read"), &[]).await);
    assert_eq!(d, "deny");
    assert!(why.contains("401 Unauthorized bad_signature"), "{why}");
    // No secret at all: the hook is misconfigured (exit 2, which Claude Code treats as a block).
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["hook", "claude-code"])
        .env_remove("AIRLOCK_SECRET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("AIRLOCK_SECRET"));
}

#[tokio::test]
async fn held_calls_wait_for_a_reviewer_who_approves_modifies_or_rejects() {
    let app = spawn_app().await;
    let agent = app.agent("claude-code").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;

    // Approved while the hook waits.
    let waiting = hook_later(&app, &agent, &fixture("edit"), &["--wait", "30"]);
    let id = alice.held_in_queue(&app, "claude_code.edit").await;
    let out = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(out["ok"], true, "{out}");
    let h = waiting.await.unwrap();
    assert_eq!(
        decision(&h),
        ("allow".into(), format!("Airlock: approved by user:alice ({id})"), None)
    );
    // The same event again (same tool_use_id) is the same call, already decided.
    let again = hook(&app, &agent, &fixture("edit"), &["--wait", "0"]).await;
    assert_eq!(decision(&again), decision(&h));

    // Modified: Claude runs the reviewer's version.
    let waiting = hook_later(&app, &agent, &fixture("bash-tests"), &["--wait", "30"]);
    let id = alice.held_in_queue(&app, "claude_code.bash").await;
    let changed = json!({"command": "cargo test -p shop", "description": "Run the tests", "timeout": 600000});
    let out = alice
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &changed.to_string())])
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let h = waiting.await.unwrap();
    assert_eq!(
        decision(&h),
        (
            "allow".into(),
            format!("Airlock: modified and approved by user:alice ({id}); run the reviewer's version"),
            Some(changed)
        )
    );

    // Rejected: the reviewer's reason reaches Claude.
    let waiting = hook_later(&app, &agent, &fixture("write"), &["--wait", "30"]);
    let id = alice.held_in_queue(&app, "claude_code.write").await;
    let out = alice
        .decide(
            &app,
            &id,
            &[("verdict", "reject"), ("text", "notes belong in the wiki")],
        )
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let h = waiting.await.unwrap();
    assert_eq!(
        decision(&h),
        (
            "deny".into(),
            "Airlock: rejected by user:alice: notes belong in the wiki".into(),
            None
        )
    );
}

#[tokio::test]
async fn nobody_deciding_in_time_hands_the_call_to_the_terminal_and_withdraws_it() {
    let app = spawn_app().await;
    let agent = app.agent("claude-code").await;
    let h = hook(&app, &agent, &fixture("write"), &["--wait", "1"]).await;
    let (id, tool, status, _) = latest_call(&app).await;
    assert_eq!(tool, "claude_code.write");
    assert_eq!(
        decision(&h),
        (
            "ask".into(),
            format!(
                "Airlock: call {id} was held for review and nobody decided within 1 s; it was withdrawn from the \
                 queue, so you decide here"
            ),
            None
        )
    );
    // Withdrawn: no reviewer can approve it afterwards.
    assert_eq!(status, "cancelled");
}
