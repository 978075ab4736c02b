//! The one timer of a work queue: armed for the earliest of the next due key, the next
//! deadline + grace of a running key, and a retry of a worker that could not be replaced.

use std::time::Duration;

use tokio::time::Instant;

use super::{QueueActorState, QueueMsg};
use crate::mailbox;

impl QueueActorState {
    pub(super) fn next_wake(&self, now: Instant) -> Option<Instant> {
        let limit = self.config.reconcile_timeout + self.config.kill_grace;
        // Slots already known to be unreplaceable are re-checked by the 1s retry instead (their
        // deadline is in the past and would make the timer fire in a loop).
        let deadlines = self
            .slots
            .iter()
            .filter(|s| s.unreplaceable.is_none())
            .filter_map(|s| s.run.as_ref().map(|r| r.since + limit));
        let retry = self
            .slots
            .iter()
            .any(|s| s.unreplaceable.is_some() || s.worker.is_none())
            .then(|| now + Duration::from_secs(1));
        self.queue
            .next_due()
            .into_iter()
            .chain(deadlines)
            .chain(retry)
            .min()
    }

    pub(super) fn arm_timer(&mut self, now: Instant) {
        let wake = self.next_wake(now);
        if self.timer.as_ref().map(|(at, _)| *at) == wake {
            return;
        }
        if let Some((_, old)) = self.timer.take() {
            old.abort();
        }
        if let Some(at) = wake {
            let handle = mailbox::send_counted_after(
                self.myself.actor(),
                self.mailbox.clone(),
                at.saturating_duration_since(now),
                || QueueMsg::Tick,
            );
            self.timer = Some((at, handle));
        }
    }
}
