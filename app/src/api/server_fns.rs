//! Server functions: every one is a public endpoint, so each authorises inside itself.
//! Read-only ones are GET (no CSRF token needed); every state-changing one takes the
//! CSRF token as its first argument (forms carry it as a hidden field) and checks it.

use super::{Role, SessionInfo, UserView};
use leptos::prelude::*;
use leptos::server_fn::codec::GetUrl;

#[cfg(feature = "ssr")]
mod guard {
    use crate::api::{BackendError, RequestAuth, Role, SharedBackend, UserView};
    use leptos::prelude::*;

    pub fn auth() -> RequestAuth {
        use_context::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<RequestAuth>().cloned())
            .unwrap_or_default()
    }

    pub fn backend() -> Result<SharedBackend, ServerFnError> {
        use_context::<SharedBackend>().ok_or_else(|| ServerFnError::new("server is not ready"))
    }

    use crate::components::shell::set_status as status;

    /// The signed-in user, if their role is one of `roles`.
    pub fn require(roles: &[Role]) -> Result<UserView, ServerFnError> {
        let Some(user) = auth().user else {
            status(401);
            return Err(ServerFnError::new("sign in first"));
        };
        if !roles.contains(&user.role) {
            status(403);
            return Err(ServerFnError::new(format!("your role ({}) may not do this", user.role)));
        }
        Ok(user)
    }

    /// [`require`] plus the CSRF token check for state-changing calls.
    pub fn require_csrf(roles: &[Role], token: &str) -> Result<UserView, ServerFnError> {
        let user = require(roles)?;
        let expected = auth().csrf_token.unwrap_or_default();
        if expected.is_empty() || !constant_time_eq(expected.as_bytes(), token.as_bytes()) {
            status(403);
            return Err(ServerFnError::new(
                "the form has expired; reload the page and try again",
            ));
        }
        Ok(user)
    }

    fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    pub fn map_err(e: BackendError) -> ServerFnError {
        match e {
            BackendError::Invalid(_) | BackendError::Conflict(_) => status(400),
            BackendError::NotFound => status(404),
            BackendError::Internal(_) => status(500),
        }
        ServerFnError::new(e.to_string())
    }
}

/// Who is signed in, and the CSRF token for forms.
#[server(endpoint = "session", input = GetUrl)]
pub async fn get_session() -> Result<SessionInfo, ServerFnError> {
    let a = guard::auth();
    Ok(SessionInfo {
        user: a.user,
        csrf_token: a.csrf_token.unwrap_or_default(),
    })
}

#[server(endpoint = "users/list", input = GetUrl)]
pub async fn list_users() -> Result<Vec<UserView>, ServerFnError> {
    guard::require(&[Role::Admin])?;
    guard::backend()?.list_users().await.map_err(guard::map_err)
}

#[server(endpoint = "users/add")]
pub async fn add_user(
    csrf_token: String,
    username: String,
    password: String,
    role: Role,
) -> Result<UserView, ServerFnError> {
    let actor = guard::require_csrf(&[Role::Admin], &csrf_token)?;
    guard::backend()?
        .add_user(&actor, &username, &password, role)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "users/role")]
pub async fn set_role(csrf_token: String, user_id: i64, role: Role) -> Result<(), ServerFnError> {
    let actor = guard::require_csrf(&[Role::Admin], &csrf_token)?;
    guard::backend()?
        .set_role(&actor, user_id, role)
        .await
        .map_err(guard::map_err)
}

#[server(endpoint = "users/disabled")]
pub async fn set_disabled(csrf_token: String, user_id: i64, disabled: bool) -> Result<(), ServerFnError> {
    let actor = guard::require_csrf(&[Role::Admin], &csrf_token)?;
    guard::backend()?
        .set_disabled(&actor, user_id, disabled)
        .await
        .map_err(guard::map_err)
}

/// Turn a server-function error into the sentence a person should read.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => m.clone(),
        ServerFnError::Request(_) => "the server could not be reached; check your connection".into(),
        _ => "something went wrong; try again".into(),
    }
}
