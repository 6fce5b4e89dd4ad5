//! The dashboard's language: Accept-Language by default, a cookie when signed out, the
//! account's choice when signed in; the switch needs the form token.

use crate::common::*;
use app::api::Role;
use reqwest::{header, StatusCode};

async fn lang_of(c: &reqwest::Client, app: &TestApp, path: &str, accept: &str) -> String {
    let html = c
        .get(app.url(path))
        .header(header::ACCEPT_LANGUAGE, accept)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let at = html.find("<html lang=\"").expect("the page declares its language") + 12;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

#[tokio::test]
async fn the_language_follows_the_browser_then_the_cookie_then_the_account() {
    let app = spawn_app().await;
    let anon = client();
    assert_eq!(lang_of(&anon, &app, "/login", "zh-CN,zh;q=0.9,en;q=0.8").await, "zh-CN");
    assert_eq!(lang_of(&anon, &app, "/login", "en-US,en;q=0.9").await, "en");
    assert_eq!(lang_of(&anon, &app, "/login", "fr-FR").await, "en");
    let page = anon
        .get(app.url("/login"))
        .header(header::ACCEPT_LANGUAGE, "zh")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("登录 Airlock") && page.contains("用户名"), "{page}");

    // Signed out, the switch sets a cookie (with the sign-in form's token only).
    let token = app.login_token(&anon).await;
    let r = anon
        .post(app.url("/api/locale"))
        .form(&[("csrf_token", "forged"), ("locale", "zh-CN")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = anon
        .post(app.url("/api/locale"))
        .form(&[("csrf_token", token.as_str()), ("locale", "klingon")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = anon
        .post(app.url("/api/locale"))
        .form(&[("csrf_token", token.as_str()), ("locale", "zh-CN")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let cookie = header_str(&r, header::SET_COOKIE);
    assert!(cookie.starts_with("airlock_lang=zh-CN;"), "{cookie}");
    assert_eq!(
        lang_of(&anon, &app, "/login", "en-US").await,
        "zh-CN",
        "the cookie wins over the browser"
    );

    // Signed in, the choice is kept with the account: another browser gets it too.
    let r = reviewer(&app, "mei", Role::Reviewer).await;
    assert_eq!(lang_of(&r.c, &app, "/queue", "en-US").await, "en");
    let (status, _) = r.post(&app, "/api/locale", &[("locale", "zh-CN")]).await;
    assert_eq!(status, StatusCode::OK);
    let elsewhere = app.login_ok("mei", "correct horse battery staple").await;
    assert_eq!(lang_of(&elsewhere, &app, "/queue", "en-US").await, "zh-CN");
    let queue = elsewhere
        .get(app.url("/queue"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(queue.contains("退出登录"), "the page is rendered in Chinese");
    let stored: Option<String> = sqlx::query_scalar("SELECT locale FROM users WHERE username = 'mei'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored.as_deref(), Some("zh-CN"));

    // What the server writes into its answers follows the same language.
    let agent = app.agent("writer").await;
    let write = |path: &str| {
        serde_json::json!({"session_id": "s-zh", "tool": "write_file",
            "arguments": {"path": path, "content": "# 报告"}, "context": {"trust": "isolated"}})
    };
    let first = held(&agent, write("out/a.md")).await;
    let out = r.decide(&app, &first, &[("verdict", "approve")]).await;
    assert_eq!(out["message"], "已批准；智能体可以执行。", "{out}");
    let out = r.decide(&app, &first, &[("verdict", "approve")]).await;
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["message"].as_str().unwrap().starts_with("已由 mei 处理"), "{out}");
    let second = held(&agent, write("out/b.md")).await;
    let out = r.decide(&app, &second, &[("verdict", "reject")]).await;
    assert_eq!(out["message"], "拒绝时需要给智能体一个理由", "{out}");
    // A refusal a rule wrote in English (and the trail keeps so) reaches a Chinese admin in
    // Chinese; a sentence the catalogue does not know stays as written.
    let admin = app.admin_client().await;
    let admin = Reviewer {
        token: app.session_token(&admin).await,
        c: admin,
    };
    admin.post(&app, "/api/locale", &[("locale", "zh-CN")]).await;
    let (status, body) = admin
        .post(
            &app,
            "/api/users/add",
            &[("username", "short"), ("password", "short"), ("role", "reviewer")],
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["Invalid"], "密码至少需要 12 个字符", "{body}");
    // Sentences written with values: the pattern is matched and its values kept.
    let (status, body) = admin.post(&app, "/api/agents/add", &[("id", "Build Bot")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["Invalid"]
            .as_str()
            .unwrap()
            .starts_with("智能体 ID \"Build Bot\" 须为 1–64 个字符"),
        "{body}"
    );
    admin.post(&app, "/api/agents/add", &[("id", "zh-bot")]).await;
    let (status, body) = admin.post(&app, "/api/agents/add", &[("id", "zh-bot")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["Conflict"], "名为 zh-bot 的智能体已存在", "{body}");
    let long = "很长".repeat(1001);
    let out = r.decide(&app, &second, &[("verdict", "reject"), ("text", &long)]).await;
    assert_eq!(out["message"], "理由超过了 2000 个字符", "{out}");

    let (status, _) = r.post(&app, "/api/locale", &[("locale", "en")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(lang_of(&elsewhere, &app, "/queue", "zh-CN").await, "en");
    app.stop().await.unwrap();
}
