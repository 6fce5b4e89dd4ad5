//! On-call through real HTTP and a real SQLite file: break-glass (who may start it, what
//! it needs, how it ends), overrides (what they may and may not release, what agents
//! see), the post-hoc review, and escalation with a chosen clock.

use crate::common::{audit_kinds, held, reviewer, spawn_in, spawn_with, workspace, Reviewer, TestApp};
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

const PASSWORD: &str = "correct horse battery staple";
const WHY: &str = "Payments are down and the only reviewer is unreachable";

/// The demo policy, with writes needing two approvers (a quorum break-glass may release;
/// refunds stay `break_glass = false`).
async fn spawn() -> TestApp {
    let demo = std::fs::read_to_string(workspace().join("policies/demo.toml")).unwrap();
    let marker = "approval = \"ask\"\ngrantable = true";
    assert!(demo.contains(marker), "the demo policy's write_file section changed");
    let policy = demo.replacen(marker, "approval = \"ask\"\napprovers = 2\ngrantable = true", 1);
    let dir = tempfile::tempdir().unwrap().keep();
    let file = dir.join("quorum.toml");
    std::fs::write(&file, policy).unwrap();
    spawn_with(|c| {
        c.policy_file = file;
        c.escalation.after_minutes = 5;
        c.escalation.risk.insert("high".into(), 2);
    })
    .await
}

fn write(path: &str) -> Value {
    json!({"session_id": "s", "tool": "write_file", "arguments": {"path": path, "content": "# Report"}})
}

async fn start(who: &Reviewer, app: &TestApp, password: &str, why: &str, minutes: &str) -> (StatusCode, Value) {
    let fields = [("password", password), ("justification", why), ("minutes", minutes)];
    who.post(app, "/api/oncall/start", &fields).await
}

async fn override_call(who: &Reviewer, app: &TestApp, id: &str) -> (StatusCode, Value) {
    who.post(app, "/api/oncall/override", &[("id", id)]).await
}

async fn banner(who: &Reviewer, app: &TestApp) -> Vec<Value> {
    who.get(app, "/api/session").await["break_glass"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn only_on_call_starts_break_glass_with_password_and_reason_and_it_ends_by_itself() {
    let app = spawn().await;
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let aldo = reviewer(&app, "aldo", Role::Auditor).await;

    for who in [&rita, &aldo] {
        let (s, v) = start(who, &app, PASSWORD, WHY, "30").await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    }
    let (s, v) = start(&olga, &app, "wrong password", WHY, "30").await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    assert!(v.to_string().contains("password"), "{v}");
    let (s, v) = start(&olga, &app, PASSWORD, "because", "30").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "a justification of a word: {v}");
    for minutes in ["0", "61", "-5"] {
        let (s, v) = start(&olga, &app, PASSWORD, WHY, minutes).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{minutes} minutes: {v}");
    }
    // Malformed fields are a client error, not a server failure.
    let (s, v) = start(&olga, &app, PASSWORD, WHY, "thirty").await;
    assert_eq!(s.as_u16() / 100, 4, "{s} {v}");
    let (s, _) = olga.post(&app, "/api/oncall/start", &[("password", PASSWORD)]).await;
    assert_eq!(s.as_u16() / 100, 4, "missing fields: {s}");
    assert!(banner(&aldo, &app).await.is_empty(), "nothing started yet");

    let (s, v) = start(&olga, &app, PASSWORD, WHY, "30").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let first = v["id"].as_str().unwrap().to_string();
    let ends = v["ends_at_ms"].as_i64().unwrap();
    assert_eq!(ends - v["started_at_ms"].as_i64().unwrap(), 30 * 60_000);
    // Everyone signed in sees who, why and until when.
    let seen = banner(&aldo, &app).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0]["user"].as_str(), seen[0]["justification"].as_str()),
        (Some("user:olga"), Some(WHY))
    );
    let page = aldo.page(&app, "/queue").await;
    assert!(
        page.contains("Break-glass") && page.contains(WHY),
        "the banner is on every page"
    );

    // Not stretched by asking again with the same words; a new reason replaces it.
    let (s, v) = start(&olga, &app, PASSWORD, &WHY.to_uppercase(), "60").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = start(
        &olga,
        &app,
        PASSWORD,
        "Still down: the database failover did not finish",
        "60",
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let second = v["id"].as_str().unwrap().to_string();
    assert_ne!(first, second);
    assert_eq!(banner(&aldo, &app).await.len(), 1, "one per person");

    // Another person may not end it; the time-box ends it without anyone.
    let (s, _) = rita.post(&app, "/api/oncall/end", &[("id", &second)]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    app.ledger.expire(server::store::now_ms() + 61 * 60_000).await.unwrap();
    assert!(banner(&aldo, &app).await.is_empty(), "ended by itself");
    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT kind FROM audit_events WHERE kind LIKE 'break_glass%' ORDER BY seq")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(
        kinds,
        [
            "break_glass_refused",
            "break_glass_started",
            "break_glass_ended",
            "break_glass_started",
            "break_glass_ended"
        ]
    );
    let reason: String = sqlx::query_scalar("SELECT end_reason FROM break_glass WHERE id = $1")
        .bind(&second)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(reason, "time is up");

    // After the time is up nothing is released.
    let agent = app.agent("bot").await;
    let id = held(&agent, write("out/late.md")).await;
    let (s, v) = override_call(&olga, &app, &id).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(agent.get(&id, 0).await.1["status"], "pending");
}

#[tokio::test]
async fn an_override_releases_a_quorum_call_to_the_waiting_agent_but_never_a_forbidden_tool() {
    let app = spawn().await;
    let agent = app.agent("bot").await;
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let id = held(&agent, write("out/a.md")).await;
    assert_eq!(agent.get(&id, 0).await.1["approvers_required"], 2);
    let refund =
        json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": 9000}});
    let money = held(&agent, refund).await;
    let mine = held(
        &agent,
        json!({"session_id": "s", "tool": "write_file", "on_behalf_of": "olga@example.com",
               "arguments": {"path": "out/mine.md", "content": "x"}}),
    )
    .await;

    // Without break-glass, and for roles without it, nothing happens.
    let (_, v) = override_call(&olga, &app, &id).await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(v["message"].as_str().unwrap().contains("break-glass"), "{v}");
    let (s, _) = override_call(&rita, &app, &id).await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    assert_eq!(start(&olga, &app, PASSWORD, WHY, "15").await.0, StatusCode::OK);
    // The reviewer's page knows which calls break-glass may release.
    assert_eq!(
        olga.get(&app, &format!("/api/calls/get?id={id}")).await["break_glass"],
        true
    );
    assert_eq!(
        olga.get(&app, &format!("/api/calls/get?id={money}")).await["break_glass"],
        false
    );

    // One approval of two so far; the agent is long-polling.
    let approved = rita.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(approved["status"], "pending", "{approved}");
    let poll = agent.poll_later(&id, 30);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (s, v) = override_call(&olga, &app, &id).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (v["ok"].as_bool(), v["status"].as_str()),
        (Some(true), Some("overridden")),
        "{v}"
    );
    let (s, v) = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["status"], "overridden");
    assert_eq!(v["source"], "override");
    assert_eq!(v["decided_by"], "user:olga");
    assert_eq!(v["comment"], WHY);
    assert_eq!(v["arguments"]["path"], "out/a.md", "the agent may run it");

    // Refunds say break_glass = false: they stay held. So do calls made for olga herself.
    let (_, v) = override_call(&olga, &app, &money).await;
    assert_eq!(v["ok"], false);
    assert!(v["message"].as_str().unwrap().contains("break_glass = false"), "{v}");
    let (_, v) = override_call(&olga, &app, &mine).await;
    assert_eq!(v["ok"], false);
    assert!(v["message"].as_str().unwrap().contains("your behalf"), "{v}");
    for held_still in [&money, &mine] {
        assert_eq!(agent.get(held_still, 0).await.1["status"], "pending");
    }
    // Already decided: a second override changes nothing.
    let (_, v) = override_call(&olga, &app, &id).await;
    assert_eq!(v["ok"], false);

    // Policy-denied calls never reach the queue, so break-glass has nothing to release.
    let (_, v) = agent
        .propose(json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "/etc/passwd", "content": "x"}}))
        .await;
    assert_eq!(v["status"], "denied");
    let (_, r) = override_call(&olga, &app, v["id"].as_str().unwrap()).await;
    assert_eq!(r["ok"], false);

    let decided: Value = serde_json::from_str(
        &sqlx::query_scalar::<_, String>("SELECT data FROM audit_events WHERE call_id = $1 AND kind = 'call_decided'")
            .bind(&id)
            .fetch_one(&app.db)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(decided["source"], "override");
    assert_eq!(decided["justification"], WHY);
    assert_eq!(decided["approvals"], json!(["user:rita"]));
    assert_eq!(decided["required"], 2);
    let refused = audit_kinds(&app, &money).await;
    assert!(refused.contains(&"review_refused".to_string()), "{refused:?}");
}

#[tokio::test]
async fn every_override_waits_for_another_persons_review() {
    let app = spawn().await;
    let agent = app.agent("bot").await;
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let aldo = reviewer(&app, "aldo", Role::Auditor).await;
    let a = held(&agent, write("out/a.md")).await;
    let b = held(&agent, write("out/b.md")).await;
    assert_eq!(start(&olga, &app, PASSWORD, WHY, "15").await.0, StatusCode::OK);
    for id in [&a, &b] {
        assert_eq!(override_call(&olga, &app, id).await.1["ok"], true);
    }

    // Counted on the queue, listed for everyone (auditors included).
    assert_eq!(rita.get(&app, "/api/queue").await["overrides_awaiting"], 2);
    let list = aldo.get(&app, "/api/oncall/overrides").await;
    assert_eq!(list["awaiting_total"], 2);
    assert_eq!(list["awaiting"][0]["call_id"], a.as_str());
    assert_eq!(list["awaiting"][0]["justification"], WHY);
    assert_eq!(list["awaiting"][0]["by"], "user:olga");

    // Not by the person who overrode, not by auditors; a flag needs a note.
    let (s, v) = olga
        .post(&app, "/api/oncall/acknowledge", &[("call_id", &a), ("agree", "true")])
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    let (s, _) = aldo
        .post(&app, "/api/oncall/acknowledge", &[("call_id", &a), ("agree", "true")])
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = rita
        .post(
            &app,
            "/api/oncall/acknowledge",
            &[("call_id", &b), ("agree", "false"), ("note", " ")],
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = rita
        .post(
            &app,
            "/api/oncall/acknowledge",
            &[("call_id", "tc_nope"), ("agree", "true")],
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");

    let (s, v) = rita
        .post(&app, "/api/oncall/acknowledge", &[("call_id", &a), ("agree", "true")])
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let note = "b was not urgent; it should have waited for the morning";
    let (s, v) = rita
        .post(
            &app,
            "/api/oncall/acknowledge",
            &[("call_id", &b), ("agree", "false"), ("note", note)],
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, _) = rita
        .post(
            &app,
            "/api/oncall/acknowledge",
            &[("call_id", &a), ("agree", "false"), ("note", "x")],
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "reviewed once");

    let list = aldo.get(&app, "/api/oncall/overrides").await;
    assert_eq!(list["awaiting_total"], 0);
    let done = list["acknowledged"].as_array().unwrap();
    let flagged = done.iter().find(|o| o["call_id"] == b.as_str()).unwrap();
    assert_eq!(
        (flagged["verdict"].as_str(), flagged["note"].as_str()),
        (Some("flag"), Some(note))
    );
    assert_eq!(flagged["acknowledged_by"], "user:rita");
    assert_eq!(rita.get(&app, "/api/queue").await["overrides_awaiting"], 0);
    let kinds = audit_kinds(&app, &b).await;
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("override_acknowledged"),
        "{kinds:?}"
    );
    assert!(audit_kinds(&app, &a)
        .await
        .contains(&"override_review_refused".to_string()));
}

#[tokio::test]
async fn unanswered_calls_escalate_once_at_their_time_and_expire_to_a_denial() {
    let app = spawn().await;
    let agent = app.agent("bot").await;
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let write_id = held(&agent, write("out/a.md")).await; // medium: 5 minutes
    let refund =
        json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": 9000}});
    let refund_id = held(&agent, refund).await; // high: 2 minutes
    let state = server::config::Escalation {
        after_minutes: 5,
        risk: [("high".to_string(), 2)].into(),
        tools: Default::default(),
    };
    let now = server::store::now_ms();
    let escalate = |at: i64| server::oncall::escalation::escalate_due(&app.db, &app.ledger, &state, at);

    assert_eq!(
        escalate(now + 60_000).await.unwrap(),
        0,
        "nothing is due after a minute"
    );
    assert_eq!(
        escalate(now + 3 * 60_000).await.unwrap(),
        1,
        "the high-risk refund after two"
    );
    let q = rita.get(&app, "/api/queue").await;
    let marked = |id: &str| q["items"].as_array().unwrap().iter().find(|i| i["id"] == id).unwrap()["escalated"].clone();
    assert_eq!((marked(&refund_id), marked(&write_id)), (json!(true), json!(false)));
    assert_eq!(escalate(now + 6 * 60_000).await.unwrap(), 1, "the write after five");
    assert_eq!(escalate(now + 7 * 60_000).await.unwrap(), 0, "each call once");
    assert!(audit_kinds(&app, &refund_id)
        .await
        .contains(&"call_escalated".to_string()));

    // At its expiry a call gets the safe default, and the agent is told.
    let expires = agent.get(&write_id, 0).await.1["expires_at"]
        .as_str()
        .unwrap()
        .to_string();
    let at = time::OffsetDateTime::parse(&expires, &time::format_description::well_known::Rfc3339).unwrap();
    let at_ms = (at.unix_timestamp_nanos() / 1_000_000) as i64;
    // A third held call, never escalated: due until its expiry, not after it (the expiry
    // sweep decides it; escalation does not read it again every few seconds meanwhile).
    let late_id = held(&agent, write("out/late.md")).await;
    let due = |at: i64| server::oncall::escalation::due(&app.db, &state, at);
    assert!(due(at_ms - 1).await.unwrap().contains(&late_id));
    assert!(!due(at_ms + 16 * 60_000).await.unwrap().contains(&late_id));
    assert!(app.ledger.expire(at_ms + 1).await.unwrap() >= 1);
    let (_, v) = agent.get(&write_id, 0).await;
    assert_eq!(
        (v["status"].as_str(), v["source"].as_str()),
        (Some("expired"), Some("expiry"))
    );
    assert_eq!(v["arguments"], Value::Null);
}

#[tokio::test]
async fn break_glass_ends_when_its_owner_is_demoted_or_disabled() {
    let app = spawn().await;
    let admin = app.admin_client().await;
    let admin = Reviewer {
        token: app.session_token(&admin).await,
        c: admin,
    };
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let aldo = reviewer(&app, "aldo", Role::Auditor).await;
    let id_of = |name: &'static str| {
        let db = app.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT id FROM users WHERE username = $1")
                .bind(name)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    assert_eq!(start(&olga, &app, PASSWORD, WHY, "30").await.0, StatusCode::OK);
    let olga_id = id_of("olga").await.to_string();
    let (s, v) = admin
        .post(&app, "/api/users/role", &[("user_id", &olga_id), ("role", "reviewer")])
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(banner(&aldo, &app).await.is_empty(), "demoted: the override ends");

    let oscar = reviewer(&app, "oscar", Role::Oncall).await;
    assert_eq!(start(&oscar, &app, PASSWORD, WHY, "30").await.0, StatusCode::OK);
    let oscar_id = id_of("oscar").await.to_string();
    let (s, v) = admin
        .post(
            &app,
            "/api/users/disabled",
            &[("user_id", &oscar_id), ("disabled", "true")],
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(banner(&aldo, &app).await.is_empty(), "disabled: the override ends");
    // An admin may end anyone's break-glass early.
    let paula = reviewer(&app, "paula", Role::Oncall).await;
    let (_, v) = start(&paula, &app, PASSWORD, WHY, "30").await;
    let (s, _) = admin
        .post(&app, "/api/oncall/end", &[("id", v["id"].as_str().unwrap())])
        .await;
    assert_eq!(s, StatusCode::OK);
    assert!(banner(&aldo, &app).await.is_empty());
}

#[tokio::test]
async fn break_glass_survives_a_restart_and_one_that_ran_out_meanwhile_is_ended_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_in(dir.path()).await;
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let (s, v) = start(&olga, &app, PASSWORD, WHY, "30").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let pw = app.admin.clone();
    app.stop().await.unwrap();

    let app = spawn_in(dir.path()).await;
    let aldo = app.login_ok(&pw.0, &pw.1).await;
    let aldo = Reviewer {
        token: app.session_token(&aldo).await,
        c: aldo,
    };
    assert_eq!(banner(&aldo, &app).await.len(), 1, "still in force after a restart");
    // Its time runs out while the server is down.
    sqlx::query("UPDATE break_glass SET ends_at_ms = ends_at_ms - 31 * 60000")
        .execute(&app.db)
        .await
        .unwrap();
    app.stop().await.unwrap();
    let app = spawn_in(dir.path()).await;
    app.ledger.expire(server::store::now_ms()).await.unwrap();
    let ended: Option<String> = sqlx::query_scalar("SELECT end_reason FROM break_glass")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(ended.as_deref(), Some("time is up"));
    let kinds: Vec<String> =
        sqlx::query_scalar("SELECT kind FROM audit_events WHERE kind LIKE 'break_glass%' ORDER BY seq")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(kinds, ["break_glass_started", "break_glass_ended"]);
}
