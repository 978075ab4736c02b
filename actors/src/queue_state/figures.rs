//! What the queue state shows (read-only): the figures health, metrics and the tree publish,
//! and the per-key listing of the admin path. The transitions live in the parent module.

use tokio::time::Instant;

use super::{KeyInfo, KeyState, NamespaceShare, QueueCounters, QueueState};
use crate::key::ObjectKey;

impl QueueState {
    /// Keys waiting to be handed out (exact; excludes delayed and processing keys).
    pub(crate) fn depth(&self) -> usize {
        self.ready_since.len()
    }

    /// Keys being processed (including runs whose worker was replaced).
    pub(crate) fn processing(&self) -> usize {
        self.processing
    }

    /// Most workers one namespace may hold.
    pub(crate) fn share(&self) -> usize {
        self.ready.share()
    }

    /// Namespaces with a ready key.
    pub(crate) fn namespaces_waiting(&self) -> usize {
        self.ready.waiting()
    }

    /// Ready keys waiting only because their namespace holds its share of workers.
    pub(crate) fn held_by_share(&self) -> usize {
        self.ready.held()
    }

    /// The namespaces holding workers now (at most one per worker).
    pub(crate) fn namespaces_holding(&self) -> Vec<NamespaceShare> {
        self.ready.holding()
    }

    /// `Refresh` keys due but held until every watch has listed.
    pub(crate) fn held_for_lists(&self) -> usize {
        self.held.len()
    }

    /// Keys waiting for their due time.
    pub(crate) fn delayed(&self) -> usize {
        self.delayed.len()
    }

    /// When the oldest ready key started waiting.
    pub(crate) fn oldest_ready_since(&self) -> Option<Instant> {
        self.ready_since.first().map(|(since, _)| *since)
    }

    /// When the earliest delayed key is due (the one timer the actor arms).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.delayed.first_key_value().map(|((due, _), _)| *due)
    }

    /// Counters since start.
    pub(crate) fn counters(&self) -> QueueCounters {
        self.counters
    }

    /// When this incarnation started.
    pub(crate) fn started_at(&self) -> Instant {
        self.started_at
    }

    /// When a run last finished.
    pub(crate) fn last_completed_at(&self) -> Option<Instant> {
        self.last_completed_at
    }

    /// Failures and throttles in a row for `key` (0 for unknown keys).
    pub(crate) fn attempts(&self, key: &ObjectKey) -> u32 {
        self.records.get(key).map_or(0, |r| r.failures + r.throttles)
    }

    /// Every known key with its state, sorted by key.
    pub(crate) fn keys(&self, now: Instant) -> Vec<KeyInfo> {
        let mut out: Vec<KeyInfo> = self
            .records
            .iter()
            .map(|(key, rec)| {
                let (state, due_in_secs) = match rec.state {
                    KeyState::Processing { dirty: Some(_), .. } => ("processing+dirty", None),
                    KeyState::Processing { dirty: None, .. } => ("processing", None),
                    KeyState::Ready { .. } => ("ready", None),
                    KeyState::Held { .. } => ("held", None),
                    KeyState::Delayed { due, .. } => ("delayed", Some(signed_secs(due, now))),
                    KeyState::Idle => ("idle", None),
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
