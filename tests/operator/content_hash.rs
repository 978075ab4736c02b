//! End-to-end: the content hash is keyed with an operator-held key that survives restarts (no
//! second rollout), an upgrade from unkeyed hashes only re-stamps them (no rollout), an upgrade
//! from keyed hashes of the `0x00`-separated encoding neither rewrites the target nor rolls out,
//! and rotating the key restarts each rollout target exactly once, as documented.

use std::collections::BTreeMap;

use crate::operator_support::*;
use ferrvault_operator::{
    CONTENT_HASH_KEY_SECRET,
    api::{
        FerrVaultSecretSpec, RolloutTarget, WorkloadKind,
        names::{CONTENT_HASH_ANNOTATION, workload_content_hash_annotation},
    },
    rules::{legacy_content_hash, separated_content_hash},
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

fn prod_data() -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        ("API_KEY".to_owned(), API_KEY.as_bytes().to_vec()),
        ("DB_URL".to_owned(), DB_URL.as_bytes().to_vec()),
    ])
}

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

/// A started harness with `app` ([`restarting_web`]) synced, Deployment `web` as created, and
/// `app`'s content-hash annotation name.
async fn synced_app_restarting_web(refresh: &str) -> (Harness, Deployment, String) {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let web = h.create_deployment("web").await;
    let cr = h.create_secret("app", restarting_web(refresh)).await;
    let per_cr = workload_content_hash_annotation(&cr.uid().unwrap());
    h.wait_secret_reason("app", "Synced").await;
    (h, web, per_cr)
}

/// Waits until `more` further reveals happened (each a full pass under a 1s refresh).
async fn passes(h: &Harness, more: u64) {
    let start = h.reveals();
    h.eventually(&format!("{more} more passes"), || async {
        (h.reveals() >= start + more).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_should_survive_a_restart_so_a_restart_rolls_nothing_out() {
    let (mut h, _, per_cr) = synced_app_restarting_web("1s").await;
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_apikey_rotated");
    let restarted = h
        .eventually("web restarted for the new content", || async {
            let web = h.deployments().get("web").await.ok()?;
            template_annotation(&web, &per_cr).map(|_| web)
        })
        .await;
    let key = h.secrets().get(CONTENT_HASH_KEY_SECRET).await.unwrap();
    let target = h.secrets().get("app").await.unwrap();

    h.restart_operator().await;
    passes(&h, 3).await;
    assert_eq!(
        h.secrets().get(CONTENT_HASH_KEY_SECRET).await.unwrap(),
        key,
        "the same key Secret, untouched"
    );
    let after = h.secrets().get("app").await.unwrap();
    assert_eq!(
        after.annotations()[CONTENT_HASH_ANNOTATION],
        target.annotations()[CONTENT_HASH_ANNOTATION],
        "the same hash"
    );
    assert_eq!(
        h.deployments().get("web").await.unwrap().resource_version(),
        restarted.resource_version(),
        "no second rollout"
    );
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 1);
    h.finish().await;
}

/// Upgrades from a release that recorded `hash` (unkeyed, or keyed in an earlier encoding), as a user does: the operator stopped, `app` left
/// as that release would have (`hash` in `status.lastRolloutHash` and on the target), then the
/// operator started. (Written while the operator runs, a pass triggered by the target's edit
/// could read `app` from a store that does not show the status edit yet, which no release ever
/// makes: only the operator writes that status.)
async fn recorded_by_an_earlier_release(h: &mut Harness, hash: &str) {
    h.stop_operator().await;
    h.fvs()
        .patch_status(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"lastRolloutHash": hash}})),
        )
        .await
        .unwrap();
    h.secrets()
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {CONTENT_HASH_ANNOTATION: hash}}})),
        )
        .await
        .unwrap();
    h.start_operator().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unkeyed_hash_of_the_same_content_should_be_re_stamped_without_a_rollout() {
    let (mut h, web, per_cr) = synced_app_restarting_web("1h").await;
    let keyed = h.hash_of(&prod_data()).await;

    recorded_by_an_earlier_release(&mut h, &legacy_content_hash(&prod_data())).await;
    h.wait_target_for("re-stamped with the keyed hash", "app", |s| {
        s.annotations()[CONTENT_HASH_ANNOTATION] == keyed
    })
    .await;
    h.eventually("lastRolloutHash re-stamped", || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        (status.last_rollout_hash.as_deref() == Some(keyed.as_str())).then_some(())
    })
    .await;
    assert_eq!(
        h.deployments().get("web").await.unwrap().resource_version(),
        web.resource_version(),
        "no rollout for an upgrade"
    );
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 0);

    // The same steps with the unkeyed hash of *other* content are a content change: a rollout.
    let other = BTreeMap::from([("API_KEY".to_owned(), b"old".to_vec())]);
    recorded_by_an_earlier_release(&mut h, &legacy_content_hash(&other)).await;
    h.eventually("web restarted for a real change", || async {
        let web = h.deployments().get("web").await.ok()?;
        (template_annotation(&web, &per_cr)? == keyed).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separated_hash_of_the_same_content_should_be_kept_without_a_write_or_a_rollout() {
    let (mut h, web, per_cr) = synced_app_restarting_web("1s").await;
    let keyed = h.hash_of(&prod_data()).await;
    let separated = separated_content_hash(&h.content_hash_key().await, &prod_data());
    assert_ne!(separated, keyed, "the encodings differ");

    recorded_by_an_earlier_release(&mut h, &separated).await;
    let upgraded = h.secrets().get("app").await.unwrap();
    h.eventually("lastRolloutHash read as today's", || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        (status.last_rollout_hash.as_deref() == Some(keyed.as_str())).then_some(())
    })
    .await;
    passes(&h, 3).await;
    assert_eq!(
        h.secrets().get("app").await.unwrap(),
        upgraded,
        "the target is not rewritten: it keeps its stamp until its content changes"
    );
    assert_eq!(
        h.deployments().get("web").await.unwrap().resource_version(),
        web.resource_version(),
        "no rollout for an upgrade"
    );
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 0);

    // The next change of content stamps today's encoding, and rolls out once.
    h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_apikey_rotated");
    let mut rotated = prod_data();
    rotated.insert("API_KEY".into(), b"sk_live_LEAKCHECK_apikey_rotated".to_vec());
    let now = h.hash_of(&rotated).await;
    h.wait_target_for("stamped with today's encoding", "app", |s| {
        s.annotations()[CONTENT_HASH_ANNOTATION] == now
    })
    .await;
    h.eventually("web restarted for the change, once", || async {
        let web = h.deployments().get("web").await.ok()?;
        let restarted = template_annotation(&web, &per_cr)? == now;
        (restarted && h.occurrences("app", "RolloutTriggered").await == 1).then_some(())
    })
    .await;
    passes(&h, 3).await;
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 1);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_should_restart_each_rollout_target_once() {
    let (mut h, _, per_cr) = synced_app_restarting_web("1s").await;
    let old_key = h.secrets().get(CONTENT_HASH_KEY_SECRET).await.unwrap();
    let old_hash = h.hash_of(&prod_data()).await;

    // Rotation as documented: delete the key Secret, restart the operator.
    h.secrets()
        .delete(CONTENT_HASH_KEY_SECRET, &DeleteParams::default())
        .await
        .unwrap();
    h.restart_operator().await;
    let restarted = h
        .eventually("web restarted under the new key", || async {
            let web = h.deployments().get("web").await.ok()?;
            template_annotation(&web, &per_cr).map(|_| web)
        })
        .await;
    let new_key = h.secrets().get(CONTENT_HASH_KEY_SECRET).await.unwrap();
    assert_ne!(new_key.data, old_key.data, "a new random key");
    let new_hash = h.hash_of(&prod_data()).await;
    assert_ne!(new_hash, old_hash, "same content, another key: another hash");
    assert_eq!(template_annotation(&restarted, &per_cr), Some(new_hash));
    passes(&h, 3).await;
    assert_eq!(
        h.deployments().get("web").await.unwrap().resource_version(),
        restarted.resource_version(),
        "once"
    );
    assert_eq!(h.occurrences("app", "RolloutTriggered").await, 1);
    h.finish().await;
}
