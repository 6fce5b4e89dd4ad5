//! Replay protection for signed requests other than proposals (reads, cancels,
//! results). Proposals are idempotent per (agent, webhook-id) in the database; these
//! requests are not stored, so their webhook-ids are remembered here for twice the
//! timestamp tolerance: a captured request cannot be sent again while its timestamp
//! is still accepted. Memory is bounded by the per-agent rate limit and `MAX_ENTRIES`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Beyond this many remembered ids, new requests are refused rather than forgotten.
const MAX_ENTRIES: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// First use of this id.
    New,
    /// The same id with the same signed payload: a replay.
    Replay,
    /// The same id with a different payload: a forgery attempt or a broken client.
    Mismatch,
    /// Too many ids in the window to remember another.
    Full,
}

#[derive(Default)]
pub struct SeenMessages {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    ids: HashMap<(String, String), [u8; 32]>,
    /// Arrival order, for forgetting ids once their timestamps can no longer be accepted.
    order: VecDeque<(i64, String, String)>,
}

impl SeenMessages {
    /// Remember `(agent, id)` with the hash of what it signed, at `now_ms`.
    pub fn check(&self, agent: &str, id: &str, payload_sha256: [u8; 32], now_ms: i64, window_ms: i64) -> Seen {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let inner = &mut *g;
        while let Some((at, _, _)) = inner.order.front() {
            if *at > now_ms - window_ms {
                break;
            }
            let (_, a, m) = inner.order.pop_front().expect("front exists");
            inner.ids.remove(&(a, m));
        }
        let key = (agent.to_string(), id.to_string());
        match inner.ids.get(&key) {
            Some(h) if *h == payload_sha256 => Seen::Replay,
            Some(_) => Seen::Mismatch,
            None if inner.ids.len() >= MAX_ENTRIES => Seen::Full,
            None => {
                inner.order.push_back((now_ms, key.0.clone(), key.1.clone()));
                inner.ids.insert(key, payload_sha256);
                Seen::New
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_remembered_for_the_window_and_a_changed_payload_is_told_apart() {
        let s = SeenMessages::default();
        assert_eq!(s.check("a", "m1", [1; 32], 1_000, 600_000), Seen::New);
        assert_eq!(s.check("a", "m1", [1; 32], 2_000, 600_000), Seen::Replay);
        assert_eq!(s.check("a", "m1", [2; 32], 3_000, 600_000), Seen::Mismatch);
        // Another agent's id space is its own.
        assert_eq!(s.check("b", "m1", [2; 32], 3_000, 600_000), Seen::New);
        // After the window the id is forgotten (the timestamp check refuses it by then).
        assert_eq!(s.check("a", "m1", [1; 32], 700_000, 600_000), Seen::New);
    }
}
