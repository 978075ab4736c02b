//! What a test reads back through the harness: the operator's metrics, Events, FerrVault's
//! request counts, content hashes.

use std::collections::BTreeMap;

use ferrvault_operator::{
    CONTENT_HASH_KEY_SECRET,
    rules::{ContentHashKey, content_hash},
};
use k8s_openapi::api::{core::v1::Secret, events::v1::Event};
use kube::Api;

use super::Harness;
use crate::fixtures::NS;

impl Harness {
    /// The Prometheus text of the operator's and runtime's registry.
    pub fn metrics_text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("metrics encode");
        out
    }

    /// Every Event in the namespace (events.k8s.io/v1).
    pub async fn events(&self) -> Vec<Event> {
        Api::<Event>::namespaced(self.client.clone(), NS)
            .list(&Default::default())
            .await
            .expect("list Events")
            .items
    }

    /// Events with `reason` about object `name`.
    pub async fn events_for(&self, name: &str, reason: &str) -> Vec<Event> {
        self.events()
            .await
            .into_iter()
            .filter(|e| {
                e.reason.as_deref() == Some(reason)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
            })
            .collect()
    }

    /// Reveal requests the FerrVault simulator received (both modes).
    pub fn reveals(&self) -> u64 {
        let endpoints = self.fv.stats().total.endpoints;
        endpoints.get("reveal").copied().unwrap_or(0) + endpoints.get("cloud_reveal").copied().unwrap_or(0)
    }

    /// The value of the metric sample whose line starts with `series` (name and labels).
    pub fn metric(&self, series: &str) -> Option<f64> {
        self.metrics_text()
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    }
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
