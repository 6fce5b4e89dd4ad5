use crate::components::shell::use_session;
use crate::routes;
use leptos::prelude::*;

/// `/`: the server redirects to the user's start page; this is what shows without that.
#[component]
pub fn Home() -> impl IntoView {
    let session = use_session();
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let user = session.await.ok().and_then(|s| s.user);
                match user {
                    Some(u) => view! { <p><a href=routes::home_for(u.role)>"Continue to your start page"</a></p> }.into_any(),
                    None => view! { <p><a href="/login">"Sign in"</a></p> }.into_any(),
                }
            })}
        </Suspense>
    }
}
