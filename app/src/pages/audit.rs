//! Audit: the chain's length and its latest events. Search, filters, per-session traces
//! and export come with the auditor's desk; the page says so rather than pretending
//! there is nothing to show. Event data is not shown here (only who, what and which call).

use crate::api::who;
use crate::api::{error_text, get_audit_latest, AuditSummary};
use crate::components::clock::span;
use crate::components::shell::Guarded;
use crate::pages::queue::grouped;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Audit() -> impl IntoView {
    view! {
        <Title text="Audit"/>
        <Guarded path="/audit">
            <h1>"Audit"</h1>
            <p class="card muted" data-testid="audit-coming">
                "Coming next on this page: full-text search with filters, per-session traces, "
                "export as JSONL and CSV, and verification of the hash chain."
            </p>
            <AuditLoader/>
        </Guarded>
    }
}

/// The resource lives inside the guard: a page someone may not open starts no query.
#[component]
fn AuditLoader() -> impl IntoView {
    let summary = Resource::new(|| (), |_| get_audit_latest());
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Reading the audit trail…"</p> }>
            {move || Suspend::new(async move {
                match summary.await {
                    Ok(s) => view! { <AuditView s/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn AuditView(s: AuditSummary) -> impl IntoView {
    let now = s.now_ms;
    view! {
        <section class="card" aria-labelledby="latest-h" data-testid="audit-latest">
            <h2 id="latest-h">
                {format!("The chain holds {} events; the latest {}:", grouped(s.events), s.latest.len())}
            </h2>
            <table class="table">
                <thead><tr>
                    <th scope="col">"#"</th><th scope="col">"When"</th><th scope="col">"Event"</th>
                    <th scope="col">"By"</th><th scope="col">"Call · session"</th>
                </tr></thead>
                <tbody>
                    {s.latest.into_iter().map(|e| view! {
                        <tr data-testid="audit-row">
                            <td class="num">{e.seq}</td>
                            <td>{format!("{} ago", span(now - e.at_ms))}</td>
                            <td><code>{e.kind}</code></td>
                            <td>{who(&e.actor)}</td>
                            <td>
                                {e.call_id.map(|c| view! { <a href=format!("/calls/{c}")>{c.clone()}</a> })}
                                {e.session_id.map(|s| view! { <span class="muted">{format!(" · {s}")}</span> })}
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}
