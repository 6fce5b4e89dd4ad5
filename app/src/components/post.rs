//! Forms that post to server functions. Without JavaScript a [`PostForm`] is a plain HTML
//! form: the server function runs and redirects back to the page. With JavaScript it posts
//! the same fields itself, shows a refusal next to the form, and on success reloads the page
//! with a message (or goes where the answer leads). One island for every such form: the
//! answer is read by shape (`ok`, `message`, or a plain string), not by type.

#[cfg(feature = "hydrate")]
use crate::components::refresh;
use crate::components::refresh::Flash;
use crate::i18n::{use_tr, Tr};
use leptos::prelude::*;

/// What a server function answered, read without knowing its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// It worked: a 2xx answer whose `ok` (if it has one) is true.
    pub ok: bool,
    /// What to tell the person: the answer's `message`, the answer itself when it is a
    /// string, or why it failed.
    pub message: Option<String>,
}

impl Answer {
    /// Read an answer: `status` and body of a server function's response (a refusal in
    /// English).
    pub fn read(status: u16, body: &str) -> Answer {
        Answer::read_in(Tr::default(), status, body)
    }

    /// Read an answer, a refusal in the language of `tr`.
    pub fn read_in(tr: Tr, status: u16, body: &str) -> Answer {
        if !(200..300).contains(&status) {
            let why = serde_json::from_str::<crate::api::AppError>(body)
                .map(|e| crate::api::error_text_in(tr, &e))
                .unwrap_or_else(|_| tr.f("post.server_answered", &[("status", &status.to_string())]));
            return Answer {
                ok: false,
                message: Some(why),
            };
        }
        #[cfg(feature = "hydrate")]
        {
            let Ok(v) = js_sys::JSON::parse(body) else {
                return Answer {
                    ok: true,
                    message: None,
                };
            };
            if let Some(s) = v.as_string() {
                return Answer {
                    ok: true,
                    message: Some(s),
                };
            }
            let field = |name: &str| js_sys::Reflect::get(&v, &wasm_bindgen::JsValue::from_str(name)).ok();
            Answer {
                ok: field("ok").and_then(|o| o.as_bool()).unwrap_or(true),
                message: field("message").and_then(|m| m.as_string()),
            }
        }
        #[cfg(not(feature = "hydrate"))]
        Answer {
            ok: true,
            message: serde_json::from_str::<String>(body).ok(),
        }
    }

    /// The answer that could not be had: the server was not reached (said in English).
    pub fn unreachable() -> Answer {
        Answer::unreachable_in(Tr::default())
    }

    /// The answer that could not be had, said in the language of `tr`.
    pub fn unreachable_in(tr: Tr) -> Answer {
        Answer {
            ok: false,
            message: Some(crate::api::error_text_in(tr, &crate::api::AppError::Unreachable)),
        }
    }
}

/// `GET url`: status and body.
#[cfg(feature = "hydrate")]
pub async fn get(url: &str) -> Result<(u16, String), ()> {
    send("GET", url, None).await
}

/// Post URL-encoded `body` to the server function at `url`. Hold a [`refresh::busy`]
/// guard until the answer is handled, so that no reload loses it. A refusal is in English:
/// see [`post_in`].
#[cfg(feature = "hydrate")]
pub async fn post(url: &str, body: String) -> Answer {
    post_in(Tr::default(), url, body).await
}

/// [`post`], a refusal said in the language of `tr` (take it with `use_tr()` in the
/// island's body: the context is gone once the request is under way).
#[cfg(feature = "hydrate")]
pub async fn post_in(tr: Tr, url: &str, body: String) -> Answer {
    match send("POST", url, Some(body)).await {
        Ok((status, text)) => Answer::read_in(tr, status, &text),
        Err(()) => Answer::unreachable_in(tr),
    }
}

/// Call the server function at `url` (GET, or POST with a URL-encoded `body`) and read its
/// answer as `T`: for islands that need the answer's data, not only its outcome.
#[cfg(feature = "hydrate")]
pub async fn call<T: serde::de::DeserializeOwned>(url: &str, body: Option<String>) -> Result<T, crate::api::AppError> {
    use crate::api::AppError;
    let method = if body.is_some() { "POST" } else { "GET" };
    let (status, text) = send(method, url, body).await.map_err(|()| AppError::Unreachable)?;
    if (200..300).contains(&status) {
        serde_json::from_str(&text).map_err(|e| AppError::Protocol(e.to_string()))
    } else {
        Err(serde_json::from_str(&text).unwrap_or_else(|_| AppError::Protocol(format!("status {status}"))))
    }
}

/// `pairs` URL-encoded (by the browser).
#[cfg(feature = "hydrate")]
pub fn encode(pairs: &[(&str, &str)]) -> String {
    let Ok(p) = web_sys::UrlSearchParams::new() else {
        return String::new();
    };
    for (k, v) in pairs {
        p.append(k, v);
    }
    String::from(p.to_string())
}

#[cfg(feature = "hydrate")]
async fn send(method: &str, url: &str, body: Option<String>) -> Result<(u16, String), ()> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_credentials(web_sys::RequestCredentials::SameOrigin);
    let headers = web_sys::Headers::new().map_err(|_| ())?;
    headers.set("accept", "application/json").map_err(|_| ())?;
    if let Some(b) = body {
        headers
            .set("content-type", "application/x-www-form-urlencoded")
            .map_err(|_| ())?;
        init.set_body(&wasm_bindgen::JsValue::from_str(&b));
    }
    init.set_headers(&headers);
    let resp = JsFuture::from(window().fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| ())?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| ())?;
    let text = JsFuture::from(resp.text().map_err(|_| ())?).await.map_err(|_| ())?;
    Ok((resp.status(), text.as_string().unwrap_or_default()))
}

/// The `fields` of a JSON object, joined: what a poller compares.
#[cfg(feature = "hydrate")]
pub fn pick(body: &str, fields: &[String]) -> Option<String> {
    let v = js_sys::JSON::parse(body).ok()?;
    let mut out = String::new();
    for f in fields {
        let x = js_sys::Reflect::get(&v, &wasm_bindgen::JsValue::from_str(f)).ok()?;
        out.push_str(&js_sys::JSON::stringify(&x).ok().map(String::from).unwrap_or_default());
        out.push('\n');
    }
    Some(out)
}

/// The form a submit event is for, its fields, and the fields URL-encoded.
#[cfg(feature = "hydrate")]
pub fn submitted(e: &leptos::ev::SubmitEvent) -> Option<(web_sys::HtmlFormElement, web_sys::FormData, String)> {
    use wasm_bindgen::JsCast;
    let form = e.target()?.dyn_into::<web_sys::HtmlFormElement>().ok()?;
    let fields = web_sys::FormData::new_with_form(&form).ok()?;
    let body = web_sys::UrlSearchParams::new_with_str_sequence_sequence(&fields)
        .map(|p| String::from(p.to_string()))
        .unwrap_or_default();
    Some((form, fields, body))
}

/// `template` with each `{name}` replaced by the form's field `name`.
#[cfg(feature = "hydrate")]
fn fill(template: &str, form: &web_sys::FormData) -> String {
    let mut out = template.to_string();
    while let (Some(a), Some(b)) = (out.find('{'), out.find('}')) {
        if b < a {
            break;
        }
        let value = form.get(&out[a + 1..b]).as_string().unwrap_or_default();
        out.replace_range(a..=b, &value);
    }
    out
}

/// A form posting to the server function at `action` (its fields are the children).
///
/// On success the page reloads and says `done` (`{field}` filled from the form), or the
/// answer's own message, under the test id `notice`; with `then`, the browser goes there
/// instead (`{answer}` replaced by the answer's text). A refusal stays on the page, next
/// to the form, under the test id `error` (default: `notice`).
#[island]
pub fn PostForm(
    action: String,
    #[prop(optional)] class: Option<String>,
    #[prop(optional)] testid: Option<String>,
    #[prop(optional)] done: Option<String>,
    #[prop(optional)] notice: Option<String>,
    #[prop(optional)] error: Option<String>,
    #[prop(optional)] then: Option<String>,
    children: Children,
) -> impl IntoView {
    let tr = use_tr();
    let message = RwSignal::new(None::<Flash>);
    let busy = RwSignal::new(false);
    let notice = notice.unwrap_or_else(|| "form-message".into());
    let error = error.unwrap_or_else(|| notice.clone());
    let url = action.clone();
    let on_submit = move |e: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        {
            e.prevent_default();
            if busy.get_untracked() {
                return;
            }
            let Some((_, fields, body)) = submitted(&e) else {
                return;
            };
            let (url, done, then, notice, error) =
                (url.clone(), done.clone(), then.clone(), notice.clone(), error.clone());
            busy.set(true);
            let page_busy = refresh::busy();
            leptos::task::spawn_local(async move {
                let _page_busy = page_busy;
                let answer = post_in(tr, &url, body).await;
                busy.set(false);
                if !answer.ok {
                    let f = Flash::new(&error, false, answer.message.unwrap_or_default());
                    refresh::keep(Some(f.clone()));
                    message.set(Some(f));
                    return;
                }
                let text = answer.message.or_else(|| done.map(|d| fill(&d, &fields)));
                match then {
                    Some(to) => {
                        let answer = crate::api::encode(text.as_deref().unwrap_or_default());
                        refresh::go(&to.replace("{answer}", &answer));
                    }
                    None => {
                        refresh::keep(text.map(|t| Flash::new(&notice, true, t)));
                        refresh::reload();
                    }
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (e, &url, &done, &then, &notice, &error, tr);
    };
    view! {
        <form method="post" action=action class=class data-testid=testid
            aria-busy=move || busy.get().then_some("true") on:submit=on_submit>
            {children()}
        </form>
        {move || message.get().map(Flash::view)}
    }
}

#[cfg(test)]
mod tests {
    use super::Answer;

    #[test]
    fn refusals_read_as_the_error_sentence() {
        let a = Answer::read(400, r#"{"Invalid":"the name is taken"}"#);
        assert!(!a.ok);
        assert_eq!(a.message.as_deref(), Some("the name is taken"));
        let a = Answer::read(403, r#"{"Forbidden":"auditor"}"#);
        assert_eq!(a.message.as_deref(), Some("your role (auditor) may not do this"));
        let a = Answer::read(502, "<html>bad gateway</html>");
        assert!(!a.ok);
        assert!(a.message.unwrap().contains("502"));
    }
}
