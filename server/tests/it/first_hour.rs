//! The first hour through real HTTP and a real SQLite file: the queue pages through held
//! calls with true counts and filters, the stats and audit pages count what is recorded,
//! and the browser app's files are served compressed and cached by their content hash.

use crate::common::{held, reviewer, spawn_app, spawn_with};
use app::api::Role;
use reqwest::{header, StatusCode};
use serde_json::{json, Value};

fn write(session: &str, path: &str) -> Value {
    json!({"session_id": session, "tool": "write_file", "arguments": {"path": path, "content": "x"},
           "context": {"trust": "isolated"}})
}

fn refund(session: &str) -> Value {
    json!({"session_id": session, "tool": "refund_order", "arguments": {"order_id": "AB12345678", "amount": 7500}})
}

#[tokio::test]
async fn the_queue_pages_with_true_counts_filters_and_orders() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    let mut writes = Vec::new();
    for i in 0..55 {
        writes.push(held(&agent, write("a", &format!("out/{i}.md"))).await);
    }
    let refunds = [held(&agent, refund("b")).await, held(&agent, refund("b")).await];

    // First page, oldest first: 50 of 57, and the counts per filter value.
    let q = alice.get(&app, "/api/queue").await;
    assert_eq!(
        (q["total"].as_u64(), q["matching"].as_u64()),
        (Some(57), Some(57)),
        "{q}"
    );
    assert_eq!((q["page"].as_u64(), q["page_size"].as_u64()), (Some(0), Some(50)));
    let items = q["items"].as_array().unwrap();
    assert_eq!(items.len(), 50);
    assert_eq!(items[0]["id"], writes[0].as_str());
    assert_eq!(items[49]["id"], writes[49].as_str());
    let tools: Vec<(String, u64)> = q["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["value"].as_str().unwrap().to_string(), f["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(tools, [("refund_order".to_string(), 2), ("write_file".to_string(), 55)]);

    // Second page: the remaining seven, in order.
    let q = alice.get(&app, "/api/queue?query[page]=1").await;
    let ids: Vec<&str> = q["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = writes[50..].iter().map(String::as_str).collect();
    want.extend(refunds.iter().map(String::as_str));
    assert_eq!(ids, want);

    // A page past the end shows the last page rather than nothing.
    let q = alice.get(&app, "/api/queue?query[page]=99").await;
    assert_eq!((q["page"].as_u64(), q["items"].as_array().unwrap().len()), (Some(1), 7));

    // Filters: by tool (matching count from the groups) and by session (counted).
    let q = alice.get(&app, "/api/queue?query[tool]=refund_order").await;
    assert_eq!((q["total"].as_u64(), q["matching"].as_u64()), (Some(57), Some(2)));
    assert_eq!(q["items"].as_array().unwrap().len(), 2);
    let q = alice
        .get(&app, "/api/queue?query[session]=b&query[tool]=write_file")
        .await;
    assert_eq!(q["matching"].as_u64(), Some(0));
    assert!(q["items"].as_array().unwrap().is_empty());

    // Highest risk first: refunds (high) before writes (medium).
    let q = alice.get(&app, "/api/queue?query[sort]=risk").await;
    assert_eq!(q["items"][0]["tool"], "refund_order", "{}", q["items"][0]);
    assert_eq!(q["items"][2]["tool"], "write_file");

    // User text cannot break the query: quotes and SQL in a filter match nothing.
    let q = alice
        .get(
            &app,
            "/api/queue?query[tool]=%27%20OR%201%3D1%20--&query[sort]=x%3B%20DROP",
        )
        .await;
    assert_eq!((q["matching"].as_u64(), q["total"].as_u64()), (Some(0), Some(57)));

    // The server-rendered page says the true count (not a capped one).
    let html = alice.page(&app, "/queue").await;
    assert!(html.contains("57 calls are waiting."), "{html}");
    assert!(html.contains("Page 1 of 2"), "{html}");
}

#[tokio::test]
async fn stats_and_audit_count_what_is_recorded() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let auditor = reviewer(&app, "aud", Role::Auditor).await;
    let rev = reviewer(&app, "rev", Role::Reviewer).await;
    // Two denied (allowlist), one held, one allowed.
    for tool in ["no_such_tool", "other_unknown"] {
        let (s, v) = agent
            .propose(json!({"session_id": "s", "tool": tool, "arguments": {}}))
            .await;
        assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("denied")), "{v}");
    }
    held(&agent, write("s", "out/x.md")).await;
    let (_, v) = agent
        .propose(json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "rust"}}))
        .await;
    assert_eq!(v["status"], "allowed", "{v}");

    let s = rev.get(&app, "/api/stats/summary").await;
    assert_eq!(
        (s["calls"].as_u64(), s["waiting"].as_u64(), s["window"].as_u64()),
        (Some(4), Some(1), Some(4))
    );
    let count = |key: &str, value: &str| {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["value"] == value)
            .map(|f| f["count"].as_u64().unwrap())
    };
    assert_eq!(count("statuses", "denied"), Some(2), "{s}");
    assert_eq!(count("statuses", "pending"), Some(1));
    assert_eq!(count("statuses", "allowed"), Some(1));
    assert_eq!(count("layers", "allowlist"), Some(2), "{s}");
    // The held call names the layer that held it, but it was not denied.
    assert_eq!(s["layers"].as_array().unwrap().len(), 1, "only denials: {s}");
    let html = rev.page(&app, "/stats").await;
    assert!(!html.contains("No decisions have been made yet"));
    assert!(
        html.contains("calls recorded") && html.contains("Coming next"),
        "{html}"
    );

    let a = auditor.get(&app, "/api/audit/search").await;
    let chain = a["chain_len"].as_i64().unwrap();
    let hits = a["hits"].as_array().unwrap();
    assert!(chain >= 4 && !hits.is_empty() && hits.len() as i64 <= chain, "{a}");
    assert_eq!(
        a["indexed"].as_i64(),
        Some(chain),
        "a search sees everything recorded before it: {a}"
    );
    assert!(
        hits[0]["seq"].as_i64().unwrap() >= hits[hits.len() - 1]["seq"].as_i64().unwrap(),
        "newest first: {a}"
    );
    assert!(
        hits.iter().all(|e| e.get("data").is_none()),
        "no event data in results: {a}"
    );
    // Reviewers may not read the audit trail (the audit page's roles) unless configured.
    let r = rev.c.get(app.url("/api/audit/search")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn browser_assets_are_compressed_and_cached_by_content_hash() {
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let wasm = "airlock.0123456789abcdef.wasm";
    std::fs::write(pkg.join(wasm), vec![0u8; 4096]).unwrap();
    std::fs::write(pkg.join(format!("{wasm}.br")), b"br-bytes").unwrap();
    std::fs::write(pkg.join(format!("{wasm}.gz")), b"gz-bytes").unwrap();
    std::fs::write(pkg.join("airlock.css"), b"body{}").unwrap();
    std::fs::write(
        pkg.join("hash.txt"),
        format!(
            "js: 0000000000000000\nwasm: 0123456789abcdef\ncss: 0000000000000000\nviews: {}\n",
            server::web::assets::VIEWS
        ),
    )
    .unwrap();
    let root = site.path().to_path_buf();
    let app = spawn_with(move |c| c.site_root = root.clone()).await;
    let http = reqwest::Client::builder().no_gzip().no_brotli().build().unwrap();
    let get = |path: &str, enc: &str| {
        http.get(app.url(path))
            .header(header::ACCEPT_ENCODING, enc.to_string())
            .send()
    };

    let r = get(&format!("/pkg/{wasm}"), "gzip, deflate, br").await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let h = r.headers().clone();
    assert_eq!(h[header::CONTENT_ENCODING], "br");
    assert_eq!(h[header::CACHE_CONTROL], "public, max-age=31536000, immutable");
    assert_eq!(h[header::VARY], "accept-encoding");
    assert_eq!(h[header::CONTENT_TYPE], "application/wasm");
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"br-bytes");
    let r = get(&format!("/pkg/{wasm}"), "gzip").await.unwrap();
    assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
    let r = get(&format!("/pkg/{wasm}"), "identity").await.unwrap();
    assert!(r.headers().get(header::CONTENT_ENCODING).is_none());
    assert_eq!(r.bytes().await.unwrap().len(), 4096);

    // A name without a content hash is revalidated; a missing file is not cached.
    let r = get("/pkg/airlock.css", "br").await.unwrap();
    assert_eq!(r.headers()[header::CACHE_CONTROL], "no-cache");
    let r = get("/pkg/airlock.ffffffffffffffff.wasm", "br").await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_ne!(
        r.headers()[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    // Pages are never cached, and name the hashed files.
    let c = crate::common::client();
    let html = c.get(app.url("/login")).send().await.unwrap();
    assert_eq!(html.headers()[header::CACHE_CONTROL], "no-store");
    let html = html.text().await.unwrap();
    assert!(html.contains(&format!("/pkg/{}", wasm)), "{html}");
    assert!(html.contains("/pkg/airlock.0000000000000000.css"), "{html}");
}

#[tokio::test]
async fn a_server_refuses_browser_assets_built_the_other_way() {
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(site.path().join("pkg")).unwrap();
    let other = if server::web::assets::VIEWS == "erased" {
        "typed"
    } else {
        "erased"
    };
    std::fs::write(
        site.path().join("pkg/hash.txt"),
        format!("wasm: 0123456789abcdef\nviews: {other}\n"),
    )
    .unwrap();
    let mut config = crate::common::test_config(site.path());
    config.site_root = site.path().to_path_buf();
    let err = server::startup::Application::build(config)
        .await
        .err()
        .expect("refused");
    assert!(err.contains("views") && err.contains("scripts/build.sh"), "{err}");
}
