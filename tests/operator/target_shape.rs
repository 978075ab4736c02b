//! End-to-end: the target Secret's shape (issue 36 points 4-6) through both simulators, with
//! the Kubernetes simulator's audit counting the operator's writes: an immutable target under
//! `Refuse` (no write) and `Replace` (one delete, one create, one restart); labels and
//! annotations owned by the FerrVaultSecret (a key removed from the spec goes, a foreign one
//! stays); `creationPolicy` `Merge` (foreign keys kept, never a Secret another controller owns)
//! and `Orphan` (survives the deletion); `deletionPolicy: Retain`.

use std::collections::BTreeMap;

use crate::operator_support::*;
use ferrvault_operator::api::{
    CreationPolicy, DeletionPolicy, FerrVaultSecretSpec, ImmutableChange, RolloutTarget, SecretTarget,
    TargetMetadata, WorkloadKind,
    names::{ADOPTABLE_BY_ANNOTATION, workload_content_hash_annotation},
};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

/// The value the tests rotate `DB_URL` to.
const ROTATED: &str = "postgres://app:LEAKCHECK-db-pass@db2:5432/shop";

/// `secret_spec("conn", "prod")` refreshing every second, with `target`.
fn shaped(target: SecretTarget) -> FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    spec.target = Some(target);
    spec
}

fn immutable(change: Option<ImmutableChange>) -> SecretTarget {
    SecretTarget {
        immutable: Some(true),
        immutable_change: change,
        ..SecretTarget::default()
    }
}

fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The operator's writes of Secret `name` since the audit was cleared, as `verb code` (a create
/// posts to the collection, audited without a name: none of these tests creates another
/// Secret through the operator meanwhile).
fn secret_writes(h: &Harness, name: &str) -> Vec<String> {
    h.kube
        .audit()
        .into_iter()
        .filter(|e| e.resource == "secrets" && (e.name == name || e.verb == "create"))
        .filter(|e| matches!(e.verb.as_str(), "create" | "update" | "patch" | "delete"))
        .map(|e| format!("{} {}", e.verb, e.code))
        .collect()
}

/// The workload patches (rollout restarts) since the audit was cleared.
fn workload_patches(h: &Harness) -> usize {
    h.kube
        .audit()
        .into_iter()
        .filter(|e| e.resource == "deployments" && e.verb == "patch")
        .count()
}

fn has_db_url(secret: &Secret, value: &str) -> bool {
    data_of(secret).get("DB_URL").map(Vec::as_slice) == Some(value.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_immutable_target_should_be_left_untouched_when_its_content_changes_under_refuse() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", shaped(immutable(None))).await;
    h.wait_secret_reason("app", "Synced").await;
    let before = h.secrets().get("app").await.unwrap();
    assert_eq!(before.immutable, Some(true), "written immutable");
    h.kube.clear_audit();

    h.fv.put_secret("prod", "DB_URL", ROTATED);
    let cr = h.wait_secret_reason("app", "TargetImmutable").await;
    let ready = ready(cr.status.as_ref().map(|s| s.conditions.as_slice())).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.message.as_str()),
        (
            "False",
            "Secret app is immutable and its content, type or flag would change: left unchanged \
             (target.immutableChange: Replace replaces it)"
        )
    );
    assert_eq!(secret_writes(&h, "app"), Vec::<String>::new(), "no write");
    assert_eq!(h.secrets().get("app").await.unwrap(), before, "untouched");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_immutable_target_should_be_replaced_and_its_workloads_restarted_under_replace() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    let mut spec = shaped(immutable(Some(ImmutableChange::Replace)));
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    }];
    let cr = h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let before = h.secrets().get("app").await.unwrap();
    h.kube.clear_audit();

    h.fv.put_secret("prod", "DB_URL", ROTATED);
    let after = h
        .wait_target_for("the new content", "app", |s| has_db_url(s, ROTATED))
        .await;
    assert_ne!(after.uid(), before.uid(), "a new Secret");
    assert_eq!(after.immutable, Some(true));
    let hash_key = workload_content_hash_annotation(&cr.uid().unwrap());
    h.eventually("web restarted", || async {
        let web = h.deployments().get("web").await.ok()?;
        template_annotation(&web, &hash_key)
    })
    .await;
    h.wait_secret_reason("app", "Synced").await;
    assert_eq!(
        secret_writes(&h, "app"),
        ["delete 200", "create 201"],
        "one delete (the version read), one create"
    );
    assert_eq!(workload_patches(&h), 1, "one rollout");
    h.eventually("its Event", || async {
        (h.occurrences("app", "RolloutTriggered").await == 1).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsetting_immutable_under_replace_should_restart_the_workloads_though_the_content_is_the_same() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_deployment("web").await;
    let mut spec = shaped(immutable(Some(ImmutableChange::Replace)));
    spec.rollout_restart = vec![RolloutTarget {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    }];
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let before = h.secrets().get("app").await.unwrap();
    h.kube.clear_audit();

    let patch = json!({"spec": {"target": {"immutable": false}}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let after = h
        .wait_target_for("mutable again", "app", |s| s.immutable != Some(true))
        .await;
    assert_ne!(
        after.uid(),
        before.uid(),
        "a new Secret: the flag cannot be unset"
    );
    assert_eq!(data_of(&after), data_of(&before), "the same content");
    h.eventually("web restarted", || async {
        (h.occurrences("app", "RolloutTriggered").await == 1).then_some(())
    })
    .await;
    assert_eq!(workload_patches(&h), 1, "one rollout");
    assert_eq!(secret_writes(&h, "app"), ["delete 200", "create 201"]);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_removed_from_the_spec_should_leave_the_target_while_a_foreign_label_stays() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let metadata = TargetMetadata {
        labels: map(&[("app.kubernetes.io/name", "shop"), ("tier", "db")]),
        annotations: map(&[("example.com/rotation", "weekly")]),
    };
    h.create_secret(
        "app",
        shaped(SecretTarget {
            metadata: Some(metadata),
            ..SecretTarget::default()
        }),
    )
    .await;
    let cr = h.wait_secret_reason("app", "Synced").await;
    let status = cr.status.unwrap();
    assert_eq!(status.owned_labels, ["app.kubernetes.io/name", "tier"]);
    assert_eq!(status.owned_annotations, ["example.com/rotation"]);
    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(target.labels()["tier"], "db");
    assert_eq!(target.annotations()["example.com/rotation"], "weekly");
    // Unchanged refreshes write nothing: the store keeps none of these labels, and a target as
    // the last sync left it carries the spec's.
    h.kube.clear_audit();
    let reveals = h.reveals();
    h.eventually("two more refreshes", || async {
        (h.reveals() >= reveals + 2).then_some(())
    })
    .await;
    assert_eq!(secret_writes(&h, "app"), Vec::<String>::new());
    assert!(
        !h.kube
            .audit()
            .iter()
            .any(|e| e.resource == "secrets" && e.verb == "get"),
        "nor read the target"
    );

    // Someone else labels the target; the spec drops `tier` and the annotation.
    let foreign = json!({"metadata": {"labels": {"team": "shop"}, "annotations": {"note": "theirs"}}});
    h.secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&foreign))
        .await
        .unwrap();
    let patch = json!({"spec": {"target": {"metadata": {
        "labels": {"app.kubernetes.io/name": "shop", "tier": null},
        "annotations": null,
    }}}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let after = h
        .wait_target_for("tier removed", "app", |s| !s.labels().contains_key("tier"))
        .await;
    assert_eq!(
        after.labels(),
        &map(&[("app.kubernetes.io/name", "shop"), ("team", "shop")]),
        "ours kept, the foreign label untouched"
    );
    assert!(!after.annotations().contains_key("example.com/rotation"));
    assert_eq!(after.annotations()["note"], "theirs");
    h.eventually("status records the keys now owned", || async {
        let status = h.fvs().get("app").await.ok()?.status?;
        (status.owned_labels == ["app.kubernetes.io/name"] && status.owned_annotations.is_empty())
            .then_some(())
    })
    .await;
    h.finish().await;
}

/// Creates Secret `name` holding `OTHER`, opted in for FerrVaultSecret `app`, with `owners`.
async fn shared_secret(h: &Harness, name: &str, owners: serde_json::Value) -> Secret {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "annotations": { ADOPTABLE_BY_ANNOTATION: "app" },
            "ownerReferences": owners,
        },
        "stringData": { "OTHER": "written-by-someone-else" },
    }))
    .unwrap();
    h.secrets().create(&Default::default(), &secret).await.unwrap()
}

fn merge_into(name: &str) -> FerrVaultSecretSpec {
    shaped(SecretTarget {
        name: Some(name.into()),
        creation_policy: Some(CreationPolicy::Merge),
        ..SecretTarget::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_should_keep_foreign_keys_and_never_write_a_secret_another_controller_owns() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;

    // Never created.
    h.create_secret("app", merge_into("shared")).await;
    h.wait_secret_reason("app", "TargetMissing").await;
    assert!(h.secrets().get_opt("shared").await.unwrap().is_none());

    // Written into, beside the keys someone else wrote; no owner reference of ours.
    shared_secret(&h, "shared", json!([])).await;
    h.wait_secret_reason("app", "Synced").await;
    let merged = h.secrets().get("shared").await.unwrap();
    assert_eq!(
        data_of(&merged).keys().collect::<Vec<_>>(),
        ["API_KEY", "DB_URL", "OTHER"]
    );
    assert_eq!(merged.owner_references(), &[], "Merge takes no ownership");

    // A key we stop producing goes; the foreign key stays.
    let patch = json!({"spec": {"selector": {"names": ["API_KEY"]}}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let after = h
        .wait_target_for("DB_URL removed", "shared", |s| !data_of(s).contains_key("DB_URL"))
        .await;
    assert_eq!(data_of(&after).keys().collect::<Vec<_>>(), ["API_KEY", "OTHER"]);

    // Another controller's Secret, even opted in, is never written.
    let owner = h.controller_ref_to_new_deployment("db").await;
    let controlled = shared_secret(&h, "controlled", json!([owner])).await;
    h.fvs()
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"target": {"name": "controlled"}}})),
        )
        .await
        .unwrap();
    h.wait_secret_reason("app", "TargetControlledByOther").await;
    assert_eq!(h.secrets().get("controlled").await.unwrap(), controlled);
    h.finish().await;
}

/// Deletes FerrVaultSecret `name` and waits until it is gone.
async fn delete_and_wait(h: &Harness, name: &str) {
    h.fvs().delete(name, &DeleteParams::default()).await.unwrap();
    h.eventually("the FerrVaultSecret gone", || async {
        h.fvs().get_opt(name).await.ok()?.is_none().then_some(())
    })
    .await;
}

/// Deletes FerrVaultSecret `name` (whose target is not owned by it any more, or never was), then
/// proves the garbage collector ran since: a control FerrVaultSecret of today's policies is
/// created, synced, deleted, and its target collected. (The collector is eventual: a target
/// still there right after its owner went proves nothing by itself.)
async fn delete_and_collect(h: &Harness, name: &str) {
    delete_and_wait(h, name).await;
    h.create_secret("control", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("control", "Synced").await;
    delete_and_wait(h, "control").await;
    h.eventually("the control's target collected", || async {
        h.secrets().get_opt("control").await.ok()?.is_none().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_target_should_survive_the_deletion_of_its_ferrvault_secret() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let orphan = SecretTarget {
        creation_policy: Some(CreationPolicy::Orphan),
        ..SecretTarget::default()
    };
    h.create_secret("app", shaped(orphan)).await;
    h.wait_secret_reason("app", "Synced").await;
    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(target.owner_references(), &[], "no owner reference");
    assert_eq!(target.annotations()[ADOPTABLE_BY_ANNOTATION], "app");

    // Later passes still write it: a rotation arrives.
    h.fv.put_secret("prod", "DB_URL", ROTATED);
    h.wait_target_for("the new content", "app", |s| has_db_url(s, ROTATED))
        .await;
    h.wait_secret_reason("app", "Synced").await;
    // Unchanged refreshes write nothing (no owner reference to add, none to remove).
    h.kube.clear_audit();
    let reveals = h.reveals();
    h.eventually("two more refreshes", || async {
        (h.reveals() >= reveals + 2).then_some(())
    })
    .await;
    assert_eq!(secret_writes(&h, "app"), Vec::<String>::new());

    delete_and_collect(&h, "app").await;
    let kept = h.secrets().get("app").await.unwrap();
    assert!(has_db_url(&kept, ROTATED));
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retained_target_should_stay_without_our_owner_reference() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let retain = SecretTarget {
        deletion_policy: Some(DeletionPolicy::Retain),
        ..SecretTarget::default()
    };
    let cr = h.create_secret("app", shaped(retain)).await;
    h.wait_secret_reason("app", "Synced").await;
    let target = h.secrets().get("app").await.unwrap();
    assert!(
        controlled_by(&target, &cr),
        "owned while the FerrVaultSecret lives"
    );

    delete_and_collect(&h, "app").await;
    let kept = h.secrets().get("app").await.unwrap();
    assert_eq!(kept.owner_references(), &[], "our owner reference removed");
    assert_eq!(data_of(&kept), data_of(&target), "content kept");
    h.finish().await;
}
