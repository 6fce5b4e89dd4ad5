//! Errors as clients see them: a status and `{"error": {"code", "message"}}`, where
//! `code` is stable and machine-readable. Internal details are logged, never sent.

use axum::http::StatusCode;
use axum::Json;

pub fn json_error(status: StatusCode, code: &str, message: &str) -> (StatusCode, Json<serde_json::Value>) {
    (
        status,
        Json(serde_json::json!({ "error": { "code": code, "message": message } })),
    )
}
