//! The FerrVaultSecret reconciler (reference §3.2, without the defects of §8).
//!
//! One pass: the shared [`prologue`](super::prologue) (read the CR as
//! [`Lenient`](crate::api::Lenient) from its watch's store, finalizer added then the same pass
//! continues, or pre-delete cleanup; an object that does not match its type stops here with
//! `InvalidSpec`, see [`invalid_spec`](super::write::invalid_spec)) → refresh interval →
//! nothing due? (`due.rs`: then only the next refresh is scheduled) → the sync, step by step
//! (`sync.rs`) → status.
//!
//! # Guarantees
//! - A pass with nothing due ([`freshness`](super::rules::schedule::freshness): synced at this
//!   generation, inputs and target unchanged, refresh not due) makes no FerrVault request, no
//!   write and no read beyond the watches' stores: a restart or failover costs nothing per
//!   object. A target edited or deleted, or a connection, token or content-hash key changed,
//!   even while no operator ran, is synced at once.
//! - An unchanged refresh reads only the stores (no GET) and writes only the status.
//! - Refreshes are scheduled from `lastSyncedAt` with a wave factor fixed per (namespace,
//!   connection, vault), so FerrVaultSecrets synced together refresh together and share one
//!   reveal (see [`FerrVault::reveal_in_wave`](crate::ferrvault::FerrVault::reveal_in_wave)).
//! - A 429 (or running out of deadline while waiting for the credential's budget) writes no
//!   status and returns [`Outcome::RateLimited`](controller_actors::Outcome::RateLimited).
//! - A target it may not write (not created by it nor handed over to it, controlled by another
//!   owner, read by a connection, or of a type Kubernetes turns into credentials) is refused
//!   before anything is revealed, with its own reason and no timer: the watches retry it when
//!   the objects involved change.
//! - Any failure before the write leaves the target as it was: workloads keep the last good
//!   values. Status says why (Ready=False, a fixed [`Reason`](crate::api::Reason)) and the key is retried on a
//!   timer even with `refreshInterval: 0s`.
//! - An object stored without schema validation (a field of the wrong type, or over a size
//!   bound of [`spec_bounds`](super::rules::bounds::spec_bounds)) is reported alone:
//!   Ready=False/`InvalidSpec`, no timer, nothing revealed, and its deletion is never blocked.
//! - No value or token reaches a log line, an Event, a status message or an error: values
//!   only travel from the reveal into the target's `data`.
//! - `spec.refreshInterval` below `--min-refresh-interval` is used at that minimum (refreshes,
//!   retries, the refresh metric), and `RefreshIntervalClamped=True/BelowMinimum` says so on
//!   every status written; the condition goes when the interval is no longer clamped (a pass with
//!   nothing due corrects it too, after the minimum changed).
//! - A pass with something due asks its namespace's write budget first
//!   ([`WriteBudget::hold_back`](super::write::WriteBudget::hold_back)): while it is
//!   spent, the pass reveals and writes nothing and is requeued for its slot.
//!
//! # Layout
//! - `reconciler.rs`: [`SecretReconciler`], one pass; `finish.rs`: how a pass that reached the
//!   sync ends (status, metrics, Event, outcome); `failure.rs`: early stops and their requeue.
//! - `interval.rs`: the refresh interval under the operator's floor, and its condition;
//!   `due.rs`: whether a pass is due and why (the rule is `rules::schedule::explain`);
//!   `quiet.rs`: how a pass that syncs nothing ends (nothing due, suspended, target kept).
//! - `sync.rs`: the sync, one function per step, in the order of the steps:
//!   `target_access.rs` (may the target be written), `reveal.rs` (connection, credential,
//!   reveal; `cluster_connection.rs`: a ClusterFerrVaultConnection, allowed or refused; `revocation.rs`: its `revocation: Delete`), `recorded_inputs.rs` (the inputs' versions a sync records), `target.rs` (the
//!   target Secret: as it must be, read, written), `rollout.rs` (workload restarts).
//! - `retain.rs`: the pre-delete step of `target.deletionPolicy: Retain` (our owner reference
//!   removed from the target).
//! - `cluster_secret/`: the ClusterFerrVaultSecret reconciler, which fans one spec out through
//!   these same steps (its own module doc).
//! - `status.rs`: the status write (what it says is `rules::status::secret_status`).

mod cluster_connection;
mod cluster_secret;
mod due;
mod failure;
mod finish;
mod interval;
mod payload;
mod plan;
mod quiet;
mod reconciler;
mod recorded_inputs;
mod retain;
mod reveal;
mod revocation;
mod rollout;
mod status;
mod sync;
pub(crate) mod target;
mod target_access;

pub(crate) use self::cluster_connection::stored_view;
pub(crate) use self::cluster_secret::{
    CLUSTER_SECRET_CONTROLLER, ClusterSecretReconciler, Part, TargetsGauge, cluster_secret_key,
    register_targets_gauge,
};
pub use self::reconciler::SecretReconciler;
