//! Prometheus metrics of the work queue's fairness across namespaces (see
//! [`crate::queue_state`]): the share each namespace may hold, how many namespaces wait, and
//! how many ready keys wait only because their namespace holds its share.
//!
//! Labelled by controller (`name`, as the `workqueue_*` families), never by namespace: the
//! number of namespaces is not bounded. `/debug/queue` lists the namespaces holding workers.

use prometheus_client::{
    metrics::{family::Family, gauge::Gauge},
    registry::Registry,
};

type Labels = Vec<(&'static str, String)>;

/// The fairness gauges. Cheap to clone (handles share the registered series).
#[derive(Clone, Debug, Default)]
pub(crate) struct FairnessMetrics {
    share: Family<Labels, Gauge>,
    waiting: Family<Labels, Gauge>,
    held: Family<Labels, Gauge>,
}

impl FairnessMetrics {
    /// Register every family in `registry`.
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "workqueue_namespace_share",
            "Most workers one namespace may hold at once",
            self.share.clone(),
        );
        registry.register(
            "workqueue_namespaces_waiting",
            "Namespaces with a key ready for a worker",
            self.waiting.clone(),
        );
        registry.register(
            "workqueue_held_by_namespace_share",
            "Ready keys waiting only because their namespace holds its share of workers",
            self.held.clone(),
        );
    }

    /// The figures of `controller`'s queue.
    pub(crate) fn set(&self, controller: &str, share: usize, waiting: usize, held: usize) {
        let labels = vec![("name", controller.to_owned())];
        self.share.get_or_create(&labels).set(share as i64);
        self.waiting.get_or_create(&labels).set(waiting as i64);
        self.held.get_or_create(&labels).set(held as i64);
    }
}
