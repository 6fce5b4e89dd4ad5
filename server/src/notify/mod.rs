//! Outbound notifications: held calls at or above a channel's risk, escalations,
//! break-glass started and ended, overrides awaiting review, and failed deliveries.
//!
//! The notifier listens to the same event hub as the dashboards, so a decision never
//! waits for it: the ledger publishes after its commit and moves on. Each delivery runs
//! on its own with exponential backoff; the host of every URL is resolved once and each
//! address judged by the URL guard before connecting (as for callbacks); every final
//! outcome is recorded in the audit trail. A delivery that finally fails is announced on
//! the other channels (failures of that announcement are only logged and audited).

pub mod channels;
pub mod config;
pub mod links;
pub mod send;
pub mod slack;

use crate::audit::NewEvent;
use crate::ledger::Ledger;
use crate::realtime::Hub;
use app::api::{LiveEvent, QueueItem};
use config::{ChannelConfig, NotifyConfig, RISKS};
use policy::guards::url::UrlGuard;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// Deliveries waiting or in flight at once; beyond it new ones are dropped (and logged)
/// rather than let a dead receiver grow memory without bound.
const MAX_OUTSTANDING: usize = 10_000;

/// What happened, as every channel tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// `held`, `escalated`, `break_glass`, `override`, `failure`.
    pub event: &'static str,
    /// One line: what and how urgent.
    pub title: String,
    /// A few lines of detail.
    pub text: String,
    /// Where to look (the call, or the on-call page).
    pub link: String,
    /// Held and escalated calls: the call and its risk (for links and the risk filter).
    pub call: Option<(String, String)>,
    /// The event's facts, for JSON webhooks.
    pub data: Value,
}

/// The notice for a live event, if it is one channels are told about.
pub fn notice_for(event: &LiveEvent, base: &str) -> Option<Notice> {
    let call_link = |id: &str| format!("{base}/calls/{id}");
    let held = |item: &QueueItem, event: &'static str, what: &str| Notice {
        event,
        title: format!("{what}: {} ({} risk) from {}", item.tool, item.risk, item.agent),
        text: format!(
            "{}{}\nSession {} · needs {} approver(s)",
            item.rule.as_deref().map(|r| format!("{r}: ")).unwrap_or_default(),
            item.reason,
            item.session_id,
            item.approvers_required
        ),
        link: call_link(&item.id),
        call: Some((item.id.clone(), item.risk.clone())),
        data: json!({"call_id": item.id, "tool": item.tool, "agent": item.agent, "risk": item.risk,
            "session_id": item.session_id, "reason": item.reason, "rule": item.rule,
            "expires_at_ms": item.expires_at_ms}),
    };
    match event {
        LiveEvent::CallPending(item) => Some(held(item, "held", "Held for review")),
        LiveEvent::CallEscalated(x) => Some(held(&x.item, "escalated", "Escalated, still unanswered")),
        LiveEvent::BreakGlass(b) => {
            let who = app::api::who(&b.user);
            let (title, text) = if b.change == "started" {
                let until = b
                    .active
                    .iter()
                    .find(|v| v.user == b.user)
                    .map(|v| crate::ingest::view::rfc3339(v.ends_at_ms))
                    .unwrap_or_default();
                (
                    format!("Break-glass started by {who}"),
                    format!("“{}” — until {until}", b.reason),
                )
            } else {
                (format!("Break-glass of {who} ended"), b.reason.clone())
            };
            Some(Notice {
                event: "break_glass",
                title,
                text,
                link: format!("{base}/oncall"),
                call: None,
                data: json!({"change": b.change, "user": b.user, "reason": b.reason, "active": b.active.len()}),
            })
        }
        LiveEvent::OverridesChanged(o) => {
            let (id, by) = (o.call_id.as_ref()?, o.by.as_deref().unwrap_or("?"));
            Some(Notice {
                event: "override",
                title: format!("Override by {} awaits review", app::api::who(by)),
                text: format!(
                    "Call {id} was released under break-glass; {} override(s) await review.",
                    o.awaiting
                ),
                link: format!("{base}/oncall"),
                call: None,
                data: json!({"call_id": id, "by": by, "awaiting": o.awaiting}),
            })
        }
        _ => None,
    }
}

/// A channel as the notifier uses it.
#[derive(Debug, Clone)]
pub struct Channel {
    pub config: ChannelConfig,
    /// From the configuration file (not removable on the admin page).
    pub from_config: bool,
}

/// How a channel's deliveries went since the server started.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub delivered: u64,
    pub failed: u64,
    pub last_at_ms: Option<i64>,
    pub last_error: Option<String>,
}

impl Channel {
    /// Does this channel want `n`?
    pub fn wants(&self, n: &Notice) -> bool {
        let c = &self.config;
        if !c.events.is_empty() && !c.events.iter().any(|e| e == n.event) {
            return false;
        }
        match &n.call {
            Some((_, risk)) => rank(risk) >= rank(&c.min_risk),
            None => true,
        }
    }
}

fn rank(risk: &str) -> usize {
    RISKS.iter().position(|r| *r == risk).unwrap_or(0)
}

/// Sends notices to channels; cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: NotifyConfig,
    channels: std::sync::RwLock<Vec<Channel>>,
    stats: std::sync::Mutex<std::collections::HashMap<String, Stats>>,
    ledger: Ledger,
    guard: Arc<UrlGuard>,
    links: links::Linker,
    outstanding: AtomicUsize,
}

impl Notifier {
    pub fn new(config: NotifyConfig, ledger: Ledger, guard: Arc<UrlGuard>, links: links::Linker) -> Notifier {
        let channels = config
            .channels
            .iter()
            .cloned()
            .map(|config| Channel {
                config,
                from_config: true,
            })
            .collect();
        Notifier {
            inner: Arc::new(Inner {
                config,
                channels: std::sync::RwLock::new(channels),
                stats: Default::default(),
                ledger,
                guard,
                links,
                outstanding: AtomicUsize::new(0),
            }),
        }
    }

    /// The configured channels plus those stored from the admin page.
    pub fn set_stored(&self, stored: Vec<ChannelConfig>) {
        let mut all = self.inner.channels.write().unwrap_or_else(|p| p.into_inner());
        all.retain(|c| c.from_config);
        all.extend(stored.into_iter().map(|config| Channel {
            config,
            from_config: false,
        }));
    }

    pub fn channels(&self) -> Vec<Channel> {
        self.inner.channels.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn stats(&self, name: &str) -> Stats {
        let stats = self.inner.stats.lock().unwrap_or_else(|p| p.into_inner());
        stats.get(name).cloned().unwrap_or_default()
    }

    pub fn config(&self) -> &NotifyConfig {
        &self.inner.config
    }

    /// Send a test notice to one channel now (one attempt); the error when it failed.
    pub async fn test(&self, name: &str, by: &str) -> Result<(), String> {
        let ch = self
            .channels()
            .into_iter()
            .find(|c| c.config.name == name)
            .ok_or("no such channel")?;
        let n = Notice {
            event: "test",
            title: format!("Test notification from Airlock, sent by {}", app::api::who(by)),
            text: "If you can read this, the channel works.".into(),
            link: format!("{}/admin", self.inner.config.public_url.trim_end_matches('/')),
            call: None,
            data: json!({"test": true}),
        };
        let id = format!("nt_{}", uuid::Uuid::now_v7().simple());
        let r = send::send(&self.inner.config, &self.inner.guard, &self.inner.links, &ch, &n, &id).await;
        self.record(
            if r.is_ok() {
                "notification_delivered"
            } else {
                "notification_failed"
            },
            &ch,
            &n,
            &id,
            1,
            r.as_ref().err().map(String::as_str),
        );
        r
    }

    /// Follow the hub until the server shuts down.
    pub async fn run(self, hub: Arc<Hub>) {
        let mut sub = hub.subscribe(None);
        let base = self.inner.config.public_url.trim_end_matches('/').to_string();
        loop {
            tokio::select! {
                ev = sub.live.recv() => match ev {
                    Ok(e) => {
                        // Nothing to build while no channel is configured; another
                        // instance's events were notified there.
                        if e.remote || self.inner.channels.read().unwrap_or_else(|p| p.into_inner()).is_empty() {
                            continue;
                        }
                        if let Some(n) = notice_for(&e.event, &base) {
                            self.dispatch(n, None);
                        }
                    }
                    Err(RecvError::Lagged(n)) => tracing::warn!(missed = n, "notifier fell behind the event hub"),
                    Err(RecvError::Closed) => return,
                },
                _ = sub.shutdown.changed() => return,
            }
        }
    }

    /// Send `n` to every channel that wants it (but `except`).
    pub fn dispatch(&self, n: Notice, except: Option<&str>) {
        for ch in &self.channels() {
            if except == Some(ch.config.name.as_str()) || !ch.wants(&n) {
                continue;
            }
            if self.inner.outstanding.fetch_add(1, Ordering::Relaxed) >= MAX_OUTSTANDING {
                self.inner.outstanding.fetch_sub(1, Ordering::Relaxed);
                tracing::warn!(channel = %ch.config.name, event = n.event, "notification dropped: too many outstanding");
                crate::metrics::Metrics::outcome(&crate::metrics::get().notifications, "dropped");
                continue;
            }
            let (me, ch, n) = (self.clone(), ch.clone(), n.clone());
            tokio::spawn(async move {
                me.deliver(&ch, &n).await;
                me.inner.outstanding.fetch_sub(1, Ordering::Relaxed);
            });
        }
    }

    /// Try until delivered or out of attempts; record the outcome.
    async fn deliver(&self, ch: &Channel, n: &Notice) {
        let id = format!("nt_{}", uuid::Uuid::now_v7().simple());
        let max = self.inner.config.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=max {
            let sent = send::send(&self.inner.config, &self.inner.guard, &self.inner.links, ch, n, &id).await;
            match sent {
                Ok(()) => {
                    self.record("notification_delivered", ch, n, &id, attempt, None);
                    return;
                }
                Err(e) => {
                    tracing::info!(channel = %ch.config.name, attempt, error = %e, "notification not delivered");
                    last = e;
                }
            }
            if attempt < max {
                let wait = self.inner.config.backoff_ms.saturating_mul(1 << (attempt - 1).min(16));
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
        }
        self.record("notification_failed", ch, n, &id, max, Some(&last));
        if n.event != "failure" {
            let failed = Notice {
                event: "failure",
                title: format!("Notification channel {} is failing", ch.config.name),
                text: format!("“{}” was not delivered after {max} attempts: {last}", n.title),
                link: format!("{}/admin", self.inner.config.public_url.trim_end_matches('/')),
                call: None,
                data: json!({"channel": ch.config.name, "notification": id, "error": last}),
            };
            self.dispatch(failed, Some(&ch.config.name));
        }
    }

    fn record(&self, kind: &'static str, ch: &Channel, n: &Notice, id: &str, attempts: u32, error: Option<&str>) {
        {
            let mut stats = self.inner.stats.lock().unwrap_or_else(|p| p.into_inner());
            let s = stats.entry(ch.config.name.clone()).or_default();
            let outcome = if error.is_none() { "delivered" } else { "failed" };
            crate::metrics::Metrics::outcome(&crate::metrics::get().notifications, outcome);
            s.last_at_ms = Some(crate::store::now_ms());
            match error {
                None => s.delivered += 1,
                Some(e) => {
                    s.failed += 1;
                    s.last_error = Some(e.chars().take(300).collect());
                }
            }
        }
        self.inner.ledger.audit(NewEvent {
            kind,
            actor: "system".into(),
            call_id: n.call.as_ref().map(|(c, _)| c.clone()),
            session_id: None,
            data: json!({"channel": ch.config.name, "kind": ch.config.kind, "event": n.event,
                "notification": id, "attempts": attempts, "error": error}),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(risk: &str) -> QueueItem {
        QueueItem {
            id: "tc_1".into(),
            agent: "bot".into(),
            session_id: "s".into(),
            tool: "write_file".into(),
            server: None,
            risk: risk.into(),
            destructive: true,
            rule: Some("r".into()),
            reason: "why".into(),
            blocked_by: None,
            created_at_ms: 0,
            expires_at_ms: None,
            approvers_required: 1,
            approvals: vec![],
            escalated: false,
        }
    }

    fn channel(min_risk: &str, events: &[&str]) -> Channel {
        Channel {
            config: ChannelConfig {
                name: "c".into(),
                kind: "slack".into(),
                url: Some("https://hooks.example.com/x".into()),
                secret: None,
                to: vec![],
                min_risk: min_risk.into(),
                events: events.iter().map(|e| e.to_string()).collect(),
            },
            from_config: true,
        }
    }

    #[test]
    fn channels_take_held_calls_at_or_above_their_risk_and_only_their_events() {
        let high = notice_for(&LiveEvent::CallPending(item("high")), "https://a.example").unwrap();
        let low = notice_for(&LiveEvent::CallPending(item("low")), "https://a.example").unwrap();
        assert_eq!(high.link, "https://a.example/calls/tc_1");
        assert!(channel("high", &[]).wants(&high));
        assert!(!channel("critical", &[]).wants(&high));
        assert!(!channel("medium", &[]).wants(&low));
        assert!(!channel("low", &["escalated"]).wants(&high));
        let ended = LiveEvent::BreakGlass(app::api::BreakGlassBoard {
            active: vec![],
            change: "ended".into(),
            user: "user:olga".into(),
            reason: "time is up".into(),
        });
        let n = notice_for(&ended, "https://a.example").unwrap();
        assert_eq!(n.event, "break_glass");
        assert!(channel("critical", &[]).wants(&n), "the risk filter is for calls only");
        assert!(notice_for(&LiveEvent::UsersChanged(app::api::UserChanged { user: 1 }), "x").is_none());
    }
}
