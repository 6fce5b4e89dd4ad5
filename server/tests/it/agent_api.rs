//! The agent API through real HTTP and a real SQLite file.

use crate::common::{allow_tampering, spawn_app, spawn_in, spawn_with, unix_now, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.db).await.unwrap()
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"session_id": "s-1", "tool": tool, "arguments": arguments})
}

/// A copy of the demo policy whose pending calls expire after one second.
fn quick_expiry_policy(dir: &std::path::Path) -> std::path::PathBuf {
    let src = std::fs::read_to_string(crate::common::workspace().join("policies/demo.toml")).unwrap();
    let src = src.replace("default_expiry = \"15m\"", "default_expiry = \"1s\"");
    let path = dir.join("quick.toml");
    std::fs::write(&path, src).unwrap();
    path
}

#[tokio::test]
async fn every_decision_path_answers_with_its_layer_and_rule() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let cases = [
        (call("web_search", json!({"query": "rust"})), "allowed", Value::Null),
        (
            call("cancel_order", json!({"order_id": "AB12345678"})),
            "denied",
            json!("allowlist"),
        ),
        (
            call("query_order", json!({"order_id": "short"})),
            "denied",
            json!("schema"),
        ),
        (
            call("read_file", json!({"path": "/etc/shadow"})),
            "denied",
            json!("path_guard"),
        ),
        (
            call("execute_command", json!({"command": "sudo rm -rf /"})),
            "denied",
            json!("command_guard"),
        ),
        (
            call("web_fetch", json!({"url": "http://169.254.169.254/latest/meta-data"})),
            "denied",
            json!("url_guard"),
        ),
        (
            call("refund_order", json!({"order_id": "AB12345678", "amount": 6000})),
            "pending",
            json!("rule"),
        ),
    ];
    for (body, status, blocked_by) in cases {
        let (code, v) = agent.propose(body.clone()).await;
        assert_eq!(code, StatusCode::OK, "{v}");
        assert_eq!(v["status"], status, "{body} → {v}");
        assert_eq!(v["blocked_by"], blocked_by, "{body} → {v}");
        assert!(v["policy_version"].as_str().unwrap().starts_with("sha256:"));
        assert!(v["id"].as_str().unwrap().starts_with("tc_"));
        assert_eq!(
            v["poll_url"],
            format!("/api/v1/tool-calls/{}", v["id"].as_str().unwrap())
        );
        match status {
            "allowed" => assert_eq!(v["arguments"], body["arguments"]),
            "pending" => {
                assert_eq!(v["rule"], "refund_over_5000");
                assert!(v["expires_at"].as_str().unwrap().ends_with('Z'));
                assert_eq!(v["arguments"], Value::Null, "nothing to execute yet");
            }
            _ => assert_eq!(v["arguments"], Value::Null),
        }
    }
    // Budgets: two e-mails per turn are held for a human, the third is denied.
    let mail = json!({"session_id": "s-1", "turn_id": "t-1", "tool": "send_email",
        "arguments": {"to": "a@example.com", "subject": "hi", "body": "hello"}});
    for _ in 0..2 {
        assert_eq!(agent.propose(mail.clone()).await.1["status"], "pending");
    }
    let (_, third) = agent.propose(mail).await;
    assert_eq!(third["status"], "denied");
    assert_eq!(third["blocked_by"], "budget");
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 10);
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'call_received'").await,
        10
    );
}

/// A server that stops closes every connection to its SQLite file, the ledger's own among
/// them: SQLite then folds the write-ahead log into the file and removes it.
#[tokio::test]
async fn a_stopped_server_leaves_its_sqlite_file_closed() {
    if crate::common::postgres().is_some() {
        eprintln!("skipped: a SQLite file's write-ahead log");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_in(dir.path()).await;
    let agent = app.agent("bot").await;
    let (status, body) = agent
        .propose(json!({"session_id": "s", "tool": "read_file", "arguments": {"path": "notes/a.md"}}))
        .await;
    assert!(status.is_success(), "{body}");
    assert!(dir.path().join("keep.db-wal").exists());
    app.stop().await.unwrap();
    assert!(!dir.path().join("keep.db-wal").exists());
}

#[tokio::test]
async fn budgets_and_recent_webhook_ids_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_in(dir.path()).await;
    let agent = app.agent("bot").await;
    let mail = json!({"session_id": "s", "turn_id": "t", "tool": "send_email",
        "arguments": {"to": "a@example.com", "subject": "hi", "body": "hello"}});
    agent.propose(mail.clone()).await;
    agent.propose(mail.clone()).await;
    let (_, first) = agent.propose_as("msg_before_restart", mail.clone()).await;
    let secret = agent.secret.clone();
    app.stop().await.unwrap();
    let app = spawn_in(dir.path()).await;
    let agent = crate::common::TestAgent {
        id: "bot".into(),
        secret,
        base: app.url(""),
        http: reqwest::Client::new(),
    };
    // A retry of a message sent before the restart is still recognised (no new call).
    let (_, again) = agent.propose_as("msg_before_restart", mail.clone()).await;
    assert_eq!(again["id"], first["id"], "{again}");
    let mut changed = mail.clone();
    changed["arguments"]["subject"] = json!("changed");
    let (s, v) = agent.propose_as("msg_before_restart", changed).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replay_mismatch"))
    );
    let (_, v) = agent.propose(mail).await;
    assert_eq!(v["blocked_by"], "budget", "{v}");
    // The same policy again is not recorded twice.
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'policy_loaded'").await,
        1
    );
}

#[tokio::test]
async fn unsigned_stale_future_and_wrong_signatures_are_refused_and_nothing_is_stored() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let body = call("web_search", json!({"query": "x"})).to_string();
    let now = unix_now();
    let good = |id: &str, ts: i64| agent.sign(id, ts, body.as_bytes());
    let other = server::agents::SigningSecret::generate();
    let wrong = server::ingest::signature::sign(&other, "m3", &now.to_string(), body.as_bytes());
    let cases: Vec<(&str, i64, String, &str)> = vec![
        ("m1", now, String::new(), "missing_signature"),
        ("m2", now, "v1,".into(), "malformed_signature"),
        ("m3", now, wrong, "bad_signature"),
        ("m4", now - 301, good("m4", now - 301), "stale_timestamp"),
        ("m5", now + 301, good("m5", now + 301), "future_timestamp"),
        ("m6", now, good("m6", now).replace("v1,", "v1a,"), "malformed_signature"),
        ("m7", now, good("other-id", now), "bad_signature"),
    ];
    for (id, ts, sig, code) in cases {
        let r = agent.post_raw(id, ts, &body, &sig).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{id}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{id}: {v}");
    }
    // Unknown and disabled agents.
    let mut stranger = app.agent("stranger").await;
    stranger.id = "nobody".into();
    let (s, v) = stranger.propose(json!({})).await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::UNAUTHORIZED, json!("unknown_agent"))
    );
    server::agents::set_disabled(&app.db, "stranger", true, "user:test")
        .await
        .unwrap();
    stranger.id = "stranger".into();
    let (s, v) = stranger.propose(call("web_search", json!({"query": "x"}))).await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::UNAUTHORIZED, json!("agent_disabled"))
    );

    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 0);
    // Each refusal is a security event (the ledger writes them asynchronously).
    let deadline = Instant::now() + Duration::from_secs(5);
    while count(
        &app,
        "SELECT count(*) FROM audit_events WHERE kind = 'agent_auth_failed'",
    )
    .await
        < 9
    {
        assert!(Instant::now() < deadline, "auth failures were not audited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let data: String = sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = 'agent_auth_failed' LIMIT 1")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(data.contains("missing_signature"), "{data}");
}

#[tokio::test]
async fn a_retry_returns_the_original_answer_and_a_changed_body_is_refused() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let body = call("refund_order", json!({"order_id": "AB12345678", "amount": 6000}));
    let (s1, first) = agent.propose_as("msg_retry", body.clone()).await;
    assert_eq!(s1, StatusCode::OK);
    // A retry later (new timestamp, same id and body).
    let (s2, again) = agent.propose_as("msg_retry", body.clone()).await;
    assert_eq!(s2, StatusCode::OK);
    assert_eq!(first, again);
    let mut changed = body.clone();
    changed["arguments"]["amount"] = json!(60);
    let (s3, v) = agent.propose_as("msg_retry", changed).await;
    assert_eq!(s3, StatusCode::UNAUTHORIZED);
    assert_eq!(v["error"]["code"], "replay_mismatch");
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 1);
    // The same message id from another agent is its own message.
    let other = app.agent("other").await;
    let (_, v) = other.propose_as("msg_retry", body).await;
    assert_ne!(v["id"], first["id"]);
}

#[tokio::test]
async fn malformed_oversized_and_deep_bodies_get_a_clear_code() {
    let app = spawn_with(|c| c.max_body_bytes = 4096).await;
    let agent = app.agent("bot").await;
    let deep = format!(
        "{{\"session_id\":\"s\",\"tool\":\"web_search\",\"arguments\":{{\"q\":{}1{}}}}}",
        "[".repeat(40),
        "]".repeat(40)
    );
    let big = json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "x".repeat(5000)}}).to_string();
    let cases: Vec<(String, StatusCode, &str)> = vec![
        ("{not json".into(), StatusCode::BAD_REQUEST, "malformed_json"),
        (
            r#"{"session_id":"s","tool":"a","tool":"b","arguments":{}}"#.into(),
            StatusCode::BAD_REQUEST,
            "duplicate_key",
        ),
        (deep, StatusCode::BAD_REQUEST, "json_too_deep"),
        (big, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        (
            r#"{"tool":"web_search","arguments":{}}"#.into(),
            StatusCode::BAD_REQUEST,
            "missing_field",
        ),
        (
            r#"{"session_id":"s","tool":"web_search","arguments":"x"}"#.into(),
            StatusCode::BAD_REQUEST,
            "invalid_field",
        ),
        (
            r#"{"session_id":"s","tool":"web_search","arguments":{},"extra":1}"#.into(),
            StatusCode::BAD_REQUEST,
            "unknown_field",
        ),
        (
            r#"{"session_id":"s","tool":"web_search","arguments":{},"callback_url":"http://127.0.0.1:9/x"}"#.into(),
            StatusCode::BAD_REQUEST,
            "invalid_callback_url",
        ),
    ];
    for (i, (body, status, code)) in cases.into_iter().enumerate() {
        let id = format!("m{i}");
        let ts = unix_now();
        let r = agent
            .post_raw(&id, ts, &body, &agent.sign(&id, ts, body.as_bytes()))
            .await;
        assert_eq!(r.status(), status, "{code}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{v}");
    }
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 0);
}

#[tokio::test]
async fn agents_see_only_their_own_calls() {
    let app = spawn_app().await;
    let a = app.agent("alpha").await;
    let b = app.agent("beta").await;
    let (_, v) = a
        .propose(call("refund_order", json!({"order_id": "AB12345678", "amount": 6000})))
        .await;
    let id = v["id"].as_str().unwrap();
    assert_eq!(a.get(id, 0).await.0, StatusCode::OK);
    let path = format!("/api/v1/tool-calls/{id}");
    assert_eq!(b.get(id, 0).await.1["error"]["code"], "not_found");
    assert_eq!(
        b.call(Method::POST, &format!("{path}/cancel"), "").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(a.get("tc_missing", 0).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_signature_for_one_call_cannot_be_replayed_against_another() {
    let app = spawn_app().await;
    let a = app.agent("alpha").await;
    let body = call("refund_order", json!({"order_id": "AB12345678", "amount": 6000}));
    let (_, one) = a.propose(body.clone()).await;
    let (_, two) = a.propose(body).await;
    let ts = unix_now();
    let path_one = format!("/api/v1/tool-calls/{}/cancel", one["id"].as_str().unwrap());
    let sig = a.sign("m", ts, format!("POST {path_one}\n").as_bytes());
    let r = a
        .http
        .post(app.url(&format!("/api/v1/tool-calls/{}/cancel", two["id"].as_str().unwrap())))
        .header("airlock-agent", "alpha")
        .header("webhook-id", "m")
        .header("webhook-timestamp", ts.to_string())
        .header("webhook-signature", sig)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_long_poll_is_woken_by_the_decision() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let (_, v) = agent
        .propose(call("refund_order", json!({"order_id": "AB12345678", "amount": 6000})))
        .await;
    let id = v["id"].as_str().unwrap().to_string();
    let poll = {
        let (agent_id, secret, base) = (agent.id.clone(), agent.secret.clone(), agent.base.clone());
        let id = id.clone();
        tokio::spawn(async move {
            let a = crate::common::TestAgent {
                id: agent_id,
                secret,
                base,
                http: reqwest::Client::new(),
            };
            let t = Instant::now();
            let r = a.get(&id, 30).await;
            (r, t.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!poll.is_finished(), "the long-poll returned before any decision");
    let (s, cancelled) = agent
        .call(Method::POST, &format!("/api/v1/tool-calls/{id}/cancel"), "")
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(cancelled["status"], "cancelled");
    let ((s, v), waited) = poll.await.unwrap();
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["status"], "cancelled");
    assert_eq!(v["decided_by"], "agent:bot");
    assert!(waited < Duration::from_secs(30), "woken, not timed out");
    // A long-poll longer than 60 s is refused.
    assert_eq!(agent.get(&id, 61).await.1["error"]["code"], "invalid_wait");
}

#[tokio::test]
async fn cancel_and_result_follow_the_lifecycle() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let (_, held) = agent
        .propose(call("refund_order", json!({"order_id": "AB12345678", "amount": 6000})))
        .await;
    let held = held["id"].as_str().unwrap();
    let cancel = format!("/api/v1/tool-calls/{held}/cancel");
    assert_eq!(agent.call(Method::POST, &cancel, "").await.1["status"], "cancelled");
    let (s, v) = agent.call(Method::POST, &cancel, "").await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("not_pending"))
    );

    let (_, ok) = agent.propose(call("web_search", json!({"query": "rust"}))).await;
    let result = format!("/api/v1/tool-calls/{}/result", ok["id"].as_str().unwrap());
    let report =
        r#"{"outcome":"ok","summary":"3 results; token=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","duration_ms":12}"#;
    let (s, v) = agent.call(Method::POST, &result, report).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["result"], "ok");
    let (s, v) = agent.call(Method::POST, &result, report).await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("result_already_reported"))
    );
    let (s, v) = agent.call(Method::POST, &result, r#"{"outcome":"maybe"}"#).await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!("invalid_field"))
    );
    let (s, v) = agent
        .call(
            Method::POST,
            &format!("/api/v1/tool-calls/{held}/result"),
            r#"{"outcome":"ok"}"#,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("not_executable"))
    );
    // The summary is stored redacted.
    let stored: String = sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = 'call_result'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(!stored.contains("ghp_aaaa"), "{stored}");
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'call_cancelled'").await,
        1
    );
    // Every decision event names what made the decision.
    assert_eq!(
        count(
            &app,
            "SELECT count(*) FROM audit_events WHERE kind = 'call_cancelled' AND data LIKE '%\"source\":\"agent\"%'"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn unanswered_calls_expire_and_waiting_agents_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let policy = quick_expiry_policy(dir.path());
    let app = spawn_with(move |c| c.policy_file = policy).await;
    let agent = app.agent("bot").await;
    let (_, v) = agent
        .propose(call("refund_order", json!({"order_id": "AB12345678", "amount": 6000})))
        .await;
    let id = v["id"].as_str().unwrap();
    let (_, v) = agent.get(id, 10).await;
    assert_eq!(v["status"], "expired", "{v}");
    assert_eq!(v["decided_by"], "system");
    assert_eq!(v["arguments"], Value::Null, "an expired call must not be executed");
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'call_expired'").await,
        1
    );
    assert_eq!(
        count(
            &app,
            "SELECT count(*) FROM audit_events WHERE kind = 'call_expired' AND data LIKE '%\"source\":\"expiry\"%'"
        )
        .await,
        1
    );
}

/// A backlog of held calls past their expiry (reviewers away, the server down) is expired
/// in chunks of at most `PER_WRITE` per ledger write, so new calls wait behind one chunk,
/// not the whole backlog; each call expires once, with its event, and the chain verifies.
#[tokio::test]
async fn a_backlog_of_unanswered_calls_expires_in_bounded_chunks_each_call_once() {
    let app = spawn_with(|c| c.agent_rate_per_second = 0).await;
    let agent = app.agent("bot").await;
    let chunk = server::expiry::PER_WRITE;
    let held = 2 * chunk + chunk / 2;
    let mut ids = Vec::new();
    for i in 0..held {
        let (status, v) = agent
            .propose(call(
                "refund_order",
                json!({"order_id": format!("AB{:08}", i), "amount": 6000}),
            ))
            .await;
        assert_eq!((status, v["status"].as_str()), (StatusCode::OK, Some("pending")), "{v}");
        ids.push(v["id"].as_str().unwrap().to_string());
    }
    // Past every call's expiry (15 minutes in the demo policy); the background task, on
    // the real clock, leaves them alone.
    let later = server::store::now_ms() + 16 * 60_000;
    let mut chunks = Vec::new();
    loop {
        let n = app.ledger.expire(later).await.unwrap();
        chunks.push(n);
        if n == 0 {
            break;
        }
    }
    assert_eq!(chunks, [chunk, chunk, chunk / 2, 0]);
    assert_eq!(
        count(
            &app,
            "SELECT count(*) FROM tool_calls WHERE status = 'expired' AND decided_by = 'system'"
        )
        .await,
        held as i64
    );
    assert_eq!(
        count(
            &app,
            "SELECT count(DISTINCT call_id) FROM audit_events WHERE kind = 'call_expired'"
        )
        .await,
        held as i64
    );
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'call_expired'").await,
        held as i64
    );
    for id in [&ids[0], &ids[chunk], &ids[held - 1]] {
        let (_, v) = agent.get(id, 0).await;
        assert_eq!(
            (v["status"].as_str(), v["decided_by"].as_str()),
            (Some("expired"), Some("system")),
            "{v}"
        );
        assert_eq!(v["arguments"], Value::Null, "an expired call must not be executed");
    }
    let chain = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(chain.problem, None);
}

#[tokio::test]
async fn secrets_are_stored_sealed_and_rotation_keeps_the_old_one_for_a_grace_period() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let sealed: Vec<u8> = sqlx::query_scalar("SELECT sealed FROM agent_secrets")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let shown = agent.secret.reveal();
    assert!(!sealed.windows(8).any(|w| shown.as_bytes().windows(8).any(|s| s == w)));
    assert!(!sealed
        .windows(agent.secret.bytes().len())
        .any(|w| w == agent.secret.bytes()));

    let key = server::agents::ServerKey::load_or_create(&app.key_file).unwrap();
    let new = server::agents::rotate(&app.db, &key, "bot", 3600, "user:test")
        .await
        .unwrap();
    let q = call("web_search", json!({"query": "x"}));
    assert_eq!(
        agent.propose(q.clone()).await.0,
        StatusCode::OK,
        "old secret in its grace period"
    );
    let mut fresh = crate::common::TestAgent {
        id: "bot".into(),
        secret: new,
        base: app.url(""),
        http: reqwest::Client::new(),
    };
    assert_eq!(fresh.propose(q.clone()).await.0, StatusCode::OK);
    // Both signatures in one header, as a sender mid-rotation sends them.
    let body = q.to_string();
    let ts = unix_now();
    let both = format!(
        "{} {}",
        agent.sign("mx", ts, body.as_bytes()),
        fresh.sign("mx", ts, body.as_bytes())
    );
    assert_eq!(agent.post_raw("mx", ts, &body, &both).await.status(), StatusCode::OK);
    // Rotating with no grace retires the previous secrets at once (the server's
    // credential cache lets the change through within a second).
    fresh.secret = server::agents::rotate(&app.db, &key, "bot", 0, "user:test")
        .await
        .unwrap();
    assert_eq!(
        fresh.propose(q.clone()).await.0,
        StatusCode::OK,
        "a new secret works at once"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while agent.propose(q.clone()).await.0 != StatusCode::UNAUTHORIZED {
        assert!(Instant::now() < deadline, "the retired secret is still accepted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_audit_chain_verifies_and_names_a_tampered_event() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    for i in 0..5 {
        agent
            .propose(call("web_search", json!({"query": format!("q{i}")})))
            .await;
    }
    let ok = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(ok.problem, None);
    assert_eq!(
        ok.events, 8,
        "policy_loaded + user_added (first admin) + agent_added + five calls"
    );
    // The table refuses edits; an attacker with the file drops the trigger first.
    let refused = sqlx::query("UPDATE audit_events SET actor = 'x' WHERE seq = 3")
        .execute(&app.db)
        .await;
    assert!(refused.is_err(), "append-only trigger");
    allow_tampering(&app.db).await;
    sqlx::query("UPDATE audit_events SET data = replace(data, 'q2', 'q9') WHERE seq = 6")
        .execute(&app.db)
        .await
        .unwrap();
    let bad = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(bad.problem.as_ref().map(|p| p.0), Some(6), "{bad:?}");
    assert_eq!(bad.events, 5);
}

#[tokio::test]
async fn deleting_an_event_is_found_at_the_gap() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    for i in 0..4 {
        agent
            .propose(call("web_search", json!({"query": format!("q{i}")})))
            .await;
    }
    allow_tampering(&app.db).await;
    sqlx::query("DELETE FROM audit_events WHERE seq = 3")
        .execute(&app.db)
        .await
        .unwrap();
    let bad = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(bad.problem.as_ref().map(|p| p.0), Some(4), "{bad:?}");
    assert!(bad.problem.unwrap().1.contains("expected event 3"));
}

#[tokio::test]
async fn arguments_are_redacted_in_the_audit_trail_but_returned_to_the_agent() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    let (_, v) = agent
        .propose(call("web_search", json!({"query": format!("use key {secret}")})))
        .await;
    assert_eq!(v["status"], "allowed");
    assert!(v["arguments"]["query"].as_str().unwrap().contains(secret));
    let stored: String = sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = 'call_received'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(!stored.contains(secret), "{stored}");
    assert!(stored.contains("[redacted"), "{stored}");
}

#[tokio::test]
async fn raw_arguments_of_old_decided_calls_are_purged_and_the_chain_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_in(dir.path()).await;
    let agent = app.agent("bot").await;
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    let (_, old) = agent
        .propose(call("web_search", json!({"query": format!("use key {secret}")})))
        .await;
    let (_, recent) = agent
        .propose(call("web_search", json!({"query": format!("again {secret}")})))
        .await;
    // The first call is 31 days old (the default keeps raw arguments for 30).
    sqlx::query("UPDATE tool_calls SET created_at_ms = created_at_ms - 2678400000 WHERE id = $1")
        .bind(old["id"].as_str().unwrap())
        .execute(&app.db)
        .await
        .unwrap();
    app.stop().await.unwrap();
    // The sweep runs when the server starts (then hourly).
    let app = spawn_in(dir.path()).await;
    let raw = |id: String| {
        let db = app.db.clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT arguments FROM tool_calls WHERE id = $1")
                .bind(id)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    // Kept raw arguments are sealed at rest: never the secret in the database itself.
    let stored = raw(recent["id"].as_str().unwrap().into()).await;
    assert!(stored.starts_with("sealed:v1:") && !stored.contains(secret), "{stored}");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        if raw(old["id"].as_str().unwrap().into()).await.contains("[redacted") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the old call's raw arguments were not purged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The agent still reads the recent call as it sent it; the old one only redacted.
    let agent = crate::common::TestAgent {
        base: format!("http://{}", app.addr),
        ..agent
    };
    let (_, v) = agent.get(recent["id"].as_str().unwrap(), 0).await;
    assert!(
        v["arguments"]["query"].as_str().unwrap().contains(secret),
        "recent calls keep theirs: {v}"
    );
    let (_, v) = agent.get(old["id"].as_str().unwrap(), 0).await;
    assert!(!v.to_string().contains(secret), "{v}");
    assert_eq!(
        count(
            &app,
            "SELECT count(*) FROM audit_events WHERE kind = 'raw_arguments_purged'"
        )
        .await,
        1
    );
    let v = server::audit::verify(&app.db).await.unwrap();
    assert!(v.problem.is_none(), "{:?}", v.problem);
}

/// A callback receiver on loopback: answers 500 to the first `fail_first` requests.
async fn receiver(
    fail_first: usize,
) -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<(axum::http::HeaderMap, String)>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let seen = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let tx = tx.clone();
            let seen = seen.clone();
            async move {
                let n = seen.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send((headers, body));
                if n < fail_first {
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    axum::http::StatusCode::NO_CONTENT
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hook"), rx)
}

#[tokio::test]
async fn the_final_decision_is_posted_to_the_callback_signed_and_retried() {
    let dir = tempfile::tempdir().unwrap();
    let policy = quick_expiry_policy(dir.path());
    let app = spawn_with(move |c| {
        c.policy_file = policy;
        c.callback_allow_private = true;
        c.callback_backoff_ms = 100;
    })
    .await;
    let agent = app.agent("bot").await;
    let (url, mut rx) = receiver(1).await;
    let mut body = call("refund_order", json!({"order_id": "AB12345678", "amount": 6000}));
    body["callback_url"] = json!(url);
    let (_, v) = agent.propose(body).await;
    let id = v["id"].as_str().unwrap().to_string();
    for attempt in 1..=2 {
        let (headers, payload) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("callback attempt")
            .unwrap();
        let h = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_string();
        assert_eq!(h("airlock-agent"), "bot");
        let expected = agent.sign(
            &h("webhook-id"),
            h("webhook-timestamp").parse().unwrap(),
            payload.as_bytes(),
        );
        assert_eq!(
            h("webhook-signature"),
            expected,
            "attempt {attempt} is signed with the agent's secret"
        );
        let v: Value = serde_json::from_str(&payload).unwrap();
        assert_eq!(v["type"], "tool_call.decided");
        assert_eq!(v["data"]["id"], id.as_str());
        assert_eq!(v["data"]["status"], "expired");
    }
    // Both attempts are audited; the second delivered.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let rows: Vec<String> =
            sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = 'callback_attempt' ORDER BY seq")
                .fetch_all(&app.db)
                .await
                .unwrap();
        if rows.len() == 2 {
            assert!(
                rows[0].contains("\"delivered\":false") && rows[0].contains("HTTP 500"),
                "{}",
                rows[0]
            );
            assert!(rows[1].contains("\"delivered\":true"), "{}", rows[1]);
            break;
        }
        assert!(Instant::now() < deadline, "attempts not audited: {rows:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let state: String = sqlx::query_scalar("SELECT state FROM callbacks")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(state, "delivered");
}

#[tokio::test]
async fn callback_urls_to_private_addresses_are_refused_in_every_spelling() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    for url in [
        "http://127.1/hook",
        "http://0x7f000001/hook",
        "http://2130706433/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://localhost./hook",
        "http://10.0.0.8/hook",
        "http://169.254.169.254/latest",
        "https://user:pw@agent.example/hook",
        "ftp://agent.example/hook",
        "/relative/hook",
    ] {
        let mut body = call("web_search", json!({"query": "x"}));
        body["callback_url"] = json!(url);
        let (s, v) = agent.propose(body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{url}");
        assert_eq!(v["error"]["code"], "invalid_callback_url", "{url}");
    }
    let mut body = call("web_search", json!({"query": "x"}));
    body["callback_url"] = json!("https://agent.example/hooks/airlock");
    assert_eq!(agent.propose(body).await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_openapi_document_is_served() {
    let app = spawn_app().await;
    let r = reqwest::get(app.url("/api/v1/openapi.json")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert!(v["openapi"].as_str().unwrap().starts_with("3.1"));
    assert!(v["paths"]["/api/v1/tool-calls"]["post"].is_object());
}

#[tokio::test]
async fn the_demo_agent_session_gives_allowed_denied_and_held_calls() {
    let app = spawn_app().await;
    let agent = app.agent("demo-agent").await;
    let mut lines = Vec::new();
    let report = server::demo_agent::run(&app.url(""), "demo-agent", &agent.secret, Duration::from_secs(1), |l| {
        lines.push(l)
    })
    .await
    .unwrap();
    assert!(
        report.allowed >= 5 && report.denied >= 4 && report.held >= 3,
        "{report:?} {lines:#?}"
    );
    assert_eq!(report.held_outcomes.len(), report.held);
    assert!(
        report.held_outcomes.iter().all(|(_, s)| s == "pending"),
        "no reviewer decided"
    );
    let pending = count(&app, "SELECT count(*) FROM tool_calls WHERE status = 'pending'").await;
    assert_eq!(pending as usize, report.held);
    assert_eq!(
        count(&app, "SELECT count(*) FROM tool_calls WHERE result_outcome = 'ok'").await as usize,
        report.allowed,
        "the demo reports results of what it executed"
    );
    assert!(lines.iter().any(|l| l.contains("[command_guard]")), "{lines:?}");
}

/// The README's curl and Python examples, run against a real server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_curl_and_python_examples_are_accepted() {
    let app = spawn_app().await;
    let agent = app.agent("docs").await;
    let (url, secret) = (app.url(""), agent.secret.reveal());
    let run = move |cmd: &'static str, file: &'static str| {
        let (url, secret) = (url.clone(), secret.clone());
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(cmd)
                .arg(crate::common::workspace().join("docs/examples").join(file))
                .env("AIRLOCK_URL", url)
                .env("AIRLOCK_AGENT", "docs")
                .env("AIRLOCK_SECRET", secret)
                .env("AIRLOCK_WAIT", "1")
                .output()
                .unwrap()
        })
    };
    let curl = run("bash", "propose.sh").await.unwrap();
    let text = String::from_utf8_lossy(&curl.stdout);
    assert!(curl.status.success(), "{text}{}", String::from_utf8_lossy(&curl.stderr));
    assert!(text.contains("\"status\":\"allowed\""), "{text}");
    let py = run("python3", "airlock_client.py").await.unwrap();
    let text = String::from_utf8_lossy(&py.stdout);
    assert!(py.status.success(), "{text}{}", String::from_utf8_lossy(&py.stderr));
    assert!(text.contains("pending rule refund above 5000"), "{text}");
    assert!(text.contains("after waiting: pending"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_retries_of_one_message_store_one_call() {
    let app = spawn_app().await;
    let agent = std::sync::Arc::new(app.agent("bot").await);
    let body = call("web_search", json!({"query": "same"}));
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (a, b) = (agent.clone(), body.clone());
        tasks.push(tokio::spawn(async move { a.propose_as("msg_same", b).await }));
    }
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        let (s, v) = t.await.unwrap();
        assert_eq!(s, StatusCode::OK, "{v}");
        ids.insert(v["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "every retry got the same call");
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 1);
    assert_eq!(
        count(&app, "SELECT count(*) FROM audit_events WHERE kind = 'call_received'").await,
        1
    );
    // Different bodies racing for one id: one wins, the rest are refused.
    let mut tasks = Vec::new();
    for i in 0..10 {
        let a = agent.clone();
        let b = call("web_search", json!({"query": format!("variant {i}")}));
        tasks.push(tokio::spawn(async move { a.propose_as("msg_race", b).await.0 }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            StatusCode::OK => ok += 1,
            s => assert_eq!(s, StatusCode::UNAUTHORIZED),
        }
    }
    assert_eq!(ok, 1);
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, 2);
}

/// A batch the database refuses part-way (here a trigger; in life a full disk) stores
/// nothing of itself: its call, its audit event and its budget use are gone, its sender
/// is told to retry, and the next batch is written and answered as usual on a chain that
/// still verifies.
#[tokio::test]
async fn a_batch_the_database_refuses_stores_nothing_and_the_next_one_goes_through() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let refuse: &[&str] = match server::store::Backend::of(&app.db) {
        server::store::Backend::Sqlite => &["CREATE TRIGGER refuse_doomed BEFORE INSERT ON tool_calls
             WHEN NEW.trace_id = 'doomed' BEGIN SELECT RAISE(ABORT, 'refused'); END"],
        server::store::Backend::Postgres => &[
            "CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF NEW.trace_id = 'doomed' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$",
            "CREATE TRIGGER refuse_doomed BEFORE INSERT ON tool_calls
             FOR EACH ROW EXECUTE FUNCTION refuse_doomed()",
        ],
    };
    for sql in refuse {
        sqlx::query(sql).execute(&app.db).await.unwrap();
    }
    // Counted by the demo policy's e-mail budget: two per turn of a session.
    let email = |trace: &str| {
        json!({"session_id": "s-1", "turn_id": "t-1", "trace_id": trace, "tool": "send_email",
               "arguments": {"to": "a@example.com", "subject": "hi", "body": "hello"}})
    };
    let (s, first) = agent.propose(email("one")).await;
    assert_eq!(
        (s, first["status"].as_str()),
        (StatusCode::OK, Some("pending")),
        "{first}"
    );
    let (calls, events) = (
        count(&app, "SELECT count(*) FROM tool_calls").await,
        count(&app, "SELECT count(*) FROM audit_events").await,
    );

    let (s, v) = agent.propose(email("doomed")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable")),
        "{v}"
    );
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, calls);
    assert_eq!(count(&app, "SELECT count(*) FROM audit_events").await, events);

    // The writer goes on, and the refused call charged nothing: the turn's second e-mail
    // is held, its third is over the budget.
    let (s, second) = agent.propose(email("two")).await;
    assert_eq!(
        (s, second["status"].as_str()),
        (StatusCode::OK, Some("pending")),
        "{second}"
    );
    let (s, again) = agent.get(second["id"].as_str().unwrap(), 0).await;
    assert_eq!((s, &again["id"]), (StatusCode::OK, &second["id"]));
    let (s, third) = agent.propose(email("three")).await;
    assert_eq!(
        (s, third["status"].as_str(), third["blocked_by"].as_str()),
        (StatusCode::OK, Some("denied"), Some("budget")),
        "{third}"
    );
    assert_eq!(count(&app, "SELECT count(*) FROM tool_calls").await, calls + 2);
    let chain = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(chain.problem, None);
}
