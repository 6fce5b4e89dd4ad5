//! The auditor's HTTP endpoints beside the pages: export of a search, and the latest
//! signed checkpoint with its public key. Both need a signed-in user who may read the
//! audit trail; exports are recorded in the trail (who, which search, which format).

use super::export::{stream, Format};
use crate::error::json_error;
use crate::state::AppState;
use crate::store;
use app::api::{AuditQuery, RequestAuth, Role, UserView};
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;

fn reader(state: &AppState, auth: RequestAuth) -> Result<UserView, Box<Response>> {
    let Some(user) = auth.user else {
        return Err(Box::new(
            json_error(StatusCode::UNAUTHORIZED, "unauthenticated", "sign in first").into_response(),
        ));
    };
    let open = user.role.may(app::api::Permission::ReadAudit)
        || (state.config.reviewers_read_audit && user.role == Role::Reviewer);
    if !open {
        return Err(Box::new(
            json_error(
                StatusCode::FORBIDDEN,
                "forbidden",
                &format!("your role ({}) may not read the audit trail", user.role),
            )
            .into_response(),
        ));
    }
    Ok(user)
}

fn unavailable(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "audit endpoint");
    json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "the audit trail could not be read; try again",
    )
    .into_response()
}

/// `GET /api/audit/export?format=jsonl|csv&<search>`: every matching event, streamed.
pub async fn export(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    RawQuery(raw): RawQuery,
) -> Response {
    let user = match reader(&state, auth) {
        Ok(u) => u,
        Err(r) => return *r,
    };
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .into_owned()
        .collect();
    let query = AuditQuery::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let format = pairs
        .iter()
        .find(|(k, _)| k == "format")
        .map_or("", |(_, v)| v.as_str());
    let format = match Format::parse(format) {
        Ok(f) => f,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "invalid_query", &e).into_response(),
    };
    let now = store::now_ms();
    let plan = match super::search::plan(&query, now) {
        Ok(p) => p,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, "invalid_query", &e).into_response(),
    };
    if let Err(e) = state.search.catch_up().await {
        return unavailable(e);
    }
    let ev = super::NewEvent {
        kind: "audit_exported",
        actor: format!("user:{}", user.username),
        call_id: None,
        session_id: None,
        data: serde_json::json!({"query": query.to_query_string(), "format": format.extension()}),
    };
    if let Err(e) = store::record_audit(&state.db, now, &ev).await {
        return unavailable(e);
    }
    let name = format!(
        "airlock-audit-{}.{}",
        super::search::rfc3339(now).replace([':', '.'], "-"),
        format.extension()
    );
    (
        [
            (header::CONTENT_TYPE, format.content_type().to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        Body::from_stream(stream(state.search.clone(), plan, format)),
    )
        .into_response()
}

/// `GET /api/audit/checkpoint`: the public key and the newest signed checkpoint, to be
/// kept somewhere this server cannot write (`airlock audit verify --checkpoint FILE`).
pub async fn checkpoint(State(state): State<AppState>, Extension(auth): Extension<RequestAuth>) -> Response {
    if let Err(r) = reader(&state, auth) {
        return *r;
    }
    match super::checkpoint::latest(&state.db).await {
        Ok(c) => (
            [(header::CACHE_CONTROL, "no-store")],
            axum::Json(super::checkpoint::Kept::new(&state.signer, c)),
        )
            .into_response(),
        Err(e) => unavailable(e),
    }
}
