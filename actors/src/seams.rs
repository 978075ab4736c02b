//! The contracts between the runtime's parts that are built separately: what watchers push,
//! what leadership calls and publishes, and how both report to health.
//!
//! The supervisor (`supervisor.rs`/`runtime.rs`) implements [`KeySink`], [`WatchReporter`] and
//! [`LeadershipHooks`]; the watcher and leadership actors only see these traits.

use std::time::{Duration, SystemTime};

use crate::key::{Cause, ObjectKey};

/// Where watchers send the keys their events map to (the work queue, in production).
///
/// # Guarantees
/// `enqueue` never blocks and never awaits: it is a cast into the work queue's mailbox.
pub trait KeySink: Send + Sync + 'static {
    /// Queue `key` for `cause` (coalesced with any pending entry for the same key).
    fn enqueue(&self, key: ObjectKey, cause: Cause);
}

/// The connection state of one watch stream, as shown in health and the actor tree.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WatchState {
    /// The watch's name, e.g. `"FerrVaultSecret"` or `"Secret (metadata)"`.
    pub name: String,
    /// This watcher incarnation completed its initial list at least once, so its store and
    /// the keys it enqueued cover every object: what readiness checks. Never cleared within an
    /// incarnation (a stream error is retried and resumes or re-lists on its own; a restarted
    /// watcher reports a fresh, unsynced state).
    pub synced: bool,
    /// Informative only: the stream completed a list and no error came since. A stream error
    /// clears it; the next completed list sets it again. An error recovered without a re-list
    /// leaves no trace in the stream, so it may stay false while the watch works.
    pub connected: bool,
    /// When the last event (including bookmarks and errors) arrived.
    pub last_event_at: Option<SystemTime>,
    /// Events received since this watcher incarnation started.
    pub events: u64,
    /// Stream errors since this watcher incarnation started (each one is retried with backoff).
    pub errors: u64,
    /// A short, secret-free description of the last error.
    pub last_error: Option<String>,
}

impl WatchState {
    /// The state of a watch named `name` that has not received anything yet.
    pub fn starting(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            synced: false,
            connected: false,
            last_event_at: None,
            events: 0,
            errors: 0,
            last_error: None,
        }
    }
}

/// Receives watch state changes (implemented by the runtime; forwards to the health actor).
pub trait WatchReporter: Send + Sync + 'static {
    /// Record a new state for the watch named `state.name`.
    fn report(&self, state: WatchState);
}

/// This replica's place in the leader election.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Not leading (another replica holds the lease, or we are still trying).
    Standby,
    /// Holds the lease: the controllers run here.
    Leader,
}

/// What the leadership actor publishes (via a `tokio::sync::watch` channel) on every change.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LeaseStatus {
    /// Our role.
    pub role: Role,
    /// Our identity (pod name + per-process uid).
    pub identity: String,
    /// The holder recorded in the Lease, if any.
    pub holder: Option<String>,
    /// When the current holder's lease runs out unless renewed.
    pub expires_at: Option<SystemTime>,
    /// How long a lease lasts without renewal.
    pub lease_duration: Duration,
    /// Leader transitions recorded in the Lease.
    pub transitions: i32,
}

/// Called by the leadership actor when this replica starts or stops leading.
///
/// # Guarantees expected from the implementor
/// - `started_leading` returns quickly (it starts the controllers subtree and does not wait for it).
/// - `stopped_leading` returns only once the controllers subtree has stopped (or its grace ran out):
///   leadership competes again only after it returns, so no two replicas ever reconcile at once.
pub trait LeadershipHooks: Send + Sync + 'static {
    /// This replica now holds the lease.
    fn started_leading(&self) -> futures::future::BoxFuture<'static, ()>;
    /// This replica no longer holds the lease (renew failed, shutdown or escalation).
    fn stopped_leading(&self) -> futures::future::BoxFuture<'static, ()>;
}

/// A watch that the controllers subtree runs (one watcher actor each) while this replica leads.
///
/// Implemented by the watcher module's spec types; the runtime only sees this trait, so
/// watches of different kinds (typed, metadata-only) live in one list.
pub trait WatchSource: Send + Sync + 'static {
    /// A stable, human-readable name, e.g. `"FerrVaultSecret"` or `"Secret (metadata)"`.
    fn name(&self) -> &str;
    /// Spawn this watch's actor, linked to `supervisor`, sending mapped keys to `sink` and
    /// its connection state to `reporter`.
    fn spawn_linked(
        &self,
        supervisor: ractor::ActorCell,
        sink: std::sync::Arc<dyn KeySink>,
        reporter: std::sync::Arc<dyn WatchReporter>,
    ) -> futures::future::BoxFuture<'static, Result<ractor::ActorCell, ractor::SpawnErr>>;
}

/// Spawns the leadership actor (implemented by the leadership module; the runtime only sees
/// this trait, like [`WatchSource`]).
///
/// # Expected behaviour of the spawned actor
/// - Publishes its [`LeaseStatus`] on `status` on every change.
/// - Calls `hooks.started_leading()` on winning and awaits `hooks.stopped_leading()` before
///   competing again after a lost renewal.
/// - On [`LeadershipSource::release`] (shutdown, escalation) calls `stopped_leading` if
///   leading, then frees the lease, and never competes again.
pub trait LeadershipSource: Send + Sync + 'static {
    /// The Lease's name (the `name` label of `leader_election_master_status`).
    fn lease_name(&self) -> &str;
    /// This replica's identity.
    fn identity(&self) -> &str;
    /// Spawn the leadership actor linked to `supervisor` (called again after each restart).
    fn spawn_linked(
        &self,
        supervisor: ractor::ActorCell,
        hooks: std::sync::Arc<dyn LeadershipHooks>,
        status: tokio::sync::watch::Sender<LeaseStatus>,
    ) -> futures::future::BoxFuture<'static, Result<ractor::ActorCell, ractor::SpawnErr>>;
    /// Ask the actor `leadership` (spawned by this source) to release the lease; resolves once
    /// it has (or gave up within `timeout`). The supervisor stops the actor afterwards.
    fn release(
        &self,
        leadership: ractor::ActorCell,
        timeout: std::time::Duration,
    ) -> futures::future::BoxFuture<'static, ()>;
}
