//! Load generator for the agent API: signed requests of the demo mix on loopback.
//!
//!   airlock-load --url http://127.0.0.1:3000 --agent load --secret whsec_… \
//!                [--concurrency 64 | --rate 2000] --seconds 10
//!
//! Closed loop (`--concurrency N`): N requests in flight, as fast as the server answers;
//! reports throughput. Open loop (`--rate R`): requests start on a fixed schedule and
//! latency is measured from the scheduled start, so a stall is not hidden by the client
//! waiting (no coordinated omission). Prints one JSON line with the figures.
//!
//! With `--server-pid PID` it also reports the CPU time per call of the server and of
//! itself (from /proc): on a shared machine, server CPU per call is the figure that says
//! how far the throughput can go, whatever the load generator costs.
//!
//! Each connection is a bare HTTP/1 connection (hyper, keep-alive, no pool logic beyond
//! reusing idle connections), so the generator's own cost per request stays small.
//!
//! `--mix demo|held|realistic` picks the calls (realistic: one in seven held for review).
//! `--emit FILE --total N` writes N pre-signed requests for another generator instead
//! (`scripts/wrk-replay.lua` replays them with `wrk`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
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
    server_pid: Option<u32>,
    /// Stop after this many calls (closed loop).
    total: Option<u64>,
    /// Which calls to send.
    mix: Mix,
    /// Write this many pre-signed requests to a file (for `wrk`) instead of sending.
    emit: Option<String>,
}

#[derive(Clone, Copy)]
enum Mix {
    /// Calls the demo policy decides on its own (allowed and denied).
    Demo,
    /// Only calls the demo policy holds for a reviewer (fills a queue).
    Held,
    /// One call in seven held, the rest decided on arrival.
    Realistic,
}

fn parse_args() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let (mut url, mut agent, mut secret) = ("http://127.0.0.1:3000".to_string(), "load".to_string(), None);
    let (mut concurrency, mut rate, mut seconds, mut server_pid) = (64usize, None, 10u64, None);
    let (mut total, mut mix, mut emit) = (None, Mix::Demo, None);
    while let Some(k) = a.next() {
        let mut v = || a.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--url" => url = v()?,
            "--agent" => agent = v()?,
            "--secret" => secret = Some(SigningSecret::parse(&v()?)?),
            "--concurrency" => concurrency = v()?.parse().map_err(|_| "--concurrency: a number")?,
            "--rate" => rate = Some(v()?.parse().map_err(|_| "--rate: a number")?),
            "--seconds" => seconds = v()?.parse().map_err(|_| "--seconds: a number")?,
            "--server-pid" => server_pid = Some(v()?.parse().map_err(|_| "--server-pid: a process id")?),
            "--total" => total = Some(v()?.parse().map_err(|_| "--total: a number")?),
            "--mix" => {
                mix = match v()?.as_str() {
                    "held" => Mix::Held,
                    "demo" => Mix::Demo,
                    "realistic" => Mix::Realistic,
                    _ => return Err("--mix: demo, held or realistic".into()),
                }
            }
            "--emit" => emit = Some(v()?),
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
        server_pid,
        total,
        mix,
        emit,
    })
}

/// Calls the demo policy holds for a reviewer, over several tools, risks and sessions.
fn held_mix() -> Vec<Bytes> {
    let calls = [
        ("write_file", json!({"path": "out/report.md", "content": "# Report"})),
        (
            "execute_command",
            json!({"command": "ls -la src", "cwd": "/srv/agent/workspace"}),
        ),
        ("write_file", json!({"path": "out/summary.md", "content": "# Summary"})),
        ("refund_order", json!({"order_id": "AB12345678", "amount": 7500})),
    ];
    (0..64)
        .map(|i| {
            let (tool, args) = &calls[i % calls.len()];
            json!({"session_id": format!("queue-{}", i % 16), "tool": tool, "arguments": args,
                   "reason": "load test", "context": {"trust": "isolated"}})
            .to_string()
            .into()
        })
        .collect()
}

/// The bodies to cycle through.
fn bodies(mix: Mix) -> Vec<Bytes> {
    match mix {
        Mix::Demo => demo_mix(),
        Mix::Held => held_mix(),
        Mix::Realistic => {
            let (demo, held) = (demo_mix(), held_mix());
            (0..7 * held.len())
                .map(|i| {
                    if i % 7 == 6 {
                        held[i / 7].clone()
                    } else {
                        demo[i % demo.len()].clone()
                    }
                })
                .collect()
        }
    }
}

/// Write `total` pre-signed proposals, one per line: `webhook-id TAB timestamp TAB
/// signature TAB body` (bodies are compact JSON: no tabs or newlines). Webhook-ids are
/// random-looking, as real agents' are. Timestamps are now: replay within five minutes.
fn emit(a: &Args, path: &str) -> std::io::Result<()> {
    use std::io::Write;
    let bodies = bodies(a.mix);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let salt = u64::from(std::process::id()) << 32 ^ server::store::now_ms() as u64;
    for n in 0..a.total.unwrap_or(100_000) {
        let body = &bodies[(n % bodies.len() as u64) as usize];
        let id = format!("msg_{:016x}{:016x}", mix64(salt ^ n), mix64(n.wrapping_add(salt)));
        let h = signature::agent_headers(&a.secret, &a.agent, &id, body);
        out.write_all(format!("{}\t{}\t{}\t", h[1].1, h[2].1, h[3].1).as_bytes())?;
        out.write_all(body)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// splitmix64: spreads counters over the whole range (ids that look random).
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The demo mix of calls the policy decides on its own (allowed and denied).
fn demo_mix() -> Vec<Bytes> {
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
            .into()
        })
        .collect()
}

struct Stats {
    latencies_us: Mutex<Vec<u32>>,
    ok: AtomicU64,
    failed: AtomicU64,
    statuses: Mutex<std::collections::BTreeMap<String, u64>>,
    first_error: Mutex<Option<String>>,
}

impl Stats {
    fn fail(&self, why: String) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().unwrap().get_or_insert(why);
    }
}

/// Idle keep-alive connections to the server; a request takes one or opens a new one.
struct Pool {
    authority: String,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
}

impl Pool {
    async fn take(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        loop {
            let Some(mut c) = self.idle.lock().unwrap().pop() else {
                break;
            };
            if c.ready().await.is_ok() {
                return Ok(c);
            }
        }
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| format!("connect {}: {e}", self.authority))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(conn);
        Ok(send)
    }

    fn give_back(&self, c: SendRequest<Full<Bytes>>) {
        if !c.is_closed() {
            self.idle.lock().unwrap().push(c);
        }
    }
}

#[derive(serde::Deserialize)]
struct Answer {
    status: String,
}

async fn send(pool: &Pool, a: &Args, body: &Bytes, n: u64) -> Result<String, String> {
    // Random-looking, as real agents' ids are (sequential ids would flatter any index on them).
    let id = format!("load_{:016x}{:08x}", mix64(n ^ u64::from(std::process::id()) << 40), n);
    let req = signature::agent_headers(&a.secret, &a.agent, &id, body)
        .into_iter()
        .fold(
            hyper::Request::post("/api/v1/tool-calls")
                .header("host", &pool.authority)
                .header("content-type", "application/json"),
            |r, (k, v)| r.header(k, v),
        )
        .body(Full::new(body.clone()))
        .map_err(|e| e.to_string())?;
    let mut conn = pool.take().await?;
    let res = conn.send_request(req).await.map_err(|e| format!("request: {e}"))?;
    let code = res.status();
    let bytes = res
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("response body: {e}"))?
        .to_bytes();
    pool.give_back(conn);
    if !code.is_success() {
        return Err(format!("HTTP {code}: {}", String::from_utf8_lossy(&bytes)));
    }
    serde_json::from_slice::<Answer>(&bytes)
        .map(|a| a.status)
        .map_err(|e| format!("answer: {e}"))
}

async fn one(pool: &Pool, a: &Args, body: &Bytes, n: u64, stats: &Stats, started: Instant) {
    match send(pool, a, body, n).await {
        Ok(status) => {
            let us = started.elapsed().as_micros().min(u32::MAX as u128) as u32;
            stats.ok.fetch_add(1, Ordering::Relaxed);
            stats.latencies_us.lock().unwrap().push(us);
            *stats.statuses.lock().unwrap().entry(status).or_default() += 1;
        }
        Err(e) => stats.fail(e),
    }
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

/// User + system CPU time of a process so far, in microseconds (Linux /proc; USER_HZ = 100).
fn cpu_us(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000)
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
    if let Some(path) = &a.emit {
        if let Err(e) = emit(&a, path) {
            eprintln!("airlock-load: writing {path}: {e}");
            std::process::exit(1);
        }
        return;
    }
    let authority = match url::Url::parse(&a.url) {
        Ok(u) if u.scheme() == "http" && u.host_str().is_some() => {
            format!(
                "{}:{}",
                u.host_str().unwrap_or_default(),
                u.port_or_known_default().unwrap_or(80)
            )
        }
        _ => {
            eprintln!("airlock-load: --url must be http://host:port");
            std::process::exit(2);
        }
    };
    let pool = Arc::new(Pool {
        authority,
        idle: Mutex::default(),
    });
    let bodies = Arc::new(bodies(a.mix));
    let limit = a.total.unwrap_or(u64::MAX);
    let stats = Arc::new(Stats {
        latencies_us: Mutex::new(Vec::with_capacity(1 << 20)),
        ok: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        statuses: Mutex::default(),
        first_error: Mutex::default(),
    });
    // Open the connections before the clock starts: connection set-up is not what is measured.
    let warm = futures::future::join_all((0..a.concurrency.min(1024)).map(|_| pool.take())).await;
    for c in warm {
        match c {
            Ok(c) => pool.give_back(c),
            Err(e) => {
                eprintln!("airlock-load: {e}");
                std::process::exit(1);
            }
        }
    }
    let server_pid = a.server_pid.map(|p| p.to_string());
    let cpu_before = (server_pid.as_deref().and_then(cpu_us), cpu_us("self"));
    let counter = Arc::new(AtomicU64::new(0));
    let begin = Instant::now();
    let end = begin + Duration::from_secs(a.seconds);
    match a.rate {
        None => {
            let mut workers = Vec::new();
            for _ in 0..a.concurrency {
                let (a, p, s, b, n) = (a.clone(), pool.clone(), stats.clone(), bodies.clone(), counter.clone());
                workers.push(tokio::spawn(async move {
                    while Instant::now() < end {
                        let i = n.fetch_add(1, Ordering::Relaxed);
                        if i >= limit {
                            break;
                        }
                        one(&p, &a, &b[i as usize % b.len()], i, &s, Instant::now()).await;
                    }
                }));
            }
            for w in workers {
                let _ = w.await;
            }
        }
        Some(rate) => {
            // The schedule is kept by a thread of its own: tokio's timers tick in whole
            // milliseconds, so at 2,000/s requests would leave in pairs up to a millisecond
            // after their time, and that delay, the generator's, would count as the server's.
            let interval = Duration::from_nanos(1_000_000_000 / rate.max(1));
            let (due, mut starts) = tokio::sync::mpsc::unbounded_channel();
            std::thread::spawn(move || {
                for i in 0u64.. {
                    let at = begin + interval * i as u32;
                    if at >= end {
                        break;
                    }
                    if let Some(wait) = at.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    if due.send((i, at)).is_err() {
                        break;
                    }
                }
            });
            let mut inflight = tokio::task::JoinSet::new();
            while let Some((i, at)) = starts.recv().await {
                let (a, p, s, b) = (a.clone(), pool.clone(), stats.clone(), bodies.clone());
                inflight.spawn(async move { one(&p, &a, &b[i as usize % b.len()], i, &s, at).await });
                while inflight.try_join_next().is_some() {}
            }
            while inflight.join_next().await.is_some() {}
        }
    }
    let elapsed = begin.elapsed().as_secs_f64();
    let cpu_after = (server_pid.as_deref().and_then(cpu_us), cpu_us("self"));
    let mut lat = std::mem::take(&mut *stats.latencies_us.lock().unwrap());
    lat.sort_unstable();
    let ok = stats.ok.load(Ordering::Relaxed);
    let per_call = |before: Option<u64>, after: Option<u64>| match (before, after) {
        (Some(b), Some(a)) if ok > 0 => Some(((a - b) as f64 / ok as f64 * 10.0).round() / 10.0),
        _ => None,
    };
    let report = json!({
        "mode": if a.rate.is_some() { "open" } else { "closed" },
        "rate": a.rate, "concurrency": if a.rate.is_none() { Some(a.concurrency) } else { None },
        "seconds": (elapsed * 100.0).round() / 100.0,
        "ok": ok, "failed": stats.failed.load(Ordering::Relaxed),
        "throughput_per_s": (ok as f64 / elapsed).round(),
        "p50_ms": pct(&lat, 0.50), "p90_ms": pct(&lat, 0.90), "p99_ms": pct(&lat, 0.99), "max_ms": pct(&lat, 1.0),
        "cpu_us_per_call": {
            "server": per_call(cpu_before.0, cpu_after.0),
            "load": per_call(cpu_before.1, cpu_after.1),
        },
        "statuses": *stats.statuses.lock().unwrap(),
    });
    if let Some(e) = stats.first_error.lock().unwrap().as_ref() {
        eprintln!("airlock-load: first failure: {e}");
    }
    println!("{report}");
}
