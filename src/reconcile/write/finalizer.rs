//! Adding and removing our finalizer on a custom resource.
//!
//! # Guarantees
//! Both are JSON merge patches of `metadata.finalizers` carrying the `resourceVersion` that was
//! read, so a concurrent change of the list is a 409 (retried) instead of being overwritten.
//! They read metadata only, so they work on any [`Resource`], including
//! [`Lenient::Invalid`](crate::api::Lenient::Invalid): a spec that does not match its type never
//! blocks a deletion.

use crate::reconcile::write::patch_params;
use kube::{Api, Resource, ResourceExt, api::Patch};
use serde::de::DeserializeOwned;
use serde_json::json;

/// Whether `object` carries `finalizer`.
pub(crate) fn has_finalizer<K: Resource>(object: &K, finalizer: &str) -> bool {
    object.finalizers().iter().any(|f| f == finalizer)
}

/// Adds `finalizer`; returns the updated object.
///
/// # Errors
/// The API error (409 when the object changed since it was read).
pub(crate) async fn add<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut finalizers = object.finalizers().to_vec();
    finalizers.push(finalizer.to_owned());
    patch(api, object, finalizers).await
}

/// Removes `finalizer`.
///
/// # Errors
/// The API error; a 404 (already gone) is not an error.
pub(crate) async fn remove<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let finalizers: Vec<String> = object
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    match patch(api, object, finalizers).await {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        other => other.map(|_| ()),
    }
}

async fn patch<K>(api: &Api<K>, object: &K, finalizers: Vec<String>) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let body = json!({
        "metadata": { "resourceVersion": object.resource_version(), "finalizers": finalizers }
    });
    api.patch(&object.name_any(), &patch_params(), &Patch::Merge(&body))
        .await
}
