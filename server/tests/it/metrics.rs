//! `GET /metrics`: Prometheus text that parses, moves when calls arrive, and is read only
//! with the token or from this machine.

use crate::common::{held, spawn_with};
use secrecy::SecretString;
use serde_json::json;
use std::collections::HashMap;

/// Parse the exposition text strictly enough to catch a broken format: every sample line
/// is `name{labels} value`, every metric has HELP and TYPE first, the text ends in EOF.
fn parse(text: &str) -> HashMap<String, f64> {
    let mut samples = HashMap::new();
    let mut typed = std::collections::HashSet::new();
    assert_eq!(text.lines().last(), Some("# EOF"), "{text}");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            typed.insert(rest.split(' ').next().unwrap().to_string());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value: {line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad name: {line}"
        );
        if let Some(labels) = series.strip_prefix(name) {
            assert!(
                labels.is_empty() || (labels.starts_with('{') && labels.ends_with('}')),
                "{line}"
            );
        }
        assert!(
            typed.iter().any(|t| name.starts_with(t.as_str())),
            "{name} has no TYPE line before it"
        );
        samples.insert(series.to_string(), value);
    }
    samples
}

fn sum(samples: &HashMap<String, f64>, prefix: &str, having: &[&str]) -> f64 {
    samples
        .iter()
        .filter(|(k, _)| k.starts_with(prefix) && having.iter().all(|h| k.contains(h)))
        .map(|(_, v)| v)
        .sum()
}

#[tokio::test]
async fn metrics_parse_and_move_when_calls_arrive() {
    let app = spawn_with(|_| {}).await;
    let http = reqwest::Client::new();
    let scrape = || async {
        let r = http.get(app.url("/metrics")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("openmetrics-text"));
        parse(&r.text().await.unwrap())
    };
    let before = scrape().await;
    let agent = app.agent("bot").await;
    held(
        &agent,
        json!({"session_id": "s", "tool": "write_file", "arguments": {"path": "out/a.md", "content": "x"}}),
    )
    .await;
    let (_, v) = agent
        .propose(json!({"session_id": "s", "tool": "read_file", "arguments": {"path": "/etc/shadow"}}))
        .await;
    assert_eq!(v["status"], "denied");
    let after = scrape().await;

    let pending = |s: &HashMap<String, f64>| sum(s, "airlock_decisions_total", &["status=\"pending\""]);
    let denied = |s: &HashMap<String, f64>| {
        sum(
            s,
            "airlock_decisions_total",
            &["status=\"denied\"", "layer=\"path_guard\"", "source=\"policy\""],
        )
    };
    assert!(pending(&after) >= pending(&before) + 1.0, "{after:?}");
    assert!(denied(&after) >= denied(&before) + 1.0, "{after:?}");
    assert!(after["airlock_queue_depth"] >= 1.0);
    assert!(after["airlock_oldest_pending_seconds"] >= 0.0);
    assert!(
        sum(
            &after,
            "airlock_http_requests_total",
            &["route=\"/api/v1/tool-calls\"", "status=\"200\""]
        ) >= 2.0
    );
    assert!(
        sum(
            &after,
            "airlock_http_request_seconds_count",
            &["route=\"/api/v1/tool-calls\""]
        ) >= 2.0
    );
    assert!(sum(&after, "airlock_ledger_batch_size_count", &[]) >= 1.0);
    assert!(sum(&after, "airlock_ledger_commit_seconds_count", &[]) >= 1.0);
    assert!(
        after
            .keys()
            .any(|k| k.starts_with("airlock_policy_info{") && k.contains("version=\"sha256:")),
        "{after:?}"
    );
    // Raw paths never become series (ids would make one each).
    assert!(!after.keys().any(|k| k.contains("tc_")), "{after:?}");
}

#[tokio::test]
async fn with_a_token_metrics_need_it() {
    let app = spawn_with(|c| c.metrics_token = Some(SecretString::from("scrape-me-0123456789"))).await;
    let http = reqwest::Client::new();
    let r = http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = http.get(app.url("/metrics")).bearer_auth("wrong").send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .get(app.url("/metrics"))
        .bearer_auth("scrape-me-0123456789")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    parse(&r.text().await.unwrap());
}
