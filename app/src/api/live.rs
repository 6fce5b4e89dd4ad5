//! The events the server pushes to dashboards: one enum, used by the ledger that emits
//! them, the hub and SSE endpoint that carry them, and the browser that reads them.
//! On the wire an event is an SSE message named by `kind()` whose data is the payload.

use super::QueueItem;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveEvent {
    /// First message of a stream: the hub's sequence number at subscription.
    Hello(Position),
    /// The client missed events: reload the current state.
    Resync(ResyncReason),
    /// A call was held for review.
    CallPending(QueueItem),
    /// A held call reached its final status.
    CallDecided(CallDecided),
    /// A held call's approvals or required approvers changed; it is still pending.
    CallUpdated(CallUpdated),
    /// A grant was created or ended.
    GrantsChanged(GrantChanged),
    /// A user was added or changed.
    UsersChanged(UserChanged),
    /// Break-glass started or ended: every override now in force.
    BreakGlass(BreakGlassBoard),
    /// A held call went unanswered past its escalation time.
    CallEscalated(CallEscalated),
    /// An override was recorded or acknowledged: how many await acknowledgement.
    OverridesChanged(OverridesChanged),
    /// Another policy is in force.
    PolicyChanged(PolicyChanged),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChanged {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakGlassBoard {
    pub active: Vec<super::BreakGlassView>,
    /// What changed, for notifications: `started` or `ended` (with who and why).
    pub change: String,
    pub user: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEscalated {
    pub item: QueueItem,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverridesChanged {
    pub awaiting: u64,
    /// The call just overridden (absent when one was acknowledged).
    pub call_id: Option<String>,
    pub by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub seq: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResyncReason {
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallDecided {
    pub id: String,
    pub status: String,
    pub decided_by: Option<String>,
    pub session_id: String,
    pub tool: String,
    pub agent: String,
    pub risk: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallUpdated {
    pub id: String,
    pub approvals: Vec<String>,
    pub approvers_required: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantChanged {
    pub id: String,
    pub active: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserChanged {
    pub user: i64,
}

impl LiveEvent {
    /// Every kind, for clients that subscribe to SSE events by name.
    pub const KINDS: [&'static str; 11] = [
        "hello",
        "resync",
        "call_pending",
        "call_decided",
        "call_updated",
        "grants_changed",
        "users_changed",
        "break_glass",
        "call_escalated",
        "overrides_changed",
        "policy_changed",
    ];

    /// The SSE event name.
    pub fn kind(&self) -> &'static str {
        match self {
            LiveEvent::Hello(_) => "hello",
            LiveEvent::Resync(_) => "resync",
            LiveEvent::CallPending(_) => "call_pending",
            LiveEvent::CallDecided(_) => "call_decided",
            LiveEvent::CallUpdated(_) => "call_updated",
            LiveEvent::GrantsChanged(_) => "grants_changed",
            LiveEvent::UsersChanged(_) => "users_changed",
            LiveEvent::BreakGlass(_) => "break_glass",
            LiveEvent::CallEscalated(_) => "call_escalated",
            LiveEvent::OverridesChanged(_) => "overrides_changed",
            LiveEvent::PolicyChanged(_) => "policy_changed",
        }
    }

    /// The SSE data: the payload as JSON.
    pub fn data(&self) -> String {
        let r = match self {
            LiveEvent::Hello(v) => serde_json::to_string(v),
            LiveEvent::Resync(v) => serde_json::to_string(v),
            LiveEvent::CallPending(v) => serde_json::to_string(v),
            LiveEvent::CallDecided(v) => serde_json::to_string(v),
            LiveEvent::CallUpdated(v) => serde_json::to_string(v),
            LiveEvent::GrantsChanged(v) => serde_json::to_string(v),
            LiveEvent::UsersChanged(v) => serde_json::to_string(v),
            LiveEvent::BreakGlass(v) => serde_json::to_string(v),
            LiveEvent::CallEscalated(v) => serde_json::to_string(v),
            LiveEvent::OverridesChanged(v) => serde_json::to_string(v),
            LiveEvent::PolicyChanged(v) => serde_json::to_string(v),
        };
        r.unwrap_or_else(|_| "null".into())
    }

    /// Read an SSE message back; `None` for a kind or payload this build does not know.
    /// (A match per kind, not serde's adjacent tagging: that costs the browser bundle more.)
    pub fn parse(kind: &str, data: &str) -> Option<LiveEvent> {
        use serde_json::from_str;
        let event = match kind {
            "hello" => LiveEvent::Hello(from_str(data).ok()?),
            "resync" => LiveEvent::Resync(from_str(data).ok()?),
            "call_pending" => LiveEvent::CallPending(from_str(data).ok()?),
            "call_decided" => LiveEvent::CallDecided(from_str(data).ok()?),
            "call_updated" => LiveEvent::CallUpdated(from_str(data).ok()?),
            "grants_changed" => LiveEvent::GrantsChanged(from_str(data).ok()?),
            "users_changed" => LiveEvent::UsersChanged(from_str(data).ok()?),
            "break_glass" => LiveEvent::BreakGlass(from_str(data).ok()?),
            "call_escalated" => LiveEvent::CallEscalated(from_str(data).ok()?),
            "overrides_changed" => LiveEvent::OverridesChanged(from_str(data).ok()?),
            "policy_changed" => LiveEvent::PolicyChanged(from_str(data).ok()?),
            _ => return None,
        };
        Some(event)
    }

    /// The call this event is about, if any.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            LiveEvent::CallPending(i) => Some(&i.id),
            LiveEvent::CallDecided(d) => Some(&d.id),
            LiveEvent::CallUpdated(u) => Some(&u.id),
            LiveEvent::CallEscalated(e) => Some(&e.item.id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<LiveEvent> {
        let item = QueueItem {
            id: "tc_1".into(),
            agent: "a".into(),
            session_id: "s".into(),
            tool: "t".into(),
            server: None,
            risk: "high".into(),
            destructive: true,
            rule: None,
            reason: "r".into(),
            blocked_by: None,
            created_at_ms: 1,
            expires_at_ms: Some(2),
            approvers_required: 2,
            approvals: vec!["user:x".into()],
            escalated: true,
        };
        vec![
            LiveEvent::Hello(Position { seq: 3 }),
            LiveEvent::Resync(ResyncReason { reason: "gap".into() }),
            LiveEvent::CallPending(item.clone()),
            LiveEvent::CallDecided(CallDecided {
                id: "tc_1".into(),
                status: "approved".into(),
                decided_by: Some("user:x".into()),
                session_id: "s".into(),
                tool: "t".into(),
                agent: "a".into(),
                risk: "high".into(),
            }),
            LiveEvent::CallUpdated(CallUpdated {
                id: "tc_1".into(),
                approvals: vec!["user:x".into()],
                approvers_required: 2,
            }),
            LiveEvent::GrantsChanged(GrantChanged {
                id: "gr_1".into(),
                active: false,
            }),
            LiveEvent::UsersChanged(UserChanged { user: 7 }),
            LiveEvent::BreakGlass(BreakGlassBoard {
                active: vec![super::super::BreakGlassView {
                    id: "bg_1".into(),
                    user: "user:olga".into(),
                    justification: "db down".into(),
                    started_at_ms: 1,
                    ends_at_ms: 2,
                }],
                change: "started".into(),
                user: "user:olga".into(),
                reason: "db down".into(),
            }),
            LiveEvent::CallEscalated(CallEscalated { item: item.clone() }),
            LiveEvent::OverridesChanged(OverridesChanged {
                awaiting: 3,
                call_id: Some("tc_1".into()),
                by: Some("user:olga".into()),
            }),
            LiveEvent::PolicyChanged(PolicyChanged {
                name: "demo".into(),
                version: "sha256:00".into(),
            }),
        ]
    }

    #[test]
    fn every_event_survives_the_wire_under_its_listed_kind() {
        let all = samples();
        assert_eq!(all.len(), LiveEvent::KINDS.len(), "a sample per kind");
        for e in all {
            assert!(LiveEvent::KINDS.contains(&e.kind()), "{} is not listed", e.kind());
            assert_eq!(LiveEvent::parse(e.kind(), &e.data()), Some(e.clone()));
        }
    }

    #[test]
    fn unknown_kinds_and_bad_payloads_are_ignored() {
        assert_eq!(LiveEvent::parse("nope", "{}"), None);
        assert_eq!(LiveEvent::parse("call_decided", "{\"id\":1}"), None);
        assert_eq!(LiveEvent::parse("hello", "not json"), None);
    }
}
