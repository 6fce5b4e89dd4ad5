//! Sign-in sessions as tower-sessions stores them: the checks and clean-up Airlock
//! itself runs on that table.

use super::Db;

/// Does this session still exist (i.e. it was not signed out or expired and removed)?
pub async fn exists(db: &Db, id: &str) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM tower_sessions WHERE id = ?")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// Remove expired sessions.
pub async fn delete_expired(db: &Db) -> Result<u64, sqlx::Error> {
    let r = sqlx::query("DELETE FROM tower_sessions WHERE expiry_date < unixepoch('now')")
        .execute(db)
        .await?;
    Ok(r.rows_affected())
}
