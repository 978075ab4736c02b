//! Issue 12, item 1, as measured: tenant A has 60 FerrVaultSecrets behind a FerrVault token
//! whose requests hang; tenant B then creates 5 behind a healthy token. With the default pool
//! (4 workers per controller) all of B is Ready within 10s of creation, because A, however
//! slow, never holds more than its share of the pool (`/debug/queue` and the metrics show it).

use std::time::{Duration, Instant};

use crate::scenario_support::{
    cluster::{Cluster, TOKEN_LABEL, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::{OTHER_TOKEN, PROD_TOKEN, connection_spec, ready, secret_spec},
    operator::{OperatorProcess, get_lenient},
    poll_until,
};
use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::{Api, api::PostParams};
use serde_json::{Value, json};

const SCENARIO: &str = "fairness";
const TENANT_A: &str = "tenant-a";
const TENANT_B: &str = "tenant-b";
/// Tenant B's token, as the FerrVault simulator's stats name it.
const B_TOKEN_LABEL: &str = "tenant-b-sat";
/// What the issue asks of B's syncs.
const B_BOUND: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread")]
async fn another_namespace_should_sync_within_ten_seconds_while_one_namespaces_ferrvault_token_hangs() {
    let started = Instant::now();
    let config = ferrvault_config(unlimited(), false)
        .service_account_token(OTHER_TOKEN, VAULT)
        .token_label(OTHER_TOKEN, B_TOKEN_LABEL);
    let cluster = Cluster::start(config).await;
    // Every request of A's token hangs until the fault is cleared.
    cluster.fv.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_hang().for_token(TOKEN_LABEL),
    );
    tenant(&cluster, TENANT_A, PROD_TOKEN).await;
    let operator = OperatorProcess::launch(&cluster, SCENARIO, "operator-0", &[]);
    for i in 0..60 {
        create_fvs(&cluster, TENANT_A, &format!("a-{i:02}")).await;
    }
    let admin = operator
        .at
        .admin
        .expect("the admin server is always enabled here");
    poll_until(
        "A holding its share of the FerrVaultSecret pool, its reveals hanging",
        Duration::from_secs(60),
        || async {
            let (_, body) = get_lenient(&format!("http://{admin}/debug/queue")).await;
            let queue = secret_queue(&body);
            let a = queue["namespaces"]
                .as_array()
                .and_then(|all| all.iter().find(|n| n["namespace"] == TENANT_A).cloned());
            match a {
                Some(a) if a["atShare"] == true => Ok(()),
                _ => Err(format!(
                    "share {}, namespaces {}",
                    queue["namespaceShare"], queue["namespaces"]
                )),
            }
        },
    )
    .await;

    tenant(&cluster, TENANT_B, OTHER_TOKEN).await;
    let created = Instant::now();
    let b: Vec<String> = (0..5).map(|i| format!("b-{i}")).collect();
    for name in &b {
        create_fvs(&cluster, TENANT_B, name).await;
    }
    let fvs_b: Api<FerrVaultSecret> = Api::namespaced(cluster.client.clone(), TENANT_B);
    poll_until("all of B Ready", B_BOUND, || async {
        let mut pending = Vec::new();
        for name in &b {
            let fvs = fvs_b.get(name).await.map_err(|e| e.to_string())?;
            let conditions = fvs.status.map(|s| s.conditions).unwrap_or_default();
            if ready(Some(&conditions)).is_none_or(|c| c.status != "True") {
                pending.push(name.clone());
            }
        }
        if pending.is_empty() {
            Ok(())
        } else {
            Err(format!("not Ready: {pending:?}"))
        }
    })
    .await;
    let took = created.elapsed();

    let fvs_a: Api<FerrVaultSecret> = Api::namespaced(cluster.client.clone(), TENANT_A);
    let a_ready = fvs_a
        .list(&Default::default())
        .await
        .expect("list A")
        .items
        .iter()
        .filter(|fvs| {
            let conditions = fvs.status.as_ref().map(|s| s.conditions.as_slice());
            ready(conditions).is_some_and(|c| c.status == "True")
        })
        .count();
    assert_eq!(a_ready, 0, "A's token still hangs: none of A can be Ready");
    let metrics = get_lenient(&format!("http://{}/metrics", operator.at.metrics))
        .await
        .1;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("workqueue_namespace_share{name=\"ferrvaultsecret\"} 3")),
        "the share of a default pool of 4 is published"
    );
    eprintln!("scenario {SCENARIO}: all of B Ready {took:?} after creation while A's 60 hang");

    cluster.fv.faults().clear(Endpoint::Reveal);
    finish(SCENARIO, started, &cluster, vec![operator], &[]).await;
}

/// Namespace `ns` with token Secret `token` (holding `token`) and a connection `ferrvault`.
async fn tenant(cluster: &Cluster, ns: &str, token: &str) {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": ns}})).expect("a Namespace");
    Api::<Namespace>::all(cluster.client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("create Namespace");
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "token"},
        "stringData": {"token": token},
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(cluster.client.clone(), ns)
        .create(&PostParams::default(), &secret)
        .await
        .expect("create token Secret");
    Api::<FerrVaultConnection>::namespaced(cluster.client.clone(), ns)
        .create(
            &PostParams::default(),
            &FerrVaultConnection::new("ferrvault", connection_spec(&cluster.fv.url(), "token")),
        )
        .await
        .expect("create FerrVaultConnection");
}

async fn create_fvs(cluster: &Cluster, ns: &str, name: &str) {
    Api::<FerrVaultSecret>::namespaced(cluster.client.clone(), ns)
        .create(
            &PostParams::default(),
            &FerrVaultSecret::new(name, secret_spec("ferrvault", VAULT)),
        )
        .await
        .expect("create FerrVaultSecret");
}

/// The FerrVaultSecret controller's queue in a `/debug/queue` document.
fn secret_queue(body: &str) -> Value {
    let doc: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    doc["controllers"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["controller"] == "ferrvaultsecret").cloned())
        .unwrap_or(Value::Null)
}
