//! Deletion semantics through kube-rs: finalizers and deletionTimestamp, the background
//! garbage collector with each propagation policy (and for dependents whose owner was gone
//! before they were created, or whose owner's kind it cannot resolve), namespace teardown,
//! deletecollection.

use crate::kube_sim_support::{eventually, install_widget_crd, sim, unique};
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

/// A Secret controlled by `owner`, blocking its foreground deletion as controllers' do.
async fn dependent(api: &Api<Secret>, name: &str, owner: &Deployment, finalizers: &[&str]) -> Secret {
    let mut oref = owner.controller_owner_ref(&()).expect("owner has uid");
    oref.block_owner_deletion = Some(true);
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

/// Waits until `name` is gone from `api`.
async fn gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    eventually(&format!("{name} to be collected"), || async {
        api.get_opt(name).await.expect("get_opt").is_none().then_some(())
    })
    .await;
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
    gone(&secrets, "dep").await;
    let held = eventually("the held dependent to be marked for deletion", || async {
        let s = secrets
            .get("held-dep")
            .await
            .expect("dependent with finalizer waits");
        s.metadata.deletion_timestamp.is_some().then_some(s)
    })
    .await;
    assert_eq!(held.finalizers(), ["x/keep"]);
}

#[tokio::test]
async fn foreground_deletion_should_keep_the_owner_until_blocking_dependents_are_gone() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    dependent(&secrets, "dep", &o, &["x/keep"]).await;
    let pending = deploys
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete")
        .left()
        .expect("the owner waits, so the delete returns it");
    assert!(pending.finalizers().contains(&"foregroundDeletion".to_string()));
    eventually("the blocking dependent to be marked for deletion", || async {
        let s = secrets.get("dep").await.expect("held by its finalizer");
        s.metadata.deletion_timestamp.map(|_| ())
    })
    .await;
    assert!(
        deploys
            .get("web")
            .await
            .expect("owner waits")
            .metadata
            .deletion_timestamp
            .is_some(),
        "the owner waits while a blocking dependent exists"
    );
    secrets
        .patch(
            "dep",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    assert!(
        secrets.get_opt("dep").await.expect("get_opt").is_none(),
        "removing the last finalizer completes the deletion at once"
    );
    gone(&deploys, "web").await;
}

#[tokio::test]
async fn foreground_deletion_should_not_wait_for_dependents_that_do_not_block() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    let mut oref = o.controller_owner_ref(&()).expect("owner has uid");
    oref.block_owner_deletion = Some(false);
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "loose", "ownerReferences": [oref], "finalizers": ["x/keep"]}}),
    )
    .expect("secret");
    secrets.create(&PostParams::default(), &s).await.expect("create");
    deploys
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete");
    gone(&deploys, "web").await;
    let loose = eventually("the dependent to be marked for deletion", || async {
        let s = secrets.get("loose").await.expect("held by its finalizer");
        s.metadata.deletion_timestamp.is_some().then_some(s)
    })
    .await;
    assert_eq!(loose.finalizers(), ["x/keep"]);
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
    let pending = deploys
        .delete("web", &dp)
        .await
        .expect("delete")
        .left()
        .expect("the owner waits for the collector, so the delete returns it");
    assert!(pending.finalizers().contains(&"orphan".to_string()));
    gone(&deploys, "web").await;
    let orphan = secrets.get("dep").await.expect("dependent kept");
    assert!(orphan.owner_references().is_empty());
    assert!(orphan.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn a_dependent_whose_owner_is_already_gone_should_be_collected() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    deploys
        .delete("web", &DeleteParams::background())
        .await
        .expect("delete");
    dependent(&secrets, "late", &o, &[]).await;
    gone(&secrets, "late").await;
    // An owner of the same name created again is another object (another uid).
    let again = owner(&deploys, "web").await;
    assert_ne!(again.uid(), o.uid());
    dependent(&secrets, "stale-ref", &o, &[]).await;
    gone(&secrets, "stale-ref").await;
    assert!(
        deploys.get_opt("web").await.expect("get_opt").is_some(),
        "the new owner is not touched"
    );
}

#[tokio::test]
async fn a_dependent_with_a_live_owner_should_only_lose_the_reference_to_a_gone_one() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let alive = owner(&deploys, "alive").await;
    let doomed = owner(&deploys, "doomed").await;
    let refs = [alive.controller_owner_ref(&()), doomed.owner_ref(&())];
    let s: Secret = serde_json::from_value(json!({"metadata": {"name": "shared", "ownerReferences": refs}}))
        .expect("secret");
    secrets.create(&PostParams::default(), &s).await.expect("create");
    deploys
        .delete("doomed", &DeleteParams::background())
        .await
        .expect("delete");
    let kept = eventually("the reference to the gone owner to be removed", || async {
        let s = secrets.get("shared").await.expect("kept: an owner is alive");
        (s.owner_references().len() == 1).then_some(s)
    })
    .await;
    assert_eq!(kept.owner_references()[0].name, "alive");
    assert!(kept.metadata.deletion_timestamp.is_none());
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
    gone(&cms, "plain").await;
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

/// An ownerReference to `kind` `name` (uid `uid`) of `api_version`.
fn owner_ref(api_version: &str, kind: &str, name: &str, uid: &str) -> serde_json::Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid})
}

/// A controlling, blocking ownerReference to Widget `w`, a kind no CRD serves until
/// [`install_widget_crd`].
fn widget_controller() -> serde_json::Value {
    json!({
        "apiVersion": "sim.ferrvault.dev/v1", "kind": "Widget", "name": "w", "uid": "uid-of-w",
        "controller": true, "blockOwnerDeletion": true,
    })
}

/// Creates Secret `name` with `refs` as its ownerReferences.
async fn owned(api: &Api<Secret>, name: &str, refs: &[serde_json::Value]) -> Secret {
    let s: Secret =
        serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": refs}})).expect("secret");
    api.create(&PostParams::default(), &s)
        .await
        .expect("dependent created")
}

/// Fails unless `name` is still there, not being deleted, with all of `before`'s references.
async fn kept_whole(api: &Api<Secret>, before: &Secret) {
    let name = before.name_any();
    let now = api
        .get(&name)
        .await
        .unwrap_or_else(|e| panic!("{name} kept: {e}"));
    assert!(
        now.metadata.deletion_timestamp.is_none(),
        "{name} not being deleted"
    );
    assert_eq!(
        now.owner_references(),
        before.owner_references(),
        "{name}: no reference dropped"
    );
}

#[tokio::test]
async fn a_dependent_of_an_owner_whose_kind_cannot_be_resolved_should_be_kept_until_it_resolves() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let gone_deployment = owner_ref("apps/v1", "Deployment", "web", "uid-of-a-gone-web");
    let not_installed = owned(&secrets, "not-installed", &[widget_controller()]).await;
    let unserved = owner_ref("apps/v9", "Deployment", "web", "uid-of-web-v9");
    let unserved_version = owned(&secrets, "unserved-version", &[unserved]).await;
    let mixed = owned(&secrets, "mixed", &[gone_deployment.clone(), widget_controller()]).await;
    // Control: a dependent of a served kind whose owner does not exist is collected, so the
    // collector has judged the others by then.
    owned(&secrets, "dangling", &[gone_deployment]).await;
    gone(&secrets, "dangling").await;
    for kept in [&not_installed, &unserved_version, &mixed] {
        kept_whole(&secrets, kept).await;
    }

    // The kind installed, the owner resolves and is found missing: as the real collector's
    // retry would, the collector deletes its dependents.
    install_widget_crd(&sim.client()).await;
    gone(&secrets, "not-installed").await;
    gone(&secrets, "mixed").await;
    kept_whole(&secrets, &unserved_version).await;
}

#[tokio::test]
async fn a_foreground_owner_should_wait_for_a_blocking_dependent_the_collector_cannot_judge() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let o = owner(&deploys, "web").await;
    let mut blocking = o.owner_ref(&()).expect("owner has uid");
    blocking.block_owner_deletion = Some(true);
    let blocking = serde_json::to_value(blocking).expect("reference");
    let held = owned(&secrets, "held", &[blocking.clone(), widget_controller()]).await;
    owned(&secrets, "plain", &[blocking]).await;
    deploys
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete");
    gone(&secrets, "plain").await;
    kept_whole(&secrets, &held).await;
    let waiting = deploys
        .get("web")
        .await
        .expect("the owner waits for its blocking dependent");
    assert!(waiting.finalizers().contains(&"foregroundDeletion".to_string()));

    install_widget_crd(&sim.client()).await;
    gone(&secrets, "held").await;
    gone(&deploys, "web").await;
}
