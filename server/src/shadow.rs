//! The shadow-rule report: what rules, guards and budgets marked `shadow = true` would
//! have done to recorded calls (each call stores its findings in its details), per rule,
//! with the tools and agents it fired for and the latest examples. Read by the Stats page
//! and `airlock policy shadow`.

use crate::store::details::Shadow;
use crate::store::Db;
use app::api::{Facet, ShadowExample, ShadowReport, ShadowRuleReport};
use std::collections::{BTreeMap, HashMap};

/// Most findings one report reads (newest first).
pub const MAX_FINDINGS: i64 = 200_000;
const EXAMPLES: usize = 5;

/// One call's finding, newest first.
struct Finding {
    call_id: String,
    tool: String,
    agent: String,
    at_ms: i64,
    status: String,
    shadow: Shadow,
}

pub async fn report(db: &Db, since_ms: i64, agent: &str, now_ms: i64) -> Result<ShadowReport, sqlx::Error> {
    type Row = (String, String, String, i64, String, String);
    // Calls with nothing to add store no details: only calls with findings are read.
    let each = match crate::store::Backend::of(db) {
        crate::store::Backend::Sqlite => "json_each(c.details, '$.shadow') s",
        crate::store::Backend::Postgres => "jsonb_array_elements(c.details::jsonb -> 'shadow') AS s(value)",
    };
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT c.id, c.tool, c.agent_id, c.created_at_ms, c.status, CAST(s.value AS TEXT)
         FROM tool_calls c, {each}
         WHERE c.details IS NOT NULL AND c.created_at_ms >= $1 AND ($2 = '' OR c.agent_id = $3)
         ORDER BY c.created_at_ms DESC LIMIT $4",
    ))
    .bind(since_ms)
    .bind(agent)
    .bind(agent)
    .bind(MAX_FINDINGS + 1)
    .fetch_all(db)
    .await?;
    let truncated = rows.len() as i64 > MAX_FINDINGS;
    let findings =
        rows.into_iter()
            .take(MAX_FINDINGS as usize)
            .filter_map(|(call_id, tool, agent, at_ms, status, value)| {
                let shadow = serde_json::from_str::<Shadow>(&value).ok()?;
                Some(Finding {
                    call_id,
                    tool,
                    agent,
                    at_ms,
                    status,
                    shadow,
                })
            });
    Ok(ShadowReport {
        since_ms,
        now_ms,
        rules: aggregate(findings),
        truncated,
    })
}

/// Group findings (newest first) by rule, most often fired first.
fn aggregate(findings: impl Iterator<Item = Finding>) -> Vec<ShadowRuleReport> {
    struct Acc {
        report: ShadowRuleReport,
        tools: HashMap<String, u64>,
        agents: HashMap<String, u64>,
    }
    let mut by_rule: BTreeMap<(String, String, String), Acc> = BTreeMap::new();
    for f in findings {
        let key = (f.shadow.rule.clone(), f.shadow.layer.clone(), f.shadow.would.clone());
        let acc = by_rule.entry(key).or_insert_with(|| Acc {
            report: ShadowRuleReport {
                rule: f.shadow.rule.clone(),
                layer: f.shadow.layer.clone(),
                would: f.shadow.would.clone(),
                fired: 0,
                tools: Vec::new(),
                agents: Vec::new(),
                examples: Vec::new(),
            },
            tools: HashMap::new(),
            agents: HashMap::new(),
        });
        acc.report.fired += 1;
        *acc.tools.entry(f.tool.clone()).or_default() += 1;
        *acc.agents.entry(f.agent.clone()).or_default() += 1;
        if acc.report.examples.len() < EXAMPLES {
            acc.report.examples.push(ShadowExample {
                call_id: f.call_id,
                tool: f.tool,
                agent: f.agent,
                at_ms: f.at_ms,
                status: f.status,
                reason: f.shadow.reason,
            });
        }
    }
    let mut out: Vec<ShadowRuleReport> = by_rule
        .into_values()
        .map(|a| ShadowRuleReport {
            tools: Facet::ranked(a.tools, usize::MAX),
            agents: Facet::ranked(a.agents, usize::MAX),
            ..a.report
        })
        .collect();
    out.sort_by(|a, b| b.fired.cmp(&a.fired).then_with(|| a.rule.cmp(&b.rule)));
    out
}

/// The report as plain text (the CLI's output).
pub fn to_text(r: &ShadowReport) -> String {
    if r.rules.is_empty() {
        return "no shadow rule fired in this period\n".into();
    }
    let mut out = String::new();
    for rule in &r.rules {
        let list = |f: &[Facet]| {
            f.iter()
                .map(|x| format!("{} ({})", x.value, x.count))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "{} [{}] would be {}: fired {} times\n  tools:  {}\n  agents: {}\n",
            rule.rule,
            rule.layer,
            rule.would,
            rule.fired,
            list(&rule.tools),
            list(&rule.agents)
        ));
        for e in &rule.examples {
            out.push_str(&format!(
                "  e.g. {} {} {} by {} ({}): {}\n",
                crate::ingest::view::rfc3339(e.at_ms),
                e.call_id,
                e.tool,
                e.agent,
                e.status,
                e.reason
            ));
        }
    }
    if r.truncated {
        out.push_str(&format!("(only the newest {MAX_FINDINGS} findings were read)\n"));
    }
    out
}
