//! What the reconcilers tell users besides status: Kubernetes Events on the custom resources,
//! deduplicated and rate-limited ([`EventSink`]), and the Prometheus metrics with the Go
//! operator's names ([`SyncMetrics`]).
//!
//! # Layout
//! - `events.rs`: [`EventSink`], which writes Events; `events/ledger.rs`: what it remembers of
//!   them and decides from that (client-go's `EventCorrelator`: skip, fold, combine, suppress).
//! - `metrics.rs`: [`SyncMetrics`] and [`SyncTimer`]; `metrics/sync_times.rs`: the last-sync and
//!   refresh-interval gauges from one map; `metrics/object_labels.rs`: their label set.
//!
//! # Guarantees
//! Notes and labels are built from names, counts, reasons and hashes only: never a value, a
//! token or an error text (see each file).

mod events;
mod metrics;

pub(crate) use self::{
    events::{CLUSTER_SCOPED_EVENTS_NAMESPACE, EventKind},
    metrics::SyncTimer,
};
pub use self::{
    events::{COMBINED_PREFIX, EventSink, REPORTING_CONTROLLER},
    metrics::SyncMetrics,
};
