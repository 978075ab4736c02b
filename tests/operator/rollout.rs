//! End-to-end: rollout restarts happen once per content change, are retried after a failure
//! until they succeed, and never loop.

use crate::operator_support::*;
use ferrvault_operator::api::{
    RolloutTarget, WorkloadKind,
    names::{RESTARTED_AT_ANNOTATION, workload_content_hash_annotation},
};
use kube::ResourceExt;
use serde_json::json;

fn rollout_spec(workload: &str) -> ferrvault_operator::api::FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: workload.into(),
    }];
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_change_should_restart_each_workload_once_and_never_loop() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    let cr = h.create_secret("app", rollout_spec("web")).await;
    let uid = cr.uid().unwrap();
    let hash_key = workload_content_hash_annotation(&uid);

    let synced = h.wait_secret_reason("app", "Synced").await;
    let status = synced.status.unwrap();
    let first_hash = status.last_rollout_hash.clone().expect("baseline recorded");
    assert_eq!(
        condition(&status.conditions, "RolloutRestarted").unwrap().reason,
        "UpToDate"
    );
    let web = h.deployments().get("web").await.unwrap();
    assert_eq!(
        template_annotation(&web, &hash_key),
        None,
        "a new target restarts nothing"
    );

    h.fv.put_secret("prod", "DB_URL", "postgres://app:LEAKCHECK-db-pass@db2:5432/shop");
    let restarted = h
        .eventually("web restarted for the new content", || async {
            let web = h.deployments().get("web").await.ok()?;
            let hash = template_annotation(&web, &hash_key)?;
            (hash != first_hash).then_some(web)
        })
        .await;
    assert!(template_annotation(&restarted, RESTARTED_AT_ANNOTATION).is_some());
    assert_eq!(
        template_annotation(&restarted, "owner").as_deref(),
        Some("team-shop"),
        "merge patch"
    );
    let new_hash = template_annotation(&restarted, &hash_key).unwrap();
    h.eventually("lastRolloutHash moved to the new content", || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        (status.last_rollout_hash.as_deref() == Some(new_hash.as_str())).then_some(())
    })
    .await;

    // Several refreshes later the workload was not touched again.
    let reveals = h.reveals();
    h.eventually("three more refreshes", || async {
        (h.reveals() >= reveals + 3).then_some(())
    })
    .await;
    let later = h.deployments().get("web").await.unwrap();
    assert_eq!(
        later.resource_version(),
        restarted.resource_version(),
        "no restart loop"
    );
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 1);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_rollout_should_be_retried_until_the_workload_exists() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = rollout_spec("late");
    spec.refresh_interval = "1h".into();
    let cr = h.create_secret("app", spec).await;
    let hash_key = workload_content_hash_annotation(&cr.uid().unwrap());
    let first = h.wait_secret_reason("app", "Synced").await.status.unwrap();
    let first_hash = first.last_rollout_hash.clone().unwrap();

    // New content with the workload missing: the Secret is written, the restart fails.
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_apikey_rotated");
    let patch = json!({"spec": {"selector": {"names": ["API_KEY", "DB_URL"]}}});
    h.fvs()
        .patch("app", &Default::default(), &kube::api::Patch::Merge(&patch))
        .await
        .unwrap();
    let failed = h
        .eventually("RolloutRestarted=False/RolloutFailed", || async {
            let status = h.fvs().get("app").await.ok()?.status?;
            let c = condition(&status.conditions, "RolloutRestarted")?;
            (c.reason == "RolloutFailed").then_some(status)
        })
        .await;
    let c = condition(&failed.conditions, "RolloutRestarted").unwrap();
    assert_eq!(c.status, "False");
    assert_eq!(c.message, r#"Deployment "late" not found"#);
    assert_eq!(
        failed.last_rollout_hash.as_deref(),
        Some(first_hash.as_str()),
        "still due"
    );
    assert_eq!(
        ready(Some(&failed.conditions)).unwrap().reason,
        "Synced",
        "the data sync succeeded"
    );
    h.eventually("RolloutFailed counted", || async {
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="RolloutFailed"}"#)
            .filter(|n| *n >= 1.0)
    })
    .await;
    // The pending rollout was recorded in status before the Secret was written.
    let audit = h.kube.audit();
    let pending = audit
        .iter()
        .position(|e| e.resource == "ferrvaultsecrets" && e.subresource == "status" && e.verb == "patch");
    let write = audit
        .iter()
        .rposition(|e| e.resource == "secrets" && e.name == "app" && e.verb == "update");
    assert!(
        pending.is_some() && write.is_some() && pending < write,
        "status patch before the write"
    );

    // The workload appears: the retry (backoff, no new event needed) restarts it.
    h.create_deployment("late").await;
    let done = h
        .eventually("RolloutRestarted=True after the retry", || async {
            let status = h.fvs().get("app").await.ok()?.status?;
            let c = condition(&status.conditions, "RolloutRestarted")?;
            (c.reason == "UpToDate").then_some(status)
        })
        .await;
    let late = h.deployments().get("late").await.unwrap();
    assert_eq!(template_annotation(&late, &hash_key), done.last_rollout_hash);
    assert_ne!(done.last_rollout_hash.as_deref(), Some(first_hash.as_str()));
    // Events are written in the background (issue 39): they may trail the status.
    h.eventually("the RolloutFailed and RolloutTriggered Events", || async {
        let failed = !h.events_for("app", "RolloutFailed").await.is_empty();
        (failed && h.occurrences("app", "RolloutTriggered").await >= 1).then_some(())
    })
    .await;
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 1);
    h.finish().await;
}
