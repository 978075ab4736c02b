//! Whether every watch of this leadership term has completed its first list: the signal that
//! releases the work queues' held `Refresh` lane ([`crate::queue_state`]).
//!
//! Until then a start's backlog (the keys its lists found) could only wait inside its passes
//! for the stores it reads, holding the workers a new object needs. The gate latches: a watcher
//! restarted later in the term re-lists on its own, and its keys are not held again.

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
};

use tokio::sync::watch;

use crate::watch_state::{WatchReporter, WatchState};

/// A [`WatchReporter`] in front of the runtime's own: forwards every state and marks the watches
/// that have listed.
pub(crate) struct ListedGate {
    /// Where watch states go (health and the tree dump).
    inner: Arc<dyn WatchReporter>,
    /// The watches that have not listed yet.
    pending: Mutex<BTreeSet<String>>,
    /// True once `pending` is empty; never false again.
    listed: watch::Sender<bool>,
}

impl ListedGate {
    /// A gate waiting for the watches named `expected`, forwarding states to `inner`.
    pub(crate) fn new(expected: impl IntoIterator<Item = String>, inner: Arc<dyn WatchReporter>) -> Self {
        let pending: BTreeSet<String> = expected.into_iter().collect();
        let (listed, _) = watch::channel(pending.is_empty());
        Self {
            inner,
            pending: Mutex::new(pending),
            listed,
        }
    }

    /// Turns true once every expected watch has listed.
    pub(crate) fn subscribe(&self) -> watch::Receiver<bool> {
        self.listed.subscribe()
    }
}

impl WatchReporter for ListedGate {
    fn report(&self, state: WatchState) {
        if state.synced {
            let mut pending = self.pending.lock().expect("listed gate poisoned");
            if pending.remove(&state.name) && pending.is_empty() {
                self.listed.send_replace(true);
            }
        }
        self.inner.report(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nowhere;
    impl WatchReporter for Nowhere {
        fn report(&self, _: WatchState) {}
    }

    fn listed(name: &str) -> WatchState {
        WatchState {
            synced: true,
            ..WatchState::starting(name)
        }
    }

    #[test]
    fn gate_should_open_only_once_every_watch_has_listed_and_stay_open() {
        let gate = ListedGate::new(["a".to_owned(), "b".to_owned()], Arc::new(Nowhere));
        let open = gate.subscribe();
        gate.report(listed("a"));
        gate.report(WatchState::starting("b"));
        gate.report(listed("unexpected"));
        assert!(!*open.borrow(), "b has not listed");
        gate.report(listed("b"));
        assert!(*open.borrow());
        gate.report(WatchState::starting("a"));
        assert!(*open.borrow(), "a restarted watcher does not close it");
    }

    #[test]
    fn gate_without_watches_should_start_open() {
        let gate = ListedGate::new(Vec::new(), Arc::new(Nowhere));
        assert!(*gate.subscribe().borrow());
    }
}
