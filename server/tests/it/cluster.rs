//! Several instances on one PostgreSQL database behave as one. These run when the suite
//! runs on PostgreSQL (`AIRLOCK_TEST_POSTGRES`); on SQLite they say so and pass.

use crate::common::*;
use app::api::Role;
use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn on_postgres() -> bool {
    let yes = postgres().is_some();
    if !yes {
        eprintln!("skipped: several instances need PostgreSQL (set AIRLOCK_TEST_POSTGRES)");
    }
    yes
}

fn write(session: &str, path: &str) -> Value {
    json!({"session_id": session, "tool": "write_file", "arguments": {"path": path, "content": "# Report"}})
}

/// The live-event stream of `app` as the signed-in client `c` sees it.
async fn live_events(
    c: &reqwest::Client,
    app: &TestApp,
) -> std::pin::Pin<Box<impl futures::Stream<Item = reqwest::Result<axum::body::Bytes>>>> {
    let r = c
        .get(app.url("/api/events"))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    Box::pin(r.bytes_stream())
}

/// Reads a live stream until `want` holds for what arrived, or 10 s pass.
async fn read_until(
    body: &mut (impl futures::Stream<Item = reqwest::Result<axum::body::Bytes>> + Unpin),
    want: impl Fn(&str) -> bool,
) -> String {
    let mut seen = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(chunk)) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if want(&seen) {
                return;
            }
        }
    })
    .await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_sent_to_one_instance_is_seen_decided_and_answered_through_the_other() {
    if !on_postgres() {
        return;
    }
    let a = spawn_app().await;
    let b = spawn_beside(&a).await;
    let agent = a.agent("bot").await;
    let rita = reviewer(&b, "rita", Role::Reviewer).await;
    let mut live = live_events(&rita.c, &b).await;

    // Proposed on A, held: B's reviewer sees it arrive.
    let id = held(&agent, write("s", "out/a.md")).await;
    let seen = read_until(&mut live, |t| t.contains("event: call_pending") && t.contains(&id)).await;
    assert!(
        seen.contains(&id),
        "B's live stream did not show the call held on A: {seen}"
    );
    let queue = rita.get(&b, "/api/queue").await;
    assert!(queue.to_string().contains(&id), "{queue}");

    // The agent waits on A; the decision is made on B and wakes it.
    let poll = agent.poll_later(&id, 20);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = rita.decide(&b, &id, &[("verdict", "approve")]).await;
    assert_eq!(out["status"], "approved", "{out}");
    let (s, v) = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .expect("the long-poll on A was woken by the decision on B")
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["status"], "approved", "{v}");
    let seen = read_until(&mut live, |t| t.contains("event: call_decided")).await;
    assert!(seen.contains("call_decided"), "{seen}");

    // A second decision on A for the same call loses.
    let alex = reviewer(&a, "alex", Role::Reviewer).await;
    let late = alex.decide(&a, &id, &[("verdict", "reject"), ("text", "no")]).await;
    assert_eq!(late["ok"], false, "{late}");
    assert_eq!(late["message"], "Already approved by rita.");

    let chain = server::audit::verify(&a.db).await.unwrap();
    assert_eq!(chain.problem, None);
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_writing_at_once_keep_one_chain_one_call_per_webhook_id_and_exact_budgets() {
    if !on_postgres() {
        return;
    }
    let a = spawn_app().await;
    let b = spawn_beside(&a).await;
    let on_a = a.agent("bot").await;
    let mut on_b = on_a.clone();
    on_b.base = format!("http://{}", b.addr);

    // The same proposal (same webhook-id) sent to both at once is one call.
    for i in 0..5 {
        let msg = format!("msg_same_{i}");
        let body = json!({"session_id": "s", "tool": "web_search", "arguments": {"query": format!("q{i}")}});
        let (x, y) = tokio::join!(on_a.propose_as(&msg, body.clone()), on_b.propose_as(&msg, body));
        assert_eq!(x.0, StatusCode::OK, "{}", x.1);
        assert_eq!(y.0, StatusCode::OK, "{}", y.1);
        assert_eq!(x.1["id"], y.1["id"], "one webhook-id, one call");
    }

    // A rate budget of 30 per session and minute (web_fetch), spent from both at once:
    // exactly 30 are allowed.
    let mut sends = Vec::new();
    for i in 0..40 {
        let agent = if i % 2 == 0 { on_a.clone() } else { on_b.clone() };
        sends.push(tokio::spawn(async move {
            agent
                .propose(json!({"session_id": "budget", "tool": "web_fetch",
                    "arguments": {"url": format!("https://93.184.215.14/{i}")}}))
                .await
        }));
    }
    let mut allowed = 0;
    for s in sends {
        let (status, v) = s.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{v}");
        if v["status"] == "allowed" {
            allowed += 1;
        } else {
            assert_eq!(v["blocked_by"], "budget", "{v}");
        }
    }
    assert_eq!(allowed, 30, "the budget is shared and exact");

    let calls: i64 = sqlx::query_scalar("SELECT count(*) FROM tool_calls")
        .fetch_one(&a.db)
        .await
        .unwrap();
    assert_eq!(calls, 45);
    let chain = server::audit::verify(&a.db).await.unwrap();
    assert_eq!(chain.problem, None, "one valid chain");
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_request_replayed_to_the_other_instance_is_refused() {
    if !on_postgres() {
        return;
    }
    let a = spawn_app().await;
    let b = spawn_beside(&a).await;
    let agent = a.agent("bot").await;
    let (_, v) = agent
        .propose(json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "q"}}))
        .await;
    let id = v["id"].as_str().unwrap().to_string();
    let send = |base: String, path: String| {
        let agent = agent.clone();
        async move {
            let payload = server::ingest::signature::bound_payload("GET", &path, b"");
            let req = agent.http.get(format!("{base}{path}"));
            let r = server::demo_agent::signed(req, &agent.id, &agent.secret, "msg_read_once", &payload)
                .send()
                .await
                .unwrap();
            let status = r.status();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let path = format!("/api/v1/tool-calls/{id}");
    let (s, v) = send(format!("http://{}", a.addr), path.clone()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    // The captured request, sent again to the other instance.
    let (s, v) = send(format!("http://{}", b.addr), path.clone()).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("replayed")),
        "{v}"
    );
    // The same webhook-id over another request: a forgery, refused there as well.
    let (s, v) = send(format!("http://{}", b.addr), format!("{path}?wait=1")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replay_mismatch")),
        "{v}"
    );
    drop(b);
}

/// An agent's proposal rate is one count for all instances: two instances, each allowing
/// the agent 3 at once and 1 a second, admit 3 of its proposals between them, not 6.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_rate_is_counted_once_across_instances() {
    if !on_postgres() {
        return;
    }
    let slow = |c: &mut server::config::Config| {
        c.agent_rate_per_second = 1;
        c.agent_rate_burst = 3;
    };
    let a = spawn_with(slow).await;
    let b = spawn_beside_with(&a, slow).await;
    let on_a = a.agent("bot").await;
    let mut on_b = on_a.clone();
    on_b.base = format!("http://{}", b.addr);
    let started = std::time::Instant::now();
    let mut answers = Vec::new();
    for i in 0..6 {
        let agent = if i % 2 == 0 { &on_a } else { &on_b };
        let msg = format!("msg_rate_{i}");
        let body = json!({"session_id": "s", "tool": "web_search", "arguments": {"query": format!("q{i}")}});
        answers.push((msg.clone(), body.clone(), agent.propose_as(&msg, body).await));
    }
    let admitted = answers.iter().filter(|(_, _, (s, _))| *s == StatusCode::OK).count();
    // One more a second: a slow machine may see a fourth admitted, never a sixth.
    let refills = started.elapsed().as_secs() as usize;
    let statuses: Vec<StatusCode> = answers.iter().map(|(_, _, (s, _))| *s).collect();
    assert!((3..=3 + refills).contains(&admitted), "{statuses:?} in {refills} s");
    let (msg, body, (_, refused)) = answers
        .iter()
        .find(|(_, _, (s, _))| *s == StatusCode::TOO_MANY_REQUESTS)
        .unwrap();
    assert_eq!(refused["error"]["code"], "rate_limited", "{refused}");
    // Nothing was stored for a refused proposal: the same request is admitted once the
    // pause is over.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (s, v) = on_b.propose_as(msg, body.clone()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let calls: i64 = sqlx::query_scalar("SELECT count(*) FROM tool_calls")
        .fetch_one(&a.db)
        .await
        .unwrap();
    assert_eq!(calls as usize, admitted + 1);
    drop(b);
}

/// Sign-in attempts are one count for all instances: trying passwords on each instance
/// in turn buys no extra attempts, and the right password waits like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_attempts_are_counted_once_across_instances() {
    if !on_postgres() {
        return;
    }
    let few = |c: &mut server::config::Config| c.login_burst_per_account = 3;
    let a = spawn_with(few).await;
    let b = spawn_beside_with(&a, few).await;
    let (user, password) = a.admin.clone();
    let mut statuses = Vec::new();
    for i in 0..6 {
        let app = if i % 2 == 0 { &a } else { &b };
        let r = app.login(&client(), &user.to_uppercase(), "not the password").await;
        statuses.push(r.status());
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count(),
        3,
        "{statuses:?}"
    );
    for app in [&a, &b] {
        let r = app.login(&client(), &user, &password).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(header_str(&r, reqwest::header::RETRY_AFTER).parse::<u64>().unwrap() >= 1);
    }
    drop(b);
}

/// What changes outside a call reaches the other instance's pages live too: a person
/// added on A (announced by the administrator's request itself), and a policy applied on
/// A (B puts it in force and says so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_and_policy_changed_on_one_instance_reach_the_other_live() {
    if !on_postgres() {
        return;
    }
    let a = spawn_with(|c| {
        let file = c.site_root.parent().unwrap().join("policy.toml");
        std::fs::copy(workspace().join("policies/demo.toml"), &file).unwrap();
        c.policy_file = file;
    })
    .await;
    let b = spawn_beside(&a).await;
    let on_a = a.admin_client().await;
    let token = a.session_token(&on_a).await;
    let on_b = b.login_ok(&a.admin.0, &a.admin.1).await;
    let mut live = live_events(&on_b, &b).await;

    let r = on_a
        .post(a.url("/api/users/add"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("username", "newcomer"),
            ("password", "a long enough password"),
            ("role", "auditor"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let seen = read_until(&mut live, |s| s.contains("event: users_changed")).await;
    assert!(seen.contains("event: users_changed"), "{seen}");

    let relaxed = std::fs::read_to_string(workspace().join("policies/demo.toml"))
        .unwrap()
        .replacen("name = \"demo\"", "name = \"demo-changed\"", 1);
    assert!(relaxed.contains("demo-changed"), "the demo policy's name line changed");
    let r = on_a
        .post(a.url("/api/policy/apply"))
        .form(&[("csrf_token", token.as_str()), ("source", relaxed.as_str())])
        .send()
        .await
        .unwrap();
    let out: Value = r.json().await.unwrap();
    assert_eq!(out["ok"], true, "{out}");
    let seen = read_until(&mut live, |s| s.contains("demo-changed")).await;
    assert!(seen.contains("event: policy_changed"), "{seen}");
    let ready = b.ready().await;
    assert_eq!(ready["policy"]["version"], out["version"], "{ready}");
    drop(b);
}
