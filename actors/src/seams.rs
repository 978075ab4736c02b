//! The contracts between the runtime's parts, so that no two files need each other: what
//! watchers push, what leadership calls and publishes, how both report to health, how a run
//! reports its end and how a subtree asks for escalation.
//!
//! Who implements what:
//! - `KeySink`: the controllers' queue router (`controllers.rs`), which casts into the work
//!   queue of the key's controller.
//! - `WatchReporter` (with `WatchState`, in `watch_state.rs`): the runtime's `Directory`
//!   (`directory.rs`), which health and the tree dump read.
//! - `LeadershipHooks`: the root supervisor's hooks (`supervisor/children.rs`).
//! - `WatchSource`: `WatchSpec` (the impl is in `watcher.rs`, which turns a spec into a
//!   watcher actor).
//! - `LeadershipSource`: `LeaseLeadership` (`lease_source.rs`).
//! - `DoneSink`: the work queue's mailbox (`work_queue.rs`); the worker only sees the trait.
//! - `Escalation`: the root supervisor's mailbox (`supervisor/children.rs`); the controllers
//!   actor only sees the trait.

use std::{
    sync::Arc,
    time::{Duration, SystemTime},
};

use futures::future::BoxFuture;
use ractor::{ActorCell, SpawnErr};
use tokio::sync::watch;

use crate::{
    fence::Fence,
    key::{Cause, ObjectKey},
    queue_state::Finish,
    spawn::{Spawned, Spawner},
    watch_state::WatchReporter,
};

/// Where watchers send the keys their events map to (the work queue, in production).
///
/// # Guarantees
/// `enqueue` never blocks and never awaits: it is a cast into the work queue's mailbox.
pub trait KeySink: Send + Sync + 'static {
    /// Queue `key` for `cause` (coalesced with any pending entry for the same key).
    fn enqueue(&self, key: ObjectKey, cause: Cause);
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
    /// With shards ([`ShardLeases`](crate::shard_source::ShardLeases)): the shards this
    /// replica holds and runs the controllers for; `None` with one Lease.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<Vec<u16>>,
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
/// Implemented by [`WatchSpec`](crate::watch_spec::WatchSpec); the runtime only sees this
/// trait, so watches of different kinds (typed, metadata-only) live in one list.
pub trait WatchSource: Send + Sync + 'static {
    /// A stable, human-readable name, e.g. `"FerrVaultSecret"` or `"Secret (metadata)"`.
    fn name(&self) -> &str;
    /// Spawn this watch's actor through `spawner` (which links and registers it), sending
    /// mapped keys to `sink` and its connection state to `reporter`. `Start::Term`: the first
    /// actor of a controllers term, whose first list maps every object, even one the store
    /// kept unchanged from an earlier term (its keys went with that term's queue).
    fn spawn_linked(
        &self,
        spawner: &Spawner,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
        start: WatchStart,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>>;
}

/// Why a watcher actor starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchStart {
    /// A controllers term begins (leadership won, held shards changed): its queues are new
    /// and empty, so the first list maps every object it lists.
    Term,
    /// The supervisor replaces a failed watcher within the term: the first list maps only what
    /// changed since the store last saw it, so an object whose mapper panicked is not mapped
    /// again.
    Restart,
}

/// Spawns the leadership actor (implemented by
/// [`LeaseLeadership`](crate::lease_source::LeaseLeadership); the runtime only sees this
/// trait, like [`WatchSource`]).
///
/// # Expected behaviour of the spawned actor
/// - Publishes its [`LeaseStatus`] on `status` on every change.
/// - Opens `fence` while it can prove it holds the lease, and closes it on losing it (see
///   [`Fence`] for the bound).
/// - Calls `hooks.started_leading()` on winning and awaits `hooks.stopped_leading()` before
///   competing again after a lost renewal.
/// - On [`LeadershipSource::release`] (shutdown, escalation) calls `stopped_leading` if
///   leading, then frees the lease, and never competes again.
pub trait LeadershipSource: Send + Sync + 'static {
    /// The Lease's name (the `name` label of `leader_election_master_status`).
    fn lease_name(&self) -> &str;
    /// This replica's identity.
    fn identity(&self) -> &str;
    /// Spawn the leadership actor through `spawner` (called again after each restart).
    fn spawn_linked(
        &self,
        spawner: &Spawner,
        hooks: Arc<dyn LeadershipHooks>,
        status: watch::Sender<LeaseStatus>,
        fence: Fence,
    ) -> BoxFuture<'static, Result<Spawned, SpawnErr>>;
    /// Ask the actor `leadership` (spawned by this source) to release the lease; resolves once
    /// it has (or gave up within `timeout`). The supervisor stops the actor afterwards.
    fn release(&self, leadership: &Spawned, timeout: Duration) -> BoxFuture<'static, ()>;
}

/// Where a run's [`DoneGuard`](crate::worker::DoneGuard) reports how it ended (the work queue).
///
/// # Guarantees expected from the implementor
/// `done` never blocks: it is a cast into the queue's mailbox (dropped if the queue is gone).
pub(crate) trait DoneSink: Send + Sync + 'static {
    /// Run `run` of `key` ended with `finish`.
    fn done(&self, run: u64, key: ObjectKey, finish: Finish);
}

/// Where a subtree asks the root supervisor to escalate a restart storm.
pub(crate) trait Escalation: Send + Sync + 'static {
    /// Escalate with this reason (ignored when the supervisor is already stopping).
    fn escalate(&self, why: String);
}
