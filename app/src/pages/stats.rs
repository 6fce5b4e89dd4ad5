//! Stats: true counts over what is recorded. Charts over time, approval latency and
//! reviewer load come with the policy-lifecycle work; the page says so rather than
//! pretending there is nothing to show.

use crate::api::{error_text, get_stats, Facet, StatsSummary};
use crate::components::clock::span;
use crate::components::shell::Guarded;
use crate::pages::queue::grouped;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Stats() -> impl IntoView {
    view! {
        <Title text="Stats"/>
        <Guarded path="/stats">
            <h1>"Stats"</h1>
            <StatsLoader/>
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
