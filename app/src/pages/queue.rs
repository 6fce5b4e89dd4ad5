use crate::components::live::use_live;
use crate::components::shell::Guarded;
use leptos::prelude::*;
use leptos_meta::Title;

/// The live queue. Held calls arrive through the event hub; until the agent API
/// delivers them the page shows the connection and the latest event.
#[component]
pub fn Queue() -> impl IntoView {
    view! {
        <Title text="Queue"/>
        <Guarded path="/queue">
            <h1>"Queue"</h1>
            <QueueBody/>
        </Guarded>
    }
}

#[component]
fn QueueBody() -> impl IntoView {
    let live = use_live();
    let received = move || live.map_or(0, |l| l.received.get());
    let last = move || {
        live.and_then(|l| l.last.get())
            .map(|e| format!("#{} {}", e.seq, e.kind))
            .unwrap_or_else(|| "none yet".into())
    };
    view! {
        <section class="card" aria-labelledby="pending-h">
            <h2 id="pending-h">"Waiting for a decision"</h2>
            <p class="muted" data-testid="queue-empty">"No calls are waiting."</p>
        </section>
        <section class="card" aria-labelledby="live-h">
            <h2 id="live-h">"Live updates"</h2>
            <dl class="facts">
                <dt>"Events received"</dt>
                <dd data-testid="events-received">{received}</dd>
                <dt>"Latest event"</dt>
                <dd data-testid="last-event">{last}</dd>
            </dl>
        </section>
    }
}
