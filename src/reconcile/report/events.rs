//! Kubernetes Events (`events.k8s.io/v1`) on the custom resources, deduplicated.
//!
//! [`EventSink`] writes them; its [`Ledger`] decides whether an event is news (see there). It
//! replaces kube-runtime's `Recorder`, which held a clone of every Event written for six
//! minutes and scanned them all on each publish.
//!
//! # Guarantees
//! - A failure reconciled every few seconds produces one Event, not one per pass; an event
//!   that recurs after others folds into its Event's `series.count`.
//! - Per object, as client-go's `EventCorrelator`: more than 10 different notes of one kind
//!   within 10 minutes are combined into one Event, and at most 25 Event writes (new Events and
//!   folds) are made at once, then one per 5 minutes (see [`Ledger`]). The ledger keeps a few
//!   words per object and forgets deleted objects.
//! - Every note is at most [`MAX_NOTE_BYTES`] (cut on a character boundary, marked `…`).
//! - Publishing never fails a reconcile: errors are logged at `warn` and dropped.
//! - Publishing never waits for the API server (issue 39): [`EventSink::publish`] decides at
//!   once and hands the write to a background task, at most [`MAX_IN_FLIGHT`] at a time; past
//!   that the Event is dropped and counted (`ferrvault_events_dropped_total`), never queued
//!   without bound. So a reconcile's `Ready` never waits for a slow Event sink.
//! - Notes are built from names, counts, reasons and hashes only: never a value or a token.
//!
//! # Caveats
//! Two Events of one object may be written in either order (each write is its own task); their
//! `eventTime` says which came first. A fold that overtakes the create of its Event fails
//! (404), is logged and forgotten by the ledger, as any failed write.

mod ledger;

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use jiff::Timestamp;
use k8s_openapi::{
    api::{
        core::v1::ObjectReference,
        events::v1::{Event, EventSeries},
    },
    apimachinery::pkg::apis::meta::v1::MicroTime,
};
use kube::{
    Api,
    api::{ObjectMeta, Patch, PatchParams, PostParams},
};
use prometheus_client::{metrics::counter::Counter, registry::Registry};
use tokio::{sync::Semaphore, time::Instant};

use ledger::{Decision, Ledger};

/// Bound of one Event write, so a hung write frees its place in [`MAX_IN_FLIGHT`].
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);

/// Event writes under way at once (issue 39: the Event off the critical path). Past it an Event
/// is dropped and counted: a few KiB each, so the bound keeps a stalled sink's memory under
/// 1 MiB, and 16 reconciles at once each publish at most a few per pass.
pub(crate) const MAX_IN_FLIGHT: usize = 256;

/// The longest note an Event gets, in bytes (the API server refuses longer ones).
pub(crate) const MAX_NOTE_BYTES: usize = 1024;

/// What a combined Event's note starts with (client-go's aggregate message).
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// Where the Events of a cluster-scoped object live (Kubernetes' convention).
pub(crate) const CLUSTER_SCOPED_EVENTS_NAMESPACE: &str = "default";

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
    /// Warning: a connection's service-account token expires within 7 days.
    TokenExpiresSoon,
    /// Normal: a sync forced by the `ferrvault.com/force-sync` annotation (of the object or of
    /// its connection) read FerrVault and wrote (or confirmed) the target.
    ForcedSync,
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
            Self::TokenExpiresSoon => "TokenExpiresSoon",
            Self::ForcedSync => "ForcedSync",
        }
    }

    fn action(self) -> &'static str {
        match self {
            Self::Synced | Self::SyncFailed | Self::InvalidSpec | Self::ForcedSync => "Sync",
            Self::RolloutTriggered | Self::RolloutFailed => "Rollout",
            Self::DeletionBlocked => "Delete",
            Self::TokenExpiresSoon => "Probe",
        }
    }

    fn type_(self) -> &'static str {
        match self {
            Self::Synced | Self::RolloutTriggered | Self::ForcedSync => "Normal",
            Self::SyncFailed
            | Self::RolloutFailed
            | Self::DeletionBlocked
            | Self::InvalidSpec
            | Self::TokenExpiresSoon => "Warning",
        }
    }
}

/// Publishes Events; cheap to share (one per operator).
pub struct EventSink {
    /// What the background writes need: shared with each of them.
    writer: Arc<Writer>,
    /// Places for writes under way ([`MAX_IN_FLIGHT`]).
    in_flight: Arc<Semaphore>,
    /// Events dropped because [`MAX_IN_FLIGHT`] writes were under way.
    dropped: Counter,
}

/// The client, the instance name and the ledger, shared by the sink and its background writes.
struct Writer {
    client: kube::Client,
    /// `reportingInstance`: the pod (Kubernetes requires one), else the controller's name.
    instance: String,
    ledger: Mutex<Ledger<EventKind>>,
}

impl EventSink {
    /// A sink writing through `client`; [`EventSink::register`] exposes its drop counter.
    pub fn new(client: kube::Client) -> Self {
        Self {
            writer: Arc::new(Writer {
                client,
                instance: std::env::var("POD_NAME").unwrap_or_else(|_| REPORTING_CONTROLLER.into()),
                ledger: Mutex::default(),
            }),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            dropped: Counter::default(),
        }
    }

    /// Registers `ferrvault_events_dropped_total` in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "ferrvault_events_dropped",
            "Events not written because 256 Event writes were already under way (the API server \
             is slow to take them)",
            self.dropped.clone(),
        );
    }

    /// Publishes `kind` with `note` about `regarding`, unless it is not news or spam (see
    /// [`Ledger`]). Returns at once: the write runs in the background (see the module's
    /// guarantees).
    ///
    /// # Panics
    /// Outside a Tokio runtime (the write is spawned on it).
    pub fn publish(&self, regarding: &ObjectReference, kind: EventKind, note: String) {
        let uid = regarding.uid.clone().unwrap_or_default();
        let now = Timestamp::now();
        let stamp = u64::try_from(now.as_nanosecond()).unwrap_or_default();
        let decision = self
            .writer
            .ledger()
            .record(&uid, kind, &note, Instant::now(), stamp);
        match decision {
            Decision::Skip => return,
            Decision::Suppressed => {
                tracing::debug!(
                    reason = kind.reason(),
                    "event suppressed: the object's Event budget is spent"
                );
                return;
            }
            Decision::Create { .. } | Decision::Fold { .. } => {}
        }
        let Ok(place) = self.in_flight.clone().try_acquire_owned() else {
            self.writer.ledger().unrecord(&uid, &decision);
            self.dropped.inc();
            tracing::debug!(
                reason = kind.reason(),
                "event dropped: too many Event writes under way"
            );
            return;
        };
        let writer = self.writer.clone();
        let regarding = regarding.clone();
        // The task ends within PUBLISH_TIMEOUT; nothing waits for it (its outcome is logged).
        drop(tokio::spawn(async move {
            writer.write(&uid, &regarding, kind, note, now, decision).await;
            drop(place);
        }));
    }

    /// Forgets an object (deleted), so the ledger does not outlive it.
    pub fn forget(&self, uid: &str) {
        self.writer.ledger().forget(uid);
    }
}

impl Writer {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger<EventKind>> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes what the ledger decided; on failure, logs it and makes the ledger forget it.
    async fn write(
        &self,
        uid: &str,
        regarding: &ObjectReference,
        kind: EventKind,
        note: String,
        now: Timestamp,
        decision: Decision,
    ) {
        let written = match decision {
            // `publish` hands only writes to the background.
            Decision::Skip | Decision::Suppressed => return,
            Decision::Create { stamp, combined } => {
                let note = if combined {
                    format!("{COMBINED_PREFIX}{note}")
                } else {
                    note
                };
                let note = within_note_limit(note);
                bounded(self.create(regarding, kind, note, now, stamp)).await
            }
            Decision::Fold { stamp, count } => bounded(self.fold(regarding, now, stamp, count)).await,
        };
        let Err(outcome) = written else { return };
        self.ledger().unrecord(uid, &decision);
        tracing::warn!(reason = kind.reason(), error = %outcome, "event not published");
    }

    async fn create(
        &self,
        regarding: &ObjectReference,
        kind: EventKind,
        note: String,
        now: Timestamp,
        stamp: u64,
    ) -> kube::Result<()> {
        let event = Event {
            action: Some(kind.action().into()),
            reason: Some(kind.reason().into()),
            type_: Some(kind.type_().into()),
            note: Some(note),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTING_CONTROLLER.into()),
            reporting_instance: Some(self.instance.clone()),
            metadata: ObjectMeta {
                name: Some(event_name(regarding, stamp)),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            ..Event::default()
        };
        self.events(regarding)
            .create(&PostParams::default(), &event)
            .await
            .map(drop)
    }

    /// Counts one more occurrence on the Event already written (only `series` may change).
    async fn fold(
        &self,
        regarding: &ObjectReference,
        now: Timestamp,
        stamp: u64,
        count: i32,
    ) -> kube::Result<()> {
        let series = EventSeries {
            count,
            last_observed_time: MicroTime(now),
        };
        let patch = serde_json::json!({ "series": series });
        self.events(regarding)
            .patch(
                &event_name(regarding, stamp),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map(drop)
    }

    fn events(&self, regarding: &ObjectReference) -> Api<Event> {
        Api::namespaced(
            self.client.clone(),
            regarding
                .namespace
                .as_deref()
                .unwrap_or(CLUSTER_SCOPED_EVENTS_NAMESPACE),
        )
    }
}

/// `write` within [`PUBLISH_TIMEOUT`]; its error as a string.
async fn bounded(write: impl Future<Output = kube::Result<()>>) -> Result<(), String> {
    match tokio::time::timeout(PUBLISH_TIMEOUT, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("timed out".to_owned()),
    }
}

/// `note` cut to at most [`MAX_NOTE_BYTES`] on a character boundary, ending in `…` when cut.
fn within_note_limit(mut note: String) -> String {
    const MARK: &str = "…";
    if note.len() <= MAX_NOTE_BYTES {
        return note;
    }
    let mut end = MAX_NOTE_BYTES - MARK.len();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push_str(MARK);
    note
}

/// An Event's name: the object's and a stamp, as kube-runtime and client-go name them.
fn event_name(regarding: &ObjectReference, stamp: u64) -> String {
    format!(
        "{}.{stamp:x}",
        regarding.name.as_deref().unwrap_or(REPORTING_CONTROLLER)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_should_be_cut_to_the_limit_on_a_character_boundary() {
        // (note, expected length in bytes, cut)
        let table = [
            ("short".to_owned(), 5, false),
            ("a".repeat(MAX_NOTE_BYTES), MAX_NOTE_BYTES, false),
            ("a".repeat(MAX_NOTE_BYTES + 1), MAX_NOTE_BYTES, true),
            ("é".repeat(MAX_NOTE_BYTES), MAX_NOTE_BYTES - 1, true),
            ("x".repeat(1 << 20), MAX_NOTE_BYTES, true),
        ];
        for (note, length, cut) in table {
            let bounded = within_note_limit(note.clone());
            assert_eq!(bounded.len(), length, "{} bytes", note.len());
            assert_eq!(bounded.ends_with('…'), cut);
            assert!(note.starts_with(bounded.trim_end_matches('…')));
        }
    }

    /// A sink whose API server accepts connections and never answers: every write hangs until
    /// [`PUBLISH_TIMEOUT`].
    async fn stalled_sink() -> (EventSink, tokio::net::TcpListener) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let config = kube::Config::new(url.parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        (EventSink::new(client), listener)
    }

    fn object(i: usize) -> ObjectReference {
        ObjectReference {
            name: Some(format!("app-{i}")),
            namespace: Some("ns".into()),
            uid: Some(format!("uid-{i}")),
            ..ObjectReference::default()
        }
    }

    #[tokio::test]
    async fn publishing_past_the_writes_under_way_should_drop_and_count_never_queue_or_wait() {
        let (sink, _listener) = stalled_sink().await;
        let publish_all = async {
            for i in 0..MAX_IN_FLIGHT + 3 {
                sink.publish(&object(i), EventKind::Synced, format!("synced {i}"));
            }
        };
        // `publish` never waits for the server: all of them return while every write hangs.
        tokio::time::timeout(Duration::from_secs(1), publish_all)
            .await
            .expect("publish returned at once");
        assert_eq!(
            sink.dropped.get(),
            3,
            "the writes past the bound are dropped and counted"
        );
        assert_eq!(sink.in_flight.available_permits(), 0);
    }
}
