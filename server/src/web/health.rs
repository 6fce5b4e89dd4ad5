//! `/healthz`: the process answers. `/readyz`: it can serve (database answers, policy
//! loaded, not shutting down); load balancers route on this one.

use crate::state::AppState;
use crate::store;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let db = store::ping(&state.db).await;
    let stopping = state.stopping.load(Ordering::Relaxed);
    let ready = db && !stopping;
    let policy = state.policy.get();
    let body = json!({
        "status": if ready { "ready" } else { "not_ready" },
        "database": if db { "ok" } else { "unavailable" },
        "policy": { "name": policy.name, "version": &*policy.version },
        "shutting_down": stopping,
    });
    (
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(body),
    )
}
