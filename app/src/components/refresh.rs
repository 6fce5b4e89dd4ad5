//! Keeping a server-rendered page current. Pages are rendered whole by the server; after a
//! change (a form posted here, or an event from elsewhere) the page reloads and the server
//! renders the new truth. One message may cross the reload (the outcome of what this
//! person just did), shown by the [`Flash`] island at the top of the page.
//!
//! A reload waits for requests this page still has in flight (their answer would be lost),
//! and pages where someone may be typing ask before throwing their input away.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A message shown after the page reloads: the element's test id, whether it reports a
/// success, and the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    pub testid: String,
    pub ok: bool,
    pub text: String,
}

impl Flash {
    pub fn new(testid: &str, ok: bool, text: impl Into<String>) -> Flash {
        Flash {
            testid: testid.to_string(),
            ok,
            text: text.into(),
        }
    }

    /// The message as a paragraph: a notice, or an alert.
    pub fn view(self) -> impl IntoView {
        let (class, role) = if self.ok {
            ("notice", "status")
        } else {
            ("error", "alert")
        };
        view! { <p class=class role=role data-testid=self.testid>{self.text}</p> }
    }
}

/// How long a stored message stays worth showing: a reload takes well under this.
#[cfg(feature = "hydrate")]
const FLASH_MS: i64 = 30_000;
#[cfg(feature = "hydrate")]
const FLASH_KEY: &str = "airlock-flash";

#[cfg(feature = "hydrate")]
mod state {
    use super::Flash;
    use std::cell::{Cell, RefCell};

    thread_local! {
        /// Requests of this page still waiting for their answer.
        pub static BUSY: Cell<u32> = const { Cell::new(0) };
        /// A reload was asked for while requests were in flight.
        pub static WANTED: Cell<bool> = const { Cell::new(false) };
        /// The page is going away: no second reload.
        pub static LEAVING: Cell<bool> = const { Cell::new(false) };
        /// The message to carry across a reload.
        pub static KEEP: RefCell<Option<Flash>> = const { RefCell::new(None) };
        /// Hides the message the last reload carried (a newer one is shown).
        pub static HIDE: RefCell<Option<Box<dyn Fn()>>> = const { RefCell::new(None) };
    }
}

/// While one lives, the page has a request whose answer is not handled yet: reloads wait
/// for it (and happen when the last one is dropped, after its answer was handled).
#[must_use = "the page is busy only while this lives"]
pub struct Busy(());

/// A request of this page starts.
pub fn busy() -> Busy {
    #[cfg(feature = "hydrate")]
    state::BUSY.with(|b| b.set(b.get() + 1));
    Busy(())
}

impl Drop for Busy {
    fn drop(&mut self) {
        end();
    }
}

/// A request's answer was handled: a reload asked for meanwhile happens now.
fn end() {
    #[cfg(feature = "hydrate")]
    {
        let left = state::BUSY.with(|b| {
            let n = b.get().saturating_sub(1);
            b.set(n);
            n
        });
        if left == 0 && state::WANTED.with(|w| w.replace(false)) {
            reload();
        }
    }
}

/// The message to show again if the page reloads: the latest outcome shown here, which
/// also replaces the one the last reload carried.
pub fn keep(flash: Option<Flash>) {
    #[cfg(feature = "hydrate")]
    {
        state::HIDE.with(|h| h.borrow().as_ref().map(|hide| hide()));
        state::KEEP.with(|k| *k.borrow_mut() = flash);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = flash;
}

/// Reload the page (once; after the requests in flight), carrying the kept message.
pub fn reload() {
    #[cfg(feature = "hydrate")]
    {
        if state::LEAVING.with(Cell::get) {
            return;
        }
        if state::BUSY.with(Cell::get) > 0 {
            state::WANTED.with(|w| w.set(true));
            return;
        }
        state::LEAVING.with(|l| l.set(true));
        if let Some(f) = state::KEEP.with(|k| k.borrow_mut().take()) {
            store(&f);
        }
        let _ = window().location().reload();
    }
}
#[cfg(feature = "hydrate")]
use std::cell::Cell;

/// Go to `url` (a full page load).
pub fn go(url: &str) {
    #[cfg(feature = "hydrate")]
    {
        state::LEAVING.with(|l| l.set(true));
        let _ = window().location().set_href(url);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = url;
}

/// Keep `flash` for the next page this tab shows, then reload.
pub fn reload_with(flash: Flash) {
    keep(Some(flash));
    reload();
}

#[cfg(feature = "hydrate")]
fn store(f: &Flash) {
    let Some(storage) = window().session_storage().ok().flatten() else {
        return;
    };
    let path = window().location().pathname().unwrap_or_default();
    let at = js_sys::Date::now() as i64;
    let line = format!("{path}\n{}\n{}\n{at}\n{}", f.testid, f.ok, f.text);
    let _ = storage.set_item(FLASH_KEY, &line);
}

/// The message stored for this page by the reload that led here, if recent (and forget it).
#[cfg(feature = "hydrate")]
fn take_stored() -> Option<Flash> {
    let storage = window().session_storage().ok().flatten()?;
    let line = storage.get_item(FLASH_KEY).ok().flatten()?;
    let _ = storage.remove_item(FLASH_KEY);
    let mut parts = line.splitn(5, '\n');
    let (path, testid, ok, at, text) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    let here = window().location().pathname().unwrap_or_default();
    let fresh = at
        .parse::<i64>()
        .is_ok_and(|t| js_sys::Date::now() as i64 - t < FLASH_MS);
    (path == here && fresh).then(|| Flash::new(testid, ok == "true", text))
}

/// Whether someone has typed into a field of the page (reloading would lose it).
#[cfg(feature = "hydrate")]
fn edited() -> bool {
    use wasm_bindgen::JsCast;
    let Ok(fields) = document().query_selector_all("main input, main textarea") else {
        return false;
    };
    (0..fields.length()).filter_map(|i| fields.get(i)).any(|n| {
        if let Some(t) = n.dyn_ref::<web_sys::HtmlTextAreaElement>() {
            return Ok(t.value()) != t.default_value();
        }
        match n.dyn_ref::<web_sys::HtmlInputElement>() {
            Some(i) if i.type_() == "checkbox" || i.type_() == "radio" => i.checked() != i.default_checked(),
            Some(i) if i.type_() != "hidden" => i.value() != i.default_value(),
            _ => false,
        }
    })
}

/// The outcome of what this person did just before the page reloaded.
#[island]
pub fn Flash() -> impl IntoView {
    let shown = RwSignal::new(None::<Flash>);
    #[cfg(feature = "hydrate")]
    {
        Effect::new(move |_| shown.set(take_stored()));
        state::HIDE.with(|h| *h.borrow_mut() = Some(Box::new(move || shown.set(None))));
    }
    view! { {move || shown.get().map(Flash::view)} }
}

/// Reload the page when a live event of one of `kinds` arrives (about `call`, when given).
/// With `ask`, a page someone has typed into shows a reload button instead.
#[island]
pub fn ReloadOn(kinds: Vec<String>, #[prop(optional)] call: Option<String>, ask: bool) -> impl IntoView {
    let tr = crate::i18n::use_tr();
    let stale = RwSignal::new(false);
    crate::components::live::on_live_event(move |e| {
        let kind = e.event.kind();
        let about = call.as_deref().is_none_or(|c| e.event.call_id() == Some(c));
        if !about || !kinds.iter().any(|k| k == kind) {
            return;
        }
        #[cfg(feature = "hydrate")]
        if ask && edited() {
            stale.set(true);
            return;
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ask;
        reload();
    });
    view! {
        <Show when=move || stale.get()>
            <p class="notice stale" role="status" data-testid="page-changed">
                {tr.t("refresh.changed")}
                <button type="button" class="link" on:click=move |_| reload()>{tr.t("refresh.reload")}</button>
            </p>
        </Show>
    }
}

/// Reload the page whenever the `fields` of what `url` answers (a JSON object) change,
/// checked every `seconds`: for pages that follow something no live event names (a
/// session's timeline).
#[island]
pub fn PollReload(url: String, fields: Vec<String>, seconds: u64) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    {
        let last = StoredValue::new(None::<String>);
        let check = move || {
            let (url, fields) = (url.clone(), fields.clone());
            leptos::task::spawn_local(async move {
                let Ok((200, body)) = crate::components::post::get(&url).await else {
                    return;
                };
                let Some(version) = crate::components::post::pick(&body, &fields) else {
                    return;
                };
                match last.get_value() {
                    None => last.set_value(Some(version)),
                    Some(before) if before != version && !edited() => reload(),
                    Some(_) => {}
                }
            });
        };
        check();
        if let Ok(h) = set_interval_with_handle(check, std::time::Duration::from_secs(seconds.max(1))) {
            on_cleanup(move || h.clear());
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (url, fields, seconds);
}

/// Marks the page as interactive once every island before it has hydrated (islands
/// hydrate in document order; this one comes last). Browser tests wait for it.
#[island]
pub fn HydratedMark() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    if let Some(b) = document().body() {
        let _ = b.set_attribute("data-hydrated", "true");
    }
}
