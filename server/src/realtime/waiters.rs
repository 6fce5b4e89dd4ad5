//! Long-poll wake-ups: a handler waiting for a call's decision registers here before it
//! reads the call, and the ledger wakes it after the decision is committed. No polling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

#[derive(Default)]
pub struct Waiters {
    map: Mutex<HashMap<String, Arc<Notify>>>,
}

/// A registration; dropping it forgets the entry when no one else waits.
pub struct Waiting<'a> {
    waiters: &'a Waiters,
    id: String,
    pub notify: Arc<Notify>,
}

impl Waiters {
    pub fn register(&self, id: &str) -> Waiting<'_> {
        let notify = self
            .lock()
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(Notify::new()))
            .clone();
        Waiting {
            waiters: self,
            id: id.to_string(),
            notify,
        }
    }

    /// Wake everyone waiting for `id`.
    pub fn wake(&self, id: &str) {
        if let Some(n) = self.lock().remove(id) {
            n.notify_waiters();
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut map = self.waiters.lock();
        // Two strong references: the map's and ours. Anyone else still waits.
        if map
            .get(&self.id)
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify) && Arc::strong_count(n) == 2)
        {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_registered_waiter_is_woken_even_if_the_wake_comes_first() {
        let w = Waiters::default();
        let reg = w.register("tc_1");
        let notified = reg.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        w.wake("tc_1");
        tokio::time::timeout(std::time::Duration::from_secs(1), notified)
            .await
            .expect("woken");
    }

    #[test]
    fn entries_are_forgotten_when_the_last_waiter_leaves() {
        let w = Waiters::default();
        let a = w.register("x");
        let b = w.register("x");
        drop(a);
        assert_eq!(w.len(), 1);
        drop(b);
        assert!(w.is_empty());
    }
}
