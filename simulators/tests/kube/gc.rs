//! Deletion semantics through kube-rs: finalizers and deletionTimestamp, ownerReference
//! garbage collection with each propagation policy, namespace teardown, deletecollection.

use crate::kube_sim_support::{eventually, sim, unique};
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{ConfigMap, Namespace, Secret},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy},
};
use serde_json::json;

async fn owner(api: &Api<Deployment>, name: &str) -> Deployment {
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))
    .expect("deployment");
    api.create(&PostParams::default(), &d)
        .await
        .expect("owner created")
}

async fn dependent(api: &Api<Secret>, name: &str, owner: &Deployment, finalizers: &[&str]) -> Secret {
    let oref = owner.controller_owner_ref(&()).expect("owner has uid");
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": name, "ownerReferences": [oref], "finalizers": finalizers}}),
    )
    .expect("secret");
    api.create(&PostParams::default(), &s)
        .await
        .expect("dependent created")
}

#[tokio::test]
async fn object_with_finalizer_should_stay_until_the_finalizer_is_removed() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "held", "finalizers": ["sim.ferrvault.dev/cleanup"]}}),
    )
    .expect("secret");
    secrets.create(&PostParams::default(), &s).await.expect("create");
    let pending = secrets
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete accepted");
    let pending = pending.left().expect("a pending deletion returns the object");
    assert!(pending.metadata.deletion_timestamp.is_some());
    let still = secrets.get("held").await.expect("still there");
    assert_eq!(still.finalizers(), ["sim.ferrvault.dev/cleanup"]);
    let err = secrets
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["a", "sim.ferrvault.dev/cleanup"]}})),
        )
        .await
        .expect_err("no new finalizers while deleting");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 422), "{err:?}");
    secrets
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    assert!(
        secrets.get_opt("held").await.expect("get_opt").is_none(),
        "gone once the last finalizer is removed"
    );
}

#[tokio::test]
async fn deleting_an_owner_should_garbage_collect_its_dependents_in_background() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    dependent(&secrets, "dep", &o, &[]).await;
    dependent(&secrets, "held-dep", &o, &["x/keep"]).await;
    let result = deploys
        .delete("web", &DeleteParams::background())
        .await
        .expect("delete");
    assert!(
        result.is_right(),
        "a completed delete of a built-in returns a Success Status"
    );
    assert!(deploys.get_opt("web").await.expect("get_opt").is_none());
    assert!(
        secrets.get_opt("dep").await.expect("get_opt").is_none(),
        "dependent collected"
    );
    let held = secrets
        .get("held-dep")
        .await
        .expect("dependent with finalizer waits");
    assert!(held.metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn foreground_deletion_should_keep_the_owner_until_dependents_are_gone() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    dependent(&secrets, "dep", &o, &["x/keep"]).await;
    deploys
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete");
    let waiting = deploys.get("web").await.expect("owner waits for its dependents");
    assert!(waiting.finalizers().contains(&"foregroundDeletion".to_string()));
    secrets
        .patch(
            "dep",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    assert!(secrets.get_opt("dep").await.expect("get_opt").is_none());
    assert!(
        deploys.get_opt("web").await.expect("get_opt").is_none(),
        "owner goes once dependents are gone"
    );
}

#[tokio::test]
async fn orphan_deletion_should_keep_dependents_without_the_owner_reference() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    dependent(&secrets, "dep", &o, &[]).await;
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..DeleteParams::default()
    };
    deploys.delete("web", &dp).await.expect("delete");
    let orphan = secrets.get("dep").await.expect("dependent kept");
    assert!(orphan.owner_references().is_empty());
}

#[tokio::test]
async fn deleting_a_namespace_should_delete_its_objects_then_the_namespace() {
    let sim = sim().await;
    let client = sim.client();
    let name = unique("team");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).expect("ns");
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    assert_eq!(created.labels().get("kubernetes.io/metadata.name"), Some(&name));
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &name);
    let cm = |n: &str, fin: &[&str]| {
        serde_json::from_value::<ConfigMap>(json!({"metadata": {"name": n, "finalizers": fin}})).expect("cm")
    };
    cms.create(&PostParams::default(), &cm("plain", &[]))
        .await
        .expect("cm");
    cms.create(&PostParams::default(), &cm("held", &["x/keep"]))
        .await
        .expect("cm");
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete namespace");
    let terminating = namespaces
        .get(&name)
        .await
        .expect("namespace waits for its contents");
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    let err = cms
        .create(&PostParams::default(), &cm("late", &[]))
        .await
        .expect_err("terminating namespace refuses new objects");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 403), "{err:?}");
    assert!(cms.get_opt("plain").await.expect("get_opt").is_none());
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    eventually("the namespace disappears", || async {
        namespaces
            .get_opt(&name)
            .await
            .expect("get_opt")
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn delete_collection_should_delete_only_selected_objects() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    for (n, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let s: Secret =
            serde_json::from_value(json!({"metadata": {"name": n, "labels": {"app": app}}})).expect("secret");
        secrets.create(&PostParams::default(), &s).await.expect("create");
    }
    secrets
        .delete_collection(&DeleteParams::default(), &ListParams::default().labels("app=x"))
        .await
        .expect("deletecollection");
    let left: Vec<String> = secrets
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|s| s.name_any())
        .collect();
    assert_eq!(left, ["c"]);
}

#[tokio::test]
async fn default_namespaces_should_refuse_deletion() {
    let sim = sim().await;
    let namespaces: Api<Namespace> = Api::all(sim.client());
    let err = namespaces
        .delete("kube-system", &DeleteParams::default())
        .await
        .expect_err("protected");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 403), "{err:?}");
    assert!(
        namespaces
            .get("kube-system")
            .await
            .expect("still there")
            .metadata
            .deletion_timestamp
            .is_none()
    );
}
