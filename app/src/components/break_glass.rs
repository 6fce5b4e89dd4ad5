//! The break-glass banner every signed-in page shows while an emergency override is in
//! force: who, why, until when and how long is left. It starts from the board the server
//! wrote into the page and follows `break_glass` live events, so it appears and goes
//! away without a reload.

use crate::api::{BreakGlassView, LiveEvent, Role};
use crate::components::clock::countdown;
use crate::components::live::on_live_event;
use crate::components::shell::use_session;
use leptos::prelude::*;

/// Break-glass in force, shared by the banner, the review page and the on-call page.
#[derive(Clone, Copy)]
pub struct Board(pub RwSignal<Vec<BreakGlassView>>);

pub fn use_board() -> Option<Board> {
    use_context::<Board>()
}

/// The board from the page, kept current by live events (call once: in the layout on the
/// server, at the page's root in the browser).
pub fn provide_board() -> Board {
    let board = Board(RwSignal::new(use_session().break_glass));
    provide_context(board);
    on_live_event(move |e| {
        if let LiveEvent::BreakGlass(b) = &e.event {
            board.0.set(b.active.clone());
        }
    });
    board
}

/// Is `user` (`user:NAME`) on break-glass now, by the board?
pub fn on_break_glass(user: &str) -> bool {
    use_board().is_some_and(|b| b.0.with(|l| l.iter().any(|v| v.user == user)))
}

#[island]
pub fn BreakGlassBanner() -> impl IntoView {
    let Some(board) = use_board() else { return ().into_any() };
    let tr = crate::i18n::use_tr();
    let session = use_session();
    let me = StoredValue::new(session.user.as_ref().map(|u| format!("user:{}", u.username)));
    let admin = session.user.as_ref().is_some_and(|u| u.role == Role::Admin);
    let csrf = StoredValue::new(session.csrf_token);
    let ending = RwSignal::new(false);
    let failed = RwSignal::new(None::<String>);
    // Ended: the live event takes it off every board, this one included.
    let end = move |id: String| {
        #[cfg(feature = "hydrate")]
        {
            ending.set(true);
            let body = crate::components::post::encode(&[(crate::api::CSRF_FIELD, &csrf.get_value()), ("id", &id)]);
            leptos::task::spawn_local(async move {
                let a = crate::components::post::post_in(tr, "/api/oncall/end", body).await;
                ending.set(false);
                failed.set((!a.ok).then(|| a.message.unwrap_or_default()));
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (id, csrf, tr);
    };
    // The countdown starts once the page is hydrated: server and browser must render the
    // same text first (a mismatch breaks hydration).
    let now = RwSignal::new(None::<i64>);
    #[cfg(feature = "hydrate")]
    Effect::new(move |started: Option<()>| {
        if started.is_some() {
            return;
        }
        now.set(Some(js_sys::Date::now() as i64));
        if let Ok(h) = set_interval_with_handle(
            move || now.set(Some(js_sys::Date::now() as i64)),
            std::time::Duration::from_secs(1),
        ) {
            on_cleanup(move || h.clear());
        }
    });
    let shown = move || {
        let t = now.get();
        board
            .0
            .get()
            .into_iter()
            .filter(|b| t.is_none_or(|t| b.ends_at_ms > t))
            .collect::<Vec<_>>()
    };
    view! {
        <Show when=move || !shown().is_empty()>
            <div class="break-glass" role="alert" data-testid="break-glass-banner">
                {move || shown().into_iter().map(|b| {
                    let mine = me.with_value(|m| m.as_deref() == Some(b.user.as_str()));
                    let id = b.id.clone();
                    let ends = b.ends_at_ms;
                    view! {
                        <p>
                            <strong>{tr.t("bg.on")}</strong>
                            {tr.f("bg.may_release", &[
                                ("who", &tr.who(&b.user)),
                                ("justification", &b.justification),
                                ("until", &tr.time(b.ends_at_ms)),
                            ])}
                            <span class="left" data-testid="break-glass-left">
                                {move || now.get().map(|t| format!(" ({})", countdown(tr, Some(ends), t)))}
                            </span>
                            {(mine || admin).then(|| view! {
                                " "<button type="button" class="link" data-testid="end-break-glass"
                                    disabled=move || ending.get()
                                    on:click=move |_| end(id.clone())>
                                    {tr.t("bg.end_now")}
                                </button>
                            })}
                        </p>
                    }
                }).collect_view()}
                {move || failed.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            </div>
        </Show>
    }
    .into_any()
}
