//! Stats: true counts over what is recorded, and what rules in shadow mode would have
//! done. Charts over time, approval latency and reviewer load come with the rest of the
//! policy-lifecycle work; the page says so rather than pretending there is nothing to show.

use crate::api::{error_text, get_shadow_report, get_stats, Facet, ShadowReport, StatsSummary};
use crate::components::clock::{span, utc};
use crate::components::shell::Guarded;
use crate::pages::queue::grouped;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn Stats() -> impl IntoView {
    view! {
        <Title text="Stats"/>
        <Guarded path="/stats">
            <h1>"Stats"</h1>
            <StatsLoader/>
            <ShadowSection/>
            <p class="card muted" data-testid="stats-coming">
                "Coming next on this page: calls per hour by decision, time ranges, approval latency, "
                "queue depth over time, reviewer load, grants, overrides and expiries as charts."
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
    let query = use_query_map();
    let since = move || query.with(|q| q.get("since").unwrap_or_else(|| "7d".into()));
    let report = Resource::new(since, |s| get_shadow_report(s, String::new()));
    let options = [("24h", "last 24 hours"), ("7d", "last 7 days"), ("30d", "last 30 days")];
    view! {
        <section class="card" aria-labelledby="shadow-h" data-testid="shadow-report">
            <h2 id="shadow-h">"Shadow rules"</h2>
            <p class="muted">"Rules, guards and budgets marked shadow = true never change a decision; here is what they would have done, to promote them with confidence."</p>
            <form method="get" action="/stats" class="inline">
                <label for="shadow-since">"Period"</label>
                <select id="shadow-since" name="since">
                    {options.into_iter().map(|(v, l)| view! { <option value=v selected=move || since() == v>{l}</option> }).collect_view()}
                </select>
                <button type="submit">"Show"</button>
            </form>
            <Transition fallback=|| view! { <p class="muted">"Reading findings…"</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Ok(r) => view! { <ShadowTable r/> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
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
