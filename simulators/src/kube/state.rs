//! The state shared by the HTTP handlers, the watch tasks and the Rust handles.

use super::{audit::AuditLog, faults::FaultConfig, store::Store};
use std::{
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicU32, AtomicU64},
    },
    time::Duration,
};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// Everything one simulator instance owns.
///
/// `store` is a plain mutex: no critical section awaits, and one lock over objects,
/// history and registry keeps every write atomic with its watch event.
#[derive(Debug)]
pub struct Shared {
    /// Objects, history, registry.
    pub store: Mutex<Store>,
    /// The last committed resourceVersion; watch tasks wake on its changes.
    pub changed: watch::Sender<u64>,
    /// Standing faults; hung and frozen requests wait on its changes.
    pub faults: watch::Sender<FaultConfig>,
    /// Bumped to end every open watch.
    pub drop_watches: watch::Sender<u64>,
    /// Number of upcoming watches to answer with 410 Gone.
    pub force_gone: AtomicU32,
    /// Request log and token identities.
    pub audit: AuditLog,
    /// Cancelled when the server stops; ends watches and hung requests.
    pub shutdown: CancellationToken,
    /// Interval of BOOKMARK events on watches that allow them.
    pub bookmark_interval: Duration,
    /// BOOKMARK events sent so far, over all watches (an observation point for tests).
    pub bookmarks_sent: AtomicU64,
    /// Authorize every request against the stored RBAC objects (see [`super::auth::enforce`]).
    pub enforce_rbac: bool,
    /// Wakes the background garbage collector (see [`super::collector`]).
    pub collector: Notify,
}

/// Default interval between periodic bookmarks (the real server sends one about every
/// minute; shorter here so tests observe them without waiting).
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(5);

impl Shared {
    /// A fresh state with the given history capacity and bookmark interval.
    pub fn new(history: usize, bookmark_interval: Duration) -> Self {
        Shared {
            store: Mutex::new(Store::new(history)),
            changed: watch::channel(0).0,
            faults: watch::channel(FaultConfig::default()).0,
            drop_watches: watch::channel(0).0,
            force_gone: AtomicU32::new(0),
            audit: AuditLog::default(),
            shutdown: CancellationToken::new(),
            bookmark_interval,
            bookmarks_sent: AtomicU64::new(0),
            enforce_rbac: false,
            collector: Notify::new(),
        }
    }

    /// Asks the garbage collector for a pass (several asks before it runs make one pass).
    pub fn wake_collector(&self) {
        self.collector.notify_one();
    }

    /// Read access to the store.
    pub fn read(&self) -> MutexGuard<'_, Store> {
        self.store.lock().expect("store lock poisoned")
    }

    /// Runs a write against the store, then wakes watchers if anything was committed.
    pub fn write<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        let mut store = self.read();
        let out = f(&mut store);
        let rv = store.rv();
        drop(store);
        self.changed.send_if_modified(|last| {
            let moved = *last != rv;
            *last = rv;
            moved
        });
        out
    }
}
