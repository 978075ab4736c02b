//! The one timer of a work queue: armed for the earliest of the next due key, the next
//! deadline + grace of a running key, and a retry of a worker that could not be replaced.

use tokio::time::Instant;

use super::{QueueActorState, QueueMsg};

impl QueueActorState {
    pub(super) fn arm_timer(&mut self, now: Instant) {
        let wake = self
            .queue
            .next_due()
            .into_iter()
            .chain(self.pool.next_wake(now))
            .min();
        if self.timer.as_ref().map(|(at, _)| *at) == wake {
            return;
        }
        if let Some((_, old)) = self.timer.take() {
            old.abort();
        }
        if let Some(at) = wake {
            let handle = self
                .myself
                .send_after(at.saturating_duration_since(now), || QueueMsg::Tick);
            self.timer = Some((at, handle));
        }
    }
}
