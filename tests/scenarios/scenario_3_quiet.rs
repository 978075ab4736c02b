//! Scenario 3 of issue 7: a quiet cluster (only FerrVaultSecrets, some without their
//! connection, hourly refresh) must stay live with a 3s stall threshold: idle is not a stall.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, ferrvault_config, unlimited},
    finish,
    operator::OperatorProcess,
};

const QUIET_FOR: Duration = Duration::from_secs(30);
/// The operator's `--stall-threshold` here.
const STALL_THRESHOLD: Duration = Duration::from_secs(3);

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_operator_with_a_3s_stall_threshold_should_stay_live_for_30s() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.healthy_connection().await;
    let synced = cluster.create_many("quiet", 5, CONNECTION).await;
    let orphans = cluster.create_many("orphan", 5, "no-such-connection").await;
    // A 0.5s FerrVault attempt puts the reconcile-timeout floor near 2.15s, under the 3s threshold.
    let operator = OperatorProcess::launch(
        &cluster,
        "3-quiet",
        "operator-0",
        &[
            "--ferrvault-attempt-timeout=500ms",
            "--reconcile-timeout=2500ms",
            "--stall-threshold=3s",
            "--default-refresh-interval=1h",
        ],
    );
    cluster
        .wait_reason(&synced, "True", "Synced", Duration::from_secs(60))
        .await;
    cluster
        .wait_reason(&orphans, "False", "ConnectionNotFound", Duration::from_secs(60))
        .await;

    // Probed every 0.5s. What matters is that no stretch of the quiet went unprobed for as long
    // as a stall takes to be declared, so a stall of twice the threshold could not go unseen;
    // the count of probes depends on how fast a loaded machine answers them (47 in 30s at load
    // 10, where 50 were required).
    let quiet_since = Instant::now();
    let (mut last_probe, mut widest_gap) = (quiet_since, Duration::ZERO);
    while quiet_since.elapsed() < QUIET_FOR {
        let (status, body) = operator.healthz().await;
        assert_eq!(
            status,
            200,
            "/healthz failed after {:?} of quiet:\n{body}",
            quiet_since.elapsed()
        );
        widest_gap = widest_gap.max(last_probe.elapsed());
        last_probe = Instant::now();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        widest_gap < STALL_THRESHOLD,
        "{widest_gap:?} between two probes answered: a stall could have gone unseen"
    );

    finish("3-quiet", started, &cluster, vec![operator], &[]).await;
}
