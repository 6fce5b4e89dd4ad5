//! Exports of a search as JSON Lines or CSV, produced page by page as the reader takes
//! them (constant memory for any number of rows). The index finds the events; their data
//! and hash come from the chain, so an export holds the record itself (redacted, as it
//! was stored) and each line can be checked against it.

use super::index::SearchIndex;
use super::search::{rfc3339, select, HitRow, Plan};
use axum::body::Bytes;
use futures::Stream;
use serde::Serialize;

/// A JSON Lines row before its `data` and `hash` (appended as stored).
#[derive(Serialize)]
struct Line<'a> {
    seq: i64,
    at: String,
    at_ms: i64,
    kind: &'a str,
    actor: &'a str,
    agent: Option<&'a str>,
    session: Option<&'a str>,
    trace: Option<&'a str>,
    call_id: Option<&'a str>,
    tool: Option<&'a str>,
    status: Option<&'a str>,
    source: Option<&'a str>,
    layer: Option<&'a str>,
    rule: Option<&'a str>,
    reviewer: Option<&'a str>,
    summary: &'a str,
}

/// Rows read per step.
const CHUNK: i64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Csv,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, String> {
        match s {
            "" | "jsonl" | "json" => Ok(Format::Jsonl),
            "csv" => Ok(Format::Csv),
            other => Err(format!("format {other:?} is not jsonl or csv")),
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Jsonl => "application/x-ndjson; charset=utf-8",
            Format::Csv => "text/csv; charset=utf-8",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
        }
    }
}

/// The columns of a CSV export (and the keys of a JSONL line, plus `data`).
pub const COLUMNS: [&str; 18] = [
    "seq", "at", "at_ms", "kind", "actor", "agent", "session", "trace", "call_id", "tool", "status", "source", "layer",
    "rule", "reviewer", "summary", "data", "hash",
];

/// A spreadsheet would run a cell that starts with `=`, `+`, `-`, `@` (or a tab or carriage
/// return before one): such cells get a leading apostrophe, which shows it as text.
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// The export of everything a plan matches, in its order. Reading runs in its own task,
/// at most two chunks ahead of the writing (so the database and the encoding work at the
/// same time, and memory stays bounded); it stops when the reader goes away.
pub fn stream(index: SearchIndex, plan: Plan, format: Format) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    let header = (format == Format::Csv).then(|| {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(COLUMNS);
        Bytes::from(w.into_inner().unwrap_or_default())
    });
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Chunk, sqlx::Error>>(2);
    tokio::spawn(async move {
        let mut plan = plan;
        loop {
            match fetch(&index, &plan).await {
                Ok(Some(chunk)) => {
                    plan.after = chunk.rows.last().map(|r| r.0);
                    if tx.send(Ok(chunk)).await.is_err() {
                        return; // the reader went away
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
    });
    let body = futures::StreamExt::map(tokio_stream::wrappers::ReceiverStream::new(rx), move |chunk| {
        chunk.and_then(|c| render(c, format)).map_err(std::io::Error::other)
    });
    futures::StreamExt::chain(futures::stream::iter(header.map(Ok)), body)
}

/// The next rows after the plan's cursor, with their data and hash from the chain.
struct Chunk {
    rows: Vec<HitRow>,
    records: std::collections::HashMap<i64, (String, Vec<u8>)>,
}

async fn fetch(index: &SearchIndex, plan: &Plan) -> Result<Option<Chunk>, sqlx::Error> {
    if plan.nothing {
        return Ok(None);
    }
    let rows: Vec<HitRow> = select(index.backend(), plan, CHUNK).fetch_all(&index.pool).await?;
    let (Some(first), Some(last)) = (rows.first().map(|r| r.0), rows.last().map(|r| r.0)) else {
        return Ok(None);
    };
    let (lo, hi) = (first.min(last), first.max(last));
    // Dense results (a time range, a busy filter) read the chain as one range.
    let records: Vec<(i64, String, Vec<u8>)> = if hi - lo < 4 * rows.len() as i64 {
        sqlx::query_as("SELECT seq, data, hash FROM audit_events WHERE seq BETWEEN $1 AND $2")
            .bind(lo)
            .bind(hi)
            .fetch_all(index.chain())
            .await?
    } else {
        let mut q = crate::store::Sql::new(
            crate::store::Backend::of(index.chain()),
            "SELECT seq, data, hash FROM audit_events WHERE seq IN (",
        );
        q.list(rows.iter().map(|r| r.0)).push(")");
        q.fetch_all(index.chain()).await?
    };
    let records = records.into_iter().map(|(s, d, h)| (s, (d, h))).collect();
    Ok(Some(Chunk { rows, records }))
}

/// One chunk in the export's format.
fn render(chunk: Chunk, format: Format) -> Result<Bytes, sqlx::Error> {
    let Chunk { rows, records } = chunk;
    let mut out = Vec::with_capacity(rows.len() * 600);
    let mut csv = (format == Format::Csv).then(|| csv::Writer::from_writer(Vec::new()));
    for r in rows {
        let (data, hash) = records
            .get(&r.0)
            .map_or(("null", String::new()), |(d, h)| (d.as_str(), hex::encode(h)));
        match &mut csv {
            None => {
                // The stored data is canonical JSON already: written as is, not re-parsed.
                let line = Line {
                    seq: r.0,
                    at: rfc3339(r.1),
                    at_ms: r.1,
                    kind: &r.2,
                    actor: &r.3,
                    agent: r.4.as_deref(),
                    session: r.5.as_deref(),
                    trace: r.6.as_deref(),
                    call_id: r.7.as_deref(),
                    tool: r.8.as_deref(),
                    status: r.9.as_deref(),
                    source: r.10.as_deref(),
                    layer: r.11.as_deref(),
                    rule: r.12.as_deref(),
                    reviewer: r.13.as_deref(),
                    summary: &r.14,
                };
                serde_json::to_writer(&mut out, &line).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
                out.pop(); // the closing brace: data and hash follow
                out.extend_from_slice(b",\"data\":");
                out.extend_from_slice(data.as_bytes());
                out.extend_from_slice(b",\"hash\":\"");
                out.extend_from_slice(hash.as_bytes());
                out.extend_from_slice(b"\"}\n");
            }
            Some(w) => {
                let (seq, at, at_ms) = (r.0.to_string(), rfc3339(r.1), r.1.to_string());
                let opt = |o: &Option<String>| o.clone().unwrap_or_default();
                let cells = [
                    seq,
                    at,
                    at_ms,
                    r.2,
                    r.3,
                    opt(&r.4),
                    opt(&r.5),
                    opt(&r.6),
                    opt(&r.7),
                    opt(&r.8),
                    opt(&r.9),
                    opt(&r.10),
                    opt(&r.11),
                    opt(&r.12),
                    opt(&r.13),
                    r.14,
                    data.to_string(),
                    hash,
                ];
                let fail = |e: csv::Error| sqlx::Error::Decode(Box::new(e));
                for c in &cells {
                    w.write_field(neutralise(c).as_bytes()).map_err(fail)?;
                }
                w.write_record(std::iter::empty::<&[u8]>()).map_err(fail)?;
            }
        }
    }
    if let Some(w) = csv {
        out = w
            .into_inner()
            .map_err(|e| sqlx::Error::Decode(Box::new(e.into_error())))?;
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised_and_others_left_alone() {
        for bad in ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "\r=x"] {
            assert!(neutralise(bad).starts_with('\''), "{bad}");
        }
        for ok in ["", "hello", "1-2", "tc_1", "{\"a\":\"=b\"}", "'quoted"] {
            assert_eq!(neutralise(ok), ok);
        }
    }
}
