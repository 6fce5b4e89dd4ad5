//! Break-glass: an on-call person's time-boxed emergency override. The ledger keeps the
//! ones in force in memory (it is the only writer, so this is exact) and publishes the
//! whole board whenever it changes, so every signed-in page shows the banner live.

use crate::audit::NewEvent;
use crate::ledger::Tx;
use crate::review::ReviewError;
use app::api::{BreakGlassBoard, BreakGlassView, LiveEvent};
use serde_json::json;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// Break-glass in force, by user (`user:NAME`): one each at most.
#[derive(Debug, Default, Clone)]
pub struct Board {
    active: HashMap<String, BreakGlassView>,
}

impl Board {
    /// Every break-glass not yet ended, including those whose time ran out while the
    /// server was down: the first expiry tick ends and records them.
    pub async fn load(conn: &mut AnyConnection) -> Result<Board, sqlx::Error> {
        let rows: Vec<(String, String, String, i64, i64)> = sqlx::query_as(
            "SELECT id, \"user\", justification, started_at_ms, ends_at_ms FROM break_glass WHERE ended_at_ms IS NULL",
        )
        .fetch_all(conn)
        .await?;
        let active = rows
            .into_iter()
            .map(|(id, user, justification, started_at_ms, ends_at_ms)| {
                let v = BreakGlassView {
                    id,
                    user: user.clone(),
                    justification,
                    started_at_ms,
                    ends_at_ms,
                };
                (user, v)
            })
            .collect();
        Ok(Board { active })
    }

    /// `user`'s break-glass if it is still in force at `now`.
    pub fn of(&self, user: &str, now: i64) -> Option<&BreakGlassView> {
        self.active.get(user).filter(|b| b.ends_at_ms > now)
    }

    /// Everything in force, soonest to end first.
    pub fn list(&self) -> Vec<BreakGlassView> {
        let mut v: Vec<_> = self.active.values().cloned().collect();
        v.sort_by(|a, b| a.ends_at_ms.cmp(&b.ends_at_ms).then_with(|| a.user.cmp(&b.user)));
        v
    }
}

/// Start break-glass for `user`. A break-glass already in force is replaced only with a
/// different justification (it cannot be stretched by asking again with the same words).
pub async fn start(
    tx: &mut Tx<'_>,
    user: &str,
    justification: &str,
    minutes: i64,
    now: i64,
) -> Result<Result<BreakGlassView, ReviewError>, sqlx::Error> {
    let replaces = tx.state.break_glass.of(user, now).cloned();
    if let Some(old) = &replaces {
        if same_words(&old.justification, justification) {
            return Ok(Err(ReviewError::Invalid(
                "break-glass is already on with this justification; extending it needs a new one".into(),
            )));
        }
        close(tx, &old.id, user, "replaced by a new break-glass", now).await?;
    }
    let view = BreakGlassView {
        id: format!("bg_{}", uuid::Uuid::now_v7().simple()),
        user: user.to_string(),
        justification: justification.to_string(),
        started_at_ms: now,
        ends_at_ms: now.saturating_add(minutes.saturating_mul(60_000)),
    };
    sqlx::query(
        "INSERT INTO break_glass (id, \"user\", justification, started_at_ms, ends_at_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&view.id)
    .bind(&view.user)
    .bind(&view.justification)
    .bind(view.started_at_ms)
    .bind(view.ends_at_ms)
    .execute(&mut *tx.conn)
    .await?;
    tx.audit(
        now,
        &NewEvent {
            kind: "break_glass_started",
            actor: user.to_string(),
            call_id: None,
            session_id: None,
            data: json!({"id": view.id, "justification": justification, "minutes": minutes,
                "ends_at_ms": view.ends_at_ms, "replaces": replaces.as_ref().map(|r| &r.id)}),
        },
    )
    .await?;
    tx.state.break_glass.active.insert(user.to_string(), view.clone());
    publish(tx, "started", user, justification);
    Ok(Ok(view))
}

/// End break-glass `id` now: by its owner or an admin (`by`), with a reason.
pub async fn end(tx: &mut Tx<'_>, id: &str, by: &str, reason: &str, now: i64) -> Result<bool, sqlx::Error> {
    let Some(owner) = tx
        .state
        .break_glass
        .active
        .values()
        .find(|b| b.id == id)
        .map(|b| b.user.clone())
    else {
        return Ok(false);
    };
    close(tx, id, by, reason, now).await?;
    publish(tx, "ended", &owner, reason);
    Ok(true)
}

/// End every break-glass whose time is up; answers how many.
pub async fn end_due(tx: &mut Tx<'_>, now: i64) -> Result<usize, sqlx::Error> {
    let due: Vec<(String, String)> = tx
        .state
        .break_glass
        .active
        .values()
        .filter(|b| b.ends_at_ms <= now)
        .map(|b| (b.id.clone(), b.user.clone()))
        .collect();
    for (id, user) in &due {
        close(tx, id, "system", "time is up", now).await?;
        publish(tx, "ended", user, "time is up");
    }
    Ok(due.len())
}

/// Write the end of a break-glass and forget it.
async fn close(tx: &mut Tx<'_>, id: &str, by: &str, reason: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE break_glass SET ended_at_ms = $1, ended_by = $2, end_reason = $3 WHERE id = $4 AND ended_at_ms IS NULL",
    )
    .bind(now)
    .bind(by)
    .bind(reason)
    .bind(id)
    .execute(&mut *tx.conn)
    .await?;
    let owner = tx.state.break_glass.active.values().find(|b| b.id == id).cloned();
    if let Some(b) = &owner {
        tx.state.break_glass.active.remove(&b.user);
    }
    tx.audit(
        now,
        &NewEvent {
            kind: "break_glass_ended",
            actor: by.to_string(),
            call_id: None,
            session_id: None,
            data: json!({"id": id, "user": owner.as_ref().map(|b| &b.user), "reason": reason,
                "started_at_ms": owner.as_ref().map(|b| b.started_at_ms)}),
        },
    )
    .await
}

fn publish(tx: &mut Tx<'_>, change: &str, user: &str, reason: &str) {
    let active = tx.state.break_glass.list();
    tx.set_board(active.clone());
    tx.publish(LiveEvent::BreakGlass(BreakGlassBoard {
        active,
        change: change.to_string(),
        user: user.to_string(),
        reason: reason.to_string(),
    }));
}

/// The same words, ignoring case, spacing and punctuation.
fn same_words(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    words(a) == words(b)
}

#[cfg(test)]
mod tests {
    use super::same_words;

    #[test]
    fn a_justification_repeated_with_other_spacing_or_case_is_the_same() {
        assert!(same_words(
            "Payments down, paging failed",
            "payments  down paging FAILED."
        ));
        assert!(!same_words("Payments down", "Payments down again"));
    }
}
