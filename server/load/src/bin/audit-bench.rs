//! Benchmark of the auditor's desk on a realistic trail:
//!
//!   audit-bench --dir DIR [--events 1000000] [--sessions 1000] [--runs 40] [--database-url URL]
//! (`--database-url postgres://…` measures PostgreSQL's index instead of DIR's SQLite files.)
//!
//! Fills `DIR/airlock.db` (once; a later run reuses it) with a chain of realistic events —
//! calls received and decided by the policy, held calls decided by reviewers (some
//! modified), results, across 20 agents and `--sessions` sessions plus one session of about
//! 10,000 events — written through the server's own chain code. Then it builds the search
//! index and measures, in the server's own functions (no HTTP): indexing throughput,
//! search latency per kind of query (p50/p95 over `--runs` different values), the timeline
//! of the 10,000-event session, and a JSONL export of everything (rows/s and the process's
//! resident memory while it runs). Prints one JSON document.

use futures::StreamExt;
use serde_json::{json, Value};
use server::audit::{self, export, index::SearchIndex, search, trace, Head, NewEvent};
use std::time::{Duration, Instant};

const AGENTS: usize = 20;
const REVIEWERS: [&str; 4] = ["alice", "bob", "carol", "dmitri"];
const TOOLS: [&str; 8] = [
    "read_file",
    "write_file",
    "list_dir",
    "web_fetch",
    "query_order",
    "send_email",
    "execute_command",
    "refund_order",
];
const BIG: &str = "s-big";

/// A small deterministic generator (xorshift), so every run builds the same trail.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A vocabulary of 3,000 pronounceable words: text search has common and rare terms.
fn vocabulary() -> Vec<String> {
    let (c, v) = ("bcdfghklmnprstvz", "aeiou");
    let mut r = Rng(0x5eed);
    (0..3000)
        .map(|_| {
            let n = 2 + r.below(3);
            (0..n)
                .map(|_| {
                    let a = c.as_bytes()[r.below(c.len())] as char;
                    let b = v.as_bytes()[r.below(v.len())] as char;
                    format!("{a}{b}")
                })
                .collect()
        })
        .collect()
}

/// A word, Zipf-like: low indexes are much more frequent.
fn word<'a>(r: &mut Rng, words: &'a [String]) -> &'a str {
    let x = (r.next() % 1_000_000) as f64 / 1_000_000.0;
    &words[((x * x * x) * words.len() as f64) as usize]
}

fn words(r: &mut Rng, vocab: &[String], n: usize) -> String {
    (0..n).map(|_| word(r, vocab)).collect::<Vec<_>>().join(" ")
}

fn arguments(r: &mut Rng, vocab: &[String], tool: &str) -> Value {
    match tool {
        "read_file" | "list_dir" => json!({"path": format!("notes/{}/{}.md", word(r, vocab), word(r, vocab))}),
        "write_file" => json!({"path": format!("out/{}.md", word(r, vocab)), "content": words(r, vocab, 12)}),
        "web_fetch" => json!({"url": format!("https://{}.example.com/{}", word(r, vocab), word(r, vocab))}),
        "query_order" => json!({"order_id": format!("AB{:08}", r.below(100_000_000))}),
        "send_email" => json!({"to": format!("{}@example.com", word(r, vocab)), "subject": words(r, vocab, 4),
            "body": words(r, vocab, 30)}),
        "execute_command" => json!({"command": format!("grep -rn {} src/", word(r, vocab))}),
        _ => json!({"order_id": format!("CD{:08}", r.below(100_000_000)), "amount": r.below(9000)}),
    }
}

/// The events of one call, in order (received, then a decision and/or a result).
fn call(r: &mut Rng, vocab: &[String], n: u64, session: &str, at: &mut i64) -> Vec<(i64, NewEvent)> {
    let agent = format!("agent-{:02}", r.below(AGENTS));
    let tool = TOOLS[r.below(TOOLS.len())];
    let id = format!("tc_{n:016x}");
    let args = arguments(r, vocab, tool);
    let roll = r.below(100);
    let (status, layer, rule, why) = match roll {
        0..=69 => ("allowed", None, None, "allowed by policy".to_string()),
        70..=84 => {
            let (l, rule) = [
                ("allowlist", None),
                ("schema", None),
                ("path_guard", Some("workspace")),
                ("command_guard", Some("no-destructive")),
                ("budget", Some("refund_auto_daily")),
            ][r.below(5)];
            ("denied", Some(l), rule, format!("{l}: {}", words(r, vocab, 4)))
        }
        _ => (
            "pending",
            Some("rule"),
            Some("needs_review"),
            "needs a human".to_string(),
        ),
    };
    let mut out = Vec::new();
    // About 650,000 calls make a million events: spread them over the whole week.
    *at += 1 + r.below(1800) as i64;
    out.push((
        *at,
        NewEvent {
            kind: "call_received",
            actor: format!("agent:{agent}"),
            call_id: Some(id.clone()),
            session_id: Some(session.to_string()),
            data: audit::compact(json!({
                "tool": tool, "trace_id": format!("{session}-t{}", n % 50), "arguments": args,
                "reason": words(r, vocab, 8), "message_id": format!("msg_{n:x}"),
                "decision": {"status": status, "blocked_by": layer, "rule": rule, "reason": why, "source": "policy",
                             "policy_version": "sha256:5f2c0e", "risk": "medium", "approvers_required": 1},
                "timings": {"received_at_ms": *at, "evaluate_us": 20 + r.below(60)},
            })),
        },
    ));
    if status == "pending" {
        let reviewer = REVIEWERS[r.below(REVIEWERS.len())];
        let waited = 5_000 + r.below(600_000) as i64;
        let decided = match r.below(100) {
            0..=59 => json!({"status": "approved", "approvals": [format!("user:{reviewer}")]}),
            60..=84 => json!({"status": "rejected", "reason": words(r, vocab, 5)}),
            _ => json!({"status": "modified", "comment": words(r, vocab, 4), "original": args,
                        "modified": arguments(r, vocab, tool)}),
        };
        let mut data = decided;
        data["tool"] = json!(tool);
        data["agent"] = json!(agent);
        data["source"] = json!("reviewer");
        data["waited_ms"] = json!(waited);
        out.push((
            *at + waited,
            NewEvent {
                kind: "call_decided",
                actor: format!("user:{reviewer}"),
                call_id: Some(id.clone()),
                session_id: Some(session.to_string()),
                data,
            },
        ));
    } else if status == "allowed" && r.chance(50) {
        out.push((
            *at + 50,
            NewEvent {
                kind: "call_result",
                actor: format!("agent:{agent}"),
                call_id: Some(id),
                session_id: Some(session.to_string()),
                data: json!({"tool": tool, "outcome": "ok", "summary": words(r, vocab, 6), "duration_ms": r.below(900)}),
            },
        ));
    }
    out
}

async fn generate(db: &server::store::Db, total: u64, sessions: usize, vocab: &[String]) -> Result<f64, String> {
    let started = Instant::now();
    let mut r = Rng(0x00a1_12c0_ffee);
    let mut at = server::store::now_ms() - 7 * 86_400_000;
    let mut head = Head::genesis();
    let (mut written, mut n) = (0u64, 0u64);
    let mut pending: Vec<(i64, NewEvent)> = Vec::new();
    while written < total {
        let mut tx = server::store::begin_write(db).await.map_err(|e| e.to_string())?;
        let mut batch: Vec<(i64, NewEvent)> = Vec::with_capacity(5000);
        while batch.len() < 5000 && written + (batch.len() as u64) < total {
            // About 1% of calls belong to the one big session (~10,000 events in 1M).
            let session = if r.chance(1) {
                BIG.to_string()
            } else {
                format!("s-{:04}", r.below(sessions))
            };
            n += 1;
            for (t, ev) in call(&mut r, vocab, n, &session, &mut at) {
                if t <= at {
                    batch.push((t, ev));
                } else {
                    pending.push((t, ev));
                }
            }
            // Decisions and results arrive later than the calls they answer.
            pending.sort_by_key(|(t, _)| std::cmp::Reverse(*t));
            while pending.last().is_some_and(|(t, _)| *t <= at) {
                // Recorded when it is written: the chain's times never go back.
                let (_, ev) = pending.pop().expect("checked");
                batch.push((at, ev));
            }
        }
        let chained: Vec<audit::Chained<'_>> = batch.iter().map(|(t, ev)| audit::chain(&mut head, *t, ev)).collect();
        // SQLite takes at most 32,766 bound values per statement: 1,000 events of 8.
        for part in chained.chunks(1000) {
            audit::insert_many(&mut tx, part).await.map_err(|e| e.to_string())?;
        }
        tx.commit().await.map_err(|e| e.to_string())?;
        written += chained.len() as u64;
    }
    Ok(started.elapsed().as_secs_f64())
}

fn percentiles(mut ms: Vec<f64>) -> Value {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 * p).ceil() as usize).clamp(1, ms.len()) - 1];
    json!({"p50_ms": (at(0.50) * 100.0).round() / 100.0, "p95_ms": (at(0.95) * 100.0).round() / 100.0,
           "max_ms": (at(1.0) * 100.0).round() / 100.0, "runs": ms.len()})
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut a = std::env::args().skip(1);
    let (mut dir, mut events, mut sessions, mut runs) = (None, 1_000_000u64, 1000usize, 40usize);
    let mut database_url: Option<String> = None;
    while let Some(k) = a.next() {
        let v = a.next().ok_or(format!("{k} needs a value"))?;
        match k.as_str() {
            "--dir" => dir = Some(std::path::PathBuf::from(v)),
            "--database-url" => database_url = Some(v),
            "--events" => events = v.parse().map_err(|_| "--events: a number")?,
            "--sessions" => sessions = v.parse().map_err(|_| "--sessions: a number")?,
            "--runs" => runs = v.parse().map_err(|_| "--runs: a number")?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    let dir = dir.ok_or("--dir DIR is required")?;
    let url = secrecy::SecretString::from(
        database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}/airlock.db", dir.display())),
    );
    let db = server::store::connect(&url).await?;
    let postgres = server::store::Backend::of(&db) == server::store::Backend::Postgres;
    // Bytes of the database and of the search index: files beside each other on SQLite,
    // relations on PostgreSQL.
    let size = |sql: &'static str, file: &'static str| {
        let (db, dir) = (db.clone(), dir.clone());
        async move {
            if postgres {
                sqlx::query_scalar::<_, i64>(sql).fetch_one(&db).await.unwrap_or(0) as u64
            } else {
                std::fs::metadata(dir.join(file)).map_or(0, |m| m.len())
            }
        }
    };
    server::store::migrate(&db).await?;
    let vocab = vocabulary();
    let have: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM audit_events")
        .fetch_one(&db)
        .await
        .map_err(|e| e.to_string())?;
    let generated_s = if have == 0 {
        Some(generate(&db, events, sessions, &vocab).await?)
    } else {
        None
    };
    let chain_len: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM audit_events")
        .fetch_one(&db)
        .await
        .map_err(|e| e.to_string())?;
    let db_bytes = size("SELECT pg_database_size(current_database())", "airlock.db").await;

    let index = SearchIndex::open(&dir.join("airlock-search.db"), db.clone()).await?;
    let started = Instant::now();
    let indexed = index.catch_up().await.map_err(|e| e.to_string())?;
    let index_s = started.elapsed().as_secs_f64();
    let index_bytes = size("SELECT pg_total_relation_size('search_events')", "airlock-search.db").await;

    // Search: each kind of query with `runs` different values.
    let mut r = Rng(0xbeef);
    let now = server::store::now_ms();
    type Make = fn(&mut Rng, &[String]) -> app::api::AuditQuery;
    let kinds: [(&str, Make); 9] = [
        ("newest page, no filter", |_, _| Default::default()),
        ("free text, common word", |r, v| app::api::AuditQuery {
            q: v[r.below(10)].clone(),
            ..Default::default()
        }),
        ("free text, any word", |r, v| app::api::AuditQuery {
            q: v[r.below(v.len())].clone(),
            ..Default::default()
        }),
        ("free text, two words", |r, v| app::api::AuditQuery {
            q: format!("{} {}", v[r.below(50)], v[r.below(300)]),
            ..Default::default()
        }),
        ("agent filter", |r, _| app::api::AuditQuery {
            agent: format!("agent-{:02}", r.below(AGENTS)),
            ..Default::default()
        }),
        ("tool + status filters", |r, _| app::api::AuditQuery {
            tool: TOOLS[r.below(TOOLS.len())].into(),
            status: "denied".into(),
            ..Default::default()
        }),
        ("reviewer + source filters", |r, _| app::api::AuditQuery {
            reviewer: REVIEWERS[r.below(REVIEWERS.len())].into(),
            source: "reviewer".into(),
            ..Default::default()
        }),
        ("free text + agent", |r, v| app::api::AuditQuery {
            q: v[r.below(100)].clone(),
            agent: format!("agent-{:02}", r.below(AGENTS)),
            ..Default::default()
        }),
        ("free text + time window (a day, 3 days ago)", |r, v| {
            app::api::AuditQuery {
                q: v[r.below(100)].clone(),
                since: "4d".into(),
                until: "3d".into(),
                ..Default::default()
            }
        }),
    ];
    let mut searches = serde_json::Map::new();
    for (name, make) in kinds {
        let mut times = Vec::with_capacity(runs);
        let mut hits = 0;
        for _ in 0..runs {
            let q = make(&mut r, &vocab);
            let plan = search::plan(&q, now)?;
            let t = Instant::now();
            let (page, _) = search::page(&index, &plan, search::PAGE)
                .await
                .map_err(|e| e.to_string())?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            hits += page.len();
        }
        let mut p = percentiles(times);
        p["mean_hits_per_page"] = json!(hits / runs.max(1));
        searches.insert(name.to_string(), p);
    }

    // The timeline of the big session.
    let mut times = Vec::new();
    let mut shown = 0;
    for _ in 0..runs.min(20) {
        let t = Instant::now();
        let view = trace::build(&index, app::api::TraceKind::Session, BIG, now)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the big session is missing")?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        shown = view.events;
    }
    let big: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE session_id = $1")
        .bind(BIG)
        .fetch_one(&db)
        .await
        .map_err(|e| e.to_string())?;
    let mut timeline = percentiles(times);
    timeline["session_events"] = json!(big);
    timeline["events_shown"] = json!(shown);

    // Export everything as JSON Lines, watching resident memory.
    let rss_before = rss_kib();
    let plan = search::plan(
        &app::api::AuditQuery {
            sort: "oldest".into(),
            ..Default::default()
        },
        now,
    )?;
    let t = Instant::now();
    let mut stream = std::pin::pin!(export::stream(index.clone(), plan, export::Format::Jsonl));
    let (mut bytes, mut rows, mut rss_max, mut last_sample) = (0u64, 0u64, rss_before, Instant::now());
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        bytes += chunk.len() as u64;
        rows += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        if last_sample.elapsed() > Duration::from_millis(100) {
            rss_max = rss_max.max(rss_kib());
            last_sample = Instant::now();
        }
    }
    let export_s = t.elapsed().as_secs_f64();
    rss_max = rss_max.max(rss_kib());

    let out = json!({
        "events": chain_len,
        "generated_in_s": generated_s.map(|s| (s * 10.0).round() / 10.0),
        "database_bytes": db_bytes,
        "index": {"indexed": indexed, "seconds": (index_s * 10.0).round() / 10.0,
                  "events_per_s": (indexed as f64 / index_s.max(1e-9)).round(), "file_bytes": index_bytes},
        "search": searches,
        "timeline": timeline,
        "export_jsonl": {"rows": rows, "bytes": bytes, "seconds": (export_s * 100.0).round() / 100.0,
                         "rows_per_s": (rows as f64 / export_s.max(1e-9)).round(),
                         "rss_before_kib": rss_before, "rss_max_during_kib": rss_max},
    });
    println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    index.close().await;
    db.close().await;
    Ok(())
}
