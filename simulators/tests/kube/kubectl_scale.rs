//! The `scale` subresource: `kubectl scale` of Deployments and StatefulSets, and the
//! `autoscaling/v1` Scale that kube-rs reads and replaces.

use crate::{kube_sim_support::sim, kubectl_support::Kubectl};
use k8s_openapi::api::{
    apps::v1::{Deployment, StatefulSet},
    autoscaling::v1::Scale,
};
use kube::{
    Api,
    api::{PostParams, ResourceExt},
};
use serde_json::json;

#[tokio::test]
async fn kubectl_scale_should_change_the_replicas_of_deployments_and_statefulsets() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    k.ok(&["create", "deployment", "web", "--image=nginx", "--replicas=2"])
        .await;
    let sts: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "postgres"}]}}},
    }))
    .expect("statefulset");
    Api::<StatefulSet>::namespaced(sim.client(), "default")
        .create(&PostParams::default(), &sts)
        .await
        .expect("created");

    assert!(
        k.ok(&["scale", "deployment", "web", "--replicas=5"])
            .await
            .contains("deployment.apps/web scaled")
    );
    assert!(
        k.ok(&["scale", "statefulset", "db", "--replicas=0"])
            .await
            .contains("statefulset.apps/db scaled")
    );
    let err = k
        .fails(&[
            "scale",
            "deployment",
            "web",
            "--replicas=1",
            "--current-replicas=3",
        ])
        .await;
    assert!(err.contains("Expected replicas to be 3, was 5"), "{err}");

    let deployments: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let d = deployments.get("web").await.expect("deployment");
    assert_eq!(d.spec.and_then(|s| s.replicas), Some(5));
    let db = Api::<StatefulSet>::namespaced(sim.client(), "default")
        .get("db")
        .await
        .expect("statefulset");
    assert_eq!(
        db.spec.and_then(|s| s.replicas),
        Some(0),
        "scaled to zero, not unset"
    );

    let scale = deployments.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(5));
    let status = scale.status.expect("status");
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (0, Some("app=web"))
    );
    assert_eq!(scale.metadata.resource_version, d.metadata.resource_version);
}

#[tokio::test]
async fn replacing_a_scale_should_honour_its_resource_version_and_refuse_negative_replicas() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    k.ok(&["create", "deployment", "web", "--image=nginx"]).await;
    let deployments: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let mut scale: Scale = deployments.get_scale("web").await.expect("scale");
    scale.spec.get_or_insert_default().replicas = Some(3);
    let replaced = deployments
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .expect("replaced");
    assert_eq!(replaced.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_ne!(replaced.resource_version(), scale.resource_version());

    let stale = deployments
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .expect_err("a stale resourceVersion conflicts");
    assert!(
        matches!(&stale, kube::Error::Api(s) if s.code == 409),
        "{stale:?}"
    );

    scale.metadata.resource_version = None;
    scale.spec.get_or_insert_default().replicas = Some(-1);
    let negative = deployments
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .expect_err("negative replicas are invalid");
    assert!(
        matches!(&negative, kube::Error::Api(s) if s.code == 422),
        "{negative:?}"
    );

    k.ok(&["create", "secret", "generic", "plain", "--from-literal=a=b"])
        .await;
    let no_scale = k.fails(&["scale", "secret", "plain", "--replicas=1"]).await;
    assert!(
        no_scale.contains("NotFound")
            && no_scale.contains("the server could not find the requested resource"),
        "Secrets have no scale subresource: {no_scale}"
    );
}
