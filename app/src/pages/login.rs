use crate::api::CSRF_FIELD;
use crate::components::shell::use_session;
use crate::i18n::{use_tr, Tr};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// Messages for the `error` codes the sign-in handler redirects with.
fn message(tr: Tr, code: &str) -> &'static str {
    match code {
        "invalid" => tr.t("login.invalid"),
        "disabled" => tr.t("login.disabled"),
        "throttled" => tr.t("login.throttled"),
        "expired" => tr.t("login.expired"),
        "signed_out" => tr.t("login.signed_out"),
        _ => tr.t("login.failed"),
    }
}

/// A plain HTML form posted to `/login`: works with and without JavaScript.
#[component]
pub fn Login() -> impl IntoView {
    let token = use_session().csrf_token;
    let query = use_query_map();
    let tr = use_tr();
    let error = move || query.read().get("error").map(|c| message(tr, &c));
    let next = move || query.read().get("next").unwrap_or_default();
    view! {
        <Title text=tr.t("login.title")/>
        <section class="card narrow login">
            <h1>{tr.t("login.heading")}</h1>
            {move || error().map(|m| view! { <p class="error" role="alert" data-testid="login-error">{m}</p> })}
            <form method="post" action="/login">
                <input type="hidden" name=CSRF_FIELD value=token/>
                <input type="hidden" name="next" value=next/>
                <label for="username">{tr.t("login.username")}</label>
                <input id="username" name="username" autocomplete="username" required autofocus/>
                <label for="password">{tr.t("login.password")}</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit" class="primary">{tr.t("login.submit")}</button>
            </form>
        </section>
    }
}
