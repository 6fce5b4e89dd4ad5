//! Security headers on every response. A page's CSP allows scripts only from this origin
//! plus the inline hydration script carrying this response's nonce, and WebAssembly
//! compilation ('wasm-unsafe-eval'), which the hydrated app needs. The agent API, health
//! checks and metrics answer data that nothing should ever run or embed: their CSP allows
//! nothing at all, the same text on every answer, so no nonce is made for them.

use app::api::CspNonce;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine;

/// A fresh CSP nonce for every response: from the thread's CSPRNG (seeded from the OS),
/// which costs no system call per request.
pub fn nonce() -> String {
    use rand::RngCore;
    let mut b = [0u8; 18];
    rand::thread_rng().fill_bytes(&mut b);
    base64::engine::general_purpose::STANDARD.encode(b)
}

pub fn csp(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    )
}

/// The CSP of answers that are data, not pages.
pub const DATA_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Paths that answer data only (an unknown path under them gets the strict CSP too).
fn is_data(path: &str) -> bool {
    path.starts_with("/api/v1/") || matches!(path, "/healthz" | "/readyz" | "/metrics")
}

/// `hsts`: send Strict-Transport-Security (only when served over HTTPS).
pub async fn security_headers(State(hsts): State<bool>, mut req: Request, next: Next) -> Response {
    let page_nonce = (!is_data(req.uri().path())).then(|| {
        let n = nonce();
        req.extensions_mut().insert(CspNonce(n.clone()));
        n
    });
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    let policy = match page_nonce {
        Some(n) => HeaderValue::from_str(&csp(&n)).ok(),
        None => Some(HeaderValue::from_static(DATA_CSP)),
    };
    if let Some(v) = policy {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // same-origin: server-function form posts without JS are redirected back to the Referer.
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    h.insert(
        "permissions-policy",
        HeaderValue::from_static("camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
    );
    if hsts {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}
