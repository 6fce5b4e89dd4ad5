//! Evaluation cost per call shape and for a realistic mix of demo-policy calls.
//!
//!     cargo bench -p policy --bench evaluate
//!
//! Budget state is a fresh `MemoryUsage` per shape (the server reads it from the DB);
//! the host is `PureHost` (lexical guards, no filesystem or DNS).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use policy::{Call, Inputs, MemoryUsage, Policy, PureHost};
use serde_json::{json, Value};
use std::hint::black_box;

const DEMO: &str = include_str!("../../../policies/demo.toml");
const T0: i64 = 1_767_225_600_000;

struct Shape {
    name: &'static str,
    tool: &'static str,
    server: Option<&'static str>,
    args: Value,
    context: Value,
}

fn shapes() -> Vec<Shape> {
    let s = |name, tool, args| Shape {
        name,
        tool,
        server: None,
        args,
        context: Value::Null,
    };
    vec![
        s(
            "query_order (allowlist+schema)",
            "query_order",
            json!({"order_id": "AB12345678", "include_items": true}),
        ),
        s(
            "refund_order small (threshold+amount budget)",
            "refund_order",
            json!({"order_id": "AB12345678", "amount": 20}),
        ),
        s(
            "refund_order large (held by rule)",
            "refund_order",
            json!({"order_id": "AB12345678", "amount": 7500}),
        ),
        s("web_search", "web_search", json!({"query": "rust json schema"})),
        s(
            "create_reply_draft",
            "create_reply_draft",
            json!({"text": "Thanks, your refund is on its way."}),
        ),
        s(
            "unknown tool (allowlist deny)",
            "cancel_order",
            json!({"order_id": "AB12345678"}),
        ),
        s(
            "schema deny (coercion attempt)",
            "refund_order",
            json!({"order_id": "AB12345678", "amount": "20"}),
        ),
        s("read_file (path fence)", "read_file", json!({"path": "src/lib/mod.rs"})),
        s(
            "read_file traversal (path deny)",
            "read_file",
            json!({"path": "../../etc/passwd"}),
        ),
        s(
            "move_to_trash 5 paths",
            "move_to_trash",
            json!({"paths": ["/data/shared/uploads/a.csv", "/data/shared/uploads/b.csv", "/data/shared/uploads/2024/c.pdf", "/data/shared/uploads/d", "/data/shared/uploads/e/f.txt"]}),
        ),
        s(
            "web_fetch (URL guard + rate)",
            "web_fetch",
            json!({"url": "https://docs.rs/serde/latest/serde/"}),
        ),
        s(
            "web_fetch metadata (SSRF deny)",
            "web_fetch",
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        ),
        s(
            "execute_command simple",
            "execute_command",
            json!({"command": "ls -la src"}),
        ),
        s(
            "execute_command pipeline",
            "execute_command",
            json!({"command": "git log --oneline | head -20 && cargo test -p policy 2>&1 | tail -5"}),
        ),
        s(
            "execute_command dangerous",
            "execute_command",
            json!({"command": "bash -c \"echo $(rm -rf --no-preserve-root /)\""}),
        ),
        s(
            "send_email",
            "send_email",
            json!({"to": "ana@example.com", "subject": "Your order", "body": "Hello Ana, your order has shipped."}),
        ),
        Shape {
            name: "chrome click sensitive (rule on context)",
            tool: "mcp__chrome-devtools__click",
            server: Some("chrome-devtools"),
            args: json!({"uid": "btn-7"}),
            context: json!({"page_sensitive": true}),
        },
    ]
}

fn bench(c: &mut Criterion) {
    let policy = Policy::from_toml(DEMO).unwrap();
    let shapes = shapes();
    let mut group = c.benchmark_group("shape");
    for sh in &shapes {
        let usage = MemoryUsage::default();
        group.bench_function(sh.name, |b| {
            b.iter(|| {
                let call = Call {
                    agent: "bench-agent",
                    tool: sh.tool,
                    server: sh.server,
                    session_id: "bench-session",
                    turn_id: Some("t1"),
                    arguments: &sh.args,
                    context: &sh.context,
                };
                black_box(policy.evaluate(
                    black_box(&call),
                    &Inputs {
                        now_ms: T0,
                        usage: &usage,
                        grants: &[],
                        host: &PureHost,
                    },
                ))
            })
        });
    }
    group.finish();

    // The mix: every shape once per iteration; the figure is divided by the shape count
    // in the README.
    c.bench_function("mix (all shapes once)", |b| {
        b.iter_batched_ref(
            MemoryUsage::default,
            |usage| {
                for sh in &shapes {
                    let call = Call {
                        agent: "bench-agent",
                        tool: sh.tool,
                        server: sh.server,
                        session_id: "bench-session",
                        turn_id: Some("t1"),
                        arguments: &sh.args,
                        context: &sh.context,
                    };
                    let d = policy.evaluate(
                        &call,
                        &Inputs {
                            now_ms: T0,
                            usage: &*usage,
                            grants: &[],
                            host: &PureHost,
                        },
                    );
                    usage.apply(&d.usage);
                    black_box(d);
                }
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
