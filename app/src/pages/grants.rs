//! Approve-all grants: which are in force, revoking them, and which ended recently.
//! Server-rendered; the page reloads when a grant is made or ends anywhere.

use crate::api::who;
use crate::api::{error_text, list_grants, GrantView, SessionInfo, CSRF_FIELD};
use crate::components::clock::{Tick, Ticker};
use crate::components::post::PostForm;
use crate::components::refresh::ReloadOn;
use crate::components::shell::{use_session, Guarded};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Grants() -> impl IntoView {
    view! {
        <Title text="Grants"/>
        <Guarded path="/grants">
            <h1>"Grants"</h1>
            <p class="muted">"Approve-all grants let an agent session run a tool (or every tool of an MCP server) without asking, until they expire or are revoked. They never pass the guards or budgets."</p>
            <ReloadOn kinds=vec!["grants_changed".into()] ask=true/>
            <GrantsBody/>
        </Guarded>
    }
}

#[component]
fn GrantsBody() -> impl IntoView {
    let SessionInfo { user, csrf_token, .. } = use_session();
    let can_revoke = user.is_some_and(|u| u.role.can_decide());
    let grants = Resource::new(|| (), |_| list_grants());
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let csrf = csrf_token.clone();
                Suspend::new(async move {
                match grants.await {
                    Ok(list) => {
                        let now = list.now_ms;
                        view! {
                            <section class="card" aria-labelledby="active-h">
                                <h2 id="active-h">"In force"</h2>
                                {if list.active.is_empty() {
                                    view! { <p class="muted" data-testid="no-grants">"No active grants."</p> }.into_any()
                                } else {
                                    view! { <GrantTable grants=list.active csrf=can_revoke.then_some(csrf) now/> }.into_any()
                                }}
                            </section>
                            <section class="card" aria-labelledby="ended-h">
                                <h2 id="ended-h">"Ended recently"</h2>
                                <GrantTable grants=list.ended csrf=None now/>
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}}
        </Suspense>
    }
}

/// Grants as a table; with a CSRF token, each row can be revoked.
#[component]
fn GrantTable(grants: Vec<GrantView>, csrf: Option<String>, now: i64) -> impl IntoView {
    let rows = grants
        .into_iter()
        .map(|g| {
            let ended = g.revoked_at_ms.map(|_| {
                format!(
                    "revoked by {}{}",
                    who(g.revoked_by.as_deref().unwrap_or("?")),
                    g.revoke_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
                )
            });
            let id = g.id.clone();
            view! {
                <tr data-grant=g.id.clone() data-testid="grant-row">
                    <td><strong>{g.name.clone()}</strong><br/><span class="muted">{if g.scope == "server" { "MCP server" } else { "tool" }}</span></td>
                    <td>{format!("{} · {}", g.agent, g.session_id)}</td>
                    <td>{who(&g.created_by)}</td>
                    <td>{match ended {
                        Some(t) => t.into_any(),
                        None => view! { <Ticker tick=Tick::EndsIn at_ms=g.expires_at_ms now_ms=now/> }.into_any(),
                    }}</td>
                    <td>{csrf.clone().map(|csrf| view! {
                        <PostForm action="/api/grants/revoke".to_string() class="inline".to_string()
                            done="Grant revoked.".to_string() notice="grants-notice".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf/>
                            <input type="hidden" name="id" value=id/>
                            <button type="submit" class="reject" data-testid="revoke">"Revoke"</button>
                        </PostForm>
                    })}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead><tr><th scope="col">"Allows"</th><th scope="col">"Agent · session"</th><th scope="col">"Granted by"</th><th scope="col">"Until"</th><th scope="col"><span class="sr-only">"Action"</span></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
