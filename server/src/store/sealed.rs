//! Arguments that held a secret, sealed at rest. The agent must get back what it proposed
//! (or a reviewer's modification carrying a secret they were allowed to retype), so the
//! raw arguments are kept until `raw_arguments_days` — but never in clear: when redaction
//! masked something, the raw text is stored as `sealed:v1:<base64(nonce ‖ ciphertext)>`,
//! XChaCha20-Poly1305 under a key derived from the server key (a file outside the
//! database), with the agent's id as associated data. Arguments without a secret are
//! stored as they are (they are also the redacted form). A stored value without the
//! prefix opens to itself, so rows from before sealing still read.

use crate::agents::secret::{open_bytes, seal_bytes};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::KeyInit;
use chacha20poly1305::XChaCha20Poly1305;
use std::borrow::Cow;

const PREFIX: &str = "sealed:v1:";

#[derive(Clone)]
pub struct Sealer(XChaCha20Poly1305);

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer([redacted])")
    }
}

impl Sealer {
    pub fn from_server_key(key: &crate::agents::ServerKey) -> Sealer {
        let k = key.derive("airlock arguments at rest v1");
        Sealer(XChaCha20Poly1305::new_from_slice(&k).expect("32-byte key"))
    }

    /// The stored form of raw text that held a secret.
    pub fn seal(&self, text: &str, agent: &str) -> String {
        format!(
            "{PREFIX}{}",
            B64.encode(seal_bytes(&self.0, text.as_bytes(), agent.as_bytes()))
        )
    }

    /// Seal `raw` when it differs from its redacted form (it held a secret).
    pub fn seal_if_secret(&self, raw: &str, redacted: &str, agent: &str) -> Option<String> {
        (raw != redacted).then(|| self.seal(raw, agent))
    }

    /// The raw text of a stored value (sealed or not).
    pub fn open<'a>(&self, stored: &'a str, agent: &str) -> Result<Cow<'a, str>, String> {
        let Some(b64) = stored.strip_prefix(PREFIX) else {
            return Ok(Cow::Borrowed(stored));
        };
        let blob = B64.decode(b64).map_err(|_| "sealed arguments are not valid base64")?;
        let text = open_bytes(&self.0, &blob, agent.as_bytes())
            .map_err(|_| "cannot open sealed arguments: wrong server key or altered row")?;
        String::from_utf8(text)
            .map(Cow::Owned)
            .map_err(|_| "sealed arguments are not text".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_text_opens_only_with_its_key_and_agent() {
        let s = Sealer::from_server_key(&crate::agents::ServerKey::from_bytes(&[5u8; 32]));
        let raw = r#"{"token":"ghp_secret"}"#;
        let stored = s.seal(raw, "bot");
        assert!(stored.starts_with(PREFIX) && !stored.contains("ghp_secret"));
        assert_eq!(s.open(&stored, "bot").unwrap(), raw);
        assert!(s.open(&stored, "other-bot").is_err(), "bound to its agent");
        let other = Sealer::from_server_key(&crate::agents::ServerKey::from_bytes(&[6u8; 32]));
        assert!(other.open(&stored, "bot").is_err());
        assert_eq!(
            s.open(r#"{"path":"a"}"#, "bot").unwrap(),
            r#"{"path":"a"}"#,
            "unsealed rows read as they are"
        );
        assert_eq!(s.seal_if_secret("a", "a", "bot"), None);
    }
}
