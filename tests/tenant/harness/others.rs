//! What other parties own in a tenant's namespace: Secrets and workloads the administrator
//! creates (standing for another controller, another team, Kubernetes' token controller), read
//! back whole to prove an attack left them byte-for-byte unchanged; and an object stored without
//! admission.

use ferrvault_operator::api::FerrVaultSecret;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
use kube::{Api, Resource, ResourceExt, api::PostParams};
use serde_json::{Value, json};

use super::world::World;

impl World {
    /// Creates `secret` (a Secret manifest without namespace) in `namespace` as the
    /// administrator; returns it as stored.
    pub async fn others_secret(&self, namespace: &str, secret: Value) -> Secret {
        let secret: Secret = serde_json::from_value(secret).expect("a Secret");
        Api::<Secret>::namespaced(self.admin.clone(), namespace)
            .create(&PostParams::default(), &secret)
            .await
            .unwrap_or_else(|e| panic!("the administrator creates Secret {}: {e}", secret.name_any()))
    }

    /// Secret `name` of `namespace` as stored now, read by the administrator.
    pub async fn secret(&self, namespace: &str, name: &str) -> Secret {
        Api::<Secret>::namespaced(self.admin.clone(), namespace)
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("Secret {namespace}/{name}: {e}"))
    }

    /// Fails unless Secret `before` is, as stored now, the same whole object: data, type, labels,
    /// annotations, owner references, `resourceVersion`, everything.
    pub async fn assert_unchanged(&self, before: &Secret) {
        let namespace = before.namespace().expect("a stored Secret has a namespace");
        let now = self.secret(&namespace, &before.name_any()).await;
        assert!(
            &now == before,
            "Secret {namespace}/{} changed: resourceVersion {:?} -> {:?}, keys {:?} -> {:?}",
            before.name_any(),
            before.resource_version(),
            now.resource_version(),
            before.data.as_ref().map(|d| d.keys().collect::<Vec<_>>()),
            now.data.as_ref().map(|d| d.keys().collect::<Vec<_>>()),
        );
    }

    /// Creates Deployment `name` (one container) in `namespace` as the administrator: a
    /// workload the tenant runs but may not edit.
    pub async fn deployment(&self, namespace: &str, name: &str) -> Deployment {
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": { "name": name },
            "spec": {
                "selector": { "matchLabels": { "app": name } },
                "template": {
                    "metadata": { "labels": { "app": name } },
                    "spec": { "containers": [{ "name": "app", "image": "example.com/app:1" }] },
                },
            },
        }))
        .expect("a Deployment");
        Api::<Deployment>::namespaced(self.admin.clone(), namespace)
            .create(&PostParams::default(), &deployment)
            .await
            .unwrap_or_else(|e| panic!("the administrator creates Deployment {name}: {e}"))
    }

    /// Deployment `name` of `namespace` as stored now, read by the administrator.
    pub async fn deployment_now(&self, namespace: &str, name: &str) -> Deployment {
        Api::<Deployment>::namespaced(self.admin.clone(), namespace)
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("Deployment {namespace}/{name}: {e}"))
    }

    /// Stores FerrVaultSecret `name` with `spec` exactly as given in `namespace`, past
    /// admission (the API server refuses it, 422): written straight into storage with the
    /// simulator's test control, as an object stored under an older CRD version or put into etcd
    /// directly exists in a real cluster.
    pub fn store_unadmitted(&self, namespace: &str, name: &str, spec: Value) {
        let object = json!({
            "apiVersion": FerrVaultSecret::api_version(&()),
            "kind": FerrVaultSecret::kind(&()),
            "metadata": { "name": name, "namespace": namespace },
            "spec": spec,
        });
        self.kube
            .store_bypassing_admission(
                &FerrVaultSecret::group(&()),
                &FerrVaultSecret::version(&()),
                &FerrVaultSecret::plural(&()),
                object,
            )
            .unwrap_or_else(|e| panic!("{name} written into storage: {}", e.message));
    }
}
