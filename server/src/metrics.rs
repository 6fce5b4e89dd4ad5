//! Prometheus metrics at `GET /metrics` (OpenMetrics text, which Prometheus reads):
//! requests and latency per route, decisions by status / layer / source, the queue's
//! depth and oldest held call, the ledger's batch sizes and commit latency, live-event
//! subscribers, callback and notification deliveries, and the policy in force.
//!
//! Counters live in one process-wide registry (as Prometheus clients usually do), so
//! every part of the server counts without carrying a handle. Readers: a bearer token
//! (`metrics_token`), or, without one, only clients on this machine (loopback).

use crate::error::json_error;
use crate::state::AppState;
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use secrecy::ExposeSecret;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::LazyLock;
use std::time::Instant;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub route: String,
    pub method: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DecisionLabels {
    pub status: String,
    /// The layer that denied or held the call; empty otherwise.
    pub layer: String,
    pub source: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PolicyLabels {
    pub name: String,
    pub version: String,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub request_seconds: Family<RouteLabels, Histogram>,
    pub decisions: Family<DecisionLabels, Counter>,
    pub queue_depth: Gauge,
    pub oldest_pending_seconds: Gauge<f64, AtomicU64>,
    pub batch_size: Histogram,
    pub commit_seconds: Histogram,
    /// Batches that first read back another writer's changes.
    pub ledger_refreshes: Counter,
    pub subscribers: Gauge,
    pub callbacks: Family<OutcomeLabels, Counter>,
    pub notifications: Family<OutcomeLabels, Counter>,
    pub policy: Family<PolicyLabels, Gauge>,
}

fn seconds_histogram() -> Histogram {
    // 100 µs … ~13 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 18))
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("airlock");
        let requests = Family::<RequestLabels, Counter>::default();
        let request_seconds =
            Family::<RouteLabels, Histogram>::new_with_constructor(seconds_histogram as fn() -> Histogram);
        let decisions = Family::<DecisionLabels, Counter>::default();
        let queue_depth = Gauge::default();
        let oldest_pending_seconds = Gauge::<f64, AtomicU64>::default();
        let batch_size = Histogram::new(exponential_buckets(1.0, 2.0, 10));
        let commit_seconds = seconds_histogram();
        let ledger_refreshes = Counter::default();
        let subscribers = Gauge::default();
        let callbacks = Family::<OutcomeLabels, Counter>::default();
        let notifications = Family::<OutcomeLabels, Counter>::default();
        let policy = Family::<PolicyLabels, Gauge>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_seconds",
            "HTTP request latency by route",
            request_seconds.clone(),
        );
        registry.register(
            "decisions",
            "Decisions by status, the layer that denied or held, and source",
            decisions.clone(),
        );
        registry.register("queue_depth", "Held calls waiting for a decision", queue_depth.clone());
        registry.register(
            "oldest_pending_seconds",
            "Age of the oldest held call (0 when none)",
            oldest_pending_seconds.clone(),
        );
        registry.register("ledger_batch_size", "Commands per ledger commit", batch_size.clone());
        registry.register(
            "ledger_refreshes",
            "Ledger batches that first read back what another writer (instance, CLI) changed",
            ledger_refreshes.clone(),
        );
        registry.register(
            "ledger_commit_seconds",
            "Time to apply and commit one ledger batch",
            commit_seconds.clone(),
        );
        registry.register(
            "live_subscribers",
            "Live-event subscribers (dashboards, the notifier)",
            subscribers.clone(),
        );
        registry.register(
            "callback_attempts",
            "Callback delivery attempts by outcome",
            callbacks.clone(),
        );
        registry.register(
            "notifications",
            "Notifications by outcome (delivered, failed, dropped)",
            notifications.clone(),
        );
        registry.register("policy_info", "The policy in force", policy.clone());
        Metrics {
            registry,
            requests,
            request_seconds,
            decisions,
            queue_depth,
            oldest_pending_seconds,
            batch_size,
            commit_seconds,
            ledger_refreshes,
            subscribers,
            callbacks,
            notifications,
            policy,
        }
    }

    /// Count one decision.
    pub fn decided(&self, status: &str, layer: Option<&str>, source: &str) {
        self.decisions
            .get_or_create(&DecisionLabels {
                status: status.to_string(),
                layer: layer.unwrap_or_default().to_string(),
                source: source.to_string(),
            })
            .inc();
    }

    pub fn outcome(family: &Family<OutcomeLabels, Counter>, outcome: &str) {
        family
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

pub fn get() -> &'static Metrics {
    &METRICS
}

/// Count every request by its route pattern (never the raw path: ids would make a
/// series each).
pub async fn track(req: Request, next: Next) -> Response {
    let route = match req.extensions().get::<MatchedPath>() {
        Some(m) => m.as_str().to_string(),
        None if req.uri().path().starts_with("/pkg/") => "/pkg".to_string(),
        None => "other".to_string(),
    };
    let method = req.method().as_str().to_string();
    let start = Instant::now();
    let resp = next.run(req).await;
    let m = get();
    m.request_seconds
        .get_or_create(&RouteLabels { route: route.clone() })
        .observe(start.elapsed().as_secs_f64());
    m.requests
        .get_or_create(&RequestLabels {
            route,
            method,
            status: resp.status().as_u16(),
        })
        .inc();
    resp
}

/// `GET /metrics`.
pub async fn endpoint(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    match &state.config.metrics_token {
        Some(token) => {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            let ok: bool = subtle::ConstantTimeEq::ct_eq(given.as_bytes(), token.expose_secret().as_bytes()).into();
            if !ok {
                return json_error(
                    StatusCode::UNAUTHORIZED,
                    "unauthenticated",
                    "metrics need the bearer token",
                )
                .into_response();
            }
        }
        None if !peer.ip().is_loopback() => {
            return json_error(
                StatusCode::FORBIDDEN,
                "forbidden",
                "metrics are served to this machine only unless metrics_token is set",
            )
            .into_response();
        }
        None => {}
    }
    let m = get();
    let pending: Result<(i64, Option<i64>), sqlx::Error> =
        sqlx::query_as("SELECT count(*), min(created_at_ms) FROM tool_calls WHERE status = 'pending'")
            .fetch_one(&state.db)
            .await;
    if let Ok((n, oldest)) = pending {
        m.queue_depth.set(n);
        let age = oldest.map_or(0.0, |t| (crate::store::now_ms() - t).max(0) as f64 / 1000.0);
        m.oldest_pending_seconds.set(age);
    }
    m.subscribers.set(state.hub.subscribers() as i64);
    m.policy.clear();
    let policy = state.policy.get();
    m.policy
        .get_or_create(&PolicyLabels {
            name: policy.name.clone(),
            version: policy.version.to_string(),
        })
        .set(1);
    let mut out = String::new();
    if prometheus_client::encoding::text::encode(&mut out, &m.registry).is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        out,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric the example Grafana dashboard queries is one this server exports.
    #[test]
    fn the_example_dashboard_queries_only_exported_metrics() {
        let m = Metrics::new();
        // Families print nothing until they hold a series: give each one.
        m.requests
            .get_or_create(&RequestLabels {
                route: "/x".into(),
                method: "GET".into(),
                status: 200,
            })
            .inc();
        m.request_seconds
            .get_or_create(&RouteLabels { route: "/x".into() })
            .observe(0.1);
        m.decided("allowed", None, "policy");
        Metrics::outcome(&m.callbacks, "delivered");
        Metrics::outcome(&m.notifications, "delivered");
        m.policy
            .get_or_create(&PolicyLabels {
                name: "p".into(),
                version: "v".into(),
            })
            .set(1);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &m.registry).unwrap();
        let exported: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split(' ').next())
            .collect();
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../docs/grafana-dashboard.json")).expect("valid JSON");
        let mut queried = 0;
        for panel in dashboard["panels"].as_array().unwrap() {
            for target in panel["targets"].as_array().unwrap() {
                let expr = target["expr"].as_str().unwrap();
                for word in expr
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| w.starts_with("airlock_"))
                {
                    let base = ["_total", "_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|s| word.strip_suffix(s))
                        .unwrap_or(word);
                    assert!(
                        exported.contains(&base),
                        "{word} in {:?} is not exported ({exported:?})",
                        panel["title"]
                    );
                    queried += 1;
                }
            }
        }
        assert!(queried >= 10);
    }
}
