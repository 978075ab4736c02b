//! Per-runtime facts about actors that ractor does not keep: logical names, kinds and mailbox
//! counters of live actors by `ActorId` (kept by [`crate::spawn`]), restart counts and reasons
//! by logical name (ids change on every restart), and the latest watch states. Written by the
//! spawn wrapper, supervisors and reporters, read by the tree dump, metrics and health without
//! messaging any actor.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use ractor::ActorId;
use serde::Serialize;

use crate::{
    mailbox::MailboxStats,
    metrics::RuntimeMetrics,
    watch_state::{WatchReporter, WatchState},
};

/// What an actor is, for the tree dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ActorKind {
    /// The root supervisor.
    Supervisor,
    /// The health actor.
    Health,
    /// The leadership (Lease) actor.
    Leadership,
    /// The controllers subtree's supervisor.
    Controllers,
    /// A watcher.
    Watcher,
    /// A controller's work queue.
    WorkQueue,
    /// A reconcile worker.
    Worker,
}

impl ActorKind {
    /// The snake_case name used in JSON and the text tree.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ActorKind::Supervisor => "supervisor",
            ActorKind::Health => "health",
            ActorKind::Leadership => "leadership",
            ActorKind::Controllers => "controllers",
            ActorKind::Watcher => "watcher",
            ActorKind::WorkQueue => "work_queue",
            ActorKind::Worker => "worker",
        }
    }
}

/// Restart history of one logical actor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct RestartRecord {
    /// Restarts and replacements since the runtime started.
    pub count: u64,
    /// Why the last one happened (secret-free: panic messages of our own code, reasons).
    pub last_reason: String,
    /// When the last one happened.
    pub last_at: SystemTime,
}

/// A live actor as registered by its spawner.
#[derive(Debug)]
struct Entry {
    name: String,
    kind: ActorKind,
    mailbox: Arc<MailboxStats>,
}

/// The directory. One per runtime, shared by `Arc`.
#[derive(Debug)]
pub(crate) struct Directory {
    actors: Mutex<HashMap<ActorId, Entry>>,
    restarts: Mutex<BTreeMap<String, RestartRecord>>,
    watches: Mutex<BTreeMap<String, WatchState>>,
    metrics: RuntimeMetrics,
}

impl Directory {
    /// An empty directory that also counts restarts in `metrics`.
    pub(crate) fn new(metrics: RuntimeMetrics) -> Self {
        Self {
            actors: Mutex::default(),
            restarts: Mutex::default(),
            watches: Mutex::default(),
            metrics,
        }
    }

    /// The runtime's metrics.
    pub(crate) fn metrics(&self) -> &RuntimeMetrics {
        &self.metrics
    }

    /// Record live actor `id`: its logical name, kind and mailbox counters (by the spawner).
    pub(crate) fn register(&self, id: ActorId, name: String, kind: ActorKind, mailbox: Arc<MailboxStats>) {
        self.actors
            .lock()
            .expect("directory poisoned")
            .insert(id, Entry { name, kind, mailbox });
    }

    /// Forget actor `id` (its state was dropped; ids are never reused).
    pub(crate) fn forget(&self, id: ActorId) {
        self.actors.lock().expect("directory poisoned").remove(&id);
    }

    /// The logical name and kind of live actor `id`.
    pub(crate) fn lookup(&self, id: ActorId) -> Option<(String, ActorKind)> {
        self.actors
            .lock()
            .expect("directory poisoned")
            .get(&id)
            .map(|e| (e.name.clone(), e.kind))
    }

    /// The mailbox counters of live actor `id`.
    pub(crate) fn mailbox(&self, id: ActorId) -> Option<Arc<MailboxStats>> {
        self.actors
            .lock()
            .expect("directory poisoned")
            .get(&id)
            .map(|e| e.mailbox.clone())
    }

    /// Count one restart of `name` because of `reason`.
    pub(crate) fn restarted(&self, name: &str, reason: impl Into<String>) {
        let reason = reason.into();
        tracing::warn!(actor = name, %reason, "actor restarted");
        self.metrics.restarted(name);
        let mut restarts = self.restarts.lock().expect("directory poisoned");
        let rec = restarts.entry(name.to_owned()).or_insert(RestartRecord {
            count: 0,
            last_reason: String::new(),
            last_at: SystemTime::now(),
        });
        rec.count += 1;
        rec.last_reason = reason;
        rec.last_at = SystemTime::now();
    }

    /// The restart history of `name`.
    pub(crate) fn restarts(&self, name: &str) -> Option<RestartRecord> {
        self.restarts
            .lock()
            .expect("directory poisoned")
            .get(name)
            .cloned()
    }

    /// Record a watch's latest state.
    pub(crate) fn watch(&self, state: WatchState) {
        self.watches
            .lock()
            .expect("directory poisoned")
            .insert(state.name.clone(), state);
    }

    /// Forget every watch state (the controllers subtree stopped; the next term reports anew).
    pub(crate) fn clear_watches(&self) {
        self.watches.lock().expect("directory poisoned").clear();
    }

    /// Latest states of every watch seen.
    pub(crate) fn watches(&self) -> BTreeMap<String, WatchState> {
        self.watches.lock().expect("directory poisoned").clone()
    }
}

/// Watchers report here; health and the tree dump read the states back.
impl WatchReporter for Directory {
    fn report(&self, state: WatchState) {
        self.watch(state);
    }
}
