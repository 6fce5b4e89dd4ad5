//! Cross-site request forgery defences, in two layers:
//! 1. every state-changing request from a browser must come from this origin
//!    (`Sec-Fetch-Site`, else `Origin`), checked by [`same_origin`] middleware;
//! 2. every form and state-changing server function carries the session's token,
//!    compared in constant time ([`token_ok`]).
//!
//! The agent API (`/api/v1/…`) is exempt: it uses no cookies and is signed per request.

use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

pub fn token_ok(expected: Option<&str>, submitted: &str) -> bool {
    match expected {
        Some(e) if !e.is_empty() => e.as_bytes().ct_eq(submitted.as_bytes()).into(),
        _ => false,
    }
}

fn unsafe_method(m: &Method) -> bool {
    !matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Refuse cross-site state-changing requests with 403 `csrf_origin`.
pub async fn same_origin(req: Request, next: Next) -> Response {
    if unsafe_method(req.method()) && !req.uri().path().starts_with("/api/v1/") && !origin_ok(&req) {
        tracing::warn!(path = req.uri().path(), "cross-site request refused");
        return crate::error::json_error(StatusCode::FORBIDDEN, "csrf_origin", "cross-site request refused")
            .into_response();
    }
    next.run(req).await
}

fn origin_ok(req: &Request) -> bool {
    let h = req.headers();
    if let Some(site) = h.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin";
    }
    match h.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => true, // not a browser cross-site request; the token still has to match
        Some("null") => false,
        Some(origin) => {
            let host = h.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
            url::Url::parse(origin)
                .ok()
                .and_then(|u| {
                    let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
                    u.host_str().map(|hs| format!("{hs}{port}"))
                })
                .is_some_and(|o| o.eq_ignore_ascii_case(host))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_must_match_exactly() {
        assert!(token_ok(Some("abc"), "abc"));
        assert!(!token_ok(Some("abc"), "abd"));
        assert!(!token_ok(Some("abc"), ""));
        assert!(!token_ok(None, ""));
        assert!(!token_ok(Some(""), ""));
    }

    fn req(headers: &[(&str, &str)]) -> Request {
        let mut b = axum::http::Request::builder().method("POST").uri("/logout");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn origin_rules() {
        assert!(origin_ok(&req(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "http://127.0.0.1:3000")
        ])));
        assert!(!origin_ok(&req(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "http://evil.example")
        ])));
        assert!(!origin_ok(&req(&[("host", "127.0.0.1:3000"), ("origin", "null")])));
        assert!(origin_ok(&req(&[
            ("sec-fetch-site", "same-origin"),
            ("origin", "http://evil.example")
        ])));
        assert!(!origin_ok(&req(&[("sec-fetch-site", "cross-site")])));
        assert!(!origin_ok(&req(&[("sec-fetch-site", "same-site")])));
        assert!(origin_ok(&req(&[("host", "h")])));
    }
}
