//! Replay: what a proposed policy would have done to the calls recorded in a period.
//!
//! Each call is judged again, in arrival order, by the pure engine with what was recorded
//! with it: its arguments (opened if sealed; the redacted form once the raw one is past
//! retention), the host's answers at the time (`tool_calls.facts`; a question the old
//! policy never asked is answered "unknown", which guards treat conservatively), the
//! approve-all grants that were in force for its session, and budgets as the proposed
//! policy itself would have spent them over the period (from empty at its start). Nothing
//! touches the filesystem, DNS or the database beyond reading; nothing is written.
//!
//! The decision compared is the one each call got when it arrived: allowed, denied, or
//! held for a person (whatever the person then decided).

use crate::ingest::facts::{Facts, Replaying};
use crate::store::review::GrantRow;
use crate::store::sealed::Sealer;
use crate::store::usage::UsageState;
use crate::store::Db;
use app::api::{Facet, ReplayExample, ReplayReport, ReplayShift};
use futures::TryStreamExt;
use policy::{Call, Grant, GrantScope, Inputs, Policy, Status};
use serde_json::Value;
use std::collections::HashMap;

/// Most example calls a report lists per kind of change.
const EXAMPLES_PER_SHIFT: usize = 5;

/// Which calls to replay.
#[derive(Debug, Clone)]
pub struct Scope {
    pub since_ms: i64,
    pub until_ms: i64,
    /// Only this agent's calls (empty: every agent's).
    pub agent: String,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    agent_id: String,
    session_id: String,
    turn_id: Option<String>,
    tool: String,
    server: Option<String>,
    arguments: String,
    arguments_redacted: Option<String>,
    context: Option<String>,
    status: String,
    blocked_by: Option<String>,
    rule: Option<String>,
    created_at_ms: i64,
    facts: Option<String>,
}

/// The decision a call got when it arrived.
fn first_decision(status: &str) -> &'static str {
    match status {
        "allowed" => "allowed",
        "denied" => "denied",
        _ => "pending",
    }
}

/// A grant with when it started and stopped counting.
type Span = (i64, i64, Grant);

/// Grants of the period, by agent and session.
struct Grants(HashMap<(String, String), Vec<Span>>);

impl Grants {
    fn of(rows: Vec<GrantRow>) -> Grants {
        let mut by = HashMap::<(String, String), Vec<Span>>::new();
        for r in rows {
            let scope = if r.scope_kind == "server" {
                GrantScope::Server(r.scope_name)
            } else {
                GrantScope::Tool(r.scope_name)
            };
            let ends = r.revoked_at_ms.map_or(r.expires_at_ms, |t| t.min(r.expires_at_ms));
            by.entry((r.agent_id, r.session_id)).or_default().push((
                r.created_at_ms,
                ends,
                Grant {
                    id: r.id,
                    scope,
                    expires_at_ms: ends,
                },
            ));
        }
        Grants(by)
    }

    /// Those of a session in force at `at`.
    fn at(&self, agent: &str, session: &str, at: i64) -> Vec<Grant> {
        // Keys are owned pairs; sessions with grants are few, so the lookup's allocation is
        // paid only by calls whose agent has any.
        if self.0.is_empty() {
            return Vec::new();
        }
        self.0
            .get(&(agent.to_string(), session.to_string()))
            .map(|v| {
                v.iter()
                    .filter(|(from, to, _)| *from <= at && at < *to)
                    .map(|(_, _, g)| g.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Re-judge the calls of `scope` under `proposed`.
pub async fn replay(db: &Db, sealer: &Sealer, proposed: &Policy, scope: &Scope) -> Result<ReplayReport, sqlx::Error> {
    let started = std::time::Instant::now();
    let first = crate::stats::first_rowid_since(db, scope.since_ms).await?;
    let grants = Grants::of(crate::store::review::grants_during(db, scope.since_ms, scope.until_ms).await?);
    let mut usage = UsageState::default();
    let mut report = ReplayReport {
        proposed_name: proposed.name.clone(),
        proposed_version: proposed.version.to_string(),
        since_ms: scope.since_ms,
        until_ms: scope.until_ms,
        agent: scope.agent.clone(),
        replayed: 0,
        changed: 0,
        reasons_changed: 0,
        shifts: Vec::new(),
        tools: Vec::new(),
        layers: Vec::new(),
        rules: Vec::new(),
        examples: Vec::new(),
        redacted_only: 0,
        without_facts: 0,
        elapsed_ms: 0,
    };
    let mut shifts: HashMap<(&'static str, &'static str), u64> = HashMap::new();
    let (mut tools, mut layers, mut rules) = (HashMap::new(), HashMap::new(), HashMap::new());
    let mut examples: HashMap<(&'static str, &'static str), usize> = HashMap::new();
    let mut rows = sqlx::query_as::<_, Row>(
        "SELECT id, agent_id, session_id, turn_id, tool, server, arguments, arguments_redacted, context, status,
                blocked_by, rule, created_at_ms, facts
         FROM tool_calls WHERE rowid >= $1 AND created_at_ms >= $2 AND created_at_ms < $3 AND ($4 = '' OR agent_id = $5)
         ORDER BY rowid",
    )
    .bind(first)
    .bind(scope.since_ms)
    .bind(scope.until_ms)
    .bind(&scope.agent)
    .bind(&scope.agent)
    .fetch(db);
    let null = Value::Null;
    while let Some(r) = rows.try_next().await? {
        report.replayed += 1;
        let raw = match sealer.open(&r.arguments, &r.agent_id) {
            Ok(t) => t,
            // A row the server key cannot open is judged on its redacted form.
            Err(_) => std::borrow::Cow::Borrowed(r.arguments_redacted.as_deref().unwrap_or("{}")),
        };
        if r.arguments_redacted.is_none() && raw.contains("[redacted: ") {
            report.redacted_only += 1;
        }
        let arguments: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
        let context: Value = r
            .context
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or(Value::Null);
        let facts = r.facts.as_deref().map(Facts::from_json).unwrap_or_default();
        let host = Replaying {
            facts: &facts,
            missed: false.into(),
        };
        let call = Call {
            agent: &r.agent_id,
            tool: &r.tool,
            server: r.server.as_deref(),
            session_id: &r.session_id,
            turn_id: r.turn_id.as_deref(),
            arguments: &arguments,
            context: if context.is_null() { &null } else { &context },
        };
        let grants = grants.at(&r.agent_id, &r.session_id, r.created_at_ms);
        let d = proposed.evaluate(
            &call,
            &Inputs {
                now_ms: r.created_at_ms,
                usage: &usage,
                grants: &grants,
                host: &host,
            },
        );
        usage.apply(&d.usage);
        if host.missed.into_inner() {
            report.without_facts += 1;
        }
        let (from, to) = (first_decision(&r.status), d.status.as_str());
        let layer = d.blocked_by.map(|l| l.as_str());
        if from == to {
            let same_reason = to == Status::Allowed.as_str()
                || (layer == r.blocked_by.as_deref() && d.rule.as_deref() == r.rule.as_deref());
            if !same_reason {
                report.reasons_changed += 1;
            }
            continue;
        }
        report.changed += 1;
        *shifts.entry((from, to)).or_default() += 1;
        *tools.entry(r.tool.clone()).or_default() += 1;
        *layers.entry(layer.unwrap_or("none").to_string()).or_default() += 1;
        if let Some(rule) = &d.rule {
            *rules.entry(rule.clone()).or_default() += 1;
        }
        let shown = examples.entry((from, to)).or_default();
        if *shown < EXAMPLES_PER_SHIFT {
            *shown += 1;
            report.examples.push(ReplayExample {
                call_id: r.id,
                at_ms: r.created_at_ms,
                agent: r.agent_id,
                tool: r.tool,
                from: from.into(),
                to: to.into(),
                layer: layer.map(str::to_string),
                rule: d.rule.clone(),
                reason: d.reason.clone(),
            });
        }
    }
    let mut shifts: Vec<ReplayShift> = shifts
        .into_iter()
        .map(|((from, to), count)| ReplayShift {
            from: from.into(),
            to: to.into(),
            count,
        })
        .collect();
    shifts.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| (&a.from, &a.to).cmp(&(&b.from, &b.to)))
    });
    report.shifts = shifts;
    report.tools = Facet::ranked(tools, 20);
    report.layers = Facet::ranked(layers, 20);
    report.rules = Facet::ranked(rules, 20);
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The report as text (the CLI).
pub fn to_text(r: &ReplayReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Replayed {} calls under {} {} in {:.1} s: {} would be decided otherwise, {} for another reason.",
        r.replayed,
        r.proposed_name,
        r.proposed_version,
        r.elapsed_ms as f64 / 1000.0,
        r.changed,
        r.reasons_changed
    );
    for s in &r.shifts {
        let _ = writeln!(out, "  {:>8} {} -> {}", s.count, s.from, s.to);
    }
    for (title, facets) in [("tool", &r.tools), ("layer", &r.layers), ("rule", &r.rules)] {
        if facets.is_empty() {
            continue;
        }
        let list: Vec<String> = facets.iter().map(|f| format!("{} ({})", f.value, f.count)).collect();
        let _ = writeln!(out, "By {title}: {}", list.join(", "));
    }
    for e in &r.examples {
        let _ = writeln!(
            out,
            "  {} {} {} {} -> {}: {}",
            crate::audit::search::rfc3339(e.at_ms),
            e.call_id,
            e.tool,
            e.from,
            e.to,
            e.reason
        );
    }
    if r.redacted_only > 0 || r.without_facts > 0 {
        let _ = writeln!(
            out,
            "{} calls were judged on redacted arguments (raw ones past retention); {} asked the host something not recorded (judged lexically).",
            r.redacted_only, r.without_facts
        );
    }
    out
}
