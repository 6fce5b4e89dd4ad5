//! Build the whole application from a [`Config`]: database, migrations, policy, router.
//! Tests call [`Application::build`] with port 0 and a fresh SQLite file.

use crate::auth::{csrf, login, session, throttle::LoginThrottle, users as people, Password};
use crate::backend::ServerBackend;
use crate::config::Config;
use crate::realtime::{sse, Hub};
use crate::store::{self, Db};
use crate::web::{headers, health};
use app::api::{RequestAuth, SharedBackend};
use axum::extract::{FromRef, Request};
use axum::http::{HeaderName, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use policy::Policy;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tower_sessions::{cookie::SameSite, Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::SqliteStore;

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub hub: Arc<Hub>,
    pub throttle: Arc<LoginThrottle>,
    pub policy: Arc<Policy>,
    pub config: Arc<Config>,
    pub leptos: LeptosOptions,
    pub stopping: Arc<AtomicBool>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos.clone()
    }
}

pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    /// Set when this start created the first administrator: (username, password).
    pub first_admin: Option<(String, Password)>,
}

/// Read and compile the policy file; any error stops the start.
pub fn load_policy(path: &std::path::Path) -> Result<Policy, String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("policy file {}: {e}", path.display()))?;
    Policy::from_toml(&src).map_err(|e| format!("policy file {}:\n{e}", path.display()))
}

impl Application {
    pub async fn build(config: Config) -> Result<Application, String> {
        let policy = load_policy(&config.policy_file)?;
        let db = store::connect(&config.database_url).await?;
        store::migrate(&db).await?;
        let sessions = SqliteStore::new(db.clone());
        sessions
            .migrate()
            .await
            .map_err(|e| format!("session table migration failed: {e}"))?;
        let first_admin = people::ensure_first_admin(&db, &config.first_admin)
            .await
            .map_err(|e| format!("creating the first administrator failed: {e}"))?;

        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.bind))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let leptos = LeptosOptions::builder()
            .output_name("airlock")
            .site_root(config.site_root.to_string_lossy().to_string())
            .site_pkg_dir("pkg")
            .site_addr(addr)
            .env(if cfg!(debug_assertions) {
                leptos::config::Env::DEV
            } else {
                leptos::config::Env::PROD
            })
            .build();
        let hub = Arc::new(Hub::new(1024));
        let state = AppState {
            throttle: Arc::new(LoginThrottle::new(
                config.login_burst_per_account,
                config.login_burst_per_address,
            )),
            policy: Arc::new(policy),
            config: Arc::new(config),
            leptos,
            stopping: Arc::new(AtomicBool::new(false)),
            db,
            hub,
        };
        tracing::info!(
            policy = %state.policy.name,
            version = %state.policy.version,
            tools = state.policy.tool_names().len(),
            "policy loaded"
        );
        let router = router(state.clone(), sessions);
        Ok(Application {
            listener,
            router,
            state,
            first_admin,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("bound listener")
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serve until `shutdown` completes, then stop accepting, end live streams and let
    /// in-flight requests finish (bounded by `shutdown_grace_seconds`).
    pub async fn run_until_stopped(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), String> {
        let state = self.state.clone();
        let housekeeping = tokio::spawn(housekeeping(state.clone()));
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let signal = async move {
            shutdown.await;
            tracing::info!("shutting down: draining in-flight requests");
            st.stopping.store(true, Ordering::Relaxed);
            st.hub.close();
            let _ = stopped_tx.send(());
        };
        let serve = axum::serve(
            self.listener,
            self.router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(signal);
        let grace = Duration::from_secs(state.config.shutdown_grace_seconds);
        let serve = tokio::spawn(async move { serve.await });
        let result = tokio::select! {
            r = serve => r.map_err(|e| e.to_string())?.map_err(|e| e.to_string()),
            _ = async { let _ = stopped_rx.await; tokio::time::sleep(grace).await } => {
                tracing::warn!("grace period over; closing remaining connections");
                Ok(())
            }
        };
        housekeeping.abort();
        state.db.close().await;
        result
    }
}

/// Periodic clean-up: expired sessions, idle throttle keys.
async fn housekeeping(state: AppState) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        state.throttle.retain_recent();
        if let Err(e) = sqlx::query("DELETE FROM tower_sessions WHERE expiry_date < unixepoch('now')")
            .execute(&state.db)
            .await
        {
            tracing::warn!(error = %e, "deleting expired sessions failed");
        }
    }
}

/// Redirects for pages: `/` to the user's start page, pages to sign-in when signed out,
/// the sign-in page to the start page when signed in.
async fn page_redirects(req: Request, next: Next) -> Response {
    if req.method() == Method::GET {
        let path = req.uri().path();
        let user = req.extensions().get::<RequestAuth>().and_then(|a| a.user.clone());
        match (path, &user) {
            ("/", Some(u)) | ("/login", Some(u)) => return Redirect::to(app::routes::home_for(u.role)).into_response(),
            ("/", None) => return Redirect::to("/login").into_response(),
            (p, None) if app::routes::page(p).is_some() => {
                return Redirect::to(&format!("/login?next={p}")).into_response();
            }
            _ => {}
        }
    }
    next.run(req).await
}

pub fn router(state: AppState, sessions: SqliteStore) -> Router {
    let backend: SharedBackend = Arc::new(ServerBackend {
        db: state.db.clone(),
        hub: state.hub.clone(),
    });
    let context = move || provide_context(backend.clone());
    let routes = generate_route_list(app::App);
    let session_layer = SessionManagerLayer::new(sessions)
        .with_name("airlock_session")
        .with_secure(state.config.cookie_secure)
        .with_http_only(true)
        .with_same_site(SameSite::Strict)
        .with_expiry(Expiry::OnInactivity(time::Duration::minutes(
            state.config.session_idle_minutes,
        )));
    let request_id = HeaderName::from_static("x-request-id");
    let trace = TraceLayer::new_for_http().make_span_with(|req: &Request| {
        let route = req
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map_or_else(|| req.uri().path().to_string(), |m| m.as_str().to_string());
        let id = req
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        tracing::info_span!("http", method = %req.method(), route = %route, request_id = %id)
    });
    let hsts = state.config.cookie_secure;
    let opts = state.leptos.clone();
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/login", post(login::login))
        .route("/logout", post(login::logout))
        .route("/api/events", get(sse::events))
        .leptos_routes_with_context(&state, routes, context, {
            let opts = opts.clone();
            move || app::shell(opts.clone())
        })
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(app::shell))
        .layer(middleware::from_fn(page_redirects))
        .layer(middleware::from_fn_with_state(state.clone(), session::load_auth))
        .layer(session_layer)
        .layer(middleware::from_fn(csrf::same_origin))
        .layer(middleware::from_fn_with_state(hsts, headers::security_headers))
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(tower_http::limit::RequestBodyLimitLayer::new(1024 * 1024)),
        )
        .with_state(state)
}
