//! Notification channels on the admin page: list (with how deliveries went), add,
//! remove, send a test. Channels from the configuration file are listed, not changed.

use super::*;
use crate::notify::channels;
use crate::notify::config::{check_channel, ChannelConfig};
use app::api::{ChannelInput, ChannelView, NotifyAdmin};
use secrecy::SecretString;

#[async_trait::async_trait]
impl NotifyAdmin for ServerBackend {
    async fn channels(&self) -> Result<Vec<ChannelView>, AppError> {
        Ok(self
            .notifier
            .channels()
            .into_iter()
            .map(|c| {
                let s = self.notifier.stats(&c.config.name);
                ChannelView {
                    target: channels::target_of(&c.config),
                    name: c.config.name,
                    kind: c.config.kind,
                    min_risk: c.config.min_risk,
                    events: c.config.events,
                    from_config: c.from_config,
                    delivered: s.delivered,
                    failed: s.failed,
                    last_at_ms: s.last_at_ms,
                    last_error: s.last_error,
                }
            })
            .collect())
    }

    async fn add_channel(&self, actor: &UserView, input: ChannelInput) -> Result<(), AppError> {
        require_admin(actor)?;
        let split = |s: &str| -> Vec<String> {
            s.split([',', ' ', '\n'])
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        };
        let name = input.name.trim().to_string();
        if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
            return Err(AppError::Invalid("a channel needs a name of 1 to 64 characters".into()));
        }
        let c = ChannelConfig {
            name,
            kind: input.kind.trim().to_string(),
            url: Some(input.url.trim().to_string()).filter(|u| !u.is_empty()),
            secret: Some(input.secret.trim().to_string())
                .filter(|s| !s.is_empty())
                .map(SecretString::from),
            to: split(&input.to),
            min_risk: Some(input.min_risk.trim().to_string())
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| "low".into()),
            events: split(&input.events),
        };
        check_channel(&c, self.notifier.config().smtp.is_some()).map_err(AppError::Invalid)?;
        // A URL that could only reach this network is refused here already (delivery
        // checks every resolved address again).
        if let (Some(url), false) = (&c.url, self.notifier.config().allow_private) {
            self.url_check
                .check(url, &crate::host::LocalHost)
                .map_err(|e| AppError::Invalid(format!("the URL is refused: {e}")))?;
        }
        if self.notifier.channels().iter().any(|x| x.config.name == c.name) {
            return Err(AppError::Conflict(format!("a channel named {} exists", c.name)));
        }
        let by = format!("user:{}", actor.username);
        let added = channels::insert(&self.db, &self.channel_sealer, &c, &by, store::now_ms())
            .await
            .map_err(|e| internal(e, "storing a channel"))?;
        if !added {
            return Err(AppError::Conflict(format!("a channel named {} exists", c.name)));
        }
        self.reload_channels().await?;
        self.ledger.audit(crate::audit::NewEvent {
            kind: "notification_channel_added",
            actor: by,
            call_id: None,
            session_id: None,
            data: serde_json::json!({"name": c.name, "kind": c.kind, "target": channels::target_of(&c),
                "min_risk": c.min_risk, "events": c.events}),
        });
        Ok(())
    }

    async fn remove_channel(&self, actor: &UserView, name: &str) -> Result<(), AppError> {
        require_admin(actor)?;
        if self
            .notifier
            .channels()
            .iter()
            .any(|c| c.config.name == name && c.from_config)
        {
            return Err(AppError::Invalid(
                "this channel is set in the configuration file; remove it there".into(),
            ));
        }
        let removed = channels::delete(&self.db, name)
            .await
            .map_err(|e| internal(e, "removing a channel"))?;
        if !removed {
            return Err(AppError::NotFound);
        }
        self.reload_channels().await?;
        self.ledger.audit(crate::audit::NewEvent {
            kind: "notification_channel_removed",
            actor: format!("user:{}", actor.username),
            call_id: None,
            session_id: None,
            data: serde_json::json!({"name": name}),
        });
        Ok(())
    }

    async fn test_channel(&self, actor: &UserView, name: &str) -> Result<String, AppError> {
        require_admin(actor)?;
        if !self.notifier.channels().iter().any(|c| c.config.name == name) {
            return Err(AppError::NotFound);
        }
        match self.notifier.test(name, &format!("user:{}", actor.username)).await {
            Ok(()) => Ok(format!("A test notification went to {name}.")),
            Err(e) => Err(AppError::Conflict(format!(
                "{name} did not take the test notification: {e}"
            ))),
        }
    }
}

fn require_admin(actor: &UserView) -> Result<(), AppError> {
    if actor.role.may(Permission::ManageUsers) {
        Ok(())
    } else {
        Err(AppError::Forbidden(actor.role.to_string()))
    }
}

impl ServerBackend {
    async fn reload_channels(&self) -> Result<(), AppError> {
        let stored = channels::load(&self.db, &self.channel_sealer)
            .await
            .map_err(|e| internal(e, "reading channels"))?;
        self.notifier.set_stored(stored);
        Ok(())
    }
}
