//! Three runtimes sharing one simulator with Lease leader election.

use std::{sync::Arc, time::Duration};

use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio::time::Instant;

use super::{
    fixtures::{Running, Seed},
    *,
};
use crate::{
    key::ObjectKey,
    lease_rules::Timings,
    reconciler::{Outcome, ReconcileContext, Reconciler},
    seams::Role,
    test_support::eventually,
};

const HANG: Duration = Duration::from_secs(30);
const TIMINGS: Timings = Timings {
    lease_duration: Duration::from_secs(2),
    renew_deadline: Duration::from_millis(1500),
    retry_period: Duration::from_millis(300),
};

/// Stamps its identity on the ConfigMap at every reconcile, and comes back every 100ms.
struct Stamper {
    client: kube::Client,
    identity: String,
}

impl Reconciler for Stamper {
    async fn reconcile(&self, key: &ObjectKey, _: &ReconcileContext) -> Outcome {
        let api: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), key.namespace.as_deref().unwrap_or_default());
        let patch = Patch::Merge(json!({"metadata": {"annotations": {"writer": self.identity}}}));
        match api.patch(&key.name, &PatchParams::default(), &patch).await {
            Ok(_) => Outcome::done_refresh_in(Duration::from_millis(100)),
            Err(_) => Outcome::Error {
                reason: "patch_failed",
                message: "patch failed".into(),
            },
        }
    }
}

fn replica(sim: &KubeSim, name: &str) -> Running {
    let client = sim.client_as(name);
    let config = crate::leadership::LeaderElectionConfig {
        enabled: true,
        lease_namespace: "elect".into(),
        lease_name: "runtime-test".into(),
        identity: name.into(),
        field_manager: "runtime-test".into(),
        timings: TIMINGS,
    };
    let stamper = Arc::new(Stamper {
        client: client.clone(),
        identity: name.into(),
    });
    Running::start(|reg| {
        super::fixtures::quick_builder(stamper, reg)
            .client(client)
            .leader_election(LeaderElection::Lease(config))
            .watch(Box::new(Seed::keys(&[ObjectKey::namespaced(
                "test", "elect", "shared",
            )])))
    })
}

fn leaders(replicas: &[(&str, &Running)]) -> Vec<String> {
    replicas
        .iter()
        .filter(|(_, r)| r.lease.borrow().role == Role::Leader)
        .map(|(n, _)| n.to_string())
        .collect()
}

/// Wait until exactly one of `replicas` leads, checking that never two do; returns it.
async fn one_leader(replicas: &[(&str, &Running)], within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let now = leaders(replicas);
        assert!(now.len() <= 1, "two replicas lead at once: {now:?}");
        if let [one] = now.as_slice() {
            return one.clone();
        }
        assert!(Instant::now() < deadline, "no replica led within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_runtimes_should_keep_one_leader_and_hand_over_on_shutdown_and_crash() {
    let sim = KubeSim::start().await.expect("simulator");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "elect"}})).unwrap();
    Api::<Namespace>::all(sim.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "shared"}})).unwrap();
    Api::<ConfigMap>::namespaced(sim.client(), "elect")
        .create(&PostParams::default(), &cm)
        .await
        .expect("cm");

    let names = ["replica-a", "replica-b", "replica-c"];
    let mut replicas: Vec<Option<Running>> = names.iter().map(|n| Some(replica(&sim, n))).collect();
    let first = one_leader(&live(&names, &replicas), HANG).await;
    // Stable: for a few renewals nobody else takes over.
    let end = Instant::now() + TIMINGS.lease_duration;
    while Instant::now() < end {
        assert_eq!(
            leaders(&live(&names, &replicas)),
            vec![first.clone()],
            "leadership must stay put"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let standby = names.iter().position(|n| *n != first).unwrap();
    let standby_health = replicas[standby].as_ref().unwrap().health.liveness();
    assert!(standby_health.ok, "{}", standby_health.body);

    // Graceful shutdown: the lease is released, a standby takes over within about one retry period.
    let i = names.iter().position(|n| *n == first).unwrap();
    let stopped_at = Instant::now();
    replicas[i]
        .take()
        .unwrap()
        .shutdown()
        .await
        .expect("graceful shutdown");
    let second = one_leader(&live(&names, &replicas), HANG).await;
    let took = stopped_at.elapsed();
    assert!(
        // One retry period plus the release round trip; the slack absorbs a loaded CI machine.
        took <= TIMINGS.retry_period * 2 + Duration::from_millis(1200),
        "takeover after shutdown took {took:?}"
    );

    let writes_by = |who: &str| {
        let who = who.to_owned();
        let sim = &sim;
        move || {
            sim.audit()
                .iter()
                .any(|e| e.verb == "patch" && e.resource == "configmaps" && e.identity == who)
        }
    };
    eventually(HANG, "the second leader writes", writes_by(&second)).await;

    // Crash: nothing is released; another replica leads after the lease expires.
    let j = names.iter().position(|n| *n == second).unwrap();
    let crashed_at = Instant::now();
    replicas[j].as_ref().unwrap().kill();
    let crashed = replicas[j].take().unwrap();
    let third = one_leader(&live(&names, &replicas), HANG).await;
    let took = crashed_at.elapsed();
    assert!(
        took <= TIMINGS.lease_duration + TIMINGS.retry_period + Duration::from_secs(1),
        "takeover after a crash took {took:?}"
    );
    assert!(
        took >= TIMINGS.lease_duration / 2,
        "took over before the crashed leader's lease could expire: {took:?}"
    );
    eventually(HANG, "the new leader writes", writes_by(&third)).await;

    // The audit log: writers form one block each, in leadership order; never interleaved.
    let writers: Vec<String> = sim
        .audit()
        .into_iter()
        .filter(|e| e.verb == "patch" && e.resource == "configmaps" && e.code < 300)
        .map(|e| e.identity)
        .collect();
    let mut blocks: Vec<String> = writers.clone();
    blocks.dedup();
    assert_eq!(
        blocks,
        vec![first, second, third],
        "writes from two identities overlapped: {writers:?}"
    );
    drop(crashed);
    for r in replicas.into_iter().flatten() {
        r.shutdown().await.expect("graceful shutdown");
    }
    sim.shutdown().await;
}

fn live<'a>(names: &[&'static str], replicas: &'a [Option<Running>]) -> Vec<(&'static str, &'a Running)> {
    names
        .iter()
        .zip(replicas)
        .filter_map(|(n, r)| r.as_ref().map(|r| (*n, r)))
        .collect()
}
