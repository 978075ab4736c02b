//! The target-access step: whether this FerrVaultSecret may write its target, judged from the
//! target as read and the Secrets the namespace's connections read, before anything is revealed
//! (see [`target_access`](crate::reconcile::rules::access::target_access)).

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use tracing::info;

use super::failure::{Failure, Stop};
use crate::{
    api::{FerrVaultConnection, FerrVaultSecret, Lenient},
    reconcile::{
        read::Scoped,
        rules::{
            access::target_access::{
                ConnectionSecret, TargetAccess, Writer, connection_secrets, judge_target,
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
    connections: &Scoped<Lenient<FerrVaultConnection>>,
    cr: &FerrVaultSecret,
    target: &str,
    existing: Option<&Secret>,
) -> Result<TargetAccess, Stop> {
    let namespace = cr.namespace().unwrap_or_default();
    let read = connections_read(connections, &namespace).await?;
    let name = cr.name_any();
    let uid = cr.uid().unwrap_or_default();
    let writer = Writer {
        name: &name,
        uid: &uid,
    };
    let access = judge_target(writer, target, cr.spec.target_type(), existing, &read).map_err(|refusal| {
        Failure::new(
            refusal.reason(),
            messages::target_refused(&refusal, target, &name),
            RequeueCase::Refused,
        )
    })?;
    if access == TargetAccess::Adopt {
        info!(
            target,
            "taking over the target Secret: it names this FerrVaultSecret as allowed to"
        );
    }
    Ok(access)
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
        .state()
        .iter()
        .filter(|c| c.namespace().as_deref() == Some(namespace))
        .filter_map(|c| c.valid())
        .flat_map(connection_secrets)
        .collect())
}
