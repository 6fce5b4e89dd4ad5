//! On-call: start (or end) break-glass, and the post-hoc review of every call released
//! under it. Everyone signed in may read the overrides; reviewers, on-call and admins
//! acknowledge those of others; only on-call staff start break-glass.

use crate::api::{
    error_text, list_overrides, who, AcknowledgeOverride, LiveEvent, OverrideView, Permission, StartBreakGlass,
    CSRF_FIELD,
};
use crate::components::break_glass::use_board;
use crate::components::clock::utc;
use crate::components::live::on_live_event;
use crate::components::shell::{use_session, Guarded};
use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn OnCall() -> impl IntoView {
    view! {
        <Title text="On-call"/>
        <Guarded path="/oncall">
            <h1>"On-call"</h1>
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
    let me = format!("user:{}", user.username);
    let start = ServerAction::<StartBreakGlass>::new();
    let form = NodeRef::<leptos::html::Form>::new();
    let board = use_board();
    let me = StoredValue::new(me);
    let mine = move || {
        board.and_then(|b| {
            b.0.with(|l| l.iter().find(|v| me.with_value(|m| v.user == *m)).cloned())
        })
    };
    // A started break-glass shows on the board at once (the live event may come later).
    Effect::new(move |_| {
        if let (Some(Ok(v)), Some(board)) = (start.value().get(), board) {
            // The password and justification do not stay in the form.
            if let Some(f) = form.get_untracked() {
                f.reset();
            }
            board.0.update(|l| {
                l.retain(|b| b.user != v.user);
                l.push(v);
            });
        }
    });
    if !user.role.may(Permission::BreakGlass) {
        return view! {
            <section class="card" aria-labelledby="bg-h">
                <h2 id="bg-h">"Break-glass"</h2>
                <p class="muted">"On-call staff may start a time-boxed emergency override that releases held calls without the usual approvals. Everyone sees a banner while it is on, and every release waits here for another person's review."</p>
            </section>
        }
        .into_any();
    }
    view! {
        <section class="card" aria-labelledby="bg-h">
            <h2 id="bg-h">"Break-glass"</h2>
            {move || mine().map(|b| view! {
                <p class="notice" data-testid="my-break-glass">{format!("You are on break-glass until {}: “{}”. Open a held call to release it.", utc(b.ends_at_ms), b.justification)}</p>
            })}
            <p class="muted">"For emergencies when no reviewer can answer. It ends by itself; tools marked break_glass = false and anything the policy denies stay closed. Every call you release is recorded with your justification and reviewed by someone else afterwards."</p>
            <ActionForm action=start node_ref=form attr:class="oncall-form" attr:data-testid="break-glass-form">
                <input type="hidden" name=CSRF_FIELD value=session.csrf_token.clone()/>
                <label for="bg-why">{move || if mine().is_some() { "New justification (replaces the current one)" } else { "Justification" }}</label>
                <textarea id="bg-why" name="justification" rows="3" required minlength="10" maxlength="2000"
                    placeholder="What is broken, who could not be reached, what you will release"></textarea>
                <label for="bg-minutes">"Minutes"</label>
                <input id="bg-minutes" name="minutes" type="number" min="1" value="30" required/>
                <label for="bg-password">"Your password"</label>
                <input id="bg-password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit" class="reject" data-testid="start-break-glass" disabled=move || start.pending().get()>
                    "Start break-glass"
                </button>
            </ActionForm>
            {move || start.value().get().map(|r| match r {
                Ok(_) => view! { <p class="notice" role="status" data-testid="break-glass-message">"Break-glass is on. Everyone signed in can see it."</p> }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-testid="break-glass-message">{error_text(&e)}</p> }.into_any(),
            })}
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
    let ack = ServerAction::<AcknowledgeOverride>::new();
    let changed = RwSignal::new(0u32);
    on_live_event(move |e| {
        if matches!(e.event, LiveEvent::OverridesChanged(_)) {
            changed.update(|n| *n += 1);
        }
    });
    let list = Resource::new(move || (ack.version().get(), changed.get()), |_| list_overrides());
    view! {
        {move || ack.value().get().map(|r| match r {
            Ok(()) => view! { <p class="notice" role="status" data-testid="ack-message">"Review recorded."</p> }.into_any(),
            Err(e) => view! { <p class="error" role="alert" data-testid="ack-message">{error_text(&e)}</p> }.into_any(),
        })}
        <Transition fallback=|| view! { <p class="muted">"Loading overrides…"</p> }>
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
                            view! { <OverrideItem o=o.clone() form=(can_ack && !own).then_some(ack) csrf=csrf.get_value() own/> }
                        }).collect_view();
                        let none_reviewed = l.acknowledged.is_empty();
                        let done = l.acknowledged.into_iter().map(|o| view! { <OverrideItem o form=None csrf=String::new() own=false/> }).collect_view();
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
        </Transition>
    }
}

#[component]
fn OverrideItem(
    o: OverrideView,
    form: Option<ServerAction<AcknowledgeOverride>>,
    csrf: String,
    own: bool,
) -> impl IntoView {
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
            {form.map(|a| {
                let note_id = format!("note-{id}");
                let (csrf2, id2) = (csrf.clone(), id.clone());
                view! {
                    <ActionForm action=a>
                        <input type="hidden" name=CSRF_FIELD value=csrf.clone()/>
                        <input type="hidden" name="call_id" value=id.clone()/>
                        <input type="hidden" name="agree" value="true"/>
                        <button type="submit" class="approve" data-testid="agree">"Agree"</button>
                    </ActionForm>
                    <ActionForm action=a>
                        <input type="hidden" name=CSRF_FIELD value=csrf2/>
                        <input type="hidden" name="call_id" value=id2/>
                        <input type="hidden" name="agree" value="false"/>
                        <label for=note_id.clone()>"Note (needed to flag)"</label>
                        <input id=note_id name="note" type="text" maxlength="2000" required/>
                        <button type="submit" class="reject" data-testid="flag">"Flag"</button>
                    </ActionForm>
                }
            })}
        </div>
    }
}
