//! Users table.

use super::Db;
use app::api::{Role, UserView};
use sqlx::Row;

/// A user row as the server needs it (the hash never leaves the server).
#[derive(Clone)]
pub struct UserRecord {
    pub view: UserView,
    pub password_hash: String,
    pub session_epoch: i64,
    /// The language the person chose (`en`, `zh-CN`), if they chose one.
    pub locale: Option<String>,
}

impl std::fmt::Debug for UserRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserRecord")
            .field("view", &self.view)
            .field("password_hash", &"[redacted]")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0} already exists")]
    Conflict(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

fn record(r: &sqlx::any::AnyRow) -> Result<UserRecord, sqlx::Error> {
    let role: String = r.try_get("role")?;
    Ok(UserRecord {
        view: UserView {
            id: r.try_get("id")?,
            username: r.try_get("username")?,
            role: role.parse().map_err(|e: String| sqlx::Error::Decode(e.into()))?,
            disabled: r.try_get::<i64, _>("disabled")? != 0,
            created_at: r.try_get("created_at")?,
        },
        password_hash: r.try_get("password_hash")?,
        session_epoch: r.try_get("session_epoch")?,
        locale: r.try_get("locale")?,
    })
}

const COLUMNS: &str = "id, username, password_hash, role, disabled, session_epoch, created_at, locale";

pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(db).await
}

pub async fn create(
    db: &mut sqlx::AnyConnection,
    username: &str,
    password_hash: &str,
    role: Role,
) -> Result<UserView, StoreError> {
    let r = sqlx::query(&format!(
        "INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3) RETURNING {COLUMNS}"
    ))
    .bind(username)
    .bind(password_hash)
    .bind(role.as_str())
    .fetch_one(db)
    .await;
    match r {
        Ok(row) => Ok(record(&row)?.view),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(StoreError::Conflict(format!("user {username}")))
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn by_username(db: &Db, username: &str) -> Result<Option<UserRecord>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM users WHERE lower(username) = lower($1)"
    ))
    .bind(username)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn by_id(db: &Db, id: i64) -> Result<Option<UserRecord>, sqlx::Error> {
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM users WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(record).transpose()
}

pub async fn list(db: &Db) -> Result<Vec<UserView>, sqlx::Error> {
    let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM users ORDER BY username"))
        .fetch_all(db)
        .await?;
    rows.iter().map(|r| record(r).map(|u| u.view)).collect()
}

/// Change the role; bumps the session epoch so open sessions pick up the new rights
/// only after signing in again. Returns false when there is no such user.
pub async fn set_role(db: &mut sqlx::AnyConnection, id: i64, role: Role) -> Result<bool, sqlx::Error> {
    let r = sqlx::query("UPDATE users SET role = $1, session_epoch = session_epoch + 1, updated_at = $3 WHERE id = $2")
        .bind(role.as_str())
        .bind(id)
        .bind(super::now_text())
        .execute(db)
        .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn set_disabled(db: &mut sqlx::AnyConnection, id: i64, disabled: bool) -> Result<bool, sqlx::Error> {
    let r =
        sqlx::query("UPDATE users SET disabled = $1, session_epoch = session_epoch + 1, updated_at = $3 WHERE id = $2")
            .bind(disabled as i64)
            .bind(id)
            .bind(super::now_text())
            .execute(db)
            .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn set_password(db: &mut sqlx::AnyConnection, id: i64, password_hash: &str) -> Result<bool, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE users SET password_hash = $1, session_epoch = session_epoch + 1, updated_at = $3 WHERE id = $2",
    )
    .bind(password_hash)
    .bind(id)
    .bind(super::now_text())
    .execute(db)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// How many enabled admins there are (the last one may not be demoted or disabled).
pub async fn active_admins(db: &Db) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0")
        .fetch_one(db)
        .await
}

/// Remember a person's language (not a change of rights: sessions stay).
pub async fn set_locale(db: &Db, id: i64, locale: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE users SET locale = $1 WHERE id = $2")
        .bind(locale)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}
