//! Agent signing secrets and the server key that seals them at rest.
//!
//! A signing secret is `whsec_<base64 of 32 random bytes>` (Standard Webhooks); the HMAC
//! key is the decoded bytes. The server must know the secret to verify signatures, so it
//! cannot store a hash: secrets are sealed with XChaCha20-Poly1305 under a 256-bit server
//! key kept in a file beside the database (mode 0600), never in the database itself.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use std::path::Path;

const PREFIX: &str = "whsec_";

/// The decoded HMAC key of an agent. Not `Serialize`; `Debug` shows nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(Vec<u8>);

impl SigningSecret {
    pub fn generate() -> SigningSecret {
        let mut b = vec![0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut b);
        SigningSecret(b)
    }

    /// Parse `whsec_<base64>` (24–64 decoded bytes), as shown to the agent's developer.
    pub fn parse(s: &str) -> Result<SigningSecret, String> {
        let b64 = s
            .trim()
            .strip_prefix(PREFIX)
            .ok_or("a signing secret starts with whsec_")?;
        let bytes = B64.decode(b64).map_err(|_| "the signing secret is not valid base64")?;
        if !(24..=64).contains(&bytes.len()) {
            return Err("a signing secret holds 24 to 64 bytes".into());
        }
        Ok(SigningSecret(bytes))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The form shown once to the agent's developer.
    pub fn reveal(&self) -> String {
        format!("{PREFIX}{}", B64.encode(&self.0))
    }
}

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningSecret([redacted])")
    }
}

/// The key that seals agent secrets in the database; keys for other purposes (signing
/// audit checkpoints) are derived from it, so one file outside the database holds them all.
#[derive(Clone)]
pub struct ServerKey(XChaCha20Poly1305, [u8; 32]);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerKey([redacted])")
    }
}

impl ServerKey {
    /// Read the key file, creating it (0600) with a fresh random key when absent.
    pub fn load_or_create(path: &Path) -> Result<ServerKey, String> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let hex = String::from_utf8_lossy(&bytes);
                let key = hex::decode(hex.trim()).map_err(|_| format!("{}: not a hex key", path.display()))?;
                if key.len() != 32 {
                    return Err(format!("{}: the key must be 32 bytes (64 hex digits)", path.display()));
                }
                Ok(ServerKey::from_bytes(&key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut key);
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
                }
                write_private(path, hex::encode(key).as_bytes())
                    .map_err(|e| format!("create key file {}: {e}", path.display()))?;
                Ok(ServerKey::from_bytes(&key))
            }
            Err(e) => Err(format!("read key file {}: {e}", path.display())),
        }
    }

    pub fn from_bytes(key: &[u8]) -> ServerKey {
        let mut root = [0u8; 32];
        root.copy_from_slice(&key[..32]);
        ServerKey(XChaCha20Poly1305::new_from_slice(key).expect("32-byte key"), root)
    }

    /// A key for one purpose: HMAC-SHA-256(server key, purpose). Knowing a derived key
    /// tells nothing about the server key or another purpose's key.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        use hmac::{KeyInit as _, Mac};
        let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.1).expect("any key length");
        m.update(purpose.as_bytes());
        m.finalize().into_bytes().into()
    }

    /// nonce (24 bytes) || ciphertext; `aad` binds the sealed secret to its agent.
    pub fn seal(&self, secret: &SigningSecret, aad: &str) -> Vec<u8> {
        seal_bytes(&self.0, secret.bytes(), aad.as_bytes())
    }

    pub fn open(&self, sealed: &[u8], aad: &str) -> Result<SigningSecret, String> {
        open_bytes(&self.0, sealed, aad.as_bytes())
            .map(SigningSecret)
            .map_err(|_| "cannot open a sealed agent secret: wrong server key or altered row".into())
    }
}

/// XChaCha20-Poly1305 with a fresh random nonce: nonce (24 bytes) ‖ ciphertext.
pub(crate) fn seal_bytes(cipher: &XChaCha20Poly1305, msg: &[u8], aad: &[u8]) -> Vec<u8> {
    let mut nonce = [0u8; 24];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let ct = cipher
        .encrypt(XNonce::from_slice(&nonce), Payload { msg, aad })
        .expect("encryption in memory cannot fail");
    let mut out = nonce.to_vec();
    out.extend_from_slice(&ct);
    out
}

/// The plaintext of [`seal_bytes`]' output; fails when too short, altered, or under another
/// key or associated data.
pub(crate) fn open_bytes(cipher: &XChaCha20Poly1305, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>, ()> {
    if sealed.len() < 24 + 16 {
        return Err(());
    }
    let (nonce, msg) = sealed.split_at(24);
    cipher
        .decrypt(XNonce::from_slice(nonce), Payload { msg, aad })
        .map_err(drop)
}

#[cfg(unix)]
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(data)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_round_trips_through_its_shown_form() {
        let s = SigningSecret::generate();
        assert_eq!(SigningSecret::parse(&s.reveal()).unwrap(), s);
        assert!(!format!("{s:?}").contains(&s.reveal()[6..]));
    }

    #[test]
    fn malformed_secrets_are_refused() {
        assert!(SigningSecret::parse("C2FVsBQIhrscChlQIMV+b5sSYspob7oD").is_err());
        assert!(SigningSecret::parse("whsec_not base64!").is_err());
        assert!(SigningSecret::parse("whsec_AAAA").is_err()); // 3 bytes
    }

    #[test]
    fn a_sealed_secret_opens_only_with_the_same_key_and_agent() {
        let key = ServerKey::from_bytes(&[7u8; 32]);
        let s = SigningSecret::generate();
        let sealed = key.seal(&s, "agent-a");
        assert_eq!(key.open(&sealed, "agent-a").unwrap(), s);
        assert!(key.open(&sealed, "agent-b").is_err());
        assert!(ServerKey::from_bytes(&[8u8; 32]).open(&sealed, "agent-a").is_err());
        let mut tampered = sealed.clone();
        tampered[30] ^= 1;
        assert!(key.open(&tampered, "agent-a").is_err());
    }

    #[test]
    fn the_key_file_is_created_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/airlock.key");
        let k1 = ServerKey::load_or_create(&path).unwrap();
        let s = SigningSecret::generate();
        let sealed = k1.seal(&s, "a");
        let k2 = ServerKey::load_or_create(&path).unwrap();
        assert_eq!(k2.open(&sealed, "a").unwrap(), s);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
