//! Decision integrity through real HTTP and a real SQLite file: a modification is judged
//! on every layer, nobody releases a call made on their own behalf, lapsed approvals do
//! not count, agents are limited per agent, and signed requests cannot be replayed.

use crate::common::{audit_kinds, held, reviewer, spawn_app, spawn_with};
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn refund(amount: f64) -> Value {
    json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": amount}})
}

#[tokio::test]
async fn a_modification_that_needs_more_approvers_waits_for_them() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Reviewer).await;
    let id = held(&agent, refund(6000.0)).await;
    assert_eq!(agent.get(&id, 0).await.1["approvers_required"], 1);

    let edit = json!({"order_id": "AB12345678", "amount": 999999});
    let out = alice
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert_eq!(
        (out["ok"].as_bool(), out["status"].as_str()),
        (Some(true), Some("pending")),
        "{out}"
    );
    assert!(out["message"].as_str().unwrap().contains("2 approvers"), "{out}");
    let (_, v) = agent.get(&id, 0).await;
    assert_eq!(
        (v["status"].as_str(), v["approvers_required"].as_i64()),
        (Some("pending"), Some(2)),
        "{v}"
    );

    // The modifier counts once; the second approver sees and releases the new arguments.
    let again = alice.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(again["ok"], false, "{again}");
    let detail = bob.get(&app, &format!("/api/calls/get?id={id}")).await;
    assert!(
        detail["final_arguments"].as_str().unwrap().contains("999999"),
        "{detail}"
    );
    let out = bob.decide(&app, &id, &[("verdict", "approve")]).await;
    assert_eq!(out["status"], "modified", "{out}");
    let (_, v) = agent.get(&id, 0).await;
    assert_eq!(v["status"], "modified");
    assert_eq!(
        v["arguments"]["amount"], 999999,
        "the agent runs what was approved: {v}"
    );
    assert_eq!(
        audit_kinds(&app, &id).await,
        [
            "call_received",
            "call_modification_recorded",
            "review_refused",
            "call_decided"
        ]
    );
}

#[tokio::test]
async fn approvals_given_before_a_modification_do_not_count_for_it() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Reviewer).await;
    let carol = reviewer(&app, "carol", Role::Reviewer).await;
    let id = held(&agent, refund(60000.0)).await;
    alice.decide(&app, &id, &[("verdict", "approve")]).await;
    // Bob changes the amount: alice approved 60000, not this.
    let edit = json!({"order_id": "AB12345678", "amount": 70000});
    let out = bob
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert_eq!(out["status"], "pending", "{out}");
    let q = carol.get(&app, "/api/queue").await;
    assert_eq!(q["items"][0]["approvals"], json!(["user:bob"]));
    assert_eq!(
        carol.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "modified"
    );
}

#[tokio::test]
async fn a_modification_the_policy_refuses_is_refused_with_the_engines_reason() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let id = held(&agent, refund(6000.0)).await;
    for (edit, words) in [
        (json!({"order_id": "AB12345678", "amount": -5}), "schema"),
        (json!({"order_id": "AB12345678", "amount": 100, "note": "x"}), "schema"),
        (json!({"order_id": "bad", "amount": 100}), "schema"),
    ] {
        let out = alice
            .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
            .await;
        assert_eq!(out["ok"], false, "{edit}: {out}");
        assert!(out["message"].as_str().unwrap().contains(words), "{edit}: {out}");
    }
    assert_eq!(agent.get(&id, 0).await.1["status"], "pending");
    // A command modified into a dangerous one is refused by the guard.
    let cmd = held(
        &agent,
        json!({"session_id": "s", "tool": "execute_command", "arguments": {"command": "ls"}}),
    )
    .await;
    let edit = json!({"command": "rm -rf /"});
    let out = alice
        .decide(&app, &cmd, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["message"].as_str().unwrap().contains("command_guard"), "{out}");
    let kinds = audit_kinds(&app, &cmd).await;
    assert_eq!(kinds, ["call_received", "review_refused"]);
}

#[tokio::test]
async fn nobody_releases_a_call_made_on_their_own_behalf() {
    let app = spawn_with(|c| {
        c.principals.insert("Alice@Example.com".into(), "alice".into());
        // A mapping wins over the name heuristics: this address is bob's, not alice's.
        c.principals.insert("alice@shared.example".into(), "bob".into());
    })
    .await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Reviewer).await;
    // Mapped, user:NAME, a bare name, and an e-mail whose local part is the name.
    for principal in ["Alice@Example.com", "user:alice", "ALICE", "alice@corp.example"] {
        let mut body = json!({"session_id": "s", "tool": "write_file", "on_behalf_of": principal,
                              "arguments": {"path": "a.md", "content": "x"}});
        let id = held(&agent, body.take()).await;
        let out = alice.decide(&app, &id, &[("verdict", "approve")]).await;
        assert_eq!(out["ok"], false, "{principal}: {out}");
        assert!(out["message"].as_str().unwrap().contains("on your behalf"), "{out}");
        let edit = json!({"path": "b.md", "content": "x"});
        let out = alice
            .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
            .await;
        assert_eq!(out["ok"], false, "{principal}: {out}");
        // Rejecting one's own request is fine; here another reviewer approves it.
        assert_eq!(
            bob.decide(&app, &id, &[("verdict", "approve")]).await["status"],
            "approved"
        );
        assert_eq!(
            audit_kinds(&app, &id).await,
            ["call_received", "review_refused", "review_refused", "call_decided"]
        );
    }
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "write_file", "on_behalf_of": "alice@shared.example",
               "arguments": {"path": "a.md", "content": "x"}}),
    )
    .await;
    assert_eq!(bob.decide(&app, &id, &[("verdict", "approve")]).await["ok"], false);
    assert_eq!(
        alice.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "approved"
    );
}

#[tokio::test]
async fn approvals_of_people_disabled_or_moved_before_the_quorum_no_longer_count() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Reviewer).await;
    let carol = reviewer(&app, "carol", Role::Reviewer).await;
    let dave = reviewer(&app, "dave", Role::Reviewer).await;
    let id = held(&agent, refund(60000.0)).await;
    assert_eq!(
        alice.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "pending"
    );
    let uid: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = 'alice'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    server::auth::users::set_disabled(&app.db, "user:admin", uid, true)
        .await
        .unwrap();
    assert_eq!(
        bob.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "pending",
        "alice's approval lapsed with her account"
    );
    let bid: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = 'bob'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    server::auth::users::set_role(&app.db, "user:admin", bid, Role::Auditor)
        .await
        .unwrap();
    assert_eq!(
        carol.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "pending",
        "bob's approval lapsed with his reviewer role"
    );
    assert_eq!(
        dave.decide(&app, &id, &[("verdict", "approve")]).await["status"],
        "approved"
    );
    let (_, v) = agent.get(&id, 0).await;
    assert_eq!(v["decided_by"], "user:carol, user:dave");
}

#[tokio::test]
async fn a_grant_does_not_release_calls_that_need_a_quorum_or_destructive_tools_not_marked_grantable() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    // send_email is destructive and not marked grantable: no grant is offered.
    let mail = json!({"session_id": "g", "tool": "send_email",
                      "arguments": {"to": "a@example.com", "subject": "s", "body": "b"}});
    let id = held(&agent, mail.clone()).await;
    let detail = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    assert_eq!(detail["grantable"], false);
    assert!(
        detail["not_grantable"].as_str().unwrap().contains("destructive"),
        "{detail}"
    );
    let out = alice
        .decide(
            &app,
            &id,
            &[("verdict", "approve"), ("grant_scope", "tool"), ("grant_minutes", "30")],
        )
        .await;
    assert_eq!(out["ok"], false, "{out}");
    // No grant was made: the next e-mail of the session is held again.
    held(&agent, mail).await;
}

#[tokio::test]
async fn held_calls_are_capped_per_agent() {
    let app = spawn_with(|c| c.max_pending_per_agent = 2).await;
    let a = app.agent("bot").await;
    let b = app.agent("other").await;
    let write = |p: &str| json!({"session_id": "s", "tool": "write_file", "arguments": {"path": p, "content": "x"}});
    held(&a, write("1.md")).await;
    let second = held(&a, write("2.md")).await;
    let r = {
        let text = write("3.md").to_string();
        let ts = crate::common::unix_now();
        let sig = a.sign("msg_capped", ts, text.as_bytes());
        a.post_raw("msg_capped", ts, &text, &sig).await
    };
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(!crate::common::header_str(&r, reqwest::header::RETRY_AFTER).is_empty());
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "too_many_pending");
    // Another agent is not affected, and allowed calls still pass.
    held(&b, write("1.md")).await;
    let (s, v) = a
        .propose(json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "q"}}))
        .await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("allowed")), "{v}");
    // Once one is decided, the refused message can be sent again and is stored.
    assert_eq!(
        a.call(
            reqwest::Method::POST,
            &format!("/api/v1/tool-calls/{second}/cancel"),
            ""
        )
        .await
        .0,
        StatusCode::OK
    );
    let (s, v) = a.propose_as("msg_capped", write("3.md")).await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("pending")), "{v}");
}

#[tokio::test]
async fn proposals_are_rate_limited_per_agent_with_retry_after() {
    let app = spawn_with(|c| {
        c.agent_rate_per_second = 1;
        c.agent_rate_burst = 3;
    })
    .await;
    let a = app.agent("bot").await;
    let b = app.agent("other").await;
    let search = |q: usize| json!({"session_id": "s", "tool": "web_search", "arguments": {"query": format!("q{q}")}});
    // Six at once: the burst of three passes, at most one more refills meanwhile.
    let answers = futures::future::join_all((0..6).map(|i| {
        let text = search(i).to_string();
        let msg = format!("msg_rate_{i}");
        let ts = crate::common::unix_now();
        let sig = a.sign(&msg, ts, text.as_bytes());
        let a = &a;
        async move { a.post_raw(&msg, ts, &text, &sig).await }
    }))
    .await;
    let limited: Vec<&reqwest::Response> = answers
        .iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert!(limited.len() >= 2, "{} of 6 were limited", limited.len());
    for r in &limited {
        let retry: u64 = crate::common::header_str(r, reqwest::header::RETRY_AFTER)
            .parse()
            .unwrap();
        assert!((1..=2).contains(&retry), "{retry}");
    }
    // The other agent has its own allowance.
    assert_eq!(b.propose(search(9)).await.0, StatusCode::OK);
}

#[tokio::test]
async fn signed_reads_cancels_and_results_cannot_be_replayed() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "a.md", "content": "x"}}),
    )
    .await;
    let path = format!("/api/v1/tool-calls/{id}");
    let payload = server::ingest::signature::bound_payload("GET", &path, b"");
    let send = |msg: &'static str, payload: Vec<u8>, path: String| {
        let http = reqwest::Client::new();
        let req = http.get(format!("{}{}", agent.base, path));
        server::demo_agent::signed(req, &agent.id, &agent.secret, msg, &payload).send()
    };
    let first = send("msg_read", payload.clone(), path.clone()).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let again = send("msg_read", payload, path.clone()).await.unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let v: Value = again.json().await.unwrap();
    assert_eq!(v["error"]["code"], "replayed");
    // The same id signed over another request: refused and audited.
    let other = format!("{path}?wait=0");
    let payload = server::ingest::signature::bound_payload("GET", &other, b"");
    let forged = send("msg_read", payload, other).await.unwrap();
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE kind = 'agent_replay_refused'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(n, 1);
    // A proposal's webhook-id reused with another body is audited too.
    let body = json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "a"}});
    assert_eq!(agent.propose_as("msg_p", body).await.0, StatusCode::OK);
    let body = json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "b"}});
    assert_eq!(agent.propose_as("msg_p", body).await.0, StatusCode::UNAUTHORIZED);
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE kind = 'agent_replay_refused'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(n, 2);
}

#[tokio::test]
async fn signing_out_or_being_disabled_ends_open_live_streams() {
    use futures::StreamExt;
    let app = spawn_app().await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let bob = reviewer(&app, "bob", Role::Reviewer).await;
    let open = |c: &reqwest::Client| {
        let c = c.clone();
        let url = app.url("/api/events");
        async move {
            let r = c.get(url).timeout(Duration::from_secs(30)).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.bytes_stream()
        }
    };
    // Reads until the server ends the stream; a stream still open after 10 s fails.
    async fn ends(mut s: impl futures::Stream<Item = reqwest::Result<axum::body::Bytes>> + Unpin) {
        let r = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(Ok(_)) = s.next().await {}
        })
        .await;
        assert!(r.is_ok(), "the live stream stayed open");
    }
    let stream = open(&alice.c).await;
    let r = alice
        .c
        .post(app.url("/logout"))
        .form(&[("csrf_token", alice.token.as_str())])
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success() || r.status().is_redirection(), "{}", r.status());
    ends(Box::pin(stream)).await;

    let stream = open(&bob.c).await;
    let bid: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = 'bob'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    server::auth::users::set_disabled(&app.db, "user:admin", bid, true)
        .await
        .unwrap();
    ends(Box::pin(stream)).await;
}

#[tokio::test]
async fn a_secret_goes_to_a_new_destination_only_after_an_audited_reveal() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let olga = reviewer(&app, "olga", Role::Oncall).await;
    let secret = "sk-live-4eC39HqLyjWDarjtT1zdp7dc";
    let id = held(
        &agent,
        json!({"session_id": "s", "tool": "send_email",
               "arguments": {"to": "ops@example.com", "subject": "key", "body": format!("key={secret}")}}),
    )
    .await;
    // Kept secret + new recipient: refused for anyone typing over the redacted view.
    let detail = alice.get(&app, &format!("/api/calls/get?id={id}")).await;
    let mut edit: Value = serde_json::from_str(detail["arguments"].as_str().unwrap()).unwrap();
    edit["to"] = json!("someone@example.net");
    let out = alice
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert!(out["message"].as_str().unwrap().contains("new place"), "{out}");

    // A reviewer may not reveal; on-call may, and the reveal is audited first.
    let reveal = |who: &crate::common::Reviewer| {
        who.c
            .post(app.url("/api/calls/reveal"))
            .form(&[("csrf_token", who.token.as_str()), ("id", id.as_str())])
            .send()
    };
    let r = reveal(&alice).await.unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    let r = reveal(&olga).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let shown: String = r.json().await.unwrap();
    assert!(shown.contains(secret));
    assert_eq!(
        audit_kinds(&app, &id).await,
        ["call_received", "review_refused", "secret_revealed"]
    );

    // Typed in full by someone who has seen it, the secret may go to the new recipient.
    let mut edit: Value = serde_json::from_str(&shown).unwrap();
    edit["to"] = json!("someone@example.net");
    let out = olga
        .decide(&app, &id, &[("verdict", "modify"), ("arguments", &edit.to_string())])
        .await;
    assert_eq!(out["status"], "modified", "{out}");
    assert_eq!(agent.get(&id, 0).await.1["arguments"]["body"], format!("key={secret}"));
}

/// A loopback callback receiver; `stall` makes it never answer (the sender times out).
async fn hook(stall: bool) -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: String| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(body);
                if stall {
                    std::future::pending::<()>().await;
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hook"), rx)
}

#[tokio::test]
async fn one_slow_callback_receiver_does_not_delay_another_agents_callbacks() {
    let app = spawn_with(|c| c.callback_allow_private = true).await;
    let slow_agent = app.agent("slow").await;
    let fast_agent = app.agent("fast").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let (slow_url, mut slow_rx) = hook(true).await;
    let (fast_url, mut fast_rx) = hook(false).await;
    let write = |url: &str| {
        json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "a.md", "content": "x"},
               "callback_url": url})
    };
    let slow = held(&slow_agent, write(&slow_url)).await;
    let fast = held(&fast_agent, write(&fast_url)).await;
    assert_eq!(
        alice.decide(&app, &slow, &[("verdict", "approve")]).await["status"],
        "approved"
    );
    // The slow receiver has the first delivery and holds it (up to the 10 s timeout).
    tokio::time::timeout(Duration::from_secs(5), slow_rx.recv())
        .await
        .expect("the slow receiver is called")
        .unwrap();
    assert_eq!(
        alice.decide(&app, &fast, &[("verdict", "approve")]).await["status"],
        "approved"
    );
    let body = tokio::time::timeout(Duration::from_secs(5), fast_rx.recv())
        .await
        .expect("the other agent's callback is not held up by the slow receiver")
        .unwrap();
    assert!(body.contains(&fast), "{body}");
}
