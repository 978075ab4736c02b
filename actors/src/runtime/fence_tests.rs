//! The write fence against the Kubernetes simulator: a leader whose Lease renewals fail while
//! one reconcile is blocked mid-write (ignoring cancellation) and another waits on its token.
//! Another replica takes over; the blocked reconcile's next write is refused, the waiting one
//! was cancelled when the fence lapsed, and the simulator's audit shows no write of the old
//! leader after the new one acquired the Lease.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use ferrvault_sim::kube::{AuditEntry, KubeSim};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::{
    fixtures::{Running, Seed, quick_builder},
    *,
};
use crate::{
    fence_layer::FenceLayer,
    key::ObjectKey,
    leadership::LeaderElectionConfig,
    lease_rules::Timings,
    reconciler::{Outcome, ReconcileContext, Reconciler},
    test_support::eventually,
};

const HANG: Duration = Duration::from_secs(30);
/// Writes stop 1.5s after the last renewal; nobody may acquire before 2s after it.
const TIMINGS: Timings = Timings {
    lease_duration: Duration::from_secs(2),
    renew_deadline: Duration::from_millis(1500),
    retry_period: Duration::from_millis(300),
};
const NS: &str = "fence";
const LEASE: &str = "fence-test";

/// Replica A's reconciler: `blocked` writes, then holds its thread until released, then
/// writes again; `cooperative` waits for its cancellation and records when it came.
#[derive(Default)]
struct Stalled {
    client: Option<kube::Client>,
    first_write: Mutex<Option<Result<(), String>>>,
    release: AtomicBool,
    second_write: Arc<Mutex<Option<Result<(), String>>>>,
    cancelled_at: Arc<Mutex<Option<Timestamp>>>,
}

impl Reconciler for Stalled {
    async fn reconcile(&self, key: &ObjectKey, ctx: &ReconcileContext) -> Outcome {
        let client = self.client.clone().expect("a client");
        match key.name.as_str() {
            "blocked" => {
                let first = stamp(&client, "replica-a-first").await;
                *self.first_write.lock().unwrap() = Some(first);
                // Ignores cancellation and holds its runtime thread, like a stuck call. In place, so
                // tokio first hands the tasks queued on this worker (its LIFO slot cannot be
                // stolen) to another thread: without that, a task this one woke last (such as the
                // client's connection) waited for the release too, and the test hung.
                tokio::task::block_in_place(|| {
                    while !self.release.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                });
                // Once it is on its way nothing can recall it: the runtime cancelling this
                // reconcile (the fence lapsed long ago) does not stop the task sending it.
                let result = self.second_write.clone();
                let write = tokio::spawn(async move {
                    let second = stamp(&client, "replica-a-second").await;
                    *result.lock().unwrap() = Some(second);
                });
                let _ = write.await;
            }
            _ => {
                let (token, seen) = (ctx.cancel.clone(), self.cancelled_at.clone());
                tokio::spawn(async move {
                    token.cancelled().await;
                    // The first cancellation counts (a retry while fenced is cancelled again).
                    seen.lock().unwrap().get_or_insert_with(Timestamp::now);
                });
                std::future::pending::<()>().await;
            }
        }
        Outcome::done()
    }
}

/// Replica B's reconciler: stamps and is done.
struct Stamper(kube::Client);

impl Reconciler for Stamper {
    async fn reconcile(&self, _: &ObjectKey, _: &ReconcileContext) -> Outcome {
        match stamp(&self.0, "replica-b").await {
            Ok(()) => Outcome::done(),
            Err(message) => Outcome::Error {
                reason: "stamp_failed",
                message,
            },
        }
    }
}

/// Patch an annotation `writer` onto the shared ConfigMap.
async fn stamp(client: &kube::Client, writer: &str) -> Result<(), String> {
    let patch = Patch::Merge(json!({"metadata": {"annotations": {writer: "wrote"}}}));
    Api::<ConfigMap>::namespaced(client.clone(), NS)
        .patch("shared", &PatchParams::default(), &patch)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

fn election(identity: &str) -> LeaderElection {
    LeaderElection::Lease(LeaderElectionConfig {
        enabled: true,
        lease_namespace: NS.into(),
        lease_name: LEASE.into(),
        identity: identity.into(),
        field_manager: "fence-test".into(),
        timings: TIMINGS,
    })
}

fn keys() -> Seed {
    Seed::keys(&[
        ObjectKey::namespaced("test", NS, "blocked"),
        ObjectKey::namespaced("test", NS, "cooperative"),
    ])
}

fn time_of(entry: &AuditEntry) -> Timestamp {
    entry.time.parse().expect("audit times are RFC 3339")
}

fn writes_of<'a>(
    audit: &'a [AuditEntry],
    identity: &'a str,
    resource: &'a str,
) -> impl Iterator<Item = Timestamp> + 'a {
    audit
        .iter()
        .filter(move |e| {
            e.identity == identity
                && e.resource == resource
                && e.code < 300
                && ["create", "update", "patch"].contains(&e.verb.as_str())
        })
        .map(time_of)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 6)]
async fn a_leader_that_cannot_renew_should_stop_writing_before_another_replica_acquires() {
    let sim = KubeSim::start().await.expect("simulator");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap();
    Api::<Namespace>::all(sim.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "shared"}})).unwrap();
    Api::<ConfigMap>::namespaced(sim.client(), NS)
        .create(&PostParams::default(), &cm)
        .await
        .expect("config map");

    // Replica A writes through the fenced client, as the operator does.
    let fence = Fence::new();
    let client_a = FenceLayer::new(fence.clone())
        .exempt_lease(NS, LEASE)
        .wrap(sim.client_as("replica-a"));
    let stalled = Arc::new(Stalled {
        client: Some(client_a.clone()),
        ..Stalled::default()
    });
    let rec = stalled.clone();
    let a = Running::start(|reg| {
        quick_builder(rec, reg)
            .reconcile_timeout(Duration::from_secs(60))
            .namespace_share(2)
            .client(client_a)
            .fence(fence)
            .leader_election(election("replica-a"))
            .watch(Box::new(keys()))
    });
    eventually(
        HANG,
        "A leading, its blocked reconcile past its first write",
        || a.lease.borrow().role == Role::Leader && stalled.first_write.lock().unwrap().is_some(),
    )
    .await;
    assert_eq!(
        *stalled.first_write.lock().unwrap(),
        Some(Ok(())),
        "A may write while it renews"
    );
    let client_b = sim.client_as("replica-b");
    let b = Running::start(|reg| {
        quick_builder(Arc::new(Stamper(client_b.clone())), reg)
            .client(client_b)
            .leader_election(election("replica-b"))
            .watch(Box::new(keys()))
    });
    eventually(HANG, "B a standby that has seen A's lease", || {
        b.lease.borrow().holder.as_deref() == Some("replica-a")
    })
    .await;

    // A loses its path to the Lease; B takes over once A's lease expires.
    sim.faults()
        .fail_for("replica-a", Some("update"), Some("leases"), 500);
    eventually(HANG, "B leading and writing", || {
        b.lease.borrow().role == Role::Leader
            && writes_of(&sim.audit(), "replica-b", "configmaps")
                .next()
                .is_some()
    })
    .await;
    // Only now does A's blocked reconcile try its next write.
    stalled.release.store(true, Ordering::Release);
    eventually(HANG, "A's blocked reconcile attempting its second write", || {
        stalled.second_write.lock().unwrap().is_some()
    })
    .await;

    let second = stalled.second_write.lock().unwrap().clone().expect("attempted");
    assert!(
        second
            .as_ref()
            .is_err_and(|e| e.contains("cannot prove it still holds the leader Lease")),
        "A's write after losing the Lease must be refused by the fence: {second:?}"
    );
    let audit = sim.audit();
    let a_last_renewal = writes_of(&audit, "replica-a", "leases").max().expect("A renewed");
    let b_acquired = writes_of(&audit, "replica-b", "leases")
        .min()
        .expect("B acquired");
    let a_writes: Vec<Timestamp> = writes_of(&audit, "replica-a", "configmaps").collect();
    assert_eq!(a_writes.len(), 1, "only A's first write landed: {a_writes:?}");
    let bound = a_last_renewal + TIMINGS.renew_deadline;
    assert!(
        a_writes.iter().all(|w| *w < bound && *w < b_acquired),
        "A wrote at {a_writes:?}, after the fence ({bound}) or B's acquisition ({b_acquired})"
    );
    assert!(
        b_acquired >= a_last_renewal + TIMINGS.lease_duration,
        "B acquired at {b_acquired}, before A's lease could expire (last renewal {a_last_renewal})"
    );
    let cancelled = stalled
        .cancelled_at
        .lock()
        .unwrap()
        .expect("A's waiting reconcile was cancelled");
    assert!(
        cancelled < b_acquired,
        "A's waiting reconcile was cancelled at {cancelled}, after B acquired at {b_acquired}"
    );

    a.shutdown().await.expect("A stops gracefully");
    b.shutdown().await.expect("B stops gracefully");
    sim.shutdown().await;
}
