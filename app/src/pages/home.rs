use crate::components::shell::use_session;
use crate::routes;
use leptos::prelude::*;

/// `/`: the server redirects to the user's start page; this is what shows without that.
#[component]
pub fn Home() -> impl IntoView {
    match use_session().user {
        Some(u) => view! { <p><a href=routes::home_for(u.role)>"Continue to your start page"</a></p> }.into_any(),
        None => view! { <p><a href="/login">"Sign in"</a></p> }.into_any(),
    }
}
