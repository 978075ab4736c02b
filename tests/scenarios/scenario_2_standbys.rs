//! Scenario 2 of issue 7: three replicas with leader election and a 5s stall threshold under
//! 60s of mixed load. Standbys have no work, and no work is not a stall: every `/healthz`
//! stays 200, exactly one replica leads, and only the leader writes.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    audit::{assert_no_overlapping_terms, writer_terms},
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::secret_spec,
    operator::{LEADER_ELECT, OperatorProcess, SHORT_TIMEOUTS},
    poll_until,
};

const LOAD_FOR: Duration = Duration::from_secs(60);
const REPLICAS: usize = 3;

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_under_mixed_load_should_stay_live_with_one_leader_and_one_writer() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.healthy_connection().await;
    let initial = cluster.create_many("base", 10, CONNECTION).await;
    let flags: Vec<&str> = LEADER_ELECT.iter().chain(&SHORT_TIMEOUTS).copied().collect();
    let operators: Vec<OperatorProcess> = (0..REPLICAS)
        .map(|i| OperatorProcess::launch(&cluster, "2-standbys", &format!("operator-{i}"), &flags))
        .collect();
    cluster
        .wait_reason(&initial, "True", "Synced", Duration::from_secs(60))
        .await;
    let leader = poll_until("one replica leads", Duration::from_secs(30), || async {
        let leaders = leaders(&operators).await;
        if leaders.len() == 1 {
            Ok(leaders[0])
        } else {
            Err(format!("leaders: {leaders:?}"))
        }
    })
    .await;

    let load_since = Instant::now();
    let mut created = Vec::new();
    let mut tick = 0u32;
    while load_since.elapsed() < LOAD_FOR {
        // Mixed load, one change per second: new objects, a missing connection, spec edits,
        // deletions and upstream value changes.
        match tick % 5 {
            0 | 1 => {
                let name = format!("load-{tick:03}");
                cluster.create_fvs(&name, secret_spec(CONNECTION, VAULT)).await;
                created.push(name);
            }
            2 => {
                cluster
                    .create_fvs(&format!("orphan-{tick:03}"), secret_spec("missing", VAULT))
                    .await
            }
            3 => {
                let _ = cluster.fv.put_secret(VAULT, "EXTRA", &format!("v{tick}"));
                if let Some(name) = created.first().cloned() {
                    let _ = cluster.fvs().delete(&name, &Default::default()).await;
                    created.remove(0);
                }
            }
            _ => {}
        }
        tick += 1;
        for _ in 0..2 {
            for operator in &operators {
                let (status, body) = operator.healthz().await;
                assert_eq!(
                    status,
                    200,
                    "{}'s /healthz failed after {:?} of load:\n{body}",
                    operator.name,
                    load_since.elapsed()
                );
            }
            let now_leading = leaders(&operators).await;
            assert_eq!(
                now_leading,
                [leader],
                "exactly one leader, the same one, at {:?} of load",
                load_since.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    cluster
        .wait_reason(&created, "True", "Synced", Duration::from_secs(60))
        .await;

    let identities: Vec<&str> = operators.iter().map(|o| o.name.as_str()).collect();
    let terms = writer_terms(&cluster.kube.audit(), &identities);
    assert_no_overlapping_terms(&terms);
    assert_eq!(terms.len(), 1, "only the leader wrote: {terms:#?}");
    assert_eq!(terms[0].identity, operators[leader].name, "{terms:#?}");

    finish("2-standbys", started, &cluster, operators, &[]).await;
}

/// Indexes of the replicas whose `/readyz` says they lead.
async fn leaders(operators: &[OperatorProcess]) -> Vec<usize> {
    let mut leading = Vec::new();
    for (i, operator) in operators.iter().enumerate() {
        if operator.is_leader().await {
            leading.push(i);
        }
    }
    leading
}
