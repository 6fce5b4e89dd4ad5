//! Signed one-time links in notifications ("Approve", "Reject"). A link names a call and
//! a verdict and is signed with a key derived from the server key; it only opens a
//! confirm page. Deciding still needs a signed-in reviewer, the page's CSRF token and
//! every rule a decision on the review page meets; the link's nonce is then spent.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// How long a link stays valid.
pub const TTL_MS: i64 = 24 * 3600 * 1000;

#[derive(Clone)]
pub struct Linker {
    key: [u8; 32],
    base: String,
}

/// What a valid link says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    #[serde(rename = "c")]
    pub call_id: String,
    /// `approve` or `reject`.
    #[serde(rename = "v")]
    pub verdict: String,
    #[serde(rename = "e")]
    pub expires_ms: i64,
    #[serde(rename = "n")]
    pub nonce: String,
}

impl Linker {
    pub fn new(key: &crate::agents::ServerKey, public_url: &str) -> Linker {
        Linker {
            key: key.derive("airlock decision links v1"),
            base: public_url.trim_end_matches('/').to_string(),
        }
    }

    /// A fresh link to confirm `verdict` on `call_id`.
    pub fn link(&self, call_id: &str, verdict: &str, now_ms: i64) -> String {
        let link = Link {
            call_id: call_id.into(),
            verdict: verdict.into(),
            expires_ms: now_ms + TTL_MS,
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        };
        format!("{}/confirm?t={}", self.base, self.token(&link))
    }

    pub fn token(&self, link: &Link) -> String {
        let body = B64.encode(serde_json::to_vec(link).unwrap_or_default());
        let sig = B64.encode(self.mac(body.as_bytes()).finalize().into_bytes());
        format!("{body}.{sig}")
    }

    /// The link a token stands for, if it is ours, intact and not expired.
    pub fn open(&self, token: &str, now_ms: i64) -> Result<Link, String> {
        let (body, sig) = token.trim().split_once('.').ok_or("this link is malformed")?;
        let sig = B64.decode(sig).map_err(|_| "this link is malformed")?;
        self.mac(body.as_bytes())
            .verify_slice(&sig)
            .map_err(|_| "this link was not issued by this server (or was altered)")?;
        let link: Link = serde_json::from_slice(&B64.decode(body).map_err(|_| "this link is malformed")?)
            .map_err(|_| "this link is malformed")?;
        if !matches!(link.verdict.as_str(), "approve" | "reject") {
            return Err("this link is malformed".into());
        }
        if link.expires_ms <= now_ms {
            return Err("this link has expired; open the call from the queue".into());
        }
        Ok(link)
    }

    fn mac(&self, body: &[u8]) -> Hmac<Sha256> {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key length");
        m.update(body);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::ServerKey;

    #[test]
    fn links_open_only_intact_unexpired_and_from_this_server() {
        let ours = Linker::new(&ServerKey::from_bytes(&[1u8; 32]), "https://airlock.example/");
        let theirs = Linker::new(&ServerKey::from_bytes(&[2u8; 32]), "https://airlock.example");
        let url = ours.link("tc_1", "approve", 1_000);
        assert!(url.starts_with("https://airlock.example/confirm?t="), "{url}");
        let token = url.split("t=").nth(1).unwrap();
        let link = ours.open(token, 2_000).unwrap();
        assert_eq!((link.call_id.as_str(), link.verdict.as_str()), ("tc_1", "approve"));
        assert!(ours.open(token, 1_000 + TTL_MS).is_err(), "expired");
        assert!(theirs.open(token, 2_000).is_err(), "another key");
        // Another verdict with the old signature does not open.
        let forged = Link {
            verdict: "reject".into(),
            ..link.clone()
        };
        let body = ours.token(&forged);
        let tampered = format!(
            "{}.{}",
            body.split('.').next().unwrap(),
            token.split('.').nth(1).unwrap()
        );
        assert!(ours.open(&tampered, 2_000).is_err());
        assert!(ours.open("garbage", 2_000).is_err());
        assert!(ours.open("a.b", 2_000).is_err());
    }
}
