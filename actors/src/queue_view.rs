//! What a work queue publishes ([`QueueStats`], read by health, the tree dump, metrics and the
//! queue handle without messaging the queue) and how it is configured ([`QueueConfig`]).

use std::time::Duration;

use tokio::time::Instant;

use crate::{
    backoff::BackoffConfig,
    metrics::RuntimeMetrics,
    queue_state::{NamespaceShare, QueueCounters},
};

/// Queue and pool settings (runtime flags).
#[derive(Clone, Debug)]
pub(crate) struct QueueConfig {
    /// `--max-concurrent-reconciles`.
    pub workers: usize,
    /// `--reconcile-timeout`.
    pub reconcile_timeout: Duration,
    /// How long past its deadline a run may keep its worker before the worker is replaced.
    pub kill_grace: Duration,
    /// Backoff and jitter.
    pub backoff: BackoffConfig,
    /// Most abandoned (killed but still running) reconciles tolerated before refusing to
    /// replace more stuck workers.
    pub max_abandoned: usize,
    /// Most workers one namespace may hold at once (default `workers − 1`, at least 1): see
    /// [`crate::queue_state`] for the fairness rules and the bound they give.
    pub namespace_share: usize,
}

/// One worker slot as published.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerView {
    /// Logical name, e.g. `ferrvaultsecret/worker-2`.
    pub name: String,
    /// The key it runs, displayed.
    pub key: Option<String>,
    /// Since when.
    pub since: Option<Instant>,
}

/// What a queue publishes after every message (and `active: false` when it stops).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueStats {
    /// A queue incarnation is running (this replica leads and the subtree is up).
    pub active: bool,
    /// When the incarnation started.
    pub started_at: Instant,
    /// Keys ready and waiting for a worker.
    pub depth: usize,
    /// Keys waiting for a due time.
    pub delayed: usize,
    /// `Refresh` keys due but held until every watch has listed.
    pub held_for_lists: usize,
    /// Keys being processed (including abandoned runs).
    pub processing: usize,
    /// When the oldest ready key started waiting.
    pub oldest_ready_since: Option<Instant>,
    /// When the earliest delayed key is due (in the past = overdue).
    pub next_due: Option<Instant>,
    /// When a run last finished.
    pub last_completed_at: Option<Instant>,
    /// Counters since start.
    pub counters: QueueCounters,
    /// The worker slots.
    pub workers: Vec<WorkerView>,
    /// Runs whose worker was killed but which have not ended yet.
    pub abandoned: usize,
    /// Why stuck workers could not be replaced (empty when all is well).
    pub unreplaceable: Vec<String>,
    /// Most workers one namespace may hold.
    pub namespace_share: usize,
    /// Namespaces with a ready key.
    pub namespaces_waiting: usize,
    /// Ready keys waiting only because their namespace holds its share.
    pub held_by_share: usize,
    /// The namespaces holding workers now.
    pub namespaces: Vec<NamespaceShare>,
}

impl QueueStats {
    /// The figures of a queue that is not running.
    pub fn inactive() -> Self {
        Self {
            active: false,
            started_at: Instant::now(),
            depth: 0,
            delayed: 0,
            held_for_lists: 0,
            processing: 0,
            oldest_ready_since: None,
            next_due: None,
            last_completed_at: None,
            counters: QueueCounters::default(),
            workers: Vec::new(),
            abandoned: 0,
            unreplaceable: Vec::new(),
            namespace_share: 0,
            namespaces_waiting: 0,
            held_by_share: 0,
            namespaces: Vec::new(),
        }
    }
}

impl QueueStats {
    /// Set the queue gauges of `controller` from these figures as of `now`.
    pub(crate) fn record_gauges(&self, controller: &str, metrics: &RuntimeMetrics, now: Instant) {
        let running: Vec<f64> = self
            .workers
            .iter()
            .filter_map(|w| w.since.map(|s| now.saturating_duration_since(s).as_secs_f64()))
            .collect();
        let longest = running.iter().copied().fold(0.0, f64::max);
        // client-go counts every key waiting to be handed out, held ones included.
        metrics.queue_gauges(
            controller,
            self.depth + self.held_for_lists,
            running.len(),
            running.iter().sum(),
            longest,
        );
        metrics.fairness().set(
            controller,
            self.namespace_share,
            self.namespaces_waiting,
            self.held_by_share,
        );
    }
}
