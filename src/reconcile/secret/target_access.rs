//! The target-access step: whether this FerrVaultSecret may write its target, judged from the
//! target as read and the Secrets the namespace's connections (and the cluster connections
//! whose Secrets live in it) read, before anything is revealed
//! (see [`target_access`](crate::reconcile::rules::access::target_access)).

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use tracing::info;

use super::{
    cluster_connection::view_name,
    failure::{Failure, Stop},
};
use crate::{
    api::{ClusterFerrVaultConnection, CreationPolicy, FerrVaultConnection, FerrVaultSecret, Lenient},
    reconcile::{
        read::{Scoped, Stores},
        rules::{
            access::target_access::{
                ConnectionSecret, ConnectionSecretRole, TargetAccess, Writer, connection_secrets,
                created_for_same_name, judge_target,
            },
            schedule::requeue::RequeueCase,
            status::messages,
        },
    },
};

/// `Outcome::Error` reason while the connections' store cannot be read.
const CONNECTIONS_UNAVAILABLE: &str = "ConnectionsUnavailable";

/// Judges `existing` (the target `target` as read) for `cr`.
///
/// # Errors
/// The refusal as a `Failure` with its own reason and no timer (the watches retry it), or
/// [`Stop::Unavailable`] when the connection watch is gone (shutdown).
pub(super) async fn judge(
    stores: &Stores,
    cr: &FerrVaultSecret,
    target: &str,
    existing: Option<&Secret>,
) -> Result<TargetAccess, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let mut read = connections_read(&stores.connections, &namespace).await?;
    read.extend(cluster_connections_read(&stores.cluster_connections, &namespace).await?);
    let name = cr.name_any();
    let uid = cr.uid().unwrap_or_default();
    let writer = Writer {
        name: &name,
        uid: &uid,
        policy: cr.spec.creation_policy(),
    };
    let access = judge_target(writer, target, cr.spec.target_type(), existing, &read).map_err(|refusal| {
        Failure::new(
            refusal.reason(),
            messages::target_refused(&refusal, target, &name),
            RequeueCase::Refused,
        )
    })?;
    if access == TargetAccess::Adopt && writer.policy == CreationPolicy::Owner {
        info!(
            target,
            "taking over the target Secret: it names this FerrVaultSecret as allowed to"
        );
    }
    Ok(access)
}

/// Judges `existing`, a target a `CreatedOnce` `cr` keeps: a target it may write, or one this
/// operator created for a FerrVaultSecret of its name (see
/// [`created_for_same_name`](crate::reconcile::rules::access::target_access::created_for_same_name)).
///
/// # Errors
/// As [`judge`], for any other target.
pub(super) async fn judge_kept(
    stores: &Stores,
    cr: &FerrVaultSecret,
    target: &str,
    existing: &Secret,
) -> Result<(), Stop> {
    match judge(stores, cr, target, Some(existing)).await {
        Ok(_) => Ok(()),
        Err(Stop::Fail(_)) if created_for_same_name(writer_name(cr), existing) => Ok(()),
        Err(stop) => Err(stop),
    }
}

/// `cr` as a writer judged by name only.
fn writer_name(cr: &FerrVaultSecret) -> Writer<'_> {
    Writer {
        name: cr.metadata.name.as_deref().unwrap_or_default(),
        uid: cr.metadata.uid.as_deref().unwrap_or_default(),
        policy: cr.spec.creation_policy(),
    }
}

/// The Secrets the valid connections of `namespace` read, once the connection watch has listed
/// them all (a start must not judge against a partial list).
async fn connections_read(
    stores: &Scoped<Lenient<FerrVaultConnection>>,
    namespace: &str,
) -> Result<Vec<ConnectionSecret>, Stop> {
    stores.wait_until_listed().await.map_err(|e| Stop::Unavailable {
        reason: CONNECTIONS_UNAVAILABLE,
        message: format!("the FerrVaultConnection watch: {e}"),
    })?;
    let connections = stores.of(namespace).ok_or_else(|| Stop::Unavailable {
        reason: CONNECTIONS_UNAVAILABLE,
        message: format!("namespace {namespace} is not watched"),
    })?;
    Ok(connections
        .in_namespace(namespace)
        .iter()
        .filter_map(|c| c.valid())
        .flat_map(connection_secrets)
        .collect())
}

/// The Secrets of `namespace` the valid ClusterFerrVaultConnections read (token, CA bundle,
/// client certificate),
/// named after their view (`ClusterFerrVaultConnection/<name>`), once their watch has listed
/// them all.
async fn cluster_connections_read(
    stores: &Scoped<Lenient<ClusterFerrVaultConnection>>,
    namespace: &str,
) -> Result<Vec<ConnectionSecret>, Stop> {
    stores.wait_until_listed().await.map_err(|e| Stop::Unavailable {
        reason: CONNECTIONS_UNAVAILABLE,
        message: format!("the ClusterFerrVaultConnection watch: {e}"),
    })?;
    let mut read = Vec::new();
    for connection in stores.state() {
        let Some(valid) = connection.valid() else { continue };
        let refs = [
            (&valid.spec.token_secret_ref, ConnectionSecretRole::Token),
            (&valid.spec.ca_bundle_secret_ref, ConnectionSecretRole::CaBundle),
        ];
        let cert = valid
            .spec
            .client_cert_secret_ref
            .as_ref()
            .map(|r| (&r.namespace, &r.name, ConnectionSecretRole::ClientCertificate));
        let named = refs
            .into_iter()
            .filter_map(|(reference, role)| reference.as_ref().map(|r| (&r.namespace, &r.name, role)))
            .chain(cert);
        for (_, secret, role) in named.filter(|(ns, _, _)| *ns == namespace) {
            read.push(ConnectionSecret {
                connection: view_name(&valid.name_any()),
                secret: secret.clone(),
                role,
            });
        }
    }
    Ok(read)
}
