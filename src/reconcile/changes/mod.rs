//! Change detection (issue 38 point 3): for a FerrVaultConnection or ClusterFerrVaultConnection
//! with `changeDetection.mode: Versions`, one poller calls `list` once per interval and re-queues
//! only the FerrVaultSecrets and ClusterFerrVaultSecrets whose selected versions moved; the rule of
//! [`explain`](super::rules::schedule::explain) makes them due ([`Trigger::Source`]).
//!
//! # Layout
//! - `feed.rs`: [`ChangeFeed`], the shared state — pollers by connection, their latest answers,
//!   the key sink while leading (the runtime's `KeyFeed` attaches it).
//! - `poller.rs`: one connection's poller task.
//! - `metrics.rs`: `ferrvault_change_polls_total`, `ferrvault_change_to_sync_seconds`.
//!
//! ```text
//! ConnectionReconciler ──plan/spawn──▶ poller ──list (limiter)──▶ FerrVault
//!                                        └──record──▶ ChangeFeed ──enqueue──▶ FerrVaultSecret queue
//! SecretReconciler ──listed_version (rule), recorded_version (status)──▶ ChangeFeed
//! ```
//!
//! [`Trigger::Source`]: super::rules::schedule::explain::Trigger::Source

mod feed;
mod metrics;
mod poller;

pub use self::feed::ChangeFeed;
pub(crate) use self::{
    feed::{ConnectionId, Plan, PollSpec, Standing, cluster_id, followed_by},
    poller::spawn,
};
