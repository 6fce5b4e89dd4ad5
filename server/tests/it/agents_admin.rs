//! Agents managed on the admin page: add (secret answered once), rotate with a grace
//! period, disable and enable; each change audited, effective at once, admins only.

use crate::common::*;
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn search() -> Value {
    json!({"session_id": "s-1", "tool": "web_search", "arguments": {"query": "rust"}})
}

/// An agent client holding `secret` (as the person copied it from the page).
fn agent_with(app: &TestApp, id: &str, secret: &str) -> TestAgent {
    TestAgent {
        id: id.to_string(),
        secret: server::agents::SigningSecret::parse(secret).unwrap(),
        base: app.url(""),
        http: reqwest::Client::new(),
    }
}

#[tokio::test]
async fn admin_adds_rotates_and_disables_an_agent_from_the_page() {
    let app = spawn_app().await;
    let admin = Reviewer {
        c: app.admin_client().await,
        token: String::new(),
    };
    let admin = Reviewer {
        token: app.session_token(&admin.c).await,
        c: admin.c,
    };

    // Added: the answer holds the secret, which signs requests at once.
    let (status, issued) = admin
        .post(
            &app,
            "/api/agents/add",
            &[("id", "build-bot"), ("description", "CI helper")],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{issued}");
    assert_eq!(issued["agent"], "build-bot");
    let first = issued["secret"].as_str().unwrap().to_string();
    assert!(first.starts_with("whsec_"), "{first}");
    let old = agent_with(&app, "build-bot", &first);
    let (status, body) = old.propose(search()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The same id again, or a malformed one: refused, nothing changes.
    let (status, body) = admin.post(&app, "/api/agents/add", &[("id", "build-bot")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["Conflict"].as_str().unwrap().contains("already exists"), "{body}");
    let (status, body) = admin.post(&app, "/api/agents/add", &[("id", "Build Bot")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let long = "x".repeat(201);
    let (status, _) = admin
        .post(&app, "/api/agents/add", &[("id", "other"), ("description", &long)])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Rotated with an hour's grace: old and new secrets both work; the listing shows both.
    let (status, rotated) = admin
        .post(
            &app,
            "/api/agents/rotate",
            &[("id", "build-bot"), ("grace_seconds", "3600")],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let second = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert!(rotated["message"].as_str().unwrap().contains("1 hour"), "{rotated}");
    let new = agent_with(&app, "build-bot", &second);
    assert_eq!(new.propose(search()).await.0, StatusCode::OK);
    assert_eq!(old.propose(search()).await.0, StatusCode::OK);
    let list = admin.get(&app, "/api/agents/list").await;
    let bot = list
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "build-bot")
        .unwrap()
        .clone();
    let secrets = bot["secrets"].as_array().unwrap();
    assert_eq!(secrets.len(), 2, "{bot}");
    assert!(
        secrets[0]["retires_at_ms"].is_null() && secrets[1]["retires_at_ms"].is_i64(),
        "{bot}"
    );
    assert!(!list.to_string().contains(&second) && !list.to_string().contains(&first));

    // Out-of-range grace periods are refused.
    for bad in ["-1", "2592001"] {
        let (status, _) = admin
            .post(
                &app,
                "/api/agents/rotate",
                &[("id", "build-bot"), ("grace_seconds", bad)],
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "grace {bad}");
    }
    let (status, _) = admin
        .post(&app, "/api/agents/rotate", &[("id", "nobody"), ("grace_seconds", "0")])
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Rotated with no grace: every earlier secret stops at once (no cached credentials).
    let (_, third) = admin
        .post(
            &app,
            "/api/agents/rotate",
            &[("id", "build-bot"), ("grace_seconds", "0")],
        )
        .await;
    let third = agent_with(&app, "build-bot", third["secret"].as_str().unwrap());
    let (status, body) = new.propose(search()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(old.propose(search()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(third.propose(search()).await.0, StatusCode::OK);

    // Disabled: refused at once with its own code; enabled: accepted again.
    let (status, _) = admin
        .post(
            &app,
            "/api/agents/disabled",
            &[("id", "build-bot"), ("disabled", "true")],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = third.propose(search()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "agent_disabled", "{body}");
    let list = admin.get(&app, "/api/agents/list").await;
    assert_eq!(list[0]["disabled"], true, "{list}");
    admin
        .post(
            &app,
            "/api/agents/disabled",
            &[("id", "build-bot"), ("disabled", "false")],
        )
        .await;
    assert_eq!(third.propose(search()).await.0, StatusCode::OK);

    // Every change is in the trail, by the admin, and no secret is (the refused requests
    // are there too, as agent_auth_failed).
    let events: Vec<(String, String, String)> =
        sqlx::query_as("SELECT kind, actor, data FROM audit_events WHERE kind LIKE 'agent_%' AND kind != 'agent_auth_failed' ORDER BY seq")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "agent_added",
            "agent_secret_rotated",
            "agent_secret_rotated",
            "agent_disabled",
            "agent_enabled"
        ]
    );
    assert!(
        events.iter().all(|e| e.1 == format!("user:{}", app.admin.0)),
        "{events:?}"
    );
    let all: Vec<String> = sqlx::query_scalar("SELECT data FROM audit_events")
        .fetch_all(&app.db)
        .await
        .unwrap();
    for s in [&first, &second] {
        let body = s.trim_start_matches("whsec_");
        assert!(!all.iter().any(|d| d.contains(body)), "a secret reached the trail");
    }
    app.stop().await.unwrap();
}

#[tokio::test]
async fn only_admins_manage_agents_and_forms_need_their_token() {
    let app = spawn_app().await;
    for role in [Role::Reviewer, Role::Oncall, Role::Auditor] {
        let r = reviewer(&app, &format!("p-{role}"), role).await;
        let (status, _) = r.post(&app, "/api/agents/add", &[("id", "sneaky")]).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{role}");
        let (status, _) = r
            .post(&app, "/api/agents/rotate", &[("id", "sneaky"), ("grace_seconds", "0")])
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{role}");
        let resp = r.c.get(app.url("/api/agents/list")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{role}");
    }
    let admin = Reviewer {
        c: app.admin_client().await,
        token: "forged".into(),
    };
    let (status, _) = admin.post(&app, "/api/agents/add", &[("id", "sneaky")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let resp = reqwest::Client::new()
        .get(app.url("/api/agents/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert!(
        !server::store::agents::exists(&mut app.db.acquire().await.unwrap(), "sneaky")
            .await
            .unwrap()
    );
    app.stop().await.unwrap();
}
