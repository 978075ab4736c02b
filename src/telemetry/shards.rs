//! `ferrvault_shard_*` (with `--shards N > 1`, docs/sharding.md): which shards this replica
//! holds and how many objects it stores for each, read at every scrape.
//!
//! | metric | type | labels | value |
//! |---|---|---|---|
//! | `ferrvault_shard_owned` | gauge | `shard` | 1 while this replica holds the shard's Lease and runs its controllers, else 0 |
//! | `ferrvault_shard_objects` | gauge | `shard` | FerrVaultSecrets in this replica's store that belong to the shard (0 for a shard it does not hold) |
//!
//! # Guarantees
//! - One series of each per shard, `0..N`: summing `ferrvault_shard_owned` over the replicas
//!   gives how many shards are held.
//! - Only FerrVaultSecrets are counted (the other kinds' stores follow the same filter); the
//!   count reads the store, never the API server.

use std::{fmt, sync::Arc};

use controller_actors::ShardLeases;
use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{MetricType, gauge::ConstGauge},
    registry::Registry,
};

use crate::reconcile::Operator;

/// Registers the collector of `leases`, counting `operator`'s stored FerrVaultSecrets.
pub(crate) fn register(registry: &mut Registry, leases: Arc<ShardLeases>, operator: Operator) {
    registry.register_collector(Box::new(ShardCollector { leases, operator }));
}

/// Reads the held set and the store on every scrape.
struct ShardCollector {
    leases: Arc<ShardLeases>,
    operator: Operator,
}

impl fmt::Debug for ShardCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardCollector")
            .field("shards", &self.leases.shards().count())
            .finish_non_exhaustive()
    }
}

impl Collector for ShardCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
        let shards = self.leases.shards();
        let held = self.leases.held().borrow().clone();
        let mut objects = vec![0_u32; usize::from(shards.count())];
        self.operator.for_each_stored_secret_namespace(|namespace| {
            objects[usize::from(shards.of_namespace(namespace).0)] += 1;
        });
        let mut owned = encoder.encode_descriptor(
            "ferrvault_shard_owned",
            "1 while this replica holds the shard (its Lease, and runs its controllers), else 0.",
            None,
            MetricType::Gauge,
        )?;
        for shard in shards.all() {
            let value = i64::from(held.contains(&shard));
            ConstGauge::new(value).encode(owned.encode_family(&[("shard", shard.0.to_string())])?)?;
        }
        let mut stored = encoder.encode_descriptor(
            "ferrvault_shard_objects",
            "FerrVaultSecrets this replica stores for the shard.",
            None,
            MetricType::Gauge,
        )?;
        for shard in shards.all() {
            let value = i64::from(objects[usize::from(shard.0)]);
            ConstGauge::new(value).encode(stored.encode_family(&[("shard", shard.0.to_string())])?)?;
        }
        Ok(())
    }
}
