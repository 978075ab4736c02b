//! Scenario 6 of issue 7: the Kubernetes API misbehaves during a 500-object sync (watches
//! dropped every few seconds, forced 410 Gone, 5% 409 Conflict on writes, 5% of writes applied
//! but answered 500/504 (the response lost), 429/503 bursts, 200ms on every request). Every
//! object still converges, a rotation restarts each workload exactly once, and no target
//! Secret ever has partial content: both proven on the simulator's full history of every
//! version of every target Secret and workload, not on what a watch happened to see.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::{API_KEY, DB_URL, secret_spec},
    operator::OperatorProcess,
    poll_until,
};
use ferrvault_operator::api::{
    FerrVaultSecretSpec, RolloutTarget, WorkloadKind, names::RESTARTED_AT_ANNOTATION,
};
use ferrvault_sim::kube::{
    faults::{FailureRule, FaultConfig, RequestMatch},
    store::Revision,
};
use serde_json::Value;

const OBJECTS: usize = 500;
const WITH_ROLLOUT: usize = 20;
const ROTATED: &str = "LEAKCHECK-rotated-api-key-6";

fn rule(verb: Option<&str>, fraction: f64, code: u16) -> FailureRule {
    FailureRule {
        target: RequestMatch {
            verb: verb.map(str::to_owned),
            ..RequestMatch::default()
        },
        fraction,
        code,
    }
}

/// The standing faults, plus a burst of `code` on 30% of every request when given: 5% of
/// writes refused with 409, 5% applied and then answered 500 or 504 (kube clients retry a
/// 504 on their own, so the operator meets its own write: a conflict, an AlreadyExists).
fn faults(burst: Option<u16>) -> FaultConfig {
    let mut failures: Vec<FailureRule> = burst.map(|code| rule(None, 0.3, code)).into_iter().collect();
    failures.extend(["create", "update", "patch"].map(|verb| rule(Some(verb), 0.05, 409)));
    let lost_responses = vec![
        rule(Some("create"), 0.05, 504),
        rule(Some("update"), 0.05, 500),
        rule(Some("patch"), 0.05, 504),
        rule(Some("delete"), 0.05, 500),
    ];
    FaultConfig {
        latency_ms: 200,
        failures,
        lost_responses,
        ..FaultConfig::default()
    }
}

/// Target Secret versions (of `app-*`) without exactly the two synced keys and values.
fn partial_versions(history: &[Revision]) -> Vec<String> {
    history
        .iter()
        .filter(|r| r.object["metadata"]["name"].as_str().is_some_and(|n| n.starts_with("app-")))
        .filter(|r| {
            let data = r.object["data"].as_object().cloned().unwrap_or_default();
            let decoded = |k: &str| data.get(k).and_then(Value::as_str).map(decode);
            data.len() != 2
                || decoded("DB_URL").as_deref() != Some(DB_URL.as_bytes())
                || !matches!(decoded("API_KEY"), Some(v) if v == API_KEY.as_bytes() || v == ROTATED.as_bytes())
        })
        .map(|r| format!("{}@{}", r.object["metadata"]["name"], r.resource_version))
        .collect()
}

fn decode(base64: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(base64)
        .expect("stored Secret data is base64")
}

/// How many times each workload was restarted: changes of its pod template's restarted-at
/// annotation from one stored version to the next.
fn restarts(history: &[Revision]) -> BTreeMap<String, usize> {
    let mut last: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut restarts: BTreeMap<String, usize> = BTreeMap::new();
    for r in history {
        let name = r.object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let restarted_at = r.object["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT_ANNOTATION]
            .as_str()
            .map(str::to_owned);
        let previous = last.insert(name.clone(), restarted_at.clone());
        if restarted_at.is_some() && previous.is_some_and(|p| p != restarted_at) {
            *restarts.entry(name).or_default() += 1;
        }
    }
    restarts
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_object_sync_through_api_faults_should_converge_without_duplicate_restarts_or_partial_secrets()
{
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    cluster.kube.keep_history("", "secrets");
    cluster.kube.keep_history("apps", "deployments");
    cluster.healthy_connection().await;
    let mut names = Vec::with_capacity(OBJECTS);
    for i in 0..OBJECTS {
        let name = format!("app-{i:03}");
        let mut spec: FerrVaultSecretSpec = secret_spec(CONNECTION, VAULT);
        if i < WITH_ROLLOUT {
            cluster.create_deployment(&format!("web-{i:03}")).await;
            spec.refresh_interval = "3s".into();
            spec.rollout_restart = vec![RolloutTarget {
                kind: WorkloadKind::Deployment,
                name: format!("web-{i:03}"),
            }];
        }
        cluster.create_fvs(&name, spec).await;
        names.push(name);
    }
    let operator = OperatorProcess::launch(
        &cluster,
        "6-kube-faults",
        "operator-0",
        &["--max-concurrent-reconciles=32"],
    );
    let kube_faults = cluster.kube.faults();
    kube_faults.set_config(faults(None));
    let chaos = tokio::spawn({
        let kube_faults = kube_faults.clone();
        async move {
            for round in 0u32.. {
                tokio::time::sleep(Duration::from_secs(3)).await;
                kube_faults.drop_watches();
                if round % 2 == 0 {
                    kube_faults.force_gone(1);
                }
                let burst = match round % 4 {
                    1 => Some(429),
                    3 => Some(503),
                    _ => None,
                };
                kube_faults.set_config(faults(burst));
            }
        }
    });
    cluster
        .wait_reason(&names, "True", "Synced", Duration::from_secs(240))
        .await;
    // A rotation upstream, picked up by the refreshing objects while the faults go on: each of
    // their workloads must be restarted exactly once for it.
    assert!(
        cluster.fv.put_secret(VAULT, "API_KEY", ROTATED),
        "rotate upstream"
    );
    let rolling: Vec<String> = names[..WITH_ROLLOUT].to_vec();
    poll_until(
        "the rotated value in every refreshing target",
        Duration::from_secs(120),
        || async {
            let mut stale = Vec::new();
            for name in &rolling {
                let secret = cluster.secrets().get(name).await.map_err(|e| e.to_string())?;
                let value = secret
                    .data
                    .unwrap_or_default()
                    .get("API_KEY")
                    .map(|v| v.0.clone());
                if value.as_deref() != Some(ROTATED.as_bytes()) {
                    stale.push(name.clone());
                }
            }
            if stale.is_empty() {
                Ok(())
            } else {
                Err(format!("stale: {stale:?}"))
            }
        },
    )
    .await;
    cluster
        .wait_reason(&rolling, "True", "Synced", Duration::from_secs(60))
        .await;
    chaos.abort();
    kube_faults.clear();
    let converged = started.elapsed();
    for name in &names[WITH_ROLLOUT..] {
        cluster.assert_synced_target(name).await;
    }

    let secret_history = cluster.kube.history("", "secrets");
    let partial = partial_versions(&secret_history);
    assert!(
        partial.is_empty(),
        "target Secret versions with partial content: {partial:?}"
    );
    assert!(
        secret_history.len() >= OBJECTS,
        "the history holds only {} Secret versions",
        secret_history.len()
    );
    let restarts = restarts(&cluster.kube.history("apps", "deployments"));
    let expected: BTreeMap<String, usize> = (0..WITH_ROLLOUT).map(|i| (format!("web-{i:03}"), 1)).collect();
    assert_eq!(
        restarts, expected,
        "each workload restarted exactly once for the rotation, lost responses included"
    );
    let audit = cluster.kube.audit();
    let injected = audit
        .iter()
        .filter(|e| [409, 410, 429, 503].contains(&e.code))
        .count();
    let lost = audit
        .iter()
        .filter(|e| [500, 504].contains(&e.code) && e.identity == operator.name)
        .count();
    eprintln!(
        "scenario 6: {OBJECTS} Synced and the rotation rolled out after {converged:?}; {} requests, {injected} answered 409/410/429/503, {lost} writes applied but answered 500/504; {} workloads restarted; {} Secret versions stored",
        audit.len(),
        restarts.len(),
        secret_history.len()
    );
    assert!(injected > 0, "the faults were injected");
    assert!(lost > 0, "responses were lost");

    finish("6-kube-faults", started, &cluster, vec![operator], &[ROTATED]).await;
}
