//! Prometheus metrics of the runtime, with controller-runtime compatible names and labels so
//! existing dashboards work: `workqueue_*{name}`, `controller_runtime_*{controller}`,
//! `leader_election_master_status{name}`, plus per-actor mailbox figures by logical name.
//!
//! Labels are bounded: controller names are fixed at build time, results come from a fixed
//! set, and actor names are logical (`health`, `worker-3`), not ids.

use prometheus_client::{
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};
use std::sync::atomic::AtomicU64;

use crate::fairness_metrics::FairnessMetrics;

type Labels = Vec<(&'static str, String)>;
type Seconds = Gauge<f64, AtomicU64>;
type Durations = Family<Labels, Histogram, fn() -> Histogram>;

fn duration_buckets() -> Histogram {
    // 1ms .. ~16min, like controller-runtime's workqueue buckets.
    Histogram::new(exponential_buckets(0.001, 4.0, 11))
}

fn name(controller: &str) -> Labels {
    vec![("name", controller.to_owned())]
}

fn controller(controller: &str) -> Labels {
    vec![("controller", controller.to_owned())]
}

/// Every metric of the runtime. Cheap to clone (handles share the registered series).
#[derive(Clone, Debug)]
pub struct RuntimeMetrics {
    depth: Family<Labels, Gauge>,
    adds: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    queue_duration: Durations,
    work_duration: Durations,
    unfinished_work: Family<Labels, Seconds>,
    longest_running: Family<Labels, Seconds>,
    reconcile_total: Family<Labels, Counter>,
    reconcile_errors: Family<Labels, Counter>,
    reconcile_timeouts: Family<Labels, Counter>,
    reconcile_time: Durations,
    active_workers: Family<Labels, Gauge>,
    max_concurrent: Family<Labels, Gauge>,
    leader: Family<Labels, Gauge>,
    mailbox_depth: Family<Labels, Gauge>,
    mailbox_handled: Family<Labels, Gauge>,
    restarts: Family<Labels, Counter>,
    fairness: FairnessMetrics,
}

impl RuntimeMetrics {
    /// Create and register every metric in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self {
            depth: Family::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(duration_buckets),
            work_duration: Family::new_with_constructor(duration_buckets),
            unfinished_work: Family::default(),
            longest_running: Family::default(),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_timeouts: Family::default(),
            reconcile_time: Family::new_with_constructor(duration_buckets),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            leader: Family::default(),
            mailbox_depth: Family::default(),
            mailbox_handled: Family::default(),
            restarts: Family::default(),
            fairness: FairnessMetrics::default(),
        };
        let r = registry;
        r.register(
            "workqueue_depth",
            "Keys waiting in the work queue (exact)",
            m.depth.clone(),
        );
        r.register(
            "workqueue_adds",
            "Keys newly queued (coalesced events not counted)",
            m.adds.clone(),
        );
        r.register(
            "workqueue_retries",
            "Backoff retries scheduled",
            m.retries.clone(),
        );
        r.register(
            "workqueue_queue_duration_seconds",
            "How long a key waited in the queue before a worker took it",
            m.queue_duration.clone(),
        );
        r.register(
            "workqueue_work_duration_seconds",
            "How long processing a key took",
            m.work_duration.clone(),
        );
        r.register(
            "workqueue_unfinished_work_seconds",
            "Seconds of work in progress not yet observed by work_duration",
            m.unfinished_work.clone(),
        );
        r.register(
            "workqueue_longest_running_processor_seconds",
            "How long the longest running reconcile has been running",
            m.longest_running.clone(),
        );
        r.register(
            "controller_runtime_reconcile",
            "Reconciles by controller and result (success, error, requeue, requeue_after)",
            m.reconcile_total.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Reconciles that ended in an error, timeout, panic or abort",
            m.reconcile_errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_timeouts",
            "Reconciles cancelled at --reconcile-timeout",
            m.reconcile_timeouts.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of reconciles",
            m.reconcile_time.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Workers running a reconcile now",
            m.active_workers.clone(),
        );
        r.register(
            "controller_runtime_max_concurrent_reconciles",
            "Configured worker pool size",
            m.max_concurrent.clone(),
        );
        r.register(
            "leader_election_master_status",
            "1 while this replica holds the lease, else 0",
            m.leader.clone(),
        );
        r.register(
            "actor_mailbox_depth",
            "Messages waiting or being handled, per actor (logical name)",
            m.mailbox_depth.clone(),
        );
        r.register(
            "actor_mailbox_handled_messages",
            "Messages handled by the current incarnation of the actor",
            m.mailbox_handled.clone(),
        );
        r.register(
            "actor_restarts",
            "Restarts and replacements per actor",
            m.restarts.clone(),
        );
        m.fairness.register(r);
        m
    }

    /// The work queue's fairness gauges (registered with the rest).
    pub fn fairness(&self) -> &FairnessMetrics {
        &self.fairness
    }

    /// Record a new key queued (`n` of them).
    pub fn queue_added(&self, ctl: &str, n: u64) {
        self.adds.get_or_create(&name(ctl)).inc_by(n);
    }

    /// Record a backoff retry scheduled.
    pub fn queue_retried(&self, ctl: &str) {
        self.retries.get_or_create(&name(ctl)).inc();
    }

    /// A key left the queue for a worker after waiting `waited_secs`.
    pub fn queue_dispatched(&self, ctl: &str, waited_secs: f64) {
        self.queue_duration.get_or_create(&name(ctl)).observe(waited_secs);
    }

    /// A run finished after `secs` with this `result` label; `error`/`timeout` say what to count.
    pub fn reconciled(&self, ctl: &str, result: &'static str, secs: f64, error: bool, timeout: bool) {
        self.work_duration.get_or_create(&name(ctl)).observe(secs);
        self.reconcile_time.get_or_create(&controller(ctl)).observe(secs);
        let labels = vec![("controller", ctl.to_owned()), ("result", result.to_owned())];
        self.reconcile_total.get_or_create(&labels).inc();
        if error {
            self.reconcile_errors.get_or_create(&controller(ctl)).inc();
        }
        if timeout {
            self.reconcile_timeouts.get_or_create(&controller(ctl)).inc();
        }
    }

    /// The queue's gauges after a change.
    pub fn queue_gauges(&self, ctl: &str, depth: usize, active: usize, unfinished: f64, longest: f64) {
        self.depth.get_or_create(&name(ctl)).set(depth as i64);
        self.active_workers
            .get_or_create(&controller(ctl))
            .set(active as i64);
        self.unfinished_work.get_or_create(&name(ctl)).set(unfinished);
        self.longest_running.get_or_create(&name(ctl)).set(longest);
    }

    /// The configured pool size of `ctl`.
    pub fn max_concurrent(&self, ctl: &str, n: usize) {
        self.max_concurrent.get_or_create(&controller(ctl)).set(n as i64);
    }

    /// Whether this replica leads, for lease `lease_name`.
    pub fn leading(&self, lease_name: &str, is_leader: bool) {
        self.leader
            .get_or_create(&name(lease_name))
            .set(i64::from(is_leader));
    }

    /// One restart (or replacement) of the actor with this logical name.
    pub fn restarted(&self, actor: &str) {
        self.restarts
            .get_or_create(&vec![("actor", actor.to_owned())])
            .inc();
    }

    /// Mailbox figures of a live actor (set from the tree walk).
    pub fn mailbox(&self, actor: &str, depth: u64, handled: u64) {
        let labels = vec![("actor", actor.to_owned())];
        self.mailbox_depth.get_or_create(&labels).set(depth as i64);
        self.mailbox_handled.get_or_create(&labels).set(handled as i64);
    }
}
