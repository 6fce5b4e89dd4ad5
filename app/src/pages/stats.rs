use crate::components::shell::Guarded;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn Stats() -> impl IntoView {
    view! {
        <Title text="Stats"/>
        <Guarded path="/stats">
            <h1>"Stats"</h1>
            <section class="card">
                <p class="muted">"No decisions have been made yet."</p>
            </section>
        </Guarded>
    }
}
