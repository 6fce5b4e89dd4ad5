//! Password hashing with argon2id at OWASP's recommended minimum (19 MiB, t=2, p=1),
//! always on the blocking pool so it never stalls the async runtime.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use secrecy::{ExposeSecret, SecretString};
use std::sync::LazyLock;

/// A password as typed: never printed, never serialised.
#[derive(Clone)]
pub struct Password(SecretString);

impl Password {
    pub fn new(s: impl Into<String>) -> Password {
        Password(SecretString::from(s.into()))
    }
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
    /// A random password for new accounts: 20 characters from an unambiguous alphabet.
    pub fn generate() -> Password {
        use rand::Rng;
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
        let mut rng = rand::rngs::OsRng;
        Password::new(
            (0..20)
                .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
                .collect::<String>(),
        )
    }
    /// Rules for a new password.
    pub fn check_strength(&self) -> Result<(), String> {
        let n = self.expose().chars().count();
        if n < 12 {
            return Err("the password must have at least 12 characters".into());
        }
        if n > 256 {
            return Err("the password must have at most 256 characters".into());
        }
        Ok(())
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password([redacted])")
    }
}

fn argon2() -> Argon2<'static> {
    Argon2::new(
        Algorithm::Argon2id,
        Version::V0x13,
        Params::new(19 * 1024, 2, 1, None).expect("valid argon2 params"),
    )
}

/// Verified against when the username is unknown, so timing does not tell who exists.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_blocking(&Password::new("dummy password for timing")).expect("hash"));

fn hash_blocking(p: &Password) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(p.expose().as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("hashing failed: {e}"))
}

pub async fn hash(p: Password) -> Result<String, String> {
    tokio::task::spawn_blocking(move || hash_blocking(&p))
        .await
        .map_err(|e| format!("hashing task failed: {e}"))?
}

/// Verify `p` against `stored`, or against a dummy hash when there is no user.
pub async fn verify(p: Password, stored: Option<String>) -> bool {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let h = stored.unwrap_or_else(|| DUMMY_HASH.clone());
        let Ok(parsed) = PasswordHash::new(&h) else {
            return false;
        };
        argon2().verify_password(p.expose().as_bytes(), &parsed).is_ok() && known
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_and_nothing_else() {
        let h = hash(Password::new("correct horse battery")).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify(Password::new("correct horse battery"), Some(h.clone())).await);
        assert!(!verify(Password::new("wrong horse battery"), Some(h)).await);
        assert!(!verify(Password::new("dummy password for timing"), None).await);
    }

    #[test]
    fn generated_passwords_are_long_and_differ() {
        let a = Password::generate();
        assert_eq!(a.expose().len(), 20);
        assert!(a.check_strength().is_ok());
        assert_ne!(a.expose(), Password::generate().expose());
        assert_eq!(format!("{a:?}"), "Password([redacted])");
    }
}
