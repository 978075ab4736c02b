//! The versions of what a pass reads besides FerrVault, as `status.observedInputs` records them
//! (see [`freshness`](crate::reconcile::rules::schedule::freshness)): read from the stores, so
//! comparing them costs no request.
//!
//! - A FerrVaultSecret: `connection=<uid>/<generation>/<Ready status> token=<version>
//!   ca=<version> key=<id>`. The generation is the connection's input generation
//!   ([`input_generation`](crate::reconcile::rules::schedule::input_generation)): the one at
//!   which the spec fields they read last changed, so pausing and resuming it changes nothing. The connection's Ready status is one of them so that a connection
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
    schedule::input_generation::connection_input_generation,
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
        connection_input_generation(connection).unwrap_or_default(),
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
    use crate::{
        api::FerrVaultConnectionSpec,
        reconcile::{
            fixtures::{self, connection},
            rules::schedule::input_generation::{connection_input_digest, input_generation},
        },
    };

    /// `conn` at `generation`, reachable, its status recording `recorded` (digest, generation).
    fn connection_at(
        generation: i64,
        spec: FerrVaultConnectionSpec,
        recorded: Option<(String, i64)>,
    ) -> FerrVaultConnection {
        let mut c = fixtures::connection(generation, Some("True"), 0);
        c.spec = spec;
        let status = c.status.as_mut().expect("the fixture has a status");
        status.input_digest = recorded.as_ref().map(|(digest, _)| digest.clone());
        status.input_generation = recorded.map(|(_, at)| at);
        c
    }

    /// The FerrVaultSecrets' `observedInputs` through `connection`.
    fn inputs_through(connection: &FerrVaultConnection) -> String {
        let key = ContentHashKey::from_bytes(&[7; 32]).expect("a 32-byte key");
        secret_inputs(connection, &Stores::default(), &key)
    }

    #[test]
    fn resuming_a_connection_should_leave_its_dependants_inputs_unchanged_and_an_edit_should_not() {
        let spec = fixtures::connection(1, None, 0).spec;
        let digest = connection_input_digest(&spec);
        let synced = inputs_through(&connection_at(1, spec.clone(), Some((digest.clone(), 1))));
        let suspended = FerrVaultConnectionSpec {
            suspend: Some(true),
            ..spec.clone()
        };
        // Suspended at 2 and resumed at 3, the status still as the last probe wrote it.
        assert_eq!(
            inputs_through(&connection_at(2, suspended, Some((digest.clone(), 1)))),
            synced
        );
        assert_eq!(
            inputs_through(&connection_at(3, spec.clone(), Some((digest.clone(), 1)))),
            synced
        );
        // Edited while suspended and resumed: a change, before and after the probe records it.
        let edited = FerrVaultConnectionSpec {
            url: "http://127.0.0.1:2".into(),
            ..spec
        };
        assert_ne!(
            inputs_through(&connection_at(4, edited.clone(), Some((digest, 1)))),
            synced
        );
        let probed = Some((connection_input_digest(&edited), 4));
        assert_ne!(inputs_through(&connection_at(4, edited, probed)), synced);
    }

    #[test]
    fn a_connection_whose_status_predates_the_input_generation_should_change_no_dependants_inputs() {
        let spec = fixtures::connection(1, None, 0).spec;
        let digest = connection_input_digest(&spec);
        // Recorded by a version that used `metadata.generation` (7) itself.
        let before = inputs_through(&connection_at(7, spec.clone(), None));
        assert!(before.starts_with("connection=/7/True "), "{before}");
        // The first status write of this version records the current generation.
        let recorded = input_generation((None, None), &digest, Some(7));
        assert_eq!(recorded, Some(7));
        assert_eq!(inputs_through(&connection_at(7, spec, Some((digest, 7)))), before);
    }

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
