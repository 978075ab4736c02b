//! Scenario 4 of issue 7, first half: a FerrVault that hangs every request costs its keys a
//! bounded attempt each (`Unreachable`), keys on another FerrVault keep syncing, `/healthz`
//! stays 200 with a 5s stall threshold, and the hung keys recover when FerrVault does.
//!
//! The 5s threshold needs a reconcile timeout under it, so the FerrVault attempt deadline is
//! lowered with the hidden `--ferrvault-attempt-timeout=1s` (floor 3.65s, timeout 4s).
//!
//! The second half (a wedge the supervisor cannot clear fails `/healthz` within threshold +
//! one probe period, naming it) needs a reconcile that ignores cancellation; every await in
//! the operator is cancellable, so no input to the binary can produce one. It is driven
//! in-process by `controller-actors`' runtime tests
//! (`leader_with_due_work_and_no_progress_should_fail_within_threshold_plus_a_probe_period`,
//! `health_should_fail_with_a_reason_when_a_stuck_worker_cannot_be_replaced`).

use std::time::{Duration, Instant};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, TOKEN_SECRET, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::secret_spec,
    operator::{OperatorProcess, SHORT_TIMEOUTS},
};
use ferrvault_operator::api::FerrVaultSecretSpec;
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec, FerrVaultSim};

const STALL_THRESHOLD: Duration = Duration::from_secs(5);

fn refreshing(connection: &str) -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        refresh_interval: "2s".into(),
        ..secret_spec(connection, VAULT)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_ferrvault_should_cost_bounded_attempts_while_other_keys_sync_and_liveness_stays_200() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    let other = FerrVaultSim::start(ferrvault_config(unlimited(), false))
        .await
        .expect("a second FerrVault starts");
    cluster.healthy_connection().await;
    cluster.connection_to("other", TOKEN_SECRET, &other.url()).await;
    let hung: Vec<String> = (0..4).map(|i| format!("hung-{i}")).collect();
    for name in &hung {
        cluster.create_fvs(name, refreshing(CONNECTION)).await;
    }
    let operator = OperatorProcess::launch(&cluster, "4-stalls", "operator-0", &SHORT_TIMEOUTS);
    cluster
        .wait_reason(&hung, "True", "Synced", Duration::from_secs(60))
        .await;

    // FerrVault hangs every reveal: each attempt ends at its 1s deadline, the worker moves on.
    cluster
        .fv
        .faults()
        .set(Endpoint::Reveal, FaultSpec::default().with_hang());
    cluster
        .wait_reason(&hung, "False", "Unreachable", Duration::from_secs(60))
        .await;
    let meanwhile: Vec<String> = (0..4).map(|i| format!("other-{i}")).collect();
    for name in &meanwhile {
        cluster.create_fvs(name, refreshing("other")).await;
    }
    let hang_since = Instant::now();
    let mut polls = 0;
    while hang_since.elapsed() < 3 * STALL_THRESHOLD {
        let (status, body) = operator.healthz().await;
        assert_eq!(
            status, 200,
            "/healthz failed while other keys could progress:\n{body}"
        );
        polls += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(polls >= 20, "only {polls} probes");
    cluster
        .wait_reason(&meanwhile, "True", "Synced", Duration::from_secs(30))
        .await;
    cluster
        .wait_reason(&hung, "False", "Unreachable", Duration::from_secs(30))
        .await;
    cluster.fv.faults().clear_all();
    cluster
        .wait_reason(&hung, "True", "Synced", Duration::from_secs(60))
        .await;
    finish("4-stalls", started, &cluster, vec![operator], &[]).await;
}
