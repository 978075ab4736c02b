//! Three shard leadership actors sharing the Kubernetes simulator's Leases.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::core::v1::Namespace;
use kube::{Api, api::PostParams};
use serde_json::json;

use super::*;
use crate::{
    fence::Allowance,
    lease_rules::Timings,
    shard_source::ShardLeases,
    spawn::Spawned,
    test_support::{eventually, spawner},
};

const HANG: Duration = Duration::from_secs(30);
const TIMINGS: Timings = Timings {
    lease_duration: Duration::from_secs(2),
    renew_deadline: Duration::from_millis(1500),
    retry_period: Duration::from_millis(300),
};
const SHARDS: u32 = 6;

/// One replica: its actor, its fences, what it publishes.
struct Replica {
    actor: Spawned,
    fences: Arc<[Fence]>,
    held: watch::Receiver<BTreeSet<ShardId>>,
}

/// A replica started through the runtime's adapter, [`ShardLeases`].
async fn replica(sim: &KubeSim, pod: &str) -> Replica {
    let shards = Shards::new(SHARDS).expect("valid");
    let config = LeaderElectionConfig {
        enabled: true,
        lease_namespace: "elect".into(),
        lease_name: "shards-test".into(),
        identity: format!("{pod}_1"),
        field_manager: "shards-test".into(),
        timings: TIMINGS,
    };
    let leases = ShardLeases::new(config, pod, shards, sim.client_as(pod));
    let (spawner, _, _) = spawner();
    let (actor, held) = leases.spawn(&spawner).await.expect("spawned");
    let fences = shards.all().map(|shard| leases.fence(shard)).collect();
    Replica { actor, fences, held }
}

/// Samples every replica's fences every few milliseconds and records any shard open on two.
fn watch_for_two_holders(fences: Arc<Mutex<Vec<Arc<[Fence]>>>>) -> Arc<Mutex<Vec<String>>> {
    let violations = Arc::new(Mutex::new(Vec::new()));
    let found = violations.clone();
    tokio::spawn(async move {
        loop {
            let now = Instant::now();
            for shard in 0..usize::try_from(SHARDS).expect("small") {
                let open = (fences.lock().unwrap().iter())
                    .filter(|f| f[shard].allowance(now) != Allowance::Refused)
                    .count();
                if open > 1 {
                    found
                        .lock()
                        .unwrap()
                        .push(format!("shard {shard}: {open} open fences"));
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    violations
}

/// Whether `replicas` hold every shard between them, `per_replica` each, and none twice.
fn is_split(replicas: &[&Replica], per_replica: usize) -> bool {
    let sets: Vec<BTreeSet<ShardId>> = replicas.iter().map(|r| r.held.borrow().clone()).collect();
    let union: BTreeSet<ShardId> = sets.iter().flatten().copied().collect();
    sets.iter().all(|s| s.len() == per_replica) && union.len() == usize::try_from(SHARDS).expect("small")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_should_split_the_shards_and_move_a_killed_ones_within_the_lease() {
    let sim = KubeSim::start().await.expect("simulator");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "elect"}})).unwrap();
    Api::<Namespace>::all(sim.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let (a, b, c) = (
        replica(&sim, "pod-a").await,
        replica(&sim, "pod-b").await,
        replica(&sim, "pod-c").await,
    );
    let all_fences = Arc::new(Mutex::new(vec![
        a.fences.clone(),
        b.fences.clone(),
        c.fences.clone(),
    ]));
    let violations = watch_for_two_holders(all_fences);

    eventually(HANG, "three replicas hold two shards each", || {
        is_split(&[&a, &b, &c], 2)
    })
    .await;
    // No churn: for a lease duration of renewals nothing moves.
    let before: Vec<BTreeSet<ShardId>> = [&a, &b, &c].iter().map(|r| r.held.borrow().clone()).collect();
    tokio::time::sleep(TIMINGS.lease_duration).await;
    let after: Vec<BTreeSet<ShardId>> = [&a, &b, &c].iter().map(|r| r.held.borrow().clone()).collect();
    assert_eq!(before, after, "shards moved while nothing changed");

    // SIGKILL: nothing released; the others take a's shards once its Leases expire.
    let killed_at = Instant::now();
    a.actor.cell().kill();
    eventually(HANG, "two replicas hold three shards each", || {
        is_split(&[&b, &c], 3)
    })
    .await;
    let took = killed_at.elapsed();
    assert!(
        took <= TIMINGS.lease_duration + TIMINGS.retry_period + Duration::from_secs(1),
        "held again after {took:?}"
    );
    assert!(
        took >= TIMINGS.lease_duration / 2,
        "taken before a's Leases could expire: {took:?}"
    );

    // A graceful exit: b frees its shards, c takes them at its next round.
    let released_at = Instant::now();
    ShardLeases::release(&b.actor, Duration::from_secs(5)).await;
    let now = Instant::now();
    assert!(
        b.fences.iter().all(|f| f.allowance(now) == Allowance::Refused),
        "every fence of a released replica is closed"
    );
    b.actor.cell().stop(None);
    eventually(HANG, "one replica holds every shard", || is_split(&[&c], 6)).await;
    let took = released_at.elapsed();
    assert!(
        took <= TIMINGS.retry_period * 3 + Duration::from_secs(1),
        "taken after {took:?}"
    );

    let violations = violations.lock().unwrap().clone();
    assert!(violations.is_empty(), "two holders at once: {violations:?}");
    c.actor.cell().stop(None);
    sim.shutdown().await;
}
