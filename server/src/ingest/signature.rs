//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256(key, "{id}.{ts}.{body}")>`,
//! several space-separated in one header during a secret rotation. Comparison is
//! constant-time (`verify_slice`); an empty or malformed signature never matches.

use crate::agents::SigningSecret;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How far a timestamp may be from the server's clock, either way.
pub const TOLERANCE_SECS: i64 = 300;

/// Why a signed request was refused; `code()` is part of the agent API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureError {
    MissingHeader(&'static str),
    BadTimestamp,
    Stale,
    Future,
    Malformed,
    Mismatch,
}

impl SignatureError {
    pub fn code(self) -> &'static str {
        match self {
            SignatureError::MissingHeader(_) => "missing_signature",
            SignatureError::BadTimestamp => "bad_timestamp",
            SignatureError::Stale => "stale_timestamp",
            SignatureError::Future => "future_timestamp",
            SignatureError::Malformed => "malformed_signature",
            SignatureError::Mismatch => "bad_signature",
        }
    }

    pub fn message(self) -> String {
        match self {
            SignatureError::MissingHeader(h) => format!("the {h} header is required"),
            SignatureError::BadTimestamp => "webhook-timestamp must be unix seconds".into(),
            SignatureError::Stale => format!("webhook-timestamp is more than {TOLERANCE_SECS} s in the past"),
            SignatureError::Future => format!("webhook-timestamp is more than {TOLERANCE_SECS} s in the future"),
            SignatureError::Malformed => "webhook-signature holds no well-formed v1 signature".into(),
            SignatureError::Mismatch => "no signature matches this agent's secret".into(),
        }
    }
}

/// Check the timestamp against `now` (unix seconds).
pub fn check_timestamp(raw: &str, now: i64) -> Result<i64, SignatureError> {
    let ts: i64 = raw.trim().parse().map_err(|_| SignatureError::BadTimestamp)?;
    if ts < now - TOLERANCE_SECS {
        return Err(SignatureError::Stale);
    }
    if ts > now + TOLERANCE_SECS {
        return Err(SignatureError::Future);
    }
    Ok(ts)
}

fn mac(secret: &SigningSecret, id: &str, ts: &str, body: &[u8]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.bytes()).expect("HMAC takes any key length");
    m.update(id.as_bytes());
    m.update(b".");
    m.update(ts.as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// The header value for one secret (used by the demo agent, callbacks and tests).
pub fn sign(secret: &SigningSecret, id: &str, ts: &str, body: &[u8]) -> String {
    format!("v1,{}", B64.encode(mac(secret, id, ts, body).finalize().into_bytes()))
}

/// The four headers of a signed agent request, timestamped now. `payload` is the body for
/// `POST /api/v1/tool-calls`, and [`bound_payload`] for every other request.
pub fn agent_headers(
    secret: &SigningSecret,
    agent: &str,
    message_id: &str,
    payload: &[u8],
) -> [(&'static str, String); 4] {
    let ts = (crate::store::now_ms() / 1000).to_string();
    let sig = sign(secret, message_id, &ts, payload);
    [
        ("airlock-agent", agent.to_string()),
        ("webhook-id", message_id.to_string()),
        ("webhook-timestamp", ts),
        ("webhook-signature", sig),
    ]
}

/// What requests other than the ingest POST sign: `"{METHOD} {path?query}\n{body}"`, so a
/// captured signature cannot be replayed against another call or method.
pub fn bound_payload(method: &str, target: &str, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(method.len() + target.len() + body.len() + 2);
    v.extend_from_slice(method.as_bytes());
    v.push(b' ');
    v.extend_from_slice(target.as_bytes());
    v.push(b'\n');
    v.extend_from_slice(body);
    v
}

/// Does any `v1` signature in `header` match any of `secrets`?
pub fn verify(secrets: &[SigningSecret], id: &str, ts: &str, body: &[u8], header: &str) -> Result<(), SignatureError> {
    let mut candidates = Vec::new();
    for part in header.split(' ').filter(|p| !p.is_empty()) {
        let Some((version, sig)) = part.split_once(',') else {
            continue;
        };
        if version != "v1" {
            continue; // other schemes (v1a: asymmetric) are not used by Airlock
        }
        match B64.decode(sig) {
            Ok(bytes) if bytes.len() == 32 => candidates.push(bytes),
            _ => {}
        }
    }
    if candidates.is_empty() {
        return Err(SignatureError::Malformed);
    }
    for secret in secrets {
        let m = mac(secret, id, ts, body);
        for c in &candidates {
            if m.clone().verify_slice(c).is_ok() {
                return Ok(());
            }
        }
    }
    Err(SignatureError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const TS: &str = "1649367553";
    const BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const EXPECTED: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";

    fn secret() -> SigningSecret {
        SigningSecret::parse(SECRET).unwrap()
    }

    #[test]
    fn agent_headers_carry_a_fresh_signature_bound_to_method_and_path() {
        let payload = bound_payload("GET", "/api/v1/tool-calls/tc_1?wait=5", b"");
        assert_eq!(payload, b"GET /api/v1/tool-calls/tc_1?wait=5\n");
        let h = agent_headers(&secret(), "support-bot", "msg_1", &payload);
        let names: Vec<&str> = h.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            ["airlock-agent", "webhook-id", "webhook-timestamp", "webhook-signature"]
        );
        assert_eq!((h[0].1.as_str(), h[1].1.as_str()), ("support-bot", "msg_1"));
        let now = crate::store::now_ms() / 1000;
        assert!(check_timestamp(&h[2].1, now).is_ok());
        assert_eq!(verify(&[secret()], "msg_1", &h[2].1, &payload, &h[3].1), Ok(()));
        let other = bound_payload("GET", "/api/v1/tool-calls/tc_2?wait=5", b"");
        assert_eq!(
            verify(&[secret()], "msg_1", &h[2].1, &other, &h[3].1),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn signing_matches_the_standard_webhooks_test_vector() {
        assert_eq!(sign(&secret(), ID, TS, BODY), EXPECTED);
        assert_eq!(verify(&[secret()], ID, TS, BODY, EXPECTED), Ok(()));
    }

    #[test]
    fn any_of_several_signatures_and_secrets_may_match() {
        let other = SigningSecret::generate();
        let header = format!("v1,Zm9vYmFyYmF6Zm9vYmFyYmF6Zm9vYmFyYmF6MTIzNDU= {EXPECTED}");
        assert_eq!(verify(&[other.clone(), secret()], ID, TS, BODY, &header), Ok(()));
        assert_eq!(verify(&[other], ID, TS, BODY, EXPECTED), Err(SignatureError::Mismatch));
    }

    #[test]
    fn empty_and_malformed_signatures_never_match() {
        for h in ["", "v1,", "v1, ", "v1", "v2,abc", "v1,not-base64!", "v1,AAAA", " v1,"] {
            assert_eq!(
                verify(&[secret()], ID, TS, BODY, h),
                Err(SignatureError::Malformed),
                "{h:?}"
            );
        }
    }

    #[test]
    fn any_change_to_id_timestamp_or_body_breaks_the_signature() {
        let s = [secret()];
        assert!(verify(&s, "msg_other", TS, BODY, EXPECTED).is_err());
        assert!(verify(&s, ID, "1649367554", BODY, EXPECTED).is_err());
        assert!(verify(
            &s,
            ID,
            TS,
            br#"{"email":"test@example.com","username":"test_usr"}"#,
            EXPECTED
        )
        .is_err());
    }

    #[test]
    fn timestamps_are_accepted_within_five_minutes_either_way() {
        assert_eq!(check_timestamp("1000", 1300), Ok(1000));
        assert_eq!(check_timestamp("1600", 1300), Ok(1600));
        assert_eq!(check_timestamp("999", 1300), Err(SignatureError::Stale));
        assert_eq!(check_timestamp("1601", 1300), Err(SignatureError::Future));
        assert_eq!(check_timestamp("12e3", 1300), Err(SignatureError::BadTimestamp));
        assert_eq!(check_timestamp("", 1300), Err(SignatureError::BadTimestamp));
    }
}
