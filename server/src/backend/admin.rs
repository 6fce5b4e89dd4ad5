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
        self.users_changed(u.id).await;
        Ok(u)
    }

    async fn set_role(&self, actor: &UserView, user_id: i64, role: Role) -> Result<(), AppError> {
        people::set_role(&self.db, &format!("user:{}", actor.username), user_id, role)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, role = %role, "role changed");
        if role != Role::Oncall {
            self.end_break_glass_of(actor, user_id, "the person is no longer on-call")
                .await;
        }
        self.users_changed(user_id).await;
        Ok(())
    }

    async fn set_disabled(&self, actor: &UserView, user_id: i64, disabled: bool) -> Result<(), AppError> {
        if disabled && actor.id == user_id {
            let tr = app::api::request_tr();
            return Err(AppError::Invalid(tr.t("srv.cannot_disable_self").into()));
        }
        people::set_disabled(&self.db, &format!("user:{}", actor.username), user_id, disabled)
            .await
            .map_err(map)?;
        tracing::info!(actor = %actor.username, user_id, disabled, "user status changed");
        if disabled {
            self.end_break_glass_of(actor, user_id, "the account was disabled")
                .await;
        }
        self.users_changed(user_id).await;
        Ok(())
    }

    async fn set_locale(&self, user: &UserView, locale: app::i18n::Locale) -> Result<(), AppError> {
        users::set_locale(&self.db, user.id, locale.code())
            .await
            .map_err(|e| internal(e, "saving the language"))
    }
}

impl ServerBackend {
    /// Tell the dashboards on this instance and on every other one.
    async fn users_changed(&self, user: i64) {
        let event = LiveEvent::UsersChanged(UserChanged { user });
        if let Some(instance) = &self.instance {
            if let Err(e) = crate::realtime::cluster::announce(&self.db, instance, std::slice::from_ref(&event)).await {
                tracing::warn!(error = %e, "announcing a change of people to the other instances");
            }
        }
        self.hub.publish(event);
    }

    /// A break-glass does not outlive its owner's right to it.
    async fn end_break_glass_of(&self, actor: &UserView, user_id: i64, reason: &str) {
        let Ok(Some(u)) = users::by_id(&self.db, user_id).await else {
            return;
        };
        let owner = format!("user:{}", u.view.username);
        let active = self.board.read().unwrap_or_else(|p| p.into_inner()).clone();
        for b in active.into_iter().filter(|b| b.user == owner) {
            let by = format!("user:{}", actor.username);
            if let Err(e) = self.ledger.end_break_glass(&b.id, &by, reason).await {
                tracing::warn!(error = %e, "ending break-glass after a role change");
            }
        }
    }
}
