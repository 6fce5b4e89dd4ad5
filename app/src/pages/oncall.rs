//! On-call: start (or end) break-glass, and the post-hoc review of every call released
//! under it. Everyone signed in may read the overrides; reviewers, on-call and admins
//! acknowledge those of others; only on-call staff start break-glass. Server-rendered;
//! the page reloads when an override is recorded or reviewed, or break-glass changes.

use crate::api::{error_text_in, list_overrides, OverrideView, Permission, CSRF_FIELD};
use crate::components::post::PostForm;
use crate::components::refresh::ReloadOn;
use crate::components::shell::{use_session, Guarded};
use crate::i18n::{tr_key, use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn OnCall() -> impl IntoView {
    let tr = use_tr();
    view! {
        <Title text=tr.t("oncall.title")/>
        <Guarded path="/oncall">
            <h1>{tr.t("oncall.title")}</h1>
            <ReloadOn kinds=vec!["overrides_changed".into(), "break_glass".into()] ask=true/>
            <BreakGlassPanel/>
            <Overrides/>
        </Guarded>
    }
}

#[component]
fn BreakGlassPanel() -> impl IntoView {
    let tr = use_tr();
    let session = use_session();
    let Some(user) = session.user.clone() else {
        return ().into_any();
    };
    if !user.role.may(Permission::BreakGlass) {
        return view! {
            <section class="card" aria-labelledby="bg-h">
                <h2 id="bg-h">{tr.t("oncall.break_glass")}</h2>
                <p class="muted">{tr.t("oncall.break_glass_intro")}</p>
            </section>
        }
        .into_any();
    }
    let me = format!("user:{}", user.username);
    let mine = session.break_glass.iter().find(|v| v.user == me).cloned();
    let on = mine.is_some();
    view! {
        <section class="card" aria-labelledby="bg-h">
            <h2 id="bg-h">{tr.t("oncall.break_glass")}</h2>
            {mine.map(|b| view! {
                <p class="notice" data-testid="my-break-glass">{tr.f("oncall.you_are_on", &[
                    ("until", &tr.time(b.ends_at_ms)),
                    ("justification", &b.justification),
                ])}</p>
            })}
            <p class="muted">{tr.t("oncall.break_glass_help")}</p>
            <PostForm action="/api/oncall/start".to_string() class="oncall-form".to_string() testid="break-glass-form".to_string()
                done=tr.t("oncall.started").to_string() notice="break-glass-message".to_string()>
                <input type="hidden" name=CSRF_FIELD value=session.csrf_token.clone()/>
                <label for="bg-why">{if on { tr.t("oncall.new_justification") } else { tr.t("oncall.justification") }}</label>
                <textarea id="bg-why" name="justification" rows="3" required minlength="10" maxlength="2000"
                    placeholder=tr.t("oncall.justification_placeholder")></textarea>
                <label for="bg-minutes">{tr.t("oncall.minutes")}</label>
                <input id="bg-minutes" name="minutes" type="number" min="1" value="30" required/>
                <label for="bg-password">{tr.t("oncall.password")}</label>
                <input id="bg-password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit" class="reject" data-testid="start-break-glass">{tr.t("oncall.start")}</button>
            </PostForm>
        </section>
    }
    .into_any()
}

#[component]
fn Overrides() -> impl IntoView {
    let tr = use_tr();
    let session = use_session();
    let me = session
        .user
        .as_ref()
        .map(|u| format!("user:{}", u.username))
        .unwrap_or_default();
    let can_ack = session
        .user
        .as_ref()
        .is_some_and(|u| u.role.may(Permission::AcknowledgeOverrides));
    let csrf = StoredValue::new(session.csrf_token.clone());
    let me = StoredValue::new(me);
    let list = Resource::new(|| (), |_| list_overrides());
    view! {
        <Suspense fallback=move || view! { <p class="muted">{tr.t("oncall.loading")}</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(l) => {
                        let awaiting = l.awaiting_total;
                        let heading = match awaiting {
                            0 => tr.t("oncall.awaiting_none").to_string(),
                            1 => tr.t("oncall.awaiting_one").to_string(),
                            n => tr.f("oncall.awaiting_many", &[("n", &n.to_string())]),
                        };
                        let pending = l.awaiting.into_iter().map(|o| {
                            let own = o.by == me.get_value();
                            let csrf = (can_ack && !own).then(|| csrf.get_value());
                            view! { <OverrideItem o csrf own tr/> }
                        }).collect_view();
                        let none_reviewed = l.acknowledged.is_empty();
                        let done = l.acknowledged.into_iter().map(|o| view! { <OverrideItem o csrf=None own=false tr/> }).collect_view();
                        view! {
                            <section class="card" aria-labelledby="ov-h" data-testid="overrides-awaiting">
                                <h2 id="ov-h">{heading}</h2>
                                <p class="muted">{tr.t("oncall.awaiting_help")}</p>
                                {pending}
                            </section>
                            <section class="card" aria-labelledby="ovd-h" data-testid="overrides-reviewed">
                                <h2 id="ovd-h">{tr.t("oncall.reviewed")}</h2>
                                {none_reviewed.then(|| view! { <p class="muted">{tr.t("oncall.reviewed_none")}</p> })}
                                {done}
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text_in(tr, &e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// One override; with a CSRF token, the forms to agree with it or flag it.
#[component]
fn OverrideItem(o: OverrideView, csrf: Option<String>, own: bool, tr: Tr) -> impl IntoView {
    let review = match (&o.verdict, &o.acknowledged_by) {
        (Some(v), Some(by)) => {
            let key = if v == "agree" {
                tr_key("oncall.agreed_by")
            } else {
                tr_key("oncall.flagged_by")
            };
            let note = o
                .note
                .as_deref()
                .map(|n| tr.f("oncall.review_note", &[("note", n)]))
                .unwrap_or_default();
            Some(tr.f(
                key,
                &[
                    ("who", &tr.who(by)),
                    ("at", &tr.time(o.acknowledged_at_ms.unwrap_or(0))),
                    ("note", &note),
                ],
            ))
        }
        _ => None,
    };
    let id = o.call_id.clone();
    view! {
        <div class="override-item" data-testid="override-item" data-call=o.call_id.clone()>
            <p>
                <a href=format!("/calls/{}", o.call_id)><strong>{o.tool.clone()}</strong></a>
                {tr.f("oncall.released", &[
                    ("agent", &o.agent),
                    ("risk", tr.word("risk", &o.risk)),
                    ("who", &tr.who(&o.by)),
                    ("at", &tr.time(o.at_ms)),
                ])}
            </p>
            <p class="muted">{tr.f("oncall.justification_quoted", &[("justification", &o.justification)])}</p>
            {review.map(|r| view! { <p data-testid="override-review">{r}</p> })}
            {own.then(|| view! { <p class="muted">{tr.t("oncall.own")}</p> })}
            {csrf.map(|csrf| {
                let note_id = format!("note-{id}");
                let (csrf2, id2) = (csrf.clone(), id.clone());
                view! {
                    <PostForm action="/api/oncall/acknowledge".to_string() done=tr.t("oncall.review_recorded").to_string() notice="ack-message".to_string()>
                        <input type="hidden" name=CSRF_FIELD value=csrf2/>
                        <input type="hidden" name="call_id" value=id2/>
                        <input type="hidden" name="agree" value="true"/>
                        <button type="submit" class="approve" data-testid="agree">{tr.t("oncall.agree")}</button>
                    </PostForm>
                    <PostForm action="/api/oncall/acknowledge".to_string() done=tr.t("oncall.review_recorded").to_string() notice="ack-message".to_string()>
                        <input type="hidden" name=CSRF_FIELD value=csrf/>
                        <input type="hidden" name="call_id" value=id/>
                        <input type="hidden" name="agree" value="false"/>
                        <label for=note_id.clone()>{tr.t("oncall.note")}</label>
                        <input id=note_id name="note" type="text" maxlength="2000" required/>
                        <button type="submit" class="reject" data-testid="flag">{tr.t("oncall.flag")}</button>
                    </PostForm>
                }
            })}
        </div>
    }
}
