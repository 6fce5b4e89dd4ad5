//! Airlock's web application: the pages people use, rendered whole on the server. Only
//! the parts that change in the browser are islands (`#[island]`) and ship as wasm: the
//! live queue, the decision buttons, forms that post without leaving the page, clocks, the
//! break-glass banner and the live indicator. Server functions in [`api`] are thin: they
//! take the signed-in user from the request, check the role and the CSRF token, and call
//! the server's [`api::Backend`].

// The review page's view type is deeper than the default limit allows.
#![recursion_limit = "256"]

pub mod api;
pub mod components;
pub mod i18n;
pub mod pages;
pub mod routes;

use components::shell::Layout;
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Meta, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path, SsrMode,
};

/// The HTML document around the app (server only). The CSP nonce comes from the
/// server's security-headers middleware so the header and the inline scripts agree.
#[cfg(feature = "ssr")]
pub fn shell(options: LeptosOptions) -> impl IntoView {
    use leptos::hydration::{AutoReload, HydrationScripts};
    use leptos_meta::HashedStylesheet;
    if let Some(parts) = use_context::<http::request::Parts>() {
        if let Some(n) = parts.extensions.get::<api::CspNonce>() {
            provide_context(leptos::nonce::Nonce::from_value(n.0.clone()));
        }
    }
    let info = api::session_from_request();
    let lang = info.locale.code();
    let session = components::shell::session_json(&info);
    view! {
        <!DOCTYPE html>
        <html lang=lang>
            <head>
                <meta charset="utf-8"/>
                <script type="application/json" id=components::shell::SESSION_SCRIPT inner_html=session></script>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <link rel="icon" href="data:,"/>
                <HashedStylesheet options=options.clone() id="leptos"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options islands=true/>
                <leptos_meta::MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The browser's start: hydrate the page's islands, with the page-wide state every island
/// shares (who is signed in, the live stream, the break-glass board) at their root.
#[cfg(feature = "hydrate")]
pub fn hydrate_islands() {
    leptos::mount::hydrate_islands();
    let session = components::shell::initial_session();
    let signed_in = session.user.is_some();
    provide_context(session);
    let live = components::live::provide_live();
    if signed_in {
        components::break_glass::provide_board();
        components::live::connect(live);
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_context(components::shell::initial_session());
    view! {
        <Title formatter=|t: String| if t.is_empty() { "Airlock".to_string() } else { format!("{t} · Airlock") }/>
        <Meta name="description" content="Airlock: approval gateway and audit dashboard for AI-agent tool calls"/>
        <Router>
            <Layout>
                <Routes fallback=pages::not_found::NotFound>
                    <Route path=path!("/") view=pages::home::Home ssr=SsrMode::Async/>
                    <Route path=path!("/login") view=pages::login::Login ssr=SsrMode::Async/>
                    <Route path=path!("/queue") view=pages::queue::Queue ssr=SsrMode::Async/>
                    <Route path=path!("/calls/:id") view=pages::review::Review ssr=SsrMode::Async/>
                    <Route path=path!("/grants") view=pages::grants::Grants ssr=SsrMode::Async/>
                    <Route path=path!("/confirm") view=pages::confirm::Confirm ssr=SsrMode::Async/>
                    <Route path=path!("/oncall") view=pages::oncall::OnCall ssr=SsrMode::Async/>
                    <Route path=path!("/audit") view=pages::audit::Audit ssr=SsrMode::Async/>
                    <Route path=path!("/audit/sessions/:id") view=pages::trace::SessionTrace ssr=SsrMode::Async/>
                    <Route path=path!("/audit/traces/:id") view=pages::trace::TraceIdTrace ssr=SsrMode::Async/>
                    <Route path=path!("/stats") view=pages::stats::Stats ssr=SsrMode::Async/>
                    <Route path=path!("/admin") view=pages::admin::Admin ssr=SsrMode::Async/>
                    <Route path=path!("/admin/policy") view=pages::policy::Policy ssr=SsrMode::Async/>
                    <Route path=path!("/admin/policy/replay") view=pages::policy::Replay ssr=SsrMode::Async/>
                </Routes>
            </Layout>
        </Router>
    }
}
