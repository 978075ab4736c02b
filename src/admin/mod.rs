//! The operator's HTTP servers: `/metrics`, the probes (`/healthz`, `/readyz`) and the admin
//! endpoint (`/debug/actors`, `/debug/queue`).
//!
//! # Layout
//! - [`routes`]: one warp filter per server; every handler reads a snapshot (the health
//!   verdict, the published tree, the registry) and never waits on an actor for a probe.
//! - `debug_queue.rs`: the `/debug/queue` document, built from values (pure).
//! - [`healthz`]: controller-runtime's probe answers (500, sub-paths, `?verbose`, `?exclude=`).
//! - [`exposition`]: OpenMetrics or the classic Prometheus text format, by `Accept` (pure).
//! - [`server`]: binds every listener first, then serves them on a thread of its own.
//!
//! # Guarantees
//! - Only GET and HEAD; any other method gets 405 with an `Allow` header.
//! - A port that cannot be bound fails [`server::Servers::start`] before anything is served.
//! - The servers run on their own single-threaded tokio runtime, so a reconcile pool that
//!   saturates the CPU or the main runtime cannot starve the kubelet's probes.
//! - No secret value or token is served: the sources are the health checks, the actor tree,
//!   queue keys (`namespace/name`), limiter state by credential fingerprint, and metrics whose
//!   labels are bounded enums or fingerprints. Tests scrape every endpoint during a synced run
//!   and search for the values and tokens.

mod debug_queue;
pub mod exposition;
pub mod healthz;
pub mod routes;
pub mod server;

use std::sync::Arc;

use controller_actors::{HealthHandle, QueueHandle, TreeHandle};
use prometheus_client::registry::Registry;

use crate::ferrvault::FerrVault;

/// What the servers read. Cheap to clone.
#[derive(Clone)]
pub struct Sources {
    /// Liveness and readiness verdicts.
    pub health: HealthHandle,
    /// The actor tree.
    pub tree: TreeHandle,
    /// The work queues.
    pub queues: QueueHandle,
    /// Every metric of the process (runtime, reconcilers, FerrVault client).
    pub registry: Arc<Registry>,
    /// The FerrVault client, for its per-credential limiter state.
    pub ferrvault: FerrVault,
}
