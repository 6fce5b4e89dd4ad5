//! The browser's subscription to the server's event hub (SSE on `/api/events`).
//! One EventSource per page, opened when the page starts (for signed-in people) and shared
//! by every island through the page's root context; it reconnects on its own and resumes
//! from the last event id.

use crate::api::LiveEvent;
use leptos::prelude::*;

/// One event as received.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    /// The hub's sequence number.
    pub seq: u64,
    /// This page's own count (1, 2, …): consumers remember the last one they handled.
    pub n: u64,
    pub event: LiveEvent,
}

/// How many recent events a page keeps for its consumers.
#[cfg(feature = "hydrate")]
const KEEP: usize = 256;

/// Connection state and the latest events, shared through context.
#[derive(Clone, Copy)]
pub struct Live {
    pub connected: RwSignal<bool>,
    pub last: RwSignal<Option<Received>>,
    pub received: RwSignal<u64>,
    /// Recent events, oldest first: several may arrive before an effect runs.
    pub recent: StoredValue<Vec<Received>>,
}

/// Call `handle` for every event that arrives from now on, each exactly once and in order.
pub fn on_live_event(handle: impl Fn(&Received) + 'static) {
    let Some(live) = use_live() else { return };
    let seen = StoredValue::new(live.received.get_untracked());
    Effect::new(move |_| {
        let n = live.received.get();
        let from = seen.get_value();
        if n <= from {
            return;
        }
        live.recent.with_value(|events| {
            for e in events.iter().filter(|e| e.n > from) {
                handle(e);
            }
        });
        seen.set_value(n);
    });
}

pub fn use_live() -> Option<Live> {
    use_context::<Live>()
}

/// Provide the (not yet connected) live state to the whole page: on the server for the
/// render, in the browser at the root every island descends from.
pub fn provide_live() -> Live {
    let live = Live {
        connected: RwSignal::new(false),
        last: RwSignal::new(None),
        received: RwSignal::new(0),
        recent: StoredValue::new(Vec::new()),
    };
    provide_context(live);
    live
}

/// Open the stream (once per page, from the browser entry point).
#[cfg(feature = "hydrate")]
pub fn connect(live: Live) {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Ok(es) = web_sys::EventSource::new("/api/events") else {
        return;
    };
    let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| live.connected.set(true));
    es.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| live.connected.set(false));
    es.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    for kind in LiveEvent::KINDS {
        let on_msg = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let seq = e.last_event_id().parse().unwrap_or(0);
            let data = e.data().as_string().unwrap_or_default();
            live.connected.set(true);
            // A kind or payload this build does not know (a newer server) is skipped.
            let Some(event) = LiveEvent::parse(kind, &data) else {
                return;
            };
            let n = live.received.get_untracked() + 1;
            let event = Received { seq, n, event };
            live.recent.update_value(|r| {
                if r.len() == KEEP {
                    r.remove(0);
                }
                r.push(event.clone());
            });
            live.received.set(n);
            live.last.set(Some(event));
        });
        let _ = es.add_event_listener_with_callback(kind, on_msg.as_ref().unchecked_ref());
        on_msg.forget();
    }
    // The EventSource lives as long as the page.
    std::mem::forget(es);
}

/// Whether the live stream is connected (in the header).
#[island]
pub fn LiveIndicator() -> impl IntoView {
    let live = use_live();
    let tr = crate::i18n::use_tr();
    let connected = move || live.is_some_and(|l| l.connected.get());
    view! {
        <span
            class="live"
            class:on=connected
            role="status"
            aria-live="polite"
            data-testid="live-status"
            title=tr.t("live.title")
        >
            <span class="dot" aria-hidden="true"></span>
            {move || if connected() { tr.t("live.connected") } else { tr.t("live.offline") }}
        </span>
    }
}
