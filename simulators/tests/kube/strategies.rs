//! What each kind's registry strategy decides, through kube-rs: only kinds with a spec/status
//! split carry `metadata.generation` (a Deployment's annotations count too), and a PUT
//! without resourceVersion is refused exactly where the real strategy refuses it.

use crate::kube_sim_support::{refusal, sim, unique};
use k8s_openapi::api::{
    apps::v1::Deployment,
    coordination::v1::Lease,
    core::v1::{ConfigMap, Namespace, Secret},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::json;
use std::fmt::Debug;

/// Creates `body` through `api`, relabels it, and returns both versions' generations.
async fn generations<K>(api: &Api<K>, body: serde_json::Value) -> (Option<i64>, Option<i64>)
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
{
    let object: K = serde_json::from_value(body).expect("an object");
    let created = api.create(&PostParams::default(), &object).await.expect("create");
    let relabelled = api
        .patch(
            &created.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "touched": "yes" } } })),
        )
        .await
        .expect("patch");
    (created.meta().generation, relabelled.meta().generation)
}

#[tokio::test]
async fn kinds_without_a_spec_status_split_should_never_carry_a_generation() {
    let sim = sim().await;
    let client = sim.client();
    let named = |n: &str| json!({ "metadata": { "name": n, "generation": 5 } });
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    assert_eq!(generations(&secrets, named("s")).await, (None, None));
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    assert_eq!(generations(&config_maps, named("c")).await, (None, None));
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    assert_eq!(generations(&leases, named("l")).await, (None, None));
    let namespaces: Api<Namespace> = Api::all(client);
    assert_eq!(generations(&namespaces, named(&unique("ns"))).await, (None, None));
}

#[tokio::test]
async fn a_deployment_generation_should_count_spec_and_annotation_changes_only() {
    let sim = sim().await;
    let deploys: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let body = json!({ "metadata": { "name": "web" }, "spec": {
        "selector": { "matchLabels": { "app": "web" } },
        "template": { "metadata": { "labels": { "app": "web" } },
                      "spec": { "containers": [{ "name": "c", "image": "i" }] } } } });
    assert_eq!(
        generations(&deploys, body).await,
        (Some(1), Some(1)),
        "labels do not count"
    );
    let pp = PatchParams::default();
    let annotated = deploys
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({ "metadata": { "annotations": { "a": "b" } } })),
        )
        .await
        .expect("annotate");
    assert_eq!(
        annotated.metadata.generation,
        Some(2),
        "a Deployment's annotations count"
    );
    let status = deploys
        .patch_status("web", &pp, &Patch::Merge(json!({ "status": { "replicas": 3 } })))
        .await
        .expect("status");
    assert_eq!(status.metadata.generation, Some(2), "status writes never count");
    let scaled = deploys
        .patch("web", &pp, &Patch::Merge(json!({ "spec": { "replicas": 4 } })))
        .await
        .expect("scale");
    assert_eq!(scaled.metadata.generation, Some(3));
}

#[tokio::test]
async fn a_put_without_resource_version_should_be_refused_only_where_the_strategy_refuses_it() {
    let sim = sim().await;
    let client = sim.client();
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let lease: Lease = serde_json::from_value(json!({ "metadata": { "name": "lock" } })).expect("lease");
    leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    let status = refusal(leases.replace("lock", &PostParams::default(), &lease).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        r#"leases.coordination.k8s.io "lock" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"#
    );
    let cause = &status.details.as_ref().expect("details").causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "metadata.resourceVersion")
    );

    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let secret = |v: &str| -> Secret {
        serde_json::from_value(json!({ "metadata": { "name": "s" }, "stringData": { "k": v } }))
            .expect("secret")
    };
    secrets
        .create(&PostParams::default(), &secret("1"))
        .await
        .expect("create");
    let overwritten = secrets
        .replace("s", &PostParams::default(), &secret("2"))
        .await
        .expect("Secrets allow unconditional updates");
    assert_eq!(
        overwritten.data.expect("data")["k"].0,
        b"2".to_vec(),
        "an unconditional update overwrites whatever is stored"
    );
}
