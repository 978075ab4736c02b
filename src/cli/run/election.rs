//! How the process competes for work: one Lease (`--shards 1`, the default: one leader), or
//! one Lease per shard (`--shards N > 1`: every replica reconciles its share,
//! docs/sharding.md), with the write fence and the filters that go with each.
//!
//! # Guarantees
//! - `--shards 1` is the wiring of a single leader exactly: one [`Fence`] shared by the
//!   runtime and the [`FenceLayer`], one Lease named `--leader-elect-id`, exempt from it.
//! - `--shards N > 1`: a write is judged by the fence of its namespace's shard
//!   ([`ShardLeases::fence`]); every shard Lease and this pod's member Lease are exempt; the
//!   namespaced watches store, and the queues take, only the held shards' objects (cluster
//!   objects belong to the shard of the empty namespace), but every replica takes the
//!   ClusterFerrVaultSecrets' keys (each writes the copies of its own shards' namespaces,
//!   `reconcile/secret/cluster_secret/shard.rs`); the shared credentials are paced at the held
//!   shards' share of their budget.

use std::sync::Arc;

use controller_actors::{
    Fence, FenceLayer, LeaderElection, LeaderElectionConfig, RuntimeBuilder, ShardLeases, identity,
    member_lease_name,
};

use crate::{
    cli::settings::RunSettings,
    ferrvault::FerrVault,
    reconcile::{CLUSTER_SECRET_CONTROLLER, KeepsNamespace},
};

/// The process's leadership, before the runtime is built.
pub(super) enum Election {
    /// One Lease, one fence.
    One(Fence),
    /// The shard Leases, one fence per shard.
    Sharded(Arc<ShardLeases>),
}

impl Election {
    /// The leadership `settings` ask for; the shard Leases are written through `client`.
    pub(super) fn new(settings: &RunSettings, client: &kube::Client) -> Self {
        if !settings.shards.is_sharded() {
            return Self::One(Fence::new());
        }
        let config = lease_config(settings);
        Self::Sharded(Arc::new(ShardLeases::new(
            config,
            &settings.pod_name,
            settings.shards,
            client.clone(),
        )))
    }

    /// The write fence on the wire, every Lease of this replica exempt.
    pub(super) fn fence_layer(&self, settings: &RunSettings) -> FenceLayer {
        let namespace = &settings.lease_namespace;
        match self {
            Self::One(fence) => FenceLayer::new(fence.clone()).exempt_lease(namespace, &settings.lease_name),
            Self::Sharded(leases) => {
                let shards = leases.shards();
                let layer = FenceLayer::per_shard(shards, |shard| leases.fence(shard)).exempt_lease(
                    namespace,
                    &member_lease_name(&settings.lease_name, &settings.pod_name),
                );
                shards.all().fold(layer, |layer, shard| {
                    layer.exempt_lease(namespace, &shards.lease_name(&settings.lease_name, shard))
                })
            }
        }
    }

    /// `builder` with this leadership: the fence and the Lease election, or the shard Leases
    /// and the held shards' keys only.
    pub(super) fn configure(&self, builder: RuntimeBuilder, settings: &RunSettings) -> RuntimeBuilder {
        match self {
            Self::One(fence) => builder
                .fence(fence.clone())
                .leader_election(LeaderElection::Lease(lease_config(settings))),
            Self::Sharded(leases) => {
                let keeps = leases.keeps_namespace();
                builder
                    .leader_election(LeaderElection::Enabled(leases.clone()))
                    .only_keys(move |key| {
                        key.controller == CLUSTER_SECRET_CONTROLLER
                            || keeps(key.namespace.as_deref().unwrap_or_default())
                    })
            }
        }
    }

    /// Which namespaces' objects the watches keep (`None`: all of them).
    pub(super) fn keeps_namespace(&self) -> Option<KeepsNamespace> {
        match self {
            Self::One(_) => None,
            Self::Sharded(leases) => Some(Arc::new(leases.keeps_namespace())),
        }
    }

    /// Makes `ferrvault` pace the shared credentials (ClusterFerrVaultConnection tokens) at
    /// this replica's share of their budget: as many shards as it holds, read at each use
    /// (docs/sharding.md, "Shared credentials"). One Lease: nothing to share.
    pub(super) fn share_budget(&self, ferrvault: &FerrVault) {
        if let Self::Sharded(leases) = self {
            let held = leases.held();
            ferrvault.follow_held_shards(move || u32::try_from(held.borrow().len()).unwrap_or(u32::MAX));
        }
    }

    /// The shard Leases, when sharded (for `/metrics` and `/debug`).
    pub(super) fn shards(&self) -> Option<Arc<ShardLeases>> {
        match self {
            Self::One(_) => None,
            Self::Sharded(leases) => Some(leases.clone()),
        }
    }
}

/// The Lease flags: with shards, `lease_name` is the election id the shard Leases derive from.
fn lease_config(settings: &RunSettings) -> LeaderElectionConfig {
    LeaderElectionConfig {
        enabled: settings.leader_elect,
        lease_namespace: settings.lease_namespace.clone(),
        lease_name: settings.lease_name.clone(),
        identity: identity(&settings.pod_name),
        field_manager: crate::reconcile::FIELD_MANAGER.to_owned(),
        timings: settings.timings,
    }
}
