//! The takeover of `bench shards` (issue 39 point 6): once every object is Ready and the
//! shards are settled (each held by a live replica, no replica over `ceil(S / R)`, every shard's
//! objects in its holder's store per `ferrvault_shard_objects`), the audit is cleared and the
//! replica holding shards that comes first in launch order is SIGKILLed. Then:
//!
//! - **held again**: the seconds from the kill until each of its shard Leases
//!   (`<election id>-shard-<i>`) names a survivor, read from the Leases every 10 ms;
//! - **re-listed**: which survivors listed FerrVaultSecrets again (the audit, one identity per
//!   replica) and how many objects those survivors' stores then hold
//!   (`ferrvault_shard_objects`): a re-list limited to the moved shards stores exactly their
//!   objects; a survivor restarting all its controllers stores its own shards' again too;
//! - **FerrVault requests and object writes** from the kill until the survivors are quiet
//!   with every shard stored again (a takeover is a restart with nothing due: 0 and 0).

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, ResourceExt};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use ferrvault_testkit::bench_world::World;

use super::{
    failover::lease::{LEASE_NAME, LEASE_NS, Replica, replica_of},
    metrics_text,
    shards_world::{Layout, Plan, budgeted, object_writes, objects_per_shard, wait_until_quiet},
    work::count_writes_by_resource,
};

/// What the SIGKILL of one replica cost.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TakeoverSample {
    /// The shards the killed replica held.
    pub shards: Vec<u16>,
    /// Of those, the shards a survivor held before the timeout.
    pub held_again: usize,
    /// Seconds from the kill until the last of them was held again; `None`: not all were.
    pub held_again_seconds: Option<f64>,
    /// Objects of the killed replica's shards (what a re-list of only those shards stores).
    pub moved_objects: u64,
    /// Survivors that listed FerrVaultSecrets again.
    pub relisting_replicas: usize,
    /// Objects the stores of those survivors hold afterwards (all listed again).
    pub relisted_objects: u64,
    /// Every FerrVaultSecret list request the survivors sent (pages included).
    pub secret_lists: u64,
    /// Every survivor's `ferrvault_shard_objects`, summed, once settled (all objects: every
    /// shard stored by exactly one holder).
    pub stored_objects: u64,
    /// Budgeted FerrVault requests from the kill until quiet.
    pub ferrvault_requests: u64,
    /// Writes other than Leases from the kill until quiet.
    pub object_writes: u64,
    /// The survivors' writes from the kill until quiet, by `verb resource[/subresource]`
    /// (Leases included).
    pub writes_by_resource: BTreeMap<String, u64>,
}

/// Each shard's holder, by replica index (`None`: unheld or held by a replica not listed).
async fn holders(leases: &Api<Lease>, replicas: &[Replica], shards: u16) -> BTreeMap<u16, Option<usize>> {
    let listed = leases
        .list(&Default::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    (0..shards)
        .map(|shard| {
            // One shard is the one leader-election Lease, named as before shards.
            let name = if shards == 1 {
                LEASE_NAME.to_owned()
            } else {
                format!("{LEASE_NAME}-shard-{shard}")
            };
            let holder = listed
                .iter()
                .find(|l| l.name_any() == name)
                .and_then(|l| l.spec.as_ref()?.holder_identity.clone())
                .and_then(|h| replica_of(replicas, &h));
            (shard, holder)
        })
        .collect()
}

/// `ferrvault_shard_objects` of `replica`, summed over its shards (0 when unreadable).
async fn stored(replica: &Replica) -> u64 {
    let Some(text) = async { metrics_text::scrape(replica.process.metrics()?).await }.await else {
        return 0;
    };
    metrics_text::sum(&text, "ferrvault_shard_objects", &[]) as u64
}

async fn stored_by(replicas: &[Replica]) -> Vec<u64> {
    let mut counts = Vec::with_capacity(replicas.len());
    for replica in replicas {
        counts.push(stored(replica).await);
    }
    counts
}

/// Each shard's holder once every shard is held by one of `replicas` and none holds more than
/// `ceil(S / R)`; `None` when that did not happen by `deadline`.
async fn split(
    leases: &Api<Lease>,
    replicas: &[Replica],
    shards: u16,
    deadline: Instant,
    settled: impl AsyncFn() -> bool,
) -> Option<BTreeMap<u16, usize>> {
    let cap = usize::from(shards).div_ceil(replicas.len().max(1));
    while Instant::now() < deadline {
        let held: Option<BTreeMap<u16, usize>> = holders(leases, replicas, shards)
            .await
            .into_iter()
            .map(|(s, h)| h.map(|h| (s, h)))
            .collect();
        if let Some(held) = held
            && (0..replicas.len()).all(|r| held.values().filter(|h| **h == r).count() <= cap)
            && settled().await
        {
            return Some(held);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Waits (up to `timeout`) until every shard of `layout` is held by one of `replicas`, none
/// holding more than `ceil(S / R)`.
///
/// # Errors
/// That did not happen in time.
pub async fn wait_for_split(
    world: &World,
    replicas: &[Replica],
    layout: Layout,
    timeout: Duration,
) -> Result<(), String> {
    let leases = Api::<Lease>::namespaced(world.client.clone(), LEASE_NS);
    let deadline = Instant::now() + timeout;
    split(&leases, replicas, layout.shards, deadline, async || true)
        .await
        .map(drop)
        .ok_or_else(|| format!("the {} never settled within {timeout:?}", layout.label()))
}

/// As [`wait_for_split`], and also until the replicas' stores hold every object of `plan`:
/// the holders then.
async fn settle(
    leases: &Api<Lease>,
    replicas: &[Replica],
    layout: Layout,
    plan: &Plan,
) -> Option<BTreeMap<u16, usize>> {
    let objects = plan.objects as u64;
    let stored_all = async || stored_by(replicas).await.iter().sum::<u64>() == objects;
    split(
        leases,
        replicas,
        layout.shards,
        Instant::now() + plan.timeout,
        stored_all,
    )
    .await
}

/// Kills one replica of `replicas` (removed from it) and measures the takeover.
///
/// # Errors
/// The shards never settled before the kill, or no replica held a shard.
pub async fn measure(
    world: &World,
    replicas: &mut Vec<Replica>,
    layout: Layout,
    plan: &Plan,
) -> Result<TakeoverSample, String> {
    let leases = Api::<Lease>::namespaced(world.client.clone(), LEASE_NS);
    let owners = settle(&leases, replicas, layout, plan)
        .await
        .ok_or("the shards never settled before the kill")?;
    let victim = *owners.values().min().ok_or("no replica holds a shard")?;
    let shards: Vec<u16> = owners
        .iter()
        .filter(|(_, r)| **r == victim)
        .map(|(s, _)| *s)
        .collect();
    let per_shard = objects_per_shard(plan, layout.shards);
    let moved_objects = shards.iter().map(|s| per_shard[s]).sum();
    world.kube.clear_audit();
    let ferrvault_before = budgeted(world);
    let mut killed = replicas.remove(victim);
    let killed_at = Instant::now();
    killed.process.process.sigkill();
    let mut held_at: BTreeMap<u16, f64> = BTreeMap::new();
    let deadline = killed_at + plan.timeout;
    while held_at.len() < shards.len() && Instant::now() < deadline {
        let now = holders(&leases, replicas, layout.shards).await;
        for shard in &shards {
            if now[shard].is_some() {
                held_at
                    .entry(*shard)
                    .or_insert_with(|| killed_at.elapsed().as_secs_f64());
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    settle(&leases, replicas, layout, plan).await;
    wait_until_quiet(world).await;
    let audit = world.kube.audit();
    let lists = |name: &str| {
        audit
            .iter()
            .filter(|e| e.identity == name && e.verb == "list" && e.resource == "ferrvaultsecrets")
            .count() as u64
    };
    let relisting: BTreeSet<usize> = (0..replicas.len())
        .filter(|r| lists(&replicas[*r].name) > 0)
        .collect();
    let counts = stored_by(replicas).await;
    Ok(TakeoverSample {
        held_again: held_at.len(),
        held_again_seconds: (held_at.len() == shards.len())
            .then(|| held_at.values().copied().fold(0.0, f64::max)),
        shards,
        moved_objects,
        relisting_replicas: relisting.len(),
        relisted_objects: relisting.iter().map(|r| counts[*r]).sum(),
        secret_lists: replicas.iter().map(|r| lists(&r.name)).sum(),
        stored_objects: counts.iter().sum(),
        ferrvault_requests: budgeted(world) - ferrvault_before,
        object_writes: object_writes(world).0 as u64,
        writes_by_resource: replicas.iter().fold(BTreeMap::new(), |mut all, r| {
            for (what, count) in count_writes_by_resource(&audit, &r.name) {
                *all.entry(what).or_default() += count;
            }
            all
        }),
    })
}
