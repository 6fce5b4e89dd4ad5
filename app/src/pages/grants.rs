//! Approve-all grants: which are in force, revoking them, and which ended recently.

use crate::api::who;
use crate::api::{error_text, list_grants, GrantView, LiveEvent, RevokeGrant, SessionInfo, CSRF_FIELD};
use crate::components::clock::{span, start_clock, Clock};
use crate::components::live::on_live_event;
use crate::components::shell::{use_session, Guarded};
use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Grants() -> impl IntoView {
    view! {
        <Title text="Grants"/>
        <Guarded path="/grants">
            <h1>"Grants"</h1>
            <p class="muted">"Approve-all grants let an agent session run a tool (or every tool of an MCP server) without asking, until they expire or are revoked. They never pass the guards or budgets."</p>
            <GrantsBody/>
        </Guarded>
    }
}

#[component]
fn GrantsBody() -> impl IntoView {
    let SessionInfo { user, csrf_token, .. } = use_session();
    let csrf = StoredValue::new(csrf_token);
    let can_revoke = user.is_some_and(|u| u.role.can_decide());
    let revoke = ServerAction::<RevokeGrant>::new();
    let changed = RwSignal::new(0u32);
    on_live_event(move |e| {
        if matches!(e.event, LiveEvent::GrantsChanged(_)) {
            changed.update(|n| *n += 1);
        }
    });
    let grants = Resource::new(move || (revoke.version().get(), changed.get()), |_| list_grants());
    view! {
            {move || revoke.value().get().map(|r| match r {
                Ok(()) => view! { <p class="notice" role="status" data-testid="grants-notice">"Grant revoked."</p> }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-testid="grants-notice">{error_text(&e)}</p> }.into_any(),
            })}
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || {
                    let csrf = csrf.get_value();
                    Suspend::new(async move {
                    match grants.await {
                        Ok(list) => {
                            let clock = start_clock(list.now_ms);
                            view! {
                                <section class="card" aria-labelledby="active-h">
                                    <h2 id="active-h">"In force"</h2>
                                    {if list.active.is_empty() {
                                        view! { <p class="muted" data-testid="no-grants">"No active grants."</p> }.into_any()
                                    } else {
                                        view! { <GrantTable grants=list.active csrf revoke=can_revoke.then_some(revoke) clock/> }.into_any()
                                    }}
                                </section>
                                <section class="card" aria-labelledby="ended-h">
                                    <h2 id="ended-h">"Ended recently"</h2>
                                    <GrantTable grants=list.ended csrf=String::new() revoke=None clock/>
                                </section>
                            }.into_any()
                        }
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}}
            </Transition>
    }
}

#[component]
fn GrantTable(
    grants: Vec<GrantView>,
    csrf: String,
    revoke: Option<ServerAction<RevokeGrant>>,
    clock: Clock,
) -> impl IntoView {
    let rows = grants
        .into_iter()
        .map(|g| {
            let ends = g.expires_at_ms;
            let ended = g.revoked_at_ms.map(|_| {
                format!(
                    "revoked by {}{}",
                    who(g.revoked_by.as_deref().unwrap_or("?")),
                    g.revoke_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
                )
            });
            let csrf = csrf.clone();
            let id = g.id.clone();
            view! {
                <tr data-grant=g.id.clone() data-testid="grant-row">
                    <td><strong>{g.name.clone()}</strong><br/><span class="muted">{if g.scope == "server" { "MCP server" } else { "tool" }}</span></td>
                    <td>{format!("{} · {}", g.agent, g.session_id)}</td>
                    <td>{who(&g.created_by)}</td>
                    <td>{match ended {
                        Some(t) => t.into_any(),
                        None => (move || {
                            let left = ends - clock.now_ms.get();
                            if left > 0 { format!("ends in {}", span(left)) } else { "expired".to_string() }
                        }).into_any(),
                    }}</td>
                    <td>{revoke.map(|a| view! {
                        <ActionForm action=a attr:class="inline">
                            <input type="hidden" name=CSRF_FIELD value=csrf/>
                            <input type="hidden" name="id" value=id/>
                            <button type="submit" class="reject" data-testid="revoke">"Revoke"</button>
                        </ActionForm>
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
