//! What several operator tests observe beyond the shared harness (`support/operator.rs`): the
//! content-hash key and hashes, Deployments and their pod-template annotations, Event
//! occurrences and reconcile counts.

use std::collections::BTreeMap;

use crate::operator_support::{Harness, NS};
use ferrvault_operator::{
    CONTENT_HASH_KEY_SECRET,
    rules::{ContentHashKey, content_hash},
};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
use kube::{Api, api::PostParams};

impl Harness {
    /// How many times events with `reason` about `name` were published: Events of the same
    /// reason fold into one object whose `series.count` counts the repeats.
    pub async fn occurrences(&self, name: &str, reason: &str) -> i32 {
        self.events_for(name, reason)
            .await
            .iter()
            .map(|e| e.series.as_ref().map_or(1, |s| s.count))
            .sum()
    }

    /// The operator's content-hash key, read from its Secret (the harness runs in `default`).
    pub async fn content_hash_key(&self) -> ContentHashKey {
        let stored = Api::<Secret>::namespaced(self.client.clone(), "default")
            .get(CONTENT_HASH_KEY_SECRET)
            .await
            .expect("the operator created its content-hash key Secret");
        ContentHashKey::from_bytes(&stored.data.expect("data")["key"].0).expect("a 32-byte key")
    }

    /// The content hash the operator stamps for `data` (with its key).
    pub async fn hash_of(&self, data: &BTreeMap<String, Vec<u8>>) -> String {
        content_hash(&self.content_hash_key().await, data)
    }

    /// Creates Deployment `name` (one container, a pod-template annotation `owner: team-shop`).
    pub async fn create_deployment(&self, name: &str) -> Deployment {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}, "annotations": {"owner": "team-shop"}},
                    "spec": {"containers": [{"name": "app", "image": "example/app:1"}]}
                }
            }
        }))
        .expect("a Deployment");
        self.deployments()
            .create(&PostParams::default(), &deployment)
            .await
            .expect("create Deployment")
    }

    /// A controller ownerReference to a new Deployment `name`: a live owner (the garbage
    /// collector deletes a dependent whose owner does not exist).
    pub async fn controller_ref_to_new_deployment(&self, name: &str) -> serde_json::Value {
        let owner = self.create_deployment(name).await;
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "name": name,
            "uid": owner.metadata.uid.expect("a stored Deployment has a uid"), "controller": true
        })
    }

    pub fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Finished reconciles of the FerrVaultSecret controller, whatever their result.
    pub fn secret_reconciles(&self) -> f64 {
        self.metrics_text()
            .lines()
            .filter(|l| {
                l.starts_with("controller_runtime_reconcile_total{") && l.contains("\"ferrvaultsecret\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

/// A pod-template annotation of a Deployment.
pub fn template_annotation(deployment: &Deployment, key: &str) -> Option<String> {
    deployment
        .spec
        .as_ref()?
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(key)
        .cloned()
}
