//! Statements assembled at run time (multi-row inserts, `IN` lists) with each database's
//! placeholders: `$n` for PostgreSQL (sqlx's `QueryBuilder` writes `?` for the Any driver,
//! which PostgreSQL refuses), plain `?` for SQLite (its named parameters are looked up by a
//! linear scan per value: a 10,000-value insert would spend most of its time there).

use sqlx::any::{AnyArguments, AnyQueryResult, AnyRow};
use sqlx::{Any, Arguments, Encode, Executor, FromRow, Type};
use std::fmt::Write;

pub struct Sql<'a> {
    text: String,
    args: AnyArguments<'a>,
    count: usize,
    numbered: bool,
    failed: Option<sqlx::error::BoxDynError>,
}

impl<'a> Sql<'a> {
    pub fn new(backend: super::Backend, text: impl Into<String>) -> Sql<'a> {
        Sql {
            text: text.into(),
            args: AnyArguments::default(),
            count: 0,
            numbered: backend == super::Backend::Postgres,
            failed: None,
        }
    }

    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// A placeholder for `value`.
    pub fn bind<T: 'a + Encode<'a, Any> + Type<Any>>(&mut self, value: T) -> &mut Self {
        self.count += 1;
        if self.numbered {
            let _ = write!(self.text, "${}", self.count);
        } else {
            self.text.push('?');
        }
        if let Err(e) = self.args.add(value) {
            self.failed.get_or_insert(e);
        }
        self
    }

    /// A placeholder for `value` read as SQL type `ty` (a PostgreSQL type the Any driver
    /// cannot name, such as `tsvector`, sent as text).
    pub fn bind_as<T: 'a + Encode<'a, Any> + Type<Any>>(&mut self, value: T, ty: &'static str) -> &mut Self {
        self.push("CAST(");
        self.bind(value);
        self.push(" AS ");
        self.push(ty);
        self.push(")")
    }

    /// `$1, $2, …`: one placeholder per value, for an `IN (…)` list.
    pub fn list<T: 'a + Encode<'a, Any> + Type<Any>>(&mut self, values: impl IntoIterator<Item = T>) -> &mut Self {
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(v);
        }
        self
    }

    /// `(…), (…)`: one parenthesised row per item, its values bound by `row`.
    pub fn rows<I>(
        &mut self,
        items: impl IntoIterator<Item = I>,
        mut row: impl FnMut(&mut Row<'_, 'a>, I),
    ) -> &mut Self {
        for (i, item) in items.into_iter().enumerate() {
            self.push(if i > 0 { ", (" } else { "(" });
            row(&mut Row { sql: self, first: true }, item);
            self.push(")");
        }
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn parts(self) -> Result<(String, AnyArguments<'a>), sqlx::Error> {
        match self.failed {
            Some(e) => Err(sqlx::Error::Encode(e)),
            None => Ok((self.text, self.args)),
        }
    }

    pub async fn execute<'c, E: Executor<'c, Database = Any>>(self, on: E) -> Result<AnyQueryResult, sqlx::Error> {
        let (text, args) = self.parts()?;
        sqlx::query_with(&text, args).execute(on).await
    }

    pub async fn fetch_all<'c, T, E>(self, on: E) -> Result<Vec<T>, sqlx::Error>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
        E: Executor<'c, Database = Any>,
    {
        let (text, args) = self.parts()?;
        sqlx::query_as_with(&text, args).fetch_all(on).await
    }
}

/// One row of a multi-row `VALUES`: its values separated by commas.
pub struct Row<'s, 'a> {
    sql: &'s mut Sql<'a>,
    first: bool,
}

impl<'a> Row<'_, 'a> {
    pub fn bind<T: 'a + Encode<'a, Any> + Type<Any>>(&mut self, value: T) -> &mut Self {
        if !std::mem::take(&mut self.first) {
            self.sql.push(", ");
        }
        self.sql.bind(value);
        self
    }

    /// A value read as SQL type `ty` (see [`Sql::bind_as`]).
    pub fn bind_as<T: 'a + Encode<'a, Any> + Type<Any>>(&mut self, value: T, ty: &'static str) -> &mut Self {
        if !std::mem::take(&mut self.first) {
            self.sql.push(", ");
        }
        self.sql.bind_as(value, ty);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_across_lists_and_rows_on_postgresql_and_plain_on_sqlite() {
        for (backend, want) in [
            (
                crate::store::Backend::Postgres,
                "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4) WHERE c IN ($5, $6)",
            ),
            (
                crate::store::Backend::Sqlite,
                "INSERT INTO t (a, b) VALUES (?, ?), (?, ?) WHERE c IN (?, ?)",
            ),
        ] {
            let mut q = Sql::new(backend, "INSERT INTO t (a, b) VALUES ");
            q.rows([(1i64, "x"), (2, "y")], |r, (a, b)| {
                r.bind(a).bind(b);
            });
            q.push(" WHERE c IN (").list([7i64, 8]).push(")");
            assert_eq!(q.text(), want);
        }
    }
}
