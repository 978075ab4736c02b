//! `kubectl get` of built-in kinds prints the columns the real server's printers define
//! (server-side tables), filled from each object.

use crate::{kube_sim_support::sim, kubectl_support::Kubectl};
use k8s_openapi::api::{apps::v1::Deployment, coordination::v1::Lease};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

/// The header and the first row of a `kubectl get` table, split on whitespace.
fn header_and_row(table: &str) -> (Vec<String>, Vec<String>) {
    let mut lines = table
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>());
    let header = lines.next().unwrap_or_default();
    (header, lines.next().unwrap_or_default())
}

#[tokio::test]
async fn kubectl_get_should_print_the_columns_of_deployments_secrets_configmaps_and_leases() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=3",
    ])
    .await;
    Api::<Deployment>::namespaced(sim.client(), "default")
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}})),
        )
        .await
        .expect("status written");
    k.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=user=u",
        "--from-literal=password=p",
    ])
    .await;
    k.ok(&["create", "configmap", "settings", "--from-literal=mode=fast"])
        .await;
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "leader"}, "spec": {"holderIdentity": "pod-a", "leaseDurationSeconds": 15}
    }))
    .expect("lease");
    Api::<Lease>::namespaced(sim.client(), "default")
        .create(&PostParams::default(), &lease)
        .await
        .expect("lease created");

    let (header, row) = header_and_row(&k.ok(&["get", "deployments"]).await);
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(row[..4], ["web", "2/3", "3", "2"]);
    let (header, row) = header_and_row(&k.ok(&["get", "deployments", "-o", "wide"]).await);
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(row[5..], ["nginx", "nginx:1.27", "app=web"]);

    let (header, row) = header_and_row(&k.ok(&["get", "secrets"]).await);
    assert_eq!(header, ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(row[..3], ["db", "Opaque", "2"]);
    let (header, row) = header_and_row(&k.ok(&["get", "configmaps"]).await);
    assert_eq!(header, ["NAME", "DATA", "AGE"]);
    assert_eq!(row[..2], ["settings", "1"]);
    let (header, row) = header_and_row(&k.ok(&["get", "leases"]).await);
    assert_eq!(header, ["NAME", "HOLDER", "AGE"]);
    assert_eq!(row[..2], ["leader", "pod-a"]);
    let age = &row[2];
    assert!(age.ends_with('s'), "a fresh object is seconds old: {age}");
}
