use crate::components::shell::Guarded;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Audit() -> impl IntoView {
    view! {
        <Title text="Audit"/>
        <Guarded path="/audit">
            <h1>"Audit"</h1>
            <section class="card">
                <p class="muted">"No audit events are recorded yet."</p>
            </section>
        </Guarded>
    }
}
