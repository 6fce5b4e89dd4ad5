use crate::components::shell::set_status;
use crate::i18n::use_tr;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn NotFound() -> impl IntoView {
    set_status(404);
    let tr = use_tr();
    view! {
        <Title text=tr.t("not_found.title")/>
        <section class="card narrow">
            <h1>{tr.t("not_found.heading")}</h1>
            <p>{tr.t("not_found.text")}</p>
            <p><a href="/">{tr.t("not_found.start_page")}</a></p>
        </section>
    }
}
