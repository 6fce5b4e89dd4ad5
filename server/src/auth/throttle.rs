//! Keyed rate limits on guesses (GCRA): sign-in per account and per client address,
//! secret lookups and break-glass password checks per user. One instance counts in
//! memory (`governor`); instances sharing a PostgreSQL database count in it
//! (`login_throttle`, migration 0006), so trying guesses on each instance in turn buys no
//! extra attempts. A key is stored as a keyed hash, never as typed: a password typed into
//! the user-name field must not reach the database.

use crate::store::Db;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// `burst` attempts per key at once, then one per `period`.
pub struct Limiter {
    /// Prefix of this limiter's keys in the shared table.
    name: &'static str,
    period_ms: i64,
    burst: u32,
    local: DefaultKeyedRateLimiter<String>,
    /// Where the shared count is kept (PostgreSQL), if anywhere.
    shared: Option<Shared>,
}

/// The database other instances share, and the key that hides what a row counts.
#[derive(Clone)]
pub struct Shared {
    pub db: Db,
    /// Derived from the server key, the same on every instance.
    pub key: [u8; 32],
}

impl Shared {
    pub fn new(db: Db, server_key: &crate::agents::ServerKey) -> Shared {
        Shared {
            db,
            key: server_key.derive("airlock throttle keys v1"),
        }
    }

    /// The row of `key` for limiter `name`: HMAC-SHA-256, 128 bits in hex.
    fn row(&self, name: &str, key: &str) -> String {
        use hmac::{KeyInit as _, Mac};
        let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.key).expect("any key length");
        m.update(name.as_bytes());
        m.update(b"\0");
        m.update(key.as_bytes());
        hex::encode(&m.finalize().into_bytes()[..16])
    }
}

impl Limiter {
    pub fn new(name: &'static str, period: Duration, burst: u32) -> Limiter {
        let burst = burst.max(1);
        Limiter {
            name,
            period_ms: period.as_millis() as i64,
            burst,
            local: RateLimiter::keyed(
                Quota::with_period(period)
                    .expect("a non-zero period")
                    .allow_burst(NonZeroU32::new(burst).expect("non-zero")),
            ),
            shared: None,
        }
    }

    /// Count in a PostgreSQL database other instances share instead of in memory.
    pub fn shared_in(mut self, shared: Option<Shared>) -> Limiter {
        self.shared = shared;
        self
    }

    /// Take one attempt for `key`: `Err(seconds)` to wait when its burst is spent.
    pub async fn check(&self, key: &str) -> Result<(), u64> {
        if let Some(shared) = &self.shared {
            match take(&shared.db, &shared.row(self.name, key), self.period_ms, self.burst).await {
                Ok(None) => return Ok(()),
                Ok(Some(wait)) => return Err(wait),
                // The database is unreachable (then sign-in fails anyway): count here meanwhile.
                Err(e) => tracing::warn!(error = %e, limiter = self.name, "shared rate limit unavailable"),
            }
        }
        let clock = governor::clock::DefaultClock::default();
        self.local
            .check_key(&key.to_string())
            .map_err(|n| n.wait_time_from(governor::clock::Clock::now(&clock)).as_secs().max(1))
    }

    /// Forget idle keys (called periodically so memory and the shared table stay bounded;
    /// a row whose time has passed counts as no row, whichever limiter wrote it).
    pub async fn retain_recent(&self) {
        self.local.retain_recent();
        if let Some(shared) = &self.shared {
            let _ = sqlx::query("DELETE FROM login_throttle WHERE tat_ms < $1")
                .bind(crate::store::now_ms())
                .execute(&shared.db)
                .await;
        }
    }
}

/// One attempt against `key`'s shared GCRA state, in one statement (the row lock makes
/// concurrent attempts on several instances count one after another): `None` when
/// admitted, else the seconds to wait.
async fn take(db: &Db, key: &str, period_ms: i64, burst: u32) -> Result<Option<u64>, sqlx::Error> {
    let now = crate::store::now_ms();
    let tolerance = period_ms * (i64::from(burst) - 1);
    let admitted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO login_throttle AS t (key, tat_ms) VALUES ($1, $2 + $3)
         ON CONFLICT (key) DO UPDATE SET tat_ms = greatest(t.tat_ms, $2) + $3
         WHERE greatest(t.tat_ms, $2) - $2 <= $4
         RETURNING tat_ms",
    )
    .bind(key)
    .bind(now)
    .bind(period_ms)
    .bind(tolerance)
    .fetch_optional(db)
    .await?;
    if admitted.is_some() {
        return Ok(None);
    }
    let tat: i64 = sqlx::query_scalar("SELECT tat_ms FROM login_throttle WHERE key = $1")
        .bind(key)
        .fetch_optional(db)
        .await?
        .unwrap_or(now);
    let wait_ms = (tat - now - tolerance).max(1);
    Ok(Some((wait_ms as u64).div_ceil(1000)))
}

/// Sign-in attempts: per account (a burst, then one a minute) and per client address (a
/// burst, then one every two seconds).
pub struct LoginThrottle {
    accounts: Limiter,
    addresses: Limiter,
}

impl LoginThrottle {
    pub fn new(per_account: u32, per_address: u32, shared: Option<Shared>) -> LoginThrottle {
        LoginThrottle {
            accounts: Limiter::new("account", Duration::from_secs(60), per_account).shared_in(shared.clone()),
            addresses: Limiter::new("address", Duration::from_secs(2), per_address).shared_in(shared),
        }
    }

    /// Take one attempt for this account and address; `Err(seconds)` when either is
    /// exhausted (both are charged, so spraying many accounts from one address stops too).
    pub async fn attempt(&self, username: &str, addr: IpAddr) -> Result<(), u64> {
        let a = self.accounts.check(&username.trim().to_lowercase()).await;
        let b = self.addresses.check(&addr.to_string()).await;
        match (a.err(), b.err()) {
            (None, None) => Ok(()),
            (x, y) => Err(x.unwrap_or(0).max(y.unwrap_or(0))),
        }
    }

    pub async fn retain_recent(&self) {
        self.accounts.retain_recent().await;
        self.addresses.retain_recent().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_account_is_throttled_after_its_burst_from_any_address() {
        let t = LoginThrottle::new(3, 100, None);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(t.attempt("ana", a).await.is_ok());
        assert!(t.attempt("ANA", b).await.is_ok());
        assert!(t.attempt("ana", a).await.is_ok());
        assert!(t.attempt("ana", b).await.is_err());
        assert!(t.attempt("bob", b).await.is_ok());
    }

    #[tokio::test]
    async fn an_address_is_throttled_across_accounts() {
        let t = LoginThrottle::new(100, 2, None);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(t.attempt("u1", a).await.is_ok());
        assert!(t.attempt("u2", a).await.is_ok());
        assert!(t.attempt("u3", a).await.is_err());
        assert!(t.attempt("u3", "10.0.0.9".parse().unwrap()).await.is_ok());
    }
}
