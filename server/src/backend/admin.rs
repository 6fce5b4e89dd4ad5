//! Managing people: the admin page's service.

use super::*;

#[async_trait::async_trait]
impl UserAdmin for ServerBackend {
    async fn list_users(&self) -> Result<Vec<UserView>, AppError> {
        users::list(&self.db).await.map_err(|e| map(e.into()))
    }

    async fn add_user(
        &self,
        actor: &UserView,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<UserView, AppError> {
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
        self.hub.publish(LiveEvent::UsersChanged(UserChanged { user: u.id }));
        Ok(u)
    }

    async fn set_role(&self, actor: &UserView, user_id: i64, role: Role) -> Result<(), AppError> {
        people::set_role(&self.db, &format!("user:{}", actor.username), user_id, role)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, role = %role, "role changed");
        self.hub.publish(LiveEvent::UsersChanged(UserChanged { user: user_id }));
        Ok(())
    }

    async fn set_disabled(&self, actor: &UserView, user_id: i64, disabled: bool) -> Result<(), AppError> {
        if disabled && actor.id == user_id {
            return Err(AppError::Invalid("you cannot disable your own account".into()));
        }
        people::set_disabled(&self.db, &format!("user:{}", actor.username), user_id, disabled)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, disabled, "user status changed");
        self.hub.publish(LiveEvent::UsersChanged(UserChanged { user: user_id }));
        Ok(())
    }
}
