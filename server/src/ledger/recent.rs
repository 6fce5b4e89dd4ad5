//! Proposals' webhook-ids of the last minutes, kept by the ledger (their only writer) so
//! that a retry is recognised without an index on `(agent, webhook-id)`: such an index is
//! keyed by random ids, so every insert would dirty a random page of it.
//!
//! A retry must be signed within the timestamp tolerance (±5 min), so ids are kept for
//! at least `GENERATION` (10 min, twice the tolerance) and at most twice that: two
//! generations, the older dropped when a new one starts. Entries are small (a keyed
//! 64-bit fingerprint → the call id's 128 bits); a hit is confirmed against the
//! stored row, so a fingerprint collision can never answer with another call.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// How long one generation lasts.
pub const GENERATION_MS: i64 = 2 * crate::ingest::signature::TOLERANCE_SECS * 1000;

/// A call a webhook-id was used for: its id's 128 bits and how they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub call: u128,
    /// `tc_` and a ULID (26 characters); ids made before are `tc_` and 32 hex digits.
    pub ulid: bool,
}

impl Seen {
    /// `tc_` with a ULID or with 32 hex digits; anything else is not a call id.
    pub fn of(call_id: &str) -> Option<Seen> {
        let bits = call_id.strip_prefix("tc_")?;
        match bits.len() {
            26 => ulid::Ulid::from_string(bits)
                .ok()
                .map(|u| Seen { call: u.0, ulid: true }),
            32 => u128::from_str_radix(bits, 16)
                .ok()
                .map(|call| Seen { call, ulid: false }),
            _ => None,
        }
    }

    pub fn call_id(&self) -> String {
        if self.ulid {
            crate::store::calls::call_id(self.call)
        } else {
            format!("tc_{:032x}", self.call)
        }
    }
}

pub struct RecentMessages {
    keys: RandomState,
    current: HashMap<u64, Seen>,
    previous: HashMap<u64, Seen>,
    started_ms: i64,
}

impl RecentMessages {
    pub fn new(now_ms: i64) -> RecentMessages {
        RecentMessages {
            keys: RandomState::new(),
            current: HashMap::new(),
            previous: HashMap::new(),
            started_ms: now_ms,
        }
    }

    fn fingerprint(&self, agent: &str, message_id: &str) -> u64 {
        self.keys.hash_one((agent, message_id))
    }

    /// The call this agent's webhook-id was used for, if it was used recently.
    pub fn get(&self, agent: &str, message_id: &str) -> Option<Seen> {
        let k = self.fingerprint(agent, message_id);
        self.current.get(&k).or_else(|| self.previous.get(&k)).copied()
    }

    /// Remember a stored call (anything but a call id is ignored, see [`Seen::of`]).
    pub fn insert(&mut self, agent: &str, message_id: &str, call_id: &str, now_ms: i64) {
        self.rotate(now_ms);
        let Some(seen) = Seen::of(call_id) else {
            return;
        };
        let k = self.fingerprint(agent, message_id);
        self.current.insert(k, seen);
    }

    /// Start a new generation when the current one is old enough.
    pub fn rotate(&mut self, now_ms: i64) {
        if now_ms - self.started_ms >= GENERATION_MS {
            self.previous = std::mem::take(&mut self.current);
            self.started_ms = now_ms;
        }
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_remembered_for_one_to_two_generations_per_agent() {
        let mut r = RecentMessages::new(0);
        let id = "tc_0190f5d0c0a07c3e8b1a2b3c4d5e6f70";
        r.insert("a", "m1", id, 0);
        assert_eq!(r.get("a", "m1").map(|s| s.call_id()).as_deref(), Some(id));
        assert_eq!(r.get("b", "m1"), None, "another agent's id is its own");
        r.rotate(GENERATION_MS - 1);
        assert!(r.get("a", "m1").is_some());
        r.rotate(GENERATION_MS);
        assert!(r.get("a", "m1").is_some(), "still there one generation on");
        r.insert("a", "m2", id, GENERATION_MS + 1);
        r.rotate(2 * GENERATION_MS);
        assert_eq!(r.get("a", "m1"), None, "forgotten after two generations");
        assert!(r.get("a", "m2").is_some());
        r.insert("a", "m3", "not-a-call-id", 2 * GENERATION_MS);
        assert_eq!(r.get("a", "m3"), None);
        // Ids as they are made now (a ULID) come back exactly as they were written.
        let new = "tc_01KBJ2Q8ZV3S1Y0M5X7T4W9R6D";
        r.insert("a", "m4", new, 2 * GENERATION_MS);
        assert_eq!(r.get("a", "m4").map(|s| s.call_id()).as_deref(), Some(new));
        r.insert("a", "m5", "tc_01KBJ2Q8ZV3S1Y0M5X7T4W9R6", 2 * GENERATION_MS);
        assert_eq!(r.get("a", "m5"), None);
    }
}
