//! What the queue state shows (read-only): the figures health, metrics and the tree publish,
//! and the per-key listing of the admin path. The transitions live in the parent module.

use tokio::time::Instant;

use super::{KeyInfo, QueueCounters, QueueState, Wait};
use crate::key::ObjectKey;

impl QueueState {
    /// Keys waiting to be handed out (exact; excludes delayed and processing keys).
    pub fn depth(&self) -> usize {
        self.ready.len()
    }

    /// Keys being processed.
    pub fn processing(&self) -> usize {
        self.records.values().filter(|r| r.processing.is_some()).count()
    }

    /// Keys waiting for their due time.
    pub fn delayed(&self) -> usize {
        self.delayed.len()
    }

    /// When the oldest ready key started waiting.
    pub fn oldest_ready_since(&self) -> Option<Instant> {
        self.ready_since.first().map(|(since, _)| *since)
    }

    /// When the earliest delayed key is due (the one timer the actor arms).
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.first_key_value().map(|((due, _), _)| *due)
    }

    /// Counters since start.
    pub fn counters(&self) -> QueueCounters {
        self.counters
    }

    /// When this incarnation started.
    pub fn started_at(&self) -> Instant {
        self.started_at
    }

    /// When a run last finished.
    pub fn last_completed_at(&self) -> Option<Instant> {
        self.last_completed_at
    }

    /// Failures and throttles in a row for `key` (0 for unknown keys).
    pub fn attempts(&self, key: &ObjectKey) -> u32 {
        self.records.get(key).map_or(0, |r| r.failures + r.throttles)
    }

    /// Whether `key` is being processed.
    pub fn is_processing(&self, key: &ObjectKey) -> bool {
        self.records.get(key).is_some_and(|r| r.processing.is_some())
    }

    /// Every known key with its state, sorted by key.
    pub fn keys(&self, now: Instant) -> Vec<KeyInfo> {
        let mut out: Vec<KeyInfo> = self
            .records
            .iter()
            .map(|(key, rec)| {
                let (state, due_in_secs) = match (rec.processing, rec.dirty, rec.wait) {
                    (Some(_), Some(_), _) => ("processing+dirty", None),
                    (Some(_), None, _) => ("processing", None),
                    (None, _, Wait::Ready { .. }) => ("ready", None),
                    (None, _, Wait::Delayed { due, .. }) => ("delayed", Some(signed_secs(due, now))),
                    (None, _, Wait::Idle) => ("idle", None),
                };
                KeyInfo {
                    key: key.to_string(),
                    state,
                    attempts: rec.failures + rec.throttles,
                    due_in_secs,
                }
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }
}

fn signed_secs(due: Instant, now: Instant) -> f64 {
    if due >= now {
        (due - now).as_secs_f64()
    } else {
        -(now - due).as_secs_f64()
    }
}
