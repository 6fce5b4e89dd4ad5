//! Budgets and rate limits, evaluated without owning any state.
//!
//! The caller reads current usage through [`Usage`] (from its database) and, once it
//! has stored a decision, applies the [`UsageDelta`]s the decision lists. That keeps
//! the engine pure and lets budgets survive restarts. Rates use GCRA: a budget of
//! `limit` calls per `window` admits a burst of `limit` and then one call every
//! `window / limit`.

use crate::config::{BudgetConfig, BudgetCounts, BudgetKind, BudgetScope, OnExceed};
use crate::decision::{Call, UsageChange, UsageDelta};
use serde_json::Value;
use std::collections::HashMap;

/// Read access to budget state. Keys are (budget id, scope key).
pub trait Usage {
    fn count(&self, budget: &str, scope: &str) -> u64;
    fn amount(&self, budget: &str, scope: &str) -> f64;
    /// GCRA theoretical arrival time, unix ms.
    fn tat_ms(&self, budget: &str, scope: &str) -> Option<i64>;
}

/// No usage at all (first call of everything).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoUsage;

impl Usage for NoUsage {
    fn count(&self, _: &str, _: &str) -> u64 {
        0
    }
    fn amount(&self, _: &str, _: &str) -> f64 {
        0.0
    }
    fn tat_ms(&self, _: &str, _: &str) -> Option<i64> {
        None
    }
}

/// Usage kept in memory: for tests, `policy test` and benchmarks.
#[derive(Debug, Default, Clone)]
pub struct MemoryUsage {
    counts: HashMap<(String, String), u64>,
    amounts: HashMap<(String, String), f64>,
    tats: HashMap<(String, String), i64>,
}

impl MemoryUsage {
    pub fn apply(&mut self, deltas: &[UsageDelta]) {
        for d in deltas {
            let k = (d.budget.clone(), d.scope.clone());
            match d.change {
                UsageChange::Count => *self.counts.entry(k).or_default() += 1,
                UsageChange::Uncount => {
                    let c = self.counts.entry(k).or_default();
                    *c = c.saturating_sub(1);
                }
                UsageChange::Amount(a) => *self.amounts.entry(k).or_default() += a,
                UsageChange::Tat(t) => {
                    self.tats.insert(k, t);
                }
            }
        }
    }
}

impl Usage for MemoryUsage {
    fn count(&self, b: &str, s: &str) -> u64 {
        self.counts.get(&(b.to_string(), s.to_string())).copied().unwrap_or(0)
    }
    fn amount(&self, b: &str, s: &str) -> f64 {
        self.amounts
            .get(&(b.to_string(), s.to_string()))
            .copied()
            .unwrap_or(0.0)
    }
    fn tat_ms(&self, b: &str, s: &str) -> Option<i64> {
        self.tats.get(&(b.to_string(), s.to_string())).copied()
    }
}

/// Usage as it was before some charges: what a modified call is judged against, so
/// the call it replaces is not counted twice.
pub struct Without<'a> {
    pub usage: &'a dyn Usage,
    pub charges: &'a [UsageDelta],
}

impl Usage for Without<'_> {
    fn count(&self, b: &str, s: &str) -> u64 {
        let n = self
            .charges
            .iter()
            .filter(|d| d.budget == b && d.scope == s && d.change == UsageChange::Count)
            .count() as u64;
        self.usage.count(b, s).saturating_sub(n)
    }
    fn amount(&self, b: &str, s: &str) -> f64 {
        let minus: f64 = self
            .charges
            .iter()
            .filter(|d| d.budget == b && d.scope == s)
            .map(|d| match d.change {
                UsageChange::Amount(a) => a,
                _ => 0.0,
            })
            .sum();
        self.usage.amount(b, s) - minus
    }
    fn tat_ms(&self, b: &str, s: &str) -> Option<i64> {
        self.usage.tat_ms(b, s)
    }
}

#[derive(Debug, Clone)]
pub struct Budget {
    pub id: String,
    kind: BudgetKind,
    scope: BudgetScope,
    limit: f64,
    window_ms: i64,
    field: Option<String>,
    pub counts: BudgetCounts,
    pub on_exceed: OnExceed,
    pub shadow: bool,
}

/// The outcome of checking one budget.
pub struct BudgetCheck {
    pub exceeded: Option<String>,
    pub delta: Option<UsageDelta>,
}

impl Budget {
    pub fn new(c: &BudgetConfig) -> Result<Budget, String> {
        if c.id.trim().is_empty() {
            return Err("budget id must not be empty".into());
        }
        if c.id.chars().any(char::is_control) {
            return Err("budget id must not hold control characters".into());
        }
        if !(c.limit.is_finite() && c.limit >= 0.0) {
            return Err(format!("limit must be a non-negative number, not {}", c.limit));
        }
        let window_ms = match (c.kind, &c.window) {
            (BudgetKind::Rate, Some(w)) => crate::load::parse_duration_ms(w)?,
            (BudgetKind::Rate, None) => return Err("a rate budget needs a window, e.g. \"1m\"".into()),
            (_, Some(_)) => return Err("window applies only to rate budgets".into()),
            (_, None) => 0,
        };
        if c.kind == BudgetKind::Rate && c.limit < 1.0 {
            return Err("a rate budget needs a limit of at least 1".into());
        }
        match (c.kind, &c.field) {
            (BudgetKind::Amount, None) => return Err("an amount budget needs a field".into()),
            (BudgetKind::Amount, Some(_)) => {}
            (_, Some(_)) => return Err("field applies only to amount budgets".into()),
            _ => {}
        }
        if c.kind == BudgetKind::Rate && c.counts == BudgetCounts::AutoAllowed {
            return Err("a rate budget counts every accepted call".into());
        }
        Ok(Budget {
            id: c.id.clone(),
            kind: c.kind,
            scope: c.scope,
            limit: c.limit,
            window_ms,
            field: c.field.clone(),
            counts: c.counts,
            on_exceed: c.on_exceed,
            shadow: c.shadow,
        })
    }

    /// Rates count proposals: a reviewer's modification is not a new proposal.
    pub fn is_rate(&self) -> bool {
        self.kind == BudgetKind::Rate
    }

    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    fn scope_key(&self, call: &Call, now_ms: i64) -> String {
        match self.scope {
            // Keyed by agent too: session ids are chosen by agents, so one agent must not
            // spend (or escape into) another's budget. U+001F cannot occur in ids, so the
            // parts cannot run into each other.
            BudgetScope::Turn => format!(
                "turn:{}\u{1f}{}\u{1f}{}",
                call.agent,
                call.session_id,
                call.turn_id.unwrap_or("")
            ),
            BudgetScope::Session => format!("session:{}\u{1f}{}", call.agent, call.session_id),
            BudgetScope::Day => format!("day:{}", utc_date(now_ms)),
            BudgetScope::Global => "global".to_string(),
        }
    }

    pub fn check(&self, call: &Call, now_ms: i64, usage: &dyn Usage) -> BudgetCheck {
        let scope = self.scope_key(call, now_ms);
        let delta = |change| {
            Some(UsageDelta {
                budget: self.id.clone(),
                scope: scope.clone(),
                change,
            })
        };
        match self.kind {
            BudgetKind::Count => {
                let used = usage.count(&self.id, &scope);
                if (used + 1) as f64 > self.limit {
                    return BudgetCheck {
                        exceeded: Some(format!(
                            "budget {} allows {} call(s) per {}; {} used",
                            self.id,
                            self.limit,
                            scope_word(self.scope),
                            used
                        )),
                        delta: None,
                    };
                }
                BudgetCheck {
                    exceeded: None,
                    delta: delta(UsageChange::Count),
                }
            }
            BudgetKind::Rate => {
                let interval = self.window_ms as f64 / self.limit;
                let tat = usage.tat_ms(&self.id, &scope).unwrap_or(now_ms).max(now_ms);
                let new_tat = tat + interval.ceil() as i64;
                if new_tat - now_ms > self.window_ms {
                    let wait = new_tat - now_ms - self.window_ms;
                    return BudgetCheck {
                        exceeded: Some(format!(
                            "rate limit {}: {} per {}; retry in {} ms",
                            self.id,
                            self.limit,
                            crate::load::format_duration_ms(self.window_ms),
                            wait
                        )),
                        delta: None,
                    };
                }
                BudgetCheck {
                    exceeded: None,
                    delta: delta(UsageChange::Tat(new_tat)),
                }
            }
            BudgetKind::Amount => {
                let field = self.field.as_deref().unwrap_or("");
                let amount = match call.arguments.get(field) {
                    Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::INFINITY),
                    // The schema decides whether the field is required; absent adds nothing.
                    None => 0.0,
                    Some(_) => f64::INFINITY,
                };
                let used = usage.amount(&self.id, &scope);
                if used + amount > self.limit {
                    return BudgetCheck {
                        exceeded: Some(format!(
                            "budget {}: {} + {} exceeds {} per {}",
                            self.id,
                            trim_num(used),
                            trim_num(amount),
                            trim_num(self.limit),
                            scope_word(self.scope)
                        )),
                        delta: None,
                    };
                }
                BudgetCheck {
                    exceeded: None,
                    delta: delta(UsageChange::Amount(amount)),
                }
            }
        }
    }
}

fn scope_word(s: BudgetScope) -> &'static str {
    match s {
        BudgetScope::Turn => "turn",
        BudgetScope::Session => "session",
        BudgetScope::Day => "day (UTC)",
        BudgetScope::Global => "all time",
    }
}

fn trim_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `YYYY-MM-DD` of a unix-ms instant, UTC (civil-from-days, proleptic Gregorian).
pub fn utc_date(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn budget(kind: BudgetKind, scope: BudgetScope, limit: f64, window: Option<&str>, field: Option<&str>) -> Budget {
        Budget::new(&BudgetConfig {
            id: "b".into(),
            kind,
            scope,
            limit,
            window: window.map(String::from),
            field: field.map(String::from),
            counts: BudgetCounts::Accepted,
            on_exceed: OnExceed::Deny,
            shadow: false,
        })
        .unwrap()
    }

    fn call<'a>(args: &'a Value, turn: Option<&'a str>) -> Call<'a> {
        Call {
            agent: "a1",
            tool: "t",
            server: None,
            session_id: "s1",
            turn_id: turn,
            arguments: args,
            context: &Value::Null,
        }
    }

    #[test]
    fn budget_ids_are_printable() {
        let config = |id: &str| BudgetConfig {
            id: id.into(),
            kind: BudgetKind::Count,
            scope: BudgetScope::Turn,
            limit: 1.0,
            window: None,
            field: None,
            counts: BudgetCounts::Accepted,
            on_exceed: OnExceed::Deny,
            shadow: false,
        };
        assert!(Budget::new(&config("daily-refunds")).is_ok());
        for bad in ["", " ", "\u{1}agent-rate", "a\nb"] {
            assert!(Budget::new(&config(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn count_budget_allows_exactly_the_limit_per_turn() {
        let b = budget(BudgetKind::Count, BudgetScope::Turn, 2.0, None, None);
        let args = json!({});
        let mut u = MemoryUsage::default();
        for _ in 0..2 {
            let r = b.check(&call(&args, Some("t1")), 0, &u);
            assert!(r.exceeded.is_none());
            u.apply(&[r.delta.unwrap()]);
        }
        assert!(b.check(&call(&args, Some("t1")), 0, &u).exceeded.is_some());
        // A new turn starts afresh.
        assert!(b.check(&call(&args, Some("t2")), 0, &u).exceeded.is_none());
    }

    #[test]
    fn gcra_allows_a_burst_then_one_call_per_interval() {
        // 30 per minute: a burst of 30, then one every 2 s.
        let b = budget(BudgetKind::Rate, BudgetScope::Session, 30.0, Some("1m"), None);
        let args = json!({});
        let mut u = MemoryUsage::default();
        let t0 = 1_700_000_000_000;
        for i in 0..30 {
            let r = b.check(&call(&args, None), t0, &u);
            assert!(r.exceeded.is_none(), "call {i}");
            u.apply(&[r.delta.unwrap()]);
        }
        let r = b.check(&call(&args, None), t0, &u);
        assert!(r.exceeded.unwrap().contains("retry in 2000 ms"));
        assert!(b.check(&call(&args, None), t0 + 1_999, &u).exceeded.is_some());
        assert!(b.check(&call(&args, None), t0 + 2_000, &u).exceeded.is_none());
        // After a full idle window the whole burst is available again.
        let later = t0 + 60_000;
        let mut u2 = u.clone();
        for i in 0..30 {
            let r = b.check(&call(&args, None), later, &u2);
            assert!(r.exceeded.is_none(), "call {i} after idle");
            u2.apply(&[r.delta.unwrap()]);
        }
    }

    #[test]
    fn amount_budget_sums_a_field_per_day() {
        let b = budget(BudgetKind::Amount, BudgetScope::Day, 1000.0, None, Some("amount"));
        let mut u = MemoryUsage::default();
        let day1 = 1_764_460_800_000; // 2025-11-30T00:00:00Z
        let a600 = json!({"amount": 600});
        let r = b.check(&call(&a600, None), day1, &u);
        u.apply(&[r.delta.unwrap()]);
        let a400 = json!({"amount": 400});
        let r = b.check(&call(&a400, None), day1 + 1000, &u);
        assert!(r.exceeded.is_none());
        u.apply(&[r.delta.unwrap()]);
        let a1 = json!({"amount": 0.01});
        let e = b.check(&call(&a1, None), day1 + 2000, &u).exceeded.unwrap();
        assert!(e.contains("1000 + 0.01 exceeds 1000"), "{e}");
        // Next UTC day.
        assert!(b.check(&call(&a1, None), day1 + 86_400_000, &u).exceeded.is_none());
        // A non-number never fits.
        let bad = json!({"amount": "5"});
        assert!(b.check(&call(&bad, None), day1 + 86_400_000, &u).exceeded.is_some());
    }

    #[test]
    fn budget_configuration_is_validated() {
        let c = |kind, window: Option<&str>, field: Option<&str>, limit| BudgetConfig {
            id: "x".into(),
            kind,
            scope: BudgetScope::Session,
            limit,
            window: window.map(String::from),
            field: field.map(String::from),
            counts: BudgetCounts::Accepted,
            on_exceed: OnExceed::Deny,
            shadow: false,
        };
        assert!(Budget::new(&c(BudgetKind::Rate, None, None, 5.0)).is_err());
        assert!(Budget::new(&c(BudgetKind::Rate, Some("soon"), None, 5.0)).is_err());
        assert!(Budget::new(&c(BudgetKind::Count, Some("1m"), None, 5.0)).is_err());
        assert!(Budget::new(&c(BudgetKind::Amount, None, None, 5.0)).is_err());
        assert!(Budget::new(&c(BudgetKind::Count, None, None, -1.0)).is_err());
        assert!(Budget::new(&c(BudgetKind::Count, None, None, f64::NAN)).is_err());
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400_000), "2000-02-29");
        assert_eq!(utc_date(1_764_547_199_999), "2025-11-30");
        assert_eq!(utc_date(-1), "1969-12-31");
    }
}
