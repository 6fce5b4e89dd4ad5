//! The frame of every page: header with navigation by role, live-connection indicator,
//! theme switch and sign-out; plus the session context pages read. Rendered by the
//! server; the indicator, the theme switch and the break-glass banner are islands.

use crate::api::{Role, SessionInfo, CSRF_FIELD};
use crate::components::break_glass::{provide_board, BreakGlassBanner};
use crate::components::live::{provide_live, LiveIndicator};
use crate::components::post::PostForm;
use crate::components::refresh::{Flash, HydratedMark};
use crate::i18n::{tr_key, use_tr, Locale};
use crate::routes;
use leptos::prelude::*;
use leptos_router::hooks::use_location;

/// Who is signed in. The server knows it before rendering (the auth middleware put it in
/// the request) and writes it into the page; the browser reads it from there when the
/// page starts and provides it to every island. So nothing waits on a resource for it.
pub fn use_session() -> SessionInfo {
    use_context::<SessionInfo>().unwrap_or_default()
}

/// Id of the `<script type="application/json">` that carries the session into the page.
pub const SESSION_SCRIPT: &str = "airlock-session";

/// The session for this render: from the request on the server, from the page in the browser.
pub fn initial_session() -> SessionInfo {
    #[cfg(feature = "ssr")]
    {
        crate::api::session_from_request()
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        document()
            .get_element_by_id(SESSION_SCRIPT)
            .and_then(|e| e.text_content())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        SessionInfo::default()
    }
}

/// The session as JSON safe inside a `<script>` element.
pub fn session_json(info: &SessionInfo) -> String {
    serde_json::to_string(info).unwrap_or_default().replace('<', "\\u003c")
}

#[component]
pub fn Layout(children: Children) -> impl IntoView {
    provide_live();
    let signed_in = use_session().user.is_some();
    if signed_in {
        provide_board();
    }
    let bar = use_session()
        .user
        .map(|u| view! { <SignedInBar role=u.role username=u.username csrf_token=use_session().csrf_token/> });
    let tr = use_tr();
    view! {
        <a class="skip" href="#main">{tr.t("shell.skip")}</a>
        <Header>{bar}</Header>
        {signed_in.then(|| view! { <BreakGlassBanner/> })}
        <main id="main" tabindex="-1">
            <Flash/>
            {children()}
        </main>
        <HydratedMark/>
    }
}

#[component]
fn Header(children: Children) -> impl IntoView {
    view! {
        <header class="topbar">
            <a class="brand" href="/">
                <span class="logo" aria-hidden="true">"◆"</span>
                " Airlock"
            </a>
            {children()}
            // Signed in, the switch is in the menu (with the account); signed out, here.
            {use_session().user.is_none().then(|| view! { <LanguageSwitch/> })}
            <ThemeToggle/>
        </header>
    }
}

#[component]
fn SignedInBar(role: Role, username: String, csrf_token: String) -> impl IntoView {
    let location = use_location();
    let reads_audit = use_session().reads_audit;
    let tr = use_tr();
    let links = routes::PAGES
        .iter()
        .filter(|p| routes::opens(p, role, reads_audit))
        .map(|p| {
            let path = p.path;
            let current = move || (location.pathname.get() == path).then_some("page");
            view! { <li><a href=path aria-current=current>{tr.t(p.label)}</a></li> }
        })
        .collect_view();
    // On a phone the navigation and the account fold behind one "Menu" button (a
    // <details>, so it works without JavaScript); on wider screens they show inline.
    view! {
        <LiveIndicator/>
        <details class="menu" data-testid="menu">
            <summary>{tr.t("shell.menu")}</summary>
            <div class="menu-body">
                <nav aria-label=tr.t("shell.nav_label")>
                    <ul class="nav">{links}</ul>
                </nav>
                <div class="who">
                    <span class="user" title=tr.t("shell.signed_in")>{username}</span>
                    <span class="role-badge">{tr.t(role_key(role))}</span>
                    <form method="post" action="/logout" class="inline">
                        <input type="hidden" name=CSRF_FIELD value=csrf_token/>
                        <button type="submit" class="link">{tr.t("shell.sign_out")}</button>
                    </form>
                    <LanguageSwitch/>
                </div>
            </div>
        </details>
    }
}

/// Light / dark switch. Without JS the system preference applies (CSS media query).
#[island]
fn ThemeToggle() -> impl IntoView {
    let tr = use_tr();
    let dark = RwSignal::new(None::<bool>);
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        {
            let stored = window()
                .local_storage()
                .ok()
                .flatten()
                .and_then(|s| s.get_item("airlock-theme").ok().flatten());
            let system_dark = window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
                .is_some_and(|m| m.matches());
            dark.set(Some(stored.map_or(system_dark, |t| t == "dark")));
        }
    });
    Effect::new(move |_| {
        let Some(d) = dark.get() else { return };
        #[cfg(feature = "hydrate")]
        {
            if let Some(html) = document().document_element() {
                let _ = html.set_attribute("data-theme", if d { "dark" } else { "light" });
            }
            if let Some(s) = window().local_storage().ok().flatten() {
                let _ = s.set_item("airlock-theme", if d { "dark" } else { "light" });
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = d;
    });
    view! {
        <button
            type="button"
            class="theme-toggle"
            aria-pressed=move || dark.get().unwrap_or(false).to_string()
            disabled=move || dark.get().is_none()
            on:click=move |_| dark.update(|d| *d = Some(!d.unwrap_or(false)))
        >
            {move || if dark.get().unwrap_or(false) { format!("☀ {}", tr.t("shell.theme_light")) } else { format!("☾ {}", tr.t("shell.theme_dark")) }}
        </button>
    }
}

/// Render `children` only for the roles that may open `path`; otherwise say why, with
/// the right status code during server rendering.
#[component]
pub fn Guarded(path: &'static str, children: ChildrenFn) -> impl IntoView {
    let page = routes::page(path);
    let tr = use_tr();
    match use_session().user {
        None => {
            set_status(401);
            view! {
                <section class="card narrow">
                    <h1>{tr.t("guard.sign_in_title")}</h1>
                    <p><a href=format!("/login?next={path}")>{tr.t("guard.sign_in_link")}</a>{tr.t("guard.sign_in_rest")}</p>
                </section>
            }
            .into_any()
        }
        Some(u) if page.is_some_and(|p| !routes::opens(p, u.role, use_session().reads_audit)) => {
            set_status(403);
            view! {
                <section class="card narrow">
                    <h1>{tr.t("guard.forbidden_title")}</h1>
                    <p>{tr.f("guard.forbidden_text", &[("role", tr.t(role_key(u.role)))])}</p>
                    <p><a href=routes::home_for(u.role)>{tr.t("guard.start_page")}</a></p>
                </section>
            }
            .into_any()
        }
        Some(_) => children().into_any(),
    }
}

/// Set the HTTP status of the server-rendered response (no-op in the browser).
pub fn set_status(code: u16) {
    #[cfg(feature = "ssr")]
    if let Some(r) = use_context::<leptos_axum::ResponseOptions>() {
        if let Ok(s) = http::StatusCode::from_u16(code) {
            r.set_status(s);
        }
    }
    #[cfg(not(feature = "ssr"))]
    let _ = code;
}

/// The catalogue key of a role's name.
pub fn role_key(role: Role) -> &'static str {
    match role {
        Role::Admin => tr_key("role.admin"),
        Role::Reviewer => tr_key("role.reviewer"),
        Role::Oncall => tr_key("role.oncall"),
        Role::Auditor => tr_key("role.auditor"),
    }
}

/// The other language, one click away (remembered for the person; a cookie when signed out).
#[component]
fn LanguageSwitch() -> impl IntoView {
    let session = use_session();
    let current = session.locale;
    let tr = use_tr();
    let others = Locale::ALL
        .into_iter()
        .filter(|l| *l != current)
        .map(|l| {
            let csrf = session.csrf_token.clone();
            view! {
                <PostForm action="/api/locale".to_string() class="inline lang-switch".to_string()
                    testid=format!("lang-{}", l.code())>
                    <input type="hidden" name=CSRF_FIELD value=csrf/>
                    <input type="hidden" name="locale" value=l.code()/>
                    <button type="submit" lang=l.code() title=tr.t("shell.language")>{l.name()}</button>
                </PostForm>
            }
        })
        .collect_view();
    // Signed-out pages other than the sign-in page carry no form token: nothing to switch.
    (!session.csrf_token.is_empty()).then_some(others)
}
