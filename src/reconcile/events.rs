//! Kubernetes Events (`events.k8s.io/v1`) on the custom resources, deduplicated.
//!
//! Built on kube-runtime's [`Recorder`], which already folds a repeat of the same event into
//! one Event object with a growing `series.count`. That still costs one API write per repeat,
//! so [`EventSink`] adds a cheaper first filter: an event identical (type, reason, note) to
//! the last one published for the same object within [`REPEAT_WINDOW`] is not sent at all.
//!
//! # Guarantees
//! - A failure reconciled every few seconds produces one Event, not one per pass.
//! - Publishing never fails a reconcile: errors are logged at `warn` and dropped.
//! - Notes are built from names, counts, reasons and hashes only: never a value or a token.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
    time::Duration,
};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::time::Instant;

/// An identical event for the same object is not re-sent within this window.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(10 * 60);

/// Bound of one Event write: an Event is never worth holding a reconcile for.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);

/// The `reportingController` of every Event.
pub const REPORTING_CONTROLLER: &str = "ferrvault-operator";

/// What happened, as an Event `reason` (with its type and `action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Normal: the target Secret's content changed (only then: a refresh that wrote the same
    /// content is not news).
    Synced,
    /// Warning: a sync failed; the note starts with the condition reason.
    SyncFailed,
    /// Normal: a workload was restarted for new content.
    RolloutTriggered,
    /// Warning: a workload restart failed; it is retried.
    RolloutFailed,
    /// Warning: a connection's deletion waits for FerrVaultSecrets that reference it.
    DeletionBlocked,
    /// Warning: the object does not match its type (it bypassed the CRD schema); the note
    /// names the field, never its value.
    InvalidSpec,
}

impl EventKind {
    fn reason(self) -> &'static str {
        match self {
            Self::Synced => "Synced",
            Self::SyncFailed => "SyncFailed",
            Self::RolloutTriggered => "RolloutTriggered",
            Self::RolloutFailed => "RolloutFailed",
            Self::DeletionBlocked => "DeletionBlocked",
            Self::InvalidSpec => "InvalidSpec",
        }
    }

    fn action(self) -> &'static str {
        match self {
            Self::Synced | Self::SyncFailed | Self::InvalidSpec => "Sync",
            Self::RolloutTriggered | Self::RolloutFailed => "Rollout",
            Self::DeletionBlocked => "Delete",
        }
    }

    fn type_(self) -> EventType {
        match self {
            Self::Synced | Self::RolloutTriggered => EventType::Normal,
            Self::SyncFailed | Self::RolloutFailed | Self::DeletionBlocked | Self::InvalidSpec => {
                EventType::Warning
            }
        }
    }
}

/// Identity of an object for deduplication: its UID (a re-created object starts fresh).
type ObjectId = String;

/// Publishes Events; cheap to share (one per operator).
pub struct EventSink {
    recorder: Recorder,
    /// Last event sent per object, and when: the repeat filter. Bounded by the number of live
    /// objects that emitted within the window (entries older than the window are pruned).
    last: Mutex<HashMap<ObjectId, (EventKind, String, Instant)>>,
}

impl EventSink {
    /// A sink writing through `client`.
    pub fn new(client: kube::Client) -> Self {
        let reporter = Reporter {
            controller: REPORTING_CONTROLLER.into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client, reporter),
            last: Mutex::default(),
        }
    }

    /// Publishes `kind` with `note` about `regarding`, unless it repeats the last event for
    /// that object within [`REPEAT_WINDOW`].
    pub async fn publish(&self, regarding: &ObjectReference, kind: EventKind, note: String) {
        let id = regarding.uid.clone().unwrap_or_default();
        if !self.should_send(&id, kind, &note, Instant::now()) {
            return;
        }
        let event = Event {
            type_: kind.type_(),
            reason: kind.reason().into(),
            note: Some(note),
            action: kind.action().into(),
            secondary: None,
        };
        match tokio::time::timeout(PUBLISH_TIMEOUT, self.recorder.publish(&event, regarding)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(reason = kind.reason(), %error, "event not published"),
            Err(_) => tracing::warn!(reason = kind.reason(), "event not published: timed out"),
        }
    }

    /// The repeat filter: records and returns `true` unless the same event was sent recently.
    fn should_send(&self, id: &str, kind: EventKind, note: &str, now: Instant) -> bool {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.retain(|_, (_, _, at)| now.saturating_duration_since(*at) < REPEAT_WINDOW);
        if let Some((k, n, _)) = last.get(id)
            && *k == kind
            && n == note
        {
            return false;
        }
        last.insert(id.to_owned(), (kind, note.to_owned(), now));
        true
    }

    /// Forgets an object (deleted), so the filter does not outlive it.
    pub fn forget(&self, uid: &str) {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> EventSink {
        EventSink {
            recorder: Recorder::new(
                kube::Client::try_from(kube::Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap(),
                REPORTING_CONTROLLER.into(),
            ),
            last: Mutex::default(),
        }
    }

    #[tokio::test]
    async fn identical_events_should_be_sent_once_per_window_and_changes_at_once() {
        let sink = sink();
        let t0 = Instant::now();
        assert!(sink.should_send("u1", EventKind::SyncFailed, "Unreachable: x", t0));
        assert!(!sink.should_send(
            "u1",
            EventKind::SyncFailed,
            "Unreachable: x",
            t0 + Duration::from_secs(5)
        ));
        assert!(
            sink.should_send("u2", EventKind::SyncFailed, "Unreachable: x", t0),
            "per object"
        );
        assert!(
            sink.should_send("u1", EventKind::Synced, "2 key(s)", t0),
            "a change is news"
        );
        assert!(
            sink.should_send("u1", EventKind::SyncFailed, "Unreachable: x", t0),
            "after a change"
        );
        assert!(sink.should_send(
            "u1",
            EventKind::SyncFailed,
            "Unreachable: x",
            t0 + REPEAT_WINDOW + Duration::from_secs(1)
        ));
    }
}
