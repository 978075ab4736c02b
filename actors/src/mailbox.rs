//! Mailbox depth for ractor actors, whose mailboxes report none.
//!
//! Every message to an actor goes through a [`CountedRef`], which counts it as enqueued; the
//! actor counts it as handled when its `handle` finishes. Depth = enqueued − handled, per
//! incarnation: a restarted actor gets fresh [`MailboxStats`] (its old mailbox was dropped).
//! The stats of live actors are kept in a process-wide index by `ActorId`, so the tree dump can
//! read them while walking `ActorCell`s, without messaging any actor.

use std::{
    collections::HashMap,
    sync::{
        Arc, LazyLock, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use ractor::{ActorId, ActorRef, Message, MessagingErr};
use tokio::task::JoinHandle;

/// Message counters of one actor incarnation.
#[derive(Debug, Default)]
pub struct MailboxStats {
    enqueued: AtomicU64,
    handled: AtomicU64,
}

impl MailboxStats {
    /// Messages waiting or being handled.
    pub fn depth(&self) -> u64 {
        // Read handled first: a concurrent enqueue+handle can only make depth look larger, never negative.
        let handled = self.handled.load(Ordering::Acquire);
        self.enqueued.load(Ordering::Acquire).saturating_sub(handled)
    }

    /// Messages this incarnation has finished handling.
    pub fn handled(&self) -> u64 {
        self.handled.load(Ordering::Acquire)
    }

    /// Count one message as enqueued (done by [`CountedRef`]; call it directly only for messages
    /// sent by other means, such as `send_after`).
    pub fn record_enqueued(&self) {
        self.enqueued.fetch_add(1, Ordering::AcqRel);
    }

    /// Count one message as handled; the actor calls this at the end of `handle`.
    pub fn record_handled(&self) {
        self.handled.fetch_add(1, Ordering::AcqRel);
    }
}

/// An `ActorRef` that counts what it sends.
#[derive(Debug)]
pub struct CountedRef<M: Message> {
    actor: ActorRef<M>,
    stats: Arc<MailboxStats>,
}

impl<M: Message> Clone for CountedRef<M> {
    fn clone(&self) -> Self {
        Self {
            actor: self.actor.clone(),
            stats: self.stats.clone(),
        }
    }
}

impl<M: Message> CountedRef<M> {
    /// Wrap `actor`, whose `handle` records into `stats`.
    pub fn new(actor: ActorRef<M>, stats: Arc<MailboxStats>) -> Self {
        Self { actor, stats }
    }

    /// Send `msg`, counting it as enqueued only if the mailbox accepted it.
    pub fn cast(&self, msg: M) -> Result<(), MessagingErr<M>> {
        self.stats.record_enqueued();
        let sent = self.actor.cast(msg);
        if sent.is_err() {
            // Not enqueued after all: undo by counting it as handled, keeping depth exact.
            self.stats.record_handled();
        }
        sent
    }

    /// Send `msg()` after `delay` (see [`send_counted_after`]).
    pub fn send_after(
        &self,
        delay: Duration,
        msg: impl FnOnce() -> M + Send + 'static,
    ) -> JoinHandle<Result<(), MessagingErr<M>>> {
        send_counted_after(&self.actor, self.stats.clone(), delay, msg)
    }

    /// The wrapped actor (for `call`, supervision, `get_cell`).
    pub fn actor(&self) -> &ActorRef<M> {
        &self.actor
    }

    /// The counters shared with the actor.
    pub fn stats(&self) -> &Arc<MailboxStats> {
        &self.stats
    }
}

/// Send `msg()` to `actor` after `delay`, counting it as enqueued when the timer fires, so a
/// message still waiting on its timer is not in the depth. For an actor sending to itself from
/// `handle` (it holds its own stats, not a [`CountedRef`]). Aborting the handle cancels it.
pub fn send_counted_after<M: Message>(
    actor: &ActorRef<M>,
    stats: Arc<MailboxStats>,
    delay: Duration,
    msg: impl FnOnce() -> M + Send + 'static,
) -> JoinHandle<Result<(), MessagingErr<M>>> {
    actor.send_after(delay, move || {
        stats.record_enqueued();
        msg()
    })
}

static INDEX: LazyLock<Mutex<HashMap<ActorId, Arc<MailboxStats>>>> = LazyLock::new(Default::default);

/// Record `stats` as the counters of the live actor `id` (call from `pre_start`).
pub fn register(id: ActorId, stats: Arc<MailboxStats>) {
    INDEX.lock().expect("mailbox index poisoned").insert(id, stats);
}

/// Forget actor `id` (call from `post_stop`; ids are never reused, so a stale entry is harmless).
pub fn unregister(id: ActorId) {
    INDEX.lock().expect("mailbox index poisoned").remove(&id);
}

/// The counters of live actor `id`, if it registered any.
pub fn lookup(id: ActorId) -> Option<Arc<MailboxStats>> {
    INDEX.lock().expect("mailbox index poisoned").get(&id).cloned()
}
