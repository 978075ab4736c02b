//! Issue 11, item 5: a leader that loses its Lease in the middle of a reconcile (its FerrVault
//! reveal held by the simulator while its Lease renewals fail) writes nothing once its fence
//! has lapsed, so nothing of its lands after another replica may lead; the standby then takes
//! over and syncs everything, the held object included.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    audit::{between, is_object_write, lease_writes, time_of},
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::secret_spec,
    operator::{LEADER_ELECT, LEASE_DURATION, OperatorProcess, RENEW_DEADLINE},
    poll_until,
};
use ferrvault_operator::api::SecretSelector;
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};

const SCENARIO: &str = "fencing";

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_losing_its_lease_mid_reconcile_should_write_nothing_past_its_fence_and_a_standby_should_sync()
 {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.healthy_connection().await;
    // They name their keys, so the answer their reveals leave for their wave does not cover
    // `held` (which wants every key): `held`'s reveal reaches FerrVault however soon it comes.
    let mut names = Vec::new();
    for i in 0..3 {
        let name = format!("app-{i:03}");
        let mut spec = secret_spec(CONNECTION, VAULT);
        spec.selector = Some(SecretSelector {
            names: vec!["API_KEY".into(), "DB_URL".into()],
        });
        cluster.create_fvs(&name, spec).await;
        names.push(name);
    }
    let leader = OperatorProcess::launch(&cluster, SCENARIO, "operator-0", &LEADER_ELECT);
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;
    let standby = OperatorProcess::launch(&cluster, SCENARIO, "operator-1", &LEADER_ELECT);
    poll_until(
        "operator-0 leads, operator-1 is a ready standby",
        Duration::from_secs(30),
        || async {
            let (status, body) = standby.probe("/readyz?verbose").await;
            if leader.is_leader().await && status == 200 && body.contains("[+]role ok: standby") {
                Ok(())
            } else {
                Err(format!("standby /readyz {status}: {body}"))
            }
        },
    )
    .await;

    // A reveal of the leader, held by FerrVault in the middle of a reconcile.
    cluster
        .fv
        .faults()
        .set(Endpoint::Reveal, FaultSpec::default().with_hang());
    let before = cluster.vault_requests();
    cluster.create_fvs("held", secret_spec(CONNECTION, VAULT)).await;
    names.push("held".into());
    poll_until(
        "the leader's reveal for `held` reached FerrVault",
        Duration::from_secs(30),
        || async {
            let now = cluster.vault_requests();
            if now > before {
                Ok(())
            } else {
                Err(format!("{now} requests"))
            }
        },
    )
    .await;

    // Its Lease renewals fail from now on; the standby takes over once the lease expires.
    cluster
        .kube
        .faults()
        .fail_for("operator-0", Some("update"), Some("leases"), 500);
    poll_until("operator-1 leads", Duration::from_secs(30), || async {
        if standby.is_leader().await {
            Ok(())
        } else {
            Err("not yet".to_owned())
        }
    })
    .await;
    // Only now does the held reveal answer: without the fence the old leader would write it.
    cluster.fv.faults().clear(Endpoint::Reveal);
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;
    for name in &names {
        cluster.assert_synced_target(name).await;
    }

    let audit = cluster.kube.audit();
    let last_renewal = lease_writes(&audit, "operator-0")
        .map(time_of)
        .max()
        .expect("operator-0 wrote its Lease");
    let acquired = lease_writes(&audit, "operator-1")
        .map(time_of)
        .min()
        .expect("operator-1 acquired the Lease");
    let fence = last_renewal + RENEW_DEADLINE;
    let late: Vec<_> = audit
        .iter()
        .filter(|e| e.identity == "operator-0" && is_object_write(e) && time_of(e) >= fence)
        .map(|e| {
            format!(
                "{} {} {}/{} at {}",
                e.verb, e.resource, e.namespace, e.name, e.time
            )
        })
        .collect();
    assert!(
        late.is_empty(),
        "operator-0 wrote after its fence ({fence}: last renewal {last_renewal} + renew deadline): {late:#?}"
    );
    assert!(
        between(last_renewal, acquired) >= LEASE_DURATION,
        "operator-1 acquired {:?} after operator-0's last renewal, before the lease ran out",
        between(last_renewal, acquired)
    );
    eprintln!(
        "scenario {SCENARIO}: operator-0 last renewed at {last_renewal}, its fence closed at {fence}, \
         operator-1 acquired at {acquired}"
    );

    finish(SCENARIO, started, &cluster, vec![leader, standby], &[]).await;
}
