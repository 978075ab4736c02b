//! Issue 39 point 5, shared credentials: three replicas with `--shards 6` reveal through one
//! ClusterFerrVaultConnection token, and FerrVault, limiting that token to the configured
//! budget, never sees more than it from the three together (no 429, and no window of its
//! request count above `burst + rate × window`): each replica paces `k/6` of it for the `k`
//! shards it holds, which its limiter metric and the connection's `status.budgetShare` show.
//! SIGKILL one: the survivors take its shards, FerrVault sees no request for the takeover, and
//! their next reveals are paced at their new share (3/6 each), still within the budget together.

use std::time::{Duration, Instant};

use ferrvault_operator::api::{ConnectionKind, ConnectionRef, FerrVaultSecret};
use ferrvault_sim::ferrvault::{SimConfig, rate_limit::RateLimit};
use kube::{
    Api,
    api::{DynamicObject, PostParams},
};
use serde_json::json;

use crate::{
    scenario_shards::{
        SHARDS, cluster_connections, create_namespace, launch_sharded, sum_all, target_writes,
        team_namespaces, wait_for_split, wait_ready, wait_sum, writers_by_namespace,
    },
    scenario_support::{
        cluster::Cluster,
        finish,
        fixtures::{API_KEY, DB_URL, NS, ORG_TOKEN, secret_spec},
        poll_until,
    },
};

/// The token's budget, configured alike in FerrVault and in the operator.
const RATE: f64 = 6.0;
const BURST: u32 = 6;
const ORG: &str = "acme";
const PROJECT: &str = "default";
const NAMESPACES: usize = 30;
/// Each namespace reads these vaults, one FerrVaultSecret each: cloud mode reveals each
/// namespace on its own, so no two FerrVaultSecrets share a request.
const VAULTS: [&str; 2] = ["alpha", "beta"];
/// Read after the kill, one FerrVaultSecret per namespace.
const LATE_VAULT: &str = "gamma";
/// The limiter's configured rate, per credential, on `/metrics`.
const CONFIGURED_RATE: &str = "ferrvault_client_limiter_configured_rate";

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_should_spend_a_cluster_connections_budget_together_never_above_it() {
    let started = Instant::now();
    let cluster = Cluster::start(budgeted_ferrvault()).await;
    let namespaces = team_namespaces(NAMESPACES);
    for namespace in &namespaces {
        create_namespace(&cluster, namespace).await;
    }
    // The platform's connection exists before the replicas start, as a platform's setup does:
    // each replica's Secret metadata store then holds its token whichever shards it holds.
    platform_connection(&cluster).await;
    let (rate, burst) = (
        format!("--ferrvault-rate={RATE}"),
        format!("--ferrvault-burst={BURST}"),
    );
    let (mut operators, owners) = launch_sharded(&cluster, "shards-budget", &[&rate, &burst]).await;
    let expected_share = format!("1/{SHARDS} of {RATE} requests/s per shard");
    poll_until(
        "the cluster connection's status shows the split",
        Duration::from_secs(30),
        || async {
            let platform = cluster_connections(&cluster)
                .get("platform")
                .await
                .map_err(|e| e.to_string())?;
            let share = platform
                .data
                .pointer("/status/budgetShare")
                .and_then(|s| s.as_str());
            match share {
                Some(share) if share.starts_with(&expected_share) => Ok(()),
                other => Err(format!("budgetShare {other:?}")),
            }
        },
    )
    .await;

    // 60 reveals, none shared, through the one token: the three replicas together at most
    // the budget.
    let (mut names, samples) = sampled(&cluster, async {
        let mut names = Vec::new();
        for namespace in &namespaces {
            for vault in VAULTS {
                names.push(cluster_secret_user(&cluster, namespace, vault).await);
            }
        }
        wait_ready::<FerrVaultSecret>(&cluster, &names, "Synced").await;
        names
    })
    .await;
    assert_within_budget(&cluster, &samples, "while the replicas hold two shards each");
    for i in 0..3 {
        let configured = sum_all(&mut operators, &[i], CONFIGURED_RATE).await;
        assert_eq!(
            configured,
            RATE * 2.0 / 6.0,
            "operator-{i} paces two shards' share"
        );
    }
    // Each namespace written by its shard's holder only.
    let of = controller_actors::Shards::new(u32::from(SHARDS)).expect("a valid count");
    let writers = writers_by_namespace(&cluster, &operators);
    for namespace in &namespaces {
        let owner = &operators[owners[&of.of_namespace(namespace).0]].name;
        assert_eq!(
            writers
                .get(namespace.as_str())
                .map(|w| w.iter().collect::<Vec<_>>()),
            Some(vec![owner]),
            "{namespace} should be written by its shard's holder only"
        );
    }

    // SIGKILL one: its shards move, and the takeover asks FerrVault nothing and writes nothing.
    let requests_before = cluster.fv.stats().total.requests;
    let target_writes_before = target_writes(&cluster);
    operators[0].kill9();
    assert_eq!(
        operators[0].wait_exit(Duration::from_secs(10)),
        None,
        "killed by a signal"
    );
    wait_for_split(&mut operators, &[1, 2], 3).await;
    let stored = (NAMESPACES * VAULTS.len()) as f64;
    wait_sum(&mut operators, &[1, 2], "ferrvault_shard_objects", stored).await;
    wait_ready::<FerrVaultSecret>(&cluster, &names, "Synced").await;
    assert_eq!(
        (
            cluster.fv.stats().total.requests - requests_before,
            target_writes(&cluster)
        ),
        (0, target_writes_before),
        "a takeover with nothing due should ask FerrVault nothing and write nothing"
    );

    // New reveals on the survivors: paced at three shards' share each, still within the budget.
    let (late, samples) = sampled(&cluster, async {
        let mut late = Vec::new();
        for namespace in &namespaces {
            late.push(cluster_secret_user(&cluster, namespace, LATE_VAULT).await);
        }
        wait_ready::<FerrVaultSecret>(&cluster, &late, "Synced").await;
        late
    })
    .await;
    names.extend(late);
    assert_within_budget(&cluster, &samples, "after the takeover");
    for i in [1, 2] {
        let configured = sum_all(&mut operators, &[i], CONFIGURED_RATE).await;
        assert_eq!(
            configured,
            RATE * 3.0 / 6.0,
            "operator-{i} paces three shards' share"
        );
    }

    finish("shards-budget", started, &cluster, operators, &[]).await;
}

/// FerrVault with the vaults in organisation [`ORG`], read by [`ORG_TOKEN`], limited to
/// [`RATE`] and [`BURST`]; a refused request spends nothing (the limit counts what it accepts).
fn budgeted_ferrvault() -> SimConfig {
    let config = SimConfig {
        rate_limit: RateLimit {
            per_second: RATE,
            burst: BURST,
        },
        rejected_requests_spend_budget: false,
        ..SimConfig::default()
    };
    VAULTS
        .iter()
        .chain([&LATE_VAULT])
        .fold(config, |config, vault| {
            config.cloud_vault(ORG, PROJECT, vault, [("DB_URL", DB_URL), ("API_KEY", API_KEY)])
        })
        .org_token(ORG_TOKEN, ORG)
}

/// ClusterFerrVaultConnection `platform` in cloud mode, letting in every namespace, its token
/// [`ORG_TOKEN`] in the operator's namespace.
async fn platform_connection(cluster: &Cluster) {
    cluster
        .create_secret("platform-token", &[("token", ORG_TOKEN)])
        .await;
    let connection: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": "platform" },
        "spec": {
            "mode": "cloud",
            "organization": ORG,
            "url": cluster.fv.url(),
            "tokenSecretRef": { "namespace": NS, "name": "platform-token", "key": "token" },
            "allowedNamespaces": { "names": ["*"] },
        },
    }))
    .expect("a ClusterFerrVaultConnection");
    cluster_connections(cluster)
        .create(&PostParams::default(), &connection)
        .await
        .expect("create ClusterFerrVaultConnection");
}

/// FerrVaultSecret `<vault>` in `namespace` reading `vault` through `platform`; its key.
async fn cluster_secret_user(cluster: &Cluster, namespace: &str, vault: &str) -> String {
    let mut spec = secret_spec("platform", vault);
    spec.connection_ref = ConnectionRef {
        name: "platform".to_owned(),
        kind: ConnectionKind::ClusterFerrVaultConnection,
    };
    spec.project = Some(PROJECT.to_owned());
    Api::<FerrVaultSecret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &FerrVaultSecret::new(vault, spec))
        .await
        .expect("create FerrVaultSecret");
    format!("{namespace}/{vault}")
}

/// One reading of FerrVault's request count, taken between two instants.
struct Sample {
    before: Instant,
    after: Instant,
    requests: u64,
}

fn sample(cluster: &Cluster) -> Sample {
    let before = Instant::now();
    let requests = cluster.fv.stats().total.requests;
    Sample {
        before,
        after: Instant::now(),
        requests,
    }
}

/// Runs `work`, reading FerrVault's request count before, every 100 ms during and after it.
async fn sampled<T>(cluster: &Cluster, work: impl Future<Output = T>) -> (T, Vec<Sample>) {
    let mut samples = vec![sample(cluster)];
    tokio::pin!(work);
    let out = loop {
        tokio::select! {
            out = &mut work => break out,
            () = tokio::time::sleep(Duration::from_millis(100)) => samples.push(sample(cluster)),
        }
    };
    samples.push(sample(cluster));
    (out, samples)
}

/// FerrVault refused nothing, and no window between two samples holds more requests than the
/// budget allows in it (`burst + rate × window`, the window taken at its longest).
fn assert_within_budget(cluster: &Cluster, samples: &[Sample], when: &str) {
    let stats = cluster.fv.stats().total;
    assert_eq!(
        stats.rate_limited, 0,
        "{when}: FerrVault refused requests over the budget"
    );
    let mut busiest = (0.0_f64, 0, Duration::ZERO);
    for (i, start) in samples.iter().enumerate() {
        for end in &samples[i + 1..] {
            let window = end.after - start.before;
            let allowed = f64::from(BURST) + RATE * window.as_secs_f64();
            let sent = end.requests - start.requests;
            assert!(
                sent as f64 <= allowed,
                "{when}: {sent} requests within {window:?}, over the budget's {allowed:.1}"
            );
            let load = sent as f64 / allowed;
            if load > busiest.0 {
                busiest = (load, sent, window);
            }
        }
    }
    let total = samples.last().map_or(0, |s| s.requests) - samples.first().map_or(0, |s| s.requests);
    eprintln!(
        "scenario shards-budget {when}: {total} requests; busiest window {} in {:?} ({:.0} % of the budget)",
        busiest.1,
        busiest.2,
        busiest.0 * 100.0
    );
}
