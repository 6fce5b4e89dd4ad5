//! Searching the index: a URL query becomes one SQL statement with bound values only.
//! Free text is rewritten into quoted FTS5 terms on SQLite and a `tsquery` of quoted words
//! on PostgreSQL (see [`super::words`]), so no user text is ever read as FTS or SQL syntax. Pages are keyset-paginated on the event's sequence number: a cursor stays
//! valid however many events arrive meanwhile.

use super::index::SearchIndex;
use crate::store::{Backend, Sql};
use app::api::{AuditHit, AuditQuery};

/// Events per page on the audit page.
pub const PAGE: i64 = 50;
/// Largest accepted length of any query field.
const MAX_FIELD: usize = 500;

/// A query checked and turned into bounds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// Free-text terms (text, prefix), all of which must match.
    pub terms: Vec<(String, bool)>,
    /// Free text was given but holds no searchable word: nothing can match.
    pub nothing: bool,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub equal: Vec<(&'static str, String)>,
    pub oldest_first: bool,
    pub after: Option<i64>,
}

/// Check a query: every field has a known shape, times parse, the cursor is a number.
pub fn plan(q: &AuditQuery, now_ms: i64) -> Result<Plan, String> {
    for (name, v) in q.fields() {
        if v.len() > MAX_FIELD {
            return Err(format!("{name} is longer than {MAX_FIELD} characters"));
        }
    }
    let mut p = Plan {
        since_ms: parse_time(&q.since, now_ms).map_err(|e| format!("since: {e}"))?,
        until_ms: parse_time(&q.until, now_ms).map_err(|e| format!("until: {e}"))?,
        ..Plan::default()
    };
    match fts_expression(&q.q) {
        Fts::None => {}
        Fts::Nothing => p.nothing = true,
        Fts::Match(terms) => p.terms = terms,
    }
    for (column, value) in [
        ("agent", &q.agent),
        ("session", &q.session),
        ("trace", &q.trace),
        ("tool", &q.tool),
        ("status", &q.status),
        ("layer", &q.layer),
        ("rule", &q.rule),
        ("source", &q.source),
        ("reviewer", &q.reviewer),
        ("kind", &q.kind),
    ] {
        let v = value.trim();
        if !v.is_empty() {
            p.equal.push((column, v.to_string()));
        }
    }
    p.oldest_first = match q.sort.as_str() {
        "" | "newest" => false,
        "oldest" => true,
        other => return Err(format!("sort: {other:?} is not newest or oldest")),
    };
    if !q.after.is_empty() {
        p.after = Some(
            q.after
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or("after: not a cursor from a previous page")?,
        );
    }
    Ok(p)
}

pub(crate) enum Fts {
    None,
    Nothing,
    Match(Vec<(String, bool)>),
}

/// Free text → terms: words and `"phrases"`, `word*` a prefix; all terms must match.
pub(crate) fn fts_expression(text: &str) -> Fts {
    let mut terms: Vec<(String, bool)> = Vec::new(); // (text, prefix)
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                word.push(c);
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        let prefix = word.ends_with('*') && word.trim_end_matches('*').chars().any(char::is_alphanumeric);
        let word = word.trim_end_matches('*').to_string();
        terms.push((word, prefix));
    }
    // A term without a word has nothing to match (and FTS5 would reject it); both
    // databases see the same words (`super::words`).
    let had_any = !terms.is_empty();
    terms.retain(|(w, _)| !super::words::words(w).is_empty());
    if terms.is_empty() {
        return if had_any { Fts::Nothing } else { Fts::None };
    }
    Fts::Match(terms)
}

/// Terms → an FTS5 expression: each a quoted string (a quote inside is doubled), a prefix
/// marked `*`, joined by AND. Nothing the user types can be an FTS operator, a column
/// filter or broken syntax (and `rm -rf` means what it says).
pub(crate) fn fts5(terms: &[(String, bool)]) -> String {
    let quote =
        |(w, prefix): &(String, bool)| format!("\"{}\"{}", w.replace('"', "\"\""), if *prefix { "*" } else { "" });
    terms.iter().map(quote).collect::<Vec<_>>().join(" AND ")
}

/// Parse a time bound: empty, a span back from now (`30m`, `24h`, `7d`), a date
/// (`2026-12-01`, midnight UTC), a date and time (`2026-12-01T09:30[:00]`, UTC),
/// RFC 3339, or milliseconds since the epoch.
pub fn parse_time(s: &str, now_ms: i64) -> Result<Option<i64>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if let Some(unit) = s.chars().last().filter(|c| matches!(c, 's' | 'm' | 'h' | 'd' | 'w')) {
        if let Ok(n) = s[..s.len() - 1].parse::<i64>() {
            let ms = match unit {
                's' => 1_000,
                'm' => 60_000,
                'h' => 3_600_000,
                'd' => 86_400_000,
                _ => 7 * 86_400_000,
            };
            return Ok(Some(now_ms.saturating_sub(n.saturating_mul(ms))));
        }
    }
    if s.len() >= 12 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map(Some).map_err(|_| format!("{s:?} is not a time"));
    }
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = time::OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(Some((t.unix_timestamp_nanos() / 1_000_000) as i64));
    }
    let bad = || {
        format!(
            "{s:?} is not a time: use 2026-12-01, 2026-12-01T09:30, RFC 3339, or a span back from now like 24h or 7d"
        )
    };
    let (date, clock) = s.split_once(['T', ' ']).unwrap_or((s, ""));
    let mut d = date.split('-').map(|p| p.parse::<i32>().map_err(|_| bad()));
    let (y, m, day) = (
        d.next().ok_or_else(bad)??,
        d.next().ok_or_else(bad)??,
        d.next().ok_or_else(bad)??,
    );
    if d.next().is_some() {
        return Err(bad());
    }
    let month = time::Month::try_from(u8::try_from(m).map_err(|_| bad())?).map_err(|_| bad())?;
    let date = time::Date::from_calendar_date(y, month, u8::try_from(day).map_err(|_| bad())?).map_err(|_| bad())?;
    let mut hms = [0u8; 3];
    if !clock.is_empty() {
        let parts: Vec<&str> = clock.trim_end_matches('Z').split(':').collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(bad());
        }
        for (i, p) in parts.iter().enumerate() {
            hms[i] = p.parse().map_err(|_| bad())?;
        }
    }
    let t = time::Time::from_hms(hms[0], hms[1], hms[2]).map_err(|_| bad())?;
    Ok(Some(
        (date.with_time(t).assume_utc().unix_timestamp_nanos() / 1_000_000) as i64,
    ))
}

/// Milliseconds since the epoch as RFC 3339 (UTC, milliseconds).
pub fn rfc3339(ms: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let f = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    t.format(&f).unwrap_or_default()
}

/// The SQL for a plan: the matching index rows, in order, after the cursor, at most `limit`.
pub(crate) fn select(backend: Backend, p: &Plan, limit: i64) -> Sql<'static> {
    let mut q = Sql::new(
        backend,
        "SELECT e.seq, e.at_ms, e.kind, e.actor, e.agent, e.session, e.trace, e.call_id, e.tool, e.status,
         e.source, e.layer, e.rule, e.reviewer, e.summary FROM ",
    );
    // SQLite answers most filters from its full-text table (`index::FACETS`), unless a
    // session or trace (B-tree indexed) narrows without free text: then their index drives
    // and the other filters are compared on the few rows it finds, where walking a common
    // value's tokens could pass most of the index before finding one of that session.
    let is_facet = |column: &&str| super::index::FACETS.contains(column);
    let indexed = p.equal.iter().any(|(column, _)| !is_facet(column));
    let facets: Vec<String> = match backend {
        Backend::Sqlite if !p.terms.is_empty() || !indexed => p
            .equal
            .iter()
            .filter(|(column, _)| is_facet(column))
            .map(|(column, value)| format!("facets : \"{}\"", super::index::facet_token(column, value)))
            .collect(),
        _ => Vec::new(),
    };
    let key = if p.terms.is_empty() && facets.is_empty() {
        q.push("search_events e WHERE 1 = 1");
        "e.seq"
    } else if backend == Backend::Sqlite {
        // The FTS table drives (it walks rowids in order and stops at the limit).
        q.push("search_fts f JOIN search_events e ON e.seq = f.rowid WHERE search_fts MATCH ");
        let words = (!p.terms.is_empty()).then(|| format!("text : ({})", fts5(&p.terms)));
        q.bind(words.into_iter().chain(facets).collect::<Vec<_>>().join(" AND "));
        "f.rowid"
    } else {
        q.push("search_events e WHERE ");
        match super::words::tsquery(&p.terms) {
            Some(tsquery) => q.push("e.words @@ CAST(").bind(tsquery).push(" AS tsquery)"),
            None => q.push("1 = 0"),
        };
        "e.seq"
    };
    for (column, value) in &p.equal {
        // Column names come from the fixed list in `plan`, never from the request. Facets
        // matched above are compared again: the column, not the token, has the last word.
        q.push(&format!(" AND e.{column} = "));
        q.bind(value.clone());
    }
    if let Some(t) = p.since_ms {
        // Sequence numbers follow time: bound them too (with a minute of slack for a clock
        // that stepped back), so an old window is not found by walking every newer event.
        q.push(&format!(
            " AND {key} >= coalesce((SELECT seq FROM search_events WHERE at_ms >= "
        ));
        q.bind(t.saturating_sub(60_000));
        // No event that late: nothing can match (the bound is past every event).
        q.push(" ORDER BY at_ms, seq LIMIT 1), 9223372036854775807) AND e.at_ms >= ");
        q.bind(t);
    }
    if let Some(t) = p.until_ms {
        q.push(&format!(
            " AND {key} <= coalesce((SELECT seq FROM search_events WHERE at_ms < "
        ));
        q.bind(t.saturating_add(60_000));
        q.push(" ORDER BY at_ms DESC, seq DESC LIMIT 1), 0) AND e.at_ms < ");
        q.bind(t);
    }
    let (cmp, order) = if p.oldest_first { (">", "ASC") } else { ("<", "DESC") };
    if let Some(after) = p.after {
        q.push(&format!(" AND {key} {cmp} "));
        q.bind(after);
    }
    q.push(&format!(" ORDER BY {key} {order} LIMIT "));
    q.bind(limit);
    q
}

/// One index row as `select` reads it (in its column order).
pub(crate) type HitRow = (
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

fn hit(r: HitRow) -> AuditHit {
    AuditHit {
        seq: r.0,
        at_ms: r.1,
        kind: r.2,
        actor: r.3,
        agent: r.4,
        session: r.5,
        trace: r.6,
        call_id: r.7,
        tool: r.8,
        status: r.9,
        source: r.10,
        layer: r.11,
        rule: r.12,
        reviewer: r.13,
        summary: r.14,
    }
}

/// One page of results and the next page's cursor.
pub async fn page(index: &SearchIndex, p: &Plan, limit: i64) -> Result<(Vec<AuditHit>, Option<String>), sqlx::Error> {
    if p.nothing {
        return Ok((Vec::new(), None));
    }
    let rows: Vec<HitRow> = select(index.backend(), p, limit + 1).fetch_all(&index.pool).await?;
    let more = rows.len() as i64 > limit;
    let hits: Vec<AuditHit> = rows.into_iter().take(limit as usize).map(hit).collect();
    let next = more.then(|| hits.last().map(|h| h.seq.to_string())).flatten();
    Ok((hits, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> String {
        match fts_expression(s) {
            Fts::Match(e) => fts5(&e),
            Fts::None => "<none>".into(),
            Fts::Nothing => "<nothing>".into(),
        }
    }

    #[test]
    fn free_text_becomes_quoted_terms() {
        assert_eq!(m("rm -rf"), "\"rm\" AND \"-rf\"");
        assert_eq!(m("write_file /etc/passwd"), "\"write_file\" AND \"/etc/passwd\"");
        assert_eq!(m("\"send email\" bob*"), "\"send email\" AND \"bob\"*");
        assert_eq!(m("a\"b"), "\"a\"\"b\"");
        assert_eq!(m(""), "<none>");
        assert_eq!(m("  "), "<none>");
        assert_eq!(m("* ( ) \" -"), "<nothing>");
        assert_eq!(m("-only"), "\"-only\"");
        assert_eq!(
            m("NEAR(a b) OR text:x"),
            "\"NEAR(a\" AND \"b)\" AND \"OR\" AND \"text:x\""
        );
    }

    #[test]
    fn times_parse_in_every_documented_shape() {
        let now = 1_764_633_600_000; // 2025-12-02T00:00:00Z
        assert_eq!(parse_time("", now), Ok(None));
        assert_eq!(parse_time("24h", now), Ok(Some(now - 86_400_000)));
        assert_eq!(parse_time("7d", now), Ok(Some(now - 7 * 86_400_000)));
        assert_eq!(parse_time("2025-12-02", now), Ok(Some(now)));
        assert_eq!(parse_time("2025-12-02T01:30", now), Ok(Some(now + 5_400_000)));
        assert_eq!(parse_time("2025-12-02T01:30:00Z", now), Ok(Some(now + 5_400_000)));
        assert_eq!(parse_time("2025-12-02T02:30:00+01:00", now), Ok(Some(now + 5_400_000)));
        assert_eq!(parse_time("1764633600000", now), Ok(Some(now)));
        for bad in ["yesterday", "2025-13-01", "2025-12-02T25:00", "12-02", "1d2h", "-"] {
            assert!(parse_time(bad, now).is_err(), "{bad}");
        }
        assert_eq!(rfc3339(now + 5), "2025-12-02T00:00:00.005Z");
    }

    #[test]
    fn a_query_is_checked_before_it_runs() {
        let q = |f: &dyn Fn(&mut AuditQuery)| {
            let mut q = AuditQuery::default();
            f(&mut q);
            plan(&q, 0)
        };
        assert!(q(&|q| q.sort = "size".into()).is_err());
        assert!(q(&|q| q.after = "abc".into()).is_err());
        assert!(q(&|q| q.after = "-1".into()).is_err());
        assert!(q(&|q| q.agent = "x".repeat(501)).is_err());
        let p = q(&|q| {
            q.agent = " bot ".into();
            q.after = "10".into();
            q.sort = "oldest".into();
        })
        .unwrap();
        assert_eq!(p.equal, vec![("agent", "bot".to_string())]);
        assert_eq!((p.after, p.oldest_first), (Some(10), true));
    }
}
