//! The server's side of [`app::api::Backend`]: what server functions call.

use crate::auth::{users as people, users::UserError, Password};
use crate::realtime::Hub;
use crate::store::{users, Db};
use app::api::{Backend, BackendError, Role, UserView};
use std::sync::Arc;

pub struct ServerBackend {
    pub db: Db,
    pub hub: Arc<Hub>,
}

fn map(e: UserError) -> BackendError {
    match e {
        UserError::Invalid(m) => BackendError::Invalid(m),
        UserError::Conflict(m) => BackendError::Conflict(m),
        UserError::NotFound => BackendError::NotFound,
        UserError::Internal(m) => {
            let reference = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
            tracing::error!(error = %m, reference, "user administration failed");
            BackendError::Internal(reference)
        }
    }
}

#[async_trait::async_trait]
impl Backend for ServerBackend {
    async fn list_users(&self) -> Result<Vec<UserView>, BackendError> {
        users::list(&self.db).await.map_err(|e| map(e.into()))
    }

    async fn add_user(
        &self,
        actor: &UserView,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserView, BackendError> {
        let u = people::add(
            &self.db,
            &format!("user:{}", actor.username),
            username,
            Password::new(password),
            role,
        )
        .await
        .map_err(map)?;
        tracing::info!(actor = %actor.username, user = %u.username, role = %role, "user added");
        self.hub.publish("users_changed", serde_json::json!({ "user": u.id }));
        Ok(u)
    }

    async fn set_role(&self, actor: &UserView, user_id: i64, role: Role) -> Result<(), BackendError> {
        people::set_role(&self.db, &format!("user:{}", actor.username), user_id, role)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, role = %role, "role changed");
        self.hub
            .publish("users_changed", serde_json::json!({ "user": user_id }));
        Ok(())
    }

    async fn set_disabled(&self, actor: &UserView, user_id: i64, disabled: bool) -> Result<(), BackendError> {
        if disabled && actor.id == user_id {
            return Err(BackendError::Invalid("you cannot disable your own account".into()));
        }
        people::set_disabled(&self.db, &format!("user:{}", actor.username), user_id, disabled)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, disabled, "user status changed");
        self.hub
            .publish("users_changed", serde_json::json!({ "user": user_id }));
        Ok(())
    }
}
