//! The per-agent proposal rate (`agent_rate_per_second`, `agent_rate_burst`) counted once
//! for every instance on one PostgreSQL database. Each instance also sheds load at the
//! door with its own in-memory limiter (`ingest::propose`), which counts only the requests
//! it receives; the exact, shared count is kept here by the ledger, which writes one batch
//! at a time across instances. An agent's theoretical arrival time (GCRA) is a budget-usage
//! row — budget [`BUDGET`], scope the agent, microseconds in its `tat_ms` column — written
//! with the batch and read back by an instance that finds the chain moved.

/// The budget-usage name of the agent rate (a control character keeps it apart from any
/// budget a policy names).
pub const BUDGET: &str = "\u{1}agent-rate";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentRate {
    pub per_second: u32,
    interval_us: i64,
    tolerance_us: i64,
}

impl AgentRate {
    /// `per_second` proposals a second, `burst` at once (0: as many as `per_second`);
    /// `None` when there is no limit.
    pub fn new(per_second: u32, burst: u32) -> Option<AgentRate> {
        if per_second == 0 {
            return None;
        }
        let burst = if burst == 0 { per_second } else { burst };
        let interval_us = (1_000_000 / i64::from(per_second)).max(1);
        Some(AgentRate {
            per_second,
            interval_us,
            tolerance_us: interval_us * (i64::from(burst) - 1),
        })
    }

    /// Admit one proposal at `now_us` after the stored arrival time `tat`: the arrival time
    /// to store, or the microseconds to wait before one more is admitted.
    pub fn admit(&self, tat: Option<i64>, now_us: i64) -> Result<i64, i64> {
        let tat = tat.unwrap_or(now_us).max(now_us);
        let wait = tat - now_us - self.tolerance_us;
        if wait > 0 {
            Err(wait)
        } else {
            Ok(tat + self.interval_us)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_admitted_then_one_per_interval() {
        let rate = AgentRate::new(2, 3).unwrap();
        let mut tat = None;
        let t0 = 1_000_000_000;
        for _ in 0..3 {
            tat = Some(rate.admit(tat, t0).expect("within the burst"));
        }
        let wait = rate.admit(tat, t0).expect_err("the burst is spent");
        assert_eq!(wait, 500_000, "one more after half a second");
        assert!(rate.admit(tat, t0 + wait - 1).is_err());
        tat = Some(rate.admit(tat, t0 + wait).expect("after the wait"));
        assert!(rate.admit(tat, t0 + wait).is_err());
        // Idle time refills the burst, no more.
        let later = t0 + 60_000_000;
        for _ in 0..3 {
            tat = Some(rate.admit(tat, later).unwrap());
        }
        assert!(rate.admit(tat, later).is_err());
        assert_eq!(AgentRate::new(0, 10), None);
        assert_eq!(AgentRate::new(5, 0), AgentRate::new(5, 5));
    }
}
