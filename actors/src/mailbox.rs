//! Mailbox depth for ractor actors, whose mailboxes report none.
//!
//! Every message to an actor goes through a [`CountedRef`], which counts it as enqueued; the
//! actor's wrapper ([`crate::spawn`]) counts it as handled when its `handle` finishes. Depth =
//! enqueued − handled, per incarnation: a restarted actor gets fresh [`MailboxStats`] (its old
//! mailbox was dropped). The stats of live actors are kept in their runtime's
//! [`Directory`](crate::directory::Directory), so the tree dump reads them while walking
//! `ActorCell`s, without messaging any actor.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use ractor::{ActorCell, ActorRef, Message, MessagingErr, RpcReplyPort, rpc::CallResult};
use tokio::task::JoinHandle;

/// Message counters of one actor incarnation.
#[derive(Debug, Default)]
pub(crate) struct MailboxStats {
    enqueued: AtomicU64,
    handled: AtomicU64,
}

impl MailboxStats {
    /// Messages waiting or being handled.
    pub(crate) fn depth(&self) -> u64 {
        // Read handled first: a concurrent enqueue+handle can only make depth look larger, never negative.
        let handled = self.handled.load(Ordering::Acquire);
        self.enqueued.load(Ordering::Acquire).saturating_sub(handled)
    }

    /// Messages this incarnation has finished handling.
    pub(crate) fn handled(&self) -> u64 {
        self.handled.load(Ordering::Acquire)
    }

    fn record_enqueued(&self) {
        self.enqueued.fetch_add(1, Ordering::AcqRel);
    }

    /// Count one message as handled (the spawn wrapper does, after each `handle`).
    pub(crate) fn record_handled(&self) {
        self.handled.fetch_add(1, Ordering::AcqRel);
    }
}

/// An `ActorRef` that counts what it sends: the only way messages reach a runtime actor.
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
    /// Wrap `actor`, whose wrapper records into `stats`.
    pub(crate) fn new(actor: ActorRef<M>, stats: Arc<MailboxStats>) -> Self {
        Self { actor, stats }
    }

    /// Send `msg`, counting it as enqueued only if the mailbox accepted it.
    ///
    /// # Errors
    /// The actor is gone or stopping (the message comes back in the error).
    pub fn cast(&self, msg: M) -> Result<(), MessagingErr<M>> {
        self.stats.record_enqueued();
        let sent = self.actor.cast(msg);
        if sent.is_err() {
            // Not enqueued after all: undo by counting it as handled, keeping depth exact.
            self.stats.record_handled();
        }
        sent
    }

    /// Send the request `msg(reply)` and wait up to `timeout` for the reply; counted like
    /// [`cast`](Self::cast). `None` when the actor is gone, dropped the reply or timed out.
    pub async fn call<T: Send + 'static>(
        &self,
        msg: impl FnOnce(RpcReplyPort<T>) -> M,
        timeout: Duration,
    ) -> Option<T> {
        self.stats.record_enqueued();
        match self.actor.call(msg, Some(timeout)).await {
            Ok(CallResult::Success(reply)) => Some(reply),
            Ok(CallResult::Timeout | CallResult::SenderError) => None,
            Err(_) => {
                // Never enqueued: undo, as in `cast`.
                self.stats.record_handled();
                None
            }
        }
    }

    /// Send `msg()` after `delay`, counting it as enqueued when the timer fires, so a message
    /// still waiting on its timer is not in the depth. Aborting the handle cancels it.
    pub fn send_after(
        &self,
        delay: Duration,
        msg: impl FnOnce() -> M + Send + 'static,
    ) -> JoinHandle<Result<(), MessagingErr<M>>> {
        let stats = self.stats.clone();
        self.actor.send_after(delay, move || {
            stats.record_enqueued();
            msg()
        })
    }

    /// The actor's cell (identity, status, stop, kill, children).
    pub fn cell(&self) -> ActorCell {
        self.actor.get_cell()
    }

    /// The counters shared with the actor.
    pub(crate) fn stats(&self) -> &Arc<MailboxStats> {
        &self.stats
    }
}
