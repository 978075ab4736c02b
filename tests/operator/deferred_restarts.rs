//! End-to-end: a rollout restart the rollout floor defers is done when the floor allows, also
//! where nothing else makes the pass sync again (issue 36): a `CreatedOnce` target, kept after a
//! forced sync changed it, and an immutable target replaced (`immutableChange: Replace`) with
//! unchanged content, whose restart no content hash calls for. Restarts are counted by the
//! Kubernetes simulator's audit and the workload's `ferrvault.com/restarted-at`.

use std::time::Duration;

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecretSpec, ImmutableChange, RefreshPolicy, RolloutTarget, SecretTarget, WorkloadKind,
    names::{CONTENT_HASH_ANNOTATION, FORCE_SYNC_ANNOTATION, RESTARTED_AT_ANNOTATION},
};
use ferrvault_sim::testkit::{DEADLINE, poll_until};
use jiff::{SignedDuration, Timestamp};
use kube::{
    ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

/// The rollout floor of these tests: long enough that a second restart is deferred, short
/// enough to wait for its end.
const FLOOR: Duration = Duration::from_secs(3);

/// The operator with the rollout floor [`FLOOR`], connection `conn` and Deployment `web`.
async fn start() -> Harness {
    let mut settings = test_settings();
    settings.rollout_floor = FLOOR;
    let h = Harness::start_with(settings).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    h
}

/// `app` reading `prod` and restarting Deployment `web`, with no refresh within the test (only
/// a requeue for the deferred restart can restart `web` later).
fn restarting_web() -> FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1h".into();
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    }];
    spec
}

/// Merges `patch` into FerrVaultSecret `app`.
async fn patch_app(h: &Harness, patch: serde_json::Value) {
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch app");
}

/// `web`'s last restart by the operator, once it is later than `after` (waiting names the last
/// restart seen and `app`'s rollout status).
async fn restarted_after(h: &Harness, what: &str, after: Option<Timestamp>) -> Timestamp {
    poll_until(what, DEADLINE, || async {
        let web = h.deployments().get("web").await.map_err(|e| e.to_string())?;
        let at = template_annotation(&web, RESTARTED_AT_ANNOTATION).and_then(|at| at.parse().ok());
        match at {
            Some(at) if after.is_none_or(|after| at > after) => Ok(at),
            _ => {
                let status = h.fvs().get("app").await.map_err(|e| e.to_string())?.status;
                let rollout = status.as_ref().map(|s| {
                    let condition = condition(&s.conditions, "RolloutRestarted").map(|c| &c.message);
                    (condition, &s.target_replaced_at, &s.last_rollout_hash)
                });
                Err(format!("web last restarted at {at:?}; app's rollout {rollout:?}"))
            }
        }
    })
    .await
}

/// Waits until `app`'s `RolloutRestarted` condition has `reason`.
async fn rollout_reason(h: &Harness, reason: &str) {
    h.eventually(&format!("RolloutRestarted reason {reason}"), || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        condition(&status.conditions, "RolloutRestarted")
            .is_some_and(|c| c.reason == reason)
            .then_some(())
    })
    .await;
}

/// The target's content hash once it differs from `other`.
async fn content_hash_other_than(h: &Harness, other: Option<&str>) -> String {
    h.eventually("the target's new content hash", || async {
        let target = h.secrets().get("app").await.ok()?;
        let hash = target.annotations().get(CONTENT_HASH_ANNOTATION)?.clone();
        (Some(hash.as_str()) != other).then_some(hash)
    })
    .await
}

/// Asserts that `second` came at least one floor after `first`.
fn assert_a_floor_apart(first: Timestamp, second: Timestamp) {
    let gap = second.duration_since(first);
    assert!(
        gap >= SignedDuration::try_from(FLOOR).unwrap(),
        "restarted {gap:?} after the previous restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_created_once_targets_deferred_restart_should_be_retried_until_done() {
    let h = start().await;
    let mut spec = restarting_web();
    spec.refresh_policy = Some(RefreshPolicy::CreatedOnce);
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let created = content_hash_other_than(&h, None).await;

    // A forced sync overwrites the kept target: web restarts for it at once.
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_forced_1");
    patch_app(
        &h,
        json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: "1" } } }),
    )
    .await;
    let first_hash = content_hash_other_than(&h, Some(&created)).await;
    let first = restarted_after(&h, "web restarted for the first forced sync", None).await;

    // A second forced sync within the floor: its restart is deferred, and the passes after it
    // keep the target (CreatedOnce, no longer forced).
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_forced_2");
    patch_app(
        &h,
        json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: "2" } } }),
    )
    .await;
    content_hash_other_than(&h, Some(&first_hash)).await;
    rollout_reason(&h, "RolloutDeferred").await;
    let second = restarted_after(&h, "web restarted when the floor allowed", Some(first)).await;
    assert_a_floor_apart(first, second);
    rollout_reason(&h, "UpToDate").await;
    h.wait_secret_reason("app", "TargetKept").await;
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 2);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_targets_deferred_restart_should_be_done_when_the_floor_allows() {
    let h = start().await;
    let mut spec = restarting_web();
    spec.target = Some(SecretTarget {
        immutable: Some(true),
        immutable_change: Some(ImmutableChange::Replace),
        ..SecretTarget::default()
    });
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let created = content_hash_other_than(&h, None).await;

    // New content: the immutable target is replaced and web restarts at once.
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_replaced");
    patch_app(&h, json!({ "spec": { "refreshInterval": "59m" } })).await;
    let replaced = content_hash_other_than(&h, Some(&created)).await;
    let first = restarted_after(&h, "web restarted for the new content", None).await;

    // `immutable` unset within the floor: the target is replaced again with the same content,
    // and the restart it needs (pods never see a new immutable Secret) is deferred.
    let before = h.secrets().get("app").await.expect("the target");
    patch_app(&h, json!({ "spec": { "target": { "immutable": false } } })).await;
    let after = h
        .wait_target_for("replaced by a mutable Secret", "app", |s| {
            s.immutable != Some(true)
        })
        .await;
    assert_ne!(after.uid(), before.uid(), "replaced");
    assert_eq!(
        after.annotations().get(CONTENT_HASH_ANNOTATION),
        Some(&replaced),
        "the same content"
    );
    rollout_reason(&h, "RolloutDeferred").await;
    let second = restarted_after(&h, "web restarted when the floor allowed", Some(first)).await;
    assert_a_floor_apart(first, second);
    rollout_reason(&h, "UpToDate").await;
    let status = h.fvs().get("app").await.unwrap().status.unwrap();
    assert_eq!(status.target_replaced_at, None, "nothing left to restart");
    h.finish().await;
}
