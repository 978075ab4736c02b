//! Scenario 7 of issue 7: FerrVault misbehaves (5xx bursts, malformed JSON, connection resets,
//! responses slower than the attempt deadline). While it does, every FerrVaultSecret says
//! `Unreachable` and its last good Secret stays untouched; once it recovers, everything
//! converges, including a value rotated upstream during the outage.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::secret_spec,
    operator::OperatorProcess,
    poll_until,
};
use ferrvault_operator::api::FerrVaultSecretSpec;
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};

const ROTATED: &str = "LEAKCHECK-rotated-api-key-7";

fn refreshing_spec() -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        refresh_interval: "2s".into(),
        ..secret_spec(CONNECTION, VAULT)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ferrvault_faults_should_read_unreachable_leave_the_last_good_secret_and_converge_after_recovery() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.healthy_connection().await;
    let names: Vec<String> = (0..5).map(|i| format!("app-{i}")).collect();
    for name in &names {
        cluster.create_fvs(name, refreshing_spec()).await;
    }
    let operator = OperatorProcess::launch(
        &cluster,
        "7-ferrvault-faults",
        "operator-0",
        &["--ferrvault-attempt-timeout=1s", "--reconcile-timeout=4s"],
    );
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
        .await;

    let faults = [
        ("5xx burst", FaultSpec::default().with_server_errors(1.0, 503)),
        ("malformed JSON", FaultSpec::default().with_malformed_json()),
        ("connection reset", FaultSpec::default().with_connection_reset()),
        (
            "slower than the attempt deadline",
            FaultSpec::default().with_latency(Duration::from_millis(1500)),
        ),
    ];
    for (what, spec) in faults {
        let before = targets(&cluster, &names).await;
        cluster.fv.faults().set(Endpoint::Reveal, spec);
        cluster
            .wait_reason(&names, "False", "Unreachable", Duration::from_secs(60))
            .await;
        assert_eq!(
            targets(&cluster, &names).await,
            before,
            "{what}: a target Secret changed while FerrVault failed"
        );
        let conditions = cluster.ready_conditions().await;
        eprintln!(
            "scenario 7: {what}: Unreachable — {}",
            conditions[&names[0]]
                .as_ref()
                .map(|c| c.message.clone())
                .unwrap_or_default()
        );
        if what == "connection reset" {
            // Rotated during an outage: must arrive once FerrVault answers again.
            assert!(
                cluster.fv.put_secret(VAULT, "API_KEY", ROTATED),
                "rotate upstream"
            );
        }
        cluster.fv.faults().clear_all();
        cluster
            .wait_reason(&names, "True", "Synced", Duration::from_secs(60))
            .await;
    }
    poll_until(
        "the rotated value in every target",
        Duration::from_secs(30),
        || async {
            let targets = targets(&cluster, &names).await;
            let stale: Vec<_> = targets
                .iter()
                .filter(|(_, (_, data))| data.get("API_KEY").map(Vec::as_slice) != Some(ROTATED.as_bytes()))
                .map(|(name, _)| name.clone())
                .collect();
            if stale.is_empty() {
                Ok(())
            } else {
                Err(format!("stale: {stale:?}"))
            }
        },
    )
    .await;

    finish(
        "7-ferrvault-faults",
        started,
        &cluster,
        vec![operator],
        &[ROTATED],
    )
    .await;
}

/// Each target Secret's resourceVersion and data.
async fn targets(
    cluster: &Cluster,
    names: &[String],
) -> BTreeMap<String, (String, BTreeMap<String, Vec<u8>>)> {
    let mut all = BTreeMap::new();
    for name in names {
        let secret = cluster.secrets().get(name).await.expect("the target exists");
        let data = secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.0))
            .collect();
        all.insert(
            name.clone(),
            (secret.metadata.resource_version.unwrap_or_default(), data),
        );
    }
    all
}
