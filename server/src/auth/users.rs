//! Managing people: used by the admin page (through [`crate::backend`]) and the CLI.

use super::password::{self, Password};
use crate::store::{users, users::StoreError, Db};
use app::api::{Role, UserView};

#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error("no such user")]
    NotFound,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<sqlx::Error> for UserError {
    fn from(e: sqlx::Error) -> Self {
        UserError::Internal(e.to_string())
    }
}

/// Usernames: 2–64 characters of letters, digits, `_ . - @`.
pub fn parse_username(raw: &str) -> Result<String, UserError> {
    let s = raw.trim();
    let ok_len = (2..=64).contains(&s.chars().count());
    let ok_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '@'));
    if !ok_len || !ok_chars {
        return Err(UserError::Invalid(
            "usernames have 2-64 characters: letters, digits, _ . - @".into(),
        ));
    }
    Ok(s.to_string())
}

/// The change and its audit event commit together.
async fn audited<T>(
    db: &Db,
    actor: &str,
    kind: &'static str,
    data: serde_json::Value,
    change: impl AsyncFnOnce(&mut sqlx::AnyConnection) -> Result<T, UserError>,
) -> Result<T, UserError> {
    let mut tx = crate::store::begin_write(db).await?;
    let out = change(&mut tx).await?;
    let ev = crate::audit::NewEvent {
        kind,
        actor: actor.to_string(),
        call_id: None,
        session_id: None,
        data,
    };
    crate::store::append_audit(&mut tx, crate::store::now_ms(), &ev).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn add(db: &Db, actor: &str, username: &str, password: Password, role: Role) -> Result<UserView, UserError> {
    let username = parse_username(username)?;
    password.check_strength().map_err(UserError::Invalid)?;
    let hash = password::hash(password).await.map_err(UserError::Internal)?;
    let data = serde_json::json!({"user": username, "role": role.as_str()});
    audited(db, actor, "user_added", data, async |conn| {
        users::create(conn, &username, &hash, role).await.map_err(|e| match e {
            e @ StoreError::Conflict(_) => UserError::Conflict(e.to_string()),
            StoreError::Db(e) => e.into(),
        })
    })
    .await
}

pub async fn find(db: &Db, username: &str) -> Result<users::UserRecord, UserError> {
    users::by_username(db, username.trim())
        .await?
        .ok_or(UserError::NotFound)
}

pub async fn change_password(db: &Db, actor: &str, username: &str, password: Password) -> Result<(), UserError> {
    password.check_strength().map_err(UserError::Invalid)?;
    let u = find(db, username).await?;
    let hash = password::hash(password).await.map_err(UserError::Internal)?;
    let data = serde_json::json!({"user": u.view.username});
    audited(db, actor, "user_password_changed", data, async |conn| {
        users::set_password(conn, u.view.id, &hash).await?;
        Ok(())
    })
    .await
}

/// Refuses to leave the system without an enabled administrator.
pub async fn set_disabled(db: &Db, actor: &str, id: i64, disabled: bool) -> Result<(), UserError> {
    let u = users::by_id(db, id).await?.ok_or(UserError::NotFound)?;
    if disabled && u.view.role == Role::Admin && !u.view.disabled && users::active_admins(db).await? <= 1 {
        return Err(UserError::Conflict(
            "the last active administrator cannot be disabled".into(),
        ));
    }
    let kind = if disabled { "user_disabled" } else { "user_enabled" };
    audited(
        db,
        actor,
        kind,
        serde_json::json!({"user": u.view.username}),
        async |conn| {
            users::set_disabled(conn, id, disabled).await?;
            Ok(())
        },
    )
    .await
}

pub async fn set_role(db: &Db, actor: &str, id: i64, role: Role) -> Result<(), UserError> {
    let u = users::by_id(db, id).await?.ok_or(UserError::NotFound)?;
    if u.view.role == Role::Admin && role != Role::Admin && !u.view.disabled && users::active_admins(db).await? <= 1 {
        return Err(UserError::Conflict(
            "the last active administrator must stay an administrator".into(),
        ));
    }
    let data = serde_json::json!({"user": u.view.username, "from": u.view.role.as_str(), "to": role.as_str()});
    audited(db, actor, "user_role_changed", data, async |conn| {
        users::set_role(conn, id, role).await?;
        Ok(())
    })
    .await
}

/// On an empty database, create the first administrator and return its password (shown
/// once by the caller). `None` when users already exist.
pub async fn ensure_first_admin(db: &Db, username: &str) -> Result<Option<(String, Password)>, UserError> {
    if users::count(db).await? > 0 {
        return Ok(None);
    }
    let p = Password::generate();
    let u = add(db, "system", username, p.clone(), Role::Admin).await?;
    Ok(Some((u.username, p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_checked() {
        assert_eq!(parse_username("  ana.silva ").unwrap(), "ana.silva");
        for bad in ["a", "", "ana silva", "ana\u{200b}", "ан", &"x".repeat(65)] {
            assert!(parse_username(bad).is_err(), "{bad:?}");
        }
    }
}
