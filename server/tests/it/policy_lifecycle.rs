//! Policy lifecycle: a change put in force without a restart (the admin page, the CLI,
//! SIGHUP, a rollback) decides the next call, a broken policy changes nothing, a reload
//! under load drops no request, and a replay tells which recorded decisions would change.

use crate::common::*;
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};
use server::agents::SigningSecret;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn write(session: &str, path: &str) -> Value {
    json!({"session_id": session, "tool": "write_file", "arguments": {"path": path, "content": "# Report"},
           "context": {"trust": "isolated"}})
}

fn read(session: &str, path: &str) -> Value {
    json!({"session_id": session, "tool": "read_file", "arguments": {"path": path}})
}

fn demo() -> String {
    std::fs::read_to_string(workspace().join("policies/demo.toml")).unwrap()
}

/// The demo policy with `write_file` allowed without a person.
fn relaxed() -> String {
    let from = "risk = \"medium\"\ndestructive = true\napproval = \"ask\"\ngrantable = true";
    let s = demo();
    assert!(
        s.contains(from),
        "the demo policy's write_file changed; update this test"
    );
    s.replacen(from, &from.replace("\"ask\"", "\"auto\""), 1)
}

const BROKEN: &str = "[policy]\nname = \"demo\"\n\n[tools.read_file]\napproval = \"sometimes\"\n";

/// A server whose policy file is its own copy of the demo policy (changes write it).
async fn spawn_own_policy() -> TestApp {
    spawn_with(|c| {
        let file = c.site_root.parent().unwrap().join("policy.toml");
        std::fs::write(&file, demo()).unwrap();
        c.policy_file = file;
        c.agent_rate_per_second = 0;
    })
    .await
}

async fn status_of(agent: &TestAgent, body: Value) -> (String, String) {
    let (s, v) = agent.propose(body).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    (
        v["status"].as_str().unwrap().to_string(),
        v["policy_version"].as_str().unwrap().to_string(),
    )
}

async fn kinds(app: &TestApp) -> Vec<String> {
    sqlx::query_scalar("SELECT kind FROM audit_events ORDER BY seq")
        .fetch_all(&app.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_admin_applies_a_policy_from_the_page_and_the_next_call_is_decided_under_it() {
    let app = spawn_own_policy().await;
    let file = app.db_dir().join("policy.toml");
    let agent = app.agent("bot").await;
    let admin = reviewer(&app, "adam", Role::Admin).await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let (held_status, v1) = status_of(&agent, write("s", "out/a.md")).await;
    assert_eq!(held_status, "pending");
    let held_id = {
        let (_, v) = agent.propose(write("s", "out/held.md")).await;
        v["id"].as_str().unwrap().to_string()
    };

    // Checking and applying a broken text: every problem at its line, nothing changes.
    let (s, check) = admin.post(&app, "/api/policy/check", &[("source", BROKEN)]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(check["ok"], false, "{check}");
    let problem = &check["problems"][0];
    assert_eq!(problem["line"], 5, "{check}");
    assert_eq!(problem["text"], "approval = \"sometimes\"", "{check}");
    let (_, out) = admin.post(&app, "/api/policy/apply", &[("source", BROKEN)]).await;
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["message"].as_str().unwrap().contains("nothing changed"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), demo());
    assert_eq!(
        status_of(&agent, write("s", "out/b.md")).await,
        ("pending".into(), v1.clone())
    );

    // A text over the size limit is refused before it is read.
    let huge = format!("{}\n# {}", demo(), "x".repeat(600 * 1024));
    let (_, out) = admin.post(&app, "/api/policy/apply", &[("source", &huge)]).await;
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["message"].as_str().unwrap().contains("over 512 KiB"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), demo());

    // Only admins change the policy.
    let (s, _) = alice.post(&app, "/api/policy/apply", &[("source", &relaxed())]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let r = alice.c.get(app.url("/api/policy")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // A good text is in force for the very next call, and written to the file.
    let (_, out) = admin
        .post(
            &app,
            "/api/policy/apply",
            &[("source", &relaxed()), ("note", "writes need no person")],
        )
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let v2 = out["version"].as_str().unwrap().to_string();
    assert_ne!(v2, v1);
    assert_eq!(
        status_of(&agent, write("s", "out/c.md")).await,
        ("allowed".into(), v2.clone())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), relaxed());
    let ready = app.ready().await;
    assert_eq!(ready["policy"]["version"], v2.as_str());
    // A call held before the change keeps the version it was held under.
    let (_, call) = agent.get(&held_id, 0).await;
    assert_eq!(call["status"], "pending");
    assert_eq!(call["policy_version"], v1.as_str());

    // The history: who, how, why, and the diff.
    let page = admin.get(&app, "/api/policy").await;
    assert_eq!(page["version"], v2.as_str());
    let latest = &page["changes"][0];
    assert_eq!(latest["version"], v2.as_str());
    assert_eq!(latest["previous"], v1.as_str());
    assert_eq!(latest["via"], "page");
    assert_eq!(latest["actor"], "user:adam");
    assert_eq!(latest["note"], "writes need no person");
    let diff = latest["diff"].as_array().unwrap();
    assert!(diff.contains(&json!(["-", "approval = \"ask\""])), "{diff:?}");
    assert!(diff.contains(&json!(["+", "approval = \"auto\""])), "{diff:?}");
    // The change with three lines of context either side; the rest folded.
    assert_eq!(diff.len(), 2 + 6 + 2, "{diff:?}");
    assert_eq!(diff[0][0], "…");
    assert_eq!(page["changes"][1]["via"], "start");

    // Rolling back puts the earlier version in force again.
    let (_, out) = admin.post(&app, "/api/policy/rollback", &[("version", &v1)]).await;
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(
        status_of(&agent, write("s", "out/d.md")).await,
        ("pending".into(), v1.clone())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), demo());
    let (_, out) = admin
        .post(&app, "/api/policy/rollback", &[("version", "sha256:nope")])
        .await;
    assert_eq!(out["ok"], false, "{out}");

    let k = kinds(&app).await;
    // The broken text and the oversized one.
    assert_eq!(k.iter().filter(|k| *k == "policy_refused").count(), 2, "{k:?}");
    assert_eq!(k.iter().filter(|k| *k == "policy_applied").count(), 2, "{k:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_under_load_drops_no_request() {
    let app = spawn_own_policy().await;
    let agent = app.agent("bot").await;
    let admin = reviewer(&app, "adam", Role::Admin).await;
    let mut senders = Vec::new();
    for w in 0..4 {
        let agent = agent.clone();
        senders.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for i in 0..40 {
                let body = if i % 2 == 0 {
                    write("load", &format!("out/{w}-{i}.md"))
                } else {
                    read("load", "notes.md")
                };
                let (s, v) = agent.propose(body).await;
                out.push((s, v));
            }
            out
        }));
    }
    let mut versions = std::collections::HashSet::new();
    for i in 0..8 {
        let source = if i % 2 == 0 { relaxed() } else { demo() };
        let (_, out) = admin.post(&app, "/api/policy/apply", &[("source", &source)]).await;
        assert_eq!(out["ok"], true, "{out}");
        versions.insert(out["version"].as_str().unwrap().to_string());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut answered = 0;
    for s in senders {
        for (status, v) in s.await.unwrap() {
            assert_eq!(status, StatusCode::OK, "{v}");
            let version = v["policy_version"].as_str().unwrap();
            assert!(versions.contains(version), "{v}");
            // Each call was judged wholly by the version it records.
            let relaxed_version = v["tool"] == "write_file" && v["status"] == "allowed";
            let strict_version = v["tool"] == "write_file" && v["status"] == "pending";
            assert!(v["tool"] == "read_file" || relaxed_version || strict_version, "{v}");
            answered += 1;
        }
    }
    assert_eq!(answered, 160);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM tool_calls")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored, 160);
    // Every write decided under the relaxed version was allowed, under the demo one held.
    let mixed: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT tc.status) FROM tool_calls tc GROUP BY tc.tool, tc.policy_id ORDER BY 1 DESC LIMIT 1",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(mixed, 1, "one version decided one tool two ways");
}

/// Run the real binary with this database and policy file.
fn airlock_cli(app: &TestApp, policy_file: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .env("AIRLOCK_DATABASE_URL", &app.database_url)
        .env("AIRLOCK_POLICY_FILE", policy_file)
        .env("AIRLOCK_KEY_FILE", &app.key_file)
        .env("AIRLOCK_LOG_LEVEL", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

async fn until_status(agent: &TestAgent, want: &str) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    loop {
        n += 1;
        let got = status_of(agent, write("s", &format!("out/poll-{n}.md"))).await;
        if got.0 == want || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_cli_applies_a_file_that_the_running_server_follows_and_refuses_a_broken_one() {
    let app = spawn_own_policy().await;
    let file = app.db_dir().join("policy.toml");
    let agent = app.agent("bot").await;
    let (_, v1) = status_of(&agent, write("s", "out/a.md")).await;
    let proposed = app.db_dir().join("proposed.toml");

    std::fs::write(&proposed, BROKEN).unwrap();
    let out = airlock_cli(&app, &file, &["policy", "apply", proposed.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("does not compile; nothing changed"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("line 5"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), demo());

    std::fs::write(&proposed, relaxed()).unwrap();
    let out = airlock_cli(
        &app,
        &file,
        &[
            "policy",
            "apply",
            proposed.to_str().unwrap(),
            "--note",
            "from the shell",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("is in force"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), relaxed());
    let (status, v2) = until_status(&agent, "allowed").await;
    assert_eq!(status, "allowed", "the server did not follow the change");
    assert_ne!(v2, v1);

    // The same file again changes nothing; the history lists the change.
    let out = airlock_cli(&app, &file, &["policy", "apply", proposed.to_str().unwrap()]);
    assert!(text(&out).contains("already in force"), "{}", text(&out));
    let out = airlock_cli(&app, &file, &["policy", "history"]);
    let history = text(&out);
    let first = history.lines().next().unwrap();
    assert!(
        first.contains("cli") && first.contains(&v2) && first.contains("from the shell"),
        "{history}"
    );
}

#[tokio::test]
async fn replay_tells_which_recorded_decisions_a_proposed_policy_would_change() {
    let app = spawn_own_policy().await;
    let file = app.db_dir().join("policy.toml");
    let agent = app.agent("bot").await;
    let other = app.agent("other").await;
    // The recorded history: three writes held, two reads allowed, one unknown tool denied,
    // and one write of another agent.
    for i in 0..3 {
        assert_eq!(status_of(&agent, write("s", &format!("out/{i}.md"))).await.0, "pending");
    }
    for _ in 0..2 {
        assert_eq!(status_of(&agent, read("s", "notes.md")).await.0, "allowed");
    }
    let (_, v) = agent
        .propose(json!({"session_id": "s", "tool": "format_disk", "arguments": {}}))
        .await;
    assert_eq!(v["status"], "denied");
    assert_eq!(status_of(&other, write("t", "out/x.md")).await.0, "pending");

    let proposed = app.db_dir().join("proposed.toml");
    std::fs::write(&proposed, relaxed()).unwrap();
    let out = airlock_cli(
        &app,
        &file,
        &[
            "policy",
            "replay",
            proposed.to_str().unwrap(),
            "--since",
            "1h",
            "--agent",
            "bot",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["replayed"], 6, "{report}");
    assert_eq!(report["changed"], 3, "{report}");
    assert_eq!(
        report["shifts"],
        json!([{"from": "pending", "to": "allowed", "count": 3}]),
        "{report}"
    );
    assert_eq!(report["tools"][0]["value"], "write_file", "{report}");
    assert_eq!(report["tools"][0]["count"], 3, "{report}");
    let examples = report["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 3, "{report}");
    assert!(
        examples.iter().all(|e| e["agent"] == "bot" && e["to"] == "allowed"),
        "{report}"
    );

    // The same through the page: keep the draft, replay it, every agent this time.
    let admin = reviewer(&app, "adam", Role::Admin).await;
    let (_, kept) = admin.post(&app, "/api/policy/draft", &[("source", &relaxed())]).await;
    assert_eq!(kept["ok"], true, "{kept}");
    let version = kept["version"].as_str().unwrap();
    let report = admin
        .get(
            &app,
            &format!("/api/policy/replay?version={}&since=1h", app::api::encode(version)),
        )
        .await;
    assert_eq!(report["replayed"], 7, "{report}");
    assert_eq!(report["changed"], 4, "{report}");
    // A replay changes nothing: the policy in force is still the demo one.
    assert_eq!(status_of(&agent, write("s", "out/after.md")).await.0, "pending");
    assert!(kinds(&app).await.contains(&"policy_replayed".to_string()));
    // The unchanged policy changes no decision. The report is standard output's alone,
    // whatever is logged meanwhile (logs go to standard error).
    std::fs::write(&proposed, demo()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["policy", "replay", proposed.to_str().unwrap(), "--json"])
        .env("AIRLOCK_DATABASE_URL", &app.database_url)
        .env("AIRLOCK_POLICY_FILE", &file)
        .env("AIRLOCK_KEY_FILE", &app.key_file)
        .env("AIRLOCK_LOG_LEVEL", "debug")
        .output()
        .unwrap();
    assert!(!out.stderr.is_empty(), "debug logging says something");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(report["changed"], 0, "{report}");
    assert_eq!(report["reasons_changed"], 0, "{report}");
}

async fn ready_version(http: &reqwest::Client, port: u16) -> Option<String> {
    let r = http.get(format!("http://127.0.0.1:{port}/readyz")).send().await.ok()?;
    let v: Value = r.json().await.ok()?;
    v["policy"]["version"].as_str().map(str::to_string)
}

#[tokio::test]
async fn sighup_reads_the_policy_file_again_and_a_broken_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.toml");
    std::fs::write(&file, demo()).unwrap();
    let port = free_port();
    let cmd = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_airlock"));
        c.args(args)
            .current_dir(dir.path())
            .env(
                "AIRLOCK_DATABASE_URL",
                format!("sqlite://{}/hup.db", dir.path().display()),
            )
            .env("AIRLOCK_KEY_FILE", dir.path().join("hup.key"))
            .env("AIRLOCK_POLICY_FILE", &file)
            .env("AIRLOCK_SITE_ROOT", dir.path().join("site"))
            .env("AIRLOCK_BIND", format!("127.0.0.1:{port}"))
            .env("AIRLOCK_COOKIE_SECURE", "false")
            .env("AIRLOCK_LOG_LEVEL", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    };
    let out = cmd(&["agent", "add", "hup"]).output().unwrap();
    assert!(out.status.success());
    let secret = SigningSecret::parse(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
    let mut child = cmd(&["serve"]).stdout(Stdio::null()).spawn().unwrap();
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let v1 = loop {
        if let Some(v) = ready_version(&http, port).await {
            break v;
        }
        assert!(Instant::now() < deadline, "server did not become ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let hup = |pid: u32| {
        assert!(Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .unwrap()
            .success())
    };
    let until_not = |from: String| {
        let http = http.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let v = ready_version(&http, port).await.unwrap_or_default();
                if v != from || Instant::now() > deadline {
                    return v;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };

    std::fs::write(&file, relaxed()).unwrap();
    hup(child.id());
    let v2 = until_not(v1.clone()).await;
    assert_ne!(v2, v1, "SIGHUP did not put the file in force");
    let body = write("s", "out/a.md").to_string();
    let req = http.post(format!("http://127.0.0.1:{port}/api/v1/tool-calls"));
    let r = server::demo_agent::signed(req, "hup", &secret, "msg_hup_1", body.as_bytes())
        .body(body)
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (v["status"].as_str(), v["policy_version"].as_str()),
        (Some("allowed"), Some(v2.as_str()))
    );

    // A broken file: the server keeps serving the policy in force.
    std::fs::write(&file, BROKEN).unwrap();
    hup(child.id());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(ready_version(&http, port).await.as_deref(), Some(v2.as_str()));
    let _ = child.kill();
    let _ = child.wait();
    let db = server::store::connect(&format!("sqlite://{}/hup.db", dir.path().display()).into())
        .await
        .unwrap();
    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT kind FROM audit_events WHERE kind LIKE 'policy_%' ORDER BY seq")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(kinds, ["policy_loaded", "policy_applied", "policy_refused"]);
}
