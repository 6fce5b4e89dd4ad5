//! Stats: true counts over what is recorded, and what rules in shadow mode would have
//! done. Charts over time, approval latency and reviewer load come with the rest of the
//! policy-lifecycle work; the page says so rather than pretending there is nothing to show.

use crate::api::{
    error_text_in, get_shadow_report, get_stats, get_stats_range, grouped, Facet, ShadowReport, StatsRange,
    StatsSummary,
};
use crate::components::shell::Guarded;
use crate::i18n::{use_tr, Tr};
use crate::pages::audit::layer_text;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn Stats() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("stats.title")/>
        <Guarded path="/stats">
            <h1>{tr.t("stats.heading")}</h1>
            <RangeForm/>
            <StatsLoader/>
            <RangeSection/>
            <ShadowSection/>
            <p class="card muted" data-testid="stats-coming">{tr.t("stats.coming")}</p>
        </Guarded>
    }
}

/// The resource lives inside the guard: a page someone may not open starts no query.
#[component]
fn StatsLoader() -> impl IntoView {
    let summary = Resource::new(|| (), |_| get_stats());
    let tr = use_tr();
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("stats.counting")}</p> }>
            {move || Suspend::new(async move {
                match summary.await {
                    Ok(s) => view! { <StatsView s/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// A call's outcome as the charts group them: a status, or `held` (waiting for a person).
fn outcome_text(tr: Tr, outcome: &str) -> String {
    match outcome {
        "held" => tr.t("stats.held").to_string(),
        other => tr.word("status", other).to_string(),
    }
}

/// Facets whose values are words of the dashboard (statuses, layers), shown in the page's
/// language; the counts stay.
fn shown(tr: Tr, facets: Vec<Facet>, words: fn(Tr, &str) -> String) -> Vec<Facet> {
    facets
        .into_iter()
        .map(|f| Facet {
            value: words(tr, &f.value),
            count: f.count,
        })
        .collect()
}

#[component]
fn StatsView(s: StatsSummary) -> impl IntoView {
    let tr = use_tr();
    if s.calls == 0 {
        return view! {
            <section class="card" data-testid="stats-summary">
                <p>{tr.t("stats.no_calls")}</p>
            </section>
        }
        .into_any();
    }
    let covers = match s.oldest_in_window_ms {
        Some(t) => tr.f("stats.covers", &[("span", tr.span(s.now_ms - t).as_str())]),
        None => String::new(),
    };
    let statuses = shown(tr, s.statuses, outcome_text);
    let layers = shown(tr, s.layers, layer_text);
    view! {
        <section class="card" data-testid="stats-summary">
            <p class="big-numbers">
                <span><strong data-testid="stats-calls">{grouped(s.calls)}</strong>{tr.t("stats.calls_recorded")}</span>
                <span><strong data-testid="stats-waiting">{grouped(s.waiting)}</strong>{tr.t("stats.waiting_now")}</span>
            </p>
        </section>
        <section class="card" aria-labelledby="outcomes-h">
            <h2 id="outcomes-h">{tr.f("stats.outcomes", &[("n", grouped(s.window).as_str()), ("covers", covers.as_str())])}</h2>
            <Bars facets=statuses total=s.window testid="stats-outcomes"/>
        </section>
        {(!layers.is_empty()).then(|| view! {
            <section class="card" aria-labelledby="layers-h">
                <h2 id="layers-h">{tr.t("stats.layers")}</h2>
                <Bars facets=layers.clone() total=layers.iter().map(|f| f.count).sum() testid="stats-layers"/>
            </section>
        })}
        <section class="card" aria-labelledby="tools-h">
            <h2 id="tools-h">{tr.t("stats.tools")}</h2>
            <Bars facets=s.tools total=s.window testid="stats-tools"/>
        </section>
    }
    .into_any()
}

/// Counts as a table with proportional bars (`<meter>`: no script, no inline style, which
/// the content security policy would refuse).
#[component]
fn Bars(facets: Vec<Facet>, total: u64, testid: &'static str) -> impl IntoView {
    let total = total.max(1);
    view! {
        <table class="table bars" data-testid=testid>
            <tbody>
                {facets.into_iter().map(|f| {
                    view! {
                        <tr>
                            <th scope="row">{f.value}</th>
                            <td class="num">{grouped(f.count)}</td>
                            <td class="bar-cell"><meter min="0" max=total.to_string() value=f.count.to_string()></meter></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// What rules in shadow mode would have done, per rule, over a chosen period (in the URL,
/// so a GET form changes it without JavaScript).
#[component]
fn ShadowSection() -> impl IntoView {
    let since = use_range();
    let report = Resource::new(since, |s| get_shadow_report(s, String::new()));
    let tr = use_tr();
    view! {
        <section class="card" aria-labelledby="shadow-h" data-testid="shadow-report">
            <h2 id="shadow-h">{tr.t("stats.shadow_heading")}</h2>
            <p class="muted">{tr.t("stats.shadow_help")}</p>
            <Suspense fallback=move || view! { <p class="muted">{tr.t("stats.shadow_loading")}</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Ok(r) => view! { <ShadowTable r/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn ShadowTable(r: ShadowReport) -> impl IntoView {
    let tr = use_tr();
    if r.rules.is_empty() {
        return view! { <p data-testid="shadow-none">{tr.f("stats.shadow_none", &[("since", tr.time(r.since_ms).as_str())])}</p> }
            .into_any();
    }
    let list = |f: &[Facet]| {
        f.iter()
            .take(5)
            .map(|x| format!("{} ({})", x.value, grouped(x.count)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rows = r
        .rules
        .iter()
        .map(|rule| {
            let examples = rule
                .examples
                .iter()
                .map(|e| view! { <li><a href=format!("/calls/{}", e.call_id)>{e.tool.clone()}</a>{format!(" · {} · {} · {}", e.agent, tr.word("status", &e.status), tr.time(e.at_ms))}</li> })
                .collect_view();
            view! {
                <tr data-rule=rule.rule.clone()>
                    <td><code>{rule.rule.clone()}</code><br/><span class="muted">{tr.word("layer", &rule.layer)}</span></td>
                    <td>{tr.f("stats.would_be", &[("status", tr.word("status", &rule.would))])}</td>
                    <td data-testid="shadow-fired">{grouped(rule.fired)}</td>
                    <td>{list(&rule.tools)}</td>
                    <td>{list(&rule.agents)}</td>
                    <td><ul class="plain">{examples}</ul></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead><tr>
                <th scope="col">{tr.t("stats.col_rule")}</th><th scope="col">{tr.t("stats.col_effect")}</th><th scope="col">{tr.t("stats.col_fired")}</th>
                <th scope="col">{tr.t("stats.col_tools")}</th><th scope="col">{tr.t("stats.col_agents")}</th><th scope="col">{tr.t("stats.col_latest")}</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
        {r.truncated.then(|| view! { <p class="muted">{tr.t("stats.shadow_truncated")}</p> })}
    }
    .into_any()
}

/// The page's time range, from its URL (`?range=7d`): the charts and the shadow report follow it.
fn use_range() -> impl Fn() -> String + Copy + Send + Sync + 'static {
    let query = use_query_map();
    move || {
        query.with(|q| {
            q.get("range")
                .filter(|r| matches!(r.as_str(), "24h" | "7d" | "30d"))
                .unwrap_or_else(|| "24h".into())
        })
    }
}

/// The range as a GET form: works without JavaScript, the URL can be shared.
#[component]
fn RangeForm() -> impl IntoView {
    let range = use_range();
    let tr = use_tr();
    let options = [
        ("24h", tr.t("stats.range_24h")),
        ("7d", tr.t("stats.range_7d")),
        ("30d", tr.t("stats.range_30d")),
    ];
    view! {
        <form method="get" action="/stats" class="inline range-form" data-testid="range-form">
            <label for="stats-range">{tr.t("stats.range_label")}</label>
            <select id="stats-range" name="range">
                {options.into_iter().map(|(v, l)| view! { <option value=v selected=move || range() == v>{l}</option> }).collect_view()}
            </select>
            <button type="submit">{tr.t("stats.range_submit")}</button>
        </form>
    }
}

#[component]
fn RangeSection() -> impl IntoView {
    let range = use_range();
    let data = Resource::new(range, get_stats_range);
    let tr = use_tr();
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("stats.counting")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(r) => view! { <RangeView r/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn ms_text(tr: Tr, ms: Option<i64>) -> String {
    ms.map_or_else(
        || "–".to_string(),
        |m| {
            if m < 1000 {
                tr.f("stats.ms", &[("n", m.to_string().as_str())])
            } else {
                tr.span(m)
            }
        },
    )
}

#[component]
fn RangeView(r: StatsRange) -> impl IntoView {
    let tr = use_tr();
    let bucket = tr.span(r.bucket_ms);
    let reviewers = r
        .reviewers
        .iter()
        .map(|l| view! { <tr><th scope="row">{tr.who(&l.reviewer)}</th><td class="num">{grouped(l.decisions)}</td><td class="num">{ms_text(tr, Some(l.median_ms))}</td></tr> })
        .collect_view();
    let no_reviews = r.reviewers.is_empty();
    view! {
        <section class="card" aria-labelledby="per-bucket-h" data-testid="stats-chart">
            <h2 id="per-bucket-h">{tr.f("stats.per_bucket", &[("bucket", bucket.as_str())])}</h2>
            <DecisionChart r=r.clone()/>
        </section>
        <section class="card" aria-labelledby="depth-h" data-testid="stats-depth">
            <h2 id="depth-h">{tr.f("stats.depth", &[("bucket", bucket.as_str())])}</h2>
            <DepthChart r=r.clone()/>
        </section>
        <section class="card" aria-labelledby="people-h" data-testid="stats-people">
            <h2 id="people-h">{tr.t("stats.people")}</h2>
            <p class="big-numbers">
                <span><strong>{ms_text(tr, r.wait_p50_ms)}</strong>{tr.t("stats.wait_median")}</span>
                <span><strong>{ms_text(tr, r.wait_p90_ms)}</strong>{tr.t("stats.wait_p90")}</span>
                <span><strong>{ms_text(tr, r.wait_p99_ms)}</strong>{tr.t("stats.wait_p99")}</span>
            </p>
            <p class="big-numbers">
                <span><strong data-testid="stats-grants">{grouped(r.grants)}</strong>{tr.t("stats.grants")}</span>
                <span><strong data-testid="stats-overrides">{grouped(r.overrides)}</strong>{tr.t("stats.overrides")}</span>
                <span><strong data-testid="stats-expiries">{grouped(r.expiries)}</strong>{tr.t("stats.expiries")}</span>
            </p>
            {if no_reviews {
                view! { <p class="muted">{tr.t("stats.no_reviews")}</p> }.into_any()
            } else {
                view! {
                    <table class="table" data-testid="stats-reviewers">
                        <thead><tr>
                            <th scope="col">{tr.t("stats.col_reviewer")}</th><th scope="col">{tr.t("stats.col_decisions")}</th>
                            <th scope="col">{tr.t("stats.col_median")}</th>
                        </tr></thead>
                        <tbody>{reviewers}</tbody>
                    </table>
                }.into_any()
            }}
        </section>
        {(!r.blocked_tools.is_empty()).then(|| {
            let total = r.blocked_tools.iter().map(|f| f.count).sum();
            let rules_total = r.blocked_rules.iter().map(|f| f.count).sum();
            view! {
                <section class="card" aria-labelledby="blocked-h">
                    <h2 id="blocked-h">{tr.t("stats.blocked")}</h2>
                    <Bars facets=r.blocked_tools.clone() total testid="stats-blocked-tools"/>
                    {(!r.blocked_rules.is_empty()).then(|| view! { <Bars facets=r.blocked_rules.clone() total=rules_total testid="stats-blocked-rules"/> })}
                </section>
            }
        })}
    }
}

/// The queue's depth over the range as a line (SVG, like the bars).
#[component]
fn DepthChart(r: StatsRange) -> impl IntoView {
    let tr = use_tr();
    const W: f64 = 720.0;
    const H: f64 = 120.0;
    let n = r.depth.len().max(1);
    let max = r.depth.iter().copied().max().unwrap_or(0).max(1);
    let step = if n > 1 { W / (n - 1) as f64 } else { W };
    let points = r
        .depth
        .iter()
        .enumerate()
        .map(|(i, d)| {
            format!(
                "{:.1},{:.1}",
                i as f64 * step,
                H - 5.0 - (*d as f64 / max as f64) * (H - 10.0)
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let peak = r.depth.iter().copied().max().unwrap_or(0);
    let now = r.depth.last().copied().unwrap_or(0);
    let (peak, now) = (grouped(peak), grouped(now));
    let summary = tr.f("stats.depth_summary", &[("peak", peak.as_str()), ("now", now.as_str())]);
    let label = summary.clone();
    view! {
        <svg class="chart depth" viewBox=format!("0 0 {W} {H}") role="img" aria-label=label preserveAspectRatio="none">
            <title>{summary.clone()}</title>
            <polyline class="depth-line" points=points></polyline>
        </svg>
        <p class="chart-axis muted"><span>{tr.time(r.from_ms)}</span><span>{summary}</span><span>{tr.time(r.to_ms)}</span></p>
    }
}

/// Stacked bars per bucket, drawn as SVG on the server (no script, no chart library, no
/// inline style: colours come from the stylesheet by class).
#[component]
fn DecisionChart(r: StatsRange) -> impl IntoView {
    let tr = use_tr();
    const W: f64 = 720.0;
    const H: f64 = 180.0;
    let n = r.series.first().map_or(0, |s| s.1.len()).max(1);
    let totals: Vec<u64> = (0..n)
        .map(|i| r.series.iter().map(|s| s.1.get(i).copied().unwrap_or(0)).sum())
        .collect();
    let max = totals.iter().copied().max().unwrap_or(0).max(1);
    let all: u64 = totals.iter().sum();
    let slot = W / n as f64;
    let mut bars = Vec::new();
    for i in 0..n {
        let mut y = H;
        for (name, counts) in &r.series {
            let c = counts.get(i).copied().unwrap_or(0);
            if c == 0 {
                continue;
            }
            let h = (c as f64 / max as f64) * (H - 10.0);
            y -= h;
            let time = tr.time(r.from_ms + i as i64 * r.bucket_ms);
            let (outcome, count) = (outcome_text(tr, name), c.to_string());
            let values: [(&str, &str); 3] = [("time", &time), ("outcome", &outcome), ("n", &count)];
            let label = tr.f("stats.bar_label", &values);
            bars.push(view! {
                <rect class=format!("bar-{name}") x=format!("{:.1}", i as f64 * slot + 1.0) y=format!("{y:.1}")
                    width=format!("{:.1}", (slot - 2.0).max(1.0)) height=format!("{h:.1}")><title>{label}</title></rect>
            });
        }
    }
    let (calls, from, to, most) = (grouped(all), tr.time(r.from_ms), tr.time(r.to_ms), grouped(max));
    let values = [
        ("n", calls.as_str()),
        ("from", from.as_str()),
        ("to", to.as_str()),
        ("max", most.as_str()),
    ];
    let summary = tr.f("stats.chart_summary", &values);
    let legend = r
        .series
        .iter()
        .map(|(name, counts)| {
            let sum: u64 = counts.iter().sum();
            view! { <li><span class=format!("swatch bar-{name}") aria-hidden="true"></span>{tr.f("stats.legend", &[("outcome", outcome_text(tr, name).as_str()), ("n", grouped(sum).as_str())])}</li> }
        })
        .collect_view();
    let label = summary.clone();
    view! {
        <svg class="chart" viewBox=format!("0 0 {W} {H}") role="img" aria-label=label preserveAspectRatio="none">
            <title>{summary}</title>
            {bars}
        </svg>
        <p class="chart-axis muted"><span>{tr.time(r.from_ms)}</span><span>{tr.time(r.to_ms)}</span></p>
        <ul class="legend">{legend}</ul>
    }
}
