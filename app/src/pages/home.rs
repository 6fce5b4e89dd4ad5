use crate::components::shell::use_session;
use crate::i18n::use_tr;
use crate::routes;
use leptos::prelude::*;

/// `/`: the server redirects to the user's start page; this is what shows without that.
#[component]
pub fn Home() -> impl IntoView {
    let tr = use_tr();
    match use_session().user {
        Some(u) => view! { <p><a href=routes::home_for(u.role)>{tr.t("home.continue")}</a></p> }.into_any(),
        None => view! { <p><a href="/login">{tr.t("home.sign_in")}</a></p> }.into_any(),
    }
}
