//! `revocation: Delete` of a ClusterFerrVaultConnection: the target a FerrVaultSecret wrote
//! through it is deleted once its namespace is no longer allowed (`ConnectionNotAllowed`).
//!
//! # Guarantees
//! - Only a target this FerrVaultSecret controls (its controller owner reference, by UID) is
//!   deleted, with UID and `resourceVersion` preconditions: the version this pass knows, never one
//!   someone wrote since. Anything else (another owner's Secret, an adopted-then-released one) is
//!   left alone.
//! - `revocation: Keep` (the default) deletes nothing: the copy stays as last written.

use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, Preconditions},
};
use tracing::info;

use super::{failure::Stop, target::KnownTarget};
use crate::{
    api::{FerrVaultSecret, Revocation},
    reconcile::{
        read::Reads,
        write::{KubeAction, KubeFailure},
    },
};

/// Deletes `known`, `cr`'s target, when `cr`'s cluster connection says `revocation: Delete` and
/// `cr` controls it; returns whether it did.
///
/// # Errors
/// The delete failed (a conflict included: someone changed it since): retried with backoff.
pub(super) async fn revoke(
    reads: &Reads,
    cr: &FerrVaultSecret,
    secrets: &Api<Secret>,
    known: &KnownTarget,
) -> Result<bool, Stop> {
    let connection = reads
        .stores
        .cluster_connections
        .get("", &cr.spec.connection_ref.name);
    let deletes = connection
        .as_ref()
        .and_then(|c| c.valid())
        .is_some_and(|c| c.spec.revocation == Revocation::Delete);
    let Some(target) = known.secret().filter(|_| deletes) else {
        return Ok(false);
    };
    let uid = cr.uid().unwrap_or_default();
    let controlled = target
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && o.uid == uid);
    if !controlled {
        return Ok(false);
    }
    let exactly_what_is_known = DeleteParams {
        preconditions: Some(Preconditions {
            uid: target.uid(),
            resource_version: target.resource_version(),
        }),
        ..DeleteParams::default()
    };
    match secrets.delete(&target.name_any(), &exactly_what_is_known).await {
        Ok(_) => {
            info!(target = %target.name_any(), "namespace no longer allowed: target deleted (revocation: Delete)");
            Ok(true)
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(error) => Err(Stop::Kube(KubeFailure::new(KubeAction::WriteTarget, error))),
    }
}
