//! One held call: what the agent wants to do, why it was held, what it would affect,
//! and the decision buttons. A modification is shown as a diff before it is released.
//!
//! The server renders the call; the decision buttons and the break-glass release are
//! islands. A decision (here or by someone else) reloads the page, which then shows the
//! call's new state with the outcome's message.

use crate::api::{error_text_in, get_call, CallDetail, GrantScopeKind, Permission, SessionInfo, Verdict};
use crate::components::break_glass::on_break_glass;
use crate::components::clock::{Tick, Ticker};
use crate::components::diff::Diff;
use crate::components::json::JsonView;
#[cfg(feature = "hydrate")]
use crate::components::refresh;
use crate::components::refresh::{Flash, ReloadOn};
use crate::components::shell::{use_session, Guarded};
use crate::i18n::use_tr;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

#[component]
pub fn Review() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("review.title")/>
        <Guarded path="/queue">
            <ReviewLoader/>
        </Guarded>
    }
}

#[component]
fn ReviewLoader() -> impl IntoView {
    let tr = use_tr();
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").unwrap_or_default());
    let SessionInfo {
        user, csrf_token: csrf, ..
    } = use_session();
    let can_decide = user.as_ref().is_some_and(|u| u.role.can_decide());
    // Revealing is for retyping a secret into a modification: people who decide and may see secrets.
    let can_reveal = user
        .as_ref()
        .is_some_and(|u| u.role.may(Permission::Decide) && u.role.may(Permission::RevealSecrets));
    let detail = Resource::new(id, get_call);
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("review.loading")}</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                match detail.await {
                    Ok(d) => view! { <ReviewView detail=d csrf can_decide can_reveal/> }.into_any(),
                    Err(e) => view! {
                        <section class="card narrow">
                            <h1>{tr.t("review.not_found")}</h1>
                            <p class="error" role="alert">{error_text_in(tr, &e)}</p>
                            <p><a href="/queue">{tr.t("review.back_to_queue")}</a></p>
                        </section>
                    }.into_any(),
                }
            })}}
        </Suspense>
    }
}

#[component]
fn ReviewView(detail: CallDetail, csrf: String, can_decide: bool, can_reveal: bool) -> impl IntoView {
    let tr = use_tr();
    let me = use_session().user;
    let may_break_glass = me.as_ref().is_some_and(|u| u.role.may(Permission::BreakGlass));
    let me = me.map(|u| format!("user:{}", u.username)).unwrap_or_default();
    let item = detail.item.clone();
    let pending = detail.status == "pending";
    let now = detail.now_ms;
    let status_line = if pending {
        None
    } else {
        let comment = detail
            .comment
            .as_deref()
            .map(|c| tr.f("review.comment", &[("comment", c)]))
            .unwrap_or_default();
        Some(tr.f(
            "review.status_line",
            &[
                ("status", tr.word("status", &detail.status)),
                (
                    "who",
                    &tr.who(detail.decided_by.as_deref().unwrap_or(tr.t("review.the_policy"))),
                ),
                ("comment", &comment),
            ],
        ))
    };
    let quorum = (item.approvers_required > 1).then(|| {
        let names: Vec<String> = item.approvals.iter().map(|a| tr.who(a)).collect();
        let so_far = if names.is_empty() {
            tr.t("review.nobody").to_string()
        } else {
            names.join(tr.t("review.list_sep"))
        };
        tr.f(
            "review.quorum",
            &[("n", &item.approvers_required.to_string()), ("names", &so_far)],
        )
    });
    // A modification awaiting its quorum is what a further edit starts from.
    let current = detail
        .final_arguments
        .clone()
        .unwrap_or_else(|| detail.arguments.clone());
    let revealable = can_reveal && !detail.masked.is_empty();
    view! {
        <p class="crumbs"><a href="/queue">{tr.t("review.crumb_queue")}</a></p>
        {pending.then(|| view! {
            <ReloadOn kinds=vec!["call_decided".into(), "call_updated".into()] call=item.id.clone() ask=false/>
        })}
        <article class="review" data-testid="review" data-status=detail.status.clone()>
            <header class="review-head">
                <h1>
                    <span class="qtool">{item.tool.clone()}</span>
                    " "<span class=format!("risk risk-{}", item.risk)>{tr.word("risk", &item.risk).to_string()}</span>
                    {item.destructive.then(|| view! { " "<span class="tag warn">{tr.t("review.destructive")}</span> })}
                </h1>
                <p class="muted">{detail.tool_description.clone()}</p>
                {match (pending, item.expires_at_ms) {
                    (true, Some(at)) => view! {
                        <p class="countdown big">
                            <Ticker tick=Tick::Left at_ms=at now_ms=now testid="countdown".to_string()/>
                        </p>
                    }.into_any(),
                    (true, None) => view! { <p class="countdown big" data-testid="countdown">{tr.t("review.no_expiry")}</p> }.into_any(),
                    (false, _) => view! {
                        <p class="decided-banner" role="status" data-testid="decided-banner">{status_line.clone()}</p>
                    }.into_any(),
                }}
            </header>
            <section class="card why" aria-labelledby="why-h">
                <h2 id="why-h">{tr.t("review.why_heading")}</h2>
                <p>
                    {item.rule.clone().map(|r| view! { <code data-testid="rule">{r}</code>" — " })}
                    <span data-testid="reason">{item.reason.clone()}</span>
                </p>
                {quorum.map(|q| view! { <p data-testid="quorum"><strong>{q}</strong></p> })}
                {(!detail.shadow.is_empty()).then(|| view! {
                    <details><summary>{tr.t("review.shadow")}</summary>
                        <ul>{detail.shadow.iter().map(|s| view! { <li>{s.clone()}</li> }).collect_view()}</ul>
                    </details>
                })}
            </section>
            <section class="card" aria-labelledby="args-h">
                <h2 id="args-h">
                    {if detail.final_arguments.is_some() { tr.t("review.proposed_arguments") } else { tr.t("review.arguments") }}
                </h2>
                <JsonView json=detail.arguments.clone() testid="arguments"/>
                {(!detail.masked.is_empty()).then(|| view! {
                    <p class="muted">{tr.f("review.masked", &[("fields", &detail.masked.join(", "))])}</p>
                })}
                {detail.final_arguments.clone().map(|f| view! {
                    <h3>{if pending { tr.t("review.modified_pending") } else { tr.t("review.modified_released") }}</h3>
                    <JsonView json=f testid="final-arguments"/>
                })}
            </section>
            {detail.impact.clone().map(|i| view! {
                <section class="card" aria-labelledby="impact-h" data-testid="impact">
                    <h2 id="impact-h">{tr.t("review.impact_heading")}</h2>
                    {match (i.files, i.bytes) {
                        (Some(f), Some(b)) => view! {
                            <p><strong>{tr.f(
                                "review.impact",
                                &[
                                    ("files", &tr.number(f as i64)),
                                    ("size", &bytes(b)),
                                    ("more", if i.complete { "" } else { tr.t("review.or_more") }),
                                ],
                            )}</strong></p>
                        }.into_any(),
                        _ => view! { <p class="muted">{tr.t("review.sizes_unknown")}</p> }.into_any(),
                    }}
                    <ul class="paths">{i.paths.into_iter().map(|p| view! { <li><code>{p}</code></li> }).collect_view()}</ul>
                </section>
            })}
            {(pending && can_decide).then(|| view! {
                <Decisions
                    id=item.id.clone()
                    csrf=csrf.clone()
                    tool=item.tool.clone()
                    server=item.server.clone()
                    current
                    grantable=detail.grantable
                    not_grantable=detail.not_grantable.clone()
                    revealable
                />
            })}
            {(pending && may_break_glass).then(|| view! {
                <BreakGlassBox allowed=detail.break_glass id=item.id.clone() csrf=csrf.clone() me/>
            })}
            {(pending && !can_decide).then(|| view! {
                <p class="card muted" data-testid="read-only">{tr.t("review.read_only")}</p>
            })}
            <section class="card" aria-labelledby="agent-h">
                <h2 id="agent-h">{tr.t("review.from_agent")}</h2>
                <dl class="facts">
                    <dt>{tr.t("review.agent")}</dt><dd>{item.agent.clone()}</dd>
                    <dt>{tr.t("review.session")}</dt><dd>{item.session_id.clone()}</dd>
                    {detail.trace_id.clone().map(|t| view! { <dt>{tr.t("review.trace")}</dt><dd>{t}</dd> })}
                    <dt>{tr.t("review.received")}</dt><dd><Ticker tick=Tick::Ago at_ms=item.created_at_ms now_ms=now/></dd>
                    <dt>{tr.t("review.reason_given")}</dt><dd data-testid="agent-reason">{detail.agent_reason.clone().unwrap_or_else(|| "—".into())}</dd>
                </dl>
                {detail.plan.clone().map(|p| view! { <h3>{tr.t("review.plan")}</h3><pre class="plan">{p}</pre> })}
                {detail.context.clone().map(|c| view! { <h3>{tr.t("review.context")}</h3><JsonView json=c/> })}
            </section>
            <section class="card" aria-labelledby="session-h">
                <h2 id="session-h">{tr.t("review.session_calls")}</h2>
                <ol class="session-calls">
                    {detail.session.iter().map(|c| {
                        let current = c.id == detail.item.id;
                        view! {
                            <li class:current=current>
                                <a href=format!("/calls/{}", c.id)>{c.tool.clone()}</a>
                                " "<span class=format!("status status-{}", c.status)>{tr.word("status", &c.status).to_string()}</span>
                            </li>
                        }
                    }).collect_view()}
                </ol>
            </section>
        </article>
    }
}

/// "512 B", "1.5 KiB", "3.2 MiB" (integer arithmetic: float formatting would add ~15 KB
/// to the browser bundle for this one line).
fn bytes(b: u64) -> String {
    let tenths = |unit: u64| {
        let t = (b * 10 + unit / 2) / unit;
        format!("{}.{}", t / 10, t % 10)
    };
    match b {
        0..=1023 => format!("{b} B"),
        1024..=1_048_575 => format!("{} KiB", tenths(1024)),
        _ => format!("{} MiB", tenths(1_048_576)),
    }
}

/// Approve (optionally for the rest of the session), reject with a reason, edit, skip.
/// `current` is what an edit starts from (a pending modification, or the arguments).
#[island]
fn Decisions(
    id: String,
    csrf: String,
    tool: String,
    server: Option<String>,
    current: String,
    grantable: bool,
    not_grantable: Option<String>,
    revealable: bool,
) -> impl IntoView {
    let tr = use_tr();
    let id = StoredValue::new(id);
    let csrf = StoredValue::new(csrf);
    let original = StoredValue::new(current.clone());
    let reason = RwSignal::new(String::new());
    let edited = RwSignal::new(current);
    let editing = RwSignal::new(false);
    let reviewing_diff = RwSignal::new(false);
    let grant_on = RwSignal::new(false);
    let grant_scope = RwSignal::new(GrantScopeKind::Tool);
    let grant_minutes = RwSignal::new(60i64);
    let reason_ref = NodeRef::<leptos::html::Textarea>::new();
    let edit_ref = NodeRef::<leptos::html::Textarea>::new();
    let busy = RwSignal::new(false);
    let revealing = RwSignal::new(false);
    // A refusal stays here (and is kept if the page reloads); a decision reloads the page.
    let refused = RwSignal::new(None::<Flash>);
    let reveal_error = RwSignal::new(None::<String>);

    let submit = move |verdict: Verdict| {
        #[cfg(feature = "hydrate")]
        {
            if busy.get_untracked() {
                return;
            }
            let (text, arguments) = match verdict {
                Verdict::Reject => (reason.get_untracked(), String::new()),
                Verdict::Modify => (reason.get_untracked(), edited.get_untracked()),
                _ => (String::new(), String::new()),
            };
            let grant = (verdict == Verdict::Approve && grant_on.get_untracked()).then(|| grant_scope.get_untracked());
            let minutes = grant_minutes.get_untracked().to_string();
            let (csrf, id) = (csrf.get_value(), id.get_value());
            let mut fields = vec![
                (crate::api::CSRF_FIELD, csrf.as_str()),
                ("id", id.as_str()),
                ("verdict", verdict.as_str()),
                ("text", text.as_str()),
                ("arguments", arguments.as_str()),
            ];
            if let Some(scope) = grant {
                fields.push(("grant_scope", scope.as_str()));
                fields.push(("grant_minutes", minutes.as_str()));
            }
            let body = crate::components::post::encode(&fields);
            busy.set(true);
            let page_busy = refresh::busy();
            leptos::task::spawn_local(async move {
                let _page_busy = page_busy;
                let a = crate::components::post::post_in(tr, "/api/calls/decide", body).await;
                busy.set(false);
                let f = Flash::new("decision-message", a.ok, a.message.unwrap_or_default());
                if a.ok {
                    refresh::reload_with(f);
                } else {
                    refresh::keep(Some(f.clone()));
                    refused.set(Some(f));
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = verdict;
    };
    // On-call staff may see redacted values (audited) to retype a secret into a change.
    let reveal = move || {
        #[cfg(feature = "hydrate")]
        {
            revealing.set(true);
            let body = crate::components::post::encode(&[
                (crate::api::CSRF_FIELD, &csrf.get_value()),
                ("id", &id.get_value()),
            ]);
            leptos::task::spawn_local(async move {
                let a = crate::components::post::post_in(tr, "/api/calls/reveal", body).await;
                revealing.set(false);
                match (a.ok, a.message) {
                    (true, Some(raw)) => {
                        edited.set(raw);
                        editing.set(true);
                        reveal_error.set(None);
                    }
                    (_, m) => reveal_error.set(Some(m.unwrap_or_default())),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (id, csrf);
    };
    #[cfg(feature = "hydrate")]
    {
        use leptos::ev;
        use wasm_bindgen::JsCast;
        let handle = window_event_listener(ev::keydown, move |e: web_sys::KeyboardEvent| {
            let typing = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
                .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
            if typing || e.ctrl_key() || e.meta_key() || e.alt_key() || busy.get_untracked() {
                return;
            }
            match e.key().as_str() {
                "a" => submit(Verdict::Approve),
                "r" => {
                    if let Some(t) = reason_ref.get_untracked() {
                        let _ = t.focus();
                    }
                }
                "e" => {
                    editing.set(true);
                    if let Some(t) = edit_ref.get_untracked() {
                        let _ = t.focus();
                    }
                }
                _ => return,
            }
            e.prevent_default();
        });
        on_cleanup(move || handle.remove());
    }

    let busy = move || busy.get();
    view! {
        <section class="card decide" aria-labelledby="decide-h" data-testid="decisions">
            <h2 id="decide-h">{tr.t("review.decision")}</h2>
            {move || refused.get().map(Flash::view)}
            <div class="actions">
                <button type="button" class="approve" data-testid="approve" disabled=busy on:click=move |_| submit(Verdict::Approve)>
                    {move || if grant_on.get() { tr.t("review.approve_and_grant") } else { tr.t("review.approve") }}
                    <kbd>"a"</kbd>
                </button>
                <button type="button" data-testid="skip" disabled=busy on:click=move |_| submit(Verdict::Skip)>{tr.t("review.skip")}</button>
                <button type="button" data-testid="edit" disabled=busy on:click=move |_| editing.update(|e| *e = !*e)>
                    {tr.t("review.edit")}<kbd>"e"</kbd>
                </button>
            </div>
            {grantable.then(|| view! {
                <fieldset class="grant">
                    <legend>{tr.t("review.approve_all")}</legend>
                    <label class="check">
                        <input type="checkbox" data-testid="grant-on" prop:checked=move || grant_on.get()
                            on:change=move |e| grant_on.set(event_target_checked(&e))/>
                        {tr.t("review.grant_on")}
                    </label>
                    <label for="grant-scope">{tr.t("review.grant_scope")}</label>
                    <select id="grant-scope" data-testid="grant-scope" on:change=move |e| grant_scope.set(
                        if event_target_value(&e) == "server" { GrantScopeKind::Server } else { GrantScopeKind::Tool })>
                        <option value="tool">{tr.f("review.scope_tool", &[("tool", &tool)])}</option>
                        {server.clone().map(|s| view! { <option value="server">{tr.f("review.scope_server", &[("server", &s)])}</option> })}
                    </select>
                    <label for="grant-minutes">{tr.t("review.grant_duration")}</label>
                    <select id="grant-minutes" data-testid="grant-minutes" on:change=move |e| grant_minutes.set(event_target_value(&e).parse().unwrap_or(60))>
                        <option value="15">{tr.t("review.minutes_15")}</option>
                        <option value="60" selected>{tr.t("review.hour_1")}</option>
                        <option value="240">{tr.t("review.hours_4")}</option>
                        <option value="480">{tr.t("review.hours_8")}</option>
                    </select>
                    <p class="muted">{tr.t("review.grant_note")}</p>
                </fieldset>
            })}
            {(!grantable).then(|| not_grantable.map(|why| view! {
                <p class="muted" data-testid="no-grant">{tr.f("review.no_grant", &[("why", &why)])}</p>
            }))}
            <div class="reject-box">
                <label for="reject-reason">{tr.t("review.reject_reason")}<kbd>"r"</kbd></label>
                <textarea id="reject-reason" data-testid="reject-reason" node_ref=reason_ref rows="2"
                    prop:value=move || reason.get() on:input=move |e| reason.set(event_target_value(&e))></textarea>
                <button type="button" class="reject" data-testid="reject"
                    disabled=move || busy() || reason.with(|r| r.trim().is_empty())
                    on:click=move |_| submit(Verdict::Reject)>{tr.t("review.reject")}</button>
            </div>
            <Show when=move || editing.get()>
                <div class="edit-box">
                    <label for="edit-args">{tr.t("review.edit_label")}</label>
                    <textarea id="edit-args" class="code" data-testid="edit-arguments" node_ref=edit_ref rows="10" spellcheck="false"
                        prop:value=move || edited.get()
                        on:input=move |e| { edited.set(event_target_value(&e)); reviewing_diff.set(false); }></textarea>
                    <p class="muted">{tr.t("review.edit_redacted_note")}</p>
                    {revealable.then(|| view! {
                        <button type="button" data-testid="reveal" disabled=move || revealing.get()
                            on:click=move |_| reveal()>
                            {tr.t("review.reveal")}
                        </button>
                        {move || reveal_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                    })}
                    <button type="button" data-testid="review-changes" on:click=move |_| reviewing_diff.set(true)>{tr.t("review.review_changes")}</button>
                    <Show when=move || reviewing_diff.get()>
                        <Diff before=original.get_value() after=edited.get()/>
                        <button type="button" class="approve" data-testid="release-modified" disabled=busy
                            on:click=move |_| submit(Verdict::Modify)>{tr.t("review.release_modified")}</button>
                    </Show>
                </div>
            </Show>
        </section>
    }
}

/// On-call staff: release this call under break-glass, or why they cannot. Follows the
/// break-glass board live (started elsewhere, or ended by time).
#[island]
fn BreakGlassBox(allowed: bool, id: String, csrf: String, me: String) -> impl IntoView {
    let tr = use_tr();
    let on = move || on_break_glass(&me);
    let (id, csrf) = (StoredValue::new(id), StoredValue::new(csrf));
    let busy = RwSignal::new(false);
    let refused = RwSignal::new(None::<Flash>);
    let release = move || {
        #[cfg(feature = "hydrate")]
        {
            busy.set(true);
            let body = crate::components::post::encode(&[
                (crate::api::CSRF_FIELD, &csrf.get_value()),
                ("id", &id.get_value()),
            ]);
            let page_busy = refresh::busy();
            leptos::task::spawn_local(async move {
                let _page_busy = page_busy;
                let a = crate::components::post::post_in(tr, "/api/oncall/override", body).await;
                busy.set(false);
                let f = Flash::new("override-message", a.ok, a.message.unwrap_or_default());
                if a.ok {
                    refresh::reload_with(f);
                } else {
                    refresh::keep(Some(f.clone()));
                    refused.set(Some(f));
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (id, csrf);
    };
    view! {
        <section class="card" aria-labelledby="bg-h" data-testid="break-glass-box">
            <h2 id="bg-h">{tr.t("review.bg_heading")}</h2>
            {move || refused.get().map(Flash::view)}
            {if !allowed {
                view! { <p class="muted">{tr.t("review.bg_not_allowed")}</p> }.into_any()
            } else {
                view! {
                    <Show when=on.clone() fallback=move || view! {
                        <p class="muted">
                            {tr.t("review.bg_start_before")}
                            <a href="/oncall">{tr.t("review.bg_start_link")}</a>
                            {tr.t("review.bg_start_after")}
                        </p>
                    }>
                        <p class="muted">{tr.t("review.bg_release_help")}</p>
                        <button type="button" class="reject" data-testid="override" disabled=move || busy.get()
                            on:click=move |_| release()>
                            {tr.t("review.bg_release")}
                        </button>
                    </Show>
                }.into_any()
            }}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(10 * 1024 * 1024 + 200 * 1024), "10.2 MiB");
        assert_eq!(bytes(1_048_575), "1024.0 KiB");
    }
}
