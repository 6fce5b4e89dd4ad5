//! The browser app's files under `/pkg`: precompressed copies (brotli, gzip) picked by the
//! request's `Accept-Encoding`, and caching by name. A content-hashed name
//! (`airlock.<16 hex>.wasm`, written by scripts/build.sh) never changes its bytes, so the
//! browser keeps it for a year without asking again; any other name (the unhashed files of
//! `cargo leptos watch`) is revalidated on every use.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use std::path::Path;
use tower_http::services::ServeDir;

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

pub fn service(site_root: &str) -> Router {
    let files = ServeDir::new(Path::new(site_root).join("pkg"))
        .precompressed_br()
        .precompressed_gzip();
    Router::new()
        .fallback_service(files)
        .layer(middleware::from_fn(cache_by_name))
}

async fn cache_by_name(req: Request, next: Next) -> Response {
    let hashed = is_hashed(req.uri().path());
    let mut res = next.run(req).await;
    let policy = if hashed && res.status() == StatusCode::OK {
        IMMUTABLE
    } else {
        "no-cache"
    };
    let h = res.headers_mut();
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    res
}

/// `/airlock.0123456789abcdef.wasm` and the like: a name, 16 hex digits, an extension.
fn is_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    let mut parts = name.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(stem), Some(hash), Some(ext), None) => {
            !stem.is_empty()
                && hash.len() == 16
                && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                && matches!(ext, "js" | "wasm" | "css")
        }
        _ => false,
    }
}

/// How this server's views were compiled (`--cfg erase_components` or not).
pub const VIEWS: &str = if cfg!(erase_components) { "erased" } else { "typed" };

/// Refuse browser assets whose views were compiled the other way: hydration would fail on
/// every page. scripts/build.sh records it in `pkg/hash.txt` (`views: erased|typed`).
pub fn check_site(site_root: &Path) -> Result<(), String> {
    let Ok(hashes) = std::fs::read_to_string(site_root.join("pkg").join("hash.txt")) else {
        return Ok(()); // not built by scripts/build.sh (e.g. `cargo leptos watch`)
    };
    match site_views(&hashes) {
        Some(views) if views != VIEWS => Err(format!(
            "the browser assets in {} were built with {views} views but this server with {VIEWS} views; \
             build both with scripts/build.sh (it sets RUSTFLAGS=\"--cfg erase_components\")",
            site_root.display()
        )),
        _ => Ok(()),
    }
}

fn site_views(hashes: &str) -> Option<&str> {
    hashes
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "views")
        .map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use super::{is_hashed, site_views};

    #[test]
    fn the_views_line_is_read_from_the_hash_file() {
        assert_eq!(site_views("js: 01\nwasm: 02\nviews: erased\n"), Some("erased"));
        assert_eq!(site_views("js: 01\nwasm: 02\n"), None);
    }

    #[test]
    fn only_content_hashed_names_are_immutable() {
        assert!(is_hashed("/airlock.0123456789abcdef.wasm"));
        assert!(is_hashed("/pkg/airlock.fedcba9876543210.css"));
        assert!(!is_hashed("/airlock.wasm"));
        assert!(!is_hashed("/airlock.js"));
        assert!(!is_hashed("/hash.txt"));
        assert!(!is_hashed("/airlock.0123456789ABCDEF.js"));
        assert!(!is_hashed("/airlock.0123456789abcde.js"));
        assert!(!is_hashed("/airlock.0123456789abcdef.txt"));
        assert!(!is_hashed("/airlock.0123456789abcdef.wasm.gz"));
    }
}
