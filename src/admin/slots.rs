//! The connection budget of one server: at most `max` connections at once, and when all are
//! taken a new one replaces the connection that has waited longest without a request in
//! progress (a slow-loris client, an idle keep-alive, a handshake that goes nowhere).
//!
//! # Guarantees
//! - At most `max` connections hold a [`Slot`] at once; a slot is released when dropped.
//! - A connection serving a request is never evicted: a new connection is refused instead
//!   when every slot is busy, so what a server answers is always answered whole.
//! - A connection admitted with its whole request head already received ([`Arrival::HeadWaiting`])
//!   is not evicted before that request starts: however many connections arrive after it, it is
//!   answered.
//! - Eviction is a signal ([`Slot::evicted`]); the connection's task closes it.
//!
//! Why evict rather than refuse: the kubelet's probe opens a connection and sends its request at
//! once, so under a flood of idle or slow connections it is the newest, busiest client there is.
//! Refusing newcomers would refuse the probe; evicting the longest idle lets it through. Why
//! protect a waiting head: in a burst of connections (a thousand slow-loris clients connecting at
//! once) the accept loop admits dozens before the connection tasks first run, so a probe accepted
//! mid-burst would otherwise lose its place to the burst before its head was read.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicUsize, Ordering},
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
    /// A whole request head had arrived when the connection was admitted, and that request has
    /// not started yet.
    head_waiting: AtomicBool,
    /// Cancelled when the connection is evicted.
    evicted: CancellationToken,
}

impl SlotState {
    /// Whether the connection may lose its slot to a newcomer: nothing in progress and nothing
    /// received that is about to be.
    fn evictable(&self) -> bool {
        self.in_progress.load(Ordering::Acquire) == 0 && !self.head_waiting.load(Ordering::Acquire)
    }
}

/// What a new connection had sent when it was accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// A whole request head (an honest client's request, sent with the connection).
    HeadWaiting,
    /// Nothing yet, part of a head, or bytes this server cannot read before the handshake (TLS).
    Other,
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
    /// without a request in progress or waiting (evicted); `None` when every connection is busy.
    pub(super) fn admit(self: &Arc<Self>, arrival: Arrival) -> Option<Slot> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let idle = open.iter().position(|slot| slot.evictable())?;
            if let Some(evicted) = open.remove(idle) {
                evicted.evicted.cancel();
            }
        }
        let state = Arc::new(SlotState {
            in_progress: AtomicUsize::new(0),
            head_waiting: AtomicBool::new(arrival == Arrival::HeadWaiting),
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
        // The head that waited at admission is this request (or an earlier one): its protection
        // passes to the request in progress.
        self.state.head_waiting.store(false, Ordering::Release);
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
        let first = slots.admit(Arrival::Other).expect("free");
        let second = slots.admit(Arrival::Other).expect("free");
        let third = slots
            .admit(Arrival::Other)
            .expect("the oldest idle one makes room");
        assert!(first.state.evicted.is_cancelled());
        assert!(!second.state.evicted.is_cancelled());
        assert_eq!(slots.len(), 2);
        drop((first, second, third));
        assert_eq!(slots.len(), 0, "every slot is released");
    }

    #[test]
    fn a_connection_in_a_request_should_never_be_evicted() {
        let slots = Slots::new(2);
        let first = slots.admit(Arrival::Other).expect("free");
        let second = slots.admit(Arrival::Other).expect("free");
        let _busy = first.busy();
        let third = slots.admit(Arrival::Other).expect("the idle one makes room");
        assert!(!first.state.evicted.is_cancelled());
        assert!(second.state.evicted.is_cancelled());
        let _also_busy = third.busy();
        assert!(
            slots.admit(Arrival::Other).is_none(),
            "every connection is in a request"
        );
    }

    #[test]
    fn a_connection_admitted_with_its_head_waiting_should_outlast_any_burst_until_served() {
        let slots = Slots::new(2);
        let probe = slots.admit(Arrival::HeadWaiting).expect("free");
        let burst: Vec<Slot> = (0..100).filter_map(|_| slots.admit(Arrival::Other)).collect();
        assert!(!probe.state.evicted.is_cancelled(), "its request has not run yet");
        assert_eq!(burst.len(), 100, "the burst evicts among itself");
        drop(probe.busy());
        let _next = slots
            .admit(Arrival::Other)
            .expect("the probe's connection is idle now");
        assert!(
            probe.state.evicted.is_cancelled(),
            "served, then idle: evictable again"
        );
    }

    #[test]
    fn a_waiting_head_should_take_the_place_of_an_idle_connection_but_not_of_another_waiting_head() {
        let slots = Slots::new(2);
        let idle = slots.admit(Arrival::Other).expect("free");
        let first = slots.admit(Arrival::HeadWaiting).expect("free");
        let second = slots
            .admit(Arrival::HeadWaiting)
            .expect("the idle one makes room");
        assert!(idle.state.evicted.is_cancelled());
        assert!(
            slots.admit(Arrival::HeadWaiting).is_none(),
            "both are about to be served"
        );
        assert!(!first.state.evicted.is_cancelled() && !second.state.evicted.is_cancelled());
    }

    #[test]
    fn a_finished_request_should_make_its_connection_evictable_again() {
        let slots = Slots::new(1);
        let only = slots.admit(Arrival::Other).expect("free");
        drop(only.busy());
        let _next = slots.admit(Arrival::Other).expect("idle again");
        assert!(only.state.evicted.is_cancelled());
    }
}
