//! Durability: kill -9 the real binary under load; every acknowledged call must be there
//! after a restart, and the audit chain must verify. On PostgreSQL (`AIRLOCK_TEST_POSTGRES`)
//! two instances share the load and one of them is killed while the other goes on.

use crate::common::{database_for, free_port, postgres};
use serde_json::{json, Value};
use server::agents::SigningSecret;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn airlock(dir: &Path, url: &str, port: u16) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_airlock"));
    c.current_dir(dir)
        .env("AIRLOCK_DATABASE_URL", url)
        .env("AIRLOCK_KEY_FILE", dir.join("crash.key"))
        .env("AIRLOCK_POLICY_FILE", workspace().join("policies/demo.toml"))
        .env("AIRLOCK_SITE_ROOT", dir.join("site"))
        .env("AIRLOCK_BIND", format!("127.0.0.1:{port}"))
        .env("AIRLOCK_COOKIE_SECURE", "false")
        .env("AIRLOCK_AGENT_RATE_PER_SECOND", "0") // this test is about durability under load
        .env("AIRLOCK_LOG_LEVEL", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

// The ready child is returned to the caller, which kills and waits for it.
#[allow(clippy::zombie_processes)]
async fn start(dir: &Path, url: &str, port: u16) -> Child {
    let mut child = airlock(dir, url, port).arg("serve").spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let http = reqwest::Client::new();
    loop {
        if let Ok(r) = http.get(format!("http://127.0.0.1:{port}/readyz")).send().await {
            if r.status().is_success() {
                return child;
            }
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("server did not become ready");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn propose(http: &reqwest::Client, port: u16, secret: &SigningSecret, n: u64) -> Option<String> {
    let body =
        json!({"session_id": format!("s{}", n % 7), "tool": "web_search", "arguments": {"query": format!("q{n}")}})
            .to_string();
    let req = http.post(format!("http://127.0.0.1:{port}/api/v1/tool-calls"));
    let r = server::demo_agent::signed(req, "crash", secret, &format!("msg_{n}"), body.as_bytes())
        .body(body)
        .send()
        .await
        .ok()?;
    if !r.status().is_success() {
        return None;
    }
    let v: Value = r.json().await.ok()?;
    v["id"].as_str().map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_call_survives_kill_9_and_the_chain_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _scratch) = database_for(&format!("sqlite://{}/crash.db", dir.path().display())).await;
    let out = airlock(dir.path(), &url, 0)
        .args(["agent", "add", "crash"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let secret = SigningSecret::parse(stdout.lines().last().unwrap()).unwrap();

    let port = free_port();
    let mut child = start(dir.path(), &url, port).await;
    // On PostgreSQL a second instance takes every other request and outlives the first.
    let other = match postgres() {
        Some(_) => {
            let port = free_port();
            Some((start(dir.path(), &url, port).await, port))
        }
        None => None,
    };
    let ports: Vec<u16> = std::iter::once(port).chain(other.as_ref().map(|o| o.1)).collect();
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for worker in 0..16u64 {
        let (acked, stop, secret, ports) = (acked.clone(), stop.clone(), secret.clone(), ports.clone());
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut n = worker;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let port = ports[(n / 16) as usize % ports.len()];
                if let Some(id) = propose(&http, port, &secret, n).await {
                    acked.lock().unwrap().push(id);
                }
                n += 16;
            }
        }));
    }
    // Kill in the middle of the load, once a good number of calls are acknowledged.
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < 500 {
        assert!(Instant::now() < deadline, "load did not get going");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().unwrap(); // SIGKILL: no shutdown, no flush
    child.wait().unwrap();
    if other.is_some() {
        // The other instance goes on serving the load meanwhile.
        let at = acked.lock().unwrap().len();
        let deadline = Instant::now() + Duration::from_secs(30);
        while acked.lock().unwrap().len() < at + 200 {
            assert!(Instant::now() < deadline, "the other instance stopped serving");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();

    if let Some((mut other, _)) = other {
        other.kill().unwrap();
        other.wait().unwrap();
    }
    let port = free_port();
    let mut child = start(dir.path(), &url, port).await;
    let db = server::store::connect(&url.clone().into()).await.unwrap();
    let stored: std::collections::HashSet<String> = sqlx::query_scalar("SELECT id FROM tool_calls")
        .fetch_all(&db)
        .await
        .unwrap()
        .into_iter()
        .collect();
    let missing: Vec<&String> = acked.iter().filter(|id| !stored.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged calls lost",
        missing.len(),
        acked.len()
    );
    // Every stored call has its audit event.
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE kind = 'call_received'")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(events as usize, stored.len());
    db.close().await;
    child.kill().unwrap();
    child.wait().unwrap();

    let verify = airlock(dir.path(), &url, 0)
        .args(["audit", "verify"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{text}");
    assert!(text.contains("audit chain verified"), "{text}");
    // The directory first: a PostgreSQL database is dropped once its directory is gone.
    drop(dir);
}
