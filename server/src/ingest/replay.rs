//! Replay protection for signed requests other than proposals (reads, cancels,
//! results). Proposals are idempotent per (agent, webhook-id) in the database; these
//! requests are not stored, so their webhook-ids are remembered here for twice the
//! timestamp tolerance: a captured request cannot be sent again while its timestamp
//! is still accepted. Memory is bounded per agent (`MAX_PER_AGENT`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Beyond this many remembered ids of one agent, its new requests are refused rather than
/// forgotten (reads are not rate-limited; one agent must not crowd out the others).
const MAX_PER_AGENT: usize = 200_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// First use of this id.
    New,
    /// The same id with the same signed payload: a replay.
    Replay,
    /// The same id with a different payload: a forgery attempt or a broken client.
    Mismatch,
    /// This agent sent too many requests in the window to remember another.
    Full,
}

pub struct SeenMessages {
    inner: Mutex<Inner>,
    max_per_agent: usize,
}

impl Default for SeenMessages {
    fn default() -> Self {
        SeenMessages::with_limit(MAX_PER_AGENT)
    }
}

#[derive(Default)]
struct Inner {
    ids: HashMap<(String, String), [u8; 32]>,
    per_agent: HashMap<String, usize>,
    /// Arrival order, for forgetting ids once their timestamps can no longer be accepted.
    order: VecDeque<(i64, String, String)>,
}

impl SeenMessages {
    pub fn with_limit(max_per_agent: usize) -> SeenMessages {
        SeenMessages {
            inner: Mutex::default(),
            max_per_agent,
        }
    }

    /// Remember `(agent, id)` with the hash of what it signed, at `now_ms`.
    pub fn check(&self, agent: &str, id: &str, payload_sha256: [u8; 32], now_ms: i64, window_ms: i64) -> Seen {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let inner = &mut *g;
        while let Some((at, _, _)) = inner.order.front() {
            if *at > now_ms - window_ms {
                break;
            }
            let (_, a, m) = inner.order.pop_front().expect("front exists");
            if let Some(n) = inner.per_agent.get_mut(&a) {
                *n -= 1;
                if *n == 0 {
                    inner.per_agent.remove(&a);
                }
            }
            inner.ids.remove(&(a, m));
        }
        let key = (agent.to_string(), id.to_string());
        match inner.ids.get(&key) {
            Some(h) if *h == payload_sha256 => Seen::Replay,
            Some(_) => Seen::Mismatch,
            None if inner.per_agent.get(agent).copied().unwrap_or(0) >= self.max_per_agent => Seen::Full,
            None => {
                *inner.per_agent.entry(agent.to_string()).or_default() += 1;
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

    #[test]
    fn one_agent_filling_its_memory_does_not_crowd_out_another() {
        let s = SeenMessages::with_limit(2);
        assert_eq!(s.check("a", "1", [0; 32], 0, 1000), Seen::New);
        assert_eq!(s.check("a", "2", [0; 32], 0, 1000), Seen::New);
        assert_eq!(s.check("a", "3", [0; 32], 0, 1000), Seen::Full);
        assert_eq!(s.check("b", "1", [0; 32], 0, 1000), Seen::New);
        // Forgotten after the window, so the agent can go on.
        assert_eq!(s.check("a", "3", [0; 32], 2000, 1000), Seen::New);
    }
}
