//! [`ChangeFeed`]: what the change detection knows and runs — one poller per FerrVaultConnection
//! with `changeDetection.mode: Versions`, the latest `name → version` of each, and the key sink
//! through which a poller re-queues the FerrVaultSecrets whose selected versions moved.
//!
//! Who calls it: the connection reconciler plans and starts pollers (`start.rs`); a poller
//! (`poller.rs`) records each `list` answer and enqueues; the FerrVaultSecret reconciler reads
//! the hash of its selection (the rule's `Seen::source_version`) and reports the arrival of a
//! change; the runtime's [`KeyFeed`](controller_actors::KeyFeed) attaches and detaches the sink.
//!
//! # Guarantees
//! - At most one poller per connection: a new one is started only after the old one's task was
//!   aborted ([`ChangeFeed::plan`]); every poller is aborted when this replica stops leading.
//! - What is kept per connection is one `list` answer, already bounded by its decoder
//!   ([`MAX_LIST_ENTRIES`](crate::ferrvault::MAX_LIST_ENTRIES) names,
//!   [`MAX_LIST_BYTES`](crate::ferrvault::MAX_LIST_BYTES) of names); a failed poll keeps it.
//! - A connection whose server has no `list` keeps no task: it is not asked again until its
//!   spec (generation) or interval changes.
//! - A connection that wanted a poller before the feed attached (its pass ran first) is queued
//!   again when it attaches ([`ChangeFeed::leads_or_waits`]).
//!
//! # Invariants
//! - A poller record with `unsupported` has no live task (the poller ended itself, or none was
//!   started).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use controller_actors::{Cause, FeedHooks, KeySink, ObjectKey};
use jiff::Timestamp;
use kube::ResourceExt;
use prometheus_client::registry::Registry;
use tokio::task::AbortHandle;

use super::metrics::{ChangeMetrics, PollResult};
use crate::{
    api::{ConnectionKind, FerrVaultSecret},
    ferrvault::{ListedSecret, Revealed},
    reconcile::rules::schedule::source_version::{change_age, listed_version, revealed_version},
};

/// A connection: its namespace and name; a ClusterFerrVaultConnection's namespace is `""`
/// ([`cluster_id`]), which no FerrVaultConnection has, so the two kinds never share an id.
pub(crate) type ConnectionId = (String, String);

/// The id of ClusterFerrVaultConnection `name`.
pub(crate) fn cluster_id(name: &str) -> ConnectionId {
    (String::new(), name.to_owned())
}

/// The connection whose versions `cr` follows: its FerrVaultConnection, or its
/// ClusterFerrVaultConnection (a ClusterFerrVaultSecret's view names that too).
pub(crate) fn followed_by(cr: &FerrVaultSecret) -> ConnectionId {
    let reference = &cr.spec.connection_ref;
    match reference.kind {
        ConnectionKind::FerrVaultConnection => (cr.namespace().unwrap_or_default(), reference.name.clone()),
        ConnectionKind::ClusterFerrVaultConnection => cluster_id(&reference.name),
    }
}

/// The latest `list` answer of a connection, by name.
pub(crate) type Listed = BTreeMap<String, ListedSecret>;

/// What a poller runs with; another value means a new poller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PollSpec {
    /// Between two `list` calls.
    pub interval: Duration,
    /// The connection's generation it was planned at.
    pub generation: Option<i64>,
}

/// What the connection reconciler does about a connection's poller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Start a poller with this spec (any previous one is already aborted).
    Start,
    /// The running poller (or the remembered "no `list`") stands.
    Keep,
    /// None is wanted, and none runs (any previous one is already aborted).
    Off,
}

/// Where a connection's change detection stands, for its `ChangeDetection` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    /// No poller: the connection polls (or is not this replica's to follow).
    Off,
    /// A poller runs; its first `list` has not answered yet.
    Waiting,
    /// The last `list` answered: versions are followed.
    Following,
    /// The server has no `list`: the connection polls.
    Unsupported,
    /// The last `list` answer crossed a bound of its decoder: refused, the versions before it
    /// stay, asked again at the next interval.
    TooLarge,
}

/// One connection's poller.
struct Poller {
    /// What it runs with.
    spec: PollSpec,
    /// Its task; `None` once it ended itself (no `list`) or when none was started.
    task: Option<AbortHandle>,
    /// Its latest answer; `None` before the first.
    listed: Option<Arc<Listed>>,
    /// The server answered 404/405 to `list`.
    unsupported: bool,
    /// The last answer crossed a bound (cleared by the next answer within them).
    too_large: bool,
}

/// The state behind the feed's lock.
#[derive(Default)]
struct FeedState {
    /// The controllers' key sink while this replica leads.
    sink: Option<Arc<dyn KeySink>>,
    /// Pollers by connection.
    pollers: HashMap<ConnectionId, Poller>,
    /// The keys of connections that wanted a poller while no sink was attached, queued again
    /// when one is (at most one entry per connection).
    waiting: BTreeSet<ObjectKey>,
}

/// The change detection's shared state (see the module).
pub struct ChangeFeed {
    /// Held only for map operations, never across an `.await`.
    state: Mutex<FeedState>,
    /// `ferrvault_change_*`.
    metrics: ChangeMetrics,
}

impl ChangeFeed {
    /// A feed with its metrics registered in `registry`; detached until the runtime leads.
    pub fn register(registry: &mut Registry) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::default(),
            metrics: ChangeMetrics::register(registry),
        })
    }

    fn lock(&self) -> MutexGuard<'_, FeedState> {
        // A panic while holding the lock left plain maps behind: still usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The metrics the poller and the sync record into.
    pub(crate) fn metrics(&self) -> &ChangeMetrics {
        &self.metrics
    }

    /// Whether this replica leads (a sink is attached): pollers run only then. When it does
    /// not, `own` (the key of a connection wanting a poller) is queued again as soon as a sink
    /// attaches, so a connection whose pass ran before the feed attached still gets its poller.
    pub(crate) fn leads_or_waits(&self, own: &ObjectKey) -> bool {
        let mut state = self.lock();
        if state.sink.is_some() {
            return true;
        }
        state.waiting.insert(own.clone());
        false
    }

    /// Decides about `id`'s poller when `wanted` (`None`: no poller) and aborts what must go.
    /// `known_unsupported`: the connection's status already says its server has no `list` at
    /// this generation (after a restart, nothing in memory says so).
    pub(crate) fn plan(&self, id: &ConnectionId, wanted: Option<PollSpec>, known_unsupported: bool) -> Plan {
        let mut state = self.lock();
        let running = state.pollers.get(id).map(|p| p.spec);
        match (wanted, running) {
            (Some(wanted), Some(spec)) if wanted == spec => Plan::Keep,
            (None, None) => Plan::Off,
            (None, Some(_)) => {
                remove(&mut state, id);
                Plan::Off
            }
            (Some(wanted), _) => {
                remove(&mut state, id);
                if known_unsupported {
                    let poller = Poller {
                        spec: wanted,
                        task: None,
                        listed: None,
                        unsupported: true,
                        too_large: false,
                    };
                    state.pollers.insert(id.clone(), poller);
                    Plan::Keep
                } else {
                    Plan::Start
                }
            }
        }
    }

    /// Records the poller started for `id` after [`Plan::Start`].
    pub(crate) fn started(&self, id: ConnectionId, spec: PollSpec, task: AbortHandle) {
        let poller = Poller {
            spec,
            task: Some(task),
            listed: None,
            unsupported: false,
            too_large: false,
        };
        if let Some(old) = self.lock().pollers.insert(id, poller) {
            // Two reconciles of one connection never run at once; abort a leftover anyway.
            abort(old.task);
        }
    }

    /// Forgets `id` (deleted, invalid): its poller stops.
    pub(crate) fn forget(&self, id: &ConnectionId) {
        remove(&mut self.lock(), id);
    }

    /// Where `id`'s change detection stands.
    pub(crate) fn standing(&self, id: &ConnectionId) -> Standing {
        match self.lock().pollers.get(id) {
            None => Standing::Off,
            Some(p) if p.unsupported => Standing::Unsupported,
            Some(p) if p.too_large => Standing::TooLarge,
            Some(p) if p.listed.is_some() => Standing::Following,
            Some(_) => Standing::Waiting,
        }
    }

    /// Records a `list` answer of `id`; the names that moved, appeared or disappeared since the
    /// last one (every name of the first one), `None` when nothing did.
    pub(crate) fn record(&self, id: &ConnectionId, listed: Listed) -> Option<Vec<String>> {
        let mut state = self.lock();
        let poller = state.pollers.get_mut(id)?;
        let changed = match &poller.listed {
            None => Some(listed.keys().cloned().collect()),
            Some(before) => {
                let mut names: Vec<String> = before
                    .iter()
                    .filter(|(name, entry)| listed.get(*name).map(|e| e.version) != Some(entry.version))
                    .map(|(name, _)| name.clone())
                    .collect();
                names.extend(listed.keys().filter(|name| !before.contains_key(*name)).cloned());
                (!names.is_empty()).then_some(names)
            }
        };
        self.metrics.count_poll(if changed.is_some() {
            PollResult::Changed
        } else {
            PollResult::Unchanged
        });
        poller.listed = Some(Arc::new(listed));
        poller.too_large = false;
        changed
    }

    /// Records that `id`'s last answer crossed a bound; whether that is new (the connection's
    /// condition must say so).
    pub(crate) fn record_too_large(&self, id: &ConnectionId) -> bool {
        self.metrics.count_poll(PollResult::Error);
        let mut state = self.lock();
        let Some(poller) = state.pollers.get_mut(id) else {
            return false;
        };
        !std::mem::replace(&mut poller.too_large, true)
    }

    /// Records that `id`'s server has no `list`; the poller ends itself after this.
    pub(crate) fn record_unsupported(&self, id: &ConnectionId) {
        self.metrics.count_poll(PollResult::Unsupported);
        if let Some(poller) = self.lock().pollers.get_mut(id) {
            poller.unsupported = true;
            poller.listed = None;
            poller.task = None;
        }
    }

    /// The latest answer of `id`, `None` before the first (or without a poller).
    pub(crate) fn listed(&self, id: &ConnectionId) -> Option<Arc<Listed>> {
        self.lock().pollers.get(id)?.listed.clone()
    }

    /// The hash of `selected`'s versions in `id`'s latest answer: the rule's
    /// `Seen::source_version`. `None` when `id` does not follow versions or has no answer yet.
    pub(crate) fn listed_version(&self, id: &ConnectionId, selected: &[String]) -> Option<String> {
        let listed = self.listed(id)?;
        Some(listed_version(selected, &listed))
    }

    /// What a sync records as `status.observedSourceVersion`: the hash of the versions its
    /// reveal returned, or, when some hit carried none (an older server), the latest `list`'s
    /// for the selection (so a missing version never makes the object due again and again).
    pub(crate) fn recorded_version(
        &self,
        id: &ConnectionId,
        selected: &[String],
        revealed: &Revealed,
    ) -> Option<String> {
        if revealed.versions.len() == revealed.secrets.len() {
            return Some(revealed_version(&revealed.versions));
        }
        self.listed_version(id, selected)
    }

    /// Records in `ferrvault_change_to_sync_seconds` that a change of `selected` reached its
    /// target now: from the newest `updated_at` of the selection in `id`'s latest answer.
    pub(crate) fn observe_arrival(&self, id: &ConnectionId, selected: &[String]) {
        let Some(listed) = self.listed(id) else { return };
        let newest = if selected.is_empty() {
            listed.values().map(|e| e.updated_at).max()
        } else {
            selected
                .iter()
                .filter_map(|n| listed.get(n))
                .map(|e| e.updated_at)
                .max()
        };
        if let Some(age) = newest.and_then(|at| change_age(at, Timestamp::now())) {
            self.metrics.observe_change_to_sync(age);
        }
    }

    /// Queues `key` as a change (a no-op while detached).
    pub(crate) fn enqueue(&self, key: ObjectKey) {
        let sink = self.lock().sink.clone();
        if let Some(sink) = sink {
            sink.enqueue(key, Cause::Event);
        }
    }
}

/// Removes `id`'s poller, its task aborted.
fn remove(state: &mut FeedState, id: &ConnectionId) {
    if let Some(poller) = state.pollers.remove(id) {
        abort(poller.task);
    }
}

/// Aborts `task`, if any.
fn abort(task: Option<AbortHandle>) {
    if let Some(task) = task {
        task.abort();
    }
}

impl FeedHooks for ChangeFeed {
    fn attach(&self, sink: Arc<dyn KeySink>) {
        let waiting = {
            let mut state = self.lock();
            state.sink = Some(sink.clone());
            std::mem::take(&mut state.waiting)
        };
        for key in waiting {
            sink.enqueue(key, Cause::Event);
        }
    }

    fn detach(&self) {
        let mut state = self.lock();
        state.sink = None;
        for (_, poller) in state.pollers.drain() {
            abort(poller.task);
        }
    }
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("ChangeFeed")
            .field("attached", &state.sink.is_some())
            .field("pollers", &state.pollers.len())
            .finish()
    }
}

#[cfg(test)]
mod tests;
