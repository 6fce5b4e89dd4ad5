//! Budget and rate-limit state. The ledger keeps it in memory (it is the only writer at a
//! time) and writes every change through in the same transaction as the decision, marked
//! with the audit chain's position, so that a writer that finds the chain moved reads
//! back only the rows another one changed (`changed_since`).

use policy::{UsageChange, UsageDelta};
use sqlx::AnyConnection;
use std::collections::HashMap;

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Entry {
    count: u64,
    amount: f64,
    tat_ms: Option<i64>,
}

/// (budget, scope, count, amount, tat_ms) as stored.
type Row = (String, String, i64, f64, Option<i64>);

#[derive(Debug, Default)]
pub struct UsageState {
    entries: HashMap<(String, String), Entry>,
}

impl UsageState {
    pub async fn load(conn: &mut AnyConnection) -> Result<UsageState, sqlx::Error> {
        let rows = sqlx::query_as("SELECT budget, scope, count, amount, tat_ms FROM budget_usage")
            .fetch_all(conn)
            .await?;
        let mut state = UsageState::default();
        state.set(rows);
        Ok(state)
    }

    /// Read back the rows written after chain position `seq` (by another writer); all of
    /// them when that is very many. (The limit also keeps PostgreSQL's plan for a prepared
    /// `seq > $1` on the index.)
    pub async fn changed_since(&mut self, conn: &mut AnyConnection, seq: i64) -> Result<(), sqlx::Error> {
        const MOST: usize = 100_000;
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT budget, scope, count, amount, tat_ms FROM budget_usage WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(seq)
        .bind(MOST as i64)
        .fetch_all(&mut *conn)
        .await?;
        if rows.len() == MOST {
            *self = UsageState::load(conn).await?;
        } else {
            self.set(rows);
        }
        Ok(())
    }

    fn set(&mut self, rows: Vec<Row>) {
        for (b, s, count, amount, tat_ms) in rows {
            let entry = Entry {
                count: count.max(0) as u64,
                amount,
                tat_ms,
            };
            self.entries.insert((b, s), entry);
        }
    }

    /// Write the deltas to the database (inside the caller's transaction), marked with
    /// `seq`: the chain position after the writing batch's start (its head + 1).
    /// Deltas of one key are summed first: one statement per budget key, not per call.
    pub async fn persist(conn: &mut AnyConnection, deltas: &[UsageDelta], seq: i64) -> Result<(), sqlx::Error> {
        let mut sums: HashMap<(&str, &str), (i64, f64, Option<i64>)> = HashMap::new();
        for d in deltas {
            let e = sums
                .entry((d.budget.as_str(), d.scope.as_str()))
                .or_insert((0, 0.0, None));
            match d.change {
                UsageChange::Count => e.0 += 1,
                UsageChange::Uncount => e.0 -= 1,
                UsageChange::Amount(a) => e.1 += a,
                UsageChange::Tat(t) => e.2 = Some(t),
            }
        }
        for ((budget, scope), (count, amount, tat)) in sums {
            sqlx::query(
                "INSERT INTO budget_usage (budget, scope, count, amount, tat_ms, seq)
                 VALUES ($1, $2, CASE WHEN $3 < 0 THEN 0 ELSE $3 END, $4, $5, $6)
                 ON CONFLICT (budget, scope) DO UPDATE SET count = CASE WHEN budget_usage.count + excluded.count < 0 THEN 0
                   ELSE budget_usage.count + excluded.count END,
                   amount = budget_usage.amount + excluded.amount,
                   tat_ms = coalesce(excluded.tat_ms, budget_usage.tat_ms), seq = excluded.seq",
            )
            .bind(budget)
            .bind(scope)
            .bind(count)
            .bind(amount)
            .bind(tat)
            .bind(seq)
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }

    /// Apply deltas in memory once they are written.
    pub fn apply(&mut self, deltas: &[UsageDelta]) {
        for d in deltas {
            let e = self.entries.entry((d.budget.clone(), d.scope.clone())).or_default();
            match d.change {
                UsageChange::Count => e.count += 1,
                UsageChange::Uncount => e.count = e.count.saturating_sub(1),
                UsageChange::Amount(a) => e.amount += a,
                UsageChange::Tat(t) => e.tat_ms = Some(t),
            }
        }
    }

    fn get(&self, b: &str, s: &str) -> Option<&Entry> {
        // Budgets are few and scopes short; a tuple key lookup allocates, so it is worth
        // avoiding only if profiles say so.
        self.entries.get(&(b.to_string(), s.to_string()))
    }
}

impl policy::Usage for UsageState {
    fn count(&self, b: &str, s: &str) -> u64 {
        self.get(b, s).map_or(0, |e| e.count)
    }
    fn amount(&self, b: &str, s: &str) -> f64 {
        self.get(b, s).map_or(0.0, |e| e.amount)
    }
    fn tat_ms(&self, b: &str, s: &str) -> Option<i64> {
        self.get(b, s).and_then(|e| e.tat_ms)
    }
}
