//! kube-rs typed API calls against the simulator: get/get_opt/list/create/replace/patch
//! (all four types)/delete/patch_status on Secrets, Deployments, Leases and a CRD kind.

use crate::kube_sim_support::{Widget, WidgetSpec, WidgetStatus, install_widget_crd, sim, unique};
use k8s_openapi::{
    ByteString,
    api::{apps::v1::Deployment, coordination::v1::Lease, core::v1::Secret},
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

fn secret(name: &str) -> Secret {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"app": "demo"}}, "stringData": {"user": "admin"}}),
    )
    .expect("valid secret")
}

#[tokio::test]
async fn secret_should_round_trip_with_string_data_folded_into_data() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let name = unique("s");
    let created = secrets
        .create(&PostParams::default(), &secret(&name))
        .await
        .expect("create");
    assert_eq!(
        created.data.as_ref().and_then(|d| d.get("user")),
        Some(&ByteString(b"admin".to_vec()))
    );
    assert!(created.string_data.is_none(), "stringData is never returned");
    assert_eq!(
        created.metadata.generation, None,
        "a Secret has no spec/status split, hence no generation"
    );
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    let fetched = secrets.get(&name).await.expect("get");
    assert_eq!(fetched.resource_version(), created.resource_version());
    assert!(secrets.get_opt("missing").await.expect("get_opt").is_none());
    let meta = secrets.get_metadata(&name).await.expect("metadata-only get");
    assert_eq!(
        meta.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(meta.metadata.uid, created.metadata.uid);
    let listed = secrets
        .list(&ListParams::default().labels("app=demo"))
        .await
        .expect("list");
    assert_eq!(
        listed.items.iter().map(|s| s.name_any()).collect::<Vec<_>>(),
        std::slice::from_ref(&name)
    );
}

#[tokio::test]
async fn create_twice_should_fail_with_already_exists() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let name = unique("s");
    secrets
        .create(&PostParams::default(), &secret(&name))
        .await
        .expect("first create");
    let err = secrets
        .create(&PostParams::default(), &secret(&name))
        .await
        .expect_err("second create must fail");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists"),
        "{err:?}"
    );
}

#[tokio::test]
async fn create_in_a_missing_namespace_should_be_not_found() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "nowhere");
    let err = secrets
        .create(&PostParams::default(), &secret("s"))
        .await
        .expect_err("namespace missing");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 404), "{err:?}");
}

#[tokio::test]
async fn lease_replace_with_stale_resource_version_should_conflict() {
    let sim = sim().await;
    let leases: Api<Lease> = Api::namespaced(sim.client(), "default");
    let name = unique("lease");
    let lease: Lease =
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"holderIdentity": "a"}}))
            .expect("lease");
    let v1 = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    let mut mine = v1.clone();
    mine.spec.as_mut().expect("spec").holder_identity = Some("b".into());
    let v2 = leases
        .replace(&name, &PostParams::default(), &mine)
        .await
        .expect("fresh replace");
    assert_eq!(
        v2.spec.as_ref().and_then(|s| s.holder_identity.as_deref()),
        Some("b")
    );
    assert_eq!(v2.metadata.generation, None, "Leases have no generation");
    let mut stale = v1.clone();
    stale.spec.as_mut().expect("spec").holder_identity = Some("c".into());
    let err = leases
        .replace(&name, &PostParams::default(), &stale)
        .await
        .expect_err("stale replace must fail");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict"),
        "{err:?}"
    );
    let noop = leases
        .replace(&name, &PostParams::default(), &v2)
        .await
        .expect("no-op replace");
    assert_eq!(
        noop.resource_version(),
        v2.resource_version(),
        "a no-op write changes nothing"
    );
}

#[tokio::test]
async fn deployment_should_accept_all_four_patch_types_and_bump_generation_on_template_changes() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let name = unique("web");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "app:1"}, {"name": "side", "image": "side:1"}]}}}
    }))
    .expect("deployment");
    deploys.create(&PostParams::default(), &d).await.expect("create");
    let pp = PatchParams::default();
    let merged = deploys
        .patch(
            &name,
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"team": "a"}}})),
        )
        .await
        .expect("merge");
    assert_eq!(
        (
            merged.labels().get("team").map(String::as_str),
            merged.metadata.generation
        ),
        (Some("a"), Some(1))
    );
    let restart = json!({"spec": {"template": {"metadata": {"annotations": {"restartedAt": "now"}}}}});
    let strategic = deploys
        .patch(&name, &pp, &Patch::Strategic(restart))
        .await
        .expect("strategic");
    assert_eq!(
        strategic.metadata.generation,
        Some(2),
        "pod template change bumps generation"
    );
    let image =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "side:2"}]}}}});
    let strategic = deploys
        .patch(&name, &pp, &Patch::Strategic(image))
        .await
        .expect("strategic list merge");
    let containers = strategic
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| p.containers.clone())
        .expect("containers");
    assert_eq!(
        containers
            .iter()
            .map(|c| c.image.clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["app:1", "side:2"]
    );
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]))
            .expect("ops");
    let jp = deploys
        .patch(&name, &pp, &Patch::<()>::Json(ops))
        .await
        .expect("json patch");
    assert_eq!(jp.spec.as_ref().and_then(|s| s.replicas), Some(3));
    let apply = PatchParams::apply("test").force();
    let applied = deploys
        .patch(
            &name,
            &apply,
            &Patch::Apply(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"minReadySeconds": 5}}),
            ),
        )
        .await
        .expect("apply");
    assert_eq!(applied.spec.as_ref().and_then(|s| s.min_ready_seconds), Some(5));
    let created = deploys
        .patch(&unique("applied"), &apply, &Patch::Apply(&d))
        .await
        .expect("apply creates");
    assert_eq!(created.metadata.generation, Some(1));
}

#[tokio::test]
async fn custom_resource_should_keep_spec_and_status_apart() {
    let sim = sim().await;
    install_widget_crd(&sim.client()).await;
    let widgets: Api<Widget> = Api::namespaced(sim.client(), "default");
    let name = unique("w");
    let mut w = Widget::new(&name, WidgetSpec { size: 1 });
    w.status = Some(WidgetStatus { observed: 99 });
    let created = widgets.create(&PostParams::default(), &w).await.expect("create");
    assert_eq!(created.status, None, "status is ignored on create");
    let patched = widgets
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 5}, "status": {"observed": 1}})),
        )
        .await
        .expect("patch status");
    assert_eq!(
        (patched.spec.size, patched.status.clone().map(|s| s.observed)),
        (1, Some(1))
    );
    assert_eq!(
        patched.metadata.generation,
        Some(1),
        "status writes never bump generation"
    );
    let mut bigger = patched.clone();
    bigger.spec.size = 2;
    bigger.status = Some(WidgetStatus { observed: 7 });
    let replaced = widgets
        .replace(&name, &PostParams::default(), &bigger)
        .await
        .expect("replace");
    assert_eq!(
        (
            replaced.spec.size,
            replaced.status.map(|s| s.observed),
            replaced.metadata.generation
        ),
        (2, Some(1), Some(2))
    );
    let deleted = widgets
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.is_left(), "custom resources return the deleted object");
    assert!(widgets.get_opt(&name).await.expect("get_opt").is_none());
}

#[tokio::test]
async fn event_recorder_should_create_then_patch_a_series() {
    use k8s_openapi::api::events::v1::Event as K8sEvent;
    use kube::{
        Resource,
        runtime::events::{Event, EventType, Recorder, Reporter},
    };
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let s = secrets
        .create(&PostParams::default(), &secret(&unique("s")))
        .await
        .expect("create");
    let recorder = Recorder::new(
        sim.client(),
        Reporter {
            controller: "sim-test".into(),
            instance: None,
        },
    );
    let ev = Event {
        type_: EventType::Normal,
        reason: "Synced".into(),
        note: Some("ok".into()),
        action: "Sync".into(),
        secondary: None,
    };
    recorder
        .publish(&ev, &s.object_ref(&()))
        .await
        .expect("first publish creates");
    recorder
        .publish(&ev, &s.object_ref(&()))
        .await
        .expect("second publish patches the series");
    let events: Vec<K8sEvent> = Api::namespaced(sim.client(), "default")
        .list(&ListParams::default())
        .await
        .expect("list")
        .items;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(events[0].reason.as_deref(), Some("Synced"));
}
