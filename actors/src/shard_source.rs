//! The runtime's adapter for the shard leadership actor ([`crate::shard_leadership`]): the
//! per-shard fences it moves, how to spawn it and how to ask it to let go, and the
//! [`LeadershipSource`] that makes it a runtime's leadership (`--shards N > 1`).
//!
//! As a runtime's leadership, a task follows the actor's held set: on every change it stops
//! the controllers subtree (awaiting the stop) and, when any shard is still held, starts it
//! again, so the watches list afresh with the new set ([`ShardLeases::keeps_namespace`] is
//! what their filter reads). The runtime's own fence (which cancels in-flight reconciles) is
//! open while any shard is held; each write is judged on the wire by its shard's fence.
//!
//! # Guarantees
//! - The controllers run only while at least one shard is held, and every change of the held
//!   set restarts them: a released shard's objects leave the stores and queues, an acquired
//!   shard's objects are listed.
//! - [`ShardLeases::held`] publishes the set the running controllers were started for, before
//!   they start; a restarted actor starts from the empty set.

use std::{collections::BTreeSet, future::Future, sync::Arc, time::Duration};

use futures::future::BoxFuture;
use ractor::SpawnErr;
use tokio::sync::watch;

use crate::{
    directory::ActorKind,
    fence::Fence,
    leadership::LeaderElectionConfig,
    seams::{LeadershipHooks, LeadershipSource, LeaseStatus, Role},
    shard_leadership::{ShardLeadership, ShardLeadershipArgs, ShardLeadershipMsg},
    shard_rules::{ShardId, Shards},
    spawn::{Spawned, Spawner},
};

/// This replica's share of the shard Leases: one Lease per shard, named after
/// `config.lease_name` ([`Shards::lease_name`]), plus a member Lease for the pod.
pub struct ShardLeases {
    config: LeaderElectionConfig,
    pod: String,
    shards: Shards,
    client: kube::Client,
    /// One per shard, closed until the shard is held; shared with the write path.
    fences: Arc<[Fence]>,
    /// The held set the controllers run for (as a runtime's leadership); outlives the actor.
    held: Arc<watch::Sender<BTreeSet<ShardId>>>,
}

impl ShardLeases {
    /// Compete for a share of `shards` as pod `pod` through `client`, every fence closed.
    pub fn new(config: LeaderElectionConfig, pod: &str, shards: Shards, client: kube::Client) -> Self {
        Self {
            fences: shards.all().map(|_| Fence::new()).collect(),
            config,
            pod: pod.to_owned(),
            shards,
            client,
            held: Arc::new(watch::Sender::new(BTreeSet::new())),
        }
    }

    /// How many shards.
    pub fn shards(&self) -> Shards {
        self.shards
    }

    /// The shards the controllers run for, as a runtime's leadership (empty until then).
    pub fn held(&self) -> watch::Receiver<BTreeSet<ShardId>> {
        self.held.subscribe()
    }

    /// Whether an object of `namespace` (`""`: cluster-scoped) belongs to a held shard: the
    /// filter for [`WatchSpec::only_namespaces`](crate::watch_spec::WatchSpec::only_namespaces)
    /// and [`RuntimeBuilder::only_keys`](crate::runtime::RuntimeBuilder::only_keys).
    pub fn keeps_namespace(&self) -> impl Fn(&str) -> bool + Clone + Send + Sync + 'static {
        let (held, shards) = (self.held(), self.shards);
        move |namespace: &str| held.borrow().contains(&shards.of_namespace(namespace))
    }

    /// The fence of `shard`, for [`FenceLayer::per_shard`](crate::fence_layer::FenceLayer::per_shard).
    pub fn fence(&self, shard: ShardId) -> Fence {
        self.fences[usize::from(shard.0)].clone()
    }

    /// Spawn the actor through `spawner`; the receiver sees the shards it holds.
    ///
    /// # Errors
    /// The actor could not start (bad lease timings among them).
    pub fn spawn(
        &self,
        spawner: &Spawner,
    ) -> impl Future<Output = Result<(Spawned, watch::Receiver<BTreeSet<ShardId>>), SpawnErr>> + Send + 'static
    {
        let (held, held_rx) = watch::channel(BTreeSet::new());
        let args = ShardLeadershipArgs {
            config: self.config.clone(),
            pod: self.pod.clone(),
            shards: self.shards,
            client: self.client.clone(),
            fences: self.fences.clone(),
            held,
        };
        let spawner = spawner.clone();
        async move {
            let actor = spawner
                .spawn("shard_leadership", ActorKind::Leadership, ShardLeadership, args)
                .await?;
            Ok((actor.into(), held_rx))
        }
    }

    /// Ask `actor` (spawned by [`spawn`](Self::spawn)) to close every fence and free its
    /// Leases; resolves once it has, or gave up within `timeout`.
    pub async fn release(actor: &Spawned, timeout: Duration) {
        let actor = actor.typed::<ShardLeadershipMsg>();
        if actor.call(ShardLeadershipMsg::Release, timeout).await.is_none() {
            tracing::warn!("the shard leadership actor did not confirm the release; its leases will expire");
        }
    }
}

impl LeadershipSource for ShardLeases {
    fn lease_name(&self) -> &str {
        &self.config.lease_name
    }

    fn identity(&self) -> &str {
        &self.config.identity
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        hooks: Arc<dyn LeadershipHooks>,
        status: watch::Sender<LeaseStatus>,
        fence: Fence,
    ) -> BoxFuture<'static, Result<Spawned, SpawnErr>> {
        let started = self.spawn(spawner);
        let held = self.held.clone();
        // A restarted actor holds nothing yet.
        held.send_replace(BTreeSet::new());
        let duration = self.config.timings.lease_duration;
        Box::pin(async move {
            let (actor, actor_held) = started.await?;
            status.send_modify(|s| s.lease_duration = duration);
            tokio::spawn(follow(actor_held, held, hooks, status, fence));
            Ok(actor)
        })
    }

    fn release(&self, leadership: &Spawned, timeout: Duration) -> BoxFuture<'static, ()> {
        let actor = leadership.clone();
        Box::pin(async move { Self::release(&actor, timeout).await })
    }
}

/// Follows the actor's held set (`actor_held`, closed when the actor is gone) into `held`,
/// restarting the controllers through `hooks` on each change, and publishing the role on
/// `status` and the runtime's `fence` (open while any shard is held).
async fn follow(
    mut actor_held: watch::Receiver<BTreeSet<ShardId>>,
    held: Arc<watch::Sender<BTreeSet<ShardId>>>,
    hooks: Arc<dyn LeadershipHooks>,
    status: watch::Sender<LeaseStatus>,
    fence: Fence,
) {
    loop {
        let now = actor_held.borrow_and_update().clone();
        if *held.borrow() != now {
            let was_leading = !held.borrow().is_empty();
            if was_leading {
                hooks.stopped_leading().await;
            }
            let leading = !now.is_empty();
            tracing::info!(shards = ?now, "held shards changed");
            publish(&status, &fence, &now);
            held.send_replace(now);
            if leading {
                hooks.started_leading().await;
            }
        }
        if actor_held.changed().await.is_err() {
            // The actor is gone: the supervisor stops the controllers and restarts it.
            held.send_replace(BTreeSet::new());
            publish(&status, &fence, &BTreeSet::new());
            return;
        }
    }
}

/// This replica holds `held`: it leads while that is not empty.
fn publish(status: &watch::Sender<LeaseStatus>, fence: &Fence, held: &BTreeSet<ShardId>) {
    let leading = !held.is_empty();
    if leading {
        fence.open_unbounded();
    } else {
        fence.close();
    }
    status.send_modify(|s| {
        s.role = if leading { Role::Leader } else { Role::Standby };
        s.holder = leading.then(|| s.identity.clone());
        s.shards = Some(held.iter().map(|shard| shard.0).collect());
    });
}
