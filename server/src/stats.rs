//! The Stats page over a time range, computed in SQL over the calls of the range only:
//! the first call of the range is found by its rowid (calls are stored in arrival order)
//! with a binary search of point lookups, so no index on time is needed (none is kept:
//! every index costs each insert a page write).

use crate::store::Db;
use app::api::{Facet, ReviewerLoad, StatsRange};
use std::collections::HashMap;

const HOUR: i64 = 3_600_000;
/// How far before a range held calls are looked for to know the queue's depth at its
/// start (older calls still waiting are found by the index of waiting calls).
const DEPTH_LOOKBACK: i64 = 7 * 24 * HOUR;

/// The range's length and bucket size: hourly for a day, 6-hourly for a week, daily for a month.
pub fn range_of(range: &str) -> Result<(&'static str, i64, i64), String> {
    match range.trim() {
        "" | "24h" => Ok(("24h", 24 * HOUR, HOUR)),
        "7d" => Ok(("7d", 7 * 24 * HOUR, 6 * HOUR)),
        "30d" => Ok(("30d", 30 * 24 * HOUR, 24 * HOUR)),
        other => Err(format!("unknown range {other:?}; use 24h, 7d or 30d")),
    }
}

/// The first rowid of a call created at or after `since_ms` (rowids follow arrival).
pub(crate) async fn first_rowid_since(db: &Db, since_ms: i64) -> Result<i64, sqlx::Error> {
    let (lo, hi): (Option<i64>, Option<i64>) = sqlx::query_as("SELECT min(rowid), max(rowid) FROM tool_calls")
        .fetch_one(db)
        .await?;
    let (Some(mut lo), Some(mut hi)) = (lo, hi) else {
        return Ok(0);
    };
    hi += 1;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let at: Option<i64> =
            sqlx::query_scalar("SELECT created_at_ms FROM tool_calls WHERE rowid >= $1 ORDER BY rowid LIMIT 1")
                .bind(mid)
                .fetch_optional(db)
                .await?;
        match at {
            Some(t) if t < since_ms => lo = mid + 1,
            _ => hi = mid,
        }
    }
    Ok(lo)
}

/// How many of `spans` (held from creation until decided, or still) were waiting at the
/// end of each of `n` buckets starting at `from`.
fn depth_at(spans: &[(i64, Option<i64>)], from: i64, bucket: i64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| {
            let t = from + (i as i64 + 1) * bucket;
            spans
                .iter()
                .filter(|(created, decided)| *created <= t && decided.is_none_or(|d| d > t))
                .count() as u64
        })
        .collect()
}

fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied()
}

pub async fn range(db: &Db, range: &str, now_ms: i64) -> Result<Result<StatsRange, String>, sqlx::Error> {
    let (name, span, bucket) = match range_of(range) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    // Buckets end at the next whole bucket after now, so they line up with the clock.
    let to_ms = (now_ms / bucket + 1) * bucket;
    let from_ms = to_ms - span;
    let n = (span / bucket) as usize;
    let first = first_rowid_since(db, from_ms).await?;

    let rows: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT (created_at_ms - $1) / $2, status, count(*) FROM tool_calls
         WHERE rowid >= $3 AND created_at_ms >= $4 GROUP BY 1, 2",
    )
    .bind(from_ms)
    .bind(bucket)
    .bind(first)
    .bind(from_ms)
    .fetch_all(db)
    .await?;
    let groups = ["allowed", "denied", "held"];
    let mut series: Vec<(String, Vec<u64>)> = groups.iter().map(|g| (g.to_string(), vec![0; n])).collect();
    let mut expiries = 0;
    for (k, status, count) in rows {
        let Some(slot) = usize::try_from(k).ok().filter(|k| *k < n) else {
            continue;
        };
        let g = match status.as_str() {
            "allowed" => 0,
            "denied" => 1,
            _ => 2,
        };
        series[g].1[slot] += count.max(0) as u64;
        if status == "expired" {
            expiries += count.max(0) as u64;
        }
    }

    // Queue depth at each bucket's end: held calls created by then and not yet decided.
    let back = first_rowid_since(db, from_ms - DEPTH_LOOKBACK).await?;
    let mut spans: Vec<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT created_at_ms, decided_at_ms FROM tool_calls
         WHERE rowid >= $1 AND status NOT IN ('allowed', 'denied')",
    )
    .bind(back)
    .fetch_all(db)
    .await?;
    let older: Vec<i64> =
        sqlx::query_scalar("SELECT created_at_ms FROM tool_calls WHERE status = 'pending' AND rowid < $1")
            .bind(back)
            .fetch_all(db)
            .await?;
    spans.extend(older.into_iter().map(|c| (c, None)));
    let depth = depth_at(&spans, from_ms, bucket, n);

    let decided: Vec<(String, i64)> = sqlx::query_as(
        "SELECT decided_by, decided_at_ms - created_at_ms FROM tool_calls
         WHERE rowid >= $1 AND created_at_ms >= $2 AND decided_at_ms IS NOT NULL
           AND status IN ('approved', 'modified', 'rejected', 'skipped', 'overridden')",
    )
    .bind(first)
    .bind(from_ms)
    .fetch_all(db)
    .await?;
    let mut waits: Vec<i64> = decided.iter().map(|(_, w)| (*w).max(0)).collect();
    waits.sort_unstable();
    let mut per: HashMap<String, Vec<i64>> = HashMap::new();
    for (by, wait) in &decided {
        // A quorum names every approver: each of them decided.
        for who in by.split(", ").filter(|w| w.starts_with("user:")) {
            per.entry(who.to_string()).or_default().push((*wait).max(0));
        }
    }
    let mut reviewers: Vec<ReviewerLoad> = per
        .into_iter()
        .map(|(reviewer, mut w)| {
            w.sort_unstable();
            ReviewerLoad {
                reviewer,
                decisions: w.len() as u64,
                median_ms: percentile(&w, 0.5).unwrap_or(0),
            }
        })
        .collect();
    reviewers.sort_by(|a, b| b.decisions.cmp(&a.decisions).then_with(|| a.reviewer.cmp(&b.reviewer)));

    let blocked: Vec<(String, Option<String>, i64)> = sqlx::query_as(
        "SELECT tool, rule, count(*) FROM tool_calls
         WHERE rowid >= $1 AND created_at_ms >= $2 AND status = 'denied' GROUP BY 1, 2",
    )
    .bind(first)
    .bind(from_ms)
    .fetch_all(db)
    .await?;
    let (mut tools, mut rules): (HashMap<String, u64>, HashMap<String, u64>) = Default::default();
    for (tool, rule, count) in blocked {
        *tools.entry(tool).or_default() += count.max(0) as u64;
        if let Some(r) = rule {
            *rules.entry(r).or_default() += count.max(0) as u64;
        }
    }
    let count = |sql: &'static str| async move {
        sqlx::query_scalar::<_, i64>(sql)
            .bind(from_ms)
            .fetch_one(db)
            .await
            .map(|n| n.max(0) as u64)
    };
    Ok(Ok(StatsRange {
        range: name.to_string(),
        from_ms,
        to_ms,
        bucket_ms: bucket,
        series,
        depth,
        decided_by_people: waits.len() as u64,
        wait_p50_ms: percentile(&waits, 0.5),
        wait_p90_ms: percentile(&waits, 0.9),
        wait_p99_ms: percentile(&waits, 0.99),
        reviewers,
        grants: count("SELECT count(*) FROM grants WHERE created_at_ms >= $1").await?,
        overrides: count("SELECT count(*) FROM override_reviews WHERE overridden_at_ms >= $1").await?,
        expiries,
        blocked_tools: Facet::ranked(tools, 10),
        blocked_rules: Facet::ranked(rules, 10),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_percentiles() {
        assert_eq!(range_of("7d").unwrap(), ("7d", 7 * 24 * HOUR, 6 * HOUR));
        assert_eq!(range_of("").unwrap().0, "24h");
        assert!(range_of("1y").is_err());
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[1, 2, 3, 4, 100], 0.5), Some(3));
        assert_eq!(percentile(&[1, 2, 3, 4, 100], 0.99), Some(100));
        // Held at 5, decided at 25; held at 15, still waiting: depth at 10, 20, 30.
        assert_eq!(depth_at(&[(5, Some(25)), (15, None)], 0, 10, 3), [1, 2, 1]);
    }
}
