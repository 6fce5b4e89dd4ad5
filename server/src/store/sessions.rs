//! Sign-in sessions: the tower-sessions store over either database (a record is the
//! MessagePack of tower-sessions' `Record`; its expiry in Unix seconds), and the checks
//! and clean-up Airlock itself runs on that table.

use super::Db;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

#[derive(Clone, Debug)]
pub struct Sessions {
    db: Db,
}

impl Sessions {
    pub fn new(db: Db) -> Sessions {
        Sessions { db }
    }
}

fn backend(e: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn encoded(record: &Record) -> session_store::Result<Vec<u8>> {
    rmp_serde::to_vec(record).map_err(|e| session_store::Error::Encode(e.to_string()))
}

#[async_trait::async_trait]
impl SessionStore for Sessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        // A new id until one is free (a collision of 128 random bits is not expected).
        loop {
            let r = sqlx::query(
                "INSERT INTO tower_sessions (id, data, expiry_date) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(record.id.to_string())
            .bind(encoded(record)?)
            .bind(record.expiry_date.unix_timestamp())
            .execute(&self.db)
            .await
            .map_err(backend)?;
            if r.rows_affected() == 1 {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        sqlx::query(
            "INSERT INTO tower_sessions (id, data, expiry_date) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry_date = excluded.expiry_date",
        )
        .bind(record.id.to_string())
        .bind(encoded(record)?)
        .bind(record.expiry_date.unix_timestamp())
        .execute(&self.db)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let data: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT data FROM tower_sessions WHERE id = $1 AND expiry_date > $2")
                .bind(id.to_string())
                .bind(super::now_ms() / 1000)
                .fetch_optional(&self.db)
                .await
                .map_err(backend)?;
        data.map(|d| rmp_serde::from_slice(&d).map_err(|e| session_store::Error::Decode(e.to_string())))
            .transpose()
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sqlx::query("DELETE FROM tower_sessions WHERE id = $1")
            .bind(id.to_string())
            .execute(&self.db)
            .await
            .map_err(backend)?;
        Ok(())
    }
}

/// Does this session still exist (i.e. it was not signed out or expired and removed)?
pub async fn exists(db: &Db, id: &str) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM tower_sessions WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// Remove expired sessions.
pub async fn delete_expired(db: &Db) -> Result<u64, sqlx::Error> {
    let r = sqlx::query("DELETE FROM tower_sessions WHERE expiry_date < $1")
        .bind(super::now_ms() / 1000)
        .execute(db)
        .await?;
    Ok(r.rows_affected())
}
