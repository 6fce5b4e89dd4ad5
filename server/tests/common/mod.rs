//! Test harness: a real server on a loopback port with a fresh SQLite file.

#![allow(dead_code)] // each test binary uses a different part of the harness

use reqwest::{header, redirect, Client, Response, StatusCode};
use secrecy::SecretString;
use server::auth::Password;
use server::config::Config;
use server::startup::Application;
use std::net::SocketAddr;

pub struct TestApp {
    pub addr: SocketAddr,
    pub admin: (String, String),
    pub db_url: String,
    pub db: server::store::Db,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub handle: Option<tokio::task::JoinHandle<Result<(), String>>>,
}

pub fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn test_config(dir: &std::path::Path) -> Config {
    let mut c = Config::defaults();
    c.bind = "127.0.0.1:0".parse().unwrap();
    c.database_url = SecretString::from(format!("sqlite://{}/airlock.db", dir.display()));
    c.policy_file = workspace().join("policies/demo.toml");
    c.site_root = dir.join("site");
    c.cookie_secure = false;
    c.shutdown_grace_seconds = 5;
    c
}

pub async fn spawn_with(adjust: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    adjust(&mut config);
    let db_url = secrecy::ExposeSecret::expose_secret(&config.database_url).to_string();
    let app = Application::build(config).await.expect("app builds");
    let addr = app.local_addr();
    let (name, pw) = app.first_admin.clone().expect("fresh database creates the first admin");
    let db = app.state().db.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(app.run_until_stopped(async {
        let _ = rx.await;
    }));
    TestApp {
        addr,
        admin: (name, pw.expose().to_string()),
        db_url,
        db,
        _dir: dir,
        stop: Some(tx),
        handle: Some(handle),
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_with(|_| {}).await
}

/// A browser-like client: keeps cookies, does not follow redirects.
pub fn client() -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(redirect::Policy::none())
        .build()
        .unwrap()
}

/// The value of the first hidden `csrf_token` field in a page.
pub fn csrf_from(html: &str) -> Option<String> {
    let i = html.find("name=\"csrf_token\"")?;
    let rest = &html[i..];
    let v = rest.find("value=\"")? + 7;
    let end = rest[v..].find('"')?;
    Some(rest[v..v + end].to_string())
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub async fn stop(mut self) -> Result<(), String> {
        let _ = self.stop.take().unwrap().send(());
        self.handle.take().unwrap().await.unwrap()
    }

    /// Open the sign-in page and return its CSRF token.
    pub async fn login_token(&self, c: &Client) -> String {
        let html = c.get(self.url("/login")).send().await.unwrap().text().await.unwrap();
        csrf_from(&html).expect("sign-in form has a CSRF token")
    }

    /// Sign in as a JSON client (no `Accept: text/html`).
    pub async fn login(&self, c: &Client, user: &str, password: &str) -> Response {
        let token = self.login_token(c).await;
        c.post(self.url("/login"))
            .form(&[("username", user), ("password", password), ("csrf_token", &token)])
            .send()
            .await
            .unwrap()
    }

    pub async fn login_ok(&self, user: &str, password: &str) -> Client {
        let c = client();
        let r = self.login(&c, user, password).await;
        assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
        c
    }

    pub async fn admin_client(&self) -> Client {
        self.login_ok(&self.admin.0, &self.admin.1).await
    }

    /// Create a user directly (as the CLI does) and return a signed-in client.
    pub async fn user(&self, name: &str, role: app::api::Role) -> Client {
        let pw = "correct horse battery staple";
        server::auth::users::add(&self.db, name, Password::new(pw), role)
            .await
            .unwrap();
        self.login_ok(name, pw).await
    }

    /// The CSRF token of a signed-in session (from the session server function).
    pub async fn session_token(&self, c: &Client) -> String {
        let v: serde_json::Value = c
            .get(self.url("/api/session"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["csrf_token"].as_str().unwrap().to_string()
    }
}

pub fn header_str(r: &Response, h: header::HeaderName) -> String {
    r.headers()
        .get(h)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}
