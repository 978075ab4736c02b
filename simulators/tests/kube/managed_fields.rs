//! `metadata.managedFields` as the simulator keeps them: one entry per field manager,
//! operation and subresource, named by `fieldManager` or the User-Agent, served on get, list,
//! watch and the metadata-only view, and never a reason for a new resourceVersion or generation.

use crate::kube_sim_support::{Widget, WidgetSpec, install_widget_crd, sim, unique, within};
use ferrvault_sim::kube::KubeSim;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::{Value, json};

fn secret(name: &str) -> Secret {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"app": "demo"}}, "data": {"k": "dg=="}}),
    )
    .expect("valid secret")
}

/// A fresh simulator, its default-namespace Secrets and a new Secret created with `params`.
async fn fresh_secret(params: &PostParams) -> (KubeSim, Api<Secret>, Secret) {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let created = secrets
        .create(params, &secret(&unique("s")))
        .await
        .expect("create");
    (sim, secrets, created)
}

fn post_as(manager: &str) -> PostParams {
    PostParams {
        field_manager: Some(manager.into()),
        ..PostParams::default()
    }
}

fn patch_as(manager: &str) -> PatchParams {
    PatchParams {
        field_manager: Some(manager.into()),
        ..PatchParams::default()
    }
}

/// `(manager, operation, subresource)` of every entry, in order.
fn entries(fields: &[ManagedFieldsEntry]) -> Vec<(String, String, Option<String>)> {
    fields
        .iter()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.subresource.clone(),
            )
        })
        .collect()
}

fn entry(manager: &str, operation: &str, subresource: Option<&str>) -> (String, String, Option<String>) {
    (manager.into(), operation.into(), subresource.map(String::from))
}

fn fields_of<'a>(fields: &'a [ManagedFieldsEntry], manager: &str) -> &'a Value {
    &fields
        .iter()
        .find(|e| e.manager.as_deref() == Some(manager))
        .and_then(|e| e.fields_v1.as_ref())
        .unwrap_or_else(|| panic!("no fieldsV1 for {manager} in {fields:?}"))
        .0
}

#[tokio::test]
async fn two_managers_should_each_own_one_update_entry_that_their_later_writes_replace() {
    let (_sim, secrets, created) = fresh_secret(&post_as("alpha")).await;
    let name = created.name_any();
    assert_eq!(
        entries(created.managed_fields()),
        [entry("alpha", "Update", None)]
    );
    assert_eq!(
        fields_of(created.managed_fields(), "alpha"),
        &json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:data": {"f:k": {}}, "f:type": {}})
    );

    let mut edited = created.clone();
    edited.labels_mut().insert("tier".into(), "gold".into());
    let replaced = secrets
        .replace(&name, &post_as("beta"), &edited)
        .await
        .expect("replace");
    assert_eq!(
        entries(replaced.managed_fields()),
        [entry("alpha", "Update", None), entry("beta", "Update", None)]
    );
    assert_eq!(
        replaced.metadata.generation, created.metadata.generation,
        "a label write keeps the generation"
    );

    let patch = Patch::Merge(json!({"data": {"k2": "dw=="}}));
    let patched = secrets
        .patch(&name, &patch_as("alpha"), &patch)
        .await
        .expect("patch");
    assert_eq!(
        entries(patched.managed_fields()),
        [entry("alpha", "Update", None), entry("beta", "Update", None)],
        "alpha's second write replaces its entry"
    );
    assert!(
        fields_of(patched.managed_fields(), "alpha")["f:data"]
            .get("f:k2")
            .is_some()
    );

    let noop = secrets
        .patch(
            &name,
            &patch_as("gamma"),
            &Patch::Merge(json!({"data": {"k2": "dw=="}})),
        )
        .await
        .expect("no-op patch");
    assert_eq!(
        noop.resource_version(),
        patched.resource_version(),
        "a no-op write stores nothing"
    );
    assert_eq!(entries(noop.managed_fields()), entries(patched.managed_fields()));
}

#[tokio::test]
async fn status_writes_should_get_their_own_entry_with_subresource_status() {
    let sim = sim().await;
    install_widget_crd(&sim.client()).await;
    let widgets: Api<Widget> = Api::namespaced(sim.client(), "default");
    let name = unique("w");
    let created = widgets
        .create(&post_as("ctl"), &Widget::new(&name, WidgetSpec { size: 1 }))
        .await
        .expect("create");
    let status = Patch::Merge(json!({"status": {"observed": 1}}));
    let written = widgets
        .patch_status(&name, &patch_as("ctl"), &status)
        .await
        .expect("status patch");
    assert_eq!(
        entries(written.managed_fields()),
        [
            entry("ctl", "Update", None),
            entry("ctl", "Update", Some("status"))
        ]
    );
    let status_entry = &written.managed_fields()[1];
    assert_eq!(
        status_entry.fields_v1.as_ref().map(|f| &f.0),
        Some(&json!({"f:status": {"f:observed": {}}}))
    );
    assert_eq!(status_entry.api_version.as_deref(), Some("sim.ferrvault.dev/v1"));
    assert!(
        fields_of(written.managed_fields(), "ctl")
            .get("f:status")
            .is_none(),
        "the main entry does not own status"
    );
    assert_eq!(written.metadata.generation, created.metadata.generation);
}

#[tokio::test]
async fn apply_should_record_an_apply_entry_with_only_the_applied_fields() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let name = unique("s");
    let applied =
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"a": "dg=="}});
    let created = secrets
        .patch(&name, &PatchParams::apply("applier"), &Patch::Apply(&applied))
        .await
        .expect("apply creates");
    assert_eq!(
        entries(created.managed_fields()),
        [entry("applier", "Apply", None)]
    );
    assert_eq!(
        fields_of(created.managed_fields(), "applier"),
        &json!({"f:data": {"f:a": {}}}),
        "defaults the server added (type) are not the applier's"
    );
    let updated = secrets
        .patch(
            &name,
            &patch_as("editor"),
            &Patch::Merge(json!({"data": {"b": "dw=="}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(
        entries(updated.managed_fields()),
        [entry("applier", "Apply", None), entry("editor", "Update", None)]
    );
}

#[tokio::test]
async fn manager_should_come_from_the_user_agent_or_be_unknown() {
    let (sim, secrets, created) = fresh_secret(&PostParams::default()).await;
    let name = created.name_any();
    assert_eq!(
        entries(created.managed_fields()),
        [entry("unknown", "Update", None)],
        "kube-rs sends no User-Agent"
    );
    // Ignoring the error is fine: another test in this process may have installed it.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .user_agent("curl-like/8.0 (linux)")
        .build()
        .expect("http client");
    let response = http
        .patch(format!("{}/api/v1/namespaces/default/secrets/{name}", sim.url()))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"metadata":{"labels":{"by":"curl"}}}"#)
        .send()
        .await
        .expect("patch sent");
    assert!(response.status().is_success(), "{}", response.status());
    let fetched = secrets.get(&name).await.expect("get");
    assert_eq!(
        entries(fetched.managed_fields()),
        [
            entry("unknown", "Update", None),
            entry("curl-like", "Update", None)
        ]
    );
}

#[tokio::test]
async fn managed_fields_should_be_served_on_list_watch_and_metadata_views() {
    let (_sim, secrets, created) = fresh_secret(&post_as("alpha")).await;
    let name = created.name_any();
    let rv = created.resource_version().expect("rv");
    let mut watch = secrets
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    secrets
        .patch(
            &name,
            &patch_as("beta"),
            &Patch::Merge(json!({"data": {"b": "dw=="}})),
        )
        .await
        .expect("patch");
    let event = within("the patch's watch event", watch.try_next())
        .await
        .expect("watch stream")
        .expect("an event");
    let WatchEvent::Modified(watched) = event else {
        panic!("expected Modified, got {event:?}");
    };
    let both = [entry("alpha", "Update", None), entry("beta", "Update", None)];
    assert_eq!(entries(watched.managed_fields()), both);
    let listed = secrets.list(&ListParams::default()).await.expect("list");
    let item = listed
        .items
        .iter()
        .find(|s| s.name_any() == name)
        .expect("listed");
    assert_eq!(entries(item.managed_fields()), both);
    let meta = secrets.get_metadata(&name).await.expect("metadata-only get");
    assert_eq!(entries(meta.managed_fields()), both);
    let metas = secrets
        .list_metadata(&ListParams::default())
        .await
        .expect("metadata list");
    let item = metas.items.iter().find(|s| s.name_any() == name).expect("listed");
    assert_eq!(entries(item.managed_fields()), both);
}

#[tokio::test]
async fn submitted_managed_fields_should_be_ignored_unless_they_are_the_single_empty_entry_reset() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let name = unique("s");
    let mut forged = secret(&name);
    forged.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("forged".into()),
        ..ManagedFieldsEntry::default()
    }]);
    let created = secrets.create(&post_as("alpha"), &forged).await.expect("create");
    assert_eq!(
        entries(created.managed_fields()),
        [entry("alpha", "Update", None)]
    );

    let mut emptied = created.clone();
    emptied.metadata.managed_fields = Some(Vec::new());
    emptied.labels_mut().insert("x".into(), "y".into());
    let kept = secrets
        .replace(&name, &post_as("beta"), &emptied)
        .await
        .expect("replace");
    assert_eq!(
        entries(kept.managed_fields()),
        [entry("alpha", "Update", None), entry("beta", "Update", None)],
        "an empty list does not reset"
    );

    let reset = Patch::Merge(json!({"metadata": {"managedFields": [{}]}}));
    let cleared = secrets
        .patch(&name, &patch_as("gamma"), &reset)
        .await
        .expect("reset");
    assert!(
        cleared.managed_fields().is_empty(),
        "{:?}",
        cleared.managed_fields()
    );
    assert_ne!(cleared.resource_version(), kept.resource_version());
    assert_eq!(cleared.metadata.generation, kept.metadata.generation);
}
