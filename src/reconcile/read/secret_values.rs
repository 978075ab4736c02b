//! The values connections read from Secrets (tokens, CA bundles, client certificates), kept per
//! `resourceVersion`.
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
//! - Bounded: a token over [`MAX_TOKEN_BYTES`] or a CA bundle over [`MAX_CA_BUNDLE_BYTES`] is
//!   refused (the error names the bound), never used; nothing over [`MAX_CA_BUNDLE_BYTES`] is
//!   kept. The GET that reads it is bounded by the API server (a Secret holds at most 1 MiB) and
//!   freed at once.
//! - Shared: one copy of a value per (namespace, name, `resourceVersion`), however many
//!   connections and passes use it (`Arc`), and one GET per Secret version whatever it holds
//!   (a refusal is kept like a value). Connections reaching one URL with one CA bundle share one
//!   endpoint built with it: one copy of the bundle, one pooled HTTP client.
//! - With `--require-credential-opt-in`, a Secret that did not opt in
//!   ([`credential_opt_in`](crate::reconcile::rules::access::credential_opt_in)) is refused from
//!   its labels and type before its data is looked at: none of its data is kept or used.
//! - Values never appear in a `Debug` output, a log line or an error.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, PoisonError},
};

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::reconcile::{rules::access::credential_opt_in::is_opted_in, write::kube_error_text};

use self::refusal::too_large;
pub(crate) use self::refusal::{
    CaBundleError, ClientCertError, MAX_CA_BUNDLE_BYTES, MAX_TOKEN_BYTES, ValueError,
};
use super::Stores;
use crate::{
    api::SecretKeyRef,
    ferrvault::{Endpoint, FerrVaultError},
};

/// One key of a Secret as read at the kept version.
#[derive(Clone)]
enum KeptKey {
    /// Its value, at most [`MAX_CA_BUNDLE_BYTES`].
    Value(Arc<[u8]>),
    /// Larger than any reader accepts: `size` bytes, not kept.
    TooLarge(usize),
    /// The Secret has no such key.
    Missing,
}

/// One Secret's kept keys, at the version they were read.
struct Kept {
    version: String,
    /// Whether the Secret may be used as a credential at this version.
    opted_in: bool,
    keys: BTreeMap<String, KeptKey>,
    /// The last endpoint built with a key of this Secret as CA bundle, by (key, endpoint without
    /// it): connections to one URL share it, hence one copy of the bundle. One entry only, so
    /// an endpoint no connection uses any more costs at most one bundle per kept Secret.
    endpoint: Option<((String, Endpoint), Endpoint)>,
}

/// Values of the Secrets connections read, shared by both reconcilers.
pub struct SecretValues {
    client: kube::Client,
    stores: Stores,
    /// `--require-credential-opt-in`.
    require_opt_in: bool,
    kept: Mutex<HashMap<(String, String), Kept>>,
}

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.lock().len();
        f.debug_struct("SecretValues").field("secrets", &kept).finish()
    }
}

impl SecretValues {
    /// Values read through `client`, checked against `stores.secret_metadata`; with
    /// `require_opt_in`, only from Secrets that opted in as credentials.
    pub fn new(client: kube::Client, stores: Stores, require_opt_in: bool) -> Self {
        Self {
            client,
            stores,
            require_opt_in,
            kept: Mutex::default(),
        }
    }

    /// The token at `reference` in a Secret of `namespace`, at most [`MAX_TOKEN_BYTES`].
    ///
    /// # Errors
    /// Why not, naming the Secret, the key and the bound, never a value.
    pub async fn token(&self, namespace: &str, reference: &SecretKeyRef) -> Result<Arc<[u8]>, ValueError> {
        let (_, value) = self.read(namespace, reference, MAX_TOKEN_BYTES).await?;
        Ok(value)
    }

    /// `plain` trusting the CA bundle at `reference` in a Secret of `namespace` (at most
    /// [`MAX_CA_BUNDLE_BYTES`]): the endpoint the last connection to the same URL got with the
    /// same bundle version, else a new one.
    ///
    /// # Errors
    /// Why the bundle cannot be used (see [`CaBundleError`]).
    pub async fn ca_endpoint(
        &self,
        namespace: &str,
        reference: &SecretKeyRef,
        plain: Endpoint,
    ) -> Result<Endpoint, CaBundleError> {
        let (version, pem) = self.read(namespace, reference, MAX_CA_BUNDLE_BYTES).await?;
        let id = (namespace.to_owned(), reference.name.clone());
        let built_for = (reference.key.clone(), plain);
        let shared = self
            .lock()
            .get(&id)
            .filter(|kept| kept.version == version)
            .and_then(|kept| kept.endpoint.clone())
            .filter(|(key, _)| *key == built_for)
            .map(|(_, endpoint)| endpoint);
        if let Some(endpoint) = shared {
            return Ok(endpoint);
        }
        let built = built_for
            .1
            .clone()
            .with_extra_ca_pem(&pem)
            .map_err(|e: FerrVaultError| CaBundleError::Invalid(e.to_string()))?;
        if let Some(kept) = self.lock().get_mut(&id).filter(|kept| kept.version == version) {
            kept.endpoint = Some((built_for, built.clone()));
        }
        Ok(built)
    }

    /// The bytes at `reference` in a Secret of `namespace`, at most `bound`, and the version they
    /// are kept at: kept, or read with a GET when the store shows another version (or none).
    async fn read(
        &self,
        namespace: &str,
        reference: &SecretKeyRef,
        bound: usize,
    ) -> Result<(String, Arc<[u8]>), ValueError> {
        let name = &reference.name;
        let id = (namespace.to_owned(), name.clone());
        let shown = self
            .stores
            .secret_meta(namespace, name)
            .and_then(|meta| meta.metadata.resource_version.clone());
        let kept = shown.as_ref().and_then(|version| {
            let kept = self.lock();
            let kept = kept.get(&id).filter(|kept| &kept.version == version)?;
            let key = if kept.opted_in {
                kept.keys.get(&reference.key)?.clone()
            } else {
                KeptKey::Missing
            };
            Some((kept.version.clone(), kept.opted_in, key))
        });
        let (version, opted_in, key) = match kept {
            Some(kept) => kept,
            None => self.get(namespace, reference).await?,
        };
        match (opted_in, key) {
            (false, _) => Err(ValueError::NotOptedIn {
                namespace: namespace.to_owned(),
                name: name.clone(),
            }),
            (true, KeptKey::Missing) => Err(ValueError::MissingKey {
                namespace: namespace.to_owned(),
                name: name.clone(),
                key: reference.key.clone(),
            }),
            (true, KeptKey::TooLarge(size)) => Err(too_large(namespace, reference, size, bound)),
            (true, KeptKey::Value(value)) if value.len() > bound => {
                Err(too_large(namespace, reference, value.len(), bound))
            }
            (true, KeptKey::Value(value)) => Ok((version, value)),
        }
    }

    /// Reads the Secret with a GET, judges the opt-in before its data, keeps the key asked for
    /// (or why it cannot be used) at the version read; returns what it kept.
    async fn get(
        &self,
        namespace: &str,
        reference: &SecretKeyRef,
    ) -> Result<(String, bool, KeptKey), ValueError> {
        let name = &reference.name;
        let secret = Api::<Secret>::namespaced(self.client.clone(), namespace)
            .get(name)
            .await
            .map_err(|e| ValueError::Unreadable {
                namespace: namespace.to_owned(),
                name: name.clone(),
                cause: kube_error_text(&e),
            })?;
        let version = secret.metadata.resource_version.clone().unwrap_or_default();
        let opted_in =
            !self.require_opt_in || is_opted_in(secret.metadata.labels.as_ref(), secret.type_.as_deref());
        let key = match secret.data.filter(|_| opted_in) {
            None => KeptKey::Missing,
            Some(mut data) => match data.remove(&reference.key) {
                None => KeptKey::Missing,
                Some(value) if value.0.len() > MAX_CA_BUNDLE_BYTES => KeptKey::TooLarge(value.0.len()),
                Some(value) => KeptKey::Value(Arc::from(value.0)),
            },
        };
        self.keep((namespace, name), &version, opted_in, (&reference.key, &key));
        Ok((version, opted_in, key))
    }

    /// Keeps `key` of Secret `namespace/name` at `version`, and drops what the store no longer
    /// shows as kept.
    fn keep(
        &self,
        (namespace, name): (&str, &str),
        version: &str,
        opted_in: bool,
        (key, value): (&str, &KeptKey),
    ) {
        let mut kept = self.lock();
        let entry = kept
            .entry((namespace.to_owned(), name.to_owned()))
            .or_insert_with(|| Kept::at(version, opted_in));
        if entry.version != version {
            *entry = Kept::at(version, opted_in);
        }
        if opted_in {
            entry.keys.insert(key.to_owned(), value.clone());
        }
        kept.retain(|(namespace, name), kept| {
            self.stores
                .secret_meta(namespace, name)
                .is_some_and(|meta| meta.metadata.resource_version.as_deref() == Some(&kept.version))
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Kept>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Kept {
    fn at(version: &str, opted_in: bool) -> Self {
        Self {
            version: version.to_owned(),
            opted_in,
            keys: BTreeMap::new(),
            endpoint: None,
        }
    }
}

mod client_cert;
mod refusal;
#[cfg(test)]
mod tests;
