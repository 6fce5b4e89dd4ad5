use crate::api::CSRF_FIELD;
use crate::components::shell::use_session;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// Messages for the `error` codes the sign-in handler redirects with.
fn message(code: &str) -> &'static str {
    match code {
        "invalid" => "Wrong username or password.",
        "disabled" => "This account is disabled. Ask an administrator.",
        "throttled" => "Too many attempts. Wait a few minutes and try again.",
        "expired" => "The form expired. Please try again.",
        "signed_out" => "You are signed out.",
        _ => "Sign-in failed. Please try again.",
    }
}

/// A plain HTML form posted to `/login`: works with and without JavaScript.
#[component]
pub fn Login() -> impl IntoView {
    let token = use_session().csrf_token;
    let query = use_query_map();
    let error = move || query.read().get("error").map(|c| message(&c));
    let next = move || query.read().get("next").unwrap_or_default();
    view! {
        <Title text="Sign in"/>
        <section class="card narrow login">
            <h1>"Sign in to Airlock"</h1>
            {move || error().map(|m| view! { <p class="error" role="alert" data-testid="login-error">{m}</p> })}
            <form method="post" action="/login">
                <input type="hidden" name=CSRF_FIELD value=token/>
                <input type="hidden" name="next" value=next/>
                <label for="username">"Username"</label>
                <input id="username" name="username" autocomplete="username" required autofocus/>
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit" class="primary">"Sign in"</button>
            </form>
        </section>
    }
}
