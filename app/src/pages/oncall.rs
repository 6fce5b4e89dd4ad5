//! On-call: start (or end) break-glass, and the post-hoc review of every call released
//! under it. Everyone signed in may read the overrides; reviewers, on-call and admins
//! acknowledge those of others; only on-call staff start break-glass. Server-rendered;
//! the page reloads when an override is recorded or reviewed, or break-glass changes.

use crate::api::{error_text, list_overrides, who, OverrideView, Permission, CSRF_FIELD};
use crate::components::clock::utc;
use crate::components::post::PostForm;
use crate::components::refresh::ReloadOn;
use crate::components::shell::{use_session, Guarded};
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn OnCall() -> impl IntoView {
    view! {
        <Title text="On-call"/>
        <Guarded path="/oncall">
            <h1>"On-call"</h1>
            <ReloadOn kinds=vec!["overrides_changed".into(), "break_glass".into()] ask=true/>
            <BreakGlassPanel/>
            <Overrides/>
        </Guarded>
    }
}

#[component]
fn BreakGlassPanel() -> impl IntoView {
    let session = use_session();
    let Some(user) = session.user.clone() else {
        return ().into_any();
    };
    if !user.role.may(Permission::BreakGlass) {
        return view! {
            <section class="card" aria-labelledby="bg-h">
                <h2 id="bg-h">"Break-glass"</h2>
                <p class="muted">"On-call staff may start a time-boxed emergency override that releases held calls without the usual approvals. Everyone sees a banner while it is on, and every release waits here for another person's review."</p>
            </section>
        }
        .into_any();
    }
    let me = format!("user:{}", user.username);
    let mine = session.break_glass.iter().find(|v| v.user == me).cloned();
    let on = mine.is_some();
    view! {
        <section class="card" aria-labelledby="bg-h">
            <h2 id="bg-h">"Break-glass"</h2>
            {mine.map(|b| view! {
                <p class="notice" data-testid="my-break-glass">{format!("You are on break-glass until {}: “{}”. Open a held call to release it.", utc(b.ends_at_ms), b.justification)}</p>
            })}
            <p class="muted">"For emergencies when no reviewer can answer. It ends by itself; tools marked break_glass = false and anything the policy denies stay closed. Every call you release is recorded with your justification and reviewed by someone else afterwards."</p>
            <PostForm action="/api/oncall/start".to_string() class="oncall-form".to_string() testid="break-glass-form".to_string()
                done="Break-glass is on. Everyone signed in can see it.".to_string() notice="break-glass-message".to_string()>
                <input type="hidden" name=CSRF_FIELD value=session.csrf_token.clone()/>
                <label for="bg-why">{if on { "New justification (replaces the current one)" } else { "Justification" }}</label>
                <textarea id="bg-why" name="justification" rows="3" required minlength="10" maxlength="2000"
                    placeholder="What is broken, who could not be reached, what you will release"></textarea>
                <label for="bg-minutes">"Minutes"</label>
                <input id="bg-minutes" name="minutes" type="number" min="1" value="30" required/>
                <label for="bg-password">"Your password"</label>
                <input id="bg-password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit" class="reject" data-testid="start-break-glass">"Start break-glass"</button>
            </PostForm>
        </section>
    }
    .into_any()
}

#[component]
fn Overrides() -> impl IntoView {
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
        <Suspense fallback=|| view! { <p class="muted">"Loading overrides…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(l) => {
                        let awaiting = l.awaiting_total;
                        let heading = match awaiting {
                            0 => "No override awaits review".to_string(),
                            1 => "1 override awaits review".to_string(),
                            n => format!("{n} overrides await review"),
                        };
                        let pending = l.awaiting.into_iter().map(|o| {
                            let own = o.by == me.get_value();
                            let csrf = (can_ack && !own).then(|| csrf.get_value());
                            view! { <OverrideItem o csrf own/> }
                        }).collect_view();
                        let none_reviewed = l.acknowledged.is_empty();
                        let done = l.acknowledged.into_iter().map(|o| view! { <OverrideItem o csrf=None own=false/> }).collect_view();
                        view! {
                            <section class="card" aria-labelledby="ov-h" data-testid="overrides-awaiting">
                                <h2 id="ov-h">{heading}</h2>
                                <p class="muted">"Every call released under break-glass needs another reviewer or admin to agree with it or flag it. Nobody reviews their own."</p>
                                {pending}
                            </section>
                            <section class="card" aria-labelledby="ovd-h" data-testid="overrides-reviewed">
                                <h2 id="ovd-h">"Reviewed overrides"</h2>
                                {none_reviewed.then(|| view! { <p class="muted">"No override has been reviewed yet."</p> })}
                                {done}
                            </section>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// One override; with a CSRF token, the forms to agree with it or flag it.
#[component]
fn OverrideItem(o: OverrideView, csrf: Option<String>, own: bool) -> impl IntoView {
    let review = match (&o.verdict, &o.acknowledged_by) {
        (Some(v), Some(by)) => Some(format!(
            "{} by {} at {}{}",
            if v == "agree" { "Agreed" } else { "Flagged" },
            who(by),
            utc(o.acknowledged_at_ms.unwrap_or(0)),
            o.note.as_deref().map(|n| format!(": “{n}”")).unwrap_or_default()
        )),
        _ => None,
    };
    let id = o.call_id.clone();
    view! {
        <div class="override-item" data-testid="override-item" data-call=o.call_id.clone()>
            <p>
                <a href=format!("/calls/{}", o.call_id)><strong>{o.tool.clone()}</strong></a>
                {format!(" · {} · {} risk · released by {} at {}", o.agent, o.risk, who(&o.by), utc(o.at_ms))}
            </p>
            <p class="muted">{format!("Justification: “{}”", o.justification)}</p>
            {review.map(|r| view! { <p data-testid="override-review">{r}</p> })}
            {own.then(|| view! { <p class="muted">"Your own override: someone else reviews it."</p> })}
            {csrf.map(|csrf| {
                let note_id = format!("note-{id}");
                let (csrf2, id2) = (csrf.clone(), id.clone());
                view! {
                    <PostForm action="/api/oncall/acknowledge".to_string() done="Review recorded.".to_string() notice="ack-message".to_string()>
                        <input type="hidden" name=CSRF_FIELD value=csrf2/>
                        <input type="hidden" name="call_id" value=id2/>
                        <input type="hidden" name="agree" value="true"/>
                        <button type="submit" class="approve" data-testid="agree">"Agree"</button>
                    </PostForm>
                    <PostForm action="/api/oncall/acknowledge".to_string() done="Review recorded.".to_string() notice="ack-message".to_string()>
                        <input type="hidden" name=CSRF_FIELD value=csrf/>
                        <input type="hidden" name="call_id" value=id/>
                        <input type="hidden" name="agree" value="false"/>
                        <label for=note_id.clone()>"Note (needed to flag)"</label>
                        <input id=note_id name="note" type="text" maxlength="2000" required/>
                        <button type="submit" class="reject" data-testid="flag">"Flag"</button>
                    </PostForm>
                }
            })}
        </div>
    }
}
