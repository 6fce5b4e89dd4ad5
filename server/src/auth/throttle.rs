//! Sign-in throttling per account and per client address (GCRA). One instance counts in
//! memory (`governor`); instances sharing a PostgreSQL database count in it
//! (`login_throttle`, migration 0006), so trying passwords on each instance in turn buys
//! no extra attempts.

use crate::store::Db;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// An account regains one attempt a minute; an address one every two seconds.
const ACCOUNT_PERIOD_MS: i64 = 60_000;
const ADDRESS_PERIOD_MS: i64 = 2_000;

pub struct LoginThrottle {
    accounts: DefaultKeyedRateLimiter<String>,
    addresses: DefaultKeyedRateLimiter<IpAddr>,
    /// (per_account, per_address) bursts, for the shared count.
    bursts: (u32, u32),
    /// The database that holds the shared count (PostgreSQL), if any.
    shared: Option<Db>,
}

impl LoginThrottle {
    /// `per_account` attempts in a burst, then one a minute; `per_address` in a burst,
    /// then one every two seconds.
    pub fn new(per_account: u32, per_address: u32) -> LoginThrottle {
        let burst = |n: u32| NonZeroU32::new(n.max(1)).expect("non-zero");
        LoginThrottle {
            accounts: RateLimiter::keyed(
                Quota::with_period(Duration::from_millis(ACCOUNT_PERIOD_MS as u64))
                    .expect("period")
                    .allow_burst(burst(per_account)),
            ),
            addresses: RateLimiter::keyed(
                Quota::with_period(Duration::from_millis(ADDRESS_PERIOD_MS as u64))
                    .expect("period")
                    .allow_burst(burst(per_address)),
            ),
            bursts: (per_account.max(1), per_address.max(1)),
            shared: None,
        }
    }

    /// Count in `db` (a PostgreSQL database other instances share) instead of in memory.
    pub fn shared_in(mut self, db: Db) -> LoginThrottle {
        self.shared = Some(db);
        self
    }

    /// Take one attempt for this account and address; `Err(seconds)` when either is
    /// exhausted (both are charged, so spraying many accounts from one address stops too).
    pub async fn attempt(&self, username: &str, addr: IpAddr) -> Result<(), u64> {
        let account = username.trim().to_lowercase();
        if let Some(db) = &self.shared {
            match self.attempt_shared(db, &account, addr).await {
                Ok(r) => return r,
                // The database is unreachable: sign-in fails anyway; count here meanwhile.
                Err(e) => tracing::warn!(error = %e, "shared sign-in throttle unavailable"),
            }
        }
        let a = self.accounts.check_key(&account);
        let b = self.addresses.check_key(&addr);
        let clock = governor::clock::DefaultClock::default();
        let wait = |r: Result<(), governor::NotUntil<_>>| {
            r.err()
                .map(|n| n.wait_time_from(governor::clock::Clock::now(&clock)).as_secs().max(1))
        };
        combine(wait(a), wait(b))
    }

    async fn attempt_shared(&self, db: &Db, account: &str, addr: IpAddr) -> Result<Result<(), u64>, sqlx::Error> {
        let now = crate::store::now_ms();
        let a = take(db, &format!("account:{account}"), ACCOUNT_PERIOD_MS, self.bursts.0, now).await?;
        let b = take(db, &format!("address:{addr}"), ADDRESS_PERIOD_MS, self.bursts.1, now).await?;
        Ok(combine(a, b))
    }

    /// Forget idle keys (called periodically so memory and the shared table stay bounded).
    pub async fn retain_recent(&self) {
        self.accounts.retain_recent();
        self.addresses.retain_recent();
        if let Some(db) = &self.shared {
            let _ = sqlx::query("DELETE FROM login_throttle WHERE tat_ms < $1")
                .bind(crate::store::now_ms())
                .execute(db)
                .await;
        }
    }
}

fn combine(a: Option<u64>, b: Option<u64>) -> Result<(), u64> {
    match (a, b) {
        (None, None) => Ok(()),
        (x, y) => Err(x.unwrap_or(0).max(y.unwrap_or(0))),
    }
}

/// One attempt against `key`'s shared GCRA state, in one statement (the row lock makes
/// concurrent attempts on several instances count one after another): `None` when
/// admitted, else the seconds to wait.
async fn take(db: &Db, key: &str, period_ms: i64, burst: u32, now: i64) -> Result<Option<u64>, sqlx::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_account_is_throttled_after_its_burst_from_any_address() {
        let t = LoginThrottle::new(3, 100);
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
        let t = LoginThrottle::new(100, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(t.attempt("u1", a).await.is_ok());
        assert!(t.attempt("u2", a).await.is_ok());
        assert!(t.attempt("u3", a).await.is_err());
        assert!(t.attempt("u3", "10.0.0.9".parse().unwrap()).await.is_ok());
    }
}
