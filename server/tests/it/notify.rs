//! Notifications against local receivers on loopback: a signed JSON webhook (retried
//! until it answers), a Slack-compatible webhook, an SMTP server; failures announced on
//! the other channels; Slack interactions and decision links that never decide alone.

use crate::common::{held, reviewer, spawn_with, unix_now, TestApp};
use app::api::Role;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use secrecy::SecretString;
use serde_json::{json, Value};
use server::notify::config::{ChannelConfig, Smtp};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What a receiver got: path, headers, body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, String)>>>;

/// An HTTP receiver on loopback that fails the first `fail_first` requests with 500.
async fn receiver(fail_first: usize) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let failures = Arc::new(Mutex::new(fail_first));
    let app = axum::Router::new()
        .route(
            "/{*path}",
            post(
                |State((seen, failures)): State<(Seen, Arc<Mutex<usize>>)>,
                 uri: axum::http::Uri,
                 headers: HeaderMap,
                 body: Bytes| async move {
                    seen.lock()
                        .unwrap()
                        .push((uri.path().to_string(), headers, String::from_utf8_lossy(&body).into()));
                    let mut f = failures.lock().unwrap();
                    if *f > 0 {
                        *f -= 1;
                        return StatusCode::INTERNAL_SERVER_ERROR;
                    }
                    StatusCode::OK
                },
            ),
        )
        .with_state((seen.clone(), failures));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

/// Wait until `f` holds (deliveries run in the background).
async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn channel(name: &str, kind: &str, url: Option<String>, min_risk: &str) -> ChannelConfig {
    ChannelConfig {
        name: name.into(),
        kind: kind.into(),
        url,
        secret: None,
        to: vec![],
        min_risk: min_risk.into(),
        events: vec![],
    }
}

async fn app_with(channels: Vec<ChannelConfig>, smtp: Option<Smtp>) -> TestApp {
    spawn_with(move |c| {
        c.notify.allow_private = true;
        c.notify.backoff_ms = 20;
        c.notify.max_attempts = 3;
        c.notify.public_url = "https://airlock.example".into();
        c.notify.slack_signing_secret = Some(SecretString::from("slack-signing-secret"));
        c.notify.channels = channels;
        c.notify.smtp = smtp;
    })
    .await
}

async fn audit_data(app: &TestApp, kind: &str) -> Vec<Value> {
    let rows: Vec<String> = sqlx::query_scalar("SELECT data FROM audit_events WHERE kind = $1 ORDER BY seq")
        .bind(kind)
        .fetch_all(&app.db)
        .await
        .unwrap();
    rows.iter().map(|d| serde_json::from_str(d).unwrap()).collect()
}

/// Wait until an event of `kind` matching `f` is in the trail (outcomes are recorded
/// without holding anything up, so they land a moment later).
async fn recorded(app: &TestApp, kind: &str, f: impl Fn(&Value) -> bool) {
    for _ in 0..100 {
        if audit_data(app, kind).await.iter().any(&f) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no matching {kind} event: {:?}", audit_data(app, kind).await);
}

fn write() -> Value {
    json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "out/a.md", "content": "x"}})
}

fn refund() -> Value {
    json!({"session_id": "s", "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": 9000}})
}

#[tokio::test]
async fn webhooks_are_signed_retried_filtered_by_risk_and_audited() {
    let (hook, hook_seen) = receiver(1).await;
    let (slack, slack_seen) = receiver(0).await;
    let secret = server::agents::SigningSecret::generate();
    let mut webhook = channel("ops-hook", "webhook", Some(format!("{hook}/hook")), "low");
    webhook.secret = Some(SecretString::from(secret.reveal()));
    let app = app_with(
        vec![
            webhook,
            channel("ops-slack", "slack", Some(format!("{slack}/slack")), "high"),
        ],
        None,
    )
    .await;
    let agent = app.agent("bot").await;

    let medium = held(&agent, write()).await;
    // The webhook's first answer is a 500: it is tried again and arrives.
    eventually("the retried webhook", || hook_seen.lock().unwrap().len() >= 2).await;
    let (path, headers, body) = hook_seen.lock().unwrap()[1].clone();
    assert_eq!(path, "/hook");
    let h = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_string();
    let first_id = hook_seen.lock().unwrap()[0].1.get("webhook-id").cloned().unwrap();
    assert_eq!(first_id.to_str().unwrap(), h("webhook-id"), "a retry keeps its id");
    server::ingest::signature::verify(
        std::slice::from_ref(&secret),
        &h("webhook-id"),
        &h("webhook-timestamp"),
        body.as_bytes(),
        &h("webhook-signature"),
    )
    .expect("signed with the channel's secret");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["type"], "airlock.held");
    assert_eq!(v["data"]["facts"]["call_id"], medium.as_str());
    assert_eq!(v["data"]["link"], format!("https://airlock.example/calls/{medium}"));
    recorded(&app, "notification_delivered", |d| {
        d["channel"] == "ops-hook" && d["attempts"] == 2
    })
    .await;
    assert!(
        slack_seen.lock().unwrap().is_empty(),
        "a medium call is below the Slack channel's risk"
    );

    // A high-risk refund reaches Slack, with buttons that open signed confirm links.
    let high = held(&agent, refund()).await;
    eventually("the Slack message", || !slack_seen.lock().unwrap().is_empty()).await;
    let msg: Value = serde_json::from_str(&slack_seen.lock().unwrap()[0].2).unwrap();
    assert!(msg["text"].as_str().unwrap().contains("refund_order"), "{msg}");
    let buttons = msg["blocks"][1]["elements"].as_array().unwrap();
    assert_eq!(buttons[0]["action_id"], "approve");
    assert_eq!(buttons[0]["value"], high.as_str());
    assert!(buttons[0]["url"]
        .as_str()
        .unwrap()
        .starts_with("https://airlock.example/confirm?t="));

    // Escalation tells on-call through the channels too.
    let rules = server::config::Escalation {
        after_minutes: 1,
        ..Default::default()
    };
    let later = server::store::now_ms() + 2 * 60_000;
    server::oncall::escalation::escalate_due(&app.db, &app.ledger, &rules, later)
        .await
        .unwrap();
    eventually("the escalation webhook", || {
        hook_seen
            .lock()
            .unwrap()
            .iter()
            .any(|(_, _, b)| b.contains("airlock.escalated"))
    })
    .await;
}

#[tokio::test]
async fn a_channel_that_keeps_failing_is_reported_on_the_others() {
    let (slack, slack_seen) = receiver(0).await;
    // Nothing listens on this port once the listener is dropped.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let app = app_with(
        vec![
            channel("dead", "slack", Some(format!("http://{dead}/x")), "low"),
            channel("alive", "slack", Some(format!("{slack}/slack")), "low"),
        ],
        None,
    )
    .await;
    let agent = app.agent("bot").await;
    held(&agent, write()).await;
    eventually("the failure notice", || {
        slack_seen
            .lock()
            .unwrap()
            .iter()
            .any(|(_, _, b)| b.contains("Notification channel dead is failing"))
    })
    .await;
    recorded(&app, "notification_failed", |d| {
        d["channel"] == "dead" && d["attempts"] == 3
    })
    .await;
}

/// A minimal SMTP server: accepts one message and returns its DATA.
async fn smtp_receiver() -> (u16, tokio::sync::oneshot::Receiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let (r, mut w) = sock.into_split();
        let mut lines = BufReader::new(r).lines();
        w.write_all(b"220 test ESMTP\r\n").await.unwrap();
        let mut data = String::new();
        let mut in_data = false;
        let mut tx = Some(tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if in_data {
                if line == "." {
                    in_data = false;
                    w.write_all(b"250 queued\r\n").await.unwrap();
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(data.clone());
                    }
                } else {
                    data.push_str(&line);
                    data.push('\n');
                }
                continue;
            }
            let cmd = line.to_ascii_uppercase();
            let reply: &[u8] = if cmd.starts_with("EHLO") || cmd.starts_with("HELO") {
                b"250 test\r\n"
            } else if cmd.starts_with("DATA") {
                in_data = true;
                b"354 go on\r\n"
            } else if cmd.starts_with("QUIT") {
                w.write_all(b"221 bye\r\n").await.unwrap();
                break;
            } else {
                b"250 ok\r\n"
            };
            w.write_all(reply).await.unwrap();
        }
    });
    (port, rx)
}

#[tokio::test]
async fn e_mail_goes_out_over_smtp_with_confirm_links() {
    let (port, got) = smtp_receiver().await;
    let mut mail = channel("oncall-mail", "email", None, "high");
    mail.to = vec!["oncall@example.com".into()];
    let smtp = Smtp {
        host: "127.0.0.1".into(),
        port,
        from: "airlock@example.com".into(),
        username: None,
        password: None,
        tls: "none".into(),
    };
    let app = app_with(vec![mail], Some(smtp)).await;
    let agent = app.agent("bot").await;
    let id = held(&agent, refund()).await;
    let data = tokio::time::timeout(Duration::from_secs(10), got)
        .await
        .unwrap()
        .unwrap();
    assert!(data.contains("Subject: Held for review: refund_order"), "{data}");
    assert!(data.contains("oncall@example.com"), "{data}");
    // Quoted-printable may wrap long lines: join them before looking for the links.
    let flat = data.replace("=\n", "");
    assert!(flat.contains(&format!("https://airlock.example/calls/{id}")), "{flat}");
    assert!(flat.contains("https://airlock.example/confirm?t="), "{flat}");
}

async fn slack_post(app: &TestApp, ts: &str, body: &str, sig: Option<&str>) -> (reqwest::StatusCode, Value) {
    let mut r = reqwest::Client::new()
        .post(app.url("/api/slack/interactions"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", ts)
        .body(body.to_string());
    if let Some(s) = sig {
        r = r.header("x-slack-signature", s);
    }
    let r = r.send().await.unwrap();
    let s = r.status();
    (s, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn slack_interactions_need_the_signing_secret_and_never_decide() {
    let app = app_with(vec![], None).await;
    let agent = app.agent("bot").await;
    let id = held(&agent, write()).await;
    let payload = json!({"type": "block_actions", "user": {"username": "rita"},
        "actions": [{"action_id": "approve", "value": id}]});
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish();
    let now = unix_now().to_string();
    let secret = b"slack-signing-secret";
    let good = server::notify::slack::sign(secret, &now, body.as_bytes());

    let forged = server::notify::slack::sign(b"guessed", &now, body.as_bytes());
    let (s, v) = slack_post(&app, &now, &body, Some(&forged)).await;
    assert_eq!((s.as_u16(), v["error"]["code"].as_str()), (401, Some("bad_signature")));
    let (s, v) = slack_post(&app, &now, &body, None).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (401, Some("missing_signature"))
    );
    let old = (unix_now() - 600).to_string();
    let stale = server::notify::slack::sign(secret, &old, body.as_bytes());
    let (s, v) = slack_post(&app, &old, &body, Some(&stale)).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (401, Some("stale_timestamp"))
    );
    // The signature covers the body: another call id with the same signature fails.
    let other = body.replace(&id, "tc_other");
    let (s, _) = slack_post(&app, &now, &other, Some(&good)).await;
    assert_eq!(s.as_u16(), 401);

    let (s, v) = slack_post(&app, &now, &body, Some(&good)).await;
    assert_eq!(s.as_u16(), 200, "{v}");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("https://airlock.example/confirm?t="),
        "{v}"
    );
    assert_eq!(
        agent.get(&id, 0).await.1["status"],
        "pending",
        "a button alone decides nothing"
    );
    // Refusals are audited without holding up the answer: wait for the writer.
    let mut refused = 0;
    for _ in 0..100 {
        refused = audit_data(&app, "slack_interaction_refused").await.len();
        if refused == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(refused, 4, "every refused interaction is recorded");
    // A flood of forgeries is refused every time but recorded only a burst's worth.
    for _ in 0..60 {
        let (s, _) = slack_post(&app, &now, &body, Some(&forged)).await;
        assert_eq!(s.as_u16(), 401);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let recorded_after = audit_data(&app, "slack_interaction_refused").await.len();
    assert!(
        recorded_after < 4 + 40,
        "{recorded_after} refusals recorded for 64 forgeries"
    );
}

#[tokio::test]
async fn a_decision_link_opens_a_confirm_page_and_decides_once_for_a_signed_in_reviewer() {
    let app = app_with(vec![], None).await;
    let agent = app.agent("bot").await;
    let id = held(&agent, write()).await;
    let key = server::agents::ServerKey::load_or_create(&app.key_file).unwrap();
    let links = server::notify::links::Linker::new(&key, "https://airlock.example");
    let url = links.link(&id, "approve", server::store::now_ms());
    let token = url.split("t=").nth(1).unwrap().to_string();

    // Signed out: the link leads to sign-in, and back to the same link afterwards.
    let anon = crate::common::client()
        .get(app.url(&format!("/confirm?t={token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status().as_u16(), 303);
    let to = anon.headers()["location"].to_str().unwrap().to_string();
    assert!(to.starts_with("/login?next=/confirm%3Ft%3D"), "{to}");
    assert_eq!(
        agent.get(&id, 0).await.1["status"],
        "pending",
        "opening a link decides nothing"
    );

    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let aldo = reviewer(&app, "aldo", Role::Auditor).await;
    let q: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
    let view = rita.get(&app, &format!("/api/links/open?token={q}")).await;
    assert_eq!(
        (view["verdict"].as_str(), view["status"].as_str()),
        (Some("approve"), Some("pending"))
    );
    let page = rita.page(&app, &format!("/confirm?t={q}")).await;
    assert!(page.contains("Confirm approval"), "the confirm page asks first");

    let confirm = |who: &crate::common::Reviewer, token: &str| {
        let form = [("csrf_token", who.token.clone()), ("token", token.to_string())];
        who.c.post(app.url("/api/links/confirm")).form(&form).send()
    };
    assert_eq!(
        confirm(&aldo, &token).await.unwrap().status().as_u16(),
        403,
        "auditors do not decide"
    );
    let no_csrf = rita
        .c
        .post(app.url("/api/links/confirm"))
        .form(&[("csrf_token", "wrong"), ("token", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status().as_u16(), 403, "the link is not a CSRF token");
    let tampered = format!("x{token}");
    assert_eq!(confirm(&rita, &tampered).await.unwrap().status().as_u16(), 400);

    let r = confirm(&rita, &token).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let out: Value = r.json().await.unwrap();
    assert_eq!(
        (out["ok"].as_bool(), out["status"].as_str()),
        (Some(true), Some("approved")),
        "{out}"
    );
    let (_, v) = agent.get(&id, 0).await;
    assert_eq!(
        (v["status"].as_str(), v["decided_by"].as_str()),
        (Some("approved"), Some("user:rita"))
    );
    let again = confirm(&rita, &token).await.unwrap();
    assert_eq!(again.status().as_u16(), 400, "each link confirms once");
    assert!(again.text().await.unwrap().contains("already used"));
}

#[tokio::test]
async fn admins_add_test_and_remove_channels_whose_urls_stay_sealed() {
    let (slack, seen) = receiver(0).await;
    let app = app_with(
        vec![channel("from-file", "slack", Some(format!("{slack}/file")), "critical")],
        None,
    )
    .await;
    let admin_c = app.admin_client().await;
    let admin = crate::common::Reviewer {
        token: app.session_token(&admin_c).await,
        c: admin_c,
    };
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let token_path = "/services/T000/B000/XXXXsecretXXXX";
    let url = format!("{slack}{token_path}");
    let add = |who: &crate::common::Reviewer, fields: Vec<(&'static str, String)>| {
        let mut form = vec![("csrf_token", who.token.clone())];
        form.extend(fields);
        who.c.post(app.url("/api/channels/add")).form(&form).send()
    };
    let slack_fields = |name: &str| {
        vec![
            ("channel[name]", name.to_string()),
            ("channel[kind]", "slack".to_string()),
            ("channel[url]", url.clone()),
            ("channel[min_risk]", "low".to_string()),
            ("channel[events]", "held, escalated".to_string()),
        ]
    };
    assert_eq!(add(&rita, slack_fields("ops")).await.unwrap().status().as_u16(), 403);
    let no_secret = vec![
        ("channel[name]", "hook".to_string()),
        ("channel[kind]", "webhook".to_string()),
        ("channel[url]", url.clone()),
    ];
    let r = add(&admin, no_secret).await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(r.text().await.unwrap().contains("secret"));
    let bad_event = vec![
        ("channel[name]", "x".to_string()),
        ("channel[kind]", "slack".to_string()),
        ("channel[url]", url.clone()),
        ("channel[events]", "everything".to_string()),
    ];
    assert_eq!(add(&admin, bad_event).await.unwrap().status().as_u16(), 400);
    let r = add(&admin, slack_fields("ops")).await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap());
    assert_eq!(
        add(&admin, slack_fields("ops")).await.unwrap().status().as_u16(),
        400,
        "names are unique"
    );

    // Listed by host only; the token in the URL is sealed in the database.
    let list = admin.get(&app, "/api/channels/list").await;
    let text = list.to_string();
    assert!(!text.contains("XXXXsecretXXXX"), "{text}");
    let ops = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ops")
        .unwrap()
        .clone();
    assert_eq!(ops["target"], "http://127.0.0.1/…");
    assert_eq!(ops["from_config"], false);
    let stored: Vec<u8> = sqlx::query_scalar("SELECT sealed FROM notification_channels WHERE name = 'ops'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&stored).contains("secret"), "sealed at rest");

    // A test goes out now; then held calls follow the channel's filters.
    let form = [("csrf_token", admin.token.clone()), ("name", "ops".to_string())];
    let r = admin
        .c
        .post(app.url("/api/channels/test"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .any(|(p, _, b)| p == token_path && b.contains("Test notification")));
    let agent = app.agent("bot").await;
    held(&agent, write()).await;
    eventually("the held call on the added channel", || {
        seen.lock()
            .unwrap()
            .iter()
            .any(|(p, _, b)| p == token_path && b.contains("write_file"))
    })
    .await;
    assert!(
        !seen.lock().unwrap().iter().any(|(p, _, _)| p == "/file"),
        "the file's channel takes critical calls only"
    );
    assert_eq!(
        admin
            .get(&app, "/api/channels/list")
            .await
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "ops")
            .unwrap()["delivered"],
        2
    );

    // Channels from the file are not removed here; added ones are.
    let remove = |name: &str| {
        let form = [("csrf_token", admin.token.clone()), ("name", name.to_string())];
        admin.c.post(app.url("/api/channels/remove")).form(&form).send()
    };
    assert_eq!(remove("from-file").await.unwrap().status().as_u16(), 400);
    assert_eq!(remove("ops").await.unwrap().status().as_u16(), 200);
    assert_eq!(remove("ops").await.unwrap().status().as_u16(), 404);
    recorded(&app, "notification_channel_added", |d| {
        d["name"] == "ops" && !d.to_string().contains("XXXX")
    })
    .await;
    recorded(&app, "notification_channel_removed", |d| d["name"] == "ops").await;
}

#[tokio::test]
async fn channels_to_this_network_are_refused_unless_allowed_for_testing() {
    let app = spawn_with(|_| {}).await;
    let admin_c = app.admin_client().await;
    let token = app.session_token(&admin_c).await;
    for url in [
        "http://127.0.0.1:9/x",
        "http://10.0.0.8/hook",
        "http://localhost/x",
        "file:///etc/passwd",
    ] {
        let form = [
            ("csrf_token", token.as_str()),
            ("channel[name]", "n"),
            ("channel[kind]", "slack"),
            ("channel[url]", url),
        ];
        let r = admin_c
            .post(app.url("/api/channels/add"))
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400, "{url}");
    }
}
