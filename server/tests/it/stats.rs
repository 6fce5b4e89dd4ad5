//! The Stats page over a time range: calls per bucket by decision, waits and reviewer
//! load, grants, overrides, expiries, the most denied tools and rules.

use crate::common::{held, reviewer, spawn_app};
use app::api::Role;
use serde_json::{json, Value};

fn sum(v: &Value, group: &str) -> u64 {
    v["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == group)
        .map(|s| s[1].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum())
        .unwrap_or(0)
}

#[tokio::test]
async fn the_stats_range_counts_decisions_waits_and_reviewers() {
    let app = spawn_app().await;
    let agent = app.agent("bot").await;
    let rita = reviewer(&app, "rita", Role::Reviewer).await;
    let aldo = reviewer(&app, "aldo", Role::Auditor).await;
    let write = |p: &str| json!({"session_id": "s", "tool": "write_file", "arguments": {"path": p, "content": "x"}});
    agent
        .propose(json!({"session_id": "s", "tool": "web_search", "arguments": {"query": "q"}}))
        .await;
    for _ in 0..2 {
        let (_, v) = agent
            .propose(json!({"session_id": "s", "tool": "read_file", "arguments": {"path": "/etc/shadow"}}))
            .await;
        assert_eq!(v["status"], "denied");
    }
    let a = held(&agent, write("out/a.md")).await;
    let b = held(&agent, write("out/b.md")).await;
    held(&agent, write("out/c.md")).await;
    assert_eq!(rita.decide(&app, &a, &[("verdict", "approve")]).await["ok"], true);
    assert_eq!(
        rita.decide(&app, &b, &[("verdict", "reject"), ("text", "no")]).await["ok"],
        true
    );

    let r = aldo.get(&app, "/api/stats/range?range=24h").await;
    assert_eq!(r["range"], "24h");
    assert_eq!(r["series"][0][1].as_array().unwrap().len(), 24, "hourly buckets");
    assert_eq!(
        (sum(&r, "allowed"), sum(&r, "denied"), sum(&r, "held")),
        (1, 2, 3),
        "{r}"
    );
    assert_eq!(r["decided_by_people"], 2);
    assert!(r["wait_p50_ms"].as_i64().unwrap() >= 0);
    assert_eq!(
        r["reviewers"],
        json!([{"reviewer": "user:rita", "decisions": 2, "median_ms": r["reviewers"][0]["median_ms"]}])
    );
    assert_eq!(r["blocked_tools"], json!([{"value": "read_file", "count": 2}]));
    assert_eq!(r["expiries"], 0);
    // One of the three held calls is still waiting at the end of the range.
    assert_eq!(r["depth"].as_array().unwrap().last(), Some(&json!(1)), "{r}");

    let week = aldo.get(&app, "/api/stats/range?range=7d").await;
    assert_eq!(week["series"][0][1].as_array().unwrap().len(), 28, "6-hour buckets");
    assert_eq!(sum(&week, "held"), 3);
    let bad = aldo.c.get(app.url("/api/stats/range?range=1y")).send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);

    // The page draws it without JavaScript.
    let page = aldo.page(&app, "/stats?range=7d").await;
    assert!(page.contains("Calls per 6 h by decision"), "{page}");
    assert!(
        page.contains("<svg") && page.contains("bar-denied"),
        "the chart is server-rendered"
    );
    assert!(page.contains("rita"), "reviewer load is listed");
    assert!(page.contains("depth-line"), "the queue's depth is drawn");
}
