//! Sign-in throttling per account and per client address (GCRA via `governor`).

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

pub struct LoginThrottle {
    accounts: DefaultKeyedRateLimiter<String>,
    addresses: DefaultKeyedRateLimiter<IpAddr>,
}

impl LoginThrottle {
    /// `per_account` attempts in a burst, then one a minute; `per_address` in a burst,
    /// then one every two seconds.
    pub fn new(per_account: u32, per_address: u32) -> LoginThrottle {
        let burst = |n: u32| NonZeroU32::new(n.max(1)).expect("non-zero");
        LoginThrottle {
            accounts: RateLimiter::keyed(
                Quota::with_period(Duration::from_secs(60))
                    .expect("period")
                    .allow_burst(burst(per_account)),
            ),
            addresses: RateLimiter::keyed(
                Quota::with_period(Duration::from_secs(2))
                    .expect("period")
                    .allow_burst(burst(per_address)),
            ),
        }
    }

    /// Take one attempt for this account and address; `Err(seconds)` when either is
    /// exhausted (both are charged, so spraying many accounts from one address stops too).
    pub fn attempt(&self, username: &str, addr: IpAddr) -> Result<(), u64> {
        let a = self.accounts.check_key(&username.trim().to_lowercase());
        let b = self.addresses.check_key(&addr);
        let clock = governor::clock::DefaultClock::default();
        let wait = |r: Result<(), governor::NotUntil<_>>| {
            r.err()
                .map(|n| n.wait_time_from(governor::clock::Clock::now(&clock)).as_secs().max(1))
        };
        match (wait(a), wait(b)) {
            (None, None) => Ok(()),
            (x, y) => Err(x.unwrap_or(0).max(y.unwrap_or(0))),
        }
    }

    /// Forget idle keys (called periodically so memory stays bounded).
    pub fn retain_recent(&self) {
        self.accounts.retain_recent();
        self.addresses.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_is_throttled_after_its_burst_from_any_address() {
        let t = LoginThrottle::new(3, 100);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(t.attempt("ana", a).is_ok());
        assert!(t.attempt("ANA", b).is_ok());
        assert!(t.attempt("ana", a).is_ok());
        assert!(t.attempt("ana", b).is_err());
        assert!(t.attempt("bob", b).is_ok());
    }

    #[test]
    fn an_address_is_throttled_across_accounts() {
        let t = LoginThrottle::new(100, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(t.attempt("u1", a).is_ok());
        assert!(t.attempt("u2", a).is_ok());
        assert!(t.attempt("u3", a).is_err());
        assert!(t.attempt("u3", "10.0.0.9".parse().unwrap()).is_ok());
    }
}
