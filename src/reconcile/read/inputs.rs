//! The versions of what a pass reads besides FerrVault, as `status.observedInputs` records them
//! (see [`freshness`](crate::reconcile::rules::schedule::freshness)): read from the stores, so
//! comparing them costs no request.
//!
//! - A FerrVaultSecret: `connection=<uid>/<generation>/<Ready status> token=<version>
//!   ca=<version> key=<id>`. The connection's Ready status is one of them so that a connection
//!   turning unreachable or reachable again still makes its FerrVaultSecrets check it (the
//!   `ferrvaultconnection` watch's route to its dependants enqueues them for that change). A connection not
//!   probed yet counts as `True` ([`ready_for_dependants`]).
//! - A FerrVaultConnection: `token=<version> ca=<version>`.
//!
//! A Secret's version is its `resourceVersion` in the Secret metadata store (`?` when the store
//! does not hold it; a sync before that store's first list reads it with a GET instead), `-`
//! when the connection reads none and `oidc` for the cluster identity.
//! Versions and identifiers only: never a value.

use kube::ResourceExt;

use crate::reconcile::rules::{
    content::content_hash::{ContentHashKey, key_id},
    status::conditions::find_condition,
};

use super::Stores;
use crate::api::{ConditionStatus, ConditionType, FerrVaultConnection, SecretKeyRef};

/// The inputs of a FerrVaultSecret syncing through `connection` with the content-hash `key`.
pub(crate) fn secret_inputs(
    connection: &FerrVaultConnection,
    stores: &Stores,
    key: &ContentHashKey,
) -> String {
    secret_inputs_by(connection, &store_versions(connection, stores), key)
}

/// [`secret_inputs`] with the Secrets' versions looked up by `version` (by Secret name; `None`
/// when unknown).
pub fn secret_inputs_by(
    connection: &FerrVaultConnection,
    version: &dyn Fn(&str) -> Option<String>,
    key: &ContentHashKey,
) -> String {
    format!(
        "connection={}/{}/{} {} key={}",
        connection.uid().unwrap_or_default(),
        connection.metadata.generation.unwrap_or_default(),
        ready_for_dependants(connection),
        connection_inputs_by(connection, version),
        key_id(key)
    )
}

/// `connection`'s Ready status as its FerrVaultSecrets see it: one not probed yet counts as
/// `True`. A FerrVaultSecret that synced through it found it reachable, so its first probe
/// finding the same is no change to them (at a start, each one synced before that probe would
/// be enqueued, and could read FerrVault and write its status again); finding it unreachable is.
pub(crate) fn ready_for_dependants(connection: &FerrVaultConnection) -> &str {
    connection
        .status
        .as_ref()
        .and_then(|s| find_condition(&s.conditions, ConditionType::Ready))
        .map_or(ConditionStatus::True.as_str(), |c| c.status.as_str())
}

/// The inputs of a probe of `connection`: its token and CA bundle Secrets' versions.
pub(crate) fn connection_inputs(connection: &FerrVaultConnection, stores: &Stores) -> String {
    connection_inputs_by(connection, &store_versions(connection, stores))
}

/// The names of the Secrets `connection` reads (its token's, its CA bundle's, its client
/// certificate's).
pub fn connection_secret_names(connection: &FerrVaultConnection) -> impl Iterator<Item = &str> {
    [
        &connection.spec.token_secret_ref,
        &connection.spec.ca_bundle_secret_ref,
    ]
    .into_iter()
    .flatten()
    .map(|reference| reference.name.as_str())
    .chain(
        connection
            .spec
            .client_cert_secret_ref
            .as_ref()
            .map(|reference| reference.name.as_str()),
    )
}

/// The versions of `connection`'s Secrets in the Secret metadata store.
fn store_versions<'a>(
    connection: &FerrVaultConnection,
    stores: &'a Stores,
) -> impl Fn(&str) -> Option<String> + 'a {
    let namespace = connection.namespace().unwrap_or_default();
    move |name| {
        stores
            .secret_meta(&namespace, name)
            .and_then(|meta| meta.metadata.resource_version.clone())
    }
}

fn connection_inputs_by(
    connection: &FerrVaultConnection,
    version: &dyn Fn(&str) -> Option<String>,
) -> String {
    let version = |reference: Option<&SecretKeyRef>| match reference {
        None => "-".to_owned(),
        Some(reference) => version(&reference.name).unwrap_or_else(|| "?".to_owned()),
    };
    let token = match (&connection.spec.token_secret_ref, &connection.spec.oidc) {
        (None, Some(_)) => "oidc".to_owned(),
        (reference, _) => version(reference.as_ref()),
    };
    // The client certificate's version only when one is set, so connections without one keep
    // the inputs they recorded before the field existed (no probe at an upgrade).
    let cert = connection
        .spec
        .client_cert_secret_ref
        .as_ref()
        .map_or_else(String::new, |r| {
            let named = SecretKeyRef {
                name: r.name.clone(),
                key: String::new(),
            };
            format!(" cert={}", version(Some(&named)))
        });
    format!(
        "token={token} ca={}{cert}",
        version(connection.spec.ca_bundle_secret_ref.as_ref())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::fixtures::connection;

    #[test]
    fn a_connection_not_probed_yet_should_count_as_found_reachable() {
        let stores = Stores::default();
        let key = ContentHashKey::from_bytes(&[7; 32]).expect("a 32-byte key");
        let inputs = |ready| secret_inputs(&connection(1, ready, 0), &stores, &key);
        assert_eq!(
            inputs(None),
            inputs(Some("True")),
            "its first probe finding it reachable"
        );
        assert_ne!(
            inputs(None),
            inputs(Some("False")),
            "its first probe finding it unreachable"
        );
    }
}
