//! Slack-style interaction requests (`POST /api/slack/interactions`): a reviewer pressed
//! Approve or Reject on a notification. Accepted only with a valid `X-Slack-Signature`
//! (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}` with the app's signing secret) and a
//! timestamp within five minutes. Even then nothing is decided: the answer is a fresh
//! signed link to the confirm page, where the reviewer signs in and confirms.

use crate::audit::NewEvent;
use crate::error::json_error;
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, KeyInit, Mac};
use secrecy::ExposeSecret;
use serde_json::{json, Value};
use sha2::Sha256;

/// Largest interaction body read.
pub const MAX_BODY: usize = 64 * 1024;

pub async fn interactions(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(secret) = state.config.notify.slack_signing_secret.as_ref() else {
        return json_error(
            StatusCode::NOT_FOUND,
            "not_configured",
            "no Slack signing secret is configured",
        )
        .into_response();
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(ts), Some(sig)) = (header("x-slack-request-timestamp"), header("x-slack-signature")) else {
        return refuse(
            &state,
            peer,
            "missing_signature",
            "X-Slack-Signature and X-Slack-Request-Timestamp are required",
        );
    };
    if let Err(e) = crate::ingest::signature::check_timestamp(ts, crate::store::now_ms() / 1000) {
        return refuse(
            &state,
            peer,
            e.code(),
            &e.message().replace("webhook-timestamp", "X-Slack-Request-Timestamp"),
        );
    }
    if !signature_ok(secret.expose_secret().as_bytes(), ts, &body, sig) {
        return refuse(
            &state,
            peer,
            "bad_signature",
            "the signature does not match the signing secret",
        );
    }
    let Some((action, call, user)) = parse(&body) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            "invalid_payload",
            "expected a block_actions payload",
        )
        .into_response();
    };
    state.ledger.audit(NewEvent {
        kind: "slack_interaction",
        actor: "system".into(),
        call_id: Some(call.clone()),
        session_id: None,
        data: json!({"action": action, "slack_user": user}),
    });
    let text = match action.as_str() {
        "approve" | "reject" => format!(
            "To {action} this call, open {} — you sign in and confirm there; a button alone never decides.",
            state.links.link(&call, &action, crate::store::now_ms())
        ),
        _ => format!(
            "Open {}/calls/{call} to review it.",
            state.config.notify.public_url.trim_end_matches('/')
        ),
    };
    axum::Json(json!({"response_type": "ephemeral", "replace_original": false, "text": text})).into_response()
}

/// Refused interactions are audited (a forged button press is worth knowing about), a
/// burst per address and then one a second, like refused agent requests: a flood of
/// forgeries cannot flood the trail.
fn refuse(state: &AppState, peer: std::net::SocketAddr, code: &'static str, message: &str) -> Response {
    if state.auth_failures.check_key(&peer.ip()).is_ok() {
        state.ledger.audit(NewEvent {
            kind: "slack_interaction_refused",
            actor: "system".into(),
            call_id: None,
            session_id: None,
            data: json!({"code": code, "address": peer.ip().to_string()}),
        });
    }
    json_error(StatusCode::UNAUTHORIZED, code, message).into_response()
}

/// `v0=` + hex HMAC-SHA256 over `v0:{ts}:{body}`, compared in constant time.
pub fn signature_ok(secret: &[u8], ts: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_sig) = header.trim().strip_prefix("v0=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else { return false };
    mac(secret, ts, body).verify_slice(&sig).is_ok()
}

/// The signature header for a body (tests and local tools sign with it).
pub fn sign(secret: &[u8], ts: &str, body: &[u8]) -> String {
    format!("v0={}", hex::encode(mac(secret, ts, body).finalize().into_bytes()))
}

fn mac(secret: &[u8], ts: &str, body: &[u8]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("any key length");
    m.update(b"v0:");
    m.update(ts.as_bytes());
    m.update(b":");
    m.update(body);
    m
}

/// (action id, call id, Slack user) of a `block_actions` payload (`payload=<json>` form).
fn parse(body: &[u8]) -> Option<(String, String, String)> {
    let payload = url::form_urlencoded::parse(body).find(|(k, _)| k == "payload")?.1;
    let v: Value = serde_json::from_str(&payload).ok()?;
    let action = v["actions"].get(0)?;
    let id = action["action_id"].as_str()?;
    if !matches!(id, "approve" | "reject" | "open") {
        return None;
    }
    let call = action["value"]
        .as_str()
        .filter(|c| c.starts_with("tc_") && c.len() <= 64)?;
    let user = v["user"]["username"]
        .as_str()
        .or(v["user"]["id"].as_str())
        .unwrap_or("");
    Some((id.to_string(), call.to_string(), user.chars().take(64).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_signing_secret_signs_and_payloads_name_a_call() {
        let body =
            b"payload=%7B%22actions%22%3A%5B%7B%22action_id%22%3A%22approve%22%2C%22value%22%3A%22tc_1%22%7D%5D%7D";
        let sig = sign(b"s3cret", "100", body);
        assert!(signature_ok(b"s3cret", "100", body, &sig));
        assert!(!signature_ok(b"other", "100", body, &sig));
        assert!(!signature_ok(b"s3cret", "101", body, &sig));
        assert!(!signature_ok(b"s3cret", "100", b"payload=x", &sig));
        assert!(!signature_ok(b"s3cret", "100", body, "v1=00"));
        assert_eq!(parse(body).map(|p| p.1), Some("tc_1".to_string()));
        assert!(parse(b"payload=%7B%7D").is_none());
    }
}
