//! Test harness: a real server on a loopback port with a fresh database: a SQLite file,
//! or with `AIRLOCK_TEST_POSTGRES=postgres://…/test` a PostgreSQL database of its own,
//! created for the test and dropped after it.

use reqwest::{header, redirect, Client, Response, StatusCode};
use secrecy::SecretString;
use server::auth::Password;
use server::config::Config;
use server::ingest::signature;
use server::startup::Application;
use std::net::SocketAddr;

pub struct TestApp {
    pub addr: SocketAddr,
    pub key_file: std::path::PathBuf,
    pub admin: (String, String),
    pub db: server::store::Db,
    /// The database's URL, for the `airlock` binary run beside the server.
    pub database_url: String,
    /// The ledger, for what tests drive with a chosen clock (expiry, escalation).
    pub ledger: server::ledger::Ledger,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub handle: Option<tokio::task::JoinHandle<Result<(), String>>>,
    /// Last: dropped after the directory it checks is gone.
    _postgres: Option<Scratch>,
}

pub fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The PostgreSQL server the suite runs against, when it runs against one.
pub fn postgres() -> Option<String> {
    std::env::var("AIRLOCK_TEST_POSTGRES").ok().filter(|u| !u.is_empty())
}

/// A test's own PostgreSQL database, named after the process and the test's directory
/// (so a restart on the same directory finds the same data). It is dropped with the test
/// once its directory is gone; what a killed run left is dropped by the next run.
pub struct Scratch {
    admin: String,
    name: String,
    dir: std::path::PathBuf,
}

impl Scratch {
    /// The database standing for the SQLite file `file`, on the server at `admin`
    /// (created when missing); dropped once the file's directory is gone.
    pub async fn ensure(admin: &str, file: &std::path::Path) -> (Scratch, String) {
        use sqlx::Connection;
        static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
        let name = scratch_name(file);
        let mut conn = sqlx::PgConnection::connect(admin)
            .await
            .expect("the test PostgreSQL answers");
        SWEPT
            .get_or_init(|| async {
                let names: Vec<String> =
                    sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'airlock_test_%'")
                        .fetch_all(&mut conn)
                        .await
                        .unwrap();
                for old in names {
                    let pid = old.split('_').nth(2).unwrap_or("");
                    if !std::path::Path::new("/proc").join(pid).exists() {
                        drop_database(&mut conn, &old).await;
                    }
                }
            })
            .await;
        let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
            .bind(&name)
            .fetch_optional(&mut conn)
            .await
            .unwrap();
        if exists.is_none() {
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        let _ = conn.close().await;
        let url = database_url(admin, &name);
        (
            Scratch {
                admin: admin.to_string(),
                name,
                dir: file.parent().unwrap_or(file).to_path_buf(),
            },
            url,
        )
    }
}

/// Drop a scratch database, ending its open connections (a server may still hold some).
async fn drop_database(conn: &mut sqlx::PgConnection, name: &str) {
    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(conn)
        .await;
}

fn scratch_name(dir: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut h);
    format!("airlock_test_{}_{:016x}", std::process::id(), h.finish())
}

fn database_url(admin: &str, name: &str) -> String {
    let mut url = url::Url::parse(admin).expect("AIRLOCK_TEST_POSTGRES is a URL");
    url.set_path(name);
    url.to_string()
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.dir.exists() {
            return;
        }
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Drop runs inside the test's runtime: the database is dropped from a thread of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                use sqlx::Connection;
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    drop_database(&mut conn, &name).await;
                }
            });
        })
        .join();
    }
}

pub fn test_config(dir: &std::path::Path) -> Config {
    let mut c = Config::defaults();
    c.bind = "127.0.0.1:0".parse().unwrap();
    c.database_url = SecretString::from(format!("sqlite://{}/airlock.db", dir.display()));
    c.policy_file = workspace().join("policies/demo.toml");
    c.site_root = dir.join("site");
    c.key_file = dir.join("airlock.key");
    c.cookie_secure = false;
    c.shutdown_grace_seconds = 5;
    c
}

pub async fn spawn_with(adjust: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    adjust(&mut config);
    let postgres = on_postgres(&mut config).await;
    start(config, dir, postgres).await
}

async fn start(config: Config, dir: tempfile::TempDir, postgres: Option<Scratch>) -> TestApp {
    // `AIRLOCK_TEST_LOG=warn` (or any filter) shows the servers' logs with a test's output.
    if let Ok(filter) = std::env::var("AIRLOCK_TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
    let key_file = config.key_file.clone();
    let database_url = secrecy::ExposeSecret::expose_secret(&config.database_url).to_string();
    let app = Application::build(config).await.expect("app builds");
    let addr = app.local_addr();
    // A restart on an existing database creates no administrator.
    let (name, pw) = app
        .first_admin
        .clone()
        .unwrap_or_else(|| (String::new(), Password::new("")));
    let db = app.state().db.clone();
    let ledger = app.state().ledger.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(app.run_until_stopped(async {
        let _ = rx.await;
    }));
    TestApp {
        addr,
        key_file,
        admin: (name, pw.expose().to_string()),
        db,
        database_url,
        ledger,
        _dir: dir,
        _postgres: postgres,
        stop: Some(tx),
        handle: Some(handle),
    }
}

/// The database a test uses for the SQLite file `url`: with a test PostgreSQL server, a
/// PostgreSQL database of its own instead (named after the file's path).
pub async fn database_for(url: &str) -> (String, Option<Scratch>) {
    match (postgres(), url.strip_prefix("sqlite://")) {
        (Some(admin), Some(file)) => {
            let (scratch, pg) = Scratch::ensure(&admin, std::path::Path::new(file)).await;
            (pg, Some(scratch))
        }
        _ => (url.to_string(), None),
    }
}

/// A config's SQLite database, moved to PostgreSQL when the suite runs there.
async fn on_postgres(config: &mut Config) -> Option<Scratch> {
    let (url, scratch) = database_for(secrecy::ExposeSecret::expose_secret(&config.database_url)).await;
    config.database_url = SecretString::from(url);
    scratch
}

/// Another instance on `app`'s database (PostgreSQL), with the same server key and a
/// directory (search index, site) of its own.
pub async fn spawn_beside(app: &TestApp) -> TestApp {
    spawn_beside_with(app, |_| {}).await
}

/// [`spawn_beside`] with a config of its own.
pub async fn spawn_beside_with(app: &TestApp, adjust: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    adjust(&mut config);
    config.database_url = SecretString::from(app.database_url.clone());
    std::fs::copy(&app.key_file, &config.key_file).unwrap();
    start(config, dir, None).await
}

pub async fn spawn_app() -> TestApp {
    spawn_with(|_| {}).await
}

/// A server whose database and key file live in `dir`, so a later call with the same
/// directory restarts it on the same data.
pub async fn spawn_in(dir: &std::path::Path) -> TestApp {
    let url = format!("sqlite://{}", dir.join("keep.db").display());
    let key = dir.join("keep.key");
    spawn_with(move |c| {
        c.database_url = url.into();
        c.key_file = key;
    })
    .await
}

/// Run the `airlock` binary on database `db` as a user would; its output.
pub fn airlock(db: &str, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .env("AIRLOCK_DATABASE_URL", db)
        .env("AIRLOCK_LOG_LEVEL", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// A command's standard output and error, as one text.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A loopback port nothing listens on (for a server started as a separate process).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A browser-like client: keeps cookies, does not follow redirects.
pub fn client() -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
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
    /// The directory holding the database, its search index and the key file.
    pub fn db_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub async fn stop(mut self) -> Result<(), String> {
        let _ = self.stop.take().unwrap().send(());
        self.handle.take().unwrap().await.unwrap()
    }

    /// Open the sign-in page and return its CSRF token.
    pub async fn login_token(&self, c: &Client) -> String {
        let r = c.get(self.url("/login")).send().await.unwrap();
        let status = r.status();
        let html = r.text().await.unwrap();
        assert_eq!(status, StatusCode::OK, "GET /login: {html}");
        csrf_from(&html).unwrap_or_else(|| panic!("sign-in form has a CSRF token: {html}"))
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
        server::auth::users::add(&self.db, "user:test", name, Password::new(pw), role)
            .await
            .unwrap();
        self.login_ok(name, pw).await
    }

    /// What `/readyz` answers (the policy in force, the database, …).
    pub async fn ready(&self) -> serde_json::Value {
        client()
            .get(self.url("/readyz"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
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

/// An agent with its secret, sending signed requests to a test server.
#[derive(Clone)]
pub struct TestAgent {
    pub id: String,
    pub secret: server::agents::SigningSecret,
    pub base: String,
    pub http: Client,
}

pub fn unix_now() -> i64 {
    server::store::now_ms() / 1000
}

impl TestApp {
    /// Register an agent (as `airlock agent add` does) and return it.
    pub async fn agent(&self, id: &str) -> TestAgent {
        let key = server::agents::ServerKey::load_or_create(&self.key_file).unwrap();
        let secret = server::agents::add(&self.db, &key, id, "test agent", "user:test")
            .await
            .unwrap();
        TestAgent {
            id: id.to_string(),
            secret,
            base: format!("http://{}", self.addr),
            http: Client::new(),
        }
    }
}

impl TestAgent {
    /// Headers for a message: (webhook-id, timestamp, signature over `payload`).
    pub fn sign(&self, msg_id: &str, ts: i64, payload: &[u8]) -> String {
        server::ingest::signature::sign(&self.secret, msg_id, &ts.to_string(), payload)
    }

    /// Send a raw ingest request with explicit id, timestamp and signature header.
    pub async fn post_raw(&self, msg_id: &str, ts: i64, body: &str, signature: &str) -> Response {
        self.http
            .post(format!("{}/api/v1/tool-calls", self.base))
            .header("content-type", "application/json")
            .header("airlock-agent", &self.id)
            .header("webhook-id", msg_id)
            .header("webhook-timestamp", ts.to_string())
            .header("webhook-signature", signature)
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    /// Propose with a fresh message id; returns the status and JSON body.
    pub async fn propose(&self, body: serde_json::Value) -> (StatusCode, serde_json::Value) {
        let id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        self.propose_as(&id, body).await
    }

    pub async fn propose_as(&self, msg_id: &str, body: serde_json::Value) -> (StatusCode, serde_json::Value) {
        let text = body.to_string();
        let ts = unix_now();
        let sig = self.sign(msg_id, ts, text.as_bytes());
        let r = self.post_raw(msg_id, ts, &text, &sig).await;
        let status = r.status();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// A signed request to another endpoint: signs "{METHOD} {path}\n{body}".
    pub async fn call(&self, method: reqwest::Method, path: &str, body: &str) -> (StatusCode, serde_json::Value) {
        let msg_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        let payload = signature::bound_payload(method.as_str(), path, body.as_bytes());
        let req = self.http.request(method, format!("{}{}", self.base, path));
        let r = server::demo_agent::signed(req, &self.id, &self.secret, &msg_id, &payload)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// Long-poll a call in the background (the decision is made meanwhile).
    pub fn poll_later(&self, id: &str, wait: u64) -> tokio::task::JoinHandle<(StatusCode, serde_json::Value)> {
        let (agent, id) = (self.clone(), id.to_string());
        tokio::spawn(async move { agent.get(&id, wait).await })
    }

    pub async fn get(&self, id: &str, wait: u64) -> (StatusCode, serde_json::Value) {
        self.call(
            reqwest::Method::GET,
            &format!("/api/v1/tool-calls/{id}?wait={wait}"),
            "",
        )
        .await
    }
}

/// A signed-in person with the CSRF token their forms carry.
pub struct Reviewer {
    pub c: Client,
    pub token: String,
}

pub async fn reviewer(app: &TestApp, name: &str, role: app::api::Role) -> Reviewer {
    let c = app.user(name, role).await;
    let token = app.session_token(&c).await;
    Reviewer { c, token }
}

impl Reviewer {
    pub async fn decide_raw(&self, app: &TestApp, id: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut form = vec![("csrf_token", self.token.as_str()), ("id", id)];
        form.extend_from_slice(fields);
        self.c
            .post(app.url("/api/calls/decide"))
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// Decide and return the outcome (the server function answers 200 with `ok` false
    /// when the decision was refused for a reason about the call).
    pub async fn decide(&self, app: &TestApp, id: &str, fields: &[(&str, &str)]) -> serde_json::Value {
        let r = self.decide_raw(app, id, fields).await;
        assert_eq!(r.status(), StatusCode::OK);
        r.json().await.unwrap()
    }

    /// A batch decision: the HTTP status and, when 200, the per-call outcomes.
    pub async fn batch(
        &self,
        app: &TestApp,
        ids: &[String],
        verdict: &str,
        reason: &str,
    ) -> (StatusCode, serde_json::Value) {
        // Encoded as the queue page's batch bar sends it: `ids[0]`, `ids[1]`, …
        let mut form = vec![
            ("csrf_token".to_string(), self.token.clone()),
            ("verdict".to_string(), verdict.to_string()),
            ("reason".to_string(), reason.to_string()),
        ];
        form.extend(ids.iter().enumerate().map(|(i, id)| (format!("ids[{i}]"), id.clone())));
        let r = self
            .c
            .post(app.url("/api/calls/batch"))
            .form(&form)
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// Post a server function's form (with this reviewer's CSRF token): status and JSON.
    pub async fn post(&self, app: &TestApp, path: &str, fields: &[(&str, &str)]) -> (StatusCode, serde_json::Value) {
        let mut form = vec![("csrf_token", self.token.as_str())];
        form.extend_from_slice(fields);
        let r = self.c.post(app.url(path)).form(&form).send().await.unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// The id of the held call of `tool` in the queue, once something proposed it (an
    /// integration running in another process, say).
    pub async fn held_in_queue(&self, app: &TestApp, tool: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let q = self.get(app, "/api/queue").await;
            if let Some(item) = q["items"].as_array().unwrap().iter().find(|i| i["tool"] == tool) {
                return item["id"].as_str().unwrap().to_string();
            }
            assert!(std::time::Instant::now() < deadline, "no held {tool} call");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// A page as the server renders it (HTML).
    pub async fn page(&self, app: &TestApp, path: &str) -> String {
        let r = self.c.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        r.text().await.unwrap()
    }

    pub async fn get(&self, app: &TestApp, path: &str) -> serde_json::Value {
        let r = self.c.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        r.json().await.unwrap()
    }
}

/// Propose a call that the policy holds; returns its id.
pub async fn held(agent: &TestAgent, body: serde_json::Value) -> String {
    let (s, v) = agent.propose(body).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "pending", "{v}");
    v["id"].as_str().unwrap().to_string()
}

/// Lift the chain's append-only guard, as someone with the database's owner rights could
/// (SQLite: drop its triggers; PostgreSQL: disable them), for tests of tampering.
pub async fn allow_tampering(db: &server::store::Db) {
    let statements: &[&str] = match server::store::Backend::of(db) {
        server::store::Backend::Sqlite => &[
            "DROP TRIGGER IF EXISTS audit_events_no_update",
            "DROP TRIGGER IF EXISTS audit_events_no_delete",
        ],
        server::store::Backend::Postgres => &["ALTER TABLE audit_events DISABLE TRIGGER USER"],
    };
    for sql in statements {
        sqlx::query(sql).execute(db).await.unwrap();
    }
}

/// The kinds of a call's audit events, in order.
pub async fn audit_kinds(app: &TestApp, call: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT kind FROM audit_events WHERE call_id = $1 ORDER BY seq")
        .bind(call)
        .fetch_all(&app.db)
        .await
        .unwrap()
}
