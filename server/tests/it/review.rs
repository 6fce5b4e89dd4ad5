//! Reviewer decisions through real HTTP (server functions) and a real SQLite file: the
//! rules the dashboard relies on, without a browser.

use crate::common::{audit_kinds, held, reviewer, spawn_app};
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn write(session: &str, path: &str) -> Value {
    json!({"session_id": session, "tool": "write_file", "arguments": {"path": path, "content": "# Report"},
           "context": {"trust": "isolated"}})
}

#[tokio::test]
async fn a_held_call_is_queued_approved_once_and_the_long_poll_wakes_with_it() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Oncall).await;
    let id = held(&agent, write("s-1", "out/a.md")).await;

    let q = alice.get(&app, "/api/queue").await;
    let item = &q["items"][0];
    assert_eq!(item["id"], id.as_str());
    assert_eq!(
        (item["tool"].as_str(), item["risk"].as_str()),
        (Some("write_file"), Some("medium"))
    );
    assert_eq!(item["destructive"], true);
    assert!(item["rule"].as_str().unwrap().contains("write_file"));
    assert!(item["expires_at_ms"].as_i64().unwrap() > q["now_ms"].as_i64().unwrap());

    let poll = agent.poll_later(&id, 30);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let out = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(
        (out["ok"].as_bool(), out["status"].as_str()),
        (Some(true), Some("approved")),
        "{out}"
    );
    let (s, v) = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["status"], "approved");
    assert_eq!(v["decided_by"], "user:alice");
    assert_eq!(v["arguments"]["path"], "out/a.md");

    // A second decision is refused and names who decided.
    let again = bob.decide(&app, &id, &[("verdict", "reject"), ("text", "no")]).await;
    assert_eq!(again["ok"], false);
    assert_eq!(again["message"], "Already approved by alice.");
    assert_eq!(alice.get(&app, "/api/queue").await["items"], json!([]));
    assert_eq!(audit_kinds(&app, &id).await, ["call_received", "call_decided"]);
}

#[tokio::test]
async fn a_modification_is_revalidated_by_the_engine_and_released_with_its_secrets() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let secret = "sk-live-4eC39HqLyjWDarjtT1zdp7dc";
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "write_file",
               "arguments": {"path": "out/a.md", "content": format!("key={secret}")}}),
    )
    .await;
    let detail = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    let shown = detail["arguments"].as_str().unwrap();
    assert!(
        !shown.contains(secret),
        "the review page never sees the secret: {shown}"
    );
    let edit: Value = serde_json::from_str(shown).unwrap();

    // Outside the fence, an unknown field, broken JSON, a moved marker: each refused.
    let mut outside = edit.clone();
    outside["path"] = json!("/etc/cron.d/evil");
    let mut extra = edit.clone();
    extra["mode"] = json!("0777");
    let mut moved = edit.clone();
    moved["path"] = edit["content"].clone();
    for (args, want) in [
        // A kept secret may not go to a new place, even inside the fence.
        (outside.to_string(), "new place"),
        (extra.to_string(), "schema"),
        ("{\"path\":".to_string(), "not valid JSON"),
        (moved.to_string(), "redacted value"),
        (edit.to_string(), "unchanged"),
    ] {
        let out = alice
            .decide(&app, &id, &[("verdict", "modify"), ("arguments", &args)])
            .await;
        assert_eq!(out["ok"], false, "{args}");
        assert!(out["message"].as_str().unwrap().contains(want), "{want}: {out}");
    }
    assert_eq!(
        agent.get(&id, 0).await.1["status"],
        "pending",
        "refused edits change nothing"
    );

    let mut inside = edit.clone();
    inside["path"] = json!("out/b.md");
    let out = alice
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &inside.to_string())])
        .await;
    assert!(out["message"].as_str().unwrap().contains("new place"), "{out}");

    // Without a secret to carry, the path guard judges the new path.
    let plain = held(&agent, write("s", "out/c.md")).await;
    let edit = json!({"path": "/etc/cron.d/evil", "content": "# Report"});
    let out = alice
        .decide(&app, &plain, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert!(out["message"].as_str().unwrap().contains("path_guard"), "{out}");

    // A change that sends the secret nowhere new is released with the secret in place.
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "send_email",
               "arguments": {"to": "ops@example.com", "subject": "key", "body": format!("key={secret}")}}),
    )
    .await;
    let detail = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    let mut edit: Value = serde_json::from_str(detail["arguments"].as_str().unwrap()).unwrap();
    edit["subject"] = json!("The new key");
    let out = alice
        .decide(
            &app,
            &id,
            &[
                ("verdict", "modify"),
                ("arguments", &edit.to_string()),
                ("text", "clearer subject"),
            ],
        )
        .await;
    assert_eq!(out["status"], "modified", "{out}");
    let (_, v) = agent.get(&id, 5).await;
    assert_eq!(v["status"], "modified");
    assert_eq!(
        v["arguments"],
        json!({"to": "ops@example.com", "subject": "The new key", "body": format!("key={secret}")})
    );
    assert_eq!(v["comment"], "clearer subject");

    let data: String = sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = 'call_decided' AND call_id = $1")
        .bind(&id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    let data: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(data["original"]["subject"], "key");
    assert_eq!(data["modified"]["subject"], "The new key");
    let all: Vec<String> = sqlx::query_scalar("SELECT data FROM audit_events")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert!(all.iter().all(|d| !d.contains(secret)), "no secret in the audit trail");
    let shown = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    assert!(!shown.to_string().contains(secret));
}

#[tokio::test]
async fn reject_needs_a_reason_that_reaches_the_agent_and_skip_ends_the_call() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let a = held(&agent, write("s", "out/a.md")).await;
    let out = alice.decide(&app, &a, &[("verdict", "reject"), ("text", "   ")]).await;
    assert_eq!(out["ok"], false);
    assert!(out["message"].as_str().unwrap().contains("needs a reason"));
    let out = alice
        .decide(
            &app,
            &a,
            &[("verdict", "reject"), ("text", "write the report to docs/ instead")],
        )
        .await;
    assert_eq!(out["status"], "rejected");
    let (_, v) = agent.get(&a, 0).await;
    assert_eq!(
        (v["status"].as_str(), v["comment"].as_str()),
        (Some("rejected"), Some("write the report to docs/ instead"))
    );
    assert_eq!(v["arguments"], Value::Null, "nothing to execute");

    let b = held(&agent, write("s", "out/b.md")).await;
    assert_eq!(
        alice.decide(&app, &b, &[("verdict", "skip")]).await["status"],
        "skipped"
    );
    assert_eq!(agent.get(&b, 0).await.1["status"], "skipped");
}

#[tokio::test]
async fn a_quorum_needs_distinct_approvers_and_one_rejection_ends_it() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Oncall).await;
    let refund =
        json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": 60000}});
    let id = held(&agent, refund.clone()).await;
    assert_eq!(agent.get(&id, 0).await.1["approvers_required"], 2);

    let first = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(
        (first["ok"].as_bool(), first["status"].as_str()),
        (Some(true), Some("pending"))
    );
    assert!(first["message"].as_str().unwrap().contains("1 of 2"));
    let twice = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(twice["ok"], false);
    assert!(twice["message"].as_str().unwrap().contains("already approved"));
    let q = bob.get(&app, "/api/queue").await;
    assert_eq!(q["items"][0]["approvals"], json!(["user:alice"]));
    assert_eq!(
        bob.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "approved"
    );
    let (_, v) = agent.get(&id, 0).await;
    assert_eq!(
        (v["status"].as_str(), v["decided_by"].as_str()),
        (Some("approved"), Some("user:alice, user:bob"))
    );
    assert_eq!(
        audit_kinds(&app, &id).await,
        [
            "call_received",
            "call_approval_recorded",
            "review_refused",
            "call_decided"
        ],
        "the second approval by the same person is refused and audited"
    );

    let id = held(&agent, refund).await;
    alice.decide(&app, &id, &[("verdict", "approve")]).await;
    let out = bob
        .decide(&app, &id, &[("verdict", "reject"), ("text", "too large")])
        .await;
    assert_eq!(out["status"], "rejected");
    assert_eq!(agent.get(&id, 0).await.1["status"], "rejected");
}

#[tokio::test]
async fn grants_release_follow_ups_until_revoked_never_past_guards_and_end_on_a_trust_change() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let first = held(&agent, write("s-1", "out/1.md")).await;
    let out = alice
        .decide(
            &app,
            &first,
            &[("verdict", "approve"), ("grant_scope", "tool"), ("grant_minutes", "30")],
        )
        .await;
    assert_eq!(out["status"], "approved", "{out}");
    assert!(out["message"].as_str().unwrap().contains("30 minutes"));

    // The same session's next write is allowed by the grant; another session's is held.
    let (_, v) = agent.propose(write("s-1", "out/2.md")).await;
    assert_eq!(v["status"], "allowed", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("grant"));
    held(&agent, write("s-2", "out/2.md")).await;
    // A grant never passes the guards.
    let (_, v) = agent.propose(write("s-1", "/etc/passwd")).await;
    assert_eq!(
        (v["status"].as_str(), v["blocked_by"].as_str()),
        (Some("denied"), Some("path_guard"))
    );

    let grants = alice.get(&app, "/api/grants/list").await;
    let gid = grants["active"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(grants["active"][0]["name"], "write_file");
    let r = alice
        .c
        .post(app.url("/api/grants/revoke"))
        .form(&[("csrf_token", alice.token.as_str()), ("id", &gid)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    held(&agent, write("s-1", "out/3.md")).await;
    let r = alice
        .c
        .post(app.url("/api/grants/revoke"))
        .form(&[("csrf_token", alice.token.as_str()), ("id", &gid)])
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::BAD_REQUEST,
        "a revoked grant cannot be revoked again"
    );

    // An MCP-server grant covers the server's other tools; a trust change ends it.
    let snap = |trust: &str| {
        json!({"session_id": "s-3", "tool": "mcp__chrome-devtools__take_snapshot", "server": "chrome-devtools",
               "arguments": {}, "context": {"trust": trust}})
    };
    let id = held(&agent, snap("isolated")).await;
    let out = alice
        .decide(
            &app,
            &id,
            &[
                ("verdict", "approve"),
                ("grant_scope", "server"),
                ("grant_minutes", "5"),
            ],
        )
        .await;
    assert_eq!(out["status"], "approved", "{out}");
    let click = json!({"session_id": "s-3", "tool": "mcp__chrome-devtools__click", "server": "chrome-devtools",
                       "arguments": {"uid": "1_2"}, "context": {"trust": "isolated"}});
    assert_eq!(agent.propose(click.clone()).await.1["status"], "allowed");
    held(&agent, snap("shared-browser")).await;
    assert_eq!(
        agent.propose(click).await.1["status"],
        "pending",
        "the grant ended with the trust change"
    );
    let grants = alice.get(&app, "/api/grants/list").await;
    assert_eq!(grants["active"], json!([]));
    let ended = grants["ended"].as_array().unwrap();
    assert!(
        ended
            .iter()
            .any(|g| g["revoked_by"] == "system"
                && g["revoke_reason"].as_str().unwrap().contains("trust context changed"))
    );
    let kinds: Vec<String> = sqlx::query_scalar("SELECT kind FROM audit_events WHERE kind LIKE 'grant_%' ORDER BY seq")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(
        kinds,
        ["grant_created", "grant_revoked", "grant_created", "grant_revoked"]
    );
}

#[tokio::test]
async fn of_concurrent_decisions_exactly_one_wins() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = std::sync::Arc::new(reviewer(&app, "alice", Role::Reviewer).await);
    let bob = std::sync::Arc::new(reviewer(&app, "bob", Role::Reviewer).await);
    for round in 0..3 {
        let id = held(&agent, write("s", &format!("out/{round}.md"))).await;
        let mut tasks = Vec::new();
        for i in 0..8 {
            let r = if i % 2 == 0 { alice.clone() } else { bob.clone() };
            let (id, url) = (id.clone(), app.url("/api/calls/decide"));
            tasks.push(tokio::spawn(async move {
                let verdict = if i % 3 == 0 { "reject" } else { "approve" };
                let form = [
                    ("csrf_token", r.token.as_str()),
                    ("id", &id),
                    ("verdict", verdict),
                    ("text", "race"),
                ];
                let v: Value = r.c.post(url).form(&form).send().await.unwrap().json().await.unwrap();
                v
            }));
        }
        let mut outs = Vec::new();
        for t in tasks {
            outs.push(t.await.unwrap());
        }
        let wins: Vec<&Value> = outs.iter().filter(|o| o["ok"] == true).collect();
        assert_eq!(wins.len(), 1, "{outs:?}");
        for o in outs.iter().filter(|o| o["ok"] == false) {
            let m = o["message"].as_str().unwrap();
            assert!(m.starts_with("Already ") || m.contains("already approved"), "{m}");
        }
        let decided: i64 =
            sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE kind = 'call_decided' AND call_id = $1")
                .bind(&id)
                .fetch_one(&app.db)
                .await
                .unwrap();
        assert_eq!(decided, 1);
    }
}

#[tokio::test]
async fn cancelled_and_expired_calls_cannot_be_decided() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let id = held(&agent, write("s", "out/a.md")).await;
    let (s, _) = agent
        .call(reqwest::Method::POST, &format!("/api/v1/tool-calls/{id}/cancel"), "")
        .await;
    assert_eq!(s, StatusCode::OK);
    let out = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(out["message"], "Already cancelled by agent:bot.");

    let id = held(&agent, write("s", "out/b.md")).await;
    sqlx::query("UPDATE tool_calls SET expires_at_ms = 1 WHERE id = $1")
        .bind(&id)
        .execute(&app.db)
        .await
        .unwrap();
    let out = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(out["ok"], false);
    assert!(out["message"].as_str().unwrap().contains("expired"), "{out}");
    let out = alice.decide(&app, "tc_nope", &[("verdict", "approve")]).await;
    assert_eq!(out["message"], "no such call");
}

#[tokio::test]
async fn batch_decisions_check_each_call_and_report_each_result() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(held(&agent, write("s", &format!("out/{i}.md"))).await);
    }
    alice.decide(&app, &ids[1], &[("verdict", "skip")]).await;
    ids.push("tc_missing".into());
    let (status, outs) = alice.batch(&app, &ids, "approve", "").await;
    assert_eq!(status, StatusCode::OK);
    let outs = outs.as_array().unwrap();
    let oks: Vec<bool> = outs.iter().map(|o| o["ok"].as_bool().unwrap()).collect();
    assert_eq!(oks, [true, false, true, false], "{outs:?}");
    assert_eq!(outs[1]["message"], "Already skipped by alice.");
    assert_eq!(outs[3]["message"], "no such call");

    // A batch rejection needs its one reason; modify is not a batch action.
    let more = vec![
        held(&agent, write("s", "out/x.md")).await,
        held(&agent, write("s", "out/y.md")).await,
    ];
    let (_, outs) = alice.batch(&app, &more, "reject", "").await;
    assert!(outs.as_array().unwrap().iter().all(|o| o["ok"] == false));
    let (_, outs) = alice.batch(&app, &more, "reject", "not now").await;
    assert!(
        outs.as_array().unwrap().iter().all(|o| o["status"] == "rejected"),
        "{outs:?}"
    );
    let (status, _) = alice.batch(&app, &more, "modify", "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn only_reviewers_and_oncall_decide_and_everyone_signed_in_may_look() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let id = held(&agent, write("s", "out/a.md")).await;
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let admin = reviewer(&app, "adam", Role::Admin).await;
    for who in [&auditor, &admin] {
        assert_eq!(who.get(&app, "/api/queue").await["items"][0]["id"], id.as_str());
        assert_eq!(
            who.get(&app, &format!("/api/calls/get?id={id}")).await["status"],
            "pending"
        );
        assert_eq!(who.get(&app, "/api/grants/list").await["active"], json!([]));
        let r = who.decide_raw(&app, &id, &[("verdict", "approve")]).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let (status, _) = who.batch(&app, std::slice::from_ref(&id), "approve", "").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let r = who
            .c
            .post(app.url("/api/grants/revoke"))
            .form(&[("csrf_token", who.token.as_str()), ("id", "gr_x")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
    }
    let anon = crate::common::client();
    for path in ["/api/queue", "/api/grants/list"] {
        assert_eq!(
            anon.get(app.url(path)).send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let r = anon
        .get(app.url(&format!("/api/calls/get?id={id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // A reviewer without the CSRF token is refused too.
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let r = alice
        .c
        .post(app.url("/api/calls/decide"))
        .form(&[("csrf_token", "wrong"), ("id", &id), ("verdict", "approve")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(agent.get(&id, 0).await.1["status"], "pending");
}

#[tokio::test]
async fn the_review_page_previews_what_a_trash_call_would_affect_on_this_host() {
    // The demo policy with its uploads root moved to a real directory of this test.
    let dir = tempfile::tempdir().unwrap();
    let uploads = dir.path().join("uploads");
    std::fs::create_dir_all(uploads.join("2024")).unwrap();
    std::fs::write(uploads.join("old.csv"), vec![b'x'; 1000]).unwrap();
    std::fs::write(uploads.join("2024/a.pdf"), vec![b'y'; 500]).unwrap();
    std::fs::write(uploads.join("2024/b.pdf"), vec![b'z'; 24]).unwrap();
    let src = std::fs::read_to_string(crate::common::workspace().join("policies/demo.toml")).unwrap();
    let root = uploads.to_str().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, src.replace("/data/shared/uploads", root)).unwrap();
    let app = crate::common::spawn_with(|c| c.policy_file = policy.clone()).await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "move_to_trash",
               "arguments": {"paths": [format!("{root}/old.csv"), format!("{root}/2024")], "reason": "cleanup"}}),
    )
    .await;
    let d = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    let impact = &d["impact"];
    assert_eq!(impact["files"], 3, "{d}");
    assert_eq!(impact["bytes"], 1524);
    assert_eq!(impact["paths"].as_array().unwrap().len(), 2);
    assert_eq!(d["item"]["destructive"], true);
    assert_eq!(
        d["tool_description"],
        "Move files from the shared uploads area to the trash."
    );
    assert_eq!(d["session"][0]["id"], id.as_str());
}
