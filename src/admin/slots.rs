//! The connection budget of one server: at most `max` connections at once, and when all are
//! taken a new one replaces the connection that has waited longest without a request in
//! progress (a slow-loris client, an idle keep-alive, a handshake that goes nowhere).
//!
//! # Guarantees
//! - At most `max` connections hold a [`Slot`] at once; a slot is released when dropped.
//! - A connection serving a request is never evicted: a new connection is refused instead
//!   when every slot is busy, so what a server answers is always answered whole.
//! - Eviction is a signal ([`Slot::evicted`]); the connection's task closes it.
//!
//! Why evict rather than refuse: the kubelet's probe opens a connection and sends its request at
//! once, so under a flood of idle or slow connections it is the newest, busiest client there is.
//! Refusing newcomers would refuse the probe; evicting the longest idle lets it through.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
    },
};

use tokio_util::sync::CancellationToken;

/// The slots of one server.
#[derive(Debug)]
pub(super) struct Slots {
    max: usize,
    /// Open connections, oldest first.
    open: Mutex<VecDeque<Arc<SlotState>>>,
}

#[derive(Debug)]
struct SlotState {
    /// Requests in progress on the connection.
    in_progress: AtomicUsize,
    /// Cancelled when the connection is evicted.
    evicted: CancellationToken,
}

/// One admitted connection's place; dropping it frees the place.
#[derive(Debug)]
pub(super) struct Slot {
    slots: Arc<Slots>,
    state: Arc<SlotState>,
}

/// Marks a request in progress on its connection while alive.
#[derive(Debug)]
pub(super) struct Busy(Arc<SlotState>);

impl Slots {
    /// A budget of `max` connections (at least one).
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            open: Mutex::default(),
        })
    }

    /// A slot for a new connection: a free one, else the one of the longest-waiting connection
    /// without a request in progress (evicted); `None` when every connection is busy.
    pub(super) fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let idle = open
                .iter()
                .position(|slot| slot.in_progress.load(Ordering::Acquire) == 0)?;
            if let Some(evicted) = open.remove(idle) {
                evicted.evicted.cancel();
            }
        }
        let state = Arc::new(SlotState {
            in_progress: AtomicUsize::new(0),
            evicted: CancellationToken::new(),
        });
        open.push_back(state.clone());
        Some(Slot {
            slots: self.clone(),
            state,
        })
    }

    /// Connections holding a slot.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<SlotState>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Slot {
    /// Resolves when the connection lost its slot to a newer one.
    pub(super) fn evicted(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.state.evicted.cancelled()
    }

    /// Marks a request in progress until the returned guard is dropped.
    pub(super) fn busy(&self) -> Busy {
        self.state.in_progress.fetch_add(1, Ordering::AcqRel);
        Busy(self.state.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().retain(|slot| !Arc::ptr_eq(slot, &self.state));
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_progress.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_budget_should_evict_the_oldest_idle_connection() {
        let slots = Slots::new(2);
        let first = slots.admit().expect("free");
        let second = slots.admit().expect("free");
        let third = slots.admit().expect("the oldest idle one makes room");
        assert!(first.state.evicted.is_cancelled());
        assert!(!second.state.evicted.is_cancelled());
        assert_eq!(slots.len(), 2);
        drop((first, second, third));
        assert_eq!(slots.len(), 0, "every slot is released");
    }

    #[test]
    fn a_connection_in_a_request_should_never_be_evicted() {
        let slots = Slots::new(2);
        let first = slots.admit().expect("free");
        let second = slots.admit().expect("free");
        let _busy = first.busy();
        let third = slots.admit().expect("the idle one makes room");
        assert!(!first.state.evicted.is_cancelled());
        assert!(second.state.evicted.is_cancelled());
        let _also_busy = third.busy();
        assert!(slots.admit().is_none(), "every connection is in a request");
    }

    #[test]
    fn a_finished_request_should_make_its_connection_evictable_again() {
        let slots = Slots::new(1);
        let only = slots.admit().expect("free");
        drop(only.busy());
        let _next = slots.admit().expect("idle again");
        assert!(only.state.evicted.is_cancelled());
    }
}
