//! The floor's request bodies: the fields (and so about the size) of the operator's for the
//! benchmark's objects.

use k8s_openapi::{
    api::{core::v1::Secret, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::{MicroTime, OwnerReference},
};
use kube::{Resource, ResourceExt, api::ObjectMeta};
use serde_json::json;

use ferrvault_operator::{
    CONTENT_HASH_KEY_SECRET, FIELD_MANAGER,
    api::{FerrVaultConnection, FerrVaultSecret},
};
use ferrvault_testkit::bench_world::VAULT_KEYS;

/// The target Secret as the operator writes it for the benchmark's objects.
pub(super) fn target_secret(cr: &FerrVaultSecret) -> Secret {
    let owner = OwnerReference {
        api_version: FerrVaultSecret::api_version(&()).into_owned(),
        kind: FerrVaultSecret::kind(&()).into_owned(),
        name: cr.name_any(),
        uid: cr.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let values = ["bench", "bench-not-a-secret"];
    Secret {
        metadata: ObjectMeta {
            name: Some(cr.name_any()),
            namespace: cr.namespace(),
            labels: Some(
                [(
                    "app.kubernetes.io/managed-by".to_owned(),
                    FIELD_MANAGER.to_owned(),
                )]
                .into(),
            ),
            annotations: Some(
                [(
                    "ferrvault.com/content-hash".to_owned(),
                    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".to_owned(),
                )]
                .into(),
            ),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".into()),
        data: Some(
            VAULT_KEYS
                .iter()
                .zip(values)
                .map(|(k, v)| ((*k).to_owned(), k8s_openapi::ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Secret::default()
    }
}

/// A Ready status with the fields the operator's has after a first sync.
pub(super) fn ready_status(cr: &FerrVaultSecret) -> serde_json::Value {
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_default();
    json!({
        "conditions": [{
            "type": "Ready",
            "status": "True",
            "reason": "Synced",
            "message": format!("synced 2 keys to Secret {}", cr.name_any()),
            "lastTransitionTime": now.to_string(),
            "observedGeneration": cr.meta().generation,
        }],
        "lastSyncedAt": now.to_string(),
        "syncedKeys": VAULT_KEYS,
        "observedGeneration": cr.meta().generation,
        "observedSpecDigest": "0123456789abcdef",
        "observedInputs": "0123456789abcdef",
        "targetResourceVersion": "1",
    })
}

/// The `Synced` Event the operator publishes for a new target.
pub(super) fn synced_event(cr: &FerrVaultSecret) -> Event {
    let now = jiff::Timestamp::now();
    Event {
        action: Some("Sync".into()),
        reason: Some("Synced".into()),
        type_: Some("Normal".into()),
        note: Some(format!(
            "synced 2 keys to Secret {} (content hash 01234567)",
            cr.name_any()
        )),
        event_time: Some(MicroTime(now)),
        regarding: Some(cr.object_ref(&())),
        reporting_controller: Some(FIELD_MANAGER.into()),
        reporting_instance: Some(FIELD_MANAGER.into()),
        metadata: ObjectMeta {
            name: Some(format!("{}.{:x}", cr.name_any(), now.as_nanosecond())),
            namespace: cr.namespace(),
            ..ObjectMeta::default()
        },
        ..Event::default()
    }
}

/// The content-hash key Secret as the operator creates it (32 random bytes).
pub(super) fn content_hash_key() -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(CONTENT_HASH_KEY_SECRET.into()),
            namespace: Some("default".into()),
            annotations: Some(
                [(
                    "ferrvault.com/description".to_owned(),
                    "HMAC key of the ferrvault.com/content-hash annotations. Rotate by deleting this \
                     Secret (every workload with a rollout target restarts once)."
                        .to_owned(),
                )]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".into()),
        data: Some(
            [(
                "key".to_owned(),
                k8s_openapi::ByteString(rand::random::<[u8; 32]>().to_vec()),
            )]
            .into(),
        ),
        ..Secret::default()
    }
}

/// A Ready status of a connection as the operator writes it after a successful probe.
pub(super) fn connection_status(connection: &FerrVaultConnection) -> serde_json::Value {
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_default();
    json!({
        "conditions": [{
            "type": "Ready",
            "status": "True",
            "reason": "Reachable",
            "message": "FerrVault answered the probe",
            "lastTransitionTime": now.to_string(),
            "observedGeneration": connection.meta().generation,
        }],
        "lastCheckedAt": now.to_string(),
        "observedInputs": "0123456789abcdef",
    })
}
