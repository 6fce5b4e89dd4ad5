//! `GET /api/events`: the hub as Server-Sent Events, for signed-in people only.
//! Resume with the standard `Last-Event-ID` header (EventSource sends it on reconnect)
//! or `?since=N`. A `resync` event tells the client its position is too old.

use super::hub::Event;
use crate::error::json_error;
use crate::state::AppState;
use app::api::{LiveEvent, Position, RequestAuth, ResyncReason};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::wrappers::{errors::BroadcastStreamRecvError, BroadcastStream, WatchStream};

#[derive(Deserialize)]
pub struct Since {
    since: Option<u64>,
}

fn sse_event(seq: u64, e: &LiveEvent) -> SseEvent {
    SseEvent::default().id(seq.to_string()).event(e.kind()).data(e.data())
}

fn resync(head: u64) -> SseEvent {
    let reason = "missed events; reload the current state".to_string();
    sse_event(head, &LiveEvent::Resync(ResyncReason { reason }))
}

/// How often an open stream re-checks that its sign-in still stands.
const RECHECK: Duration = Duration::from_secs(2);

/// Does this stream's sign-in still stand: the session exists (not signed out) and the
/// user is enabled with the same epoch (role, password and status unchanged)? The CLI
/// changes users from another process, so this is read from the database.
async fn still_signed_in(state: &AppState, session_id: &str, user_id: i64, epoch: Option<i64>) -> bool {
    let session = crate::store::sessions::exists(&state.db, session_id).await;
    let user = crate::store::users::by_id(&state.db, user_id).await;
    match (session, user) {
        (Ok(true), Ok(Some(u))) => !u.view.disabled && Some(u.session_epoch) == epoch,
        (Ok(_), Ok(_)) => false,
        // The database did not answer: keep the stream; the next check decides.
        _ => true,
    }
}

pub async fn events(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    session: tower_sessions::Session,
    headers: HeaderMap,
    Query(q): Query<Since>,
) -> Response {
    let Some(user) = auth.user else {
        return json_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "sign in to receive live updates",
        )
        .into_response();
    };
    let since = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .or(q.since);
    let sub = state.hub.subscribe(since);
    tracing::debug!(user = %user.username, ?since, head = sub.head, "live stream opened");

    let head = sub.head;
    let hello = sse_event(head, &LiveEvent::Hello(Position { seq: head }));
    let first = if sub.gap { resync(head) } else { hello };
    let backlog: Vec<SseEvent> = sub.backlog.iter().map(|e| sse_event(e.seq, &e.event)).collect();
    let live = BroadcastStream::new(sub.live).map(move |r: Result<Arc<Event>, BroadcastStreamRecvError>| match r {
        Ok(e) => sse_event(e.seq, &e.event),
        // This subscriber fell behind the channel: tell it to reload.
        Err(BroadcastStreamRecvError::Lagged(_)) => resync(head),
    });
    let mut shutdown = WatchStream::new(sub.shutdown);
    let closed = async move {
        while let Some(v) = shutdown.next().await {
            if v {
                break;
            }
        }
    };
    // Signing out, being disabled or a role change ends the stream within RECHECK.
    let epoch = session.get::<i64>(crate::auth::session::EPOCH).await.ok().flatten();
    let session_id = session.id().map(|i| i.to_string()).unwrap_or_default();
    let (checker, user_id) = (state.clone(), user.id);
    let signed_out = async move {
        loop {
            tokio::time::sleep(RECHECK).await;
            if !still_signed_in(&checker, &session_id, user_id, epoch).await {
                break;
            }
        }
    };
    let stop = async move {
        tokio::select! {
            _ = closed => {}
            _ = signed_out => {}
        }
    };
    let s: std::pin::Pin<Box<dyn Stream<Item = Result<SseEvent, Infallible>> + Send>> = Box::pin(
        stream::iter(std::iter::once(first).chain(backlog))
            .chain(live)
            .take_until(stop)
            .map(Ok),
    );
    Sse::new(s)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)).text("keep-alive"))
        .into_response()
}
