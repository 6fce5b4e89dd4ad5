//! Shadow rules: never change a decision, every would-have-fired is recorded, and the
//! report (Stats page API and `airlock policy shadow`) counts them per rule, tool and
//! agent with examples.

use crate::common::{airlock, reviewer, spawn_app, text};
use app::api::Role;
use serde_json::json;

fn search(q: &str) -> serde_json::Value {
    json!({"session_id": "s", "tool": "web_search", "arguments": {"query": q}})
}

#[tokio::test]
async fn shadow_findings_are_recorded_and_reported_without_changing_decisions() {
    let app = spawn_app().await;
    let bot = app.agent("bot").await;
    let other = app.agent("other-bot").await;
    let long = "pasted: ".to_string() + &"lorem ipsum dolor sit amet ".repeat(9);
    assert!(long.len() > 200);
    for (agent, q) in [
        (&bot, long.as_str()),
        (&bot, long.as_str()),
        (&other, long.as_str()),
        (&bot, "short"),
    ] {
        let (_, v) = agent.propose(search(q)).await;
        assert_eq!(v["status"], "allowed", "a shadow rule never changes a decision: {v}");
    }
    let rita = reviewer(&app, "rita", Role::Auditor).await;
    let r = rita.get(&app, "/api/stats/shadow?since=7d").await;
    let rules = r["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{r}");
    let rule = &rules[0];
    assert_eq!(rule["rule"], "long_search_query");
    assert_eq!(rule["would"], "pending");
    assert_eq!(rule["fired"], 3);
    assert_eq!(rule["tools"], json!([{"value": "web_search", "count": 3}]));
    assert_eq!(
        rule["agents"],
        json!([{"value": "bot", "count": 2}, {"value": "other-bot", "count": 1}])
    );
    assert_eq!(rule["examples"].as_array().unwrap().len(), 3);
    assert_eq!(rule["examples"][0]["status"], "allowed");

    let only = rita.get(&app, "/api/stats/shadow?since=7d&agent=other-bot").await;
    assert_eq!(only["rules"][0]["fired"], 1);
    let later = rita.get(&app, "/api/stats/shadow?since=2999-01-01").await;
    assert!(later["rules"].as_array().unwrap().is_empty());
    let bad = rita
        .c
        .get(app.url("/api/stats/shadow?since=yesterday-ish"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);

    // The Stats page shows it (server-rendered).
    let page = rita.page(&app, "/stats?since=24h").await;
    assert!(page.contains("long_search_query"), "the page lists the rule");

    // The CLI reads the same report from the database.
    let db = app.database_url.clone();
    let o = airlock(&db, &["policy", "shadow", "--since", "1d"], None);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("long_search_query [rule] would be pending: fired 3 times"),
        "{out}"
    );
    assert!(out.contains("bot (2), other-bot (1)"), "{out}");
}
