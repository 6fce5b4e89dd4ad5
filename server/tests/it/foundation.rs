//! Sign-in, sessions, roles, CSRF, health, headers and the live-event endpoint, through
//! real HTTP against a real SQLite file.

use crate::common::*;
use app::api::Role;
use reqwest::{header, StatusCode};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_endpoints_report_liveness_and_readiness_with_the_policy_version() {
    let app = spawn_app().await;
    let r = reqwest::get(app.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = reqwest::get(app.url("/readyz")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["database"], "ok");
    assert_eq!(v["policy"]["name"], "demo");
    assert!(v["policy"]["version"].as_str().unwrap().starts_with("sha256:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_carry_security_headers_and_the_csp_nonce_matches_the_inline_script() {
    let app = spawn_app().await;
    let r = client().get(app.url("/login")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let csp = header_str(&r, header::CONTENT_SECURITY_POLICY);
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("'wasm-unsafe-eval'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(header_str(&r, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(header_str(&r, header::X_FRAME_OPTIONS), "DENY");
    assert_eq!(header_str(&r, header::REFERRER_POLICY), "same-origin");
    assert!(!header_str(&r, header::HeaderName::from_static("x-request-id")).is_empty());
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    let html = r.text().await.unwrap();
    assert!(
        html.contains(&format!("nonce=\"{nonce}\"")),
        "hydration script carries the header's nonce"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_answers_carry_a_csp_that_allows_nothing_and_no_nonce() {
    let app = spawn_app().await;
    for path in [
        "/readyz",
        "/healthz",
        "/api/v1/openapi.json",
        "/api/v1/tool-calls/tc_none",
    ] {
        let r = client().get(app.url(path)).send().await.unwrap();
        let csp = header_str(&r, header::CONTENT_SECURITY_POLICY);
        assert_eq!(csp, "default-src 'none'; frame-ancestors 'none'", "{path}");
        assert_eq!(header_str(&r, header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{path}");
        assert_eq!(header_str(&r, header::X_FRAME_OPTIONS), "DENY", "{path}");
    }
    // A page beside them still gets its own nonce.
    let r = client().get(app.url("/login")).send().await.unwrap();
    assert!(header_str(&r, header::CONTENT_SECURITY_POLICY).contains("'nonce-"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_pages_get_a_clear_404() {
    let app = spawn_app().await;
    let c = app.admin_client().await;
    let r = c.get(app.url("/no/such/page")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert!(r.text().await.unwrap().contains("Page not found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_succeeds_with_the_right_password_and_cycles_the_session_id() {
    let app = spawn_app().await;
    let c = client();
    let page = c.get(app.url("/login")).send().await.unwrap();
    let before = page
        .cookies()
        .find(|k| k.name() == "airlock_session")
        .map(|k| k.value().to_string())
        .expect("the sign-in page starts an anonymous session for its CSRF token");
    let token = csrf_from(&page.text().await.unwrap()).unwrap();
    let r = c
        .post(app.url("/login"))
        .header(header::ACCEPT, "text/html")
        .form(&[
            ("username", app.admin.0.as_str()),
            ("password", &app.admin.1),
            ("csrf_token", &token),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(header_str(&r, header::LOCATION), "/queue");
    let cookie = r
        .cookies()
        .find(|k| k.name() == "airlock_session")
        .expect("session cookie");
    assert_ne!(cookie.value(), before, "session id is cycled at sign-in");
    assert!(cookie.http_only());
    assert!(cookie.same_site_strict());
    let raw = r
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(
        !raw.iter().any(|c| c.contains("Secure")),
        "secure is off only because the test config says so"
    );
    let r = c.get(app.url("/queue")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.text().await.unwrap().contains(&app.admin.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_cookies_are_the_default() {
    let app = spawn_with(|c| c.cookie_secure = true).await;
    let r = client().get(app.url("/login")).send().await.unwrap();
    let raw = r
        .headers()
        .get(header::SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        raw.contains("Secure") && raw.contains("HttpOnly") && raw.contains("SameSite=Strict"),
        "{raw}"
    );
    assert!(!header_str(&r, header::STRICT_TRANSPORT_SECURITY).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_fails_alike_for_a_wrong_password_and_an_unknown_user() {
    let app = spawn_app().await;
    for (user, pw) in [
        (app.admin.0.as_str(), "wrong password!"),
        ("nobody", "whatever password"),
    ] {
        let c = client();
        let r = app.login(&c, user, pw).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], "invalid");
        let r = c.get(app.url("/queue")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "still signed out");
    }
    // A browser gets sent back to the form with the reason.
    let c = client();
    let token = app.login_token(&c).await;
    let r = c
        .post(app.url("/login"))
        .header(header::ACCEPT, "text/html")
        .form(&[
            ("username", "nobody"),
            ("password", "x"),
            ("csrf_token", &token),
            ("next", "/admin"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(header_str(&r, header::LOCATION), "/login?error=invalid&next=%2Fadmin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_is_throttled_per_account_even_with_the_right_password() {
    let app = spawn_with(|c| c.login_burst_per_account = 3).await;
    let c = client();
    for _ in 0..3 {
        assert_eq!(
            app.login(&c, &app.admin.0, "wrong password!").await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let r = app.login(&c, &app.admin.0, &app.admin.1).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(header_str(&r, header::RETRY_AFTER).parse::<u64>().unwrap() >= 1);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "throttled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_is_throttled_per_address_across_accounts() {
    let app = spawn_with(|c| c.login_burst_per_address = 4).await;
    let c = client();
    for i in 0..4 {
        assert_eq!(
            app.login(&c, &format!("user{i}"), "wrong password!").await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        app.login(&c, &app.admin.0, &app.admin.1).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_users_cannot_sign_in_and_lose_open_sessions() {
    let app = spawn_app().await;
    let c = app.user("rita", Role::Reviewer).await;
    assert_eq!(c.get(app.url("/queue")).send().await.unwrap().status(), StatusCode::OK);
    let id = server::store::users::by_username(&app.db, "rita")
        .await
        .unwrap()
        .unwrap()
        .view
        .id;
    server::auth::users::set_disabled(&app.db, "user:test", id, true)
        .await
        .unwrap();
    let r = c.get(app.url("/queue")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "open session ended");
    let r = app.login(&client(), "rita", "correct horse battery staple").await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "disabled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_change_ends_open_sessions() {
    let app = spawn_app().await;
    let c = app.user("pat", Role::Oncall).await;
    server::auth::users::change_password(
        &app.db,
        "user:test",
        "pat",
        server::auth::Password::new("another long password"),
    )
    .await
    .unwrap();
    assert_eq!(
        c.get(app.url("/queue")).send().await.unwrap().status(),
        StatusCode::SEE_OTHER
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_checks_the_role() {
    let app = spawn_app().await;
    // (page, roles that may open it)
    let table: &[(&str, &[Role])] = &[
        ("/queue", &[Role::Admin, Role::Reviewer, Role::Oncall, Role::Auditor]),
        ("/oncall", &[Role::Admin, Role::Reviewer, Role::Oncall, Role::Auditor]),
        ("/audit", &[Role::Admin, Role::Auditor]),
        ("/stats", &[Role::Admin, Role::Reviewer, Role::Oncall, Role::Auditor]),
        ("/admin", &[Role::Admin]),
    ];
    let mut clients = vec![(Role::Admin, app.admin_client().await)];
    for (name, role) in [("rev", Role::Reviewer), ("onc", Role::Oncall), ("aud", Role::Auditor)] {
        clients.push((role, app.user(name, role).await));
    }
    for (path, allowed) in table {
        let anon = client().get(app.url(path)).send().await.unwrap();
        assert_eq!(anon.status(), StatusCode::SEE_OTHER, "{path} signed out");
        assert_eq!(header_str(&anon, header::LOCATION), format!("/login?next={path}"));
        for (role, c) in &clients {
            let r = c.get(app.url(path)).send().await.unwrap();
            let want = if allowed.contains(role) {
                StatusCode::OK
            } else {
                StatusCode::FORBIDDEN
            };
            assert_eq!(r.status(), want, "{path} as {role}");
            let html = r.text().await.unwrap();
            // Navigation shows exactly the pages of the role.
            for p in app::routes::PAGES {
                assert_eq!(
                    html.contains(&format!("href=\"{}\"", p.path)),
                    p.allows(*role) || (want == StatusCode::FORBIDDEN && p.path == app::routes::home_for(*role)),
                    "{path} as {role}: link to {}",
                    p.path
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_function_checks_the_role() {
    let app = spawn_app().await;
    let admin = app.admin_client().await;
    let rev = app.user("rev", Role::Reviewer).await;
    let aud = app.user("aud", Role::Auditor).await;
    let anon = client();
    let target = server::store::users::by_username(&app.db, "rev")
        .await
        .unwrap()
        .unwrap()
        .view
        .id
        .to_string();

    for (c, want) in [
        (&anon, StatusCode::UNAUTHORIZED),
        (&rev, StatusCode::FORBIDDEN),
        (&aud, StatusCode::FORBIDDEN),
        (&admin, StatusCode::OK),
    ] {
        let r = c.get(app.url("/api/users/list")).send().await.unwrap();
        assert_eq!(r.status(), want, "list_users");
        // Refusals are typed errors the page can match on, not free text.
        let body = r.text().await.unwrap();
        match want {
            StatusCode::UNAUTHORIZED => assert_eq!(body, r#""Unauthenticated""#),
            StatusCode::FORBIDDEN => assert!(body.starts_with(r#"{"Forbidden":"#), "{body}"),
            _ => {}
        }
        let token = if want == StatusCode::UNAUTHORIZED {
            String::new()
        } else {
            app.session_token(c).await
        };
        let calls: [(&str, Vec<(&str, &str)>); 3] = [
            (
                "/api/users/add",
                vec![
                    ("csrf_token", &token),
                    ("username", "newbie"),
                    ("password", "a long enough password"),
                    ("role", "auditor"),
                ],
            ),
            (
                "/api/users/role",
                vec![("csrf_token", &token), ("user_id", &target), ("role", "oncall")],
            ),
            (
                "/api/users/disabled",
                vec![("csrf_token", &token), ("user_id", &target), ("disabled", "false")],
            ),
        ];
        for (path, form) in calls {
            let r = c.post(app.url(path)).form(&form).send().await.unwrap();
            assert_eq!(r.status(), want, "{path}: {}", r.text().await.unwrap());
        }
    }
    // The admin's calls took effect.
    let users: Value = admin
        .get(app.url("/api/users/list"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"newbie"));
    assert!(users
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["username"] == "rev" && u["role"] == "oncall"));
    assert!(
        !users.to_string().contains("argon2"),
        "no password hashes reach the browser"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_changes_without_the_csrf_token_or_from_another_site_are_refused() {
    let app = spawn_app().await;
    let admin = app.admin_client().await;
    let token = app.session_token(&admin).await;
    let form = |t: &str| {
        vec![
            ("csrf_token".to_string(), t.to_string()),
            ("username".into(), "mallory".into()),
            ("password".into(), "a long enough password".into()),
            ("role".into(), "admin".into()),
        ]
    };
    let r = admin
        .post(app.url("/api/users/add"))
        .form(&form(""))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = admin
        .post(app.url("/api/users/add"))
        .form(&form("forged"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(r.text().await.unwrap(), r#""FormExpired""#);
    let r = admin
        .post(app.url("/api/users/add"))
        .header(header::ORIGIN, "https://evil.example")
        .form(&form(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "csrf_origin");
    let r = admin
        .post(app.url("/api/users/add"))
        .header("sec-fetch-site", "cross-site")
        .form(&form(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(server::store::users::by_username(&app.db, "mallory")
        .await
        .unwrap()
        .is_none());
    // Sign-out needs the token too.
    let r = admin
        .post(app.url("/logout"))
        .form(&[("csrf_token", "nope")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // And the sign-in form's token is bound to its session.
    let other = client();
    let r = other
        .post(app.url("/login"))
        .form(&[
            ("username", app.admin.0.as_str()),
            ("password", &app.admin.1),
            ("csrf_token", &token),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // With the right token it works.
    let r = admin
        .post(app.url("/api/users/add"))
        .form(&form(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_out_ends_the_session() {
    let app = spawn_app().await;
    let c = app.admin_client().await;
    let token = app.session_token(&c).await;
    let r = c
        .post(app.url("/logout"))
        .header(header::ACCEPT, "text/html")
        .form(&[("csrf_token", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        c.get(app.url("/queue")).send().await.unwrap().status(),
        StatusCode::SEE_OTHER
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_admin_cannot_be_disabled_or_demoted() {
    let app = spawn_app().await;
    let id = server::store::users::by_username(&app.db, &app.admin.0)
        .await
        .unwrap()
        .unwrap()
        .view
        .id;
    assert!(server::auth::users::set_disabled(&app.db, "user:test", id, true)
        .await
        .is_err());
    assert!(server::auth::users::set_role(&app.db, "user:test", id, Role::Reviewer)
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_need_a_session() {
    let app = spawn_app().await;
    let r = client().get(app.url("/api/events")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "unauthenticated");
}

async fn read_events(r: reqwest::Response, n: usize) -> Vec<(String, String)> {
    use futures::StreamExt;
    let mut body = r.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    while out.len() < n {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), body.next())
            .await
            .expect("event within 5 s")
            .unwrap()
            .unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find("\n\n") {
            let block: String = buf.drain(..i + 2).collect();
            let (mut id, mut ev) = (String::new(), String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().to_string();
                }
                if let Some(v) = line.strip_prefix("event:") {
                    ev = v.trim().to_string();
                }
            }
            if !ev.is_empty() {
                out.push((id, ev));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_are_sequenced_and_resume_from_the_last_id() {
    let app = spawn_app().await;
    let c = app.admin_client().await;
    let r = c.get(app.url("/api/events")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header_str(&r, header::CONTENT_TYPE).starts_with("text/event-stream"));
    let token = app.session_token(&c).await;
    let publish = |name: &'static str| {
        let c = c.clone();
        let token = token.clone();
        let url = app.url("/api/users/add");
        async move {
            let r = c
                .post(url)
                .form(&[
                    ("csrf_token", token.as_str()),
                    ("username", name),
                    ("password", "a long enough password"),
                    ("role", "auditor"),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK);
        }
    };
    publish("u1").await;
    publish("u2").await;
    let evs = read_events(r, 3).await;
    assert_eq!(evs[0], ("0".to_string(), "hello".to_string()));
    assert_eq!(evs[1], ("1".to_string(), "users_changed".to_string()));
    assert_eq!(evs[2], ("2".to_string(), "users_changed".to_string()));
    // Reconnect after event 1: event 2 is replayed.
    let r = c
        .get(app.url("/api/events"))
        .header("last-event-id", "1")
        .send()
        .await
        .unwrap();
    let evs = read_events(r, 2).await;
    assert_eq!(evs[1], ("2".to_string(), "users_changed".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_live_streams_and_stops_the_server() {
    let app = spawn_app().await;
    let c = app.admin_client().await;
    let r = c.get(app.url("/api/events")).send().await.unwrap();
    let addr = app.addr;
    let stopped = tokio::time::timeout(std::time::Duration::from_secs(4), app.stop()).await;
    assert!(
        matches!(stopped, Ok(Ok(()))),
        "graceful shutdown does not wait for open streams"
    );
    drop(r);
    assert!(reqwest::get(format!("http://{addr}/healthz")).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_administration_is_audited_with_who_did_it() {
    let app = spawn_app().await;
    let u = server::auth::users::add(
        &app.db,
        "user:boss",
        "newbie",
        server::auth::Password::new("a long enough password"),
        Role::Reviewer,
    )
    .await
    .unwrap();
    server::auth::users::set_role(&app.db, "user:boss", u.id, Role::Auditor)
        .await
        .unwrap();
    server::auth::users::set_disabled(&app.db, "user:boss", u.id, true)
        .await
        .unwrap();
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT kind, actor, data FROM audit_events WHERE kind LIKE 'user_%' ORDER BY seq")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let kinds: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        kinds,
        ["user_added", "user_added", "user_role_changed", "user_disabled"]
    );
    assert_eq!(rows[0].1, "system", "the first administrator is created by the system");
    assert!(
        rows[2].1 == "user:boss" && rows[2].2.contains("\"to\":\"auditor\""),
        "{rows:?}"
    );
    assert!(
        !rows.iter().any(|r| r.2.contains("password")),
        "no password material in the trail"
    );
    assert_eq!(server::audit::verify(&app.db).await.unwrap().problem, None);
}

#[tokio::test]
async fn malformed_server_function_fields_are_a_client_error() {
    let app = spawn_app().await;
    let c = app.admin_client().await;
    let token = app.session_token(&c).await;
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("/api/calls/decide", &[("id", "tc_1"), ("verdict", "launch")]),
        ("/api/users/role", &[("user_id", "one"), ("role", "reviewer")]),
        ("/api/users/role", &[("user_id", "1"), ("role", "emperor")]),
        ("/api/oncall/acknowledge", &[("call_id", "tc_1"), ("agree", "maybe")]),
        ("/api/users/disabled", &[]),
    ];
    for (path, fields) in cases {
        let mut form = vec![("csrf_token", token.as_str())];
        form.extend_from_slice(fields);
        let r = c.post(app.url(path)).form(&form).send().await.unwrap();
        let status = r.status();
        let body = r.text().await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {fields:?}: {body}");
        assert!(body.contains("Invalid"), "{body}");
    }
}

#[tokio::test]
async fn a_user_name_is_one_account_whatever_its_case_on_either_database() {
    let app = spawn_app().await;
    let _rita = app.user("rita", Role::Reviewer).await;
    for other in ["RITA", "Rita", " rItA "] {
        let r = server::auth::users::add(
            &app.db,
            "user:test",
            other,
            server::auth::Password::new("another long password"),
            Role::Admin,
        )
        .await;
        assert!(
            matches!(r, Err(server::auth::users::UserError::Conflict(_))),
            "{other:?}: {r:?}"
        );
    }
    // The same account answers to any case, with its own password only.
    let c = app.login_ok("RiTa", "correct horse battery staple").await;
    let me: Value = c
        .get(app.url("/api/session"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(me.to_string().contains("\"rita\""), "{me}");
    let wrong = app.login(&client(), "RITA", "another long password").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
}
