//! The event hub: sequence-numbered events fanned out to every subscriber, with a
//! bounded backlog so a reconnecting browser can resume from its last sequence number.
//! When the backlog no longer reaches back that far, the subscriber is told to resync.

use app::api::LiveEvent;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// One event and its sequence number.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub event: LiveEvent,
    /// Committed by another instance (`realtime::cluster`): its own notifier told people.
    pub remote: bool,
}

struct Inner {
    next_seq: u64,
    backlog: VecDeque<Arc<Event>>,
}

pub struct Hub {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Event>>,
    capacity: usize,
    shutdown: watch::Sender<bool>,
}

/// What a new subscriber gets: missed events, then the live stream.
pub struct Subscription {
    /// Events after the requested sequence number, oldest first.
    pub backlog: Vec<Arc<Event>>,
    /// The requested position is older than the backlog: the client must reload state.
    pub gap: bool,
    pub live: broadcast::Receiver<Arc<Event>>,
    pub shutdown: watch::Receiver<bool>,
    /// The sequence number of the latest event at subscription time.
    pub head: u64,
}

impl Hub {
    pub fn new(capacity: usize) -> Hub {
        let (tx, _) = broadcast::channel(capacity.max(16));
        Hub {
            inner: Mutex::new(Inner {
                next_seq: 1,
                backlog: VecDeque::with_capacity(capacity),
            }),
            tx,
            capacity,
            shutdown: watch::channel(false).0,
        }
    }

    /// Publish an event; returns its sequence number.
    pub fn publish(&self, event: LiveEvent) -> u64 {
        self.send(event, false)
    }

    /// Publish what another instance committed (for its pages here; not notified again).
    pub fn publish_remote(&self, event: LiveEvent) -> u64 {
        self.send(event, true)
    }

    fn send(&self, event: LiveEvent, remote: bool) -> u64 {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let ev = Arc::new(Event {
            seq: g.next_seq,
            event,
            remote,
        });
        g.next_seq += 1;
        if g.backlog.len() == self.capacity {
            g.backlog.pop_front();
        }
        g.backlog.push_back(ev.clone());
        // Sent under the lock so subscribers see events in sequence order with no gap
        // between their backlog and their live stream.
        let _ = self.tx.send(ev.clone());
        ev.seq
    }

    /// Open subscriptions (live pages, the notifier).
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }

    /// The sequence number of the latest event (0 before the first).
    pub fn head(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).next_seq - 1
    }

    /// Becomes `true` when the server shuts down (long-polls and streams end).
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    /// Subscribe, resuming after `since` (0: only new events).
    pub fn subscribe(&self, since: Option<u64>) -> Subscription {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let live = self.tx.subscribe();
        let head = g.next_seq - 1;
        let (backlog, gap) = match since {
            None => (Vec::new(), false),
            Some(s) if s >= head => (Vec::new(), false),
            Some(s) => {
                let oldest = g.backlog.front().map_or(head + 1, |e| e.seq);
                (
                    g.backlog.iter().filter(|e| e.seq > s).cloned().collect(),
                    s + 1 < oldest,
                )
            }
        };
        Subscription {
            backlog,
            gap,
            live,
            shutdown: self.shutdown.subscribe(),
            head,
        }
    }

    /// End every open stream (graceful shutdown must not wait for them).
    pub fn close(&self) {
        // send_replace stores the value even when no one is subscribed yet.
        self.shutdown.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::api::{GrantChanged, UserChanged};

    fn ev(user: i64) -> LiveEvent {
        LiveEvent::UsersChanged(UserChanged { user })
    }

    #[tokio::test]
    async fn subscribers_get_events_in_order_with_sequence_numbers() {
        let hub = Hub::new(8);
        let mut s = hub.subscribe(None);
        assert_eq!(hub.publish(ev(1)), 1);
        let grant = LiveEvent::GrantsChanged(GrantChanged {
            id: "gr_1".into(),
            active: true,
        });
        assert_eq!(hub.publish(grant.clone()), 2);
        assert_eq!(s.live.recv().await.unwrap().seq, 1);
        assert_eq!(s.live.recv().await.unwrap().event, grant);
    }

    #[test]
    fn resuming_returns_missed_events_and_flags_a_gap_beyond_the_backlog() {
        let hub = Hub::new(3);
        for i in 0..5 {
            hub.publish(ev(i));
        }
        let s = hub.subscribe(Some(3));
        assert_eq!(s.backlog.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
        assert!(!s.gap);
        let s = hub.subscribe(Some(1));
        assert_eq!(s.backlog.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4, 5]);
        assert!(s.gap, "event 2 is gone");
        let s = hub.subscribe(Some(5));
        assert!(s.backlog.is_empty() && !s.gap);
        assert_eq!(s.head, 5);
    }
}
