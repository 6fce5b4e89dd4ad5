//! Notification settings as the configuration file states them (`[notify]`, one
//! `[[notify.channels]]` table per channel). Checked once at start: a channel that could
//! never deliver is a configuration error, not a silent gap at 3 a.m.

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize)]
pub struct NotifyConfig {
    /// The dashboard's address as reviewers reach it, for links in notifications.
    pub public_url: String,
    /// Deliver to loopback and private addresses. Local testing only.
    pub allow_private: bool,
    /// Attempts per delivery before it counts as failed.
    pub max_attempts: u32,
    /// Delay before the second attempt; it doubles for each further attempt.
    pub backoff_ms: u64,
    /// Signing secret of the Slack app whose buttons call `/api/slack/interactions`.
    #[serde(default)]
    pub slack_signing_secret: Option<SecretString>,
    #[serde(default)]
    pub smtp: Option<Smtp>,
    #[serde(default)]
    pub channels: Vec<ChannelConfig>,
}

/// The serialisable part of the defaults (secrets and channels have none).
#[derive(Serialize)]
pub struct NotifyDefaults {
    public_url: &'static str,
    allow_private: bool,
    max_attempts: u32,
    backoff_ms: u64,
}

pub const DEFAULTS: NotifyDefaults = NotifyDefaults {
    public_url: "http://127.0.0.1:3000",
    allow_private: false,
    max_attempts: 6,
    backoff_ms: 2000,
};

#[derive(Debug, Clone, Deserialize)]
pub struct Smtp {
    pub host: String,
    #[serde(default = "smtp_port")]
    pub port: u16,
    /// The sender address.
    pub from: String,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub password: Option<SecretString>,
    /// `starttls` (default), `tls` (implicit, port 465) or `none` (a local relay only).
    #[serde(default = "starttls")]
    pub tls: String,
}

fn smtp_port() -> u16 {
    587
}

fn starttls() -> String {
    "starttls".into()
}

/// One outbound channel.
#[derive(Debug, Clone, Deserialize)]
pub struct ChannelConfig {
    pub name: String,
    /// `webhook` (JSON, signed like Standard Webhooks), `slack` (incoming webhook) or `email`.
    pub kind: String,
    /// Where webhook and Slack messages go.
    #[serde(default)]
    pub url: Option<String>,
    /// Webhook signing secret, `whsec_…`.
    #[serde(default)]
    pub secret: Option<SecretString>,
    /// E-mail recipients.
    #[serde(default)]
    pub to: Vec<String>,
    /// Held and escalated calls below this risk are not sent (low, medium, high, critical).
    #[serde(default = "low")]
    pub min_risk: String,
    /// Which events (held, escalated, break_glass, override, failure); empty: all.
    #[serde(default)]
    pub events: Vec<String>,
}

fn low() -> String {
    "low".into()
}

/// Event names a channel may subscribe to.
pub const EVENTS: [&str; 5] = ["held", "escalated", "break_glass", "override", "failure"];
pub const RISKS: [&str; 4] = ["low", "medium", "high", "critical"];

impl NotifyConfig {
    /// Every problem with the channels, or none.
    pub fn check(&self) -> Result<(), String> {
        let mut names = std::collections::HashSet::new();
        for c in &self.channels {
            if c.name.trim().is_empty() || !names.insert(c.name.as_str()) {
                return Err(format!(
                    "notify channel names must be present and unique ({:?})",
                    c.name
                ));
            }
            check_channel(c, self.smtp.is_some())?;
        }
        if let Some(s) = &self.smtp {
            if !matches!(s.tls.as_str(), "starttls" | "tls" | "none") {
                return Err(format!(
                    "notify.smtp.tls must be starttls, tls or none, not {:?}",
                    s.tls
                ));
            }
        }
        url::Url::parse(&self.public_url).map_err(|e| format!("notify.public_url: {e}"))?;
        Ok(())
    }
}

/// A channel is complete for its kind, its filters name known things, its secret parses.
pub fn check_channel(c: &ChannelConfig, have_smtp: bool) -> Result<(), String> {
    let name = &c.name;
    let url = || -> Result<(), String> {
        let u = c
            .url
            .as_deref()
            .ok_or(format!("notify channel {name}: url is required"))?;
        let parsed = url::Url::parse(u).map_err(|e| format!("notify channel {name}: url: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("notify channel {name}: url must be http(s)"));
        }
        Ok(())
    };
    match c.kind.as_str() {
        "webhook" => {
            url()?;
            let secret = c
                .secret
                .as_ref()
                .ok_or(format!("notify channel {name}: a webhook needs a secret (whsec_…)"))?;
            crate::agents::SigningSecret::parse(secret.expose_secret())
                .map_err(|e| format!("notify channel {name}: {e}"))?;
        }
        "slack" => url()?,
        "email" => {
            if c.to.is_empty() || c.to.iter().any(|t| !t.contains('@')) {
                return Err(format!("notify channel {name}: `to` needs e-mail addresses"));
            }
            if !have_smtp {
                return Err(format!("notify channel {name}: e-mail needs [notify.smtp]"));
            }
        }
        other => {
            return Err(format!(
                "notify channel {name}: unknown kind {other:?} (webhook, slack, email)"
            ))
        }
    }
    if !RISKS.contains(&c.min_risk.as_str()) {
        return Err(format!("notify channel {name}: min_risk must be one of {RISKS:?}"));
    }
    if let Some(e) = c.events.iter().find(|e| !EVENTS.contains(&e.as_str())) {
        return Err(format!(
            "notify channel {name}: unknown event {e:?} (one of {EVENTS:?})"
        ));
    }
    Ok(())
}
