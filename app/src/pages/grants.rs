//! Approve-all grants: which are in force, revoking them, and which ended recently.
//! Server-rendered; the page reloads when a grant is made or ends anywhere.

use crate::api::{error_text_in, list_grants, GrantView, SessionInfo, CSRF_FIELD};
use crate::components::clock::{Tick, Ticker};
use crate::components::post::PostForm;
use crate::components::refresh::ReloadOn;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::use_tr;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Grants() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("grants.title")/>
        <Guarded path="/grants">
            <h1>{tr.t("grants.heading")}</h1>
            <p class="muted">{tr.t("grants.intro")}</p>
            <ReloadOn kinds=vec!["grants_changed".into()] ask=true/>
            <GrantsBody/>
        </Guarded>
    }
}

#[component]
fn GrantsBody() -> impl IntoView {
    let tr = use_tr();
    let SessionInfo { user, csrf_token, .. } = use_session();
    let can_revoke = user.is_some_and(|u| u.role.can_decide());
    let grants = Resource::new(|| (), |_| list_grants());
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("grants.loading")}</p> }>
            {move || {
                let csrf = csrf_token.clone();
                Suspend::new(async move {
                match grants.await {
                    Ok(list) => {
                        let now = list.now_ms;
                        view! {
                            <section class="card" aria-labelledby="active-h">
                                <h2 id="active-h">{tr.t("grants.in_force")}</h2>
                                {if list.active.is_empty() {
                                    view! { <p class="muted" data-testid="no-grants">{tr.t("grants.none")}</p> }.into_any()
                                } else {
                                    view! { <GrantTable grants=list.active csrf=can_revoke.then_some(csrf) now/> }.into_any()
                                }}
                            </section>
                            <section class="card" aria-labelledby="ended-h">
                                <h2 id="ended-h">{tr.t("grants.ended")}</h2>
                                <GrantTable grants=list.ended csrf=None now/>
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}}
        </Suspense>
    }
}

/// Grants as a table; with a CSRF token, each row can be revoked.
#[component]
fn GrantTable(grants: Vec<GrantView>, csrf: Option<String>, now: i64) -> impl IntoView {
    let tr = use_tr();
    let rows = grants
        .into_iter()
        .map(|g| {
            let ended = g.revoked_at_ms.map(|_| {
                let reason = g
                    .revoke_reason
                    .as_deref()
                    .map(|r| tr.f("grants.revoke_reason", &[("reason", r)]))
                    .unwrap_or_default();
                tr.f(
                    "grants.revoked_by",
                    &[("who", &tr.who(g.revoked_by.as_deref().unwrap_or("?"))), ("reason", &reason)],
                )
            });
            let id = g.id.clone();
            view! {
                <tr data-grant=g.id.clone() data-testid="grant-row">
                    <td><strong>{g.name.clone()}</strong><br/><span class="muted">{if g.scope == "server" { tr.t("grants.scope_server") } else { tr.t("grants.scope_tool") }}</span></td>
                    <td>{format!("{} · {}", g.agent, g.session_id)}</td>
                    <td>{tr.who(&g.created_by)}</td>
                    <td>{match ended {
                        Some(t) => t.into_any(),
                        None => view! { <Ticker tick=Tick::EndsIn at_ms=g.expires_at_ms now_ms=now/> }.into_any(),
                    }}</td>
                    <td>{csrf.clone().map(|csrf| view! {
                        <PostForm action="/api/grants/revoke".to_string() class="inline".to_string()
                            done=tr.t("grants.revoked").to_string() notice="grants-notice".to_string()>
                            <input type="hidden" name=CSRF_FIELD value=csrf/>
                            <input type="hidden" name="id" value=id/>
                            <button type="submit" class="reject" data-testid="revoke">{tr.t("grants.revoke")}</button>
                        </PostForm>
                    })}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="table">
            <thead><tr>
                <th scope="col">{tr.t("grants.col_allows")}</th>
                <th scope="col">{tr.t("grants.col_agent_session")}</th>
                <th scope="col">{tr.t("grants.col_granted_by")}</th>
                <th scope="col">{tr.t("grants.col_until")}</th>
                <th scope="col"><span class="sr-only">{tr.t("grants.col_action")}</span></th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
