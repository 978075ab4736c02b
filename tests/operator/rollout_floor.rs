//! End-to-end: the rollout floor. A hostile FerrVault (the tenant controls `spec.url`) whose
//! values change every second keeps the target Secret current but restarts a workload at most
//! once per floor (5 minutes by default); a restart due sooner is deferred to the end of the
//! floor and then done, not dropped.

use std::time::Duration;

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecretSpec, RolloutTarget, WorkloadKind,
    names::{CONTENT_HASH_ANNOTATION, RESTARTED_AT_ANNOTATION, workload_content_hash_annotation},
};
use jiff::Timestamp;
use kube::{
    ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

/// `app` reading `prod`, restarting Deployment `web`, refreshed every `refresh`.
fn restarting_web(refresh: &str) -> FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = refresh.into();
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    }];
    spec
}

/// FerrVault now answers `value` for `API_KEY`; waits until the target Secret holds it.
async fn vault_changes_to(h: &Harness, value: &str) {
    assert!(h.fv.put_secret("prod", "API_KEY", value));
    h.wait_target_for(&format!("holding {value}"), "app", |s| {
        data_of(s).get("API_KEY").map(Vec::as_slice) == Some(value.as_bytes())
    })
    .await;
}

/// The `RolloutRestarted` condition of `app` once its reason is `reason`.
async fn rollout_condition(
    h: &Harness,
    reason: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    h.eventually(&format!("RolloutRestarted reason {reason}"), || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        condition(&status.conditions, "RolloutRestarted")
            .filter(|c| c.reason == reason)
            .cloned()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_changing_every_second_should_restart_a_workload_once_per_floor_and_keep_the_secret_current() {
    let h = Harness::start().await; // the default floor: 5 minutes
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    let cr = h.create_secret("app", restarting_web("1s")).await;
    let per_cr = workload_content_hash_annotation(&cr.uid().unwrap());
    h.wait_secret_reason("app", "Synced").await;
    for second in 0..6 {
        vault_changes_to(&h, &format!("sk_live_LEAKCHECK_hostile_{second}")).await;
    }
    let deferred = rollout_condition(&h, "RolloutDeferred").await;
    assert_eq!(deferred.status, "False");
    assert!(
        deferred
            .message
            .ends_with("a workload is restarted at most once per 5m0s"),
        "{}",
        deferred.message
    );
    assert_eq!(
        h.occurrences("app", "RolloutTriggered").await,
        1,
        "one restart for six content changes"
    );
    let status = h.fvs().get("app").await.unwrap().status.unwrap();
    assert_eq!(
        ready(Some(&status.conditions)).unwrap().reason,
        "Synced",
        "the data sync is not held back"
    );
    let web = h.deployments().get("web").await.unwrap();
    let current = h.secrets().get("app").await.unwrap().annotations()[CONTENT_HASH_ANNOTATION].clone();
    assert_ne!(
        template_annotation(&web, &per_cr),
        Some(current),
        "web still runs older content: the newest restart waits for the floor"
    );
    h.finish().await;
}

/// Bumps `app`'s generation, so it is reconciled now (its refresh is an hour away).
async fn edit_spec(h: &Harness, refresh: &str) {
    let patch = json!({"spec": {"refreshInterval": refresh}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// When `web` was last restarted, once it runs content `hash` of `app`.
async fn restarted_for(h: &Harness, per_cr: &str, hash: &str) -> Timestamp {
    h.eventually(&format!("web restarted for {hash}"), || async {
        let web = h.deployments().get("web").await.ok()?;
        (template_annotation(&web, per_cr)? == hash).then_some(())?;
        template_annotation(&web, RESTARTED_AT_ANNOTATION)?.parse().ok()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_due_within_the_floor_should_be_deferred_to_its_end_not_dropped() {
    const FLOOR: Duration = Duration::from_secs(3);
    let mut settings = test_settings();
    settings.rollout_floor = FLOOR;
    let h = Harness::start_with(settings).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    // No refresh within the test: only the requeue at the end of the floor can restart later.
    let cr = h.create_secret("app", restarting_web("1h")).await;
    let per_cr = workload_content_hash_annotation(&cr.uid().unwrap());
    h.wait_secret_reason("app", "Synced").await;

    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_first");
    edit_spec(&h, "59m").await;
    let first_hash = h
        .eventually("the first change restarted at once", || async {
            let web = h.deployments().get("web").await.ok()?;
            template_annotation(&web, &per_cr)
        })
        .await;
    let first = restarted_for(&h, &per_cr, &first_hash).await;

    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_second");
    edit_spec(&h, "58m").await;
    let deferred = rollout_condition(&h, "RolloutDeferred").await;
    let second_hash = h
        .eventually("the second content written", || async {
            let target = h.secrets().get("app").await.ok()?;
            let hash = target.annotations().get(CONTENT_HASH_ANNOTATION)?.clone();
            (hash != first_hash).then_some(hash)
        })
        .await;
    let second = restarted_for(&h, &per_cr, &second_hash).await;
    let gap = second.duration_since(first);
    assert!(
        gap >= jiff::SignedDuration::try_from(FLOOR).unwrap(),
        "restarted {gap:?} after the previous one ({})",
        deferred.message
    );
    rollout_condition(&h, "UpToDate").await;
    // Events are written in the background (issue 39): the second may trail the status.
    h.eventually("the second RolloutTriggered Event", || async {
        (h.occurrences("app", "RolloutTriggered").await >= 2).then_some(())
    })
    .await;
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 2);
    h.finish().await;
}
