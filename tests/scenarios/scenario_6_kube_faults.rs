//! Scenario 6 of issue 7: the Kubernetes API misbehaves during a 500-object sync (watches
//! dropped every few seconds, forced 410 Gone, 5% 409 Conflict on writes, 429/503 bursts,
//! 200ms on every request). Every object still converges, a rotation restarts each workload
//! exactly once,
//! and no target Secret is ever seen with partial content.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, VAULT, ferrvault_config, unlimited},
    finish,
    fixtures::{API_KEY, DB_URL, secret_spec},
    operator::OperatorProcess,
    poll_until,
};
use ferrvault_operator::api::{FerrVaultSecretSpec, RolloutTarget, WorkloadKind};
use ferrvault_sim::kube::faults::{FailureRule, FaultConfig, RequestMatch};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::watcher;

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

/// The standing faults, plus a burst of `code` on 30% of every request when given.
fn faults(burst: Option<u16>) -> FaultConfig {
    let mut failures: Vec<FailureRule> = burst.map(|code| rule(None, 0.3, code)).into_iter().collect();
    failures.extend(["create", "update", "patch"].map(|verb| rule(Some(verb), 0.05, 409)));
    FaultConfig {
        latency_ms: 200,
        failures,
        ..FaultConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_object_sync_through_api_faults_should_converge_without_duplicate_restarts_or_partial_secrets()
{
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
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
    // Every version of every target Secret the test's own watch sees.
    let seen: Arc<Mutex<Vec<Secret>>> = Arc::default();
    let recorder = tokio::spawn({
        let (api, seen) = (cluster.secrets(), seen.clone());
        async move {
            let mut events = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = events.next().await {
                if let Ok(watcher::Event::Apply(secret) | watcher::Event::InitApply(secret)) = event {
                    seen.lock().expect("lock").push(secret);
                }
            }
        }
    });

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
    recorder.abort();

    let seen = seen.lock().expect("lock").clone();
    let partial: Vec<String> = seen
        .iter()
        .filter(|s| s.metadata.name.as_deref().is_some_and(|n| n.starts_with("app-")))
        .filter(|s| {
            let data = s.data.clone().unwrap_or_default();
            data.len() != 2
                || data.get("DB_URL").map(|v| v.0.as_slice()) != Some(DB_URL.as_bytes())
                || !matches!(data.get("API_KEY").map(|v| v.0.as_slice()), Some(v) if v == API_KEY.as_bytes() || v == ROTATED.as_bytes())
        })
        .map(|s| format!("{:?}@{:?}", s.metadata.name, s.metadata.resource_version))
        .collect();
    assert!(
        partial.is_empty(),
        "target Secrets seen with partial content: {partial:?}"
    );
    assert!(
        seen.len() >= OBJECTS,
        "the recording watch saw only {} Secret versions",
        seen.len()
    );

    let mut restarts: BTreeMap<String, usize> = BTreeMap::new();
    for entry in cluster.kube.audit() {
        if entry.resource == "deployments"
            && entry.verb == "patch"
            && entry.code < 300
            && entry.identity == operator.name
        {
            *restarts.entry(entry.name.clone()).or_default() += 1;
        }
    }
    let expected: BTreeMap<String, usize> = (0..WITH_ROLLOUT).map(|i| (format!("web-{i:03}"), 1)).collect();
    assert_eq!(
        restarts, expected,
        "each workload restarted exactly once for the rotation"
    );
    let audit = cluster.kube.audit();
    let injected = audit
        .iter()
        .filter(|e| [409, 410, 429, 503].contains(&e.code))
        .count();
    eprintln!(
        "scenario 6: {OBJECTS} Synced and the rotation rolled out after {converged:?}; {} requests, {injected} answered 409/410/429/503; {} workloads restarted; {} Secret versions seen",
        audit.len(),
        restarts.len(),
        seen.len()
    );
    assert!(injected > 0, "the faults were injected");

    finish("6-kube-faults", started, &cluster, vec![operator], &[ROTATED]).await;
}
