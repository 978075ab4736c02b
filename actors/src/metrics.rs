//! Prometheus metrics of the runtime, identical to controller-runtime's for the families it
//! defines (names, labels, help, buckets; checked against controller-runtime's
//! `pkg/internal/controller/metrics` and `pkg/internal/metrics/workqueue.go`), so dashboards and
//! alerts written for a controller-runtime operator work unchanged:
//! `workqueue_*{controller,name}` (`workqueue_depth` adds `priority=""`, as for a queue without
//! priorities), `controller_runtime_*{controller}`, `leader_election_master_status{name}`; plus
//! per-actor mailbox figures by logical name.
//!
//! # Guarantees
//! - [`RuntimeMetrics::init_controller`] creates every series of a controller at zero, each
//!   `result` of `controller_runtime_reconcile_total` included, as controller-runtime does when
//!   a controller starts: `rate()` and `increase()` work from the first scrape.
//! - Labels are bounded: controller names are fixed at build time, results come from a fixed
//!   set, and actor names are logical (`health`, `worker-3`), not ids.

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

/// The `result` values of `controller_runtime_reconcile_total`.
pub const RESULTS: [&str; 4] = ["error", "requeue_after", "requeue", "success"];

/// `controller_runtime_reconcile_time_seconds` buckets (controller-runtime's list).
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
    1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0,
    50.0, 60.0,
];

fn queue_buckets() -> Histogram {
    // client-go's workqueue buckets: 10ns .. 1000s, ten times apart.
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

fn reconcile_time_buckets() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

/// A work queue's labels: controller-runtime names the queue after its controller.
fn queue(controller: &str) -> Labels {
    vec![
        ("controller", controller.to_owned()),
        ("name", controller.to_owned()),
    ]
}

fn controller(controller: &str) -> Labels {
    vec![("controller", controller.to_owned())]
}

/// How a reconcile ended, for the error counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// No error (`success`, `requeue`, `requeue_after`).
    Cleanly,
    /// The reconciler reported an error, or its run was aborted.
    WithError,
    /// Cancelled at `--reconcile-timeout` (an error too).
    TimedOut,
    /// The reconciler panicked (an error too).
    Panicked,
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
    terminal_errors: Family<Labels, Counter>,
    reconcile_panics: Family<Labels, Counter>,
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
            queue_duration: Family::new_with_constructor(queue_buckets),
            work_duration: Family::new_with_constructor(queue_buckets),
            unfinished_work: Family::default(),
            longest_running: Family::default(),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            terminal_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_timeouts: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_buckets),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            leader: Family::default(),
            mailbox_depth: Family::default(),
            mailbox_handled: Family::default(),
            restarts: Family::default(),
            fairness: FairnessMetrics::default(),
        };
        let r = registry;
        // controller-runtime's help strings, word for word (counters get `_total` appended).
        r.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            m.depth.clone(),
        );
        r.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            m.adds.clone(),
        );
        r.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, \
             explicit RequeueAfter or AddAfter calls)",
            m.retries.clone(),
        );
        r.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            m.queue_duration.clone(),
        );
        r.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            m.work_duration.clone(),
        );
        r.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by \
             work_duration. Large values indicate stuck threads. One can deduce the number of stuck \
             threads by observing the rate at which this increases.",
            m.unfinished_work.clone(),
        );
        r.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            m.longest_running.clone(),
        );
        r.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconcile_total.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.reconcile_errors.clone(),
        );
        r.register(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            m.terminal_errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            m.reconcile_panics.clone(),
        );
        r.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            m.reconcile_timeouts.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        r.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent.clone(),
        );
        r.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 \
             indicates master. 'name' is the string used to identify the lease. Please make sure to \
             group by name.",
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

    /// Creates every series of controller `ctl` at zero (its pool size set), as controller-runtime
    /// does when a controller and its queue start.
    pub fn init_controller(&self, ctl: &str, workers: usize) {
        for result in RESULTS {
            self.reconcile_total
                .get_or_create(&result_labels(ctl, result))
                .inc_by(0);
        }
        for counter in [
            &self.reconcile_errors,
            &self.terminal_errors,
            &self.reconcile_panics,
            &self.reconcile_timeouts,
        ] {
            counter.get_or_create(&controller(ctl)).inc_by(0);
        }
        for counter in [&self.adds, &self.retries] {
            counter.get_or_create(&queue(ctl)).inc_by(0);
        }
        for histogram in [&self.queue_duration, &self.work_duration] {
            drop(histogram.get_or_create(&queue(ctl)));
        }
        drop(self.reconcile_time.get_or_create(&controller(ctl)));
        self.max_concurrent(ctl, workers);
        self.queue_gauges(ctl, 0, 0, 0.0, 0.0);
    }

    /// Record a new key queued (`n` of them).
    pub fn queue_added(&self, ctl: &str, n: u64) {
        self.adds.get_or_create(&queue(ctl)).inc_by(n);
    }

    /// Record a key scheduled again with a delay (backoff retry or timed refresh).
    pub fn queue_retried(&self, ctl: &str) {
        self.retries.get_or_create(&queue(ctl)).inc();
    }

    /// A key left the queue for a worker after waiting `waited_secs`.
    pub fn queue_dispatched(&self, ctl: &str, waited_secs: f64) {
        self.queue_duration
            .get_or_create(&queue(ctl))
            .observe(waited_secs);
    }

    /// A run finished after `secs` with this `result` label (one of [`RESULTS`]).
    pub fn reconciled(&self, ctl: &str, result: &'static str, secs: f64, ended: Ended) {
        self.work_duration.get_or_create(&queue(ctl)).observe(secs);
        self.reconcile_time.get_or_create(&controller(ctl)).observe(secs);
        self.reconcile_total
            .get_or_create(&result_labels(ctl, result))
            .inc();
        if ended != Ended::Cleanly {
            self.reconcile_errors.get_or_create(&controller(ctl)).inc();
        }
        let cause = match ended {
            Ended::TimedOut => Some(&self.reconcile_timeouts),
            Ended::Panicked => Some(&self.reconcile_panics),
            Ended::Cleanly | Ended::WithError => None,
        };
        if let Some(counter) = cause {
            counter.get_or_create(&controller(ctl)).inc();
        }
    }

    /// The queue's gauges after a change.
    pub fn queue_gauges(&self, ctl: &str, depth: usize, active: usize, unfinished: f64, longest: f64) {
        self.depth.get_or_create(&depth_labels(ctl)).set(depth as i64);
        self.active_workers
            .get_or_create(&controller(ctl))
            .set(active as i64);
        self.unfinished_work.get_or_create(&queue(ctl)).set(unfinished);
        self.longest_running.get_or_create(&queue(ctl)).set(longest);
    }

    /// The configured pool size of `ctl`.
    pub fn max_concurrent(&self, ctl: &str, n: usize) {
        self.max_concurrent.get_or_create(&controller(ctl)).set(n as i64);
    }

    /// Whether this replica leads, for lease `lease_name`.
    pub fn leading(&self, lease_name: &str, is_leader: bool) {
        self.leader
            .get_or_create(&vec![("name", lease_name.to_owned())])
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

fn result_labels(ctl: &str, result: &str) -> Labels {
    vec![("controller", ctl.to_owned()), ("result", result.to_owned())]
}

/// `workqueue_depth`'s labels: controller-runtime's queue without priorities reports `priority=""`.
fn depth_labels(ctl: &str) -> Labels {
    let mut labels = queue(ctl);
    labels.push(("priority", String::new()));
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).expect("encodes");
        text
    }

    #[test]
    fn a_started_controller_should_expose_every_series_at_zero_as_controller_runtime_does() {
        let mut registry = Registry::default();
        let metrics = RuntimeMetrics::register(&mut registry);
        metrics.init_controller("c", 3);
        let text = encoded(&registry);
        for result in RESULTS {
            let series =
                format!("controller_runtime_reconcile_total{{controller=\"c\",result=\"{result}\"}} 0");
            assert!(text.contains(&series), "{series} missing:\n{text}");
        }
        for series in [
            "controller_runtime_reconcile_errors_total{controller=\"c\"} 0",
            "controller_runtime_terminal_reconcile_errors_total{controller=\"c\"} 0",
            "controller_runtime_reconcile_panics_total{controller=\"c\"} 0",
            "controller_runtime_reconcile_timeouts_total{controller=\"c\"} 0",
            "controller_runtime_reconcile_time_seconds_count{controller=\"c\"} 0",
            "controller_runtime_max_concurrent_reconciles{controller=\"c\"} 3",
            "controller_runtime_active_workers{controller=\"c\"} 0",
            "workqueue_depth{controller=\"c\",name=\"c\",priority=\"\"} 0",
            "workqueue_adds_total{controller=\"c\",name=\"c\"} 0",
            "workqueue_retries_total{controller=\"c\",name=\"c\"} 0",
            "workqueue_queue_duration_seconds_count{controller=\"c\",name=\"c\"} 0",
            "workqueue_work_duration_seconds_count{controller=\"c\",name=\"c\"} 0",
            "workqueue_unfinished_work_seconds{controller=\"c\",name=\"c\"} 0",
            "workqueue_longest_running_processor_seconds{controller=\"c\",name=\"c\"} 0",
        ] {
            assert!(text.contains(series), "{series} missing:\n{text}");
        }
    }

    #[test]
    fn each_way_a_reconcile_ends_should_count_where_controller_runtime_counts_it() {
        let mut registry = Registry::default();
        let metrics = RuntimeMetrics::register(&mut registry);
        metrics.init_controller("c", 1);
        metrics.reconciled("c", "requeue_after", 0.2, Ended::Cleanly);
        metrics.reconciled("c", "error", 0.1, Ended::Panicked);
        metrics.reconciled("c", "error", 0.1, Ended::TimedOut);
        metrics.reconciled("c", "error", 0.1, Ended::WithError);
        let text = encoded(&registry);
        for series in [
            "controller_runtime_reconcile_total{controller=\"c\",result=\"requeue_after\"} 1",
            "controller_runtime_reconcile_total{controller=\"c\",result=\"error\"} 3",
            "controller_runtime_reconcile_errors_total{controller=\"c\"} 3",
            "controller_runtime_reconcile_panics_total{controller=\"c\"} 1",
            "controller_runtime_reconcile_timeouts_total{controller=\"c\"} 1",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.15\",controller=\"c\"} 3",
            "workqueue_work_duration_seconds_bucket{le=\"1e-8\",controller=\"c\",name=\"c\"} 0",
        ] {
            assert!(text.contains(series), "{series} missing:\n{text}");
        }
    }
}
