//! Budget and rate-limit state. The ledger keeps it in memory (it is the only writer at a
//! time) and writes every change through in the same transaction as the decision, marked
//! with the audit chain's position, so that a writer that finds the chain moved reads
//! back only the rows another one changed (`changed_since`).

use super::Sql;
use policy::{UsageChange, UsageDelta};
use sqlx::AnyConnection;
use std::collections::HashMap;

/// The upsert of a key's summed change, up to its values.
macro_rules! upsert_head {
    () => {
        "INSERT INTO budget_usage (budget, scope, count, amount, tat_ms, seq) VALUES ("
    };
}

/// How a key's summed change meets what is stored.
macro_rules! upsert_tail {
    () => {
        ") ON CONFLICT (budget, scope) DO UPDATE SET
         count = CASE WHEN budget_usage.count + excluded.count < 0 THEN 0 ELSE budget_usage.count + excluded.count END,
         amount = budget_usage.amount + excluded.amount,
         tat_ms = coalesce(excluded.tat_ms, budget_usage.tat_ms), seq = excluded.seq"
    };
}

/// One key's summed change, added to its row (or a new one). A count's change may be
/// negative (a modified call no longer charged): it is added as it is, and the sum never
/// goes below zero; `set` reads a negative count of a new key as zero.
fn push_upsert<'a>(q: &mut Sql<'a>, (budget, scope): (&'a str, &'a str), sum: Sum, seq: i64) {
    let (count, amount, tat) = sum;
    q.push(upsert_head!());
    q.bind(budget).push(", ").bind(scope).push(", ").bind(count).push(", ");
    q.bind(amount)
        .push(", ")
        .bind(tat)
        .push(", ")
        .bind(seq)
        .push(upsert_tail!());
}

/// [`push_upsert`] as one prepared statement (the ledger's SQLite connection).
const UPSERT_ONE: &str = concat!(upsert_head!(), "?, ?, ?, ?, ?, ?", upsert_tail!());

/// A key's summed change: count, amount, the newest rate state.
type Sum = (i64, f64, Option<i64>);

/// Summed deltas per (budget, scope): one statement per key, not per call.
fn sums(deltas: &[UsageDelta]) -> HashMap<(&str, &str), Sum> {
    let mut sums: HashMap<(&str, &str), Sum> = HashMap::new();
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
    sums
}

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
        let backend = super::Backend::of_conn(conn);
        for (key, sum) in sums(deltas) {
            let mut q = Sql::new(backend, "");
            push_upsert(&mut q, key, sum, seq);
            q.execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// The same as `persist`, as statements appended to a SQLite statement list (each
    /// preceded by `;`), so that they cost no trip of their own.
    pub fn push_persist<'a>(q: &mut Sql<'a>, deltas: &'a [UsageDelta], seq: i64) {
        for (key, sum) in sums(deltas) {
            q.push(";\n");
            push_upsert(q, key, sum, seq);
        }
    }

    /// [`UsageState::persist`] on a synchronous SQLite connection, in its open transaction.
    pub fn persist_sqlite(conn: &rusqlite::Connection, deltas: &[UsageDelta], seq: i64) -> rusqlite::Result<()> {
        if deltas.is_empty() {
            return Ok(());
        }
        let mut stmt = conn.prepare_cached(UPSERT_ONE)?;
        for ((budget, scope), (count, amount, tat)) in sums(deltas) {
            stmt.execute(rusqlite::params![budget, scope, count, amount, tat, seq])?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(change: UsageChange) -> UsageDelta {
        UsageDelta {
            budget: "emails".into(),
            scope: "turn-1".into(),
            change,
        }
    }

    /// A count taken back (a modified call no longer charged) is taken back in the
    /// database too, never below zero, whether written on its own or in a statement list:
    /// a restart reads what the ledger had in memory.
    #[tokio::test]
    async fn a_count_taken_back_is_stored_as_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db", dir.path().display());
        let db = crate::store::connect(&secrecy::SecretString::from(url)).await.unwrap();
        crate::store::migrate(&db).await.unwrap();
        let steps = [
            vec![
                delta(UsageChange::Count),
                delta(UsageChange::Count),
                delta(UsageChange::Amount(5.0)),
            ],
            vec![delta(UsageChange::Uncount)],
            vec![delta(UsageChange::Uncount), delta(UsageChange::Uncount)],
            vec![delta(UsageChange::Count)],
        ];
        for fused in [false, true] {
            sqlx::query("DELETE FROM budget_usage").execute(&db).await.unwrap();
            let mut memory = UsageState::default();
            let mut conn = db.acquire().await.unwrap();
            for (seq, deltas) in steps.iter().enumerate() {
                if fused {
                    let mut q = Sql::new(crate::store::Backend::Sqlite, "SELECT 1");
                    UsageState::push_persist(&mut q, deltas, seq as i64);
                    q.execute(&mut *conn).await.unwrap();
                } else {
                    UsageState::persist(&mut conn, deltas, seq as i64).await.unwrap();
                }
                memory.apply(deltas);
                let stored = UsageState::load(&mut conn).await.unwrap();
                assert_eq!(stored.entries, memory.entries, "after step {seq} (fused: {fused})");
            }
            let e = &memory.entries[&("emails".to_string(), "turn-1".to_string())];
            assert_eq!((e.count, e.amount), (1, 5.0));
        }
    }
}
