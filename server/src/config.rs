//! Typed configuration: defaults, then an optional TOML file, then `AIRLOCK_*`
//! environment variables (highest precedence). Every setting is documented in
//! `airlock.example.toml`.

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Pretty,
    Json,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// `sqlite://PATH` (the file is created) or, later, `postgres://…`. May hold a password.
    pub database_url: SecretString,
    /// The policy file the engine loads at start.
    pub policy_file: PathBuf,
    /// Directory with the built browser assets (`pkg/`): cargo-leptos' site root.
    pub site_root: PathBuf,
    /// Send cookies only over HTTPS. Turn off only for plain-http local runs.
    pub cookie_secure: bool,
    /// Sign a person out after this many minutes without activity.
    pub session_idle_minutes: i64,
    pub log_format: LogFormat,
    /// `tracing` filter, e.g. `info` or `airlock=debug,tower_http=info`.
    pub log_level: String,
    /// Name of the first administrator created on an empty database.
    pub first_admin: String,
    /// Sign-in attempts allowed per account in a burst, then one more per minute.
    pub login_burst_per_account: u32,
    /// Sign-in attempts allowed per client address in a burst, then one more every 2 s.
    pub login_burst_per_address: u32,
    /// Seconds that in-flight requests get to finish on shutdown.
    pub shutdown_grace_seconds: u64,
    /// File holding the key that seals agent secrets (created, mode 0600, when absent).
    /// Keep it out of database backups or the secrets can be opened with the backup.
    pub key_file: PathBuf,
    /// Largest request body the agent API accepts, in bytes.
    pub max_body_bytes: usize,
    /// Deliver callbacks to private, loopback and link-local addresses. Local testing only.
    pub callback_allow_private: bool,
    /// Delivery attempts per callback before it is marked failed.
    pub callback_max_attempts: i64,
    /// Delay before the second attempt; it doubles for each further attempt.
    pub callback_backoff_ms: i64,
    /// Proposals one agent may send per second on average (0: no limit); over it, 429.
    pub agent_rate_per_second: u32,
    /// Proposals one agent may send in a burst above its rate.
    pub agent_rate_burst: u32,
    /// Held calls one agent may have waiting at once (0: no limit); over it, 429.
    pub max_pending_per_agent: u32,
    /// Who an agent's `on_behalf_of` stands for: principal → dashboard user name. A
    /// reviewer may not approve or modify a call made on their own behalf. Without an
    /// entry, `user:NAME`, a bare user name and an e-mail's local part name the user.
    pub principals: std::collections::BTreeMap<String, String>,
    /// Days the unredacted arguments of decided calls are kept; after that only the
    /// redacted form stays (0: keep them).
    pub raw_arguments_days: u32,
    /// Reviewers may read the audit trail (search, timelines, export) without changing it.
    pub reviewers_read_audit: bool,
    /// Longest break-glass override an on-call person may start, in minutes.
    pub break_glass_max_minutes: i64,
    /// When an unanswered held call is escalated to on-call.
    pub escalation: Escalation,
    /// Outbound notifications: channels, SMTP, links back to the dashboard.
    pub notify: crate::notify::config::NotifyConfig,
    /// Bearer token for `GET /metrics`; without one, only this machine may read them.
    #[serde(default)]
    pub metrics_token: Option<SecretString>,
}

/// Held calls unanswered this many minutes are marked escalated and on-call is told:
/// `tools` first, then `risk`, then `after_minutes`; 0 means never.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    pub after_minutes: i64,
    #[serde(default)]
    pub risk: std::collections::BTreeMap<String, i64>,
    #[serde(default)]
    pub tools: std::collections::BTreeMap<String, i64>,
}

impl Escalation {
    /// How long a held call of `tool` at `risk` may wait before it is escalated.
    pub fn after_ms(&self, tool: &str, risk: &str) -> Option<i64> {
        let minutes = self
            .tools
            .get(tool)
            .or_else(|| self.risk.get(risk))
            .copied()
            .unwrap_or(self.after_minutes);
        (minutes > 0).then(|| minutes.saturating_mul(60_000))
    }

    /// The shortest escalation time of any call (None: nothing is ever escalated).
    pub fn shortest_ms(&self) -> Option<i64> {
        std::iter::once(self.after_minutes)
            .chain(self.risk.values().copied())
            .chain(self.tools.values().copied())
            .filter(|m| *m > 0)
            .min()
            .map(|m| m.saturating_mul(60_000))
    }
}

/// Serialisable defaults (secrets excluded from `Config`'s own Serialize).
#[derive(Serialize)]
struct Defaults {
    bind: &'static str,
    database_url: &'static str,
    policy_file: &'static str,
    site_root: &'static str,
    cookie_secure: bool,
    session_idle_minutes: i64,
    log_format: LogFormat,
    log_level: &'static str,
    first_admin: &'static str,
    login_burst_per_account: u32,
    login_burst_per_address: u32,
    shutdown_grace_seconds: u64,
    key_file: &'static str,
    max_body_bytes: usize,
    callback_allow_private: bool,
    callback_max_attempts: i64,
    callback_backoff_ms: i64,
    agent_rate_per_second: u32,
    agent_rate_burst: u32,
    max_pending_per_agent: u32,
    principals: std::collections::BTreeMap<String, String>,
    raw_arguments_days: u32,
    reviewers_read_audit: bool,
    break_glass_max_minutes: i64,
    escalation: Escalation,
    notify: crate::notify::config::NotifyDefaults,
}

const DEFAULTS: Defaults = Defaults {
    bind: "127.0.0.1:3000",
    database_url: "sqlite://data/airlock.db",
    policy_file: "policies/demo.toml",
    site_root: "target/site",
    cookie_secure: true,
    session_idle_minutes: 480,
    log_format: LogFormat::Pretty,
    log_level: "info,sqlx=warn,tower_sessions=warn",
    first_admin: "admin",
    login_burst_per_account: 10,
    login_burst_per_address: 30,
    shutdown_grace_seconds: 20,
    key_file: "data/airlock.key",
    max_body_bytes: 1024 * 1024,
    callback_allow_private: false,
    callback_max_attempts: 8,
    callback_backoff_ms: 1000,
    agent_rate_per_second: 200,
    agent_rate_burst: 400,
    max_pending_per_agent: 1000,
    principals: std::collections::BTreeMap::new(),
    raw_arguments_days: 30,
    reviewers_read_audit: false,
    break_glass_max_minutes: 60,
    escalation: Escalation {
        after_minutes: 15,
        risk: std::collections::BTreeMap::new(),
        tools: std::collections::BTreeMap::new(),
    },
    notify: crate::notify::config::DEFAULTS,
};

impl Config {
    /// Defaults → `AIRLOCK_CONFIG` file (or `airlock.toml` if present) → `AIRLOCK_*` env.
    pub fn load() -> Result<Config, String> {
        let file = std::env::var("AIRLOCK_CONFIG").ok();
        let mut fig = Figment::from(Serialized::defaults(DEFAULTS));
        match &file {
            Some(f) => {
                if !std::path::Path::new(f).is_file() {
                    return Err(format!("AIRLOCK_CONFIG={f}: no such file"));
                }
                fig = fig.merge(Toml::file_exact(f));
            }
            None => fig = fig.merge(Toml::file("airlock.toml")),
        }
        fig = fig.merge(Env::prefixed("AIRLOCK_").ignore(&["config"]));
        fig.extract::<Config>().map_err(|e| format!("configuration: {e}"))
    }

    /// The defaults alone (tests override fields directly).
    pub fn defaults() -> Config {
        Figment::from(Serialized::defaults(DEFAULTS))
            .extract()
            .expect("defaults are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn defaults_listen_on_loopback_port_3000_with_sqlite() {
        let c = Config::defaults();
        assert_eq!(c.bind.to_string(), "127.0.0.1:3000");
        assert!(c.database_url.expose_secret().starts_with("sqlite://"));
        assert!(c.cookie_secure);
    }

    #[test]
    fn escalation_takes_the_tool_then_the_risk_then_the_default() {
        let e = Escalation {
            after_minutes: 15,
            risk: [("critical".to_string(), 5)].into(),
            tools: [("read_file".to_string(), 0), ("delete_path".to_string(), 2)].into(),
        };
        assert_eq!(e.after_ms("delete_path", "critical"), Some(120_000));
        assert_eq!(e.after_ms("write_file", "critical"), Some(300_000));
        assert_eq!(e.after_ms("write_file", "low"), Some(900_000));
        assert_eq!(e.after_ms("read_file", "critical"), None, "0 is never");
        assert_eq!(e.shortest_ms(), Some(120_000));
        assert_eq!(Escalation::default().shortest_ms(), None);
        assert_eq!(Config::defaults().escalation.after_minutes, 15);
    }

    #[test]
    fn the_example_file_is_a_valid_configuration() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../airlock.example.toml");
        let c: Config = Figment::from(Serialized::defaults(DEFAULTS))
            .merge(Toml::file_exact(file))
            .extract()
            .expect("airlock.example.toml parses");
        c.notify.check().expect("its notification settings are valid");
        assert_eq!(c.escalation.after_minutes, 15);
        assert_eq!(c.break_glass_max_minutes, 60);
    }

    #[test]
    fn debug_output_hides_the_database_url() {
        let mut c = Config::defaults();
        c.database_url = SecretString::from("postgres://u:hunter2@db/airlock");
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
