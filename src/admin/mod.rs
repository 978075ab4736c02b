//! The operator's HTTP servers: `/metrics`, the probes (`/healthz`, `/readyz`) and the admin
//! endpoint (`/debug/actors`, `/debug/queue`).
//!
//! # Layout
//! - [`routes`]: each server's routes as warp filters; every route reads a snapshot (the
//!   health verdict, the published tree, the registry) and never waits on an actor for a probe.
//! - `debug_queue.rs`: the `/debug/queue` document, built from values (pure).
//! - [`healthz`]: controller-runtime's probe answers (500, sub-paths, `?verbose`, `?exclude=`).
//! - [`exposition`]: OpenMetrics or the classic Prometheus text format, by `Accept` (pure).
//! - [`render_cache`]: one `/metrics` body per format, shared by the scrapes of a second.
//! - [`limits`]: timeouts, connection budget and request size of each server.
//! - `listener.rs`: a server's routes served with hyper (HTTP/1.1) through `warp::service` on
//!   one listener under those limits, TLS optional;
//!   `slots.rs`: the connection budget, which evicts the longest-idle connection when full;
//!   `listener/write_deadline.rs`: the time a client has to take a response.
//! - [`secure`]: `--metrics-secure` (HTTPS, TokenReview and SubjectAccessReview, caches).
//! - [`server`]: binds every listener first, then serves each on a thread of its own (the
//!   change-hint endpoint's too, whose routes are in `hints/`: POST only, a bounded body);
//!   `address.rs`: [`BindAddress`], each server's address as its flag gives it.
//!
//! # Guarantees
//! - Only GET and HEAD; any other method gets 405 with an `Allow` header.
//! - A port that cannot be bound fails [`server::Servers::start`] before anything is served.
//! - Each server runs on its own single-threaded tokio runtime and thread with its own
//!   connection budget, so neither a reconcile pool that saturates the main runtime nor a flood
//!   of `/metrics` (scrapes or connections) can starve the kubelet's probes.
//! - Hostile clients are bounded ([`limits::HttpLimits`]): a request head must arrive within
//!   the header-read timeout and fit in 16 KiB, no request body is taken, a connection where
//!   nothing moves is closed, a response must be taken within the write timeout, and the
//!   connections of each server are capped.
//! - `/metrics` is rendered at most once a second per format, whatever the number of scrapers;
//!   slow readers share that one body. With secure metrics, the method and path are checked
//!   before any review, and reviews are cached (negative apart from positive) and limited per
//!   source address.
//! - No secret value or token is served: the sources are the health checks, the actor tree,
//!   queue keys (`namespace/name`), limiter state by credential fingerprint, and metrics whose
//!   labels are bounded enums or fingerprints. Tests scrape every endpoint during a synced run
//!   and search for the values and tokens.

mod address;
mod debug_queue;
pub mod exposition;
#[cfg(test)]
mod fixtures;
pub mod healthz;
pub mod limits;
mod listener;
pub mod render_cache;
pub mod routes;
pub mod secure;
pub mod server;
mod slots;

use std::sync::Arc;

pub use address::{AddressError, BindAddress};
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
