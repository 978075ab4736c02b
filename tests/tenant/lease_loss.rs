//! Lease loss in the middle of a reconcile, as the chart runs replicas: both are the one
//! ServiceAccount the chart renders, under its RBAC. The leader freezes (SIGSTOP: a long GC
//! pause, a frozen VM) while its FerrVault reveal for the victim's `held` is in flight; the standby
//! acquires the Lease once it expired and syncs `held`; then the old leader runs again with the
//! reveal's answer waiting in its socket. Its fence closed at its last renewal plus the renew
//! deadline, before the standby could acquire, so nothing it sends after it resumes is a write:
//! the target the new leader wrote stays byte-for-byte as it is.
//!
//! The replicas share one identity, so the audit cannot tell their requests apart; time does: the
//! frozen replica sends nothing, the new leader is done with `held` before the old one resumes.
//! `tests/scenarios/scenario_fencing.rs` checks the same bound with per-replica identities and
//! renewals refused by the API server instead of a pause.

use std::time::Duration;

use ferrvault_sim::kube::AuditEntry;
use ferrvault_sim::{
    ferrvault::{Endpoint, FaultSpec},
    testkit::poll_until,
};
use jiff::{SignedDuration, Timestamp};

use crate::harness::{
    Launch, Operator, VICTIM, VICTIM_VAULT, World, finish,
    operator::{LEASE_DURATION, RENEW_DEADLINE},
    victim_syncs,
};

/// Verbs that change an object.
const WRITE_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// The replica whose `/readyz` says `role`, waiting up to 30s; panics if neither or both do.
async fn the_one<'a>(replicas: [&'a Operator; 2], role: &str) -> &'a Operator {
    poll_until(
        &format!("exactly one replica is the {role}"),
        Duration::from_secs(30),
        || async {
            let mut matching = Vec::new();
            for replica in replicas {
                if replica.role().await.as_deref() == Some(role) {
                    matching.push(replica);
                }
            }
            match matching.as_slice() {
                [one] => Ok(*one),
                other => Err(format!("{} replicas", other.len())),
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_frozen_mid_reconcile_should_write_nothing_once_it_resumes_past_its_fence() {
    let world = World::start().await;
    let launch = |pod: &str| Launch::new().insecure_http().short_lease().replica(pod);
    let first = launch("operator-0").start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let second = launch("operator-1").start(&world);
    let leader = the_one([&first, &second], "leader").await;
    let standby = the_one([&first, &second], "standby").await;

    // The leader's reveal for `held`, held by FerrVault in the middle of the reconcile.
    world
        .fv
        .faults()
        .set(Endpoint::Reveal, FaultSpec::default().with_hang());
    let revealed = world
        .fv
        .token_stats("victim")
        .endpoints
        .get("reveal")
        .copied()
        .unwrap_or(0);
    let victim = world.victim();
    victim.sync("held", "fv", VICTIM_VAULT, None).await;
    poll_until(
        "the leader's reveal for held reached FerrVault",
        Duration::from_secs(30),
        || async {
            let now = world
                .fv
                .token_stats("victim")
                .endpoints
                .get("reveal")
                .copied()
                .unwrap_or(0);
            if now > revealed {
                Ok(())
            } else {
                Err(format!("{now} requests"))
            }
        },
    )
    .await;

    leader.pause();
    let frozen_at = Timestamp::now();
    poll_until("the standby leads", Duration::from_secs(30), || async {
        match standby.role().await.as_deref() {
            Some("leader") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    // Only now does FerrVault answer, the frozen leader's reveal included.
    world.fv.faults().clear(Endpoint::Reveal);
    victim.wait_secret("held", "Synced").await;
    standby
        .wait_timer(&format!("ferrvaultsecret:{VICTIM}/held"))
        .await;
    let held = world.secret(VICTIM, "held").await;
    let db = world.secret(VICTIM, "db").await;

    let resumed_at = Timestamp::now();
    leader.resume();
    poll_until(
        "the old leader stepped down and runs no controller",
        Duration::from_secs(30),
        || async {
            let role = leader.role().await;
            let queues = leader.running_queues().await;
            if role.as_deref() == Some("standby") && queues == 0 {
                Ok(())
            } else {
                Err(format!("role {role:?}, {queues} work queues running"))
            }
        },
    )
    .await;

    // The timeline, from the audit. Frozen, the old leader sends nothing: the first Lease write
    // a renew deadline after the freeze is the new leader's acquisition, the one before it the
    // old leader's last renewal (answered times: its fence, counted from then, is if anything
    // later than the real one).
    let audit: Vec<(Timestamp, AuditEntry)> = world
        .kube
        .audit()
        .into_iter()
        .filter(|e| e.identity == world.operator_identity)
        .map(|e| (e.time.parse().expect("audit time"), e))
        .collect();
    let lease_writes = || {
        audit
            .iter()
            .filter(|(_, e)| e.resource == "leases" && WRITE_VERBS.contains(&e.verb.as_str()) && e.code < 300)
            .map(|(at, _)| *at)
    };
    let acquired = lease_writes()
        .filter(|at| *at >= frozen_at + RENEW_DEADLINE)
        .min()
        .expect("the new leader acquired the Lease");
    let last_renewal = lease_writes()
        .filter(|at| *at < acquired)
        .max()
        .expect("the old leader renewed the Lease");
    assert!(
        acquired.duration_since(last_renewal) >= SignedDuration::try_from(LEASE_DURATION).expect("small"),
        "acquired at {acquired}, before the lease of the renewal at {last_renewal} ran out"
    );
    let fence = last_renewal + RENEW_DEADLINE;
    let late: Vec<String> = audit
        .iter()
        .filter(|(at, e)| {
            WRITE_VERBS.contains(&e.verb.as_str())
                && e.resource != "leases"
                && ((fence..acquired).contains(at) || *at >= resumed_at)
        })
        .map(|(_, e)| {
            format!(
                "{} {} {} {}/{} at {}",
                e.code, e.verb, e.resource, e.namespace, e.name, e.time
            )
        })
        .collect();
    assert!(
        late.is_empty(),
        "writes of the old leader past its fence ({fence}), before the new leader acquired \
         ({acquired}) or after the old one resumed ({resumed_at}): {late:#?}"
    );
    world.assert_unchanged(&held).await;
    world.assert_unchanged(&db).await;

    // The new leader keeps syncing the tenants.
    victim.sync("after", "fv", VICTIM_VAULT, None).await;
    victim.wait_secret("after", "Synced").await;
    finish(&world, &first, &[]).await;
    finish(&world, &second, &[]).await;
}
