//! `POST /login` and `POST /logout`: plain HTML forms (work without JavaScript).
//! Browsers (Accept: text/html) get 303 redirects; other clients get JSON with a status
//! and a machine-readable `code`.

use super::csrf::token_ok;
use super::password::{self, Password};
use super::session::{new_token, CSRF, EPOCH, UID};
use crate::error::json_error;
use crate::state::AppState;
use crate::store::users;
use app::api::RequestAuth;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use serde::Deserialize;
use std::net::SocketAddr;
use tower_sessions::Session;

#[derive(Deserialize)]
pub struct LoginForm {
    username: String,
    password: String,
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    next: String,
}

impl std::fmt::Debug for LoginForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginForm")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

fn wants_html(h: &HeaderMap) -> bool {
    h.get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

/// A local path to return to after sign-in, or nothing.
fn safe_next(next: &str) -> Option<&str> {
    let ok = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && !next.contains("://")
        && next.chars().all(|c| !c.is_control());
    ok.then_some(next)
}

fn failure(html: bool, status: StatusCode, code: &'static str, message: &str, next: &str) -> Response {
    if html {
        let mut to = format!("/login?error={code}");
        if let Some(n) = safe_next(next) {
            to.push_str("&next=");
            to.push_str(&url::form_urlencoded::byte_serialize(n.as_bytes()).collect::<String>());
        }
        Redirect::to(&to).into_response()
    } else {
        json_error(status, code, message).into_response()
    }
}

#[tracing::instrument(skip_all, fields(username = %form.username.trim()))]
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    session: Session,
    Extension(auth): Extension<RequestAuth>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let html = wants_html(&headers);
    if !token_ok(auth.csrf_token.as_deref(), &form.csrf_token) {
        return failure(
            html,
            StatusCode::FORBIDDEN,
            "expired",
            "the sign-in form expired; reload it",
            &form.next,
        );
    }
    if let Err(secs) = state.throttle.attempt(&form.username, peer.ip()).await {
        tracing::warn!(ip = %peer.ip(), "sign-in throttled");
        let mut r = failure(
            html,
            StatusCode::TOO_MANY_REQUESTS,
            "throttled",
            "too many sign-in attempts",
            &form.next,
        );
        if !html {
            r.headers_mut().insert(header::RETRY_AFTER, secs.into());
        }
        return r;
    }
    let record = match users::by_username(&state.db, form.username.trim()).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "sign-in lookup failed");
            return json_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "try again shortly").into_response();
        }
    };
    let ok = password::verify(
        Password::new(form.password.clone()),
        record.as_ref().map(|r| r.password_hash.clone()),
    )
    .await;
    let Some(user) = record.filter(|_| ok) else {
        tracing::info!("sign-in failed");
        return failure(
            html,
            StatusCode::UNAUTHORIZED,
            "invalid",
            "wrong username or password",
            &form.next,
        );
    };
    if user.view.disabled {
        tracing::info!("sign-in refused: account disabled");
        return failure(
            html,
            StatusCode::FORBIDDEN,
            "disabled",
            "this account is disabled",
            &form.next,
        );
    }
    // A fresh session id at sign-in (no fixation), with a fresh CSRF token.
    let stored = async {
        session.cycle_id().await?;
        session.insert(UID, user.view.id).await?;
        session.insert(EPOCH, user.session_epoch).await?;
        session.insert(CSRF, new_token()).await
    };
    if let Err(e) = stored.await {
        tracing::error!(error = %e, "storing the session failed");
        return json_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "try again shortly").into_response();
    }
    tracing::info!(role = %user.view.role, "signed in");
    if html {
        let to = safe_next(&form.next).unwrap_or(app::routes::home_for(user.view.role));
        Redirect::to(to).into_response()
    } else {
        axum::Json(serde_json::json!({ "user": user.view })).into_response()
    }
}

#[derive(Deserialize)]
pub struct LogoutForm {
    #[serde(default)]
    csrf_token: String,
}

pub async fn logout(
    session: Session,
    Extension(auth): Extension<RequestAuth>,
    headers: HeaderMap,
    Form(form): Form<LogoutForm>,
) -> Response {
    if !token_ok(auth.csrf_token.as_deref(), &form.csrf_token) {
        return json_error(StatusCode::FORBIDDEN, "csrf_token", "missing or wrong CSRF token").into_response();
    }
    if let Err(e) = session.flush().await {
        tracing::error!(error = %e, "ending the session failed");
    }
    if wants_html(&headers) {
        Redirect::to("/login?error=signed_out").into_response()
    } else {
        StatusCode::NO_CONTENT.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_local_paths_are_followed_after_sign_in() {
        assert_eq!(safe_next("/queue"), Some("/queue"));
        assert_eq!(safe_next("/admin?x=1"), Some("/admin?x=1"));
        for bad in ["", "//evil.example", "https://evil.example", "/\\evil", "queue", "/x\n"] {
            assert_eq!(safe_next(bad), None, "{bad:?}");
        }
    }
}
