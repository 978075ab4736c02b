//! The values connections read from Secrets (tokens, CA bundles), kept per `resourceVersion`.
//!
//! Secrets are watched as metadata only, on purpose: the operator's memory must not grow with the
//! cluster's unrelated Secrets. The few values connections need are read with a GET the first
//! time and again whenever the metadata store shows a new `resourceVersion` of their Secret; in
//! between, every pass uses the kept value.
//!
//! # Guarantees
//! - A value is used only while the metadata store shows the version it was read at: a rotated
//!   token is read again by the first pass that sees the rotation (the same watch event that
//!   enqueues the connection and its FerrVaultSecrets).
//! - A Secret the store does not hold is read with a GET, never reported missing from the store
//!   alone (the store may lag its creation, or not have completed its first list: a read never
//!   waits for that list, and what it reads then is not kept).
//! - Only the keys connections ask for are kept, never a Secret's other keys, and only for
//!   Secrets the store still shows at the kept version: memory is bounded by the Secrets
//!   connections read.
//! - Values never appear in a `Debug` output, a log line or an error.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Mutex, PoisonError},
};

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use super::{kube_errors::kube_error_text, stores::Stores};
use crate::api::SecretKeyRef;

/// One Secret's kept keys, at the version they were read.
struct Kept {
    version: String,
    keys: BTreeMap<String, Vec<u8>>,
}

/// Values of the Secrets connections read, shared by both reconcilers.
pub struct SecretValues {
    client: kube::Client,
    stores: Stores,
    kept: Mutex<HashMap<(String, String), Kept>>,
}

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("SecretValues").field("secrets", &kept).finish()
    }
}

impl SecretValues {
    /// Values read through `client`, checked against `stores.secret_metadata`.
    pub fn new(client: kube::Client, stores: Stores) -> Self {
        Self {
            client,
            stores,
            kept: Mutex::default(),
        }
    }

    /// The bytes at `reference` in a Secret of `namespace`: kept, or read with a GET when the
    /// store shows another version (or none).
    ///
    /// # Errors
    /// Why not, naming the Secret and the key, never a value.
    pub async fn read(&self, namespace: &str, reference: &SecretKeyRef) -> Result<Vec<u8>, String> {
        let name = &reference.name;
        let id = (namespace.to_owned(), name.clone());
        let version = self
            .stores
            .secret_meta(namespace, name)
            .and_then(|meta| meta.metadata.resource_version.clone());
        if let Some(version) = &version
            && let Some(kept) = self.lock().get(&id)
            && &kept.version == version
            && let Some(value) = kept.keys.get(&reference.key)
        {
            return Ok(value.clone());
        }
        let secret = Api::<Secret>::namespaced(self.client.clone(), namespace)
            .get(name)
            .await
            .map_err(|e| format!("Secret {namespace}/{name}: {}", kube_error_text(&e)))?;
        let read_at = secret.metadata.resource_version.clone().unwrap_or_default();
        let value = secret
            .data
            .and_then(|mut data| data.remove(&reference.key))
            .map(|bytes| bytes.0)
            .ok_or_else(|| format!("Secret {namespace}/{name} has no key {:?}", reference.key))?;
        self.keep(id, read_at, &reference.key, &value);
        Ok(value)
    }

    /// Keeps `value` of `key` at `version`, and drops what the store no longer shows as kept.
    fn keep(&self, id: (String, String), version: String, key: &str, value: &[u8]) {
        let mut kept = self.lock();
        let entry = kept.entry(id).or_insert_with(|| Kept {
            version: version.clone(),
            keys: BTreeMap::new(),
        });
        if entry.version != version {
            *entry = Kept {
                version,
                keys: BTreeMap::new(),
            };
        }
        entry.keys.insert(key.to_owned(), value.to_vec());
        kept.retain(|(namespace, name), kept| {
            self.stores
                .secret_meta(namespace, name)
                .is_some_and(|meta| meta.metadata.resource_version.as_ref() == Some(&kept.version))
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Kept>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
