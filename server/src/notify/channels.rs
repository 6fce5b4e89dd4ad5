//! Channels added on the admin page: stored with their URL and secret sealed (a Slack
//! incoming-webhook URL is a credential), shown by host only.

use super::config::ChannelConfig;
use crate::agents::secret::{open_bytes, seal_bytes};
use crate::store::Db;
use chacha20poly1305::aead::KeyInit;
use chacha20poly1305::XChaCha20Poly1305;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// Seals what a stored channel must keep secret.
#[derive(Clone)]
pub struct ChannelSealer(XChaCha20Poly1305);

impl ChannelSealer {
    pub fn from_server_key(key: &crate::agents::ServerKey) -> ChannelSealer {
        let k = key.derive("airlock notification channels v1");
        ChannelSealer(XChaCha20Poly1305::new_from_slice(&k).expect("32-byte key"))
    }
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    url: Option<String>,
    secret: Option<String>,
}

/// Where a channel sends, as the browser may see it: the host of a URL (never its path,
/// which holds Slack's token), or the recipients of an e-mail channel.
pub fn target_of(c: &ChannelConfig) -> String {
    match c.kind.as_str() {
        "email" => c.to.join(", "),
        _ => c
            .url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(|h| format!("{}://{h}/…", u.scheme())))
            .unwrap_or_default(),
    }
}

pub async fn insert(
    db: &Db,
    sealer: &ChannelSealer,
    c: &ChannelConfig,
    by: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let sealed = serde_json::to_vec(&Sealed {
        url: c.url.clone(),
        secret: c.secret.as_ref().map(|s| s.expose_secret().to_string()),
    })
    .unwrap_or_default();
    let r = sqlx::query(
        "INSERT INTO notification_channels
           (name, kind, target, sealed, recipients, min_risk, events, created_by, created_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
    )
    .bind(&c.name)
    .bind(&c.kind)
    .bind(target_of(c))
    .bind(seal_bytes(&sealer.0, &sealed, c.name.as_bytes()))
    .bind(serde_json::to_string(&c.to).unwrap_or_default())
    .bind(&c.min_risk)
    .bind(serde_json::to_string(&c.events).unwrap_or_default())
    .bind(by)
    .bind(now)
    .execute(db)
    .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn delete(db: &Db, name: &str) -> Result<bool, sqlx::Error> {
    let r = sqlx::query("DELETE FROM notification_channels WHERE name = $1")
        .bind(name)
        .execute(db)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Every stored channel, opened. One that no longer opens (another server key) is left
/// out and logged.
pub async fn load(db: &Db, sealer: &ChannelSealer) -> Result<Vec<ChannelConfig>, sqlx::Error> {
    type Row = (String, String, Vec<u8>, String, String, String);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT name, kind, sealed, recipients, min_risk, events FROM notification_channels ORDER BY name",
    )
    .fetch_all(db)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for (name, kind, sealed, recipients, min_risk, events) in rows {
        let Ok(open) = open_bytes(&sealer.0, &sealed, name.as_bytes()) else {
            tracing::error!(channel = %name, "a stored notification channel does not open with this server key");
            continue;
        };
        let Ok(s) = serde_json::from_slice::<Sealed>(&open) else {
            continue;
        };
        out.push(ChannelConfig {
            name,
            kind,
            url: s.url,
            secret: s.secret.map(SecretString::from),
            to: serde_json::from_str(&recipients).unwrap_or_default(),
            min_risk,
            events: serde_json::from_str(&events).unwrap_or_default(),
        });
    }
    Ok(out)
}
