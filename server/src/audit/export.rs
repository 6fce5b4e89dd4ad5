//! Exports of a search as JSON Lines or CSV, produced page by page as the reader takes
//! them (constant memory for any number of rows). The index finds the events; their data
//! and hash come from the chain, so an export holds the record itself (redacted, as it
//! was stored) and each line can be checked against it.

use super::index::SearchIndex;
use super::search::{rfc3339, select, Plan};
use axum::body::Bytes;
use futures::Stream;
use serde_json::{json, Value};

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

/// The export of everything a plan matches, in its order.
pub fn stream(index: SearchIndex, plan: Plan, format: Format) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    let header = (format == Format::Csv).then(|| {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(COLUMNS);
        Bytes::from(w.into_inner().unwrap_or_default())
    });
    let start = futures::stream::iter(header.map(Ok));
    let pages = futures::stream::try_unfold(Some(plan), move |plan| {
        let index = index.clone();
        async move {
            let Some(mut plan) = plan else { return Ok(None) };
            let (bytes, last) = chunk(&index, &plan, format).await.map_err(std::io::Error::other)?;
            match last {
                Some(seq) => {
                    plan.after = Some(seq);
                    Ok(Some((bytes, Some(plan))))
                }
                None => Ok(None),
            }
        }
    });
    futures::StreamExt::chain(start, pages)
}

type Row = (
    i64,
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

/// One step: the next rows after the plan's cursor, rendered; and the last sequence
/// number (None when nothing was left).
async fn chunk(index: &SearchIndex, plan: &Plan, format: Format) -> Result<(Bytes, Option<i64>), sqlx::Error> {
    if plan.nothing {
        return Ok((Bytes::new(), None));
    }
    let rows: Vec<Row> = select(plan, CHUNK).build_query_as().fetch_all(&index.pool).await?;
    let Some(last) = rows.last().map(|r| r.0) else {
        return Ok((Bytes::new(), None));
    };
    let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new("SELECT seq, data, hash FROM audit_events WHERE seq IN (");
    let mut sep = q.separated(", ");
    for r in &rows {
        sep.push_bind(r.0);
    }
    q.push(")");
    let records: Vec<(i64, String, Vec<u8>)> = q.build_query_as().fetch_all(index.chain()).await?;
    let records: std::collections::HashMap<i64, (String, Vec<u8>)> =
        records.into_iter().map(|(s, d, h)| (s, (d, h))).collect();
    let mut out = Vec::with_capacity(rows.len() * 600);
    let mut csv = (format == Format::Csv).then(|| csv::Writer::from_writer(Vec::new()));
    for r in rows {
        let (data, hash) = records
            .get(&r.0)
            .map_or(("null", String::new()), |(d, h)| (d.as_str(), hex::encode(h)));
        match &mut csv {
            None => {
                let data: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                let line = json!({
                    "seq": r.0, "at": rfc3339(r.1), "at_ms": r.1, "kind": r.2, "actor": r.3, "agent": r.4,
                    "session": r.5, "trace": r.6, "call_id": r.7, "tool": r.8, "status": r.9, "source": r.10,
                    "layer": r.11, "rule": r.12, "reviewer": r.13, "summary": r.14, "data": data, "hash": hash,
                });
                serde_json::to_writer(&mut out, &line).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
                out.push(b'\n');
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
                w.write_record(cells.iter().map(|c| neutralise(c).into_owned()))
                    .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            }
        }
    }
    if let Some(w) = csv {
        out = w
            .into_inner()
            .map_err(|e| sqlx::Error::Decode(Box::new(e.into_error())))?;
    }
    Ok((Bytes::from(out), Some(last)))
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
