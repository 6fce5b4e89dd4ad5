//! A form whose answer is a signing secret just issued ([`IssuedSecret`]): the secret is
//! shown here once, with a copy button, and never stored in the browser (no reload carries
//! it, no URL holds it). "Done" reloads the page. The submit button works only once the
//! island has hydrated: a plain HTML post would issue a secret nobody gets to see.

use crate::api::IssuedSecret;
#[cfg(feature = "hydrate")]
use crate::components::post;
use crate::components::refresh;
use leptos::prelude::*;

#[island]
pub fn SecretForm(
    action: String,
    /// The submit button's text and class.
    label: String,
    #[prop(optional)] button_class: Option<String>,
    #[prop(optional)] class: Option<String>,
    #[prop(optional)] testid: Option<String>,
    children: Children,
) -> impl IntoView {
    let tr = crate::i18n::use_tr();
    let issued = RwSignal::new(None::<IssuedSecret>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let ready = RwSignal::new(false);
    // Effects run in the browser only: the button comes alive with the island.
    Effect::new(move |_| ready.set(true));
    let url = action.clone();
    let on_submit = move |e: leptos::ev::SubmitEvent| {
        e.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            if busy.get_untracked() {
                return;
            }
            let Some((form, _, body)) = post::submitted(&e) else {
                return;
            };
            let url = url.clone();
            busy.set(true);
            error.set(None);
            let page_busy = refresh::busy();
            leptos::task::spawn_local(async move {
                let _page_busy = page_busy;
                let answer = post::call::<IssuedSecret>(&url, Some(body)).await;
                busy.set(false);
                match answer {
                    Ok(s) => {
                        form.reset();
                        issued.set(Some(s));
                    }
                    Err(e) => error.set(Some(crate::api::error_text_in(tr, &e))),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (&url, tr);
    };
    let copied = RwSignal::new(false);
    view! {
        <form method="post" action=action class=class data-testid=testid on:submit=on_submit
            aria-busy=move || busy.get().then_some("true")>
            {children()}
            <button type="submit" class=button_class disabled=move || !ready.get() || busy.get()>{label}</button>
        </form>
        {move || error.get().map(|e| view! { <p class="error" role="alert" data-testid="secret-error">{e}</p> })}
        {move || issued.get().map(|s| {
            let field = format!("secret-{}", s.agent);
            let secret = s.secret.clone();
            view! {
                <div class="issued-secret" role="status" data-testid="issued-secret">
                    <p><strong>{s.message.clone()}</strong></p>
                    <p>{tr.t("secret.shown_once_before")}<code>{s.agent.clone()}</code>
                        {tr.t("secret.shown_once_middle")}<code>"AIRLOCK_SECRET"</code>{tr.t("secret.shown_once_after")}</p>
                    <label for=field.clone()>{tr.t("secret.label")}</label>
                    <div class="secret-row">
                        <input id=field class="mono" readonly value=s.secret.clone() autocomplete="off" spellcheck="false"
                            on:focus=|e| {
                                #[cfg(feature = "hydrate")]
                                {
                                    use wasm_bindgen::JsCast;
                                    if let Some(i) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                                        i.select();
                                    }
                                }
                                #[cfg(not(feature = "hydrate"))]
                                let _ = e;
                            }/>
                        <button type="button" on:click=move |_| {
                            copy(&secret);
                            copied.set(true);
                        }>{move || if copied.get() { tr.t("secret.copied") } else { tr.t("secret.copy") }}</button>
                        <button type="button" class="primary" on:click=move |_| {
                            issued.set(None);
                            refresh::reload();
                        }>{tr.t("secret.done")}</button>
                    </div>
                </div>
            }
        })}
    }
}

/// Put `text` on the clipboard (the Clipboard API: secure contexts, which localhost is).
fn copy(text: &str) {
    #[cfg(feature = "hydrate")]
    {
        let _ = window().navigator().clipboard().write_text(text);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = text;
}
