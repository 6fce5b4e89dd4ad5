//! `airlock mcp-proxy`, the real binary between a scripted MCP client (rmcp) and a real MCP
//! server process (the filesystem server from npm, installed by scripts/setup.sh --e2e):
//! allow, deny (guard and allowlist), a reviewer's modification reaching the server, and
//! approve-all for the MCP server.

use crate::common::*;
use app::api::Role;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The MCP filesystem server's entry point, installed by `scripts/setup.sh --e2e`.
fn filesystem_server() -> PathBuf {
    let tools = std::env::var("AIRLOCK_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/airlock/tools"));
    let js = tools.join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        js.exists(),
        "{} is missing: run scripts/setup.sh --e2e (scripts/test.sh does)",
        js.display()
    );
    js
}

/// A policy for the `fs` MCP server: reads free inside `root`, writes and listings held
/// (grantable), everything else denied.
fn policy(root: &Path) -> String {
    let root = root.display();
    format!(
        r#"[policy]
name = "mcp-proxy-test"

[fences.files]
roots = ["{root}"]
allow_root = true

[tools.mcp__fs__read_text_file]
server = "fs"
risk = "low"
approval = "auto"
arguments = {{ type = "object", required = ["path"], properties = {{ path = {{ type = "string" }}, head = {{ type = "number" }}, tail = {{ type = "number" }} }} }}
path_guards = [{{ fence = "files", args = ["path"] }}]

[tools.mcp__fs__write_file]
server = "fs"
risk = "medium"
destructive = true
grantable = true
approval = "ask"
arguments = {{ type = "object", required = ["path", "content"], properties = {{ path = {{ type = "string" }}, content = {{ type = "string" }} }} }}
path_guards = [{{ fence = "files", args = ["path"] }}]

[tools.mcp__fs__list_directory]
server = "fs"
risk = "low"
approval = "ask"
arguments = {{ type = "object", required = ["path"], properties = {{ path = {{ type = "string" }} }} }}
path_guards = [{{ fence = "files", args = ["path"] }}]
"#
    )
}

/// The scripted client: counts the progress notifications it hears.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<AtomicUsize>,
}

impl ClientHandler for Client {
    async fn on_progress(&self, _params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.fetch_add(1, Ordering::Relaxed);
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(mcp: &RunningService<RoleClient, Client>, tool: &str, a: Value) -> CallToolResult {
    mcp.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args(a)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_mcp_server_behind_the_proxy_is_gated_call_by_call() {
    let fs_server = filesystem_server();
    let files = tempfile::tempdir().unwrap();
    // The filesystem server compares real paths.
    let root = files.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\nship on friday\n").unwrap();
    let app = spawn_with(|c| {
        let file = c.site_root.parent().unwrap().join("mcp-policy.toml");
        std::fs::write(&file, policy(&root)).unwrap();
        c.policy_file = file;
    })
    .await;
    let agent = app.agent("ide").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;

    let mut proxy = tokio::process::Command::new(env!("CARGO_BIN_EXE_airlock"));
    proxy
        .args([
            "mcp-proxy",
            "--url",
            app.url("").trim_end_matches('/'),
            "--agent",
            "ide",
            "--server",
            "fs",
        ])
        .args(["--session", "mcp-s1", "--", "node"])
        .arg(&fs_server)
        .arg(&root)
        .env("AIRLOCK_SECRET", agent.secret.reveal());
    let client = Client::default();
    let mcp = client
        .clone()
        .serve(rmcp::transport::TokioChildProcess::new(proxy).unwrap())
        .await
        .expect("the proxy speaks MCP");

    // The server's own tools, unchanged.
    let tools: Vec<String> = mcp
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    for t in ["read_text_file", "write_file", "list_directory", "move_file"] {
        assert!(tools.contains(&t.to_string()), "{tools:?}");
    }

    // Allowed: forwarded, the server's answer comes back, the result is reported.
    let notes = root.join("notes.md").display().to_string();
    let r = call(&mcp, "read_text_file", json!({"path": notes})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("ship on friday"), "{}", text(&r));
    let id: String = sqlx::query_scalar("SELECT id FROM tool_calls ORDER BY rowid DESC LIMIT 1")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let (_, c) = agent.get(&id, 0).await;
    assert_eq!(
        (&c["tool"], &c["server"], &c["status"], &c["result"]),
        (
            &json!("mcp__fs__read_text_file"),
            &json!("fs"),
            &json!("allowed"),
            &json!("ok")
        ),
        "{c}"
    );

    // Denied by a guard and by the allowlist: an MCP tool error saying why; never forwarded.
    let r = call(&mcp, "read_text_file", json!({"path": "/etc/hostname"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Airlock: denied by the path_guard layer"),
        "{}",
        text(&r)
    );
    let r = call(
        &mcp,
        "move_file",
        json!({"source": notes, "destination": root.join("gone.md").display().to_string()}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Airlock: denied by the allowlist layer"),
        "{}",
        text(&r)
    );
    // Other spellings of an allowed tool are other tools, and not on the allowlist.
    for spelling in [
        "READ_TEXT_FILE",
        "Read_text_file",
        "read_text_file\u{200b}",
        "read_text_file ",
        "read-text-file",
    ] {
        let r = call(&mcp, spelling, json!({"path": notes})).await;
        assert_eq!(r.is_error, Some(true), "{spelling}");
        assert!(
            text(&r).starts_with("Airlock: denied by the allowlist layer"),
            "{spelling}: {}",
            text(&r)
        );
    }
    assert!(root.join("notes.md").exists(), "a denied call never reaches the server");

    // Held: the client waits (hearing progress) while a reviewer modifies the call; the
    // server runs the reviewer's version.
    let report = root.join("report.md").display().to_string();
    let waiting = tokio::spawn({
        let mcp = mcp.peer().clone();
        let report = report.clone();
        async move {
            mcp.call_tool(
                CallToolRequestParams::new("write_file")
                    .with_arguments(args(json!({"path": report, "content": "draft with a typo"}))),
            )
            .await
            .unwrap()
        }
    });
    let id = alice.held_in_queue(&app, "mcp__fs__write_file").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let edited = json!({"path": report, "content": "final text"});
    let out = alice
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edited.to_string())])
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let r = waiting.await.unwrap();
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "final text");
    assert!(
        client.progress.load(Ordering::Relaxed) >= 1,
        "a held call sends progress"
    );

    // Approve-all for the MCP server: approving one held call with a server grant releases
    // the server's later calls in this session without a person.
    let waiting = tokio::spawn({
        let mcp = mcp.peer().clone();
        let dir = root.display().to_string();
        async move {
            mcp.call_tool(CallToolRequestParams::new("list_directory").with_arguments(args(json!({"path": dir}))))
                .await
                .unwrap()
        }
    });
    let id = alice.held_in_queue(&app, "mcp__fs__list_directory").await;
    let out = alice
        .decide(
            &app,
            &id,
            &[
                ("verdict", "approve"),
                ("grant_scope", "server"),
                ("grant_minutes", "10"),
            ],
        )
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let r = waiting.await.unwrap();
    assert!(text(&r).contains("notes.md"), "{}", text(&r));
    let later = root.join("later.md").display().to_string();
    let r = call(&mcp, "write_file", json!({"path": later, "content": "by the grant"})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&later).unwrap(), "by the grant");
    let (status, decided_by): (String, Option<String>) =
        sqlx::query_as("SELECT status, decided_by FROM tool_calls ORDER BY rowid DESC LIMIT 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(status, "allowed");
    assert!(decided_by.unwrap_or_default().starts_with("grant:"));
    // Still never past the guards.
    let r = call(&mcp, "write_file", json!({"path": "/tmp/outside.md", "content": "x"})).await;
    assert!(
        text(&r).starts_with("Airlock: denied by the path_guard layer"),
        "{}",
        text(&r)
    );

    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn the_proxy_refuses_to_start_without_what_it_needs() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["mcp-proxy", "--agent", "ide", "--server", "Bad Name", "--", "true"])
        .env("AIRLOCK_SECRET", server::agents::SigningSecret::generate().reveal())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--server \"Bad Name\""));
    assert!(out.stdout.is_empty(), "stdout is the MCP channel");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["mcp-proxy", "--agent", "ide", "--server", "fs", "--", "true"])
        .env_remove("AIRLOCK_SECRET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("AIRLOCK_SECRET"));
}
