//! Scenario 5 of issue 7: failover between real processes. Killing the leader with SIGKILL
//! hands the Lease to a standby within lease duration + retry period; a SIGTERM'd leader
//! releases it, so a standby takes over within one retry period. Nothing is left unsynced and
//! no two replicas write in overlapping terms.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    audit::{assert_no_overlapping_terms, between, lease_writes, time_of, writer_terms},
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::secret_spec,
    operator::{LEADER_ELECT, LEASE_DURATION, OperatorProcess, RETRY_PERIOD},
    poll_until,
};
use jiff::Timestamp;

/// client-go's jitter: a candidate retries within 1.2 × the retry period.
const JITTERED_RETRY: Duration = Duration::from_millis(1200);
/// Scheduling slack on a shared 2-core machine. After SIGKILL it is the only slack in the
/// takeover bound, measured from the standby's first read of the last renewal: that read starts
/// the standby's expiry clock, its reads come one retry period apart (no jitter in the runtime's
/// leadership ticks), and the read one lease duration later may land a hair before the expiry,
/// so the next one, a retry period later, acquires. What is left is the drift of five ticks and
/// one read and one write on a loaded machine.
const SLACK: Duration = Duration::from_millis(500);
/// From winning the Lease to every object synced again: the new leader's watchers list, the
/// first pass (11 objects, slotted 10ms apart) runs and each reconcile reveals and writes. The
/// Lease itself may legitimately stay unavailable for the whole lease duration after the last
/// renewal, so the "lease duration + retry period" is the takeover bound and resuming
/// gets this budget on top.
const RESUME: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread")]
async fn a_standby_should_take_over_after_a_kill_and_after_a_sigterm_and_leave_nothing_unsynced() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.healthy_connection().await;
    let mut names = cluster.create_many("app", 10, CONNECTION).await;
    let mut operators: Vec<OperatorProcess> = (0..3)
        .map(|i| OperatorProcess::launch(&cluster, "5-failover", &format!("operator-{i}"), &LEADER_ELECT))
        .collect();
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;
    let first = leader(&operators, &[]).await;

    // SIGKILL: the Lease must expire before anyone else may take it.
    let killed_at = Timestamp::now();
    operators[first].kill9();
    assert_eq!(
        operators[first].wait_exit(Duration::from_secs(10)),
        None,
        "killed by a signal"
    );
    cluster
        .create_fvs("after-kill", secret_spec(CONNECTION, VAULT))
        .await;
    names.push("after-kill".into());
    let second = leader(&operators, &[first]).await;
    let audit = cluster.kube.audit();
    let last_renew = lease_writes(&audit, &operators[first].name)
        .map(time_of)
        .max()
        .expect("the first leader wrote its Lease");
    // The standby judges expiry from when it first saw the last renewal (client-go's observed
    // time, `actors/src/lease_rules.rs`), not from the renewal: measure from that read.
    let observed = first_lease_read_after(&audit, &operators[second].name, last_renew);
    let acquired = first_lease_write_after(&audit, &operators[second].name, last_renew);
    let takeover = between(observed, acquired);
    assert!(
        takeover >= LEASE_DURATION,
        "after SIGKILL the standby acquired the Lease {takeover:?} after it saw the last renewal, \
         before the lease duration ({LEASE_DURATION:?}) ran out"
    );
    let bound = LEASE_DURATION + RETRY_PERIOD + SLACK;
    assert!(
        takeover <= bound,
        "after SIGKILL the standby acquired the Lease {takeover:?} after it saw the last renewal (bound {bound:?})"
    );
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;
    let kill_to_sync = between(killed_at, Timestamp::now());
    let bound = LEASE_DURATION + JITTERED_RETRY + SLACK + RESUME;
    assert!(
        kill_to_sync <= bound,
        "after SIGKILL every object was synced again {kill_to_sync:?} after the kill (bound {bound:?})"
    );

    // SIGTERM: the leader releases the Lease on its way out.
    operators[second].sigterm();
    assert_eq!(
        operators[second].wait_exit(Duration::from_secs(20)),
        Some(0),
        "a SIGTERM'd leader exits 0"
    );
    let third = leader(&operators, &[first, second]).await;
    cluster
        .create_fvs("after-term", secret_spec(CONNECTION, VAULT))
        .await;
    names.push("after-term".into());
    let audit = cluster.kube.audit();
    let released = lease_writes(&audit, &operators[second].name)
        .map(time_of)
        .max()
        .expect("the second leader wrote its Lease");
    let acquired = first_lease_write_after(&audit, &operators[third].name, released);
    let graceful = between(released, acquired);
    let bound = JITTERED_RETRY + SLACK;
    assert!(
        graceful <= bound,
        "after SIGTERM the standby acquired the Lease {graceful:?} after the release (bound {bound:?})"
    );
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;
    for name in &names {
        cluster.assert_synced_target(name).await;
    }

    let identities: Vec<&str> = operators.iter().map(|o| o.name.as_str()).collect();
    let terms = writer_terms(&cluster.kube.audit(), &identities);
    assert_no_overlapping_terms(&terms);
    eprintln!(
        "scenario 5: takeover after SIGKILL {takeover:?} (kill → all synced {kill_to_sync:?}), after SIGTERM {graceful:?}; terms {:?}",
        terms.iter().map(|t| (&t.identity, t.writes)).collect::<Vec<_>>()
    );

    finish("5-failover", started, &cluster, operators, &[]).await;
}

/// The one replica (not in `gone`) whose `/readyz` says it leads.
async fn leader(operators: &[OperatorProcess], gone: &[usize]) -> usize {
    poll_until(
        "exactly one live replica leads",
        Duration::from_secs(30),
        || async {
            let mut leading = Vec::new();
            for (i, operator) in operators.iter().enumerate() {
                if !gone.contains(&i) && operator.is_leader().await {
                    leading.push(i);
                }
            }
            if leading.len() == 1 {
                Ok(leading[0])
            } else {
                Err(format!("leaders: {leading:?}"))
            }
        },
    )
    .await
}

/// When `identity` first read the Lease after `after` (the simulator's answer time).
fn first_lease_read_after(
    audit: &[ferrvault_sim::kube::audit::AuditEntry],
    identity: &str,
    after: Timestamp,
) -> Timestamp {
    audit
        .iter()
        .filter(|e| e.resource == "leases" && e.verb == "get" && e.identity == identity && e.code < 300)
        .map(time_of)
        .find(|at| *at > after)
        .unwrap_or_else(|| panic!("{identity} never read the Lease after {after}"))
}

/// When `identity` first wrote the Lease after `after`.
fn first_lease_write_after(
    audit: &[ferrvault_sim::kube::audit::AuditEntry],
    identity: &str,
    after: Timestamp,
) -> Timestamp {
    lease_writes(audit, identity)
        .map(time_of)
        .find(|at| *at > after)
        .unwrap_or_else(|| panic!("{identity} never wrote the Lease after {after}"))
}
