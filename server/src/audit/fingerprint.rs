//! Fingerprints of redacted values: HMAC-SHA-256 under a key derived from the server key
//! (a file outside the database), 64 bits, written `sfp<16 hex>` (one word to full-text
//! search). The trail stores the fingerprint of every value it masked, never the value, so
//! an auditor holding a leaked token can ask where it was sent; without the key, a
//! fingerprint cannot be tested against guesses.

use hmac::{KeyInit, Mac};

#[derive(Clone)]
pub struct Fingerprinter([u8; 32]);

impl Fingerprinter {
    pub fn from_server_key(key: &crate::agents::ServerKey) -> Fingerprinter {
        Fingerprinter(key.derive("airlock redaction fingerprint v1"))
    }

    pub fn of(&self, value: &str) -> String {
        let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0).expect("any key length");
        m.update(value.as_bytes());
        format!("sfp{}", hex::encode(&m.finalize().into_bytes()[..8]))
    }
}

impl std::fmt::Debug for Fingerprinter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fingerprinter([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_keyed_stable_and_one_word() {
        let a = Fingerprinter::from_server_key(&crate::agents::ServerKey::from_bytes(&[1u8; 32]));
        let b = Fingerprinter::from_server_key(&crate::agents::ServerKey::from_bytes(&[2u8; 32]));
        assert_eq!(a.of("hunter2"), a.of("hunter2"));
        assert_ne!(a.of("hunter2"), a.of("hunter3"));
        assert_ne!(a.of("hunter2"), b.of("hunter2"), "another key, another fingerprint");
        let f = a.of("hunter2");
        assert!(f.len() == 19 && f.starts_with("sfp") && f.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
