//! Sessions (tower-sessions, stored in the database) and the middleware that turns the
//! session cookie into the signed-in user for everything downstream.

use crate::state::AppState;
use crate::store::users;
use app::api::RequestAuth;
use app::i18n::Locale;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;
use tower_sessions::Session;

pub const UID: &str = "uid";
pub const EPOCH: &str = "epoch";
pub const CSRF: &str = "csrf";

/// 256 random bits, URL-safe.
pub fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// Resolve the session's user (dropping sessions of disabled users or of users whose
/// password or role changed since) and put a [`RequestAuth`] into the request.
pub async fn load_auth(State(state): State<AppState>, session: Session, mut req: Request, next: Next) -> Response {
    let mut auth = RequestAuth::default();
    let mut chosen = None;
    if let Ok(Some(uid)) = session.get::<i64>(UID).await {
        let epoch = session.get::<i64>(EPOCH).await.ok().flatten();
        match users::by_id(&state.db, uid).await {
            Ok(Some(u)) if !u.view.disabled && Some(u.session_epoch) == epoch => {
                chosen = u.locale.as_deref().and_then(Locale::from_tag);
                auth.user = Some(u.view);
            }
            Ok(_) => {
                let _ = session.flush().await;
            }
            Err(e) => tracing::error!(error = %e, "loading the session user failed"),
        }
    }
    auth.csrf_token = session.get::<String>(CSRF).await.ok().flatten();
    // Anonymous visitors get a token only where there is a form for them: the sign-in page.
    if auth.csrf_token.is_none() && req.uri().path() == "/login" && req.method() == http::Method::GET {
        let t = new_token();
        if session.insert(CSRF, &t).await.is_ok() {
            auth.csrf_token = Some(t);
        }
    }
    auth.locale = chosen
        .or_else(|| cookie_locale(req.headers()))
        .or_else(|| {
            req.headers()
                .get(http::header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Locale::negotiate)
        })
        .unwrap_or_default();
    req.extensions_mut().insert(auth);
    next.run(req).await
}

/// The language in the `airlock_lang` cookie, if any.
fn cookie_locale(headers: &http::HeaderMap) -> Option<Locale> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(app::i18n::COOKIE)?.strip_prefix('='))
        .and_then(Locale::from_tag)
}
