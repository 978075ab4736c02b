//! The inputs' versions a sync records ([`secret_inputs`](crate::reconcile::read::secret_inputs)),
//! read before the values they version: a change after this makes the next pass sync again.
//!
//! From the Secret metadata store once it has completed its first list. Before that (a start, in
//! a cluster of many Secrets), from GETs of the metadata of the connection's own Secrets: a new
//! object then need not wait for the list of every Secret, and its record holds the versions
//! the store will show, so the first pass after the list finds it with nothing due.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};

use crate::{
    api::FerrVaultConnection,
    reconcile::{
        read::{Stores, connection_secret_names, secret_inputs, secret_inputs_by},
        rules::content::content_hash::ContentHashKey,
    },
};

/// The inputs of a sync through `connection` with `key`. A Secret whose metadata cannot be read
/// is recorded as unknown (`?`): the values read that follows reports why.
pub(super) async fn recorded_inputs(
    client: &kube::Client,
    stores: &Stores,
    connection: &FerrVaultConnection,
    key: &ContentHashKey,
) -> String {
    if stores.secret_metadata.is_listed() {
        return secret_inputs(connection, stores, key);
    }
    let secrets = Api::<Secret>::namespaced(client.clone(), &connection.namespace().unwrap_or_default());
    let mut versions = HashMap::new();
    for name in connection_secret_names(connection) {
        if let Ok(Some(meta)) = secrets.get_metadata_opt(name).await {
            versions.insert(name.to_owned(), meta.resource_version());
        }
    }
    secret_inputs_by(connection, &|name| versions.get(name).cloned().flatten(), key)
}
