//! The auditor's desk: search (full text, every filter, pagination, hostile text),
//! exports (JSONL round-trips, CSV parses without formula cells), timelines, planted
//! secrets, and signed checkpoints that catch a chain rewritten with recomputed hashes.

use crate::common::*;
use app::api::Role;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn enc(s: &str) -> String {
    app::api::encode(s)
}

/// A search through the page's server function; `qs` as in the page's URL.
async fn search(r: &Reviewer, app: &TestApp, qs: &[(&str, &str)]) -> Value {
    let path = format!(
        "/api/audit/search?{}",
        qs.iter()
            .map(|(k, v)| format!("query[{k}]={}", enc(v)))
            .collect::<Vec<_>>()
            .join("&")
    );
    r.get(app, &path).await
}

fn seqs(page: &Value) -> Vec<i64> {
    page["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["seq"].as_i64().unwrap())
        .collect()
}

fn field<'a>(page: &'a Value, f: &str) -> Vec<&'a str> {
    page["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[f].as_str().unwrap_or(""))
        .collect()
}

/// A small, varied history: allowed, denied, held and approved, rejected, modified,
/// a rule-held refund and a result.
async fn history(app: &TestApp) -> (TestAgent, Reviewer) {
    let bot = app.agent("bot").await;
    let other = app.agent("other-bot").await;
    let alice = reviewer(app, "alice", Role::Reviewer).await;
    let (s, v) = bot
        .propose(json!({"session_id": "s-1", "trace_id": "t-read", "tool": "read_file",
            "arguments": {"path": "notes/quarterly.md"}, "reason": "summarise the quarterly notes"}))
        .await;
    assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("allowed")), "{v}");
    let read = v["id"].as_str().unwrap().to_string();
    let (_, v) = bot
        .propose(json!({"session_id": "s-1", "tool": "format_disk", "arguments": {"device": "/dev/sda"}}))
        .await;
    assert_eq!(v["status"], "denied", "{v}");
    let approve = held(
        &bot,
        json!({"session_id": "s-1", "trace_id": "t-write", "tool": "write_file",
        "arguments": {"path": "out/report.md", "content": "# Report"}, "plan": "write the report then mail it"}),
    )
    .await;
    let reject = held(
        &bot,
        json!({"session_id": "s-1", "tool": "write_file",
        "arguments": {"path": "out/secret-plan.md", "content": "x"}}),
    )
    .await;
    let modify = held(
        &bot,
        json!({"session_id": "s-1", "tool": "write_file",
        "arguments": {"path": "out/draft.md", "content": "draft one"}}),
    )
    .await;
    held(
        &other,
        json!({"session_id": "s-2", "tool": "refund_order",
        "arguments": {"order_id": "AB12345678", "amount": 6000}}),
    )
    .await;
    assert_eq!(alice.decide(app, &approve, &[("verdict", "approve")]).await["ok"], true);
    let out = alice
        .decide(app, &reject, &[("verdict", "reject"), ("text", "not this file")])
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let edit = json!({"path": "out/draft.md", "content": "draft two"}).to_string();
    let out = alice
        .decide(
            app,
            &modify,
            &[
                ("verdict", "modify"),
                ("arguments", &edit),
                ("text", "use the second draft"),
            ],
        )
        .await;
    assert_eq!(out["ok"], true, "{out}");
    let (s, _) = bot
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/tool-calls/{read}/result"),
            &json!({"outcome": "ok", "summary": "read 42 lines", "duration_ms": 7}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    (bot, alice)
}

#[tokio::test]
async fn search_combines_free_text_with_every_filter() {
    let app = spawn_app().await;
    history(&app).await;
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;

    let all = search(&auditor, &app, &[]).await;
    assert_eq!(all["indexed"], all["chain_len"], "{all}");
    let newest = seqs(&all);
    assert!(newest.windows(2).all(|w| w[0] > w[1]), "newest first: {newest:?}");

    // Free text over the redacted events: words from arguments, reasons, plans and results.
    let p = search(&auditor, &app, &[("q", "quarterly")]).await;
    assert!(field(&p, "tool").contains(&"read_file"), "{p}");
    let p = search(&auditor, &app, &[("q", "\"the report then\"")]).await;
    assert_eq!(field(&p, "kind"), ["call_received"], "a phrase: {p}");
    let p = search(&auditor, &app, &[("q", "quarter*")]).await;
    assert!(!seqs(&p).is_empty(), "a prefix: {p}");
    let p = search(&auditor, &app, &[("q", "quarterly report")]).await;
    assert!(seqs(&p).is_empty(), "all words must match: {p}");

    // Each filter narrows to exactly what it names.
    let p = search(&auditor, &app, &[("agent", "other-bot")]).await;
    assert!(
        !seqs(&p).is_empty() && field(&p, "agent").iter().all(|a| *a == "other-bot"),
        "{p}"
    );
    let p = search(&auditor, &app, &[("session", "s-2")]).await;
    assert!(
        !seqs(&p).is_empty() && field(&p, "session").iter().all(|s| *s == "s-2"),
        "{p}"
    );
    let p = search(&auditor, &app, &[("trace", "t-write")]).await;
    assert!(
        field(&p, "kind").contains(&"call_decided"),
        "trace facts come from the call: {p}"
    );
    assert!(field(&p, "trace").iter().all(|t| *t == "t-write"), "{p}");
    let p = search(&auditor, &app, &[("tool", "refund_order")]).await;
    assert!(
        !seqs(&p).is_empty() && field(&p, "tool").iter().all(|t| *t == "refund_order"),
        "{p}"
    );
    let p = search(&auditor, &app, &[("status", "denied")]).await;
    assert_eq!(field(&p, "tool"), ["format_disk"], "{p}");
    let p = search(&auditor, &app, &[("layer", "allowlist")]).await;
    assert_eq!(field(&p, "tool"), ["format_disk"], "{p}");
    let p = search(&auditor, &app, &[("rule", "refund_over_5000")]).await;
    assert_eq!(field(&p, "tool"), ["refund_order"], "{p}");
    let p = search(&auditor, &app, &[("source", "reviewer")]).await;
    let mut statuses = field(&p, "status");
    statuses.sort();
    assert_eq!(statuses, ["approved", "modified", "rejected"], "{p}");
    let p = search(&auditor, &app, &[("reviewer", "alice"), ("status", "rejected")]).await;
    assert_eq!(
        field(&p, "summary"),
        ["write_file: rejected by alice — not this file"],
        "{p}"
    );
    let p = search(&auditor, &app, &[("kind", "call_result")]).await;
    assert_eq!(
        field(&p, "summary"),
        ["read_file: result ok in 7 ms — read 42 lines"],
        "{p}"
    );
    let p = search(&auditor, &app, &[("q", "draft"), ("source", "reviewer")]).await;
    assert_eq!(field(&p, "status"), ["modified"], "text and filters together: {p}");
    // A filter matches whole values as stored, letter case included: never a part of a
    // longer value, nor a word of the text.
    for (filter, value) in [
        ("tool", "refund"),
        ("tool", "REFUND_ORDER"),
        ("kind", "call"),
        ("agent", "other"),
        ("status", "denie"),
        ("layer", "quarterly"),
    ] {
        let p = search(&auditor, &app, &[(filter, value)]).await;
        assert!(seqs(&p).is_empty(), "{filter}={value}: {p}");
    }
    let p = search(&auditor, &app, &[("tool", "refund_order"), ("status", "denied")]).await;
    assert!(seqs(&p).is_empty(), "filters together: {p}");
    // A session (its own index) with a filter: exactly that session's events of that kind.
    let session = search(&auditor, &app, &[("session", "s-2")]).await;
    let received: Vec<i64> = seqs(&session)
        .into_iter()
        .zip(field(&session, "kind"))
        .filter(|(_, k)| *k == "call_received")
        .map(|(s, _)| s)
        .collect();
    let p = search(&auditor, &app, &[("session", "s-2"), ("kind", "call_received")]).await;
    assert!(!received.is_empty() && seqs(&p) == received, "{p}");

    // Time ranges: everything is from the last hour, nothing from before it.
    let p = search(&auditor, &app, &[("since", "1h")]).await;
    assert_eq!(seqs(&p), newest);
    let p = search(&auditor, &app, &[("until", "1h")]).await;
    assert!(seqs(&p).is_empty(), "{p}");
    let r = auditor
        .c
        .get(app.url("/api/audit/search?query[since]=yesterday"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.text().await.unwrap().contains("is not a time"));

    // The oldest-first order, and the page links the page renders from the URL.
    let p = search(&auditor, &app, &[("sort", "oldest")]).await;
    let oldest = seqs(&p);
    assert!(oldest.windows(2).all(|w| w[0] < w[1]), "{oldest:?}");
    let html = auditor.page(&app, "/audit?tool=refund_order&q=order").await;
    assert!(html.contains("data-testid=\"audit-row\""), "server-rendered results");
    assert!(
        html.contains("/audit/sessions/s-2"),
        "rows link to the session's timeline"
    );
    app.stop().await.unwrap();
}

#[tokio::test]
async fn pages_follow_stable_cursors_and_hostile_text_is_only_text() {
    let app = spawn_app().await;
    let bot = app.agent("bot").await;
    for i in 0..120 {
        let (s, _) = bot
            .propose(
                json!({"session_id": "pages", "tool": "read_file", "arguments": {"path": format!("notes/n{i}.md")}}),
            )
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let mut seen = Vec::new();
    let mut after = String::new();
    let mut pages = 0;
    loop {
        let mut qs = vec![("session", "pages")];
        if !after.is_empty() {
            qs.push(("after", after.as_str()));
        }
        let p = search(&auditor, &app, &qs).await;
        seen.extend(seqs(&p));
        pages += 1;
        if pages == 1 {
            // Events that arrive meanwhile do not move the next pages.
            for i in 0..5 {
                bot.propose(
                    json!({"session_id": "pages", "tool": "read_file", "arguments": {"path": format!("late{i}.md")}}),
                )
                .await;
            }
        }
        match p["next"].as_str() {
            Some(c) => after = c.to_string(),
            None => break,
        }
    }
    assert_eq!(pages, 3, "120 events, 50 a page");
    assert_eq!(seen.len(), 120, "every event once: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] > w[1]));

    for hostile in [
        "\"",
        "\"\"\"",
        "*",
        "NEAR(a b, 1)",
        "text:anything",
        "') OR 1=1 --",
        "\"; DROP TABLE events; --",
        "a AND OR NOT",
        "^start",
        "{col1 col2}: x",
        "%00 \\ ' ` $",
        "读取 文件",
        "-",
    ] {
        let p = search(&auditor, &app, &[("q", hostile)]).await;
        assert!(p["hits"].is_array(), "{hostile}: {p}");
    }
    for (bound, extreme) in [
        ("since", "9223372036854775807"),
        ("until", "9223372036854775807"),
        ("since", "-99999999999d"),
    ] {
        let p = search(&auditor, &app, &[(bound, extreme)]).await;
        assert!(p["hits"].is_array(), "{bound}={extreme}: {p}");
    }
    let p = search(&auditor, &app, &[("q", "n7.md")]).await;
    assert_eq!(seqs(&p).len(), 1, "the index and chain are intact: {p}");
    let r = auditor
        .c
        .get(app.url(&format!("/api/audit/search?query[q]={}", "x".repeat(600))))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = auditor
        .c
        .get(app.url("/api/audit/search?query[after]=1%20OR%201=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    app.stop().await.unwrap();
}

#[tokio::test]
async fn exports_stream_jsonl_and_csv_without_formula_cells() {
    let app = spawn_app().await;
    history(&app).await;
    let bot = app.agent("sheet").await;
    // Ids an agent chooses are free text: a spreadsheet must not run them.
    let (s, v) = bot
        .propose(
            json!({"session_id": "=HYPERLINK(\"http://evil.example\",\"x\")", "trace_id": "+cmd|' /C calc'!A0",
            "tool": "read_file", "arguments": {"path": "@SUM(1+1)"}}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let total = {
        let mut n = 0;
        let mut after = String::new();
        loop {
            let p = search(&auditor, &app, &[("after", after.as_str())]).await;
            n += seqs(&p).len();
            match p["next"].as_str() {
                Some(c) => after = c.to_string(),
                None => break n,
            }
        }
    };

    let r = auditor
        .c
        .get(app.url("/api/audit/export?format=jsonl"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header_str(&r, reqwest::header::CONTENT_DISPOSITION).contains(".jsonl\""));
    let body = r.text().await.unwrap();
    let lines: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), total, "every event found, nothing else");
    for l in &lines {
        let hash: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM audit_events WHERE seq = $1")
            .bind(l["seq"].as_i64().unwrap())
            .fetch_optional(&app.db)
            .await
            .unwrap();
        assert_eq!(
            l["hash"].as_str().map(str::to_string),
            hash.map(hex::encode),
            "the record itself: {l}"
        );
        assert!(l["data"].is_object(), "{l}");
    }

    let r = auditor
        .c
        .get(app.url("/api/audit/export?format=csv&agent=sheet"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header_str(&r, reqwest::header::CONTENT_TYPE).starts_with("text/csv"));
    let body = r.text().await.unwrap();
    let mut rd = csv::Reader::from_reader(body.as_bytes());
    assert_eq!(rd.headers().unwrap().iter().next(), Some("seq"));
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    for row in &rows {
        for cell in row {
            assert!(!cell.starts_with(['=', '+', '-', '@']), "formula cell {cell:?}");
        }
    }
    assert!(rows
        .iter()
        .any(|r| r.iter().any(|c| c == "'=HYPERLINK(\"http://evil.example\",\"x\")")));

    // Who may export, and what a bad request gets.
    let anon = client();
    let r = anon.get(app.url("/api/audit/export")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let rev = reviewer(&app, "rita", Role::Reviewer).await;
    let r = rev.c.get(app.url("/api/audit/export")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = auditor
        .c
        .get(app.url("/api/audit/export?format=xlsx"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "invalid_query");
    // Exports are themselves recorded.
    let n: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE kind = 'audit_exported' AND actor = 'user:audrey'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(n, 2);
    app.stop().await.unwrap();
}

#[tokio::test]
async fn a_timeline_shows_each_call_its_decision_and_what_followed() {
    let app = spawn_app().await;
    history(&app).await;
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let t = auditor.get(&app, "/api/audit/trace?kind=Session&id=s-1").await;
    let calls = t["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 5, "{t}");
    let by_path = |p: &str| {
        calls
            .iter()
            .find(|c| c["arguments"].as_str().unwrap().contains(p))
            .unwrap_or_else(|| panic!("{p}: {t}"))
    };
    let read = by_path("quarterly");
    assert_eq!(
        (read["status"].as_str(), read["decided_by"].as_str()),
        (Some("allowed"), Some("policy"))
    );
    assert_eq!(read["reason"], "summarise the quarterly notes");
    assert!(
        read["steps"][0]["text"].as_str().unwrap().contains("read 42 lines"),
        "{read}"
    );
    let modified = by_path("draft.md");
    assert_eq!(modified["status"], "modified");
    assert_eq!(modified["decided_by"], "user:alice");
    assert!(modified["waited_ms"].as_i64().is_some());
    let diff = &modified["steps"][0]["diff"];
    assert!(
        diff[0].as_str().unwrap().contains("draft one") && diff[1].as_str().unwrap().contains("draft two"),
        "{modified}"
    );
    assert_eq!(by_path("report.md")["plan"], "write the report then mail it");
    assert_eq!(by_path("secret-plan")["why"], "not this file");

    assert_eq!(read["source"], "policy", "the usual source is filled back in: {read}");

    let t = auditor.get(&app, "/api/audit/trace?kind=Trace&id=t-write").await;
    assert_eq!(t["calls"].as_array().unwrap().len(), 1, "{t}");
    let r = auditor
        .c
        .get(app.url("/api/audit/trace?kind=Session&id=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    // Server-rendered: the timeline is in the HTML itself.
    let html = auditor.page(&app, "/audit/sessions/s-1").await;
    assert_eq!(html.matches("data-testid=\"trace-call\"").count(), 5);
    assert!(html.contains("summarise the quarterly notes") && html.contains("use the second draft"));
    let rev = reviewer(&app, "rita", Role::Reviewer).await;
    let r = rev.c.get(app.url("/audit/sessions/s-1")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    app.stop().await.unwrap();
}

#[tokio::test]
async fn reviewers_read_the_trail_only_when_configured() {
    let app = spawn_with(|c| c.reviewers_read_audit = true).await;
    history(&app).await;
    let rev = reviewer(&app, "rita", Role::Reviewer).await;
    let p = rev.get(&app, "/api/audit/search").await;
    assert!(!seqs(&p).is_empty());
    let r = rev.c.get(app.url("/api/audit/export")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = rev.c.get(app.url("/audit")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let html = r.text().await.unwrap();
    assert!(
        html.contains("data-testid=\"audit-status\"") && html.contains("href=\"/audit\""),
        "page and link"
    );
    app.stop().await.unwrap();
}

/// Every log line the process writes, kept in memory (for the planted-secret sweep).
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

#[tokio::test]
async fn planted_secrets_reach_no_index_export_timeline_or_page() {
    // Everything logged at debug level, by every part of the server, while this runs.
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("debug")
        .with_ansi(false)
        .with_writer(logs.clone())
        .finish();
    // The only test that installs a subscriber (the process has one global one).
    tracing::subscriber::set_global_default(subscriber).expect("no other test installs a log subscriber");
    let app = spawn_app().await;
    let bot = app.agent("bot").await;
    let secrets = [
        "ghp_PLANTEDx1y2z3A4B5C6D7E8F9G0H1I2J3K4L5",
        "AKIAPLANTED123456789",
        "sk-PLANTEDabcdefghijklmnopqrstuvwxyz012345",
        "PLANTEDbearerTokenValue99",
    ];
    let id = held(
        &bot,
        json!({"session_id": "leaky", "tool": "send_email",
        "arguments": {"to": "ops@example.com", "subject": "keys",
                      "body": format!("github {} aws {}", secrets[0], secrets[1])},
        "reason": format!("use the key {} for the upload", secrets[2]),
        "plan": format!("call the API with Authorization: Bearer {}", secrets[3])}),
    )
    .await;
    let alice = reviewer(&app, "alice", Role::Reviewer).await;
    assert_eq!(alice.decide(&app, &id, &[("verdict", "approve")]).await["ok"], true);
    // The agent still gets exactly what it proposed (sealed at rest, opened for it).
    let (s, v) = bot.get(&id, 0).await;
    assert_eq!(s, StatusCode::OK);
    assert!(v["arguments"]["body"].as_str().unwrap().contains(secrets[0]), "{v}");
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let mut outputs = Vec::new();
    outputs.push(search(&auditor, &app, &[("q", "PLANTED")]).await.to_string());
    outputs.push(search(&auditor, &app, &[("session", "leaky")]).await.to_string());
    for path in [
        "/api/audit/export?format=jsonl",
        "/api/audit/export?format=csv",
        "/api/audit/trace?kind=Session&id=leaky",
        "/audit/sessions/leaky",
        "/audit?session=leaky",
    ] {
        outputs.push(auditor.page(&app, path).await);
    }
    for out in &outputs {
        for s in secrets {
            assert!(!out.contains(s), "{s} leaked: {out}");
        }
        assert!(!out.contains("PLANTED"), "no part of a secret: {out}");
    }
    assert!(outputs[2].contains("[redacted"), "the export says what was masked");
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(text.contains("signed in"), "the logs were captured");
    for s in secrets {
        assert!(!text.contains(s), "{s} reached the logs");
    }
    assert!(!text.contains("PLANTED"), "part of a secret reached the logs");

    // A leaked value can be looked up: its fingerprint finds the call that carried it.
    let look_up = |value: &'static str| {
        let (c, token) = (auditor.c.clone(), auditor.token.clone());
        let url = app.url("/api/audit/secret");
        async move {
            let r = c
                .post(url)
                .form(&[("csrf_token", token.as_str()), ("value", value)])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<String>().await.unwrap()
        }
    };
    for s in secrets {
        let fp = look_up(s).await;
        assert!(fp.starts_with("sfp"), "{fp}");
        let p = search(&auditor, &app, &[("q", &fp), ("kind", "call_received")]).await;
        assert_eq!(field(&p, "session"), ["leaky"], "{s}: {p}");
    }
    let fp = look_up("ghp_NEVERSENTx1y2z3A4B5C6D7E8F9G0H1I2J3K4L5").await;
    let p = search(&auditor, &app, &[("q", &fp), ("kind", "call_received")]).await;
    assert!(seqs(&p).is_empty(), "{p}");
    let p = search(&auditor, &app, &[("kind", "secret_looked_up")]).await;
    assert_eq!(seqs(&p).len(), secrets.len() + 1, "every lookup is recorded: {p}");
    // Lookups answer guesses, so they are few: a burst of ten per person.
    for _ in secrets.len() + 1..10 {
        look_up("another guess").await;
    }
    let r = auditor
        .c
        .post(app.url("/api/audit/secret"))
        .form(&[("csrf_token", auditor.token.as_str()), ("value", "one guess too many")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.text().await.unwrap().contains("too many secret lookups"));
    // Every table of a PostgreSQL database (raw arguments that held a secret are sealed;
    // the search index is there too), as text.
    if server::store::Backend::of(&app.db) == server::store::Backend::Postgres {
        let tables: Vec<String> =
            sqlx::query_scalar("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'")
                .fetch_all(&app.db)
                .await
                .unwrap();
        assert!(tables.iter().any(|t| t == "search_events"), "{tables:?}");
        for t in tables {
            let n: i64 = sqlx::query_scalar(&format!(
                "SELECT count(*) FROM \"{t}\" x WHERE x::text ILIKE '%planted%'"
            ))
            .fetch_one(&app.db)
            .await
            .unwrap();
            assert_eq!(n, 0, "{t} holds a planted secret");
        }
        app.stop().await.unwrap();
        return;
    }
    // Every file the server keeps: the database and its WAL (raw arguments that held a
    // secret are sealed), the search index and its WAL.
    let files = std::fs::read_dir(app.db_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".db"))
        .collect::<Vec<_>>();
    assert!(files.len() >= 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(7).any(|w| w == b"PLANTED"),
            "{} holds a planted secret",
            f.display()
        );
    }
    app.stop().await.unwrap();
}

#[tokio::test]
async fn signed_checkpoints_catch_a_chain_rewritten_with_recomputed_hashes() {
    let app = spawn_app().await;
    history(&app).await;
    let key = server::agents::ServerKey::load_or_create(&app.key_file).unwrap();
    let signer = server::audit::checkpoint::Signer::from_server_key(&key);
    let signed = server::audit::checkpoint::sign_head(&app.db, &signer)
        .await
        .unwrap()
        .unwrap();
    let trusted = [signer.public_key()];
    let ok = server::audit::checkpoint::check(&app.db, &trusted, &[]).await.unwrap();
    assert_eq!(
        (ok.problem.clone(), ok.checkpoints, ok.up_to),
        (None, 1, signed),
        "{ok:?}"
    );

    // The auditor's button runs the same check, and it is recorded.
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let r = auditor
        .c
        .post(app.url("/api/audit/verify"))
        .form(&[("csrf_token", auditor.token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (&v["ok"], &v["check"]["problem"]),
        (&Value::Bool(true), &Value::Null),
        "{v}"
    );
    let said = v["message"].as_str().unwrap_or_default();
    assert!(
        said.starts_with(&format!("Verified up to event {} at ", v["check"]["up_to"])),
        "{said}"
    );
    let page = search(&auditor, &app, &[]).await;
    assert_eq!(
        page["verified"]["up_to"], v["check"]["up_to"],
        "the page shows the latest check: {page}"
    );
    assert_eq!(page["hits"][0]["kind"], "audit_verified");

    // Someone with write access rewrites event 3 and recomputes every hash after it.
    rewrite_from(&app.db, 3).await;
    let plain = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(plain.problem, None, "the hash chain alone cannot see this");
    let caught = server::audit::checkpoint::check(&app.db, &trusted, &[]).await.unwrap();
    let (seq, why) = caught.problem.clone().expect("the signature catches it");
    assert_eq!(seq, 1, "{why}");
    assert!(
        why.contains(&format!("event {signed}")) && why.contains("rewritten"),
        "{why}"
    );

    // Forged checkpoints (signed with another key) are not trusted either.
    let forger = server::audit::checkpoint::Signer::from_server_key(&server::agents::ServerKey::from_bytes(&[1u8; 32]));
    sqlx::query("DELETE FROM audit_checkpoints")
        .execute(&app.db)
        .await
        .unwrap();
    server::audit::checkpoint::sign_head(&app.db, &forger).await.unwrap();
    let forged = server::audit::checkpoint::check(&app.db, &trusted, &[]).await.unwrap();
    assert!(forged.problem.unwrap().1.contains("not signed by a trusted key"));
    app.stop().await.unwrap();
}

/// Edit event `from` and recompute the hash of it and every later event.
async fn rewrite_from(db: &server::store::Db, from: i64) {
    allow_tampering(db).await;
    type Row = (i64, i64, String, String, Option<String>, Option<String>, String);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT seq, at_ms, kind, actor, call_id, session_id, data FROM audit_events WHERE seq >= $1 ORDER BY seq",
    )
    .bind(from)
    .fetch_all(db)
    .await
    .unwrap();
    let mut prev: String = server::audit::hash_in(db, from - 1).await.unwrap().unwrap();
    for (seq, at, kind, actor, call, session, data) in rows {
        let mut data: Value = serde_json::from_str(&data).unwrap();
        if seq == from {
            data["note"] = json!("rewritten");
        }
        let hash = server::audit::event_hash(
            seq,
            at,
            &kind,
            &actor,
            call.as_deref(),
            session.as_deref(),
            &data,
            &prev,
        );
        let mut canon = String::new();
        policy::load::canonical_json(&data, &mut canon);
        sqlx::query("UPDATE audit_events SET data = $1, hash = $2 WHERE seq = $3")
            .bind(canon)
            .bind(hex::decode(&hash).unwrap())
            .bind(seq)
            .execute(db)
            .await
            .unwrap();
        prev = hash;
    }
}

/// The search plan of a free-text query, for searching an index directly.
fn text_plan(q: &str) -> server::audit::search::Plan {
    server::audit::search::plan(
        &app::api::AuditQuery {
            q: q.into(),
            ..Default::default()
        },
        server::store::now_ms(),
    )
    .unwrap()
}

#[tokio::test]
async fn an_index_that_no_longer_matches_its_chain_is_rebuilt() {
    let app = spawn_app().await;
    history(&app).await;
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let before = search(&auditor, &app, &[("q", "rewritten")]).await;
    assert!(seqs(&before).is_empty());
    // The database is replaced by one whose history differs (a restored backup, say).
    rewrite_from(&app.db, 2).await;
    let path = app.db_dir().join("airlock-search.db");
    let index = server::audit::index::SearchIndex::open(&path, app.db.clone())
        .await
        .unwrap();
    index.catch_up().await.unwrap();
    let (hits, _) = server::audit::search::page(&index, &text_plan("rewritten"), 50)
        .await
        .unwrap();
    assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [2], "{hits:?}");
    index.close().await;
    app.stop().await.unwrap();
}

/// The background indexer writes in short paced bursts and several batches; it still
/// indexes every event once, in order, as a search's full-speed catch-up would.
#[tokio::test]
async fn the_paced_background_indexer_indexes_every_event_once() {
    let app = spawn_with(|c| c.agent_rate_per_second = 0).await;
    let bot = app.agent("bot").await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..540 {
        let bot = bot.clone();
        calls.spawn(async move {
            let (status, body) = bot
                .propose(json!({"session_id": "s-pace", "tool": "read_file",
                                "arguments": {"path": format!("notes/paced{i}x.md")}}))
                .await;
            assert!(status.is_success(), "{body}");
        });
        if calls.len() >= 32 {
            calls.join_next().await.unwrap().unwrap();
        }
    }
    while let Some(done) = calls.join_next().await {
        done.unwrap();
    }
    // A new, empty index of the same chain, filled by background tasks only (on
    // PostgreSQL the server's own indexer shares the work).
    let dir = tempfile::tempdir().unwrap();
    if postgres().is_some() {
        sqlx::query("TRUNCATE search_events, search_head")
            .execute(&app.db)
            .await
            .unwrap();
    }
    let index = server::audit::index::SearchIndex::open(&dir.path().join("fresh.db"), app.db.clone())
        .await
        .unwrap();
    let (indexed, chain) = index.progress().await.unwrap();
    assert_eq!(indexed, 0);
    assert!(chain > 540, "{chain}");
    let task = tokio::spawn(index.clone().run());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while index.progress().await.unwrap().0 < chain {
        assert!(std::time::Instant::now() < deadline, "{:?}", index.progress().await);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    task.abort();
    let (all, more) = server::audit::search::page(&index, &text_plan(""), 10_000)
        .await
        .unwrap();
    assert!(more.is_none());
    let mut seqs: Vec<i64> = all.iter().map(|h| h.seq).collect();
    seqs.sort_unstable();
    let last = *seqs.last().unwrap();
    assert!(last >= chain);
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    for word in ["paced0x", "paced539x"] {
        let (hits, _) = server::audit::search::page(&index, &text_plan(word), 10).await.unwrap();
        assert_eq!(hits.len(), 1, "{word}: {hits:?}");
    }
    index.close().await;
    app.stop().await.unwrap();
}

/// Each call writes one event, holding each fact once: no webhook-id (the call row keeps
/// it), the policy by its version's first 16 hex digits, the usual decision values left
/// out; readers (search, timelines) see them filled back in, and the chain verifies.
#[tokio::test]
async fn a_received_call_is_recorded_once_and_briefly_and_read_back_whole() {
    let app = spawn_app().await;
    let bot = app.agent("bot").await;
    let (_, allowed) = bot
        .propose_as(
            "msg-brief",
            json!({"session_id": "s-b", "tool": "read_file", "arguments": {"path": "notes/a.md"}}),
        )
        .await;
    assert_eq!(allowed["status"], "allowed", "{allowed}");
    let id = allowed["id"].as_str().unwrap();
    // Time-ordered ids written as ULIDs (Crockford base 32, 26 characters).
    assert!(
        id.len() == 29 && id[3..].chars().all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)),
        "{id}"
    );
    let held_id = held(
        &bot,
        json!({"session_id": "s-b", "tool": "execute_command", "arguments": {"command": "ls"}}),
    )
    .await;
    let data = |call: String| {
        let db = app.db.clone();
        async move {
            let text: String =
                sqlx::query_scalar("SELECT data FROM audit_events WHERE call_id = $1 AND kind = 'call_received'")
                    .bind(call)
                    .fetch_one(&db)
                    .await
                    .unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let a = data(id.to_string()).await;
    let version = allowed["policy_version"].as_str().unwrap();
    assert_eq!(a["decision"]["policy"], version["sha256:".len()..][..16], "{a}");
    for gone in ["message_id", "policy_version"] {
        assert!(
            a.get(gone).is_none() && a["decision"].get(gone).is_none(),
            "{gone}: {a}"
        );
    }
    for usual in ["source", "risk", "approvers_required"] {
        assert!(a["decision"].get(usual).is_none(), "{usual}: {a}");
    }
    assert!(!a.to_string().contains("msg-brief"), "{a}");
    let h = data(held_id.clone()).await;
    assert_eq!(h["decision"]["status"], "pending", "{h}");
    assert_eq!(h["decision"]["risk"], "high", "{h}");
    assert_eq!(h["decision"]["approvers_required"], 1, "{h}");
    // The webhook-id stays with the call: a retry is still answered from it.
    let (_, again) = bot
        .propose_as(
            "msg-brief",
            json!({"session_id": "s-b", "tool": "read_file", "arguments": {"path": "notes/a.md"}}),
        )
        .await;
    assert_eq!(again["id"], id);

    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let p = search(&auditor, &app, &[("source", "policy"), ("kind", "call_received")]).await;
    assert!(field(&p, "call_id").contains(&id), "{p}");
    let t = auditor.get(&app, "/api/audit/trace?kind=Session&id=s-b").await;
    let calls = t["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{t}");
    assert!(calls.iter().all(|c| c["source"] == "policy"), "{t}");
    let v = server::audit::verify(&app.db).await.unwrap();
    assert_eq!(v.problem, None);
    app.stop().await.unwrap();
}

/// Free text means the same on SQLite (FTS5) and PostgreSQL (tsvector): words are runs of
/// letters and digits, case and accents do not matter, a quoted phrase keeps its order,
/// `word*` is a prefix, and punctuation only separates words.
#[tokio::test]
async fn free_text_finds_the_same_words_on_every_database() {
    let app = spawn_app().await;
    let bot = app.agent("bot").await;
    for (session, reason) in [
        ("w-cafe", "order a Café Crème for the team"),
        ("w-path", "compare /etc/passwd with the backup"),
        ("w-back", "passwd etc in reverse order"),
        ("w-snake", "call write_file next"),
        ("w-cjk", "读取 文件 then report"),
        ("w-marks", "नमस्ते и Ёлка が"),
    ] {
        let (s, v) = bot
            .propose(json!({"session_id": session, "tool": "read_file",
                "arguments": {"path": "notes/a.md"}, "reason": reason}))
            .await;
        assert_eq!((s, v["status"].as_str()), (StatusCode::OK, Some("allowed")), "{v}");
    }
    let auditor = reviewer(&app, "audrey", Role::Auditor).await;
    let sessions = |p: &Value| {
        let mut s: Vec<String> = field(p, "session").iter().map(|s| s.to_string()).collect();
        s.sort();
        s
    };
    for (q, want) in [
        ("cafe creme", vec!["w-cafe"]),
        ("CAFÉ", vec!["w-cafe"]),
        ("\"cafe creme\"", vec!["w-cafe"]),
        ("\"creme cafe\"", vec![]),
        ("/etc/passwd", vec!["w-path"]),
        ("\"passwd etc\"", vec!["w-back"]),
        ("etc passwd", vec!["w-back", "w-path"]),
        ("pass*", vec!["w-back", "w-path"]),
        ("compare /etc/pa*", vec!["w-path"]),
        ("write_file", vec!["w-snake"]),
        ("write", vec!["w-snake"]),
        ("读取", vec!["w-cjk"]),
        ("读", vec![]),
        ("नमस", vec!["w-marks"]),
        ("ёлка", vec!["w-marks"]),
        ("елка", vec![]),
        ("か", vec![]),
        ("order", vec!["w-back", "w-cafe"]),
        ("order -", vec!["w-back", "w-cafe"]),
        ("order reverse", vec!["w-back"]),
        ("rever", vec![]),
        ("OR", vec![]),
    ] {
        let p = search(&auditor, &app, &[("q", q), ("kind", "call_received")]).await;
        assert_eq!(sessions(&p), want, "{q}: {p}");
    }
    app.stop().await.unwrap();
}
