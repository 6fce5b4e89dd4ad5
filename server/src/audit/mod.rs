//! The audit trail: append-only events, each holding the hash of the one before.
//!
//! `hash = SHA-256("airlock-audit-v1\0" || canonical JSON of {seq, at_ms, kind, actor,
//! call_id, session_id, data, prev_hash})`. Editing, inserting or deleting any event
//! breaks the chain from that point, and [`verify`] names the first broken sequence
//! number. Data is redacted before it gets here. Deleting events from the tail cannot be
//! seen from the chain alone: `airlock audit verify` prints the head (seq + hash) so it
//! can be recorded elsewhere and checked later with `--expect-head`.
//!
//! Stored: each event's own hash (32 bytes); the previous hash is the previous event's,
//! derived when verifying (migration 0006 dropped the stored copy; the hashed document is
//! unchanged, so older events verify alike). Appends run inside write transactions, so
//! they are serial (see [`append`]).

pub mod checkpoint;
pub mod export;
pub mod fingerprint;
pub mod http;
pub mod index;
pub mod search;
mod sqlite_indexer;
pub mod trace;
pub mod words;

use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;

pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// An event before it gets its place in the chain.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: &'static str,
    /// `agent:<id>`, `user:<name>`, `system` or `address:<ip>` (unauthenticated).
    pub actor: String,
    pub call_id: Option<String>,
    pub session_id: Option<String>,
    /// Redacted details.
    pub data: Value,
}

/// The position of the newest event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub seq: i64,
    pub hash: String,
}

impl Head {
    pub fn genesis() -> Head {
        Head {
            seq: 0,
            hash: GENESIS.to_string(),
        }
    }

    /// The head as stored: the newest event's sequence number and hash, if any.
    pub fn stored(newest: Option<(i64, Vec<u8>)>) -> Head {
        newest.map_or_else(Head::genesis, |(seq, hash)| Head {
            seq,
            hash: hex::encode(hash),
        })
    }
}

/// Leave out what an event does not have: null fields and empty lists, in the event and
/// in its objects one level down (`decision`, `timings`). Deeper values (the call's
/// arguments) are kept exactly as they are.
pub fn compact(mut data: Value) -> Value {
    if let Value::Object(top) = &mut data {
        top.retain(|_, v| !absent(v));
        for (k, v) in top.iter_mut() {
            if k == "arguments" {
                continue;
            }
            if let Value::Object(inner) = v {
                inner.retain(|_, v| !absent(v));
            }
        }
    }
    data
}

/// What [`compact`] leaves out: a null field or an empty list.
pub fn absent(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(Vec::is_empty)
}

/// How a `call_received` event names the policy that decided it: the version's first 16
/// hex digits (64 bits; `policy_versions` and the `policy_loaded`/`policy_applied` events
/// hold the whole version). Events written before this keep `policy_version` in full.
pub fn policy_ref(version: &str) -> &str {
    let hex = version.strip_prefix("sha256:").unwrap_or(version);
    hex.get(..16).unwrap_or(hex)
}

/// The values a received call's decision usually has: its event leaves them out
/// ([`without_usual`]) and every reader puts them back ([`received_decision`]).
fn usual_decision() -> [(&'static str, Value); 3] {
    [
        ("source", "policy".into()),
        ("risk", "low".into()),
        ("approvers_required", 0.into()),
    ]
}

/// A `call_received` event's data with the usual values left out of its decision.
pub fn without_usual(mut data: Value) -> Value {
    if let Some(Value::Object(d)) = data.get_mut("decision") {
        for (k, usual) in usual_decision() {
            if d.get(k) == Some(&usual) {
                d.remove(k);
            }
        }
    }
    data
}

/// A `call_received` event's decision as written, with the usual values it leaves out put
/// back: what every reader sees.
pub fn received_decision(data: &Value) -> Value {
    let mut d = data.get("decision").cloned().unwrap_or(Value::Null);
    if let Value::Object(m) = &mut d {
        for (k, usual) in usual_decision() {
            m.entry(k).or_insert(usual);
        }
    }
    d
}

/// The hash of one event; `data` is its canonical JSON text.
#[allow(clippy::too_many_arguments)]
pub fn event_hash(
    seq: i64,
    at_ms: i64,
    kind: &str,
    actor: &str,
    call_id: Option<&str>,
    session_id: Option<&str>,
    data: &Value,
    prev_hash: &str,
) -> String {
    let mut canon = String::new();
    policy::load::canonical_json(data, &mut canon);
    event_hash_canonical(seq, at_ms, kind, actor, call_id, session_id, &canon, prev_hash)
}

/// [`event_hash`] with `data` already in canonical form. The hashed document is the
/// canonical JSON of `{seq, at_ms, kind, actor, call_id, session_id, data, prev_hash}`,
/// written here field by field in sorted key order, so the (large) data is neither cloned
/// nor canonicalised twice — this runs in the serial ledger for every event.
#[allow(clippy::too_many_arguments)]
pub fn event_hash_canonical(
    seq: i64,
    at_ms: i64,
    kind: &str,
    actor: &str,
    call_id: Option<&str>,
    session_id: Option<&str>,
    canonical_data: &str,
    prev_hash: &str,
) -> String {
    fn text(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail"),
            None => out.extend_from_slice(b"null"),
        }
    }
    let mut doc = Vec::with_capacity(canonical_data.len() + 256);
    doc.extend_from_slice(b"{\"actor\":");
    text(&mut doc, Some(actor));
    doc.extend_from_slice(format!(",\"at_ms\":{at_ms},\"call_id\":").as_bytes());
    text(&mut doc, call_id);
    doc.extend_from_slice(b",\"data\":");
    doc.extend_from_slice(canonical_data.as_bytes());
    doc.extend_from_slice(b",\"kind\":");
    text(&mut doc, Some(kind));
    doc.extend_from_slice(b",\"prev_hash\":");
    text(&mut doc, Some(prev_hash));
    doc.extend_from_slice(format!(",\"seq\":{seq},\"session_id\":").as_bytes());
    text(&mut doc, session_id);
    doc.push(b'}');
    let mut h = Sha256::new();
    h.update(b"airlock-audit-v1\0");
    h.update(&doc);
    hex::encode(h.finalize())
}

/// Read the newest event's position.
pub async fn head(conn: &mut AnyConnection) -> Result<Head, sqlx::Error> {
    let row: Option<(i64, Vec<u8>)> = sqlx::query_as("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1")
        .fetch_optional(conn)
        .await?;
    Ok(Head::stored(row))
}

/// An event with its place in the chain, ready to insert.
pub struct Chained<'a> {
    pub seq: i64,
    pub at_ms: i64,
    pub ev: &'a NewEvent,
    pub data: String,
    pub hash: String,
}

/// Give `ev` the next place after `head` and advance it (no I/O).
pub fn chain<'a>(head: &mut Head, at_ms: i64, ev: &'a NewEvent) -> Chained<'a> {
    let seq = head.seq + 1;
    let mut data = String::new();
    policy::load::canonical_json(&ev.data, &mut data);
    let hash = event_hash_canonical(
        seq,
        at_ms,
        ev.kind,
        &ev.actor,
        ev.call_id.as_deref(),
        ev.session_id.as_deref(),
        &data,
        &head.hash,
    );
    head.hash.clone_from(&hash);
    head.seq = seq;
    Chained {
        seq,
        at_ms,
        ev,
        data,
        hash,
    }
}

/// Insert chained events with one statement.
pub async fn insert_many(conn: &mut AnyConnection, events: &[Chained<'_>]) -> Result<(), sqlx::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let mut q = crate::store::Sql::new(crate::store::Backend::of_conn(conn), "");
    push_insert(&mut q, events);
    q.execute(conn).await?;
    Ok(())
}

/// The columns an event fills, in the order both inserts bind them.
macro_rules! insert_events {
    () => {
        "INSERT INTO audit_events (seq, at_ms, kind, actor, call_id, session_id, data, hash)"
    };
}

/// The statement of [`insert_many`], appended to `q` (which may hold others before it).
pub fn push_insert<'a>(q: &mut crate::store::Sql<'a>, events: &'a [Chained<'a>]) {
    q.push(concat!(insert_events!(), " VALUES "));
    q.rows(events, |b, e| {
        b.bind(e.seq)
            .bind(e.at_ms)
            .bind(e.ev.kind)
            .bind(e.ev.actor.as_str())
            .bind(e.ev.call_id.as_deref())
            .bind(e.ev.session_id.as_deref())
            .bind(e.data.as_str())
            .bind(hex::decode(&e.hash).unwrap_or_default());
    });
}

/// One event, for a prepared statement of its own (the ledger's SQLite connection).
pub const INSERT_ONE: &str = concat!(insert_events!(), " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");

impl Chained<'_> {
    /// Insert this event with [`INSERT_ONE`], prepared.
    pub fn insert_one(&self, stmt: &mut rusqlite::Statement<'_>) -> rusqlite::Result<()> {
        let e = self;
        stmt.execute(rusqlite::params![
            e.seq,
            e.at_ms,
            e.ev.kind,
            e.ev.actor,
            e.ev.call_id,
            e.ev.session_id,
            e.data,
            hex::decode(&e.hash).unwrap_or_default(),
        ])
        .map(drop)
    }
}

/// Append one event after `head` and advance it, inside a write transaction (`BEGIN
/// IMMEDIATE`, so appends are serial): the ledger's batches, and the few administrative
/// writes (users, agents, the policy in force) that run their own transaction.
pub async fn append(conn: &mut AnyConnection, head: &mut Head, at_ms: i64, ev: &NewEvent) -> Result<i64, sqlx::Error> {
    append_many(conn, head, at_ms, std::slice::from_ref(ev)).await?;
    Ok(head.seq)
}

/// [`append`] for several events, in order, with one statement; `head` moves only once
/// they are all written.
pub async fn append_many(
    conn: &mut AnyConnection,
    head: &mut Head,
    at_ms: i64,
    events: &[NewEvent],
) -> Result<(), sqlx::Error> {
    let mut next = head.clone();
    let chained: Vec<Chained<'_>> = events.iter().map(|ev| chain(&mut next, at_ms, ev)).collect();
    insert_many(conn, &chained).await?;
    *head = next;
    Ok(())
}

/// The hash stored for event `seq`, if it exists (for `--expect-head`).
pub async fn hash_at(url: &secrecy::SecretString, seq: i64) -> Result<Option<String>, String> {
    let db = crate::store::connect(url).await?;
    let h: Result<Option<Vec<u8>>, String> = sqlx::query_scalar("SELECT hash FROM audit_events WHERE seq = $1")
        .bind(seq)
        .fetch_optional(&db)
        .await
        .map_err(|e| e.to_string());
    db.close().await;
    h.map(|h| h.map(hex::encode))
}

/// The stored hash of event `seq` (hex), if it exists.
pub async fn hash_in(db: &crate::store::Db, seq: i64) -> Result<Option<String>, sqlx::Error> {
    let h: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM audit_events WHERE seq = $1")
        .bind(seq)
        .fetch_optional(db)
        .await?;
    Ok(h.map(hex::encode))
}

/// The outcome of checking the whole chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub events: u64,
    pub head: Head,
    /// The first problem found: (sequence number, what is wrong).
    pub problem: Option<(i64, String)>,
}

/// Walk the chain from the first event and recompute every hash.
pub async fn verify(db: &crate::store::Db) -> Result<Verification, sqlx::Error> {
    use futures::TryStreamExt;
    type Row = (
        i64,
        i64,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
        Vec<u8>,
    );
    let mut rows = sqlx::query_as::<_, Row>(
        "SELECT seq, at_ms, kind, actor, call_id, session_id, data, hash FROM audit_events ORDER BY seq",
    )
    .fetch(db);
    let mut prev = Head::genesis();
    let mut events = 0u64;
    while let Some((seq, at_ms, kind, actor, call_id, session_id, data, hash)) = rows.try_next().await? {
        let fail = |why: String| Verification {
            events,
            head: prev.clone(),
            problem: Some((seq, why)),
        };
        if seq != prev.seq + 1 {
            return Ok(fail(format!(
                "expected event {} but found {seq}: events were deleted or inserted",
                prev.seq + 1
            )));
        }
        let value: Value = match serde_json::from_str(&data) {
            Ok(v) => v,
            Err(_) => return Ok(fail("its data is not valid JSON: the event was edited".into())),
        };
        let expected = event_hash(
            seq,
            at_ms,
            &kind,
            &actor,
            call_id.as_deref(),
            session_id.as_deref(),
            &value,
            &prev.hash,
        );
        let hash = hex::encode(hash);
        if expected != hash {
            return Ok(fail(
                "its content or its place does not match its hash: this event or the one before was edited".into(),
            ));
        }
        prev = Head { seq, hash };
        events += 1;
    }
    Ok(Verification {
        events,
        head: prev,
        problem: None,
    })
}

/// The chain's length (its latest sequence number: sequence numbers have no gaps) and
/// its `limit` latest events as (seq, at, kind, actor, call, session), newest first.
pub async fn latest(
    db: &crate::store::Db,
    limit: i64,
) -> Result<(i64, Vec<(i64, i64, String, String, Option<String>, Option<String>)>), sqlx::Error> {
    let (len,): (i64,) = sqlx::query_as("SELECT coalesce(max(seq), 0) FROM audit_events")
        .fetch_one(db)
        .await?;
    let rows = sqlx::query_as(
        "SELECT seq, at_ms, kind, actor, call_id, session_id FROM audit_events ORDER BY seq DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok((len, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_events_leave_out_what_is_absent_but_never_touch_the_arguments() {
        let v = serde_json::json!({
            "tool": "t", "server": null, "masked": [], "arguments": {"a": null, "b": []},
            "decision": {"rule": null, "status": "allowed", "shadow": []},
        });
        assert_eq!(
            compact(v),
            serde_json::json!({"tool": "t", "arguments": {"a": null, "b": []}, "decision": {"status": "allowed"}})
        );
    }
    use serde_json::json;

    #[test]
    fn the_hash_covers_every_field_and_the_previous_hash() {
        let base = event_hash(1, 5, "k", "a", Some("c"), Some("s"), &json!({"x": 1}), GENESIS);
        assert_eq!(base.len(), 64);
        let variants = [
            event_hash(2, 5, "k", "a", Some("c"), Some("s"), &json!({"x": 1}), GENESIS),
            event_hash(1, 6, "k", "a", Some("c"), Some("s"), &json!({"x": 1}), GENESIS),
            event_hash(1, 5, "j", "a", Some("c"), Some("s"), &json!({"x": 1}), GENESIS),
            event_hash(1, 5, "k", "b", Some("c"), Some("s"), &json!({"x": 1}), GENESIS),
            event_hash(1, 5, "k", "a", None, Some("s"), &json!({"x": 1}), GENESIS),
            event_hash(1, 5, "k", "a", Some("c"), None, &json!({"x": 1}), GENESIS),
            event_hash(1, 5, "k", "a", Some("c"), Some("s"), &json!({"x": 2}), GENESIS),
            event_hash(1, 5, "k", "a", Some("c"), Some("s"), &json!({"x": 1}), &base),
        ];
        for v in variants {
            assert_ne!(v, base);
        }
    }

    /// Hashes in existing databases must keep verifying: this one was computed by the
    /// first version of the chain and must never change.
    #[test]
    fn the_hash_format_is_stable() {
        let data = json!({"tool": "write_file", "n": -1.5, "ok": true, "none": null, "s": "a\"<é>\u{1}",
                          "nested": {"b": [1, {"z": 0, "a": "x"}], "a": []}});
        let h = event_hash(
            42,
            1_700_000_000_123,
            "call_received",
            "agent:bot",
            Some("tc_1"),
            None,
            &data,
            GENESIS,
        );
        assert_eq!(h, "03088436bd92ddee114cc10e85ba216ccb6190285e95d0360645aea3adf883e6");
        let mut canon = String::new();
        policy::load::canonical_json(&data, &mut canon);
        assert_eq!(
            h,
            event_hash_canonical(
                42,
                1_700_000_000_123,
                "call_received",
                "agent:bot",
                Some("tc_1"),
                None,
                &canon,
                GENESIS
            )
        );
    }

    #[test]
    fn key_order_in_data_does_not_change_the_hash() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":[1,{"d":2,"c":3}]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":[1,{"c":3,"d":2}],"a":1}"#).unwrap();
        assert_eq!(
            event_hash(1, 1, "k", "a", None, None, &a, GENESIS),
            event_hash(1, 1, "k", "a", None, None, &b, GENESIS)
        );
    }
}
