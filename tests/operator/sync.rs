//! End-to-end: a FerrVaultSecret syncs into its target Secret through both simulators, and the
//! target stays what the operator wrote (content replaced, drift healed, token rotation).

use std::collections::BTreeMap;

use crate::operator_support::*;
use ferrvault_operator::{
    FIELD_MANAGER,
    api::{
        FerrVaultSecretSpec, SecretSelector,
        names::{ADOPTABLE_BY_ANNOTATION, CONTENT_HASH_ANNOTATION, MANAGED_BY_ANNOTATION, SECRET_FINALIZER},
    },
    rules::legacy_content_hash,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_secret_should_get_its_finalizer_and_sync_in_the_first_pass() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;

    let cr = h.wait_secret_reason("app", "Synced").await;
    assert!(
        cr.finalizers().iter().any(|f| f == SECRET_FINALIZER),
        "finalizer added"
    );
    let status = cr.status.clone().unwrap();
    assert_eq!(status.synced_keys, vec!["API_KEY", "DB_URL"]);
    assert_eq!(status.observed_generation, cr.metadata.generation);
    assert!(status.last_synced_at.is_some());
    assert_eq!(
        ready(Some(&status.conditions)).unwrap().message,
        "2 key(s) synced into app"
    );

    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(data_of(&target), prod_data());
    assert_eq!(target.type_.as_deref(), Some("Opaque"));
    assert!(
        controlled_by(&target, &cr),
        "controller owner reference with blockOwnerDeletion"
    );
    let annotations = target.annotations();
    assert_eq!(annotations[MANAGED_BY_ANNOTATION], "ferrvault-operator");
    let data = prod_data();
    assert_eq!(
        annotations[CONTENT_HASH_ANNOTATION],
        h.hash_of(&data).await,
        "keyed with the key of the operator's Secret"
    );
    assert_ne!(annotations[CONTENT_HASH_ANNOTATION], legacy_content_hash(&data));

    // Every write names the operator as field manager (the simulator records managedFields).
    let managers = |entries: &Option<Vec<ManagedFieldsEntry>>| -> Vec<(String, String)> {
        let mut managers: Vec<_> = entries
            .iter()
            .flatten()
            .map(|e| {
                (
                    e.manager.clone().unwrap_or_default(),
                    e.subresource.clone().unwrap_or_default(),
                )
            })
            .collect();
        managers.sort();
        managers
    };
    let operator = |subresource: &str| (FIELD_MANAGER.to_owned(), subresource.to_owned());
    assert_eq!(managers(&target.metadata.managed_fields), [operator("")]);
    let cr_managers = managers(&cr.metadata.managed_fields);
    assert!(
        cr_managers.contains(&operator("")) && cr_managers.contains(&operator("status")),
        "finalizer and status written as {FIELD_MANAGER}: {cr_managers:?}"
    );

    // The first pass did it: the finalizer patch did not cost a second reveal.
    let reveals = h.fv.stats().total.endpoints.get("reveal").copied().unwrap_or(0);
    assert_eq!(reveals, 1, "one reveal for one new object");

    let synced = h
        .eventually("one Synced event", || async {
            let events = h.events_for("app", "Synced").await;
            (!events.is_empty()).then_some(events)
        })
        .await;
    assert_eq!(synced.len(), 1);

    // The duration is recorded when the reconcile returns, just after its status write.
    let metrics = h
        .eventually("a successful sync measured", || async {
            let metrics = h.metrics_text();
            metrics
                .contains(r#"ferrvault_secret_sync_duration_seconds_count{result="success"} 1"#)
                .then_some(metrics)
        })
        .await;
    assert!(
        metrics.contains(r#"ferrvault_secret_last_sync_timestamp_seconds{namespace="default",name="app"}"#)
    );
    assert!(
        metrics.contains(r#"ferrvault_secret_refresh_interval_seconds{namespace="default",name="app"} 3600"#)
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_content_should_be_replaced_while_foreign_labels_and_annotations_stay() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // An unowned Secret with a stale key, a label and an annotation of someone else, handed over
    // to the FerrVaultSecret by its opt-in annotation: adopted.
    h.put_secret("app", &[("STALE", "old")]).await;
    let foreign = json!({"metadata": {
        "labels": {"team": "shop"},
        "annotations": {"note": "keep", ADOPTABLE_BY_ANNOTATION: "app"},
    }});
    h.secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&foreign))
        .await
        .unwrap();
    h.create_secret("app", secret_spec("conn", "prod")).await;

    let cr = h.wait_secret_reason("app", "Synced").await;
    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(
        data_of(&target),
        prod_data(),
        "stale key removed, content replaced"
    );
    assert!(controlled_by(&target, &cr), "an opted-in Secret is adopted");
    assert_eq!(target.labels()["team"], "shop");
    assert_eq!(target.annotations()["note"], "keep");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_should_be_healed_within_seconds_after_an_edit_or_a_delete() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_target("app", |s| data_of(s) == prod_data()).await;

    // A manual edit of a value (annotations untouched) is rewritten.
    let edit = json!({"data": {"DB_URL": "aGFja2Vk", "EXTRA": "eA=="}});
    h.secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .unwrap();
    h.wait_target_for("healed after a value edit", "app", |s| data_of(s) == prod_data())
        .await;

    // A removed owner reference means someone took the Secret away: it is left alone until it is
    // handed back with the opt-in annotation.
    let orphan = json!({"metadata": {"ownerReferences": null}, "data": {"DB_URL": "dGFrZW4="}});
    let taken = h
        .secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&orphan))
        .await
        .unwrap();
    h.wait_secret_reason("app", "TargetNotOwned").await;
    assert_eq!(h.secrets().get("app").await.unwrap(), taken, "not healed");
    let handed_back = json!({"metadata": {"annotations": {ADOPTABLE_BY_ANNOTATION: "app"}}});
    h.secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&handed_back))
        .await
        .unwrap();
    let cr = h.fvs().get("app").await.unwrap();
    h.wait_target_for("owned and healed again", "app", |s| {
        controlled_by(s, &cr) && data_of(s) == prod_data()
    })
    .await;

    // A deleted target is recreated.
    h.secrets().delete("app", &DeleteParams::default()).await.unwrap();
    h.wait_target_for("recreated after a delete", "app", |s| data_of(s) == prod_data())
        .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_rotation_should_resync_dependent_secrets_at_once() {
    let h = Harness::start().await;
    // Starts with the token of the other vault: 403 wrong vault.
    h.connection("conn", "conn-token", OTHER_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.selector = Some(SecretSelector {
        names: vec!["DB_URL".into()],
    });
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "AuthFailed").await;

    // AuthFailed waits 5 minutes; the token Secret change must not.
    h.put_secret("conn-token", &[("token", &format!("  {PROD_TOKEN}\n"))])
        .await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_target("app", |s| {
        data_of(s).get("DB_URL").map(Vec::as_slice) == Some(DB_URL.as_bytes())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unchanged_content_should_not_emit_another_synced_event_or_write() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec: FerrVaultSecretSpec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let written = h.secrets().get("app").await.unwrap().resource_version();
    // Several refreshes later: still one Synced event, the Secret untouched.
    h.eventually("three refresh reveals", || async {
        (h.fv.stats().total.endpoints.get("reveal").copied().unwrap_or(0) >= 3).then_some(())
    })
    .await;
    assert_eq!(h.secrets().get("app").await.unwrap().resource_version(), written);
    assert_eq!(h.events_for("app", "Synced").await.len(), 1);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_secret_should_release_its_finalizer_and_drop_its_metric_series() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    let series = r#"ferrvault_secret_last_sync_timestamp_seconds{namespace="default",name="app"}"#;
    // The pass sets the series after writing the status.
    h.eventually("the last-sync series", || async { h.metric(series) })
        .await;
    h.fvs().delete("app", &DeleteParams::default()).await.unwrap();
    h.eventually("the FerrVaultSecret gone", || async {
        h.fvs().get_opt("app").await.ok()?.is_none().then_some(())
    })
    .await;
    h.eventually(
        "the target garbage-collected through its owner reference",
        || async { h.secrets().get_opt("app").await.ok()?.is_none().then_some(()) },
    )
    .await;
    assert!(h.metric(series).is_none(), "last-sync series removed");
    assert!(
        h.metric(r#"ferrvault_secret_refresh_interval_seconds{namespace="default",name="app"}"#)
            .is_none(),
        "refresh-interval series removed with it"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_fields_only_change_of_the_target_should_be_looked_at_but_not_rewritten() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_target("app", |s| data_of(s) == prod_data()).await;
    let before = h
        .eventually("the first reconcile counted", || async {
            let n = h.secret_reconciles();
            (n >= 1.0).then_some(n)
        })
        .await;

    // The reset the API server documents: a single empty entry strips every entry; only
    // the resourceVersion and managedFields change.
    let reset = json!({"metadata": {"managedFields": [{}]}});
    let cleared = h
        .secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&reset))
        .await
        .unwrap();
    assert!(cleared.managed_fields().is_empty(), "the reset worked");
    h.eventually("a reconcile after the managedFields reset", || async {
        (h.secret_reconciles() > before).then_some(())
    })
    .await;
    assert_eq!(
        h.secrets().get("app").await.unwrap().resource_version(),
        cleared.resource_version(),
        "not drift: the target is not rewritten"
    );
    assert_eq!(h.events_for("app", "Synced").await.len(), 1);
    h.finish().await;
}
