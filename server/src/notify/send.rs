//! One delivery to one channel: a JSON webhook signed like Standard Webhooks, a
//! Slack-compatible incoming webhook (text and blocks, with Approve / Reject buttons that
//! open a confirm page), or an e-mail over SMTP (with the same links).

use super::config::NotifyConfig;
use super::links::Linker;
use super::{Channel, Notice};
use crate::agents::SigningSecret;
use policy::guards::url::UrlGuard;
use secrecy::ExposeSecret;
use serde_json::{json, Value};
use std::sync::Arc;

pub async fn send(
    cfg: &NotifyConfig,
    guard: &Arc<UrlGuard>,
    links: &Linker,
    ch: &Channel,
    n: &Notice,
    id: &str,
) -> Result<(), String> {
    match ch.config.kind.as_str() {
        "webhook" => webhook(cfg, guard, ch, n, id).await,
        "slack" => slack(cfg, guard, links, ch, n).await,
        "email" => email(cfg, links, ch, n).await,
        other => Err(format!("unknown channel kind {other}")),
    }
}

async fn post(
    cfg: &NotifyConfig,
    guard: &Arc<UrlGuard>,
    url: &str,
    req: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> Result<(), String> {
    let (client, url) = crate::callbacks::pinned_client(guard, cfg.allow_private, url).await?;
    let resp = req(client.post(url)).send().await.map_err(|e| e.to_string())?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the receiver answered {status}"))
    }
}

async fn webhook(cfg: &NotifyConfig, guard: &Arc<UrlGuard>, ch: &Channel, n: &Notice, id: &str) -> Result<(), String> {
    let url = ch.config.url.as_deref().ok_or("no url")?;
    let secret = ch.config.secret.as_ref().ok_or("no secret")?;
    let secret = SigningSecret::parse(secret.expose_secret())?;
    let body = json!({
        "type": format!("airlock.{}", n.event),
        "timestamp": crate::ingest::view::rfc3339(crate::store::now_ms()),
        "data": {"title": n.title, "text": n.text, "link": n.link, "facts": n.data},
    })
    .to_string();
    let ts = (crate::store::now_ms() / 1000).to_string();
    let sig = crate::ingest::signature::sign(&secret, id, &ts, body.as_bytes());
    post(cfg, guard, url, |r| {
        r.header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", ts)
            .header("webhook-signature", sig)
            .body(body)
    })
    .await
}

/// The Slack message: text for notifications, blocks with buttons for the channel.
pub fn slack_message(links: &Linker, n: &Notice, now_ms: i64) -> Value {
    let mut buttons = vec![json!({"type": "button", "action_id": "open",
        "text": {"type": "plain_text", "text": "Open"}, "url": n.link})];
    if let (Some((call, _)), "held" | "escalated") = (&n.call, n.event) {
        buttons.insert(
            0,
            json!({"type": "button", "action_id": "reject", "value": call, "style": "danger",
            "text": {"type": "plain_text", "text": "Reject"}, "url": links.link(call, "reject", now_ms)}),
        );
        buttons.insert(
            0,
            json!({"type": "button", "action_id": "approve", "value": call, "style": "primary",
            "text": {"type": "plain_text", "text": "Approve"}, "url": links.link(call, "approve", now_ms)}),
        );
    }
    json!({
        "text": format!("{}: {}", n.title, n.text),
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": format!("*{}*\n{}", escape(&n.title), escape(&n.text))}},
            {"type": "actions", "elements": buttons},
        ],
    })
}

/// Slack's mrkdwn treats `&`, `<` and `>` as markup: agent text must not make links.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

async fn slack(
    cfg: &NotifyConfig,
    guard: &Arc<UrlGuard>,
    links: &Linker,
    ch: &Channel,
    n: &Notice,
) -> Result<(), String> {
    let url = ch.config.url.as_deref().ok_or("no url")?;
    let body = slack_message(links, n, crate::store::now_ms()).to_string();
    post(cfg, guard, url, |r| {
        r.header("content-type", "application/json").body(body)
    })
    .await
}

/// The e-mail's text: the notice, then links to confirm a decision or open the call.
pub fn email_body(links: &Linker, n: &Notice, now_ms: i64) -> String {
    let mut body = format!("{}\n\n{}\n\nOpen: {}\n", n.title, n.text, n.link);
    if let (Some((call, _)), "held" | "escalated") = (&n.call, n.event) {
        body.push_str(&format!(
            "\nApprove: {}\nReject: {}\n\nEach link opens a confirm page once; you sign in and confirm there.\n",
            links.link(call, "approve", now_ms),
            links.link(call, "reject", now_ms)
        ));
    }
    body
}

async fn email(cfg: &NotifyConfig, links: &Linker, ch: &Channel, n: &Notice) -> Result<(), String> {
    use lettre::message::header::ContentType;
    use lettre::transport::smtp::authentication::Credentials;
    use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
    let smtp = cfg.smtp.as_ref().ok_or("no [notify.smtp] configured")?;
    let mut msg = Message::builder()
        .from(smtp.from.parse().map_err(|e| format!("from: {e}"))?)
        .subject(n.title.replace(['\r', '\n'], " "))
        .header(ContentType::TEXT_PLAIN);
    for to in &ch.config.to {
        msg = msg.to(to.parse().map_err(|e| format!("to {to}: {e}"))?);
    }
    let msg = msg
        .body(email_body(links, n, crate::store::now_ms()))
        .map_err(|e| e.to_string())?;
    let builder = match smtp.tls.as_str() {
        "none" => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host),
        "tls" => AsyncSmtpTransport::<Tokio1Executor>::relay(&smtp.host).map_err(|e| e.to_string())?,
        _ => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host).map_err(|e| e.to_string())?,
    };
    let mut builder = builder
        .port(smtp.port)
        .timeout(Some(std::time::Duration::from_secs(15)));
    if let (Some(u), Some(p)) = (&smtp.username, &smtp.password) {
        builder = builder.credentials(Credentials::new(u.clone(), p.expose_secret().to_string()));
    }
    builder.build().send(msg).await.map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_buttons_open_signed_confirm_links_and_agent_text_makes_no_markup() {
        let links = Linker::new(&crate::agents::ServerKey::from_bytes(&[3u8; 32]), "https://a.example");
        let n = Notice {
            event: "held",
            title: "Held: write_file".into(),
            text: "<https://evil.example|click me> & more".into(),
            link: "https://a.example/calls/tc_1".into(),
            call: Some(("tc_1".into(), "high".into())),
            data: Value::Null,
        };
        let m = slack_message(&links, &n, 0);
        let section = m["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(!section.contains("<https://evil"), "{section}");
        let buttons = m["blocks"][1]["elements"].as_array().unwrap();
        let ids: Vec<_> = buttons.iter().map(|b| b["action_id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["approve", "reject", "open"]);
        let url = buttons[0]["url"].as_str().unwrap();
        let token = url.strip_prefix("https://a.example/confirm?t=").unwrap();
        assert_eq!(links.open(token, 1).unwrap().verdict, "approve");
        assert!(email_body(&links, &n, 0).contains("/confirm?t="));
    }
}
