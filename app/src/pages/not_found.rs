use crate::components::shell::set_status;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn NotFound() -> impl IntoView {
    set_status(404);
    view! {
        <Title text="Not found"/>
        <section class="card narrow">
            <h1>"Page not found"</h1>
            <p>"There is no page at this address. It may have moved, or the link is mistyped."</p>
            <p><a href="/">"Go to the start page"</a></p>
        </section>
    }
}
