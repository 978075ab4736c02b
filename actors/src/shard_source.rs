//! The runtime's adapter for the shard leadership actor ([`crate::shard_leadership`]): the
//! per-shard fences it moves, how to spawn it and how to ask it to let go.
//!
//! NOTE: not yet wired into the supervisor: the operator's `--shards` is the next step
//! (docs/sharding.md). Until then, an owner spawns it beside the runtime and reads the held set.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use ractor::SpawnErr;
use tokio::sync::watch;

use crate::{
    directory::ActorKind,
    fence::Fence,
    leadership::LeaderElectionConfig,
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
        }
    }

    /// The fence of `shard`, for [`FenceLayer::per_shard`](crate::fence_layer::FenceLayer::per_shard).
    pub fn fence(&self, shard: ShardId) -> Fence {
        self.fences[usize::from(shard.0)].clone()
    }

    /// Spawn the actor through `spawner`; the receiver sees the shards it holds.
    ///
    /// # Errors
    /// The actor could not start (bad lease timings among them).
    pub async fn spawn(
        &self,
        spawner: &Spawner,
    ) -> Result<(Spawned, watch::Receiver<BTreeSet<ShardId>>), SpawnErr> {
        let (held, held_rx) = watch::channel(BTreeSet::new());
        let args = ShardLeadershipArgs {
            config: self.config.clone(),
            pod: self.pod.clone(),
            shards: self.shards,
            client: self.client.clone(),
            fences: self.fences.clone(),
            held,
        };
        let actor = spawner
            .spawn("shard_leadership", ActorKind::Leadership, ShardLeadership, args)
            .await?;
        Ok((actor.into(), held_rx))
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
