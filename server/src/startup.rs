//! Build the whole application from a [`Config`]: database, migrations, policy, router.
//! Tests call [`Application::build`] with port 0 and a fresh SQLite file.

use crate::agents::ServerKey;
use crate::auth::throttle::{Limiter, LoginThrottle};
use crate::auth::{csrf, login, session, users as people, Password};
use crate::backend::ServerBackend;
use crate::callbacks::Dispatcher;
use crate::config::Config;
use crate::ingest;
use crate::ledger;
use crate::realtime::waiters::Waiters;
use crate::realtime::{sse, Hub};
use crate::state::{AppState, StateParts};
use crate::store;
use crate::web::{headers, health};
use app::api::{RequestAuth, Services};
use axum::extract::Request;
use axum::http::{HeaderName, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use policy::guards::url::UrlGuard;
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

pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    /// Set when this start created the first administrator: (username, password).
    pub first_admin: Option<(String, Password)>,
    /// On PostgreSQL: replays what other instances commit, from this position.
    follower: Option<(crate::realtime::cluster::Follower, i64)>,
}

/// Read and compile the policy file (and answer its text); any error stops the start.
pub fn load_policy(path: &std::path::Path) -> Result<(Policy, String), String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("policy file {}: {e}", path.display()))?;
    let policy = Policy::from_toml(&src).map_err(|e| format!("policy file {}:\n{e}", path.display()))?;
    Ok((policy, src))
}

impl Application {
    pub async fn build(config: Config) -> Result<Application, String> {
        let (policy, source) = load_policy(&config.policy_file)?;
        let db = store::connect(&config.database_url).await?;
        store::migrate(&db).await?;
        let change = crate::policies::record_start(&db, &policy, &source, &config.policy_file)
            .await
            .map_err(|e| format!("recording the policy in force: {e}"))?;
        let sessions = store::sessions::Sessions::new(db.clone());
        let first_admin = people::ensure_first_admin(&db, &config.first_admin)
            .await
            .map_err(|e| format!("creating the first administrator failed: {e}"))?;

        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.bind))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // scripts/build.sh names assets by content hash and lists the hashes in
        // pkg/hash.txt; leptos reads that file (absolute path) when rendering the
        // document head. Without it (`cargo leptos watch`) the plain names are used.
        let site_root = std::path::absolute(&config.site_root).unwrap_or_else(|_| config.site_root.clone());
        crate::web::assets::check_site(&site_root)?;
        let hash_file = site_root.join("pkg").join("hash.txt");
        let leptos = LeptosOptions::builder()
            .output_name("airlock")
            .site_root(site_root.to_string_lossy().to_string())
            .site_pkg_dir("pkg")
            .hash_files(hash_file.is_file())
            .hash_file(std::sync::Arc::from(hash_file.to_string_lossy().as_ref()))
            .site_addr(addr)
            .env(if cfg!(debug_assertions) {
                leptos::config::Env::DEV
            } else {
                leptos::config::Env::PROD
            })
            .build();
        let hub = Arc::new(Hub::new(1024));
        let key = ServerKey::load_or_create(&config.key_file)?;
        let policy = Arc::new(policy);
        let in_force = crate::policies::InForce::new(policy.clone(), change);
        let waiters = Arc::new(Waiters::default());
        let callbacks_wake = Arc::new(tokio::sync::Notify::new());
        let board = Arc::new(std::sync::RwLock::new(Vec::new()));
        // Several instances may share a PostgreSQL database: each has a name of its own.
        let cluster = (store::Backend::of(&db) == store::Backend::Postgres).then(|| uuid::Uuid::new_v4().to_string());
        let several = cluster.is_some();
        let policy_wake = Arc::new(tokio::sync::Notify::new());
        let follower = match &cluster {
            Some(instance) => {
                let from = crate::realtime::cluster::Follower::start_at(&db)
                    .await
                    .map_err(|e| format!("reading live batches: {e}"))?;
                Some((
                    crate::realtime::cluster::Follower {
                        db: db.clone(),
                        url: config.database_url.clone(),
                        instance: instance.clone(),
                        hub: hub.clone(),
                        waiters: waiters.clone(),
                        callbacks: callbacks_wake.clone(),
                        board: board.clone(),
                        policy: policy_wake.clone(),
                    },
                    from,
                ))
            }
            None => None,
        };
        let (ledger, _task) = ledger::start(
            db.clone(),
            policy.clone(),
            ledger::Shared {
                hub: hub.clone(),
                waiters: waiters.clone(),
                callbacks: callbacks_wake.clone(),
                board: board.clone(),
                policy: in_force.clone(),
                cluster: cluster.clone(),
            },
            ledger::Settings {
                sealer: crate::store::sealed::Sealer::from_server_key(&key),
                max_pending_per_agent: config.max_pending_per_agent,
                principals: config
                    .principals
                    .iter()
                    .map(|(p, u)| (p.trim().to_lowercase(), u.trim().to_lowercase()))
                    .collect(),
                // Instances on one database count an agent's proposals together.
                agent_rate: several
                    .then(|| ledger::agent_rate::AgentRate::new(config.agent_rate_per_second, config.agent_rate_burst))
                    .flatten(),
            },
        )
        .await?;
        let search_path = crate::audit::index::path_for(&config)?;
        let search = crate::audit::index::SearchIndex::open(&search_path, db.clone()).await?;
        let signer = crate::audit::checkpoint::Signer::from_server_key(&key);
        let fingerprints = crate::audit::fingerprint::Fingerprinter::from_server_key(&key);
        let sealer = crate::store::sealed::Sealer::from_server_key(&key);
        let throttle_shared = several.then(|| crate::auth::throttle::Shared::new(db.clone(), &key));
        config.notify.check()?;
        let links = crate::notify::links::Linker::new(&key, &config.notify.public_url);
        let notifier = crate::notify::Notifier::new(
            config.notify.clone(),
            ledger.clone(),
            Arc::new(callback_guard(true)?),
            links.clone(),
        );
        let stored = crate::notify::channels::load(&db, &crate::notify::channels::ChannelSealer::from_server_key(&key))
            .await
            .map_err(|e| format!("reading notification channels: {e}"))?;
        notifier.set_stored(stored);
        let state = AppState(Arc::new(StateParts {
            notifier,
            links,
            board,
            fingerprints,
            sealer,
            signer,
            search,
            chain_check: Arc::default(),
            ledger,
            waiters,
            key,
            credentials: Arc::new(crate::agents::CredentialCache::new(Duration::from_secs(1))),
            auth_failures: Arc::new(governor::RateLimiter::keyed(
                governor::Quota::per_second(std::num::NonZeroU32::MIN)
                    .allow_burst(std::num::NonZeroU32::new(30).expect("non-zero")),
            )),
            agent_rate: std::num::NonZeroU32::new(config.agent_rate_per_second).map(|rate| {
                let burst = std::num::NonZeroU32::new(config.agent_rate_burst).unwrap_or(rate);
                Arc::new(governor::RateLimiter::keyed(
                    governor::Quota::per_second(rate).allow_burst(burst),
                ))
            }),
            seen: Arc::default(),
            path_cache: Default::default(),
            callback_guard: Arc::new(callback_guard(false)?),
            callbacks_wake,
            policy_wake,
            instance: cluster,
            throttle: Arc::new(LoginThrottle::new(
                config.login_burst_per_account,
                config.login_burst_per_address,
                throttle_shared,
            )),
            policy: in_force,
            config: Arc::new(config),
            leptos,
            stopping: Arc::new(AtomicBool::new(false)),
            db,
            hub,
        }));
        tracing::info!(
            policy = %policy.name,
            version = %policy.version,
            tools = policy.tool_names().len(),
            "policy loaded"
        );
        let router = router(state.clone(), sessions);
        Ok(Application {
            listener,
            router,
            state,
            first_admin,
            follower,
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
        let follower = self.follower.map(|(f, from)| tokio::spawn(f.run(from)));
        let indexer = tokio::spawn(state.search.clone().run());
        let checkpoints = tokio::spawn(crate::audit::checkpoint::run(state.db.clone(), state.signer.clone()));
        let expiry = tokio::spawn(crate::expiry::run(state.ledger.clone()));
        let notifier = tokio::spawn(state.notifier.clone().run(state.hub.clone()));
        let escalation = tokio::spawn(crate::oncall::escalation::run(
            state.db.clone(),
            state.ledger.clone(),
            state.config.escalation.clone(),
        ));
        let retention = tokio::spawn(crate::retention::run(
            state.ledger.clone(),
            state.config.raw_arguments_days,
        ));
        let callbacks = tokio::spawn(
            Dispatcher {
                db: state.db.clone(),
                key: state.key.clone(),
                sealer: state.sealer.clone(),
                ledger: state.ledger.clone(),
                wake: state.callbacks_wake.clone(),
                guard: Arc::new(callback_guard(true)?),
                allow_private: state.config.callback_allow_private,
                max_attempts: state.config.callback_max_attempts.max(1),
                backoff_ms: state.config.callback_backoff_ms.max(1),
                shared_database: store::Backend::of(&state.db) == store::Backend::Postgres,
            }
            .run(),
        );
        let policy_watch = tokio::spawn(crate::policies::watch(
            state.db.clone(),
            state.ledger.clone(),
            state.policy.clone(),
            state.policy_wake.clone(),
        ));
        let hangup = tokio::spawn(crate::policies::reload_on_hangup(
            state.ledger.clone(),
            state.config.policy_file.clone(),
        ));
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
        if let Some(f) = follower {
            f.abort();
        }
        policy_watch.abort();
        hangup.abort();
        expiry.abort();
        escalation.abort();
        notifier.abort();
        retention.abort();
        callbacks.abort();
        indexer.abort();
        checkpoints.abort();
        // Sign the chain as it is left, so the next start can tell nothing changed meanwhile.
        if let Err(e) = crate::audit::checkpoint::sign_head(&state.db, &state.signer).await {
            tracing::warn!(error = %e, "signing the audit checkpoint at shutdown");
        }
        state.search.close().await;
        state.ledger.close().await;
        crate::store::close(&state.db).await;
        result
    }
}

/// The URL guard for callback URLs: public http(s) addresses only.
pub(crate) fn callback_guard(resolve: bool) -> Result<UrlGuard, String> {
    UrlGuard::new(
        "callbacks",
        &policy::config::UrlGuardConfig {
            schemes: vec!["http".into(), "https".into()],
            deny_hosts: Vec::new(),
            allow_hosts: Vec::new(),
            ports: Vec::new(),
            resolve,
        },
    )
}

/// Periodic clean-up: expired sessions, idle throttle keys.
async fn housekeeping(state: AppState) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        state.throttle.retain_recent().await;
        state.auth_failures.retain_recent();
        if let Err(e) = store::sessions::delete_expired(&state.db).await {
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
                // The query comes along (a confirm link's token is in it).
                let next = req.uri().path_and_query().map_or(p, |pq| pq.as_str());
                // Slashes stay readable; what would end or split the `next` value is escaped.
                const SET: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
                    .add(b' ')
                    .add(b'#')
                    .add(b'%')
                    .add(b'&')
                    .add(b'+')
                    .add(b'=')
                    .add(b'?');
                let next = percent_encoding::utf8_percent_encode(next, SET).to_string();
                return Redirect::to(&format!("/login?next={next}")).into_response();
            }
            _ => {}
        }
    }
    next.run(req).await
}

pub fn router(state: AppState, sessions: store::sessions::Sessions) -> Router {
    // Several instances on one PostgreSQL database count guesses together.
    let shared = (store::Backend::of(&state.db) == store::Backend::Postgres)
        .then(|| crate::auth::throttle::Shared::new(state.db.clone(), &state.key));
    let backend = Arc::new(ServerBackend {
        db: state.db.clone(),
        hub: state.hub.clone(),
        ledger: state.ledger.clone(),
        policy: state.policy.clone(),
        search: state.search.clone(),
        instance: state.instance.clone(),
        chain_check: state.chain_check.clone(),
        reviewers_read_audit: state.config.reviewers_read_audit,
        signer: state.signer.clone(),
        fingerprints: state.fingerprints.clone(),
        sealer: state.sealer.clone(),
        lookups: Arc::new(Limiter::new("lookup", Duration::from_secs(6), 10).shared_in(shared.clone())),
        password_checks: Arc::new(Limiter::new("password", Duration::from_secs(60), 5).shared_in(shared)),
        board: state.board.clone(),
        links: state.links.clone(),
        notifier: state.notifier.clone(),
        channel_sealer: crate::notify::channels::ChannelSealer::from_server_key(&state.key),
        url_check: state.callback_guard.clone(),
        break_glass_max_minutes: state.config.break_glass_max_minutes.max(1),
        policy_file: state.config.policy_file.clone(),
        replays: Arc::new(tokio::sync::Semaphore::new(1)),
        key: state.key.clone(),
        credentials: state.credentials.clone(),
    });
    let services = Services {
        users: backend.clone(),
        agents: backend.clone(),
        review: backend.clone(),
        insight: backend.clone(),
        oncall: backend.clone(),
        notify: backend.clone(),
        policy: backend,
    };
    let context = move || provide_context(services.clone());
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
    // The agent API: signed requests, no cookies, its own body limit and error bodies.
    let api = ingest::router()
        .route(
            "/api/slack/interactions",
            post(crate::notify::slack::interactions).layer(tower_http::limit::RequestBodyLimitLayer::new(
                crate::notify::slack::MAX_BODY,
            )),
        )
        .route("/metrics", get(crate::metrics::endpoint))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz));
    let pages = Router::new()
        .route("/login", post(login::login))
        .route("/logout", post(login::logout))
        .route("/api/events", get(sse::events))
        .route("/api/audit/export", get(crate::audit::http::export))
        .route("/api/audit/checkpoint", get(crate::audit::http::checkpoint))
        .leptos_routes_with_context(&state, routes, context, {
            let opts = opts.clone();
            move || app::shell(opts.clone())
        })
        .nest_service("/pkg", crate::web::assets::service(&state.leptos.site_root))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(app::shell))
        .layer(middleware::from_fn(page_redirects))
        .layer(middleware::from_fn_with_state(state.clone(), session::load_auth))
        .layer(session_layer)
        .layer(middleware::from_fn(csrf::same_origin))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(1024 * 1024));
    pages
        .merge(api)
        .layer(middleware::from_fn_with_state(hsts, headers::security_headers))
        .layer(middleware::from_fn(crate::metrics::track))
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::new(request_id)),
        )
        .with_state(state)
}
