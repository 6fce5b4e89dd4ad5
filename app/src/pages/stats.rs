//! Stats: true counts over what is recorded, and what rules in shadow mode would have
//! done. Charts over time, approval latency and reviewer load come with the rest of the
//! policy-lifecycle work; the page says so rather than pretending there is nothing to show.

use crate::api::{
    error_text, get_shadow_report, get_stats, get_stats_range, grouped, who, Facet, ShadowReport, StatsRange,
    StatsSummary,
};
use crate::components::clock::{span, utc};
use crate::components::shell::Guarded;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn Stats() -> impl IntoView {
    view! {
        <Title text="Stats"/>
        <Guarded path="/stats">
            <h1>"Stats"</h1>
            <RangeForm/>
            <StatsLoader/>
            <RangeSection/>
            <ShadowSection/>
            <p class="card muted" data-testid="stats-coming">
                "Coming next on this page: the busiest blocked layers per hour, and approval latency per tool."
            </p>
        </Guarded>
    }
}

/// The resource lives inside the guard: a page someone may not open starts no query.
#[component]
fn StatsLoader() -> impl IntoView {
    let summary = Resource::new(|| (), |_| get_stats());
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Counting…"</p> }>
            {move || Suspend::new(async move {
                match summary.await {
                    Ok(s) => view! { <StatsView s/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn StatsView(s: StatsSummary) -> impl IntoView {
    if s.calls == 0 {
        return view! {
            <section class="card" data-testid="stats-summary">
                <p>"No tool call has been recorded yet. Once an agent sends one, its decision is counted here."</p>
            </section>
        }
        .into_any();
    }
    let covers = match s.oldest_in_window_ms {
        Some(t) => format!(" (the last {})", span(s.now_ms - t)),
        None => String::new(),
    };
    view! {
        <section class="card" data-testid="stats-summary">
            <p class="big-numbers">
                <span><strong data-testid="stats-calls">{grouped(s.calls)}</strong>" calls recorded"</span>
                <span><strong data-testid="stats-waiting">{grouped(s.waiting)}</strong>" waiting for a reviewer now"</span>
            </p>
        </section>
        <section class="card" aria-labelledby="outcomes-h">
            <h2 id="outcomes-h">{format!("Outcomes of the latest {} calls{covers}", grouped(s.window))}</h2>
            <Bars facets=s.statuses total=s.window testid="stats-outcomes"/>
        </section>
        {(!s.layers.is_empty()).then(|| view! {
            <section class="card" aria-labelledby="layers-h">
                <h2 id="layers-h">"Which layer denied them"</h2>
                <Bars facets=s.layers.clone() total=s.layers.iter().map(|f| f.count).sum() testid="stats-layers"/>
            </section>
        })}
        <section class="card" aria-labelledby="tools-h">
            <h2 id="tools-h">"Most asked-for tools"</h2>
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
    view! {
        <section class="card" aria-labelledby="shadow-h" data-testid="shadow-report">
            <h2 id="shadow-h">"Shadow rules"</h2>
            <p class="muted">"Rules, guards and budgets marked shadow = true never change a decision; here is what they would have done, to promote them with confidence."</p>
            <Suspense fallback=|| view! { <p class="muted">"Reading findings…"</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Ok(r) => view! { <ShadowTable r/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn ShadowTable(r: ShadowReport) -> impl IntoView {
    if r.rules.is_empty() {
        return view! { <p data-testid="shadow-none">{format!("No shadow rule fired since {}.", utc(r.since_ms))}</p> }
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
                .map(|e| view! { <li><a href=format!("/calls/{}", e.call_id)>{e.tool.clone()}</a>{format!(" · {} · {} · {}", e.agent, e.status, utc(e.at_ms))}</li> })
                .collect_view();
            view! {
                <tr data-rule=rule.rule.clone()>
                    <td><code>{rule.rule.clone()}</code><br/><span class="muted">{rule.layer.clone()}</span></td>
                    <td>{format!("would be {}", rule.would)}</td>
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
            <thead><tr><th scope="col">"Rule"</th><th scope="col">"Effect"</th><th scope="col">"Fired"</th><th scope="col">"Tools"</th><th scope="col">"Agents"</th><th scope="col">"Latest calls"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        {r.truncated.then(|| view! { <p class="muted">"Counts cover the newest 200,000 findings of the period."</p> })}
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
    let options = [("24h", "Last 24 hours"), ("7d", "Last 7 days"), ("30d", "Last 30 days")];
    view! {
        <form method="get" action="/stats" class="inline range-form" data-testid="range-form">
            <label for="stats-range">"Time range"</label>
            <select id="stats-range" name="range">
                {options.into_iter().map(|(v, l)| view! { <option value=v selected=move || range() == v>{l}</option> }).collect_view()}
            </select>
            <button type="submit">"Show"</button>
        </form>
    }
}

#[component]
fn RangeSection() -> impl IntoView {
    let range = use_range();
    let data = Resource::new(range, get_stats_range);
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Counting…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(r) => view! { <RangeView r/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn ms_text(ms: Option<i64>) -> String {
    ms.map_or_else(
        || "–".to_string(),
        |m| if m < 1000 { format!("{m} ms") } else { span(m) },
    )
}

#[component]
fn RangeView(r: StatsRange) -> impl IntoView {
    let bucket = span(r.bucket_ms);
    let reviewers = r
        .reviewers
        .iter()
        .map(|l| view! { <tr><th scope="row">{who(&l.reviewer)}</th><td class="num">{grouped(l.decisions)}</td><td class="num">{ms_text(Some(l.median_ms))}</td></tr> })
        .collect_view();
    let no_reviews = r.reviewers.is_empty();
    view! {
        <section class="card" aria-labelledby="per-bucket-h" data-testid="stats-chart">
            <h2 id="per-bucket-h">{format!("Calls per {bucket} by decision")}</h2>
            <DecisionChart r=r.clone()/>
        </section>
        <section class="card" aria-labelledby="depth-h" data-testid="stats-depth">
            <h2 id="depth-h">{format!("Held calls waiting, at the end of each {bucket}")}</h2>
            <DepthChart r=r.clone()/>
        </section>
        <section class="card" aria-labelledby="people-h" data-testid="stats-people">
            <h2 id="people-h">"People"</h2>
            <p class="big-numbers">
                <span><strong>{ms_text(r.wait_p50_ms)}</strong>" median wait for a decision"</span>
                <span><strong>{ms_text(r.wait_p90_ms)}</strong>" p90"</span>
                <span><strong>{ms_text(r.wait_p99_ms)}</strong>" p99"</span>
            </p>
            <p class="big-numbers">
                <span><strong data-testid="stats-grants">{grouped(r.grants)}</strong>" grants"</span>
                <span><strong data-testid="stats-overrides">{grouped(r.overrides)}</strong>" break-glass overrides"</span>
                <span><strong data-testid="stats-expiries">{grouped(r.expiries)}</strong>" expired unanswered"</span>
            </p>
            {if no_reviews {
                view! { <p class="muted">"Nobody decided a held call in this range."</p> }.into_any()
            } else {
                view! {
                    <table class="table" data-testid="stats-reviewers">
                        <thead><tr><th scope="col">"Reviewer"</th><th scope="col">"Decisions"</th><th scope="col">"Median time to decide"</th></tr></thead>
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
                    <h2 id="blocked-h">"Most denied tools and rules"</h2>
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
    let summary = format!(
        "at most {} held calls waiting; {} at the end of the range",
        grouped(peak),
        grouped(now)
    );
    let label = summary.clone();
    view! {
        <svg class="chart depth" viewBox=format!("0 0 {W} {H}") role="img" aria-label=label preserveAspectRatio="none">
            <title>{summary.clone()}</title>
            <polyline class="depth-line" points=points></polyline>
        </svg>
        <p class="chart-axis muted"><span>{utc(r.from_ms)}</span><span>{summary}</span><span>{utc(r.to_ms)}</span></p>
    }
}

/// Stacked bars per bucket, drawn as SVG on the server (no script, no chart library, no
/// inline style: colours come from the stylesheet by class).
#[component]
fn DecisionChart(r: StatsRange) -> impl IntoView {
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
            let label = format!("{} {}: {}", utc(r.from_ms + i as i64 * r.bucket_ms), name, c);
            bars.push(view! {
                <rect class=format!("bar-{name}") x=format!("{:.1}", i as f64 * slot + 1.0) y=format!("{y:.1}")
                    width=format!("{:.1}", (slot - 2.0).max(1.0)) height=format!("{h:.1}")><title>{label}</title></rect>
            });
        }
    }
    let summary = format!(
        "{} calls from {} to {}; at most {} in one bucket",
        grouped(all),
        utc(r.from_ms),
        utc(r.to_ms),
        grouped(max)
    );
    let legend = r
        .series
        .iter()
        .map(|(name, counts)| {
            let sum: u64 = counts.iter().sum();
            view! { <li><span class=format!("swatch bar-{name}") aria-hidden="true"></span>{format!("{name} {}", grouped(sum))}</li> }
        })
        .collect_view();
    let label = summary.clone();
    view! {
        <svg class="chart" viewBox=format!("0 0 {W} {H}") role="img" aria-label=label preserveAspectRatio="none">
            <title>{summary}</title>
            {bars}
        </svg>
        <p class="chart-axis muted"><span>{utc(r.from_ms)}</span><span>{utc(r.to_ms)}</span></p>
        <ul class="legend">{legend}</ul>
    }
}
