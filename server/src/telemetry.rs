//! Logging: pretty for people by default, JSON lines on request, on standard error (a
//! command's output — a report, `--json`, a password shown once — is standard output's
//! alone). Nothing secret is logged: request spans carry method, matched route and request
//! id, never bodies, cookies or query strings.

use crate::config::{Config, LogFormat};
use tracing_subscriber::{fmt, prelude::*, EnvFilter};

/// Install the global subscriber once (later calls, e.g. from tests, are no-ops).
pub fn init(config: &Config) {
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry().with(filter);
    let _ = match config.log_format {
        LogFormat::Json => registry
            .with(
                fmt::layer()
                    .with_writer(std::io::stderr)
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false),
            )
            .try_init(),
        LogFormat::Pretty => registry
            .with(fmt::layer().with_writer(std::io::stderr).compact())
            .try_init(),
    };
}
