//! What every part of `bench shards` (issue 39 point 6) shares: the layout (replicas ×
//! shards), the plan of a run, how the objects spread over namespaces and shards, and what is
//! counted on the simulators (budgeted FerrVault requests, the replicas' object writes) with
//! the wait until the replicas are quiet.

use std::{collections::BTreeMap, time::Duration};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    lease_timings::LeaseTimings,
    work::{BUDGETED_ENDPOINTS, WRITE_VERBS},
};
use controller_actors::Shards;
use ferrvault_testkit::bench_world::World;

/// The replicas count as quiet once neither FerrVault nor the audit saw a request of theirs
/// (Lease renewals aside) for this long.
const QUIET: Duration = Duration::from_secs(1);
/// Longest wait for quiet.
const QUIET_TIMEOUT: Duration = Duration::from_secs(60);

/// How many replicas hold how many shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Operator processes.
    pub replicas: usize,
    /// `--shards`.
    pub shards: u16,
}

impl Layout {
    /// Table label, e.g. `4 replicas x 8 shards`.
    pub fn label(self) -> String {
        format!("{} replicas x {} shards", self.replicas, self.shards)
    }

    /// The largest share of the shards one replica holds once balanced: `ceil(S / R) / S`.
    pub fn share(self) -> f64 {
        usize::from(self.shards).div_ceil(self.replicas.max(1)) as f64 / f64::from(self.shards.max(1))
    }
}

/// How one run is taken.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// FerrVaultSecrets.
    pub objects: usize,
    /// Namespaces they are spread over (evenly, in name order).
    pub namespaces: usize,
    /// `--max-concurrent-reconciles` of every replica.
    pub concurrency: usize,
    /// Leader election.
    pub lease: LeaseTimings,
    /// Longest wait for any phase.
    pub timeout: Duration,
}

/// The `j`-th namespace.
pub fn namespace(j: usize) -> String {
    format!("shard-bench-{j:04}")
}

/// Objects per namespace (the first ones take the remainder), in namespace order.
pub fn spread(objects: usize, namespaces: usize) -> Vec<(String, usize)> {
    let n = namespaces.max(1);
    (0..n)
        .map(|j| (namespace(j), objects / n + usize::from(j < objects % n)))
        .collect()
}

/// Objects per shard of `shards` for the namespaces of `plan`.
pub fn objects_per_shard(plan: &Plan, shards: u16) -> BTreeMap<u16, u64> {
    let of = Shards::new(u32::from(shards)).unwrap_or(Shards::ONE);
    let mut per_shard: BTreeMap<u16, u64> = of.all().map(|s| (s.0, 0)).collect();
    for (ns, count) in spread(plan.objects, plan.namespaces) {
        *per_shard.entry(of.of_namespace(&ns).0).or_default() += count as u64;
    }
    per_shard
}

/// Budgeted FerrVault requests the simulator answered so far.
pub fn budgeted(world: &World) -> u64 {
    let endpoints = world.fv.stats().total.endpoints;
    BUDGETED_ENDPOINTS.iter().filter_map(|e| endpoints.get(*e)).sum()
}

/// Writes by the replicas other than Leases in the audit, and the time of the last one.
pub fn object_writes(world: &World) -> (usize, Option<String>) {
    let audit = world.kube.audit();
    let writes: Vec<_> = audit
        .iter()
        .filter(|e| e.identity.starts_with("bench-replica-") && e.resource != "leases")
        .filter(|e| WRITE_VERBS.contains(&e.verb.as_str()))
        .collect();
    (writes.len(), writes.last().map(|e| e.time.clone()))
}

/// Waits (up to [`QUIET_TIMEOUT`]) until, for [`QUIET`], FerrVault answered no budgeted request
/// and the replicas wrote nothing but Leases (which they renew every retry period, so the
/// cluster's `resourceVersion` never stands still).
pub async fn wait_until_quiet(world: &World) {
    let marker = || (budgeted(world), object_writes(world));
    let deadline = Instant::now() + QUIET_TIMEOUT;
    let (mut last, mut since) = (marker(), Instant::now());
    while Instant::now() < deadline && since.elapsed() < QUIET {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = marker();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_should_spread_evenly_and_every_one_land_in_one_shard() {
        let plan = Plan {
            objects: 1003,
            namespaces: 10,
            concurrency: 16,
            lease: LeaseTimings::DEFAULT,
            timeout: Duration::from_secs(1),
        };
        let spread = spread(plan.objects, plan.namespaces);
        assert_eq!(spread[0], ("shard-bench-0000".to_owned(), 101));
        assert_eq!(spread[9].1, 100);
        let per_shard = objects_per_shard(&plan, 4);
        assert_eq!(per_shard.len(), 4);
        assert_eq!(per_shard.values().sum::<u64>(), 1003);
        let layout = Layout {
            replicas: 4,
            shards: 8,
        };
        assert_eq!(
            (layout.share(), layout.label()),
            (0.25, "4 replicas x 8 shards".into())
        );
        assert_eq!(
            Layout {
                replicas: 3,
                shards: 8
            }
            .share(),
            0.375
        );
    }
}
