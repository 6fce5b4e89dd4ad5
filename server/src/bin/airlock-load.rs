//! Load generator for the agent API: signed requests of the demo mix on loopback.
//!
//!   airlock-load --url http://127.0.0.1:3000 --agent load --secret whsec_… \
//!                [--concurrency 64 | --rate 2000] --seconds 10
//!
//! Closed loop (`--concurrency N`): N requests in flight, as fast as the server answers;
//! reports throughput. Open loop (`--rate R`): requests start on a fixed schedule and
//! latency is measured from the scheduled start, so a stall is not hidden by the client
//! waiting (no coordinated omission). Prints one JSON line with the figures.

use serde_json::json;
use server::agents::SigningSecret;
use server::ingest::signature;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    url: String,
    agent: String,
    secret: SigningSecret,
    concurrency: usize,
    rate: Option<u64>,
    seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let (mut url, mut agent, mut secret) = ("http://127.0.0.1:3000".to_string(), "load".to_string(), None);
    let (mut concurrency, mut rate, mut seconds) = (64usize, None, 10u64);
    while let Some(k) = a.next() {
        let mut v = || a.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--url" => url = v()?,
            "--agent" => agent = v()?,
            "--secret" => secret = Some(SigningSecret::parse(&v()?)?),
            "--concurrency" => concurrency = v()?.parse().map_err(|_| "--concurrency: a number")?,
            "--rate" => rate = Some(v()?.parse().map_err(|_| "--rate: a number")?),
            "--seconds" => seconds = v()?.parse().map_err(|_| "--seconds: a number")?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let secret = match secret {
        Some(s) => s,
        None => {
            SigningSecret::parse(&std::env::var("AIRLOCK_LOAD_SECRET").map_err(|_| "--secret or AIRLOCK_LOAD_SECRET")?)?
        }
    };
    Ok(Args {
        url,
        agent,
        secret,
        concurrency,
        rate,
        seconds,
    })
}

/// The demo mix of calls the policy decides on its own (allowed and denied).
fn mix() -> Vec<String> {
    let calls = [
        ("web_search", json!({"query": "refund policy damaged items"})),
        ("query_order", json!({"order_id": "AB12345678", "include_items": true})),
        ("read_file", json!({"path": "notes/customer-17.md"})),
        ("list_dir", json!({"path": "notes"})),
        (
            "create_reply_draft",
            json!({"text": "Thanks, the refund is on its way."}),
        ),
        ("web_search", json!({"query": "order tracking"})),
        ("query_order", json!({"order_id": "ZX98765432"})),
        ("cancel_order", json!({"order_id": "AB12345678"})),
        ("read_file", json!({"path": "/etc/shadow"})),
        ("execute_command", json!({"command": "rm -rf / --no-preserve-root"})),
    ];
    calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            json!({"session_id": format!("load-{}", i % 4), "trace_id": format!("t-{i}"), "tool": tool,
                   "arguments": args, "reason": "load test"})
            .to_string()
        })
        .collect()
}

struct Stats {
    latencies_us: Mutex<Vec<u32>>,
    ok: AtomicU64,
    failed: AtomicU64,
    statuses: Mutex<std::collections::BTreeMap<String, u64>>,
}

async fn one(c: &reqwest::Client, a: &Args, body: &str, n: u64, stats: &Stats, started: Instant) {
    let id = format!("load_{}_{n}", std::process::id());
    let ts = (server::store::now_ms() / 1000).to_string();
    let sig = signature::sign(&a.secret, &id, &ts, body.as_bytes());
    let r = c
        .post(format!("{}/api/v1/tool-calls", a.url))
        .header("content-type", "application/json")
        .header("airlock-agent", &a.agent)
        .header("webhook-id", id)
        .header("webhook-timestamp", ts)
        .header("webhook-signature", sig)
        .body(body.to_string())
        .send()
        .await;
    let status = match r {
        Ok(r) if r.status().is_success() => r
            .json::<serde_json::Value>()
            .await
            .ok()
            .and_then(|v| v["status"].as_str().map(str::to_string)),
        _ => None,
    };
    let us = started.elapsed().as_micros().min(u32::MAX as u128) as u32;
    match status {
        Some(s) => {
            stats.ok.fetch_add(1, Ordering::Relaxed);
            stats.latencies_us.lock().unwrap().push(us);
            *stats.statuses.lock().unwrap().entry(s).or_default() += 1;
        }
        None => {
            stats.failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

#[tokio::main]
async fn main() {
    let a = match parse_args() {
        Ok(a) => Arc::new(a),
        Err(e) => {
            eprintln!("airlock-load: {e}");
            std::process::exit(2);
        }
    };
    let bodies = Arc::new(mix());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let stats = Arc::new(Stats {
        latencies_us: Mutex::new(Vec::with_capacity(1 << 20)),
        ok: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        statuses: Mutex::default(),
    });
    let counter = Arc::new(AtomicU64::new(0));
    let begin = Instant::now();
    let end = begin + Duration::from_secs(a.seconds);
    match a.rate {
        None => {
            let mut workers = Vec::new();
            for _ in 0..a.concurrency {
                let (a, c, s, b, n) = (
                    a.clone(),
                    client.clone(),
                    stats.clone(),
                    bodies.clone(),
                    counter.clone(),
                );
                workers.push(tokio::spawn(async move {
                    while Instant::now() < end {
                        let i = n.fetch_add(1, Ordering::Relaxed);
                        one(&c, &a, &b[i as usize % b.len()], i, &s, Instant::now()).await;
                    }
                }));
            }
            for w in workers {
                let _ = w.await;
            }
        }
        Some(rate) => {
            let interval = Duration::from_nanos(1_000_000_000 / rate.max(1));
            let mut inflight = tokio::task::JoinSet::new();
            let mut i = 0u64;
            loop {
                let at = begin + interval * i as u32;
                if at >= end {
                    break;
                }
                tokio::time::sleep_until(at.into()).await;
                let (a, c, s, b) = (a.clone(), client.clone(), stats.clone(), bodies.clone());
                inflight.spawn(async move { one(&c, &a, &b[i as usize % b.len()], i, &s, at).await });
                i += 1;
                while inflight.try_join_next().is_some() {}
            }
            while inflight.join_next().await.is_some() {}
        }
    }
    let elapsed = begin.elapsed().as_secs_f64();
    let mut lat = std::mem::take(&mut *stats.latencies_us.lock().unwrap());
    lat.sort_unstable();
    let ok = stats.ok.load(Ordering::Relaxed);
    let report = json!({
        "mode": if a.rate.is_some() { "open" } else { "closed" },
        "rate": a.rate, "concurrency": if a.rate.is_none() { Some(a.concurrency) } else { None },
        "seconds": (elapsed * 100.0).round() / 100.0,
        "ok": ok, "failed": stats.failed.load(Ordering::Relaxed),
        "throughput_per_s": (ok as f64 / elapsed).round(),
        "p50_ms": pct(&lat, 0.50), "p90_ms": pct(&lat, 0.90), "p99_ms": pct(&lat, 0.99), "max_ms": pct(&lat, 1.0),
        "statuses": *stats.statuses.lock().unwrap(),
    });
    println!("{report}");
}
