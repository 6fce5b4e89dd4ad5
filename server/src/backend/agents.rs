//! Agents on the admin page: add, rotate, disable. The same functions as the CLI's
//! (`crate::agents`), so each change is audited alike; a new secret goes into the answer
//! only (never into logs or the trail).

use super::*;
use crate::agents::{self, AgentError};
use app::api::{request_tr, AgentAdmin, AgentSecretView, AgentView, IssuedSecret};
use app::i18n::{tr_key, Tr};

/// Longest grace period for the earlier secret after a rotation: 30 days.
const MAX_GRACE_SECONDS: i64 = 30 * 24 * 3600;

fn agent_err(e: AgentError) -> AppError {
    match e {
        AgentError::Invalid(m) => AppError::Invalid(m),
        AgentError::Exists(id) => AppError::Conflict(format!("an agent named {id} already exists")),
        AgentError::NotFound(_) => AppError::NotFound,
        AgentError::Db(e) => internal(e, "agent administration"),
    }
}

fn by(actor: &UserView) -> String {
    format!("user:{}", actor.username)
}

/// "1 hour", "7 days" / "1 小时", "7 天": a grace period as a person says it, in its
/// largest whole unit.
fn spoken(tr: Tr, seconds: i64) -> String {
    let (n, unit) = match seconds {
        s if s % 86_400 == 0 => (s / 86_400, [tr_key("srv.day"), tr_key("srv.days")]),
        s if s % 3600 == 0 => (s / 3600, [tr_key("srv.hour"), tr_key("srv.hours")]),
        s if s % 60 == 0 => (s / 60, [tr_key("srv.minute"), tr_key("srv.minutes")]),
        s => (s, [tr_key("srv.second"), tr_key("srv.seconds")]),
    };
    tr.f(unit[usize::from(n != 1)], &[("n", &n.to_string())])
}

#[async_trait::async_trait]
impl AgentAdmin for ServerBackend {
    async fn agents(&self) -> Result<Vec<AgentView>, AppError> {
        let list = store::agents::list(&self.db)
            .await
            .map_err(|e| internal(e, "listing agents"))?;
        let secrets = store::agents::valid_secrets(&self.db, store::now_ms())
            .await
            .map_err(|e| internal(e, "listing agents"))?;
        let mut by_agent: HashMap<String, Vec<AgentSecretView>> = HashMap::new();
        for (agent, created_at_ms, retires_at_ms) in secrets {
            by_agent.entry(agent).or_default().push(AgentSecretView {
                created_at_ms,
                retires_at_ms,
            });
        }
        Ok(list
            .into_iter()
            .map(|(id, description, disabled, created_at_ms)| AgentView {
                secrets: by_agent.remove(&id).unwrap_or_default(),
                id,
                description,
                disabled,
                created_at_ms,
            })
            .collect())
    }

    async fn add_agent(&self, actor: &UserView, id: &str, description: &str) -> Result<IssuedSecret, AppError> {
        let id = id.trim();
        let description = description.trim();
        if description.chars().count() > 200 {
            return Err(AppError::Invalid(
                "the description is longer than 200 characters".into(),
            ));
        }
        let secret = agents::add(&self.db, &self.key, id, description, &by(actor))
            .await
            .map_err(agent_err)?;
        tracing::info!(actor = %actor.username, agent = id, "agent added");
        Ok(IssuedSecret {
            agent: id.to_string(),
            secret: secret.reveal(),
            message: request_tr().f("srv.agent_added", &[("agent", id)]),
        })
    }

    async fn rotate_agent(&self, actor: &UserView, id: &str, grace_seconds: i64) -> Result<IssuedSecret, AppError> {
        if !(0..=MAX_GRACE_SECONDS).contains(&grace_seconds) {
            return Err(AppError::Invalid(
                "the grace period must be between 0 seconds and 30 days".into(),
            ));
        }
        let secret = agents::rotate(&self.db, &self.key, id, grace_seconds, &by(actor))
            .await
            .map_err(agent_err)?;
        self.credentials.forget(id);
        tracing::info!(actor = %actor.username, agent = id, grace_seconds, "agent secret rotated");
        let tr = request_tr();
        let message = if grace_seconds == 0 {
            tr.f("srv.rotated_now", &[("agent", id)])
        } else {
            tr.f(
                "srv.rotated_grace",
                &[("agent", id), ("grace", &spoken(tr, grace_seconds))],
            )
        };
        Ok(IssuedSecret {
            agent: id.to_string(),
            secret: secret.reveal(),
            message,
        })
    }

    async fn set_agent_disabled(&self, actor: &UserView, id: &str, disabled: bool) -> Result<(), AppError> {
        agents::set_disabled(&self.db, id, disabled, &by(actor))
            .await
            .map_err(agent_err)?;
        self.credentials.forget(id);
        tracing::info!(actor = %actor.username, agent = id, disabled, "agent status changed");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use app::i18n::{Locale, Tr};

    #[test]
    fn grace_periods_are_spoken_in_their_largest_whole_unit() {
        let en = Tr(Locale::En);
        assert_eq!(super::spoken(en, 3600), "1 hour");
        assert_eq!(super::spoken(en, 7 * 86_400), "7 days");
        assert_eq!(super::spoken(en, 90), "90 seconds");
        assert_eq!(super::spoken(en, 120), "2 minutes");
        assert_eq!(super::spoken(Tr(Locale::ZhCn), 86_400), "1 天");
    }
}
